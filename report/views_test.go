package report

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/aggregate"
	"mpiflow/analysis"
	"mpiflow/flowgraph"
)

// exchange records rank me of a two-rank ping-pong: MPI_Init, then iters
// iterations of MPI_Send to and MPI_Recv from the other rank (rank 0
// sends first) with 1 ms of compute before each call, and MPI_Finalize.
// With several, extra sends to rank 2 leave from the send's call site, so
// that its partner is ambiguous.
func exchange(t testing.TB, me, iters int, several bool) *flowgraph.Rank {
	t.Helper()
	b := flowgraph.NewBuilder(0, 0)
	site := func(off uint64) int { return b.Site(flowgraph.CallSite{Addr: off, Object: "/bin/pp", Offset: off}) }
	sInit, sSend, sRecv, sFin := site(0x10), site(0x20), site(0x30), site(0x40)
	now := int64(0)
	call := func(name string, s, partner int, dur int64) {
		now += ms
		b.Add(flowgraph.Call{Key: flowgraph.NodeKey{Call: name, Site: s, Partner: -1, Comm: -1}, Enter: now, Exit: now + dur,
			Bytes: 8, Partner: partner})
		now += dur
	}
	call("MPI_Init", sInit, -1, 5*ms)
	other := 1 - me
	for i := range iters {
		if me == 0 {
			call("MPI_Send", sSend, other, ms/10)
			call("MPI_Recv", sRecv, other, ms)
		} else {
			call("MPI_Recv", sRecv, other, ms)
			call("MPI_Send", sSend, other, ms/10)
		}
		if several && i == 0 {
			call("MPI_Send", sSend, 2, ms/10)
		}
	}
	call("MPI_Finalize", sFin, -1, ms)
	g := b.Graph()
	require.NoError(t, g.Validate())
	return &flowgraph.Rank{Rank: me, Start: 0, Graph: g, Complete: true}
}

// pairedMessages builds the timelines of two ranks (1,000 bins) and pairs
// their messages.
func pairedMessages(t *testing.T, ranks []*flowgraph.Rank) (*timelineData, *timelineBuilder) {
	t.Helper()
	tb := newTimelineBuilder(max(ranks[0].End(), ranks[1].End()), 1000, map[string]int{})
	d := &timelineData{}
	for i, r := range ranks {
		tl, err := tb.rank(r, fmt.Sprint("rank ", i))
		require.NoError(t, err)
		d.Ranks = append(d.Ranks, tl)
	}
	d.pairMessages()
	return d, tb
}

func TestPairMessages(t *testing.T) {
	ranks := []*flowgraph.Rank{exchange(t, 0, 3, false), exchange(t, 1, 3, false)}
	d, tb := pairedMessages(t, ranks)
	require.Len(t, d.Msgs, 4*6, "3 messages each way")
	assert.Empty(t, d.MsgNote)
	// Times count from each rank's first event. The first message: rank 0
	// sends at 6 ms (after MPI_Init and 1 ms of compute), rank 1's first
	// receive, from 6 ms, ends at 7 ms.
	assert.Equal(t, []int64{0, 6 * ms / tb.tick, 1, 7 * ms / tb.tick}, d.Msgs[:4])
	for k := 4; k < len(d.Msgs); k += 4 {
		assert.LessOrEqual(t, d.Msgs[k-3], d.Msgs[k+1], "by send time")
		assert.Less(t, d.Msgs[k+1], d.Msgs[k+3], "each receive ends after its send starts")
	}

	// A call site with two partners: its messages cannot be told apart.
	ranks[0] = exchange(t, 0, 3, true)
	d, _ = pairedMessages(t, ranks)
	assert.Len(t, d.Msgs, 4*3, "only rank 1's messages to rank 0")
	assert.Contains(t, d.MsgNote, "MPIFLOW_KEY=call,site,partner")
}

// TestMessagesToWait: a message to a nonblocking receive ends where the
// receive completes, at the end of the wait that follows its post, not
// before it was sent (the end of the post).
func TestMessagesToWait(t *testing.T) {
	rank := func(me int) *flowgraph.Rank {
		b := flowgraph.NewBuilder(0, 0)
		now := int64(0)
		call := func(name string, partner int, dur int64) {
			b.Add(flowgraph.Call{Key: flowgraph.NodeKey{Call: name, Site: -1, Partner: -1, Comm: -1}, Enter: now, Exit: now + dur, Bytes: 8, Partner: partner})
			now += dur
		}
		call("MPI_Init", -1, 5*ms)
		for range 3 {
			if me == 0 {
				now += 2 * ms
				call("MPI_Send", 1, ms/10) // at 7 ms
				now += ms
			} else {
				now += ms
				call("MPI_Irecv", 0, ms/100) // posted at 6 ms
				now += 2 * ms
				call("MPI_Wait", -1, ms) // completes at 9.01 ms
			}
		}
		call("MPI_Finalize", -1, ms)
		g := b.Graph()
		require.NoError(t, g.Validate())
		return &flowgraph.Rank{Rank: me, Graph: g, Complete: true}
	}
	d, tb := pairedMessages(t, []*flowgraph.Rank{rank(0), rank(1)})
	require.Len(t, d.Msgs, 4*3)
	assert.Equal(t, []int64{0, 7 * ms / tb.tick, 1, (9*ms + ms/100) / tb.tick}, d.Msgs[:4])
	for k := 0; k < len(d.Msgs); k += 4 {
		assert.Greater(t, d.Msgs[k+3], d.Msgs[k+1], "message %d ends after it starts", k/4)
	}
}

// TestMessagesBackwards: the note counts the pairings whose receive ends
// before its send starts, which are not drawn (analysis.PairMessages).
func TestMessagesBackwards(t *testing.T) {
	d := &timelineData{}
	d.drawMessages(analysis.MessagePairs{Msgs: []analysis.Message{{Src: 0, Send: 20, Dst: 1, Recv: 25}}, Backwards: 1})
	assert.Equal(t, []int64{0, 20, 1, 25}, d.Msgs)
	assert.Contains(t, d.MsgNote, "1 messages are not drawn whose k-th receive ended before the k-th send started")
}

// pingPongJob writes a two-rank job of exchange ranks and returns its path.
func pingPongJob(t *testing.T, iters int) string {
	t.Helper()
	h := flowgraph.Header{NumRanks: 2, JobID: "pp", Command: []string{"pp"}, Hosts: []string{"h0", "h0"}}
	path := filepath.Join(t.TempDir(), "pp.mpiflow")
	require.NoError(t, flowgraph.WriteFile(path, h, []*flowgraph.Rank{exchange(t, 0, iters, false), exchange(t, 1, iters, false)}))
	return path
}

// TestBrowserViews exercises the controls of the graph, overview and
// timeline views in Chromium: the graph's color scale, the overview's
// window and slices, the timeline's wheel zoom, drag pan, window
// statistics and message lines.
func TestBrowserViews(t *testing.T) {
	b := newBrowser(t)
	out, _ := writeReport(t, pingPongJob(t, 300), "views.html", Options{})
	b.open(t, out)

	// Scale: on the whole rank's scale the loop's nodes are paler than on
	// the loop's own, where its largest node is red.
	const fills = `Array.from(document.querySelectorAll("#g-levels .level:not([hidden]) g.node polygon, #g-levels .level:not([hidden]) g.node path")).map(p => p.getAttribute("fill")).join()`
	eval[bool](t, b, `(function () { var a = document.querySelector("#g-levels .level:not([hidden]) g.node a[href^='#lv-']");
		a.dispatchEvent(new MouseEvent("click", {bubbles: true, cancelable: true})); return true; })()`)
	assert.Equal(t, "lv-0-1", eval[string](t, b, `document.querySelector("#g-levels .level:not([hidden])").id`))
	rankFills := eval[string](t, b, fills)
	assert.NotContains(t, rankFills, "rgb(189,0,38)", "no node of the loop is as large as the loop")
	assert.Contains(t, eval[string](t, b, `document.getElementById("g-legend").textContent`), "the rank's largest")
	levelFills := eval[string](t, b, `(function () { var s = document.getElementById("g-scale"); s.value = "level"; s.dispatchEvent(new Event("change")); return `+fills+`; })()`)
	assert.Contains(t, levelFills, "rgb(189,0,38)", "the loop's largest node is red on its own scale")
	assert.Contains(t, eval[string](t, b, `document.getElementById("g-legend").textContent`), "of this level")
	assert.Equal(t, 2, eval[int](t, b, `document.querySelectorAll("#g-levels .level:not([hidden]) g.edge path[stroke-dasharray]").length > 0 ? 2 : 0`), "the back edge is dashed")
	b.shot(t, "#graphs", "views-scale-level.png")

	// Overview: it starts at the end of MPI_Init; the window and slices
	// controls switch views.
	ov := eval[[]string](t, b, `(function () { var w = document.getElementById("o-window");
		return [w.value, String(w.options.length), document.querySelector("#o-view svg").getAttribute("data-slices")]; })()`)
	require.Len(t, ov, 3)
	assert.Equal(t, []string{"after MPI_Init", "2", "30"}, ov)
	first := func() float64 {
		return eval[float64](t, b, `parseFloat(document.querySelector("#o-view svg text:not(.o-label)").textContent)`)
	}
	assert.InDelta(t, 0.005, first(), 1e-9, "after MPI_Init's 5 ms")
	eval[bool](t, b, `(function () { var w = document.getElementById("o-window"); w.value = "whole run"; w.dispatchEvent(new Event("change")); return true; })()`)
	assert.Equal(t, 0.0, first(), "the whole run starts at 0")
	slices := eval[[]string](t, b, `(function () { var s = document.getElementById("o-slices"), out = [];
		for (var i = 0; i < s.options.length; i++) out.push(s.options[i].value);
		s.value = out[out.length - 1]; s.dispatchEvent(new Event("change"));
		out.push(document.querySelector("#o-view svg").getAttribute("data-slices")); return out; })()`)
	require.GreaterOrEqual(t, len(slices), 3, "finer slice choices for a small job")
	assert.Equal(t, slices[len(slices)-2], slices[len(slices)-1], "the overview has the chosen slices")
	b.shot(t, "#overview", "views-overview.png")

	// Timeline: the wheel zooms in around the pointer, a drag pans by
	// the distance moved, the statistics follow the window, and messages
	// are drawn once few enough are in view.
	win := func() []float64 {
		return eval[[]float64](t, b, `[parseFloat(document.getElementById("t-from").value), parseFloat(document.getElementById("t-to").value),
			+document.getElementById("t-canvas").dataset.msgs, +document.getElementById("t-stats").dataset.calls]`)
	}
	all := win()
	require.Len(t, all, 4)
	assert.InDelta(t, 0.005, all[0], 1e-6, "the timeline opens at the end of MPI_Init's 5 ms, as the overview")
	eval[bool](t, b, `(function () { document.getElementById("t-canvas").dispatchEvent(new MouseEvent("dblclick", {bubbles: true})); return true; })()`)
	all = win()
	assert.Zero(t, all[0], "a double-click shows the whole run")
	assert.Zero(t, all[2], "too many messages to draw at full view")
	assert.Positive(t, all[3], "time per call in the window")
	zoomed := eval[[]float64](t, b, `(function () { var c = document.getElementById("t-canvas"), r = c.getBoundingClientRect(), h0 = document.body.scrollHeight, shrunk = 0;
		for (var i = 0; i < 6; i++) {
			c.dispatchEvent(new WheelEvent("wheel", {deltaY: -400, clientX: r.left + r.width / 2, clientY: r.top + 10, bubbles: true, cancelable: true}));
			if (document.body.scrollHeight < h0) shrunk++;
		}
		return [parseFloat(document.getElementById("t-from").value), parseFloat(document.getElementById("t-to").value), +c.dataset.msgs, shrunk]; })()`)
	require.Len(t, zoomed, 4)
	assert.Zero(t, zoomed[3], "the page keeps its height while the wheel zooms")
	assert.Less(t, zoomed[1]-zoomed[0], (all[1]-all[0])/10, "the wheel zooms in")
	assert.Positive(t, zoomed[2], "messages drawn when zoomed in")
	assert.Contains(t, eval[string](t, b, `document.getElementById("t-info").textContent`), "events in view (every event recorded)",
		"a small job's timeline holds its events")
	b.shot(t, "#timeline", "views-timeline-zoom.png")
	panned := eval[[]float64](t, b, `(function () { var c = document.getElementById("t-canvas"), r = c.getBoundingClientRect();
		c.dispatchEvent(new MouseEvent("mousedown", {clientX: r.left + 600, clientY: r.top + 10, bubbles: true}));
		c.dispatchEvent(new MouseEvent("mousemove", {clientX: r.left + 400, clientY: r.top + 10, bubbles: true}));
		window.dispatchEvent(new MouseEvent("mouseup", {clientX: r.left + 400, clientY: r.top + 10, bubbles: true}));
		return [parseFloat(document.getElementById("t-from").value), parseFloat(document.getElementById("t-to").value)]; })()`)
	require.Len(t, panned, 2)
	assert.Greater(t, panned[0], zoomed[0], "dragging left moves the window later")
	assert.InDelta(t, zoomed[1]-zoomed[0], panned[1]-panned[0], 1e-3*(zoomed[1]-zoomed[0]), "a pan keeps the width")
	b.check(t)
}

// TestRankScaleOfGroups checks that the report draws a group's levels on
// one scale: inside the loop no node reaches the red end.
func TestRankScaleOfGroups(t *testing.T) {
	job, err := analysis.Load(pingPongJob(t, 20), analysis.Options{})
	require.NoError(t, err)
	lv := job.Groups[0].Levels
	require.Len(t, lv, 2)
	scale := RankScale(lv, job.Metrics, analysis.MetricTime)
	d := DOT(&lv[1], job.Metrics, DOTOptions{Scale: scale})
	assert.NotContains(t, d, Heat(1))
	assert.Contains(t, DOT(&lv[0], job.Metrics, DOTOptions{Scale: scale}), Heat(1), "the loop node is the rank's largest")
}

// TestOverviewWindow: Options.WindowFrom/To make the overview's first view
// that window of the run (cut short at the run's end); a window that
// holds no part of the run or is too short to cut is analysis.ErrWindow.
func TestOverviewWindow(t *testing.T) {
	h := &flowgraph.Header{NumRanks: 2, JobID: "pp", Command: []string{"pp"}, Hosts: []string{"h0", "h0"}}
	ranks := []*flowgraph.Rank{exchange(t, 0, 20, false), exchange(t, 1, 20, false)}
	end := float64(ranks[0].End()) / 1e9 // 6 ms + 20 x 2.1 ms + 2 ms for rank 0
	for _, tc := range []struct {
		name        string
		from, to    int64
		want        string
		first, last float64
		err         string
	}{
		{"inside", 10 * ms, 20 * ms, "0.01 s to 0.02 s", 0.01, 0.02, ""},
		{"past the end", 30 * ms, 900 * ms, fmt.Sprintf("0.03 s to %.6g s", end), 0.03, end, ""},
		{"after the end", 900 * ms, 1000 * ms, "", 0, 0, "starts after the run's end"},
		{"empty", 20 * ms, 20 * ms, "", 0, 0, "is empty"},
		{"too short", 10 * ms, 10*ms + 5, "", 0, 0, "shorter than 10 ns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			load := func(i int) (*flowgraph.Rank, error) { return ranks[i], nil }
			oc, err := buildOcelotl(h, ranks, 0, rankWalks{load: load}, Options{Slices: 10, MaxPRuns: 5, WindowFrom: tc.from, WindowTo: tc.to}, nil, nil)
			if tc.err != "" {
				require.ErrorIs(t, err, analysis.ErrWindow)
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			v := oc.Views[0]
			assert.Equal(t, tc.want, v.Window)
			assert.Equal(t, 10, v.Slices)
			require.Len(t, v.Bounds, 11)
			assert.InDelta(t, tc.first, v.Bounds[0], 1e-9)
			assert.InDelta(t, tc.last, v.Bounds[10], 1e-9)
			assert.Equal(t, "whole run", oc.Views[1].Window, "the whole run is offered too")
		})
	}
}

// TestLegibleSuggest: with a thousand ranks, the suggested p is that of
// the best partition whose aggregates can be drawn (hosts here), not of the
// one of single ranks a fraction of a pixel tall; with ten ranks, every
// partition can be drawn and the suggestion is aggregate.Suggest's.
func TestLegibleSuggest(t *testing.T) {
	tree := func(hosts, perHost int) *aggregate.Hierarchy {
		h := &aggregate.Hierarchy{Nodes: []aggregate.Node{{Name: "job", Parent: -1, Resource: -1, Leaves: hosts * perHost}}}
		for k := range hosts {
			hi := len(h.Nodes)
			h.Nodes = append(h.Nodes, aggregate.Node{Name: fmt.Sprint("h", k), Parent: 0, Resource: -1, Depth: 1, Leaves: perHost})
			h.Nodes[0].Children = append(h.Nodes[0].Children, hi)
			for r := range perHost {
				h.Nodes[hi].Children = append(h.Nodes[hi].Children, len(h.Nodes))
				h.Nodes = append(h.Nodes, aggregate.Node{Name: fmt.Sprint("r", r), Parent: hi, Resource: k*perHost + r, Depth: 2, Leaves: 1})
			}
		}
		return h
	}
	// Partitions at p = 0 (every rank), 0.4 (every host), 0.8 (the job),
	// the gain-loss gap largest at p = 0.
	samples := func(h *aggregate.Hierarchy) []aggregate.PSample {
		var ranks, hosts []aggregate.Cell
		for i, n := range h.Nodes {
			switch n.Depth {
			case 1:
				hosts = append(hosts, aggregate.Cell{Node: i, First: 0, Last: 9})
			case 2:
				ranks = append(ranks, aggregate.Cell{Node: i, First: 0, Last: 9})
			}
		}
		return []aggregate.PSample{
			{PValue: aggregate.PValue{P: 0, NormGain: 0.9, NormLoss: 0}, Cells: ranks},
			{PValue: aggregate.PValue{P: 0.4, NormGain: 0.8, NormLoss: 0.1}, Cells: hosts},
			{PValue: aggregate.PValue{P: 0.8, NormGain: 1, NormLoss: 1}, Cells: []aggregate.Cell{{Node: 0, First: 0, Last: 9}}},
		}
	}
	big := tree(100, 10)
	assert.InDelta(t, 0.6, legibleSuggest(samples(big), big), 1e-12, "1,000 ranks: hosts")
	small := tree(2, 5)
	sm := samples(small)
	pv := []aggregate.PValue{sm[0].PValue, sm[1].PValue, sm[2].PValue}
	assert.InDelta(t, aggregate.Suggest(pv), legibleSuggest(sm, small), 1e-12, "10 ranks")
	assert.InDelta(t, 0.2, legibleSuggest(sm, small), 1e-12)
}

// TestBalanceSummary: beyond 32 ranks, the load balance is also summed up
// in words (least, median and largest wall and MPI time with their ranks,
// the slowest ranks first); the generated job slows its last rank.
func TestBalanceSummary(t *testing.T) {
	_, html := writeReport(t, genJob(t, 40, 300, nil), "balance40.html", Options{NoOcelotl: true})
	assert.Regexp(t, `40 ranks\. Wall time after MPI_Init: least [0-9.e-]+ s \(rank [0-9]+\), median [0-9.e-]+ s, largest [0-9.e-]+ s \(rank 39\)\. MPI time: least`, html)
	assert.Regexp(t, `Slowest: rank 39 \([0-9.e-]+ s\), rank [0-9]+`, html)
	_, html = writeReport(t, genJob(t, 4, 300, nil), "balance4.html", Options{NoOcelotl: true})
	assert.NotContains(t, html, "chart-summary")
}

// TestTimelineProportions: the timeline colours as much of a rank's row as
// the rank spends in MPI in the window shown, at full view and zoomed in
// (every event used to take at least a pixel, so that a compute-bound run
// looked MPI-bound).
func TestTimelineProportions(t *testing.T) {
	b := newBrowser(t)
	for _, name := range []string{"poll-irregular", "halo"} {
		in := filepath.Join("..", "testdata", "profiles", name+".mpiflow")
		out, _ := writeReport(t, in, "proportions-"+name+".html", Options{})
		b.open(t, out)
		// painted is, over the rows' pixels, the share not of their
		// background; stated the share of MPI in the window of the
		// segments drawn.
		measure := func() (painted, stated float64) {
			v := eval[[]float64](t, b, `(function () {
				var c = document.getElementById("t-canvas"), ctx = c.getContext("2d"), dpr = c.width / c.clientWidth;
				var rows = +c.dataset.rows, rowH = +c.dataset.rowh, x0 = Math.ceil(+c.dataset.labelw * dpr), x1 = Math.floor(+c.dataset.right * dpr);
				var px = ctx.getImageData(x0, 0, x1 - x0, Math.floor(rows * rowH * dpr)).data, n = 0, colored = 0;
				for (var y = 0; y < rows * rowH * dpr; y++) {
					var yr = y / dpr % rowH;
					if (yr < 1 || yr >= rowH - 1) continue; // the row's margins
					for (var x = 0; x < x1 - x0; x++) {
						var k = 4 * (y * (x1 - x0) + x), r = px[k], g = px[k + 1], b = px[k + 2];
						n++;
						if (!(r === 0xf3 && g === 0xf4 && b === 0xf6) && !(r === 0xfa && g === 0xfa && b === 0xfa)) colored++;
					}
				}
				return [colored / n, +c.dataset.share];
			})()`)
			require.Len(t, v, 2)
			return v[0], v[1]
		}
		p, s := measure()
		t.Logf("%s full view: %.1f%% painted, %.1f%% in MPI", name, 100*p, 100*s)
		require.Positive(t, s)
		assert.InDelta(t, s, p, 0.02, "%s: the picture's MPI share is the window's", name)
		eval[bool](t, b, `(function () { var c = document.getElementById("t-canvas"), r = c.getBoundingClientRect();
			for (var i = 0; i < 4; i++) c.dispatchEvent(new WheelEvent("wheel", {deltaY: -400, clientX: r.left + r.width / 3, clientY: r.top + 10, bubbles: true, cancelable: true}));
			return true; })()`)
		p, s = measure()
		t.Logf("%s zoomed in: %.1f%% painted, %.1f%% in MPI", name, 100*p, 100*s)
		assert.InDelta(t, s, p, 0.02, "%s zoomed in", name)
		b.check(t)
	}
}

// TestOneColorPerName: every legend of the page (charts, overview,
// timeline) gives a call, a group of calls or a series one color, and no
// two of them the same, also where the overview groups calls (HPCC's shape
// has more calls than the palette: its MPI_Testany phase was blue in the
// timeline and red, the color of the wait group, in the overview).
func TestOneColorPerName(t *testing.T) {
	out, _ := writeReport(t, hpccJob(t, 20_000), "colors.html", Options{})
	b := newBrowser(t)
	b.open(t, out)
	items := eval[[][]string](t, b, `Array.from(document.querySelectorAll(".legend span")).filter(function (s) {
		return s.closest("#t-stats") === null && !s.querySelector("i.dashed"); }).map(function (s) {
		return [s.closest("[id]").id, s.textContent.replace(/ \(.*\)$/, ""), getComputedStyle(s.querySelector("i")).backgroundColor]; })`)
	require.NotEmpty(t, items)
	colorOf, nameOf := map[string]string{}, map[string]string{}
	views := map[string]bool{}
	for _, it := range items {
		require.Len(t, it, 3)
		view, name, color := it[0], it[1], it[2]
		views[view] = true
		if c, ok := colorOf[name]; ok {
			assert.Equal(t, c, color, "%s in %s", name, view)
		}
		if n, ok := nameOf[color]; ok && n != name {
			t.Errorf("%s and %s both %s (%s)", n, name, color, view)
		}
		colorOf[name], nameOf[color] = color, name
	}
	assert.True(t, views["o-legend"] && views["t-legend"], "legends of the overview and the timeline: %v", views)
	grouped := eval[bool](t, b, `JSON.parse(document.getElementById("mpiflow-data").textContent).ocelotl.grouped`)
	assert.True(t, grouped, "the job has more calls than the overview's states")
	b.check(t)
}

// TestWindowFigures: under the timeline, the figures of its opening window
// are the call table's (they came from merged segments, which count short
// calls for their pixel's main call), and a zoomed window whose segments
// merge calls says that its figures are approximate.
func TestWindowFigures(t *testing.T) {
	in := hpccJob(t, 400_000)
	job, err := analysis.Load(in, analysis.Options{NoLoops: true})
	require.NoError(t, err)
	out, _ := writeReport(t, in, "window-figures.html", Options{})
	b := newBrowser(t)
	b.open(t, out)
	stats := func() (string, map[string]float64) {
		v := eval[[]string](t, b, `[document.querySelector("#t-stats b").textContent].concat(
			Array.from(document.querySelectorAll("#t-stats span")).map(function (s) { return s.textContent; }))`)
		require.NotEmpty(t, v)
		m := map[string]float64{}
		for _, s := range v[1:] {
			var name string
			var sec float64
			_, err := fmt.Sscanf(s, "%s %g s", &name, &sec)
			require.NoError(t, err, s)
			m[name] = sec
		}
		return v[0], m
	}
	title, got := stats()
	assert.Contains(t, title, "recorded times") // the generated ranks start without MPI_Init: the whole run
	assert.False(t, eval[bool](t, b, `JSON.parse(document.getElementById("mpiflow-data").textContent).timeline.exact`), "the segments merge calls")
	require.NotEmpty(t, got)
	for _, c := range job.Calls {
		if v, ok := got[c.Call]; ok {
			want := float64(c.Time.Total) / 1e9
			assert.InEpsilon(t, want, v, 0.005, "%s: %g s in the table", c.Call, want)
		}
	}
	eval[bool](t, b, `(function () { var c = document.getElementById("t-canvas"), r = c.getBoundingClientRect();
		c.dispatchEvent(new WheelEvent("wheel", {deltaY: -200, clientX: r.left + r.width / 2, clientY: r.top + 10, bubbles: true, cancelable: true}));
		return true; })()`)
	title, _ = stats()
	assert.Contains(t, title, "approximate")
	b.check(t)
}

// TestDeepZoom: at windows of a few microseconds the time axis's labels
// still differ, the window's ends can be told apart, and "show" gives the
// window back (at 5 us every label read "7.77635 s" and "show" jumped to
// the whole run).
func TestDeepZoom(t *testing.T) {
	b := newBrowser(t)
	out, _ := writeReport(t, pingPongJob(t, 2000), "deepzoom.html", Options{}) // 8.2 s
	b.open(t, out)
	for _, width := range []float64{30e-6, 5e-6, 2e-7} {
		from := 7.7763512345
		res := eval[[]string](t, b, fmt.Sprintf(`(function () {
			document.getElementById("t-from").value = %v; document.getElementById("t-to").value = %v;
			document.getElementById("t-apply").click();
			var a = [document.getElementById("t-from").value, document.getElementById("t-to").value, document.getElementById("t-canvas").dataset.ticks];
			document.getElementById("t-apply").click();
			return a.concat([document.getElementById("t-from").value, document.getElementById("t-to").value]); })()`, from, from+width))
		require.Len(t, res, 5)
		assert.NotEqual(t, res[0], res[1], "%g s window: its ends differ", width)
		assert.Equal(t, res[0:2], res[3:5], "%g s window: show gives it back", width)
		ticks := strings.Split(res[2], "|")
		require.GreaterOrEqual(t, len(ticks), 2, "%g s window: ticks %v", width, ticks)
		assert.Len(t, slices.Compact(slices.Clone(ticks)), len(ticks), "%g s window: tick labels differ: %v", width, ticks)
		lo, err1 := strconv.ParseFloat(res[0], 64)
		hi, err2 := strconv.ParseFloat(res[1], 64)
		require.NoError(t, err1)
		require.NoError(t, err2)
		assert.InDelta(t, width, hi-lo, width/100, "the window shown is the one asked for")
	}
	b.check(t)
}

// TestLongTables: a table of more rows than a page shows its first, a
// filter finds the others, and a button shows them all (the call-site
// table of HPCC at 16 ranks was 9,370 px long).
func TestLongTables(t *testing.T) {
	out, _ := writeReport(t, hpccJob(t, 20_000), "long-tables.html", Options{})
	b := newBrowser(t)
	b.open(t, out)
	rows := func() []int {
		return eval[[]int](t, b, `(function () { var t = document.getElementById("sites-table");
			return [t.tBodies[0].rows.length, Array.from(t.tBodies[0].rows).filter(r => !r.hidden).length]; })()`)
	}
	all := rows()
	require.Len(t, all, 2)
	require.Greater(t, all[0], 25, "HPCC's shape has many call sites")
	assert.Equal(t, 25, all[1], "the first rows shown")
	got := eval[[]int](t, b, `(function () { var t = document.getElementById("sites-table"), f = t.previousElementSibling.querySelector("input");
		var name = t.tBodies[0].rows[t.tBodies[0].rows.length - 1].cells[0].textContent;
		f.value = name; f.dispatchEvent(new Event("input"));
		var shown = Array.from(t.tBodies[0].rows).filter(r => !r.hidden);
		return [shown.length, shown.filter(r => r.cells[0].textContent === name).length]; })()`)
	require.Len(t, got, 2)
	assert.Positive(t, got[1], "the filter finds the last row")
	assert.Equal(t, got[0], got[1], "only matching rows")
	eval[bool](t, b, `(function () { var t = document.getElementById("sites-table"), bar = t.previousElementSibling, f = bar.querySelector("input");
		f.value = ""; f.dispatchEvent(new Event("input")); bar.querySelector("button").click(); return true; })()`)
	assert.Equal(t, []int{all[0], all[0]}, rows(), "show all")
	b.check(t)
}

// TestGroupLabels: the overview's groups read as English, each its own.
func TestGroupLabels(t *testing.T) {
	want := map[string]string{aggregate.GroupP2P: "other p2p calls", aggregate.GroupCollective: "other collective calls",
		aggregate.GroupWait: "other wait calls", aggregate.GroupIO: "other io calls", aggregate.GroupOther: "other calls"}
	for _, g := range groupNames {
		assert.Equal(t, want[g], groupLabel(g), g)
	}
	assert.Len(t, want, len(groupNames))
}
