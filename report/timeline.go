package report

import (
	"fmt"
	"strings"

	"mpiflow/analysis"
	"mpiflow/flowgraph"
)

// timelineData is the Gantt view's data: per rank, segments in ticks of
// Tick seconds, each (gap since the previous segment's end, duration, call,
// busy) where call is the index into the report's call list, or -(index+1)
// for a merged segment standing for many short calls (the call with the
// most time in it gives the color), and busy is the per-mille of the
// segment spent inside MPI (1000 for a single call).
type timelineData struct {
	Span float64 `json:"span"` // s, end of the last event
	// Start is where the page opens the timeline: the latest end of
	// MPI_Init (s), as stats and the overview start, however short the
	// rest of the run (its events are drawn exactly when they fit); 0
	// without MPI_Init or when nothing follows it.
	Start float64 `json:"start"`
	Tick  float64 `json:"tick"`
	Bins  int     `json:"bins"`
	// Exact is true when every event is its own segment at 1 ns ticks
	// (the ranks' events fit the segment budget), so that zooming in
	// shows the events; otherwise the calls shorter than half a bin
	// are merged per bin.
	Exact bool       `json:"exact"`
	Ranks []timeline `json:"ranks"`
	Note  string     `json:"note,omitempty"`
	// Msgs are the point-to-point messages between the timeline's ranks
	// whose partners are known exactly, flat (sender row, send start,
	// receiver row, receive end) in ticks, by send start; MsgNote says
	// why some are missing.
	Msgs    []int64 `json:"msgs"`
	MsgNote string  `json:"msgnote,omitempty"`
}

type timeline struct {
	Label string `json:"label"`
	// Index is the rank's index in the report's ranks (Data.Ranks).
	Index int     `json:"i"`
	Segs  []int64 `json:"segs"`
	// Calls is the recorded time in each call of the report's list over
	// the whole run (ns), so that the window figures of the whole run and
	// of the run after MPI_Init are exact.
	Calls []int64 `json:"calls"`
	// msgs holds the message ends of this rank (in ticks) until they are
	// paired.
	msgs *analysis.MessageEnds
}

// maxMsgs bounds the messages embedded in the timeline.
const maxMsgs = 50_000

// pairMessages draws the messages between the ranks of the timeline
// (analysis.PairMessages).
func (d *timelineData) pairMessages() {
	list := make([]*analysis.MessageEnds, len(d.Ranks))
	for i := range d.Ranks {
		list[i] = d.Ranks[i].msgs
		d.Ranks[i].msgs = nil
	}
	d.drawMessages(analysis.PairMessages(list))
}

// drawMessages embeds the first maxMsgs of pairs and says in MsgNote
// which are not drawn.
func (d *timelineData) drawMessages(pairs analysis.MessagePairs) {
	msgs := pairs.Msgs
	if len(msgs) > maxMsgs {
		d.MsgNote = fmt.Sprintf("the timeline draws the first %d of %d messages", maxMsgs, len(msgs))
		msgs = msgs[:maxMsgs]
	}
	if pairs.Ambiguous {
		d.MsgNote = strings.TrimPrefix(d.MsgNote+"; messages through call sites with several partners are not drawn (record with MPIFLOW_KEY=call,site,partner to draw them)", "; ")
	}
	if pairs.Backwards > 0 {
		d.MsgNote = strings.TrimPrefix(fmt.Sprintf("%s; %d messages are not drawn whose k-th receive ended before the k-th send started (messages are paired in order, without their tags, and receives of MPI_Sendrecv are not counted)", d.MsgNote, pairs.Backwards), "; ")
	}
	d.Msgs = make([]int64, 0, 4*len(msgs))
	for _, m := range msgs {
		d.Msgs = append(d.Msgs, m.Src, m.Send, m.Dst, m.Recv)
	}
}

// timelineBuilder downsamples the events of ranks into a bounded number
// of segments: events at least half a bin long are kept, shorter ones are
// merged per bin.
type timelineBuilder struct {
	span, binW, tick int64
	callIdx          map[string]int
	ncalls           int
	// eventsOnly walks every event even where whole timing intervals
	// could be summed (to compare both ways).
	eventsOnly bool
	// noRuns passes runs of repeats as events (for tests).
	noRuns bool
}

// newTimelineBuilder cuts span into bins, or, with bins = 0, keeps every
// event exactly (1 ns ticks, nothing merged).
func newTimelineBuilder(span int64, bins int, callIdx map[string]int) *timelineBuilder {
	span = max(span, 1)
	tb := &timelineBuilder{span: span, binW: 1, tick: 1, callIdx: callIdx, ncalls: len(callIdx)}
	if bins > 0 {
		tb.binW, tb.tick = max(span/int64(bins), 1), max(span/1_000_000, 1)
	}
	return tb
}

// rank is the timeline row of rank r, labeled label.
func (tb *timelineBuilder) rank(r *flowgraph.Rank, label string) (timeline, error) {
	g := &r.Graph
	w := tb.walk(r, label)
	iv, err := g.TimedIntervals()
	if err != nil || tb.eventsOnly {
		// Other timings: every event.
		it := g.Events()
		for it.Next() {
			w.Event(it.Event())
		}
		if err := it.Err(); err != nil {
			return *w.tl, fmt.Errorf("timeline of %s: %w", label, err)
		}
	} else if err := iv.Walk(w); err != nil {
		return *w.tl, fmt.Errorf("timeline of %s: %w", label, err)
	}
	w.flush()
	return *w.tl, nil
}

// walk starts the timeline row of rank r, labeled label: its calls' times
// over the whole run, and nothing drawn yet.
func (tb *timelineBuilder) walk(r *flowgraph.Rank, label string) *rankWalk {
	g := &r.Graph
	tl := &timeline{Label: label, Calls: make([]int64, tb.ncalls), msgs: analysis.NewMessageEnds(r)}
	w := &rankWalk{tb: tb, tl: tl, start: r.Start, callOf: make([]int, len(g.Nodes)), perCall: make([]int64, tb.ncalls), curBin: -1}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		w.callOf[i] = tb.callIdx[n.Key.Call]
		if c := w.callOf[i]; c < len(tl.Calls) {
			tl.Calls[c] += n.Time.Total
		}
	}
	return w
}

// Interval implements flowgraph.IntervalVisitor. An interval shorter than
// half a bin and inside one bin holds only events that would be merged
// into that bin's segment: its sums are added at once, so that the cost
// follows the intervals, not the events.
func (w *rankWalk) Interval(iv *flowgraph.IntervalIter) bool {
	start, stop := w.start+iv.Start, w.start+iv.Stop
	if stop-start >= w.tb.binW/2 || start/w.tb.binW != max(stop-1, start)/w.tb.binW || w.needEnds(iv.Nodes) {
		return true
	}
	w.open(start, stop)
	for _, n := range iv.Nodes {
		w.add(w.callOf[n.Index], max(n.Sum, n.Count))
	}
	return false
}

// Done implements flowgraph.IntervalVisitor.
func (w *rankWalk) Done(*flowgraph.IntervalIter) {}

// rankWalk turns the events of a rank into the segments of its timeline
// row: events at least half a bin long are emitted as they are, shorter
// ones are summed per call in the current bin (curBin, -1 for none, from
// mStart to mEnd) until it is flushed as one merged segment.
type rankWalk struct {
	tb      *timelineBuilder
	tl      *timeline
	start   int64 // the rank's start on the job's time axis
	callOf  []int // per node: index into the report's calls
	lastEnd int64 // in ticks
	perCall []int64
	touched []int
	curBin  int64
	mStart  int64
	mEnd    int64
}

// emit appends the segment from start to end (ns) of call with busy
// per-mille in MPI.
func (w *rankWalk) emit(start, end int64, call int, busy int64) {
	s, e := start/w.tb.tick, end/w.tb.tick
	if s < w.lastEnd {
		s = w.lastEnd
	}
	if e < s {
		e = s
	}
	w.tl.Segs = append(w.tl.Segs, s-w.lastEnd, e-s, int64(call), busy)
	w.lastEnd = e
}

// flush emits the current bin's merged segment, colored by its call of
// most time.
func (w *rankWalk) flush() {
	if w.curBin < 0 {
		return
	}
	best := w.touched[0]
	var inMPI int64
	for _, c := range w.touched {
		inMPI += w.perCall[c]
		if w.perCall[c] > w.perCall[best] {
			best = c
		}
	}
	for _, c := range w.touched {
		w.perCall[c] = 0
	}
	w.touched = w.touched[:0]
	busy := int64(1000)
	if w.mEnd > w.mStart {
		busy = min(1000, 1000*inMPI/(w.mEnd-w.mStart))
	}
	w.emit(w.mStart, w.mEnd, -(best + 1), busy)
	w.curBin = -1
}

// open makes the bin of start current (flushing another) and extends it
// to end.
func (w *rankWalk) open(start, end int64) {
	if b := start / w.tb.binW; b != w.curBin {
		w.flush()
		w.curBin = b
		w.mStart = start
	}
	w.mEnd = end
}

// add counts d ns of call c in the current bin.
func (w *rankWalk) add(c int, d int64) {
	if w.perCall[c] == 0 {
		w.touched = append(w.touched, c)
	}
	w.perCall[c] += d
}

// Event adds one event (flowgraph.IntervalVisitor).
func (w *rankWalk) Event(ev flowgraph.Event) {
	start, end := w.start+ev.Start, w.start+ev.End
	w.tl.msgs.Event(ev.Node, start/w.tb.tick, end/w.tb.tick)
	c := w.callOf[ev.Node]
	if end-start >= w.tb.binW/2 {
		w.flush()
		w.emit(start, end, c, 1000)
		return
	}
	w.open(start, end)
	w.add(c, max(end-start, 1))
}

// TakesRun tells whether Event would merge every event of the run of
// repeats rn into one bin's segment (flowgraph.IntervalVisitor).
func (w *rankWalk) TakesRun(rn flowgraph.Run) bool {
	start, end := w.start+rn.Start, w.start+rn.End
	return !w.tb.noRuns && !w.tl.msgs.Takes(rn.Node) && rn.Longest < w.tb.binW/2 && max(end-1, start)/w.tb.binW == start/w.tb.binW
}

// Run adds the run of repeats rn, which TakesRun took, at once.
func (w *rankWalk) Run(rn flowgraph.Run) {
	w.open(w.start+rn.Start, w.start+rn.End)
	w.add(w.callOf[rn.Node], rn.Busy+rn.Zero)
}

// needEnds tells whether an interval holds a message end still to be
// recorded, or a wait that completes posted receives, which needs its
// events' times.
func (w *rankWalk) needEnds(nodes []flowgraph.IntervalSum) bool {
	for _, n := range nodes {
		if w.tl.msgs.Pending(n.Index) {
			return true
		}
	}
	return false
}

// timelineRanks returns the indices of the ranks (of stats) the timeline
// shows, ascending, at most n (analysis.SampleRanks), and a note that says
// which they are when they are not all.
func timelineRanks(stats []flowgraph.RankStat, n int) ([]int, string) {
	out, k := analysis.SampleRanks(stats, n)
	if len(out) == len(stats) || len(out) == 0 {
		return out, ""
	}
	which := "the rank of the longest run"
	if k > 0 {
		which = fmt.Sprintf("the %d ranks of most and the %d of least MPI time, the rank of the longest run", k, k)
	}
	return out, fmt.Sprintf("the timeline shows %d of %d ranks: %s, and ranks spread evenly over the others (see \"Ranks\")", len(out), len(stats), which)
}
