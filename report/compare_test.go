package report

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/analysis"
	"mpiflow/flowgraph"
	"mpiflow/internal/units"
)

// With a baseline (Options.Compare) the report has a section of what
// changed, the rows of mpiflow diff BASELINE FILE; without, none.
func TestCompareSection(t *testing.T) {
	job := loadJob(t, halo4)
	slow, base := slowBaseline(t, false)

	_, page := writeReport(t, halo4, "halo-compare.html", Options{NoOcelotl: true, Compare: base})
	assert.Contains(t, page, `href="#compare-runs"`)
	rows := rowTexts(t, page, "compare-table")
	d := analysis.Diff(base, job)
	require.Len(t, rows, len(d.Items))
	for i, it := range d.Items {
		name := it.Name
		if it.Kind == analysis.ItemLoop {
			name = "loop " + name
		}
		assert.Equal(t, name, rows[i][0])
		assert.Equal(t, units.Seconds(it.Change.Time/1e9), rows[i][4], name)
	}
	// Rank 1's calls took twice as long in the baseline: the first item
	// got faster.
	assert.Negative(t, d.Items[0].Change.Time)
	banner := rowTexts(t, page, "compare-banner")
	require.NotEmpty(t, banner)
	assert.Equal(t, []string{"file", slow, halo4, ""}, banner[0])

	_, page = writeReport(t, halo4, "halo-no-compare.html", Options{NoOcelotl: true})
	assert.NotContains(t, page, `id="compare-runs"`)
}

// slowBaseline is a baseline of halo4, written to path and loaded: halo4
// with every call and compute phase of rank 1 (of every rank if all)
// taking twice the time.
func slowBaseline(t *testing.T, all bool) (path string, base *analysis.Job) {
	t.Helper()
	f, err := flowgraph.Open(halo4)
	require.NoError(t, err)
	h := f.Header
	var ranks []*flowgraph.Rank
	for i := range f.Index {
		r, err := f.ReadRank(i)
		require.NoError(t, err)
		if r.Rank == 1 || all {
			for k := range r.Graph.Nodes {
				r.Graph.Nodes[k].Time.Total *= 2
			}
		}
		ranks = append(ranks, r)
	}
	require.NoError(t, f.Close())
	path = filepath.Join(t.TempDir(), "slow.mpiflow")
	require.NoError(t, flowgraph.WriteFile(path, h, ranks))
	base, err = analysis.Load(path, analysis.Options{NoSequences: true})
	require.NoError(t, err)
	return path, base
}

func TestRatioColor(t *testing.T) {
	tests := []struct {
		ratio float64
		want  string
	}{
		{1, "#f7f7f7"},
		{2, "#b2182b"},
		{8, "#b2182b"},
		{0.5, "#2166ac"},
		{0, "#f7f7f7"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, ratioColor(tc.ratio), "ratio %g", tc.ratio)
	}
	assert.NotEqual(t, ratioColor(1), ratioColor(1.2), "a small change is colored")
}

func TestItemColor(t *testing.T) {
	changed := analysis.DiffItem{Status: analysis.StatusMatched, Ratio: 2, Verdict: "changed"}
	tests := []struct {
		name string
		it   *analysis.DiffItem
		want string
	}{
		{"slower", &changed, "#b2182b"},
		{"faster", &analysis.DiffItem{Status: analysis.StatusMatched, Ratio: 0.5, Verdict: "changed"}, "#2166ac"},
		{"noise is neutral whatever the ratio", &analysis.DiffItem{Status: analysis.StatusMatched, Ratio: 2, WithinNoise: true, Verdict: "noise"}, "#f7f7f7"},
		{"the launcher's start-up is neutral whatever the ratio", &analysis.DiffItem{Status: analysis.StatusMatched, Ratio: 2, Launcher: true, Verdict: "start-up"}, "#f7f7f7"},
		{"new", &analysis.DiffItem{Status: analysis.StatusNew, Verdict: analysis.StatusNew}, newColor},
		{"gone", &analysis.DiffItem{Status: analysis.StatusGone, Verdict: analysis.StatusGone}, goneColor},
		{"none", nil, noDataColor},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, itemColor(tc.it), tc.name)
	}
}

// TestRatioDOT: the graph of the comparison colors a node slowed 2x at the
// red end, a noisy one neutral, a new loop as new, an uncompared node
// white; nodes pair with the diff's items by call and site label, loops by
// their aligned row.
func TestRatioDOT(t *testing.T) {
	metrics := []string{analysis.MetricTime, analysis.MetricCount, analysis.MetricBytes}
	elem := func(kind int, call, where string, loop int) analysis.Elem {
		return analysis.Elem{Kind: kind, Call: call, Where: where, Loop: loop, Vals: []float64{1, 1, 8}}
	}
	lg := &analysis.Level{Initial: -1, Nodes: []analysis.Elem{
		elem(analysis.KindNode, "MPI_Send", "main app.c:11", 0),
		elem(analysis.KindNode, "MPI_Recv", "main app.c:12", 0),
		elem(analysis.KindLoop, "MPI_Wait", "main app.c:13", 3),
		elem(analysis.KindNode, "MPI_Barrier", "main app.c:14", 0),
	}, Edges: []analysis.Elem{{Kind: analysis.KindEdge, Src: 0, Dst: 1, Vals: []float64{1, 1, 0}}}}
	d := &analysis.JobDiff{
		Items: []analysis.DiffItem{
			{Kind: analysis.ItemCall, Status: analysis.StatusMatched, Call: "MPI_Send", Site: "main app.c:11", Ratio: 2, Verdict: "changed"},
			{Kind: analysis.ItemCall, Status: analysis.StatusMatched, Call: "MPI_Recv", Site: "main app.c:12", Ratio: 1.5, WithinNoise: true, Verdict: "noise"},
			{Kind: analysis.ItemLoop, Status: analysis.StatusNew, Path: []string{"MPI_Wait at main app.c:13"}, Verdict: analysis.StatusNew},
			{Kind: analysis.ItemCall, Status: analysis.StatusMatched, Call: "MPI_Barrier", Site: "other.c:1", Ratio: 3, Verdict: "changed"},
		},
		Trees: []analysis.DiffTree{{Rows: []analysis.DiffTreeRow{{Header: "MPI_Wait at main app.c:13", BLoop: 3, Item: 2}}}},
	}
	dot := ratioDOT(lg, metrics, compareItems(d, &d.Trees[0]), func(loop int) string { return "#cmp" })
	node := func(i int) string { // the node's line, found by its call
		for _, line := range strings.Split(dot, "\n") {
			if strings.Contains(line, "->") || !strings.Contains(line, lg.Nodes[i].Call) {
				continue
			}
			return line
		}
		require.Failf(t, "no node", "node %d in\n%s", i, dot)
		return ""
	}
	assert.Contains(t, node(0), `fillcolor="#b2182b"`, "slowed 2x: the red end")
	assert.Contains(t, node(0), `B / A: x2.00 (changed)`)
	assert.Contains(t, node(1), `fillcolor="#f7f7f7"`, "noise: neutral")
	assert.Contains(t, node(2), `fillcolor="`+newColor+`"`, "a loop only in B")
	assert.Contains(t, node(3), `fillcolor="`+noDataColor+`"`, "another call site: not compared")
	assert.Contains(t, node(3), "not compared")
	assert.Contains(t, dot, `color="#555555"`, "edges gray")
}

// TestCompareTreesAndGraphs: the compare section has the aligned loop
// trees of both runs, each row colored by its item's verdict, and this
// run's graphs colored by ratio, with nothing loaded from the network.
func TestCompareTreesAndGraphs(t *testing.T) {
	job := loadJob(t, halo4)
	_, base := slowBaseline(t, true)
	_, page := writeReport(t, halo4, "halo-compare-trees.html", Options{NoOcelotl: true, Compare: base, Renderer: &fakeRenderer{}})
	d := analysis.Diff(base, job)
	require.NotEmpty(t, d.Trees)
	tree := d.Trees[0]
	rows := rowTexts(t, page, "compare-tree-1")
	require.Len(t, rows, len(tree.Rows))
	i := strings.Index(page, `id="compare-tree-1"`)
	fills := regexp.MustCompile(`<td style="background: (#[0-9a-f]{6}); color: #[0-9a-f]{6}">`).FindAllStringSubmatch(page[i:i+strings.Index(page[i:], "</table>")], -1)
	require.Len(t, fills, 2*len(tree.Rows), "ratio and verdict cells")
	colors := map[string]bool{}
	for k, r := range tree.Rows {
		require.GreaterOrEqual(t, r.Item, 0)
		it := &d.Items[r.Item]
		assert.Equal(t, it.A.Loop+": "+r.Header, strings.TrimSpace(rows[k][0]), "A's side")
		assert.Equal(t, it.B.Loop+": "+r.Header, strings.TrimSpace(rows[k][5]), "B's side")
		assert.Equal(t, it.Verdict, rows[k][4])
		assert.Equal(t, itemColor(it), fills[2*k][1], "colored by the verdict")
		colors[fills[2*k][1]] = true
	}
	assert.Greater(t, len(colors), 1, "the baseline was slower: not all noise")
	sec := page[strings.Index(page, `id="compare-runs"`):strings.Index(page, `id="calls"`)]
	assert.Contains(t, sec, `id="cmp-lv-0-0"`, "the top level drawn")
	for _, net := range []string{"http:", "https:", "src="} {
		assert.NotContains(t, sec, net)
	}
}

// TestCompareEscaping: strings from the trace reach the comparison's trees
// and graphs escaped.
func TestCompareEscaping(t *testing.T) {
	in := evilJob(t)
	base, err := analysis.Load(in, analysis.Options{})
	require.NoError(t, err)
	_, page := writeReport(t, in, "evil-compare.html", Options{Compare: base})
	for _, raw := range []string{"<script>window.__pwned", "<img", `onerror="`} {
		assert.NotContains(t, page, raw)
	}
	assert.Equal(t, 3, strings.Count(page, "<script"), "script elements")
	sec := page[strings.Index(page, `id="compare-trees"`):strings.Index(page, `id="calls"`)]
	assert.Contains(t, sec, "&lt;script&gt;window.__pwned=3&lt;/script&gt;", "function name escaped in the trees and graphs")
}
