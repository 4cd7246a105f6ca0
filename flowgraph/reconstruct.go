package flowgraph

import (
	"fmt"
	"math"
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
// Timing: with a Timing (format v2), inside an interval each event's
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
	g        *Graph
	out      [][]int // out-edges per node
	cur      []seqCursor
	edgeNext []int64   // cur[i].Val() per edge, packed for the search in step
	nodeMean []float64 // mean duration per node
	edgeMean []float64 // mean duration per edge

	// structural walk
	next     int64 // index of the next event to walk
	node     int
	inEdge   int
	walkDone bool

	// timed output
	buf      []Event // the current interval's events, timed
	bufPos   int
	anchor   int    // index of the anchor at or before the next interval; -1 without anchors
	tnext    int64  // start time of the next event to time
	pending  *Event // the walked event that follows buf, or nil
	follower Event  // storage for pending
	err      error
	ev       Event

	// with a Timing: the intervals, and per node and edge what the
	// current interval holds of it
	tim        *TimingIter
	nacc, eacc []intervalAcc
	// the nodes and edges of the current interval in order of first
	// occurrence
	seenNodes, seenEdges []int
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
	it := &EventIter{g: g, node: g.Initial, inEdge: -1}
	if g.NumEvents == 0 {
		it.walkDone = true
		return it
	}
	it.out = make([][]int, len(g.Nodes))
	it.cur = make([]seqCursor, len(g.Edges))
	it.edgeNext = make([]int64, len(g.Edges))
	it.nodeMean = make([]float64, len(g.Nodes))
	it.edgeMean = make([]float64, len(g.Edges))
	for i := range g.Nodes {
		it.nodeMean[i] = g.Nodes[i].MeanTime()
	}
	for i := range g.Edges {
		e := &g.Edges[i]
		it.edgeMean[i] = e.MeanTime()
		it.out[e.Src] = append(it.out[e.Src], i)
		it.cur[i].Init(&e.Seq)
		it.edgeNext[i] = it.cur[i].Val()
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

// step walks one event structurally into ev.
func (it *EventIter) step(ev *Event) bool {
	if it.walkDone {
		return false
	}
	*ev = Event{Index: it.next, Node: it.node, InEdge: it.inEdge}
	it.next++
	if it.next >= it.g.NumEvents {
		it.walkDone = true
		return true
	}
	// The edge taken next is the out-edge whose next sequence number is
	// it.next; it is also the smallest among the node's out-edges.
	found := -1
	for _, ei := range it.out[it.node] {
		if it.edgeNext[ei] == it.next {
			found = ei
			break
		}
	}
	if found < 0 {
		it.err = fmt.Errorf("sequence broken: no edge out of node %d holds event %d", it.node, it.next)
		it.walkDone = true
		return true
	}
	it.cur[found].Next()
	it.edgeNext[found] = it.cur[found].Val()
	it.node = it.g.Edges[found].Dst
	it.inEdge = found
	return true
}

// Next advances to the next event and reports whether there is one.
func (it *EventIter) Next() bool {
	if it.bufPos >= len(it.buf) && !it.fill() {
		return false
	}
	it.ev = it.buf[it.bufPos]
	it.bufPos++
	return true
}

// Event returns the current event.
func (it *EventIter) Event() Event { return it.ev }

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
			start := iv.Index * g.Timing.Spacing()
			end := start + min(g.Timing.Spacing(), g.NumEvents-start)
			follower, ok := it.walk(end)
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
	follower, ok := it.walk(end)
	if ok {
		it.time(a, b, haveB, follower)
	}
	return ok
}

// walk walks the events up to end (exclusive) into buf and, to time the
// last transition, the event at end, which it returns (nil at the end).
func (it *EventIter) walk(end int64) (*Event, bool) {
	for len(it.buf) == 0 || it.buf[len(it.buf)-1].Index < end-1 {
		it.buf = append(it.buf, Event{})
		if !it.step(&it.buf[len(it.buf)-1]) {
			it.buf = it.buf[:len(it.buf)-1]
			break
		}
	}
	if it.err != nil || len(it.buf) == 0 {
		return nil, false
	}
	var follower *Event
	if it.step(&it.follower) {
		it.pending = &it.follower
		follower = &it.follower
	}
	if it.err != nil {
		return nil, false
	}
	return follower, true
}

// timeInterval times the events in buf, one timing interval, from its
// sums: each node's and edge's sum split evenly over its events in the
// interval, the remainders (and sums of nodes or edges without an event
// here, which only a damaged file has) spread by the means over the
// events and gaps without a sum of their own, or over all if there are
// none. Sums without indices go to the interval's nodes and edges in
// order of first occurrence; a different number of them is an error.
func (it *EventIter) timeInterval(iv *TimingInterval, follower *Event) error {
	buf := it.buf
	trans := transitions(buf, follower)
	nacc, eacc := it.nacc, it.eacc
	it.seenNodes, it.seenEdges = it.seenNodes[:0], it.seenEdges[:0]
	for k := range buf {
		nd := buf[k].Node
		if nacc[nd].cnt == 0 {
			it.seenNodes = append(it.seenNodes, nd)
		}
		nacc[nd].cnt++
		if k < trans {
			ed := outEdge(buf, follower, k)
			if eacc[ed].cnt == 0 {
				it.seenEdges = append(it.seenEdges, ed)
			}
			eacc[ed].cnt++
		}
	}
	mr, cr, err := it.assign(iv)
	switch {
	case err != nil:
	case mr == 0 && cr == 0:
		// The usual interval: every node and edge has its sum.
		t := it.tnext
		for k := range buf {
			ev := &buf[k]
			a := &nacc[ev.Node]
			ev.Start = t
			if a.has {
				t += a.share()
			}
			ev.End = t
			if k < trans {
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
		for k := range buf {
			ev := &buf[k]
			ev.Start = t
			ev.End = t + int64(math.Round(it.nodeMean[ev.Node]))
			t = ev.End
			if k < trans {
				t += int64(math.Round(transMean(k)))
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
