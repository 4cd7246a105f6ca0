package flowgraph

import (
	"errors"
	"fmt"
	"slices"
)

// IntervalSum is what a timing interval holds of one node (edge): its
// events (traversals) there and their total duration in ns.
type IntervalSum struct {
	Index int // node (edge) index
	Count int64
	Sum   int64
	first int64 // the index of its first event (traversal) in the interval
}

// IntervalIter yields the timing intervals of a graph with what each holds
// of every node and edge, computed from the sequence descriptors: the cost
// follows the intervals and their entries, never the events. It gives the
// times EventIter gives: an interval's events, timed as EventIter times
// them, can be had one interval at a time (Events).
//
// Only Timings without capped intervals (Keep 0) that cover every event
// are handled; TimedIntervals reports whether the graph has one.
type IntervalIter struct {
	g   *Graph
	tim *TimingIter
	ix  []edgeIndex
	nxt []int64 // per edge, its first number at or after the current interval
	// hint is per edge where the queries of Next found its numbers,
	// lastJ the blocks of the last numQuery.
	hint  []edgeHint
	lastJ int
	out   [][]int // out-edges per node
	err   error

	// First and End delimit the current interval's events [First, End).
	First, End int64
	// Start is the time of the interval's first event in ns since the
	// rank's first event, Stop the end of the interval: of its last
	// event and the compute phase after it, if any.
	Start, Stop int64
	// Nodes and Edges are the interval's nodes and the edges out of its
	// events, in order of first occurrence.
	Nodes, Edges []IntervalSum
	// nodeAt is the node of event First, inEdge the edge into it (-1
	// for event 0).
	nodeAt, inEdge int
	// lastEdge is the edge into event End (-1: none), lastGap and
	// lastDur the interval's last gap and last duration kept apart
	// (TimingInterval.LastGap and LastDur).
	lastEdge         int
	lastGap, lastDur int64

	self     []int   // per node, its self-loop edge or -1
	nodeSlot []int32 // per node, its position in Nodes + 1 (0: none)
	edgeSlot []int32 // per edge, the same for Edges, within Events
	cur      []edgeCursor
	// pos is, in Events of a graph read by File.ReadLazy, the position
	// of the current event's run (step).
	pos int64
	// heap holds the edges with numbers left, smallest nxt first, with
	// their nxt (no indirection per comparison); active those of the
	// current interval.
	heap   []edgeNext
	active []int32
}

// ErrNotIntervals is returned by TimedIntervals for graphs whose timing
// IntervalIter does not handle: without a Timing (version 1 files), with
// capped intervals, or with fewer intervals than the events need.
var ErrNotIntervals = errors.New("timing: not timed by whole intervals")

// TimedIntervals returns an iterator over the graph's timing intervals, or
// ErrNotIntervals. The graph must be valid (see Validate); one read by
// File.ReadLazy is walked without mapping its sequences.
func (g *Graph) TimedIntervals() (*IntervalIter, error) {
	t := &g.Timing
	if !t.Present() || t.Keep() != 0 || g.NumEvents == 0 || !t.Covers(g.NumEvents) {
		return nil, ErrNotIntervals
	}
	it := &IntervalIter{g: g, tim: t.Intervals(), ix: edgeIndexes(g), nxt: make([]int64, len(g.Edges)),
		hint: make([]edgeHint, len(g.Edges)), out: make([][]int, len(g.Nodes)), self: selfLoops(g), nodeSlot: make([]int32, len(g.Nodes))}
	for i := range g.Edges {
		e := &g.Edges[i]
		it.nxt[i] = it.ix[i].succ(0)
		it.out[e.Src] = append(it.out[e.Src], i)
		it.pushHeap(int32(i))
	}
	return it, nil
}

// edgeNext is an edge and its next number, IntervalIter.nxt.
type edgeNext struct {
	nxt int64
	e   int32
}

func (it *IntervalIter) pushHeap(e int32) {
	h := append(it.heap, edgeNext{it.nxt[e], e})
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p].nxt <= h[i].nxt {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	it.heap = h
}

func (it *IntervalIter) popHeap() {
	h := it.heap
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(h) && h[l].nxt < h[m].nxt {
			m = l
		}
		if r := l + 1; r < len(h) && h[r].nxt < h[m].nxt {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	it.heap = h
}

// Next moves to the next interval and reports whether there is one.
func (it *IntervalIter) Next() bool {
	if it.err != nil || !it.tim.Next() {
		if it.err == nil {
			it.err = it.tim.Err()
		}
		return false
	}
	g := it.g
	iv := it.tim.Interval()
	a := iv.Start
	b := min(a+iv.Events, g.NumEvents)
	if a >= g.NumEvents {
		it.err = fmt.Errorf("timing: interval %d after the last event", iv.Index)
		return false
	}
	it.First, it.End, it.Start = a, b, it.Stop
	for _, n := range it.Nodes {
		it.nodeSlot[n.Index] = 0
	}
	it.Nodes, it.Edges = it.Nodes[:0], it.Edges[:0]
	it.nodeAt, it.inEdge = -1, -1
	it.lastEdge, it.lastGap, it.lastDur = -1, iv.LastGap, iv.LastDur
	if a == 0 {
		it.addNode(g.Initial, 1, 0)
		it.nodeAt = g.Initial
	}
	it.countEdges(a, b)
	if it.nodeAt < 0 {
		it.err = fmt.Errorf("sequence broken: no edge holds event %d", a)
		return false
	}
	byFirst := func(x, y IntervalSum) int { return int(x.first - y.first) }
	slices.SortFunc(it.Nodes, byFirst)
	slices.SortFunc(it.Edges, byFirst)
	for k, n := range it.Nodes {
		it.nodeSlot[n.Index] = int32(k + 1)
	}
	// The sums are the nodes' and then the edges', in order of first
	// occurrence (Keep 0).
	var nn int
	for _, e := range iv.Entries {
		if !e.Edge {
			nn++
		}
	}
	if nn != len(it.Nodes) || len(iv.Entries)-nn != len(it.Edges) {
		it.err = fmt.Errorf("timing: interval %d has %d node and %d edge sums for %d nodes and %d edges",
			iv.Index, nn, len(iv.Entries)-nn, len(it.Nodes), len(it.Edges))
		return false
	}
	t := it.Start
	for k := range it.Nodes {
		it.Nodes[k].Sum = iv.Entries[k].Sum
		t += it.Nodes[k].Sum
	}
	for k := range it.Edges {
		it.Edges[k].Sum = iv.Entries[len(it.Nodes)+k].Sum
		t += it.Edges[k].Sum
	}
	it.Stop = t
	return true
}

// countEdges counts what the edges hold of the interval [a, b): per edge
// that has numbers up to b, its number a (event a comes through it),
// those in (a, b) (events of the interval and transitions out of them),
// and b (the transition out of the interval's last event).
func (it *IntervalIter) countEdges(a, b int64) {
	g := it.g
	it.active = it.active[:0]
	for len(it.heap) > 0 && it.heap[0].nxt <= b {
		it.active = append(it.active, it.heap[0].e)
		it.popHeap()
	}
	qb := it.query(b)
	for _, e32 := range it.active {
		e := int(e32)
		x, h := &it.ix[e], &it.hint[e]
		dst := g.Edges[e].Dst
		firstIn := it.nxt[e] // its first number after a
		if firstIn == a {
			it.addNode(dst, 1, a)
			it.nodeAt, it.inEdge = dst, e
			h.below++
			firstIn = x.succFrom(h, it.query(a+1))
		}
		var inner int64
		next := firstIn // its first number at or after b
		if firstIn < b {
			below := x.rankFrom(h, qb)
			inner, h.below = below-h.below, below
			next = x.succFrom(h, qb)
			it.addNode(dst, inner, firstIn)
		}
		n := inner
		if next == b {
			n++
			it.lastEdge = e
		}
		if n > 0 {
			it.Edges = append(it.Edges, IntervalSum{Index: e, Count: n, first: firstIn})
		}
		it.nxt[e] = next
		it.pushHeap(e32)
	}
}

// query returns the numQuery of v, searched from the last one's blocks.
func (it *IntervalIter) query(v int64) numQuery {
	q := it.g.lazy.query(v, it.lastJ)
	it.lastJ = q.j
	return q
}

// addNode counts n events of node v in the current interval, the first at
// index first.
func (it *IntervalIter) addNode(v int, n, first int64) {
	if s := it.nodeSlot[v]; s > 0 {
		ns := &it.Nodes[s-1]
		ns.Count += n
		ns.first = min(ns.first, first)
		return
	}
	it.Nodes = append(it.Nodes, IntervalSum{Index: v, Count: n, first: first})
	it.nodeSlot[v] = int32(len(it.Nodes))
}

// Err returns the first error met, after Next has returned false.
func (it *IntervalIter) Err() error { return it.err }

// Events calls f for each event of the current interval, in order, timed
// as EventIter times it: each node's (edge's) sum split evenly over its
// events (traversals) in the interval, the first ones taking the
// remainder.
func (it *IntervalIter) Events(f func(Event)) error {
	return it.EventsRuns(f, nil)
}

// Run is a stretch of consecutive events of one node joined by its
// self-loop (the repeats of a poll) within an interval, timed as Events
// times them.
type Run struct {
	Node   int
	InEdge int   // the edge into its first event
	First  int64 // the index of its first event
	Count  int64
	// Start is the start of its first event, End the end of its last;
	// Busy is the sum of its events' durations (the rest, the gaps
	// between them), Longest the longest, Zero how many last 0 ns.
	Start, End, Busy, Longest, Zero int64
}

// minRun is the fewest events EventsRuns offers as a Run.
const minRun = 4

// EventsRuns is Events, but offers each stretch of at least minRun
// repeats of a node, but for the interval's last event, to run first
// (nil: none); the events of a stretch that run takes (returns true) are
// not passed to f. Views that sum what falls in a slice of time take a
// poll's thousands of repeats at once.
func (it *IntervalIter) EventsRuns(f func(Event), run func(Run) bool) error {
	g := it.g
	if len(it.cur) == 0 {
		it.cur = make([]edgeCursor, len(g.Edges))
	}
	// edgeSlot[e] is edge e's position in Edges + 1 (0: none), for this
	// call only.
	if len(it.edgeSlot) == 0 {
		it.edgeSlot = make([]int32, len(g.Edges))
	}
	sh := it.shares()
	defer func() {
		for _, e := range it.Edges {
			it.edgeSlot[e.Index] = 0
		}
	}()
	// Only the out-edges of the interval's nodes are walked.
	for _, n := range it.Nodes {
		for _, e := range it.out[n.Index] {
			it.ix[e].seek(&it.cur[e], it.First+1)
		}
	}
	ev := Event{Node: it.nodeAt, InEdge: it.inEdge}
	if m := g.lazy; m != nil {
		it.pos = m.ceil(it.First)
		if it.inEdge >= 0 && it.inEdge == it.self[it.nodeAt] {
			it.pos-- // inside the run after the position
		}
	}
	t := it.Start
	for k := it.First; k < it.End; k++ {
		ev.Index, ev.Start = k, t
		s := it.nodeSlot[ev.Node]
		if s == 0 {
			return fmt.Errorf("sequence broken: node %d at event %d", ev.Node, k)
		}
		taken := false
		if run != nil {
			taken, t, k = it.offerRun(&sh, &ev, s, k, t, run)
		}
		if !taken {
			if s == sh.lastNode && k+1 == it.End {
				t += sh.lastDur
			} else {
				t += sh.nsh[s-1].take()
			}
			ev.End = t
			f(ev)
		}
		if k+1 >= g.NumEvents {
			break
		}
		var err error
		if t, err = it.step(&sh, &ev, k, t); err != nil {
			return err
		}
	}
	if t != it.Stop {
		return fmt.Errorf("timing: interval at event %d ends at %d ns, its sums at %d", it.First, t, it.Stop)
	}
	return nil
}

// share is a node's (edge's) sum split over its events (traversals): q
// each, the first r one more; seen have taken theirs.
type share struct{ q, r, seen int64 }

// take returns the next event's part.
func (s *share) take() int64 {
	v := s.q
	if s.seen < s.r {
		v++
	}
	s.seen++
	return v
}

// sum is what the next n events (traversals) of a share take, and how
// many of them take one ns more.
func (s *share) sum(n int64) (int64, int64) {
	plus := min(max(s.r-s.seen, 0), n)
	return n*s.q + plus, plus
}

// setApart keeps a last part v (at most sum) of sum apart and splits the
// rest over the other events.
func (s *share) setApart(sum IntervalSum, v int64) int64 {
	last := min(v, max(sum.Sum, 0))
	*s = share{q: (sum.Sum - last) / (sum.Count - 1), r: (sum.Sum - last) % (sum.Count - 1)}
	return last
}

// intervalShares are the shares of the current interval's nodes and
// edges, and the last gap and duration kept apart.
type intervalShares struct {
	nsh, esh []share
	lastSlot int   // the edge slot whose last gap is kept apart, -1
	last     int64 // that gap
	lastNode int32 // the node slot + 1 whose last duration is kept apart, 0
	lastDur  int64 // that duration
}

// shares splits the current interval's sums and fills edgeSlot. A last
// gap kept apart goes to the transition into event End, the rest of its
// edge's sum to the others, and a last duration to event End-1, the rest
// of its node's sum to the others (EventIter's takeLast).
func (it *IntervalIter) shares() intervalShares {
	g := it.g
	sh := intervalShares{nsh: make([]share, len(it.Nodes)), esh: make([]share, len(it.Edges)), lastSlot: -1}
	for k, n := range it.Nodes {
		sh.nsh[k] = share{q: n.Sum / n.Count, r: n.Sum % n.Count}
	}
	for k, e := range it.Edges {
		it.edgeSlot[e.Index] = int32(k + 1)
		sh.esh[k] = share{q: e.Sum / e.Count, r: e.Sum % e.Count}
	}
	if it.lastEdge >= 0 && it.lastGap > 0 {
		if k := int(it.edgeSlot[it.lastEdge]) - 1; k >= 0 && it.Edges[k].Count >= 2 {
			sh.last, sh.lastSlot = sh.esh[k].setApart(it.Edges[k], it.lastGap), k
		}
	}
	if it.lastEdge >= 0 && it.lastDur > 0 {
		if s := it.nodeSlot[g.Edges[it.lastEdge].Src]; s > 0 && it.Nodes[s-1].Count >= 2 {
			sh.lastDur, sh.lastNode = sh.nsh[s-1].setApart(it.Nodes[s-1], it.lastDur), s
		}
	}
	return sh
}

// repeats returns the events of node v from k on, up to the interval's
// last event, whose shares the stretch can take.
func (it *IntervalIter) repeats(v int, k int64) int64 {
	e := it.self[v]
	if e < 0 || it.cur[e].val != k+1 || it.edgeSlot[e] == 0 {
		return 0
	}
	return min(1+it.ix[e].contiguous(&it.cur[e]), it.End-1-k)
}

// offerRun offers the stretch of repeats of ev's node (slot s) from event
// k at time t to run, if long enough; when run takes it, it moves ev, k
// and t to the stretch's last event.
func (it *IntervalIter) offerRun(sh *intervalShares, ev *Event, s int32, k, t int64, run func(Run) bool) (bool, int64, int64) {
	n := it.repeats(ev.Node, k)
	if n < minRun {
		return false, t, k
	}
	e := it.self[ev.Node]
	ns, es := &sh.nsh[s-1], &sh.esh[it.edgeSlot[e]-1]
	busy, plus := ns.sum(n)
	gaps, _ := es.sum(n - 1)
	r := Run{Node: ev.Node, InEdge: ev.InEdge, First: k, Count: n, Start: t, End: t + busy + gaps, Busy: busy, Longest: ns.q}
	if plus > 0 {
		r.Longest++
	}
	if ns.q == 0 {
		r.Zero = n - plus
	}
	if !run(r) {
		return false, t, k
	}
	ns.seen += n
	es.seen += n - 1
	it.ix[e].skip(&it.cur[e], n-1)
	t, k = r.End, k+n-1
	ev.Index, ev.InEdge = k, e
	return true, t, k
}

// step moves ev from event k to event k+1 along the out-edge that holds
// it, and returns t plus that transition's part. Event k+1 repeats event
// k through its node's self-loop, or else it is the next event that does
// not repeat the one before: for a graph read by File.ReadLazy, the one
// at position pos+1, which the other edges' cursors hold as they are
// stored (their event indices are not needed).
func (it *IntervalIter) step(sh *intervalShares, ev *Event, k, t int64) (int64, error) {
	g := it.g
	next := -1
	if e := it.self[ev.Node]; e >= 0 && it.cur[e].val == k+1 {
		next = e
		it.ix[e].next(&it.cur[e])
	} else {
		for _, e := range it.out[ev.Node] {
			x, c := &it.ix[e], &it.cur[e]
			if x.m != nil && c.w.val == it.pos+1 {
				next = e
				c.w.Next()
				break
			}
			if x.m == nil && c.val == k+1 {
				next = e
				x.next(c)
				break
			}
		}
		it.pos++
	}
	if next < 0 {
		return t, fmt.Errorf("sequence broken: no edge out of node %d holds event %d", ev.Node, k+1)
	}
	es := int(it.edgeSlot[next]) - 1
	if es < 0 {
		return t, fmt.Errorf("sequence broken: edge %d at event %d", next, k+1)
	}
	if es == sh.lastSlot && k+1 == it.End {
		t += sh.last
	} else {
		t += sh.esh[es].take()
	}
	ev.Node, ev.InEdge = g.Edges[next].Dst, next
	if ev.Node >= len(g.Nodes) || (k+1 < it.End && it.nodeSlot[ev.Node] == 0) {
		return t, fmt.Errorf("sequence broken: node %d at event %d", ev.Node, k+1)
	}
	return t, nil
}
