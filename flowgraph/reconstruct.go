package flowgraph

import (
	"fmt"
	"math"
	"slices"
)

// Event is one reconstructed MPI call.
type Event struct {
	Index  int64 // position in the rank's event sequence
	Node   int   // index into Graph.Nodes
	InEdge int   // edge from the previous event; -1 for event 0
	Start  int64 // ns since the rank's first event
	End    int64
}

// EventIter yields the events of a graph in order. Its memory is bounded by
// the graph and the events of one timing interval (or between two time
// anchors), never by the number of events.
//
// Timing: with a Timing (format v2 and later), inside an interval each event's
// duration is its node's sum in the interval split evenly over the node's
// events there, and each gap its edge's sum split over the edge's
// traversals (integer parts, the first ones taking the remainder, so the
// sums are kept); remainders of capped intervals are spread like
// anchor intervals. Without one (version 1 files), between two
// consecutive anchors the elapsed time and the time spent inside MPI are
// known exactly: the MPI time is spread over the interval's events in
// proportion to their node's mean duration and the rest over its
// transitions in proportion to their edge's mean time, so per-interval
// totals are exact and the shape inside follows the averages.
type EventIter struct {
	g *Graph
	// the out-edges of node n are slots[outs[n]:outs[n+1]], in edge
	// order, each walked by the cursor of the same index
	outs     []int
	slots    []outSlot
	cur      []seqCursor
	nodeMean []float64 // mean duration per node
	edgeMean []float64 // mean duration per edge

	// structural walk
	next     int64 // index of the next event to walk
	node     int
	inEdge   int
	walkDone bool

	// timed output
	buf      []Event // the current interval's events, timed
	bufPos   int     // of the event after the current one
	anchor   int     // index of the anchor at or before the next interval; -1 without anchors
	tnext    int64   // start time of the next event to time
	pending  *Event  // the walked event that follows buf, or nil
	follower Event   // storage for pending
	err      error

	// with a Timing: the intervals, and per node and edge what the
	// current interval holds of it
	tim        *TimingIter
	nacc, eacc []intervalAcc
	// the nodes and edges of the current interval in order of first
	// occurrence
	seenNodes, seenEdges []int
}

// outSlot is an edge out of a node and its next sequence number.
type outSlot struct {
	next      int64 // the cursor's Val
	edge, dst int
}

// intervalAcc is what the current timing interval holds of a node (an
// edge): its events (traversals), its sum if it has one, and the events
// timed so far.
type intervalAcc struct {
	cnt, sum, seen int64
	q, r           int64 // sum / cnt and sum % cnt, set by the first share
	has            bool
}

// Events returns an iterator over the graph's events. The graph must be
// valid (see Validate); files read with Open are.
func (g *Graph) Events() *EventIter {
	if g.lazy != nil {
		for i := range g.Edges {
			g.EdgeSeq(i)
		}
		g.lazy = nil
	}
	it := &EventIter{g: g, node: g.Initial, inEdge: -1}
	if g.NumEvents == 0 {
		it.walkDone = true
		return it
	}
	it.outs = make([]int, len(g.Nodes)+1)
	it.slots = make([]outSlot, len(g.Edges))
	it.cur = make([]seqCursor, len(g.Edges))
	it.nodeMean = make([]float64, len(g.Nodes))
	it.edgeMean = make([]float64, len(g.Edges))
	for i := range g.Nodes {
		it.nodeMean[i] = g.Nodes[i].MeanTime()
	}
	for i := range g.Edges {
		it.outs[g.Edges[i].Src+1]++
	}
	for n := range g.Nodes {
		it.outs[n+1] += it.outs[n]
	}
	at := slices.Clone(it.outs[:len(g.Nodes)]) // the next free slot per node
	for i := range g.Edges {
		e := &g.Edges[i]
		it.edgeMean[i] = e.MeanTime()
		s := at[e.Src]
		at[e.Src]++
		it.cur[s].Init(&e.Seq)
		it.slots[s] = outSlot{next: it.cur[s].Val(), edge: i, dst: e.Dst}
	}
	if g.Timing.Present() {
		it.tim = g.Timing.Intervals()
		it.nacc, it.eacc = make([]intervalAcc, len(g.Nodes)), make([]intervalAcc, len(g.Edges))
	} else if len(g.Anchors) == 0 || g.Anchors[0].Event != 0 {
		// Without anchors there is no real time: use the means alone.
		it.anchor = -1
	}
	return it
}

// Next advances to the next event and reports whether there is one.
func (it *EventIter) Next() bool {
	if it.bufPos >= len(it.buf) && !it.fill() {
		return false
	}
	it.bufPos++
	return true
}

// Event returns the current event, the zero Event when there is none.
func (it *EventIter) Event() Event {
	if it.bufPos == 0 {
		return Event{}
	}
	return it.buf[it.bufPos-1]
}

// Err returns the first error met, after Next has returned false.
func (it *EventIter) Err() error { return it.err }

// chunkEvents bounds the events timed at once where no anchor closes the
// interval.
const chunkEvents = 1 << 16

// fill walks the next timing or anchor interval (or chunk) into buf and
// times it.
func (it *EventIter) fill() bool {
	if it.err != nil {
		return false
	}
	it.buf = it.buf[:0]
	it.bufPos = 0
	g := it.g
	first := it.next
	if it.pending != nil {
		first = it.pending.Index
		it.buf = append(it.buf, it.follower)
		it.pending = nil
	}
	if it.tim != nil {
		if it.tim.Next() {
			iv := it.tim.Interval()
			end := iv.Start + min(iv.Events, g.NumEvents-iv.Start)
			if len(it.buf) > 0 { // the last walk's follower opens the interval
				it.countNode(it.buf[0].Node)
			}
			follower, ok := it.walk(end, true)
			if ok {
				if err := it.timeInterval(iv, follower); err != nil {
					it.err = err
					return false
				}
			}
			return ok
		}
		// The Timing ends early (a recorder stopped mid-event): the
		// events after it are timed by the means.
		it.err = it.tim.Err()
		it.tim = nil
		it.anchor = -1
	}
	var a, b Anchor
	haveB := false
	// Skip anchors at or before first; the interval starts at the last one.
	for it.anchor >= 0 && it.anchor+1 < len(g.Anchors) && g.Anchors[it.anchor+1].Event <= first {
		it.anchor++
	}
	if it.anchor >= 0 && it.anchor+1 < len(g.Anchors) && g.Anchors[it.anchor].Event == first {
		a, b = g.Anchors[it.anchor], g.Anchors[it.anchor+1]
		haveB = true
		it.tnext = a.Time
	}
	end := min(g.NumEvents, first+chunkEvents)
	if haveB {
		end = b.Event
	}
	follower, ok := it.walk(end, false)
	if ok {
		it.time(a, b, haveB, follower)
	}
	return ok
}

// walk walks the events up to end (exclusive) into buf and, to time the
// last transition, the event at end, which it returns (nil at the end).
// With count it also counts the interval's events per node in nacc (but
// for the event already in buf, the last walk's follower) and its
// traversals per edge in eacc.
func (it *EventIter) walk(end int64, count bool) (*Event, bool) {
	slots, outs, cur := it.slots, it.outs, it.cur
	buf := it.buf
	i, n, in := it.next, it.node, it.inEdge
	for !it.walkDone && i <= end {
		// Field by field: a literal is built on the stack and copied,
		// and the copy's wide loads stall on the narrow stores.
		buf = append(buf, Event{})
		ev := &buf[len(buf)-1]
		ev.Index, ev.Node, ev.InEdge = i, n, in
		if count {
			if i < end {
				it.countNode(n)
			}
			if in >= 0 {
				it.countEdge(in)
			}
		}
		if i++; i >= it.g.NumEvents {
			it.walkDone = true
			break
		}
		// The edge taken next is the out-edge whose next sequence number
		// is i; it is also the smallest among the node's out-edges.
		s, last := outs[n], outs[n+1]
		for s < last && slots[s].next != i {
			s++
		}
		if s == last {
			it.err = fmt.Errorf("sequence broken: no edge out of node %d holds event %d", n, i)
			it.walkDone = true
			break
		}
		sl, c := &slots[s], &cur[s]
		c.Next()
		sl.next = c.Val()
		n, in = sl.dst, sl.edge
	}
	it.next, it.node, it.inEdge = i, n, in
	it.buf = buf
	if it.err != nil || len(buf) == 0 {
		return nil, false
	}
	if last := &buf[len(buf)-1]; last.Index == end {
		it.follower = *last
		it.buf = buf[:len(buf)-1]
		it.pending = &it.follower
		return it.pending, true
	}
	return nil, true
}

// countNode counts an event of node nd in the current timing interval.
func (it *EventIter) countNode(nd int) {
	a := &it.nacc[nd]
	if a.cnt == 0 {
		it.seenNodes = append(it.seenNodes, nd)
	}
	a.cnt++
}

// countEdge counts a traversal of edge ed in the current timing interval.
func (it *EventIter) countEdge(ed int) {
	a := &it.eacc[ed]
	if a.cnt == 0 {
		it.seenEdges = append(it.seenEdges, ed)
	}
	a.cnt++
}

// timeInterval times the events in buf, one timing interval whose nodes
// and edges walk counted, from its sums: each node's and edge's sum split
// evenly over its events in the interval, the remainders (and sums of
// nodes or edges without an event here, which only a damaged file has)
// spread by the means over the events and gaps without a sum of their
// own, or over all if there are none. Sums without indices go to the
// interval's nodes and edges in order of first occurrence; a different
// number of them is an error.
func (it *EventIter) timeInterval(iv *TimingInterval, follower *Event) error {
	buf := it.buf
	trans := transitions(buf, follower)
	nacc, eacc := it.nacc, it.eacc
	mr, cr, err := it.assign(iv)
	switch {
	case err != nil:
	case mr == 0 && cr == 0:
		// The usual interval: every node and edge has its sum. A last
		// gap kept apart goes to the transition out of the last event,
		// the rest of its edge's sum to the others; a last duration to
		// the last event, the rest of its node's sum to the others (as
		// IntervalIter, only where an event follows).
		lastEdge, last := -1, int64(0)
		if trans == len(buf) && iv.LastGap > 0 {
			lastEdge = outEdge(buf, follower, trans-1)
			last = eacc[lastEdge].takeLast(iv.LastGap)
		}
		lastNode, lastDur := -1, int64(0)
		if n := len(buf); trans == n && n > 0 && iv.LastDur > 0 && nacc[buf[n-1].Node].has {
			lastNode = buf[n-1].Node
			lastDur = nacc[lastNode].takeLast(iv.LastDur)
		}
		t := it.tnext
		for k := range buf {
			ev := &buf[k]
			a := &nacc[ev.Node]
			ev.Start = t
			switch {
			case k == len(buf)-1 && lastNode >= 0:
				t += lastDur
			case a.has:
				t += a.share()
			}
			ev.End = t
			switch {
			case k >= trans:
			case k == trans-1 && lastEdge >= 0:
				t += last
			default:
				if a := &eacc[outEdge(buf, follower, k)]; a.has {
					t += a.share()
				}
			}
		}
		it.tnext = t
	default:
		it.timeRemainders(follower, trans, mr, cr)
	}
	for _, nd := range it.seenNodes {
		nacc[nd] = intervalAcc{}
	}
	for _, ed := range it.seenEdges {
		eacc[ed] = intervalAcc{}
	}
	it.seenNodes, it.seenEdges = it.seenNodes[:0], it.seenEdges[:0]
	return err
}

// assign gives the sums of iv to the nodes and edges of the current
// interval (counted in nacc and eacc, listed in seenNodes and seenEdges)
// and returns the remainders: the interval's, plus the sums of nodes and
// edges without an event here.
func (it *EventIter) assign(iv *TimingInterval) (mr, cr int64, err error) {
	nacc, eacc := it.nacc, it.eacc
	mr, cr = iv.MPIRest, iv.ComputeRest
	var ni, ei int
	for _, e := range iv.Entries {
		idx := e.Index
		if idx < 0 {
			// The entries are the nodes, then the edges, in order.
			if e.Edge {
				if ei >= len(it.seenEdges) {
					return 0, 0, fmt.Errorf("timing: interval %d has more edge sums than edges (%d)", iv.Index, len(it.seenEdges))
				}
				idx, ei = it.seenEdges[ei], ei+1
			} else {
				if ni >= len(it.seenNodes) {
					return 0, 0, fmt.Errorf("timing: interval %d has more node sums than nodes (%d)", iv.Index, len(it.seenNodes))
				}
				idx, ni = it.seenNodes[ni], ni+1
			}
		}
		switch {
		case e.Edge && eacc[idx].cnt > 0:
			eacc[idx].sum += e.Sum
			eacc[idx].has = true
		case e.Edge:
			cr += e.Sum
		case nacc[idx].cnt > 0:
			nacc[idx].sum += e.Sum
			nacc[idx].has = true
		default:
			mr += e.Sum
		}
	}
	if it.g.Timing.Keep() == 0 && (ni != len(it.seenNodes) || ei != len(it.seenEdges)) {
		return 0, 0, fmt.Errorf("timing: interval %d has %d node and %d edge sums for %d nodes and %d edges",
			iv.Index, ni, ei, len(it.seenNodes), len(it.seenEdges))
	}
	return mr, cr, nil
}

// timeRemainders times an interval whose remainders mr and cr (capped
// entries, and sums of nodes or edges without an event here, which only a
// damaged file has) go to the events and gaps without a sum of their own
// by their means, or to all of them if each has a sum.
func (it *EventIter) timeRemainders(follower *Event, trans int, mr, cr int64) {
	buf := it.buf
	nacc, eacc := it.nacc, it.eacc
	inEdge := func(k int) int { return outEdge(buf, follower, k) }
	allM, allC := true, true
	for k := range buf {
		allM = allM && nacc[buf[k].Node].has
		allC = allC && (k >= trans || eacc[inEdge(k)].has)
	}
	eligM := func(nd int) bool { return mr > 0 && (allM || !nacc[nd].has) }
	eligC := func(ed int) bool { return cr > 0 && (allC || !eacc[ed].has) }
	sm, sc := spreader{total: mr}, spreader{total: cr}
	for k := range buf {
		if nd := buf[k].Node; eligM(nd) {
			sm.add(it.nodeMean[nd])
		}
		if k < trans {
			if ed := inEdge(k); eligC(ed) {
				sc.add(it.edgeMean[ed])
			}
		}
	}
	t := it.tnext
	for k := range buf {
		ev := &buf[k]
		nd := ev.Node
		var d int64
		if nacc[nd].has {
			d = nacc[nd].share()
		}
		if eligM(nd) {
			d += sm.next(it.nodeMean[nd])
		}
		ev.Start = t
		ev.End = t + d
		t = ev.End
		if k < trans {
			ed := inEdge(k)
			if eacc[ed].has {
				t += eacc[ed].share()
			}
			if eligC(ed) {
				t += sc.next(it.edgeMean[ed])
			}
		}
	}
	it.tnext = t
}

// time sets Start and End of the events in buf, starting at it.tnext, and
// leaves it.tnext at the start of the follower.
func (it *EventIter) time(a, b Anchor, haveB bool, follower *Event) {
	buf := it.buf
	trans := transitions(buf, follower)
	transMean := func(k int) float64 { return it.edgeMean[outEdge(buf, follower, k)] }
	t := it.tnext
	if !haveB {
		// No anchor closes the interval: the means are all we know.
		// (A node's events may outnumber its count in a damaged file:
		// the times then saturate rather than wrap around.)
		for k := range buf {
			ev := &buf[k]
			ev.Start = t
			ev.End = satAdd(t, roundNs(it.nodeMean[ev.Node]))
			t = ev.End
			if k < trans {
				t = satAdd(t, roundNs(transMean(k)))
			}
		}
		it.tnext = t
		return
	}
	mpi := b.MPITime - a.MPITime
	sm, sc := spreader{total: mpi}, spreader{total: (b.Time - a.Time) - mpi}
	for k := range buf {
		sm.add(it.nodeMean[buf[k].Node])
		if k < trans {
			sc.add(transMean(k))
		}
	}
	for k := range buf {
		ev := &buf[k]
		ev.Start = t
		ev.End = t + sm.next(it.nodeMean[ev.Node])
		t = ev.End
		if k < trans {
			t += sc.next(transMean(k))
		}
	}
	it.tnext = t
}

// roundNs is a mean time rounded to ns, at most math.MaxInt64.
func roundNs(mean float64) int64 {
	if r := math.Round(mean); r < math.MaxInt64 {
		return int64(r)
	}
	return math.MaxInt64
}

// spreader spreads total over count items in proportion to their weights
// (add them all first, then take the parts in order with next): the last
// item gets what is left, so rounding never leaks time out of an interval.
type spreader struct {
	total    int64
	w, cum   float64
	count, k int
	prev     int64
}

func (s *spreader) add(weight float64) {
	s.w += weight
	s.count++
}

// next returns the part of the next item, of the given weight.
func (s *spreader) next(weight float64) int64 {
	s.cum += weight
	x := spread(s.total, s.cum, s.w, s.k, s.count)
	d := x - s.prev
	s.prev = x
	s.k++
	return d
}

// takeLast sets apart the part of the last of a.cnt items: v, at most
// a.sum (with one item, all of it), and leaves the rest of a.sum to the
// others.
func (a *intervalAcc) takeLast(v int64) int64 {
	if a.cnt < 2 {
		return a.sum
	}
	last := min(v, max(a.sum, 0))
	a.sum -= last
	a.cnt--
	return last
}

// share returns the next of a.cnt even integer parts of a.sum (the first
// a.sum%a.cnt parts one larger), counting the parts taken in a.seen.
func (a *intervalAcc) share() int64 {
	if a.seen == 0 { // divide once per interval, not per event
		a.q, a.r = a.sum/a.cnt, a.sum%a.cnt
	}
	v := a.q
	if a.seen < a.r {
		v++
	}
	a.seen++
	return v
}

// spread returns the part of total due to the first k+1 of count items
// whose weights add up to cum out of w; the last item gets exactly total,
// so rounding never leaks time out of an interval.
func spread(total int64, cum, w float64, k, count int) int64 {
	switch {
	case k == count-1:
		return total
	case w == 0:
		return int64(math.Floor(float64(total)*float64(k+1)/float64(count) + 0.5))
	default:
		return int64(math.Floor(float64(total)*(cum/w) + 0.5))
	}
}

// transitions is the number of transitions out of the events of buf that
// are timed with them: all but the last's, unless a follower is known.
func transitions(buf []Event, follower *Event) int {
	if follower != nil {
		return len(buf)
	}
	return len(buf) - 1
}

// outEdge is the edge out of event k of buf: into the next event, or into
// the follower for the last.
func outEdge(buf []Event, follower *Event, k int) int {
	if k+1 < len(buf) {
		return buf[k+1].InEdge
	}
	return follower.InEdge
}
