package report

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/analysis"
	"mpiflow/flowgraph"
)

const chromiumPath = "/usr/bin/chromium"

// browser is a headless Chromium tab that records console errors,
// uncaught exceptions and requests that leave the local file.
type browser struct {
	ctx      context.Context
	mu       sync.Mutex
	problems []string
	requests []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("no headless browser: %s not installed (Debian package chromium)", chromiumPath)
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 1000))
	b := &browser{}
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(b.listen))
	t.Cleanup(func() { cancel(); cancelA() })
	b.ctx = ctx
	// Start the browser with a context without timeout (see chromedp.Run).
	require.NoError(t, chromedp.Do(ctx))
	return b
}

func (b *browser) listen(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == "error" || ev.Type == "assert" {
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			b.problems = append(b.problems, "console."+string(ev.Type)+": "+strings.Join(args, " "))
		}
	case *runtime.EventExceptionThrown:
		b.problems = append(b.problems, "exception: "+(&chromedp.ExceptionError{ExceptionDetails: ev.ExceptionDetails}).Error())
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.EntryLevelError {
			b.problems = append(b.problems, "log: "+ev.Entry.Text+" "+ev.Entry.URL)
		}
	case *network.EventRequestWillBeSent:
		if u := ev.Request.URL; !strings.HasPrefix(u, "file://") && !strings.HasPrefix(u, "data:") {
			b.requests = append(b.requests, u)
		}
	}
}

// open loads the report at path and waits for its script to run.
func (b *browser) open(t *testing.T, path string) {
	t.Helper()
	abs, err := filepath.Abs(path)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("file://"+abs), chromedp.WaitReady(chromedp.CSS("#t-canvas"))))
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(t, err, "evaluate %s", expr)
	return v
}

// shot saves a screenshot of the element matching sel as a PNG artifact.
func (b *browser) shot(t *testing.T, sel, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	// The sticky navigation bar would cover the top of the element.
	_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("nav").style.position = "static"; true`))
	require.NoError(t, err)
	png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(sel)))
	require.NoError(t, err, "screenshot of %s", sel)
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("nav").style.position = ""; true`))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(artifacts(t), name), png, 0o644))
}

func (b *browser) check(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	assert.Empty(t, b.problems, "console errors or exceptions")
	assert.Empty(t, b.requests, "network requests")
}

func TestBrowserReport(t *testing.T) {
	b := newBrowser(t)
	in := genJob(t, 4, 4000, func(h *flowgraph.Header, _ []*flowgraph.Rank) {
		h.ClockSource = "TSC synchronized to CLOCK_MONOTONIC" // as Open MPI runs record it
	})
	// Grouped by the same structure, the generated ranks make several
	// groups; grouped by similarity, one whose drawing is its
	// representative's, where the other ranks' missing elements are faded.
	out, _ := writeReportOf(t, in, "report4.html", analysis.Options{Similarity: 1}, Options{})
	groups := checkReport(t, b, out, "report4")
	assert.Greater(t, len(slices.Compact(slices.Sorted(slices.Values(groups)))), 1, "the generated ranks have different graphs")

	out, _ = writeReportOf(t, in, "similar4.html", analysis.Options{}, Options{})
	groups = checkReport(t, b, out, "similar4")
	require.Equal(t, []int{0, 0, 0, 0}, groups, "one group of similar ranks")
	// Faded elements of each rank on every level (shown through a link,
	// as a click on a loop node shows it), the representative first.
	faded := eval[[]int](t, b, `(function () {
		var D = JSON.parse(document.getElementById("mpiflow-data").textContent), s = document.getElementById("g-rank"), out = [D.groups[0].rep];
		var a = document.createElement("a"), levels = document.querySelectorAll("#g-levels .level[data-group='0']");
		document.getElementById("g-levels").appendChild(a);
		for (var i = 0; i < D.ranks.length; i++) {
			s.value = String(i); s.dispatchEvent(new Event("change"));
			var n = 0;
			levels.forEach(function (lv) {
				a.setAttribute("href", "#lv-0-" + lv.dataset.loop); a.click();
				n += lv.querySelectorAll("svg g.absent").length;
			});
			out.push(n);
		}
		a.remove();
		return out; })()`)
	require.Len(t, faded, 5)
	assert.Zero(t, faded[1+faded[0]], "the representative lacks nothing of its own drawing")
	assert.Positive(t, slices.Max(faded[1:]), "some rank lacks an element of the representative's drawing")
	b.check(t)
}

// TestBrowserRunFile checks the report of a real 4-rank run the same
// way: testdata/halo4.mpiflow was recorded by `mpiflow run -- mpirun -np 4`
// of testdata/apps/halo.c (2x2 ranks, 100 iterations, built with -g);
// $MPIFLOW_RUN_FILE names another recording to check instead.
func TestBrowserRunFile(t *testing.T) {
	in := os.Getenv("MPIFLOW_RUN_FILE")
	if in == "" {
		in = filepath.Join("testdata", "halo4.mpiflow")
	}
	b := newBrowser(t)
	out, html := writeReport(t, in, "run.html", Options{})
	// The halo's main loop (two Irecv, two Send, two Wait and an
	// Allreduce per iteration) runs 100 times.
	assert.Contains(t, html, "100 it t=", "the main loop's node")
	checkReport(t, b, out, "run")
}

// checkReport opens the report at out, checks that every section renders
// and reacts, saves screenshots named prefix-*.png and returns the graph
// group of each rank.
func checkReport(t *testing.T, b *browser, out, prefix string) []int {
	t.Helper()
	b.open(t, out)

	// Every section renders something.
	for _, tt := range []struct{ name, expr string }{
		{"charts", `Array.from(document.querySelectorAll("figure.chart svg")).map(s => s.querySelectorAll("rect, polyline").length).filter(n => n > 0).length`},
		{"graph nodes", `document.querySelectorAll("#g-levels .level:not([hidden]) svg g.node").length`},
		{"compare nodes", `document.querySelectorAll("#c-view svg g.node").length`},
		{"compare table", `document.querySelectorAll("#c-table tbody tr").length`},
		{"overview", `+document.querySelector("#o-view svg").getAttribute("data-count")`},
		{"timeline", `+document.getElementById("t-canvas").dataset.drawn`},
	} {
		n := eval[int](t, b, tt.expr)
		assert.Greater(t, n, 0, tt.name)
	}
	assert.Equal(t, 5, eval[int](t, b, `Array.from(document.querySelectorAll("figure.chart svg")).filter(s => s.getClientRects().length > 0 && s.querySelectorAll("rect, polyline").length > 0).length`), "five charts shown")
	// The load balance also orders the ranks by MPI time, largest first.
	byMPI := eval[[]float64](t, b, `(function () { var s = document.getElementById("lb-order"); s.value = "mpi"; s.dispatchEvent(new Event("change"));
		var shown = document.getElementById("lb-by-mpi").getClientRects().length > 0 && document.getElementById("lb-by-rank").getClientRects().length === 0;
		var v = Array.from(document.querySelectorAll("#chart-balance-by-mpi rect title")).map(t => /MPI time: ([0-9.e+-]+) s/.exec(t.textContent)).filter(m => m).map(m => parseFloat(m[1]));
		s.value = "rank"; s.dispatchEvent(new Event("change"));
		return [shown ? 1 : 0].concat(v); })()`)
	require.Greater(t, len(byMPI), 2)
	assert.Equal(t, 1.0, byMPI[0], "the charts by MPI time are shown")
	assert.IsNonIncreasing(t, byMPI[1:], "ranks by MPI time, largest first")
	// A click on a rank shows it in the graphs and the timeline.
	clicked := eval[[]string](t, b, `(function () { var r = document.querySelector("#chart-balance rect[data-ranks]:last-of-type");
		r.dispatchEvent(new MouseEvent("click", {bubbles: true}));
		var D = JSON.parse(document.getElementById("mpiflow-data").textContent), g = document.getElementById("g-rank");
		var out = [r.getAttribute("data-ranks"), String(D.ranks[+g.value].rank), document.getElementById("t-ranks").value,
			document.getElementById("t-canvas").dataset.rows];
		g.value = 0; g.dispatchEvent(new Event("change")); // as the checks below expect
		return out; })()`)
	require.Len(t, clicked, 4)
	assert.NotEmpty(t, clicked[0])
	assert.Equal(t, clicked[0], clicked[1], "the graphs show the rank clicked")
	assert.Equal(t, clicked[0], clicked[2], "the timeline shows it")
	assert.Equal(t, "1", clicked[3], "one row")
	// The banner's values are whole (the clock's was cut to "TSC synchronized to ...").
	assert.Empty(t, eval[[]string](t, b, `Array.from(document.querySelectorAll(".banner dd")).filter(d => d.scrollWidth > d.clientWidth + 1).map(d => d.textContent)`), "banner values cut off")
	assert.Equal(t, 7, eval[int](t, b, `document.querySelectorAll("#job-spread tbody tr").length`), "the spread over the ranks")
	// The node with the largest time is drawn at the red end of the
	// gradient, rgb(189,0,38), where black text would be unreadable.
	assert.Equal(t, "#ffffff", eval[string](t, b, `(function () {
		var n = Array.from(document.querySelectorAll("#g-levels .level:not([hidden]) g.node")).find(function (g) {
			return Array.from(g.querySelectorAll("polygon, path")).some(function (p) { return p.getAttribute("fill") === "rgb(189,0,38)"; }); });
		return n ? n.querySelector("text").getAttribute("fill") : "no node at the red end"; })()`), "white text on the darkest node")
	// MPI_Init nodes are grey, outside the scale: [grey, other colors].
	inits := eval[[]int](t, b, `(function () { var out = [0, 0];
		document.querySelectorAll("#g-levels .level:not([hidden]) g.node").forEach(function (g) {
			var t = g.querySelector("text"), p = g.querySelector("polygon, path");
			if (t && p && /^MPI_Init /.test(t.textContent)) out[p.getAttribute("fill") === "#e4e4e4" ? 0 : 1]++; });
		return out; })()`)
	require.Len(t, inits, 2)
	assert.Zero(t, inits[1], "MPI_Init nodes are grey")
	if prefix == "run" {
		assert.Positive(t, inits[0], "a recorded run's top level has its MPI_Init")
	}
	// The overview names its resources (ranks, or hosts when rows are thin).
	assert.Greater(t, eval[int](t, b, `document.querySelectorAll("#o-view svg text.o-label").length`), 0, "overview resource labels")
	{
		ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		cancel()
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(artifacts(t), prefix+"-full.png"), png, 0o644))
	}
	b.shot(t, "#job", prefix+"-job.png")
	for _, id := range []string{"calls", "callsites", "comm-matrix", "load-balance"} {
		b.shot(t, "#"+id, prefix+"-"+id+".png")
	}
	b.shot(t, "#graphs", prefix+"-graph.png")
	b.shot(t, "#compare", prefix+"-compare.png")
	b.shot(t, "#overview", prefix+"-overview.png")
	b.shot(t, "#timeline", prefix+"-timeline.png")

	// The p slider changes the number of drawn aggregates.
	counts := eval[[]int](t, b, `(function () {
		var s = document.getElementById("o-p"), out = [];
		[0, +s.max].forEach(function (v) {
			s.value = v; s.dispatchEvent(new Event("input"));
			out.push(+document.querySelector("#o-view svg").getAttribute("data-count"));
		});
		return out;
	})()`)
	require.Len(t, counts, 2)
	assert.Greater(t, counts[0], counts[1], "p=0 draws more aggregates than p=1")
	assert.Equal(t, 1, counts[1], "p=1 is one aggregate")
	b.shot(t, "#overview", prefix+"-overview-p1.png")

	// The rank selector changes the graph: another drawing for a rank of
	// another group, else the same drawing with that rank's values.
	groups := eval[[]int](t, b, `JSON.parse(document.getElementById("mpiflow-data").textContent).ranks.map(r => r.group)`)
	require.NotEmpty(t, groups)
	other := len(groups) - 1
	for i, g := range groups {
		if g != groups[0] {
			other = i
			break
		}
	}
	const visibleTexts = `Array.from(document.querySelectorAll("#g-levels .level:not([hidden]) svg text")).map(t => t.textContent).join("|")`
	before := eval[string](t, b, `document.querySelector("#g-levels .level:not([hidden])").id`)
	beforeTexts := eval[string](t, b, visibleTexts)
	after := eval[string](t, b, fmt.Sprintf(`(function () { var s = document.getElementById("g-rank"); s.value = "%d";
		s.dispatchEvent(new Event("change")); return document.querySelector("#g-levels .level:not([hidden])").id; })()`, other))
	assert.Equal(t, fmt.Sprintf("lv-%d-0", groups[other]), after)
	if groups[other] != groups[0] {
		assert.NotEqual(t, before, after)
	} else if other != 0 {
		assert.NotEqual(t, beforeTexts, eval[string](t, b, visibleTexts), "labels show the selected rank's values")
	}
	assert.Regexp(t, `(MPI_\w+ \d+(\.\d)?[KMG]?B( cs=\d+)? t=[0-9.e+-]+|Loop \d+ · MPI_\w+\|\d+ it t=[0-9.e+-]+)`, eval[string](t, b, visibleTexts),
		"labels in the paper's format")

	// Comparing ranks of different groups says so; within a group it
	// says nothing.
	cmpNote := eval[[]string](t, b, fmt.Sprintf(`(function () { var a = document.getElementById("c-a"), b = document.getElementById("c-b"), out = [];
		a.value = "0"; b.value = "%d"; b.dispatchEvent(new Event("change"));
		out.push(document.getElementById("c-groups").hidden ? "" : document.getElementById("c-groups").textContent);
		b.value = "0"; b.dispatchEvent(new Event("change"));
		out.push(document.getElementById("c-groups").hidden ? "" : "shown");
		return out; })()`, other))
	require.Len(t, cmpNote, 2)
	if groups[other] != groups[0] {
		assert.Contains(t, cmpNote[0], "their graphs differ")
	}
	assert.Empty(t, cmpNote[1], "no note for one group")

	// Clicking a loop node shows its subgraph, and the crumb leads back.
	const loopNode = "#g-levels .level:not([hidden]) g.node a[href^='#lv-']"
	href := eval[string](t, b, `(function () { var a = document.querySelector("`+loopNode+`"); return a ? a.getAttribute("href") : ""; })()`)
	require.NotEmpty(t, href, "the top level has a loop node")
	{
		// A real mouse click on the loop node's box.
		ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(loopNode+" polygon"))))
		cancel()
	}
	shown := eval[string](t, b, `document.querySelector("#g-levels .level:not([hidden])").id`)
	assert.Equal(t, strings.TrimPrefix(href, "#"), shown)
	assert.Greater(t, eval[int](t, b, `document.querySelectorAll("#g-levels .level:not([hidden]) svg g.node").length`), 0)
	b.shot(t, "#graphs", prefix+"-loop.png")
	// Recoloring by another metric changes node fills.
	changed := eval[bool](t, b, `(function () { var f = () => Array.from(document.querySelectorAll("#g-levels .level:not([hidden]) g.node polygon, #g-levels .level:not([hidden]) g.node path")).map(p => p.getAttribute("fill")).join();
		var a = f(), s = document.getElementById("g-metric"); s.value = "count"; s.dispatchEvent(new Event("change")); return a !== f(); })()`)
	assert.True(t, changed, "color by count differs from color by time")

	back := eval[string](t, b, `(function () { var a = document.querySelector("#g-levels .level:not([hidden]) .crumbs a");
		a.dispatchEvent(new MouseEvent("click", {bubbles: true, cancelable: true}));
		return document.querySelector("#g-levels .level:not([hidden])").id; })()`)
	assert.Equal(t, after, back)

	// Clicking an aggregate opens its window in the timeline.
	win := eval[[]float64](t, b, `(function () { var s = document.getElementById("o-p"); s.value = 0; s.dispatchEvent(new Event("input"));
		var r = document.querySelector("#o-view rect.agg"); r.dispatchEvent(new MouseEvent("click", {bubbles: true}));
		return [parseFloat(document.getElementById("t-from").value), parseFloat(document.getElementById("t-to").value), +document.getElementById("t-canvas").dataset.drawn]; })()`)
	require.Len(t, win, 3)
	assert.Less(t, win[0], win[1])
	b.shot(t, "#timeline", prefix+"-timeline-window.png")
	b.check(t)
	return groups
}

// TestBrowserDegraded opens a report made without Graphviz and without the
// overview: the page must still work and say what is missing.
func TestBrowserDegraded(t *testing.T) {
	b := newBrowser(t)
	in := genJob(t, 3, 1000, nil)
	out, _ := writeReport(t, in, "degraded.html", Options{DotPath: "/nonexistent/dot", NoOcelotl: true})
	b.open(t, out)
	assert.Contains(t, eval[string](t, b, `document.querySelector("#g-levels .level:not([hidden])").textContent`), "Graph picture not available")
	assert.Contains(t, eval[string](t, b, `document.getElementById("o-note").textContent`), "not available")
	assert.Contains(t, eval[string](t, b, `document.querySelector("#c-view").textContent`), "not embedded")
	assert.Greater(t, eval[int](t, b, `+document.getElementById("t-canvas").dataset.drawn`), 0)
	b.shot(t, "#graphs", "degraded-graph.png")
	b.check(t)
}

// TestGraphLabels: a group's drawing, showing a rank, labels each call node
// as the Go side labels that rank's own node (Label): call, typical size in
// the tables' units ("85.9 KiB", "0 B"), call site and time; before, sizes
// with a space were garbled ("85.9 86KB") and "0 B" kept another rank's
// value.
func TestGraphLabels(t *testing.T) {
	b := newBrowser(t)
	in := genJob(t, 4, 4000, func(_ *flowgraph.Header, ranks []*flowgraph.Rank) {
		// Sizes in KiB and of 0 bytes on every rank, different per rank.
		for r, rk := range ranks {
			for i := range rk.Graph.Nodes {
				n := &rk.Graph.Nodes[i]
				n.Bytes.Total = int64(i%3) * n.Count * int64(700+r*90000)
			}
		}
	})
	job, err := analysis.Load(in, analysis.Options{Similarity: 1})
	require.NoError(t, err)
	out, _ := writeReportOf(t, in, "labels.html", analysis.Options{Similarity: 1}, Options{NoOcelotl: true})
	b.open(t, out)
	checked := 0
	for i, r := range job.Ranks {
		// The call node labels of every level of the rank's drawing,
		// each level shown through a link as a click on a loop shows it.
		got := eval[[][]string](t, b, fmt.Sprintf(`(function () {
			var D = JSON.parse(document.getElementById("mpiflow-data").textContent), s = document.getElementById("g-rank");
			s.value = "%d"; s.dispatchEvent(new Event("change"));
			var g = D.ranks[%d].group, a = document.createElement("a"), out = [];
			document.getElementById("g-levels").appendChild(a);
			D.groups[g].levels.forEach(function (lv) {
				a.setAttribute("href", "#lv-" + g + "-" + lv.loop); a.click();
				var texts = [];
				document.querySelectorAll("#lv-" + g + "-" + lv.loop + " svg g.node").forEach(function (n) {
					var t = n.querySelectorAll("text");
					if (t.length === 1) texts.push(t[0].textContent);
				});
				out.push(texts.sort());
			});
			a.remove();
			return out; })()`, i, i))
		require.Len(t, got, len(r.Levels), "rank %d", i)
		for l, lv := range r.Levels {
			want := []string{}
			for k := range lv.Nodes {
				if e := &lv.Nodes[k]; e.Kind == analysis.KindNode {
					want = append(want, Label(e, job.Metrics))
				}
			}
			slices.Sort(want)
			assert.Equal(t, want, got[l], "rank %d level %d", i, l)
			checked += len(want)
		}
	}
	assert.Greater(t, checked, 8)
	// Every edge shown is dark enough to see on white, whatever its value.
	light := eval[[]string](t, b, `(function () {
		var out = [];
		document.querySelectorAll("#g-levels .level:not([hidden]) svg g.edge path").forEach(function (p) {
			var c = p.getAttribute("stroke"), m = /^rgb\((\d+),(\d+),(\d+)\)$/.exec(c), v;
			if (m) v = [+m[1], +m[2], +m[3]];
			else if (/^#[0-9a-f]{6}$/i.test(c)) v = [1, 3, 5].map(function (i) { return parseInt(c.substr(i, 2), 16); });
			if (!v || 0.299 * v[0] + 0.587 * v[1] + 0.114 * v[2] > 200) out.push(c);
		});
		return out; })()`)
	assert.Empty(t, light, "edge colors too light on white")
	b.check(t)
}

// TestMatrixScale: the communication matrix's colors span its cells, the
// least at the scale's pale end and the most at its red end, and the
// legend gives both amounts.
func TestMatrixScale(t *testing.T) {
	b := newBrowser(t)
	in := genJob(t, 4, 4000, nil)
	out, _ := writeReportOf(t, in, "matrix.html", analysis.Options{}, Options{NoOcelotl: true})
	b.open(t, out)
	got := eval[[]string](t, b, `(function () {
		var v = JSON.parse(document.getElementById("mpiflow-matrix").textContent).views[0], lo = null, hi = null;
		for (var k = 0; k < v.cells.length; k += 4) {
			var c = v.cells.slice(k, k + 4);
			if (c[3] > 0 && (lo === null || c[3] < lo[3])) lo = c;
			if (hi === null || c[3] > hi[3]) hi = c;
		}
		var fill = function (c) { return document.querySelector("#m-view-svg rect.cell[data-i='" + c[0] + "'][data-j='" + c[1] + "']").getAttribute("fill"); };
		return [fill(lo), fill(hi), String(lo[3] < hi[3]), document.getElementById("m-legend").textContent]; })()`)
	require.Len(t, got, 4)
	require.Equal(t, "true", got[2], "cells of different sizes")
	assert.Equal(t, "rgb(255,255,178)", got[0], "the least cell at the pale end")
	assert.Equal(t, "rgb(189,0,38)", got[1], "the most at the red end")
	assert.Regexp(t, `log scale: pale yellow [0-9.]+ (B|KiB|MiB) \(the least\), red [0-9.]+ (B|KiB|MiB) \(the most\)`, got[3])
	b.check(t)
}
