package report

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/aggregate"
	"mpiflow/analysis"
	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

func TestTimelineDownsampling(t *testing.T) {
	p := flowgen.New(flowgen.Options{Seed: 5, Events: 100_000, Depth: 3, Sites: 10, Branchy: true})
	g := p.Graph(1)
	r := &flowgraph.Rank{Rank: 0, Start: 5000, Graph: g}
	span := r.End()
	callIdx := callIndexOf(&g)
	const bins = 500
	tb := newTimelineBuilder(span, bins, callIdx)
	tl, err := tb.rank(r, "rank 0")
	require.NoError(t, err)
	nseg := len(tl.Segs) / 4
	// Long events are kept (at most two start per bin, each at least half
	// a bin long) plus at most one merged segment per bin.
	assert.LessOrEqual(t, nseg, 3*bins+2)
	assert.Less(t, int64(nseg), g.NumEvents/10, "far fewer segments than events")

	// Every event at least half a bin long is its own segment.
	var long int
	it := g.Events()
	for it.Next() {
		if ev := it.Event(); ev.End-ev.Start >= tb.binW/2 {
			long++
		}
	}
	var kept int
	var end int64
	for i := 0; i < len(tl.Segs); i += 4 {
		if tl.Segs[i+2] >= 0 {
			kept++
			assert.Equal(t, int64(1000), tl.Segs[i+3], "a single call is busy all along")
		} else {
			assert.True(t, tl.Segs[i+3] > 0 && tl.Segs[i+3] <= 1000, "busy share in per-mille")
		}
		end += tl.Segs[i] + tl.Segs[i+1]
	}
	assert.Equal(t, long, kept)
	// The last segment ends where the rank's last event ends.
	assert.InDelta(t, float64(span/tb.tick), float64(end), 1)
}

// callIndexOf numbers the calls of g in order of first node.
func callIndexOf(g *flowgraph.Graph) map[string]int {
	idx := map[string]int{}
	for _, n := range g.Nodes {
		if _, ok := idx[n.Key.Call]; !ok {
			idx[n.Key.Call] = len(idx)
		}
	}
	return idx
}

// TestTimelineRuns: runs of a poll's repeats summed at once give the
// timeline their events give.
func TestTimelineRuns(t *testing.T) {
	_, ranks := flowgen.Run(flowgen.HPCCShape(200_000), 1, 1)
	r := ranks[0]
	_, err := r.Graph.TimedIntervals()
	require.NoError(t, err, "the generated graph is timed by intervals")
	callIdx := callIndexOf(&r.Graph)
	for _, bins := range []int{100, 2000, 40000} {
		tb := newTimelineBuilder(r.End(), bins, callIdx)
		fast, err := tb.rank(r, "rank 0")
		require.NoError(t, err)
		tb.noRuns = true
		slow, err := tb.rank(r, "rank 0")
		require.NoError(t, err)
		require.Equal(t, slow.Segs, fast.Segs, "bins %d", bins)
	}
}

// TestTimelineInOverviewWalk: a timeline row drawn in the overview's walk
// of a rank's events is the row drawn alone, and the overview's models are
// those it builds alone, whichever of the two takes a poll's run at once
// and whichever gives it event by event.
func TestTimelineInOverviewWalk(t *testing.T) {
	h, ranks := flowgen.Run(flowgen.HPCCShape(200_000), 2, 1)
	callIdx := callIndexOf(&ranks[0].Graph)
	var span int64
	for _, r := range ranks {
		span = max(span, r.End())
		for c := range callIndexOf(&r.Graph) {
			if _, ok := callIdx[c]; !ok {
				callIdx[c] = len(callIdx)
			}
		}
	}
	models := func(visit func(int, *flowgraph.Rank) aggregate.RankVisitor) []*aggregate.Model {
		src, err := aggregate.NewRankSource(&h, ranks, aggregate.FlowOptions{Visit: visit})
		require.NoError(t, err)
		start, end := src.Span()
		ms, err := aggregate.BuildWindows(src, []aggregate.Window{{Start: start, End: end, Slices: 30}, {Start: start, End: end, Slices: 120}}, 1)
		require.NoError(t, err)
		return ms
	}
	alone := models(nil)
	for _, bins := range []int{100, 2000, 40000} {
		tb := newTimelineBuilder(span, bins, callIdx)
		got := make([]timeline, len(ranks))
		visit := func(i int, r *flowgraph.Rank) aggregate.RankVisitor {
			return &timelineVisit{rankWalk: tb.walk(r, "rank"), redo: func() (timeline, error) {
				t.Errorf("bins %d: rank %d walked again", bins, i)
				return timeline{}, nil
			}, draw: func(tl timeline, err error) {
				assert.NoError(t, err)
				got[i] = tl
			}}
		}
		require.Equal(t, alone, models(visit), "bins %d", bins)
		for i, r := range ranks {
			want, err := tb.rank(r, "rank")
			require.NoError(t, err)
			assert.Equal(t, want.Segs, got[i].Segs, "bins %d rank %d", bins, i)
			assert.Equal(t, want.Calls, got[i].Calls, "bins %d rank %d", bins, i)
		}
	}
}

// TestTimelineByIntervals checks that summing whole timing intervals gives
// the timeline that walking every event gives: the same long calls, the
// same end, the same time inside MPI within 1%.
func TestTimelineByIntervals(t *testing.T) {
	p := flowgen.New(flowgen.Options{Seed: 9, Events: 200_000, Depth: 3, Sites: 10, Branchy: true})
	g := p.Graph(1)
	_, err := g.TimedIntervals()
	require.NoError(t, err, "the generated graph is timed by intervals")
	// Without known partners no message end needs an event's time, so
	// the intervals short enough are summed.
	for i := range g.Nodes {
		g.Nodes[i].Key.Partner, g.Nodes[i].Partners = -1, nil
	}
	r := &flowgraph.Rank{Rank: 0, Start: 5000, Graph: g}
	callIdx := callIndexOf(&g)
	summary := func(tl timeline) (long int, end, busy int64) {
		for i := 0; i < len(tl.Segs); i += 4 {
			if tl.Segs[i+2] >= 0 {
				long++
			}
			end += tl.Segs[i] + tl.Segs[i+1]
			busy += tl.Segs[i+1] * tl.Segs[i+3]
		}
		return long, end, busy / 1000
	}
	for _, bins := range []int{100, 2000} {
		tb := newTimelineBuilder(r.End(), bins, callIdx)
		fast, err := tb.rank(r, "rank 0")
		require.NoError(t, err)
		tb.eventsOnly = true
		exact, err := tb.rank(r, "rank 0")
		require.NoError(t, err)
		fl, fe, fb := summary(fast)
		el, ee, eb := summary(exact)
		assert.Equal(t, el, fl, "bins %d: long calls", bins)
		assert.Equal(t, ee, fe, "bins %d: end", bins)
		assert.InEpsilon(t, eb, fb, 0.01, "bins %d: time in MPI", bins)
		assert.LessOrEqual(t, len(fast.Segs), len(exact.Segs)+8, "bins %d", bins)
	}
}

// BenchmarkTimeline100 downsamples 100 ranks of 100,000 events each, the
// size the timeline must stay fast for.
func BenchmarkTimeline100(b *testing.B) {
	h, ranks := flowgen.Run(flowgen.Options{Seed: 3, Events: 100_000, Depth: 3, Sites: 12, Branchy: true}, 100, 4)
	_ = h
	callIdx := map[string]int{}
	var span int64
	for _, r := range ranks {
		span = max(span, r.End())
		for _, n := range r.Graph.Nodes {
			if _, ok := callIdx[n.Key.Call]; !ok {
				callIdx[n.Key.Call] = len(callIdx)
			}
		}
	}
	b.ResetTimer()
	var segs int
	for range b.N {
		tb := newTimelineBuilder(span, 1000, callIdx)
		segs = 0
		for i, r := range ranks {
			tl, err := tb.rank(r, fmt.Sprint("rank ", i))
			require.NoError(b, err)
			segs += len(tl.Segs) / 4
		}
	}
	b.ReportMetric(float64(segs), "segments")
}

// TestBrowserTimelineLarge draws the timeline of 100 ranks of 100,000
// events and logs how long one full redraw takes.
func TestBrowserTimelineLarge(t *testing.T) {
	b := newBrowser(t)
	in := genJob(t, 100, 100_000, nil)
	start := time.Now()
	out, html := writeReport(t, in, "timeline100.html", Options{})
	t.Logf("report of 100 ranks x 100,000 events: %v, %.1f MB", time.Since(start), float64(len(html))/1e6)
	b.open(t, out)
	res := eval[[]float64](t, b, `(function () {
		document.getElementById("t-ranks").value = "0-99";
		var t0 = performance.now();
		document.getElementById("t-apply").click();
		var t1 = performance.now();
		return [t1 - t0, +document.getElementById("t-canvas").dataset.drawn];
	})()`)
	require.Len(t, res, 2)
	assert.Greater(t, res[1], 0.0)
	t.Logf("timeline of 100 ranks: %.0f rectangles drawn in %.1f ms", res[1], res[0])
	b.shot(t, "#timeline", "timeline100.png")
	b.check(t)
}

// TestTimelineExact: when the timeline ranks' events fit the segment
// budget, every event is a segment with its own times (1 ns ticks), so
// zooming in shows the events; over the budget, short calls are merged
// and the note says how to see a window's events.
func TestTimelineExact(t *testing.T) {
	job := loadJob(t, pingPongJob(t, 50))
	var events int64
	for _, r := range job.Recorded() {
		events += r.Graph.NumEvents
	}
	for _, tc := range []struct {
		budget int
		exact  bool
	}{{int(events), true}, {int(events) - 1, false}} {
		opt := Options{NoOcelotl: true, TimelineSegments: tc.budget}
		opt.defaults()
		p, err := build(context.Background(), job, &opt)
		require.NoError(t, err)
		tl := p.Data.Timeline
		require.NotNil(t, tl)
		assert.Equal(t, tc.exact, tl.Exact)
		if !tc.exact {
			assert.Contains(t, tl.Note, "merged")
			assert.Contains(t, tl.Note, "mpiflow trace FILE --from A --to B")
			continue
		}
		assert.Equal(t, 1e-9, tl.Tick)
		assert.Empty(t, tl.Note)
		for i, r := range job.Recorded() {
			segs := tl.Ranks[i].Segs
			require.Len(t, segs, 4*int(r.Graph.NumEvents), "rank %d: a segment per event", r.Rank)
			it := r.Graph.Events()
			var end int64
			for k := 0; it.Next(); k += 4 {
				ev := it.Event()
				assert.Equal(t, r.Start+ev.Start, end+segs[k], "rank %d event %d start", r.Rank, k/4)
				assert.Equal(t, ev.End-ev.Start, segs[k+1], "rank %d event %d duration", r.Rank, k/4)
				assert.Equal(t, int64(1000), segs[k+3])
				end += segs[k] + segs[k+1]
			}
			require.NoError(t, it.Err())
		}
	}
}

// TestTimelineStart: the timeline opens at the latest end of MPI_Init,
// even when MPI_Init takes nearly the whole run (as in a short demo run),
// and at 0 when the run has no MPI_Init.
func TestTimelineStart(t *testing.T) {
	rank := func(me int, init int64, withInit bool) *flowgraph.Rank {
		b := flowgraph.NewBuilder(0, 0)
		s := b.Site(flowgraph.CallSite{Addr: 0x10, Object: "/bin/x", Offset: 0x10})
		now := int64(0)
		add := func(call string, dur int64) {
			b.Add(flowgraph.Call{Key: flowgraph.NodeKey{Call: call, Site: s, Partner: -1, Comm: -1}, Enter: now, Exit: now + dur, Partner: -1})
			now += dur + 1000
		}
		if withInit {
			add("MPI_Init", init+int64(me)*1000)
		}
		for range 3 {
			add("MPI_Barrier", 10_000)
		}
		add("MPI_Finalize", 1000)
		g := b.Graph()
		require.NoError(t, g.Validate())
		return &flowgraph.Rank{Rank: me, Graph: g, Complete: true}
	}
	for _, tc := range []struct {
		name     string
		init     int64 // ns
		withInit bool
		start    float64 // s
	}{
		{"5 ms init", 5_000_000, true, 0.005001},
		{"100 ms init, 99.9% of the run", 100_000_000, true, 0.100001},
		{"no MPI_Init", 0, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := flowgraph.Header{NumRanks: 2, JobID: "x", Command: []string{"x"}, Hosts: []string{"h", "h"}}
			path := filepath.Join(t.TempDir(), "x.mpiflow")
			require.NoError(t, flowgraph.WriteFile(path, h, []*flowgraph.Rank{rank(0, tc.init, tc.withInit), rank(1, tc.init, tc.withInit)}))
			opt := Options{NoOcelotl: true}
			opt.defaults()
			p, err := build(context.Background(), loadJob(t, path), &opt)
			require.NoError(t, err)
			require.NotNil(t, p.Data.Timeline)
			assert.InDelta(t, tc.start, p.Data.Timeline.Start, 1e-12)
		})
	}
}

// TestTimelineRanks: a timeline that cannot show every rank says which
// it shows (analysis.SampleRanks picks them).
func TestTimelineRanks(t *testing.T) {
	stats := make([]flowgraph.RankStat, 300)
	got, note := timelineRanks(stats, 40)
	assert.Len(t, got, 40)
	assert.Contains(t, note, "the timeline shows 40 of 300 ranks: the 8 ranks of most and the 8 of least MPI time, the rank of the longest run, and ranks spread")
	_, note = timelineRanks(stats[:3], 1)
	assert.Contains(t, note, "shows 1 of 3 ranks: the rank of the longest run, and ranks spread")
	for _, n := range []int{300, 0} {
		_, note = timelineRanks(stats, n)
		assert.Empty(t, note, "%d rows", n)
	}
}

// TestBrowserTimelineRanks: the timeline of a job with more ranks than it
// shows holds the chosen ranks, opens with them, and says so when asked
// for a rank it does not hold.
func TestBrowserTimelineRanks(t *testing.T) {
	in := genJob(t, 12, 3000, nil)
	job, err := analysis.Load(in, analysis.Options{})
	require.NoError(t, err)
	want, _ := timelineRanks(job.Summary.Ranks, 5)
	require.Len(t, want, 5)
	out, html := writeReport(t, in, "timeline-ranks.html", Options{TimelineRanks: 5})
	assert.Contains(t, html, "the timeline shows 5 of 12 ranks")
	b := newBrowser(t)
	b.open(t, out)
	got := eval[[]int](t, b, `(function () {
		var D = JSON.parse(document.getElementById("mpiflow-data").textContent);
		return D.timeline.ranks.map(function (r) { return D.ranks[r.i].rank; });
	})()`)
	var wantRanks []int
	for _, i := range want {
		wantRanks = append(wantRanks, job.Ranks[i].Rank.Rank)
	}
	assert.Equal(t, wantRanks, got)
	var absent int
	for i := range 12 {
		if !slices.Contains(want, i) {
			absent = job.Ranks[i].Rank.Rank
			break
		}
	}
	res := eval[[]string](t, b, fmt.Sprintf(`(function () {
		var v = document.getElementById("t-ranks").value;
		document.getElementById("t-ranks").value = "%d";
		document.getElementById("t-apply").click();
		return [v, document.getElementById("t-info").textContent];
	})()`, absent))
	require.Len(t, res, 2)
	assert.Equal(t, analysis.RankRanges(wantRanks), res[0], "the timeline opens with its ranks")
	assert.Contains(t, res[1], "it holds 5 of the 12 ranks")
	b.check(t)
}
