package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

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
	rank  int
	// ends holds the message ends of this rank: per direction and
	// partner, the times (ticks) of the first maxMsgEnds sends (start)
	// or receives (end) in order; ambiguous marks the partners some of
	// whose messages went through a call site with several partners, so
	// that the k-th send cannot be told.
	ends      [2]map[int][]int64
	ambiguous [2]map[int]bool
}

// Message directions of point-to-point calls.
const (
	dirSend = iota
	dirRecv
)

// maxMsgs bounds the messages embedded in the timeline; maxMsgEnds the
// ends recorded per rank, direction and partner.
const (
	maxMsgs    = 50_000
	maxMsgEnds = 20_000
)

// completes tells whether call is a blocking wait (MPI_Wait, _Waitall,
// _Waitany, _Waitsome, large-count forms alike): where a nonblocking
// receive posted before it completes at the latest. (A test may complete
// nothing, so tests are not taken.)
func completes(call string) bool {
	switch strings.TrimSuffix(call, "_c") {
	case "MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome":
		return true
	}
	return false
}

// p2pDir is the direction of a point-to-point call that names one
// partner, -1 for other calls (MPI_Sendrecv has two partners).
func p2pDir(call string) int {
	switch call {
	case "MPI_Send", "MPI_Isend", "MPI_Ssend", "MPI_Issend", "MPI_Bsend", "MPI_Ibsend", "MPI_Rsend", "MPI_Irsend":
		return dirSend
	case "MPI_Recv", "MPI_Irecv", "MPI_Mrecv", "MPI_Imrecv":
		return dirRecv
	}
	return -1
}

// nodePartner is the partner of every call of node n: the partner in the
// node key, or the only one recorded; -1 if there are several.
func nodePartner(n *flowgraph.Node) int {
	if n.Key.Partner >= 0 {
		return n.Key.Partner
	}
	if len(n.Partners) == 1 && n.OtherPartners == 0 {
		return n.Partners[0].Rank
	}
	return -1
}

// pairMessages joins the k-th send from rank a to rank b with the k-th
// receive of b from a (MPI's order for one communicator and tag) for the
// ranks of the timeline (thread 0) whose ends are all known, and keeps the
// first maxMsgs by send time; pairs whose receive ends before the send
// starts are impossible, left out and counted in the note.
func (d *timelineData) pairMessages() {
	row := map[int]int{}
	for i := range d.Ranks {
		if _, ok := row[d.Ranks[i].rank]; !ok {
			row[d.Ranks[i].rank] = i
		}
	}
	type msg struct{ src, send, dst, recv int64 }
	var msgs []msg
	skipped, backwards := false, 0
	for a, ra := range row {
		tl := &d.Ranks[ra]
		for b, sends := range tl.ends[dirSend] {
			rb, ok := row[b]
			if !ok {
				continue
			}
			recvs := d.Ranks[rb].ends[dirRecv][a]
			if tl.ambiguous[dirSend][b] || d.Ranks[rb].ambiguous[dirRecv][a] || len(recvs) != len(sends) {
				skipped = true
				continue
			}
			for k := range sends {
				if recvs[k] < sends[k] {
					// The k-th receive ended before the k-th send
					// started: tags or receives of another kind
					// (MPI_Sendrecv) order them otherwise.
					backwards++
					continue
				}
				msgs = append(msgs, msg{int64(ra), sends[k], int64(rb), recvs[k]})
			}
		}
	}
	for i := range d.Ranks {
		d.Ranks[i].ends = [2]map[int][]int64{}
		if len(d.Ranks[i].ambiguous[dirSend])+len(d.Ranks[i].ambiguous[dirRecv]) > 0 {
			skipped = true
		}
	}
	slices.SortFunc(msgs, func(x, y msg) int { return cmp.Or(cmp.Compare(x.send, y.send), cmp.Compare(x.src, y.src)) })
	if len(msgs) > maxMsgs {
		d.MsgNote = fmt.Sprintf("the timeline draws the first %d of %d messages", maxMsgs, len(msgs))
		msgs = msgs[:maxMsgs]
	}
	if skipped {
		d.MsgNote = strings.TrimPrefix(d.MsgNote+"; messages through call sites with several partners are not drawn (record with MPIFLOW_KEY=call,site,partner to draw them)", "; ")
	}
	if backwards > 0 {
		d.MsgNote = strings.TrimPrefix(fmt.Sprintf("%s; %d messages are not drawn whose k-th receive ended before the k-th send started (messages are paired in order, without their tags, and receives of MPI_Sendrecv are not counted)", d.MsgNote, backwards), "; ")
	}
	d.Msgs = make([]int64, 0, 4*len(msgs))
	for _, m := range msgs {
		d.Msgs = append(d.Msgs, m.src, m.send, m.dst, m.recv)
	}
}

// rankSpan is the end of a rank's last event in ns since the job start.
func rankSpan(r *flowgraph.Rank) int64 {
	g := &r.Graph
	if k := len(g.Anchors); k > 0 {
		return r.Start + g.Anchors[k-1].Time
	}
	var d int64
	for i := range g.Nodes {
		d += g.Nodes[i].Time.Total
	}
	for i := range g.Edges {
		d += g.Edges[i].Time.Total
	}
	return r.Start + d
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

func (tb *timelineBuilder) rank(r *flowgraph.Rank, label string) (timeline, error) {
	g := &r.Graph
	callOf := make([]int, len(g.Nodes))
	dirOf := make([]int, len(g.Nodes))
	partnerOf := make([]int, len(g.Nodes))
	nonblocking := make([]bool, len(g.Nodes)) // a receive that is only posted
	waits := make([]bool, len(g.Nodes))
	tl := timeline{Label: label, rank: r.Rank, Calls: make([]int64, tb.ncalls)}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		callOf[i] = tb.callIdx[n.Key.Call]
		if c := callOf[i]; c < len(tl.Calls) {
			tl.Calls[c] += n.Time.Total
		}
		dirOf[i], partnerOf[i] = p2pDir(n.Key.Call), nodePartner(n)
		nonblocking[i] = n.Key.Call == "MPI_Irecv" || n.Key.Call == "MPI_Imrecv"
		waits[i] = completes(n.Key.Call)
		if r.Thread != 0 {
			dirOf[i] = -1 // messages are drawn between threads 0
		}
		if d := dirOf[i]; d >= 0 && partnerOf[i] < 0 {
			for _, pc := range n.Partners {
				if tl.ambiguous[d] == nil {
					tl.ambiguous[d] = map[int]bool{}
				}
				tl.ambiguous[d][pc.Rank] = true
			}
			dirOf[i] = -1
		}
	}
	var lastEnd int64 // in ticks
	emit := func(start, end int64, call int, busy int64) {
		s, e := start/tb.tick, end/tb.tick
		if s < lastEnd {
			s = lastEnd
		}
		if e < s {
			e = s
		}
		tl.Segs = append(tl.Segs, s-lastEnd, e-s, int64(call), busy)
		lastEnd = e
	}
	perCall := make([]int64, tb.ncalls)
	var touched []int
	curBin := int64(-1)
	var mStart, mEnd int64
	flush := func() {
		if curBin < 0 {
			return
		}
		best := touched[0]
		var inMPI int64
		for _, c := range touched {
			inMPI += perCall[c]
			if perCall[c] > perCall[best] {
				best = c
			}
		}
		for _, c := range touched {
			perCall[c] = 0
		}
		touched = touched[:0]
		busy := int64(1000)
		if mEnd > mStart {
			busy = min(1000, 1000*inMPI/(mEnd-mStart))
		}
		emit(mStart, mEnd, -(best + 1), busy)
		curBin = -1
	}
	// posted are the ends of nonblocking receives (partner, index) whose
	// message is taken to arrive at the end of the next blocking wait.
	type post struct{ partner, k int }
	var posted []post
	event := func(ev flowgraph.Event) {
		start, end := r.Start+ev.Start, r.Start+ev.End
		c := callOf[ev.Node]
		if waits[ev.Node] {
			for _, p := range posted {
				tl.ends[dirRecv][p.partner][p.k] = end / tb.tick
			}
			posted = posted[:0]
		}
		if d := dirOf[ev.Node]; d >= 0 {
			if tl.ends[d] == nil {
				tl.ends[d] = map[int][]int64{}
			}
			p := partnerOf[ev.Node]
			if e := tl.ends[d][p]; len(e) < maxMsgEnds {
				at := start
				if d == dirRecv {
					at = end
				}
				if nonblocking[ev.Node] {
					posted = append(posted, post{p, len(e)})
				}
				tl.ends[d][p] = append(e, at/tb.tick)
			}
		}
		if end-start >= tb.binW/2 {
			flush()
			emit(start, end, c, 1000)
			return
		}
		if b := start / tb.binW; b != curBin {
			flush()
			curBin = b
			mStart = start
		}
		mEnd = end
		if perCall[c] == 0 {
			touched = append(touched, c)
		}
		perCall[c] += max(end-start, 1)
	}
	// run adds a run of repeats of a call that event would merge into one
	// bin's segment, all of it, at once.
	run := func(rn flowgraph.Run) bool {
		if tb.noRuns {
			return false
		}
		start, end := r.Start+rn.Start, r.Start+rn.End
		b := start / tb.binW
		if waits[rn.Node] || dirOf[rn.Node] >= 0 || rn.Longest >= tb.binW/2 || max(end-1, start)/tb.binW != b {
			return false
		}
		if b != curBin {
			flush()
			curBin = b
			mStart = start
		}
		mEnd = end
		c := callOf[rn.Node]
		if perCall[c] == 0 {
			touched = append(touched, c)
		}
		perCall[c] += rn.Busy + rn.Zero
		return true
	}
	// needEnds tells whether an interval holds a message end still to be
	// recorded, or a wait that completes posted receives, which needs its
	// events' times.
	needEnds := func(nodes []flowgraph.IntervalSum) bool {
		for _, n := range nodes {
			if d := dirOf[n.Index]; d >= 0 && len(tl.ends[d][partnerOf[n.Index]]) < maxMsgEnds || waits[n.Index] && len(posted) > 0 {
				return true
			}
		}
		return false
	}
	iv, err := g.TimedIntervals()
	if err != nil || tb.eventsOnly {
		// Other timings: every event.
		it := g.Events()
		for it.Next() {
			event(it.Event())
		}
		if err := it.Err(); err != nil {
			return tl, fmt.Errorf("timeline of %s: %w", label, err)
		}
		flush()
		return tl, nil
	}
	// An interval shorter than half a bin and inside one bin holds only
	// events that would be merged into that bin's segment: its sums are
	// added at once, so the cost follows the intervals, not the events.
	for iv.Next() {
		start, stop := r.Start+iv.Start, r.Start+iv.Stop
		if stop-start >= tb.binW/2 || start/tb.binW != max(stop-1, start)/tb.binW || needEnds(iv.Nodes) {
			if err := iv.EventsRuns(event, run); err != nil {
				return tl, fmt.Errorf("timeline of %s: %w", label, err)
			}
			continue
		}
		if b := start / tb.binW; b != curBin {
			flush()
			curBin = b
			mStart = start
		}
		mEnd = stop
		for _, n := range iv.Nodes {
			c := callOf[n.Index]
			if perCall[c] == 0 {
				touched = append(touched, c)
			}
			perCall[c] += max(n.Sum, n.Count)
		}
	}
	if err := iv.Err(); err != nil {
		return tl, fmt.Errorf("timeline of %s: %w", label, err)
	}
	flush()
	return tl, nil
}

// outlierRanks is how many ranks of most and of least MPI time the
// timeline shows when it cannot show them all.
const outlierRanks = 8

// timelineRanks returns the indices of the ranks (of stats) the timeline
// shows, ascending, at most n, and a note that says which they are when
// they are not all: the ranks of most and of least MPI time and of the
// longest run, and ranks spread evenly over the rest, so that a job of
// thousands of ranks shows its outliers and its breadth, not only its
// first ranks.
func timelineRanks(stats []flowgraph.RankStat, n int) ([]int, string) {
	all := make([]int, len(stats))
	for i := range all {
		all[i] = i
	}
	if len(stats) <= n {
		return all, ""
	}
	if n <= 0 {
		return nil, ""
	}
	chosen := map[int]bool{}
	byMPI := slices.Clone(all)
	slices.SortStableFunc(byMPI, func(a, b int) int { return cmp.Compare(stats[b].MPI, stats[a].MPI) })
	k := min(outlierRanks, n/4)
	for _, i := range byMPI[:k] {
		chosen[i] = true
	}
	for _, i := range byMPI[len(byMPI)-k:] {
		chosen[i] = true
	}
	if n > 2*k {
		slowest := slices.MaxFunc(all, func(a, b int) int { return cmp.Compare(stats[a].Wall, stats[b].Wall) })
		chosen[slowest] = true
	}
	// The rest evenly over the ranks not chosen yet.
	var rest []int
	for _, i := range all {
		if !chosen[i] {
			rest = append(rest, i)
		}
	}
	left := n - len(chosen)
	for j := range left {
		chosen[rest[j*len(rest)/left]] = true
	}
	out := make([]int, 0, n)
	for _, i := range all {
		if chosen[i] {
			out = append(out, i)
		}
	}
	which := "the rank of the longest run"
	if k > 0 {
		which = fmt.Sprintf("the %d ranks of most and the %d of least MPI time, the rank of the longest run", k, k)
	}
	return out, fmt.Sprintf("the timeline shows %d of %d ranks: %s, and ranks spread evenly over the others (see \"Ranks\")", len(out), len(stats), which)
}
