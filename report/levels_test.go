package report

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/analysis"
	"mpiflow/flowgraph"
)

const ms = int64(1_000_000)

// pingPong records MPI_Init, three iterations of MPI_Send (8 B, 1 ms) and
// MPI_Recv (16 B, 2 ms) with 1 ms of compute before each call, and
// MPI_Finalize.
func pingPong(t *testing.T) *flowgraph.Graph {
	t.Helper()
	b := flowgraph.NewBuilder(0, 0)
	var sites [4]int
	for i := range sites {
		sites[i] = b.Site(flowgraph.CallSite{Addr: uint64(0x1000 + i), Object: "/bin/pp", Offset: uint64(0x100 + i),
			Function: "main", File: "/src/pp.c", Line: 10 + i})
	}
	now := int64(0)
	call := func(name string, site int, bytes, dur int64) {
		now += ms
		b.Add(flowgraph.Call{Key: flowgraph.NodeKey{Call: name, Site: sites[site], Partner: -1, Comm: -1},
			Enter: now, Exit: now + dur, Bytes: bytes, Partner: -1})
		now += dur
	}
	call("MPI_Init", 0, 0, ms)
	for range 3 {
		call("MPI_Send", 1, 8, ms)
		call("MPI_Recv", 2, 16, 2*ms)
	}
	call("MPI_Finalize", 3, 0, ms)
	g := b.Graph()
	require.NoError(t, g.Validate())
	return &g
}

func TestLevelsAndLabels(t *testing.T) {
	g := pingPong(t)
	levels, _, err := analysis.RankLevels(g, nil)
	require.NoError(t, err)
	require.Len(t, levels, 2, "top level and one loop")
	metrics := analysis.Metrics(nil)

	top := levels[0]
	var labels []string
	for i := range top.Nodes {
		labels = append(labels, Label(&top.Nodes[i], metrics))
	}
	// The loop holds 3 iterations of 1+1+1+2 ms (compute, send, compute,
	// recv): 15 ms, minus the entry edge (compute before the first send),
	// which belongs to the top level: 14 ms.
	assert.Contains(t, labels, "MPI_Init 0 B cs=0 t=0.001")
	assert.Contains(t, labels, "MPI_Finalize 0 B cs=3 t=0.001")
	assert.Contains(t, labels, "Loop 1 \u00b7 MPI_Send\n3 it t=0.014")
	assert.Equal(t, 0, top.Initial, "MPI_Init holds the first event")

	loop := levels[1]
	require.Len(t, loop.Nodes, 2)
	send, recv := &loop.Nodes[0], &loop.Nodes[1]
	assert.Equal(t, "MPI_Send 8 B cs=1 t=0.003", Label(send, metrics))
	assert.Equal(t, "MPI_Recv 16 B cs=2 t=0.006", Label(recv, metrics))
	require.Len(t, loop.Edges, 2, "send -> recv and the back edge recv -> send")
	assert.Equal(t, "3 (0.003)", Label(&loop.Edges[0], metrics))
	assert.Equal(t, "2 (0.002)", Label(&loop.Edges[1], metrics), "two iterations start over")
	assert.Contains(t, Tooltip(&loop.Edges[1], metrics, &loop), "back edge")
	assert.Contains(t, Tooltip(send, metrics, &loop), "main pp.c:11")

	d := DOT(&loop, metrics, DOTOptions{Metric: analysis.MetricTime})
	assert.True(t, strings.HasPrefix(d, "digraph"))
	// Recv (6 ms) is the hottest node: red; Send (3 ms) half way.
	assert.Contains(t, d, `fillcolor="`+Heat(1)+`"`)
	assert.Contains(t, d, `fillcolor="`+Heat(0.5)+`"`)
	assert.Regexp(t, `n2->n1\[[^]]*constraint="false"[^]]*style="dashed"`, d, "the back edge is dashed and leaves the layout top-down")

	// On the rank's scale the loop node (14 ms) is red and the Recv
	// inside it (6 ms) is 6/14 of the way.
	scale := RankScale(levels, metrics, analysis.MetricTime)
	assert.InDelta(t, 0.014, scale, 1e-12)
	d = DOT(&loop, metrics, DOTOptions{Metric: analysis.MetricTime, Scale: scale})
	assert.Contains(t, d, `fillcolor="`+Heat(0.006/0.014)+`"`)
	assert.NotContains(t, d, `fillcolor="`+Heat(1)+`"`)
	assert.Contains(t, d, "red = 0.014 s on every level")

	// A long MPI_Init is grey and outside the scale: the loop stays red.
	tk := analysis.MetricIndex(metrics, analysis.MetricTime)
	top.Nodes[top.Initial].Vals[tk] = 100
	d = DOT(&top, metrics, DOTOptions{Metric: analysis.MetricTime})
	assert.Regexp(t, `fillcolor="`+startUpColor+`"[^]]*label="MPI_Init`, d)
	assert.Regexp(t, `\[[^]]*fillcolor="`+Heat(1)+`"[^]]*label="Loop 1`, d)
	assert.Contains(t, d, "red = 0.014 s (nodes)")
}

// TestSiteNames checks how a call site's name reaches the level graphs:
// the loop header and the hover texts show its label, and the full
// signature when the label shortens it.
func TestSiteNames(t *testing.T) {
	tests := []struct {
		name       string
		site       flowgraph.CallSite
		wantHeader string
		wantSig    string // a tooltip line, "" for none
	}{
		{"demangled", flowgraph.CallSite{Object: "/bin/pp", Offset: 0x101, Function: "ns::C::step", File: "/src/c.cpp", Line: 7,
			Signature: "ns::C::step(int) const"}, "MPI_Send at ns::C::step c.cpp:7", "\nfunction ns::C::step(int) const"},
		{"function only", flowgraph.CallSite{Object: "/bin/pp", Offset: 0x101, Function: "main"}, "MPI_Send at main", ""},
		{"no symbol", flowgraph.CallSite{Object: "/bin/pp", Offset: 0x101}, "MPI_Send at pp+0x101", ""},
	}
	metrics := analysis.Metrics(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := pingPong(t)
			g.Sites[1] = tt.site
			levels, _, err := analysis.RankLevels(g, nil)
			require.NoError(t, err)
			require.Len(t, levels, 2)
			loop := &levels[1]
			assert.Equal(t, tt.wantHeader, loop.Header)
			require.Equal(t, analysis.KindLoop, levels[0].Nodes[1].Kind)
			loopTip := Tooltip(&levels[0].Nodes[1], metrics, &levels[0])
			sendTip := Tooltip(&loop.Nodes[0], metrics, loop)
			assert.Contains(t, loopTip, tt.wantHeader)
			assert.Contains(t, sendTip, strings.TrimPrefix(tt.wantHeader, "MPI_Send"))
			if tt.wantSig != "" {
				assert.Contains(t, loopTip, tt.wantSig)
				assert.Contains(t, sendTip, tt.wantSig)
			} else {
				assert.NotContains(t, loopTip, "function ")
				assert.NotContains(t, sendTip, "function ")
			}
		})
	}
}

func TestHeatAndColors(t *testing.T) {
	tests := []struct{ got, want string }{
		{Heat(0), "#ffffb2"},
		{Heat(1), "#bd0026"},
		{Heat(-3), "#ffffb2"},
		{Heat(7), "#bd0026"},
		{Heat(math.NaN()), "#eeeeee"},
		// Luminance 0.299 r + 0.587 g + 0.114 b against 140.
		{TextColor("#bd0026"), "#ffffff"}, // 60.8
		{TextColor("#f03b20"), "#ffffff"}, // 110.0
		{TextColor("#fd8d3c"), "#000000"}, // 165.1
		{TextColor("#ffffb2"), "#000000"},
		{TextColor("#2166ac"), "#ffffff"}, // 82.0
		{TextColor("red"), "#000000"},
		{TextColor("#zzzzzz"), "#000000"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.got)
	}
	c := CallColors([]string{"MPI_Send", "MPI_Recv"})
	assert.NotEqual(t, c["MPI_Send"], c["MPI_Recv"])
	assert.Regexp(t, regexp.MustCompile(`^#[0-9a-f]{6}$`), CallColors(make([]string, 40))[""])
}

// TestCallColorsDistinct: the calls of a report (HPCC has 24) and the
// groups of the overview get colors that do not look alike (HPCC at 2 ranks had Irecv #3c3cc8, Isend #3c39c6, Reduce #3e39c6,
// Wait #4539c6), the first ones the palette's.
func TestCallColorsDistinct(t *testing.T) {
	var calls []string
	for i := range 24 {
		calls = append(calls, fmt.Sprintf("MPI_Call%d", i))
	}
	extra := groupNames
	c := CallColors(calls, extra...)
	require.Len(t, c, len(calls)+len(extra))
	assert.Equal(t, c, CallColors(calls, extra...), "deterministic")
	for i := range palette {
		assert.Equal(t, palette[i], c[calls[i]])
	}
	names := slices.Concat(calls, extra, []string{UserColor, SystemColor, MPITimeColor})
	c[UserColor], c[SystemColor], c[MPITimeColor] = UserColor, SystemColor, MPITimeColor
	minD := math.Inf(1)
	for i, a := range names {
		assert.Greater(t, labOf(c[a]).dist(labOf(ComputeColor)), 10.0, "%s looks like compute", a)
		for _, b := range names[:i] {
			minD = math.Min(minD, labOf(c[a]).dist(labOf(c[b])))
		}
	}
	t.Logf("least difference of two of %d colors: %.1f (CIE76)", len(names), minD)
	assert.Greater(t, minD, 12.0, "two names look alike")
}

func TestGroupsShareDrawings(t *testing.T) {
	// Identical ranks have one structure, so one group and one drawing.
	in := genJob(t, 4, 500, nil)
	job, err := analysis.Load(in, analysis.Options{})
	require.NoError(t, err)
	_, html := writeReport(t, in, "groups.html", Options{})
	// One drawing of the top level per group of the model, no more.
	for g := range job.Groups {
		assert.Contains(t, html, fmt.Sprintf(`id="lv-%d-0"`, g))
		assert.Contains(t, html, fmt.Sprintf("group %d: ranks %s", g+1, job.Members(g)))
	}
	assert.NotContains(t, html, fmt.Sprintf(`id="lv-%d-0"`, len(job.Groups)))
	in = genJob(t, 3, 500, func(h *flowgraph.Header, ranks []*flowgraph.Rank) {
		ranks[1].Graph, ranks[2].Graph = ranks[0].Graph, ranks[0].Graph
	})
	_, html = writeReport(t, in, "same.html", Options{})
	assert.True(t, strings.Contains(html, "group 1: ranks 0-2"), "one group of all ranks, numbered from 1 as in mpiflow loops")
	assert.NotContains(t, html, `id="lv-1-0"`, "a single group")
}

func TestNoGraphviz(t *testing.T) {
	in := genJob(t, 2, 500, nil)
	_, html := writeReport(t, in, "nodot.html", Options{DotPath: "/nonexistent/dot"})
	assert.Contains(t, html, "Graphviz is not installed")
	assert.Contains(t, html, "Graph picture not available")
	assert.Contains(t, html, `<pre class="dot">digraph`)
}

func TestBadInput(t *testing.T) {
	in := genJob(t, 2, 100, nil)
	job, err := analysis.Load(in, analysis.Options{})
	require.NoError(t, err)
	err = WriteFile(context.Background(), "/nonexistent-dir/r.html", job, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/nonexistent-dir/r.html")
}

func TestEdgeCases(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(h *flowgraph.Header, ranks []*flowgraph.Rank)
		want   []string
	}{
		{"empty rank", func(h *flowgraph.Header, ranks []*flowgraph.Rank) {
			ranks[1].Graph = flowgraph.Graph{Initial: -1}
			ranks[1].Complete = false
			h.Incomplete = true
		}, []string{"Incomplete run", "ranks 1"}},
		{"single event", func(h *flowgraph.Header, ranks []*flowgraph.Rank) {
			for _, r := range ranks {
				b := flowgraph.NewBuilder(0, 0)
				b.Add(flowgraph.Call{Key: flowgraph.NodeKey{Call: "MPI_Init", Site: -1, Partner: -1, Comm: -1}, Enter: 0, Exit: 10, Partner: -1})
				r.Graph = b.Graph()
			}
		}, []string{"MPI_Init 0 B t=1e-08"}},
		{"no events", func(h *flowgraph.Header, ranks []*flowgraph.Rank) {
			for _, r := range ranks {
				r.Graph = flowgraph.Graph{Initial: -1}
				r.Start = 0
			}
		}, []string{"Spatiotemporal overview not available"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := genJob(t, 2, 300, tt.mutate)
			_, html := writeReport(t, in, "edge.html", Options{})
			for _, w := range tt.want {
				assert.True(t, strings.Contains(html, w), "report contains %q", w)
			}
		})
	}
}

func TestCounterMetricsInReport(t *testing.T) {
	in := genJob(t, 2, 500, func(h *flowgraph.Header, ranks []*flowgraph.Rank) {
		h.Counters = []string{"PAPI_TOT_INS", "PAPI_TOT_CYC"}
		for _, r := range ranks {
			for i := range r.Graph.Edges {
				n := r.Graph.Edges[i].Count
				r.Graph.Edges[i].Counters = []int64{3000 * n, 1000 * n}
			}
		}
	})
	_, html := writeReport(t, in, "counters.html", Options{})
	for _, m := range []string{"ipc", "mips"} {
		assert.True(t, strings.Contains(html, `<option value="`+m+`">`), "metric %s offered", m)
	}
	// Every compute phase ran 3 instructions per cycle.
	assert.True(t, strings.Contains(html, "ipc: 3"), "edge tooltips show the IPC")
}

func TestDefaultComparison(t *testing.T) {
	// genJob makes the last rank's compute phases 3x slower: it is B, the
	// rank compared against.
	in := genJob(t, 4, 1000, nil)
	job, err := analysis.Load(in, analysis.Options{})
	require.NoError(t, err)
	opt := Options{NoOcelotl: true}
	opt.defaults()
	p, err := build(context.Background(), job, &opt)
	require.NoError(t, err)
	assert.Equal(t, 3, p.Data.Compare[1])
	assert.NotEqual(t, 3, p.Data.Compare[0])
	assert.Nil(t, p.Data.Ocelotl)
	assert.Contains(t, p.OcelotlNote, "not available")
}

// TestLoopTableAcrossRanks: a group's loop tables give, for each loop, the
// least and largest share over the group's ranks with their ranks, and
// which ranks have the loop when not all do, as its loop tree says.
func TestLoopTableAcrossRanks(t *testing.T) {
	in := genJob(t, 4, 4000, nil)
	job, err := analysis.Load(in, analysis.Options{})
	require.NoError(t, err)
	_, html := writeReport(t, in, "spread.html", Options{})
	var checked, partial int
	for gi, g := range job.Groups {
		if len(g.Members) < 2 {
			continue
		}
		drawn := map[int]bool{}
		for _, lv := range g.Levels {
			for _, e := range lv.Nodes {
				if e.Kind == analysis.KindLoop {
					drawn[e.Loop] = true
				}
			}
		}
		for _, row := range g.Tree {
			if !drawn[row.ID] {
				continue
			}
			want := fmt.Sprintf("<td>%.2f%% (rank %d) to %.2f%% (rank %d)</td><td>%d", 100*row.MinShare, row.MinRank, 100*row.MaxShare, row.MaxRank, row.Ranks)
			if row.Where != "" {
				want += ": " + row.Where
				partial++
			}
			assert.Contains(t, html, want+"</td>", "group %d %s", gi, row.Name)
			checked++
		}
	}
	require.Positive(t, checked, "the generated ranks share loops in a group")
	t.Logf("%d loop rows checked, %d of loops some ranks lack", checked, partial)
}

// TestEdgeColor: edges of the light end of the scales are drawn darker, so
// that they show on white; the others keep their color.
func TestEdgeColor(t *testing.T) {
	lum := func(c string) float64 {
		var r, g, b int
		_, err := fmt.Sscanf(c, "#%02x%02x%02x", &r, &g, &b)
		require.NoError(t, err, c)
		return luminance(r, g, b)
	}
	for _, f := range []float64{0, 0.05, 0.1, 0.2} {
		c := EdgeColor(Heat(f))
		assert.LessOrEqual(t, lum(c), float64(maxEdgeLuminance), "f=%v: %s", f, c)
	}
	assert.Greater(t, lum(Heat(0)), float64(maxEdgeLuminance), "the scale's light end is too light for a line")
	for _, f := range []float64{0.5, 0.8, 1} {
		assert.Equal(t, Heat(f), EdgeColor(Heat(f)))
	}
	assert.Equal(t, "#555555", EdgeColor("#555555"))
}

// fakeRenderer draws every graph as the same picture, or fails with err.
type fakeRenderer struct {
	err    error
	graphs int
}

func (f *fakeRenderer) Render(_ context.Context, dots []string) ([][]byte, error) {
	if f.err != nil {
		return nil, f.err
	}
	out := make([][]byte, len(dots))
	for i := range dots {
		out[i] = []byte(`<?xml version="1.0"?><svg><text id="fake-picture">fake</text></svg>`)
	}
	f.graphs += len(dots)
	return out, nil
}

// Options.Renderer lays out the graphs in place of Graphviz; its failure
// leaves the DOT text with a note.
func TestRenderer(t *testing.T) {
	in := genJob(t, 2, 500, nil)
	fake := &fakeRenderer{}
	_, html := writeReport(t, in, "fake.html", Options{Renderer: fake, NoOcelotl: true})
	assert.Positive(t, fake.graphs)
	assert.Contains(t, html, `id="fake-picture"`)
	assert.NotContains(t, html, `<pre class="dot">digraph`)

	_, html = writeReport(t, in, "fakefail.html", Options{Renderer: &fakeRenderer{err: errors.New("no room")}, NoOcelotl: true})
	assert.Contains(t, html, "Graphviz failed: no room")
	assert.Contains(t, html, "Graph picture not available: no room")
	assert.Contains(t, html, `<pre class="dot">digraph`)
}
