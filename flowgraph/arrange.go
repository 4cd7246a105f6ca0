package flowgraph

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Arranged order: the second thing a budget gives up. When the sequences
// do not fit even with every poll run length approximate (FitBudget), the
// order inside timing intervals is what says least: an interval's sums
// time its events by node and edge, whatever their order. An arranged
// interval keeps its events up to the last first occurrence of one of its
// nodes or edges (the sums follow that order) and its last event; in
// between, each node whose exits are not periodic takes them grouped by
// edge, in the order of their first occurrence, but for its last exit,
// which stays last; the others take theirs in their recorded order. By
// the BEST theorem (the last exits of an Euler trail form a tree into its
// end) such choices always make a trail that takes every recorded
// transition once and ends at the recorded last event. So every node's and
// edge's count in every interval stays exact, hence every sum, total and
// count in stats; what changes is where in the interval an event of a
// branch falls. The densest intervals (events per ns) are arranged first:
// there the order is least visible in time.

// ivSpan is a timing interval's events [start, end) and its time.
type ivSpan struct {
	start, end int64
	time       int64
}

// arrangeToFit arranges the fewest intervals, densest first, that make g's
// sequences and timing (tim bytes) fit a.Budget, or all of them if even
// that does not fit, and records what it did in a.
func (g *Graph) arrangeToFit(a *BudgetUse, tim int64) {
	ivs := g.intervalSpans()
	if len(ivs) == 0 {
		return
	}
	order := make([]int, len(ivs))
	for k := range order {
		order[k] = k
	}
	// density: events/time, compared as events_i*time_j > events_j*time_i
	slices.SortStableFunc(order, func(i, j int) int {
		a, b := &ivs[i], &ivs[j]
		x := float64(a.end-a.start) * float64(b.time)
		y := float64(b.end-b.start) * float64(a.time)
		return cmp.Compare(y, x)
	})
	exact := make([]Seq, len(g.Edges))
	for i := range g.Edges {
		exact[i] = g.Edges[i].Seq
	}
	chosen := make([]bool, len(ivs))
	try := func(k int) (bytes, moved int64, ok bool) {
		clear(chosen)
		for _, i := range order[:k] {
			chosen[i] = true
		}
		for i := range g.Edges {
			g.Edges[i].Seq = exact[i]
		}
		seqs, moved, err := g.arranged(ivs, chosen)
		if err != nil {
			return 0, 0, false
		}
		for i := range g.Edges {
			g.Edges[i].Seq = seqs[i]
		}
		raw, _ := g.storedSeqs()
		return packedLen(raw) + tim, moved, true
	}
	n := len(ivs)
	k := n
	bytes, moved, ok := try(k)
	if ok && bytes <= a.Budget {
		// Each try walks every event: rather than a bisection, start where
		// the bytes, which fall about linearly with the intervals arranged,
		// meet the budget, and go on in steps of 1/32 of them.
		k = int(math.Ceil(float64(n) * float64(a.Bytes-a.Budget) / float64(a.Bytes-bytes)))
		for k = min(max(k, 1), n); ; k = min(k+max(1, n/32), n) {
			if bytes, moved, ok = try(k); !ok || bytes <= a.Budget || k == n {
				break
			}
		}
	}
	if !ok || bytes >= a.Bytes {
		// Arranging cannot fail on a valid graph; were it to, or to
		// save nothing, the order stays as recorded.
		for i := range g.Edges {
			g.Edges[i].Seq = exact[i]
		}
		return
	}
	a.Bytes, a.Arranged, a.Moved = bytes, int64(k), moved
}

// intervalSpans returns the events and time of each timing interval.
func (g *Graph) intervalSpans() []ivSpan {
	if !g.Timing.Present() {
		return nil
	}
	var ivs []ivSpan
	it := g.Timing.Intervals()
	for it.Next() {
		iv := it.Interval()
		if iv.Start >= g.NumEvents {
			break
		}
		t := iv.MPIRest + iv.ComputeRest
		for _, e := range iv.Entries {
			t += e.Sum
		}
		ivs = append(ivs, ivSpan{start: iv.Start, end: min(iv.Start+iv.Events, g.NumEvents), time: t})
	}
	if it.Err() != nil {
		return nil
	}
	return ivs
}

// arranged returns g's edge sequences with the intervals of ivs that are
// chosen arranged, and how many events then hold another node.
func (g *Graph) arranged(ivs []ivSpan, chosen []bool) ([]Seq, int64, error) {
	seqs := make([]Seq, len(g.Edges))
	it := g.Events()
	var ar arranger
	var moved int64
	var evs []Event
	for k, iv := range ivs {
		evs = evs[:0]
		if it.pending != nil {
			evs = append(evs, it.follower)
			it.pending = nil
		}
		it.buf = it.buf[:0]
		follower, ok := it.walk(iv.end, false)
		if !ok {
			return nil, 0, fmt.Errorf("arrange: %w", it.err)
		}
		evs = append(evs, it.buf...)
		if len(evs) == 0 || evs[0].Index != iv.start {
			return nil, 0, fmt.Errorf("arrange: interval %d does not start at event %d", k, iv.start)
		}
		if chosen[k] {
			moved += ar.arrange(g, evs)
		}
		for _, ev := range evs {
			if ev.InEdge >= 0 {
				seqs[ev.InEdge].Append(ev.Index)
			}
		}
		if follower == nil {
			break
		}
	}
	if it.pending != nil || !it.walkDone {
		// events after the last interval (a recorder stopped mid-event)
		evs = evs[:0]
		if it.pending != nil {
			evs = append(evs, it.follower)
		}
		it.buf = it.buf[:0]
		if _, ok := it.walk(g.NumEvents, false); !ok && it.err != nil {
			return nil, 0, fmt.Errorf("arrange: %w", it.err)
		}
		for _, ev := range append(evs, it.buf...) {
			if ev.InEdge >= 0 {
				seqs[ev.InEdge].Append(ev.Index)
			}
		}
	}
	return seqs, moved, nil
}

// arranger holds the buffers of arrange, kept from one interval to the
// next.
type arranger struct {
	stamp              int32
	nodeSeen, edgeSeen []int32 // the stamp of the interval that saw it
	exits              [][]int // per node, its exits in the middle, in order
	next               []int   // per node, the next exit to take
	touched            []int
	old                []Event
}

// arrange arranges the events of one interval (evs, with the true nodes
// and in-edges) in place and returns how many now hold another node.
func (ar *arranger) arrange(g *Graph, evs []Event) int64 {
	n := len(evs)
	if ar.nodeSeen == nil {
		ar.nodeSeen, ar.edgeSeen = make([]int32, len(g.Nodes)), make([]int32, len(g.Edges))
		ar.exits = make([][]int, len(g.Nodes))
		ar.next = make([]int, len(g.Nodes))
	}
	ar.stamp++
	// p: the last first occurrence; events [0, p] stay as recorded
	p := 0
	for j := range evs {
		if v := evs[j].Node; ar.nodeSeen[v] != ar.stamp {
			ar.nodeSeen[v] = ar.stamp
			p = j
		}
		if e := evs[j].InEdge; j > 0 && ar.edgeSeen[e] != ar.stamp {
			ar.edgeSeen[e] = ar.stamp
			p = j
		}
	}
	if n-1-p < 3 {
		return 0
	}
	for _, v := range ar.touched {
		ar.exits[v] = ar.exits[v][:0]
		ar.next[v] = 0
	}
	ar.touched = ar.touched[:0]
	for j := p; j < n-1; j++ {
		v := evs[j].Node
		if len(ar.exits[v]) == 0 {
			ar.touched = append(ar.touched, v)
		}
		ar.exits[v] = append(ar.exits[v], evs[j+1].InEdge)
	}
	for _, v := range ar.touched {
		if x := ar.exits[v]; !periodic(x[:len(x)-1]) {
			groupExits(x[:len(x)-1])
		}
	}
	ar.old = append(ar.old[:0], evs[p+1:]...)
	v, walked := evs[p].Node, true
	for j := p + 1; j < n; j++ {
		x := ar.exits[v]
		if ar.next[v] >= len(x) {
			walked = false // cannot happen (see above)
			break
		}
		e := x[ar.next[v]]
		ar.next[v]++
		v = g.Edges[e].Dst
		evs[j].Node, evs[j].InEdge = v, e
	}
	if !walked || v != ar.old[len(ar.old)-1].Node {
		copy(evs[p+1:], ar.old) // the interval keeps its recorded order
		return 0
	}
	var moved int64
	for j, o := range ar.old {
		if evs[p+1+j].Node != o.Node {
			moved++
		}
	}
	return moved
}

// periodic tells whether each edge of xs, but at the first and last run,
// is taken in runs of one length: a loop's header that leaves after the
// same iterations each time, a poll whose run lengths FitBudget evened.
// Its choices then stay in their order, which costs a term or two.
func periodic(xs []int) bool {
	type runs struct{ edge, length int }
	var seen []runs
	for i := 0; i < len(xs); {
		j := i + 1
		for j < len(xs) && xs[j] == xs[i] {
			j++
		}
		if i > 0 && j < len(xs) { // an interior run
			k := slices.IndexFunc(seen, func(r runs) bool { return r.edge == xs[i] })
			switch {
			case k < 0:
				seen = append(seen, runs{xs[i], j - i})
			case seen[k].length != j-i:
				return false
			}
		}
		i = j
	}
	return true
}

// groupExits reorders the edges of xs so that each one's occurrences are
// together, in the order of their first occurrence: the sequences of an
// interval then take a term or two per edge (spread evenly instead, they
// took more than the recorded order: testdata/apps/irregular, 200k
// iterations, 358 KB for 212; runs of the most frequent edge evened, 211).
func groupExits(xs []int) {
	if len(xs) < 3 {
		return
	}
	type group struct{ edge, count int }
	var gs []group
	for _, e := range xs {
		k := slices.IndexFunc(gs, func(g group) bool { return g.edge == e })
		if k < 0 {
			gs = append(gs, group{edge: e})
			k = len(gs) - 1
		}
		gs[k].count++
	}
	k := 0
	for _, g := range gs {
		for range g.count {
			xs[k] = g.edge
			k++
		}
	}
}
