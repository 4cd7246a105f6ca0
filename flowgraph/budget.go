package flowgraph

import (
	"math"
	"slices"
	"sort"
)

// DefaultBudget is the default of the bytes a graph's sequences and timing
// may take in a file (FitBudget). At 64 KiB HPCC at 2 ranks is at the
// budget from N=4000 on, so a run twice as long gives a file no larger;
// at 128 KiB it was exact at N=4000 and 1.29x larger at N=5000.
const DefaultBudget = 64 << 10

// BudgetUse says what a graph's sequences and timing take in a file against
// the byte budget of its recording, and how many of the runs of its polls
// (the events of a node with a self-loop, from one that follows another
// node to the next other node) were given an approximate length to fit it
// (FitBudget), with the errors of those lengths in events.
type BudgetUse struct {
	Budget int64 `msgpack:"budget" json:"budget"`
	Bytes  int64 `msgpack:"bytes" json:"bytes"`
	Runs   int64 `msgpack:"runs" json:"runs"`
	// Approximate runs have lengths spread evenly over a group of runs of
	// one node in one timing interval, whose total is exact.
	Approximate int64 `msgpack:"approx" json:"approximate"`
	ErrP50      int64 `msgpack:"p50" json:"err_p50"`
	ErrP90      int64 `msgpack:"p90" json:"err_p90"`
	ErrMax      int64 `msgpack:"max" json:"err_max"`
	// Arranged timing intervals, when even approximate run lengths did
	// not fit, keep their counts and sums but not the order of their
	// branches (arrangeToFit); Moved events then hold another node.
	Arranged int64 `msgpack:"arranged,omitempty" json:"arranged_intervals,omitempty"`
	Moved    int64 `msgpack:"moved,omitempty" json:"moved_events,omitempty"`
}

// Fits tells whether the graph's sequences and timing fit the budget.
func (a *BudgetUse) Fits() bool { return a.Bytes <= a.Budget }

// runGroup is a stretch of runs of one polled node, all in one timing
// interval, that FitBudget may give lengths spread evenly.
type runGroup struct {
	poll, from, to int // runs [from, to) of polls[poll]
	dev            float64
}

// FitBudget makes g's sequences and timing take at most budget bytes in a
// file and sets g.Budget to what they take and what was approximated.
// First the lengths of its poll runs become approximate: in groups of one
// node within one timing interval, whose total is kept, the most uniform
// groups first; a run across an interval's start keeps its length, and
// the order of all other events stays exact. If that is not enough, the
// order inside the densest intervals is given up (arrangeToFit). Each
// node's and edge's count in every timing interval stays exact.
func (g *Graph) FitBudget(budget int64) *BudgetUse {
	return g.FitBudgetFrom(budget, nil)
}

// FitBudgetFrom is FitBudget for a graph whose timing st's Finish gave
// (nil: none): where the graph does not fit, its timing's intervals are
// first merged (TimingState.Shrink) until it fits in what its sequences
// leave of the budget, or in half of it if they leave less, and further,
// down to a quarter, if even with every run length approximate they need
// more. A graph that fits keeps its timing whole: a fixed half for the
// timing during the run coarsened LAMMPS's intervals (0.06 instead of
// 0.005 pp) in a file far under the budget.
func (g *Graph) FitBudgetFrom(budget int64, st *TimingState) *BudgetUse {
	tim := int64(0)
	if g.Timing.Present() {
		tim = packedLen(g.Timing.AppendBinary(nil))
	}
	a, tim := g.fitRuns(budget, tim, st)
	if !a.Fits() {
		g.arrangeToFit(a, tim)
	}
	return a
}

// fitTiming shrinks g's timing, of tim bytes, to the room its sequences
// leave in a, or half the budget if they leave less, and returns its new
// size.
func (g *Graph) fitTiming(a *BudgetUse, tim int64, st *TimingState) int64 {
	seq := a.Bytes - tim
	room := max(a.Budget/2, a.Budget-seq)
	if a.Fits() || st == nil || tim <= room {
		return tim
	}
	tim = g.shrinkTiming(st, room)
	a.Bytes = seq + tim
	return tim
}

// shrinkTiming merges g's timing, which st's Finish gave, to at most room
// bytes (TimingState.Shrink) and returns its new size.
func (g *Graph) shrinkTiming(st *TimingState, room int64) int64 {
	g.Timing = st.Shrink(g.NumEvents, room)
	g.Anchors = g.Timing.Anchors(g.NumEvents)
	return packedLen(g.Timing.AppendBinary(nil))
}

// approximate chooses the fewest groups of poll runs whose lengths, made
// approximate, fit the graph in budget bytes (encode gives its size), and
// tells whether they do; if none do, all of the coarsest.
func (g *Graph) approximate(polls []polled, budget int64, encode func([]runGroup) int64) ([]runGroup, bool) {
	bounds := g.intervalStarts()
	// Coarser groups save more: runs of one interval in stretches of 64,
	// then whole intervals.
	var groups []runGroup
	for _, most := range []int{64, math.MaxInt} {
		groups = runGroups(polls, bounds, most)
		if encode(groups) > budget {
			continue // not even all of them: coarser groups
		}
		return groups[:sort.Search(len(groups), func(k int) bool { return encode(groups[:k]) <= budget })], true
	}
	return groups, false
}

// fitRuns is the first step of FitBudget after fitTiming: poll run
// lengths approximate until the graph fits, or all of them. It returns
// the timing's size.
func (g *Graph) fitRuns(budget, tim int64, st *TimingState) (*BudgetUse, int64) {
	seqs, polls := g.positions()
	if seqs == nil {
		raw, _ := g.storedSeqs()
		g.Budget = &BudgetUse{Budget: budget, Bytes: packedLen(raw) + tim}
		return g.Budget, g.fitTiming(g.Budget, tim, st)
	}
	var raw []byte
	for _, s := range seqs {
		raw = s.AppendBinary(raw)
	}
	a := &BudgetUse{Budget: budget, Bytes: packedLen(raw) + tim}
	g.Budget = a
	for _, p := range polls {
		a.Runs += int64(len(p.lens))
	}
	if tim = g.fitTiming(a, tim, st); a.Fits() {
		return a, tim
	}
	fixed := make([][]byte, len(g.Edges)) // the encoding of each edge that is not a self-loop
	pollOf := make([]int, len(g.Edges))   // the poll of each self-loop, else -1
	for i := range g.Edges {
		pollOf[i] = -1
		if e := &g.Edges[i]; e.Src != e.Dst {
			fixed[i] = seqs[i].AppendBinary(nil)
		}
	}
	for k, p := range polls {
		pollOf[p.edge] = k
	}
	lens := make([][]int64, len(polls))
	encode := func(groups []runGroup) int64 {
		for k, p := range polls {
			lens[k] = append(lens[k][:0], p.lens...)
		}
		for _, gr := range groups {
			even(lens[gr.poll][gr.from:gr.to])
		}
		var b []byte
		for i := range g.Edges {
			if k := pollOf[i]; k >= 0 {
				s := runEnds(lens[k])
				b = s.AppendBinary(b)
			} else {
				b = append(b, fixed[i]...)
			}
		}
		return packedLen(b) + tim
	}
	groups, fits := g.approximate(polls, budget, encode)
	if seq := encode(groups) - tim; !fits && st != nil && budget-seq < tim && tim > budget/4 {
		// Even with every run length approximate the sequences need
		// more than the timing left them: it gives that up too, down
		// to a quarter of the budget (HPCC at 8 ranks: 3 KiB of 64
		// left start times 235 ms off, where the order of the densest
		// intervals costs less: arrangeToFit).
		tim = g.shrinkTiming(st, max(budget-seq, budget/4, MinTimingBytes))
		groups, _ = g.approximate(polls, budget, encode)
	}
	a.Bytes = encode(groups)
	var errs []int64
	for _, gr := range groups {
		p := &polls[gr.poll]
		for r := gr.from; r < gr.to; r++ {
			errs = append(errs, abs(lens[gr.poll][r]-p.lens[r]))
		}
	}
	a.Approximate = int64(len(errs))
	if len(errs) > 0 {
		slices.Sort(errs)
		a.ErrP50, a.ErrP90, a.ErrMax = errs[len(errs)/2], errs[len(errs)*9/10], errs[len(errs)-1]
	}
	// The graph takes the approximate lengths: back to event indices
	// through positions, which keep every other event's order.
	exact := make([]Seq, len(g.Edges))
	for i := range g.Edges {
		exact[i] = g.Edges[i].Seq
	}
	for k, p := range polls {
		seqs[p.edge] = runEnds(lens[k])
	}
	for i := range g.Edges {
		g.Edges[i].Seq = seqs[i]
	}
	if err := g.fromPositions(); err != nil {
		// Positions it made itself cannot be wrong; were they, the
		// recording stays exact rather than the run failing.
		for i := range g.Edges {
			g.Edges[i].Seq = exact[i]
		}
		*a = BudgetUse{Budget: budget, Bytes: packedLen(raw) + tim, Runs: a.Runs}
	}
	return a, tim
}

// packedLen is what raw takes in a file: packed, in a msgpack bin (as
// File.BlockBytes counts it).
func packedLen(raw []byte) int64 {
	n := int64(len(pack(raw)))
	switch {
	case n < 1<<8:
		return n + 2
	case n < 1<<16:
		return n + 3
	}
	return n + 5
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// even gives runs the same length, as far as integers allow, and the
// same total: the first total%n one more.
func even(lens []int64) {
	var total int64
	for _, m := range lens {
		total += m
	}
	n := int64(len(lens))
	for k := range lens {
		lens[k] = total / n
		if int64(k) < total%n {
			lens[k]++
		}
	}
}

// intervalStarts returns the first event of each timing interval after
// the first, ascending.
func (g *Graph) intervalStarts() []int64 {
	var starts []int64
	if !g.Timing.Present() {
		return nil
	}
	it := g.Timing.Intervals()
	for it.Next() {
		if s := it.Interval().Start; s > 0 {
			starts = append(starts, s)
		}
	}
	return starts
}

// runGroups divides the runs of polls into groups of at most most runs of
// one node, each within one timing interval (bounds: the intervals'
// starts), leaving out the runs that cross a start and, in each interval,
// those up to the node's first run of two or more: its self-loop then
// first occurs where it did, so the order of first occurrence of the
// interval's nodes and edges, which its sums follow, stays the same. It
// returns them the most uniform first (the mean absolute deviation of
// their lengths over their mean).
func runGroups(polls []polled, bounds []int64, most int) []runGroup {
	var gs []runGroup
	for pi, p := range polls {
		b := 0
		from := 0
		looped := false // the self-loop occurred in this interval
		flush := func(to int) {
			if to-from >= 2 {
				gs = append(gs, runGroup{poll: pi, from: from, to: to, dev: deviation(p.lens[from:to])})
			}
			from = to
		}
		for r, h := range p.heads {
			end := h + p.lens[r] // the run's events are [h, end)
			if b < len(bounds) && bounds[b] <= h {
				flush(r) // a new interval
				looped = false
				for b < len(bounds) && bounds[b] <= h {
					b++
				}
			}
			if !looped || (b < len(bounds) && bounds[b] < end) {
				// up to the first loop, or across a start: exact
				looped = looped || p.lens[r] >= 2
				flush(r)
				from = r + 1
				continue
			}
			if r-from+1 > most {
				flush(r)
			}
		}
		flush(len(p.heads))
	}
	sort.SliceStable(gs, func(i, j int) bool { return gs[i].dev < gs[j].dev })
	return gs
}

func deviation(lens []int64) float64 {
	var sum float64
	for _, m := range lens {
		sum += float64(m)
	}
	mean := sum / float64(len(lens))
	var d float64
	for _, m := range lens {
		d += math.Abs(float64(m) - mean)
	}
	return d / sum
}
