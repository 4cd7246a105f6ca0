package analysis

import (
	"slices"

	"mpiflow/flowgraph"
	"mpiflow/loops"
)

// variationParts is the number of parts of a run over which an item's time
// per iteration (per call) is taken to see how it varies within the run;
// minParts the fewest parts that tell a variation.
const (
	variationParts = 30
	minParts       = 4
)

// minLoopPart is the fewest iterations in a part of a loop: a part ends
// with a timing interval, which can hold part of an iteration more or
// less than the back edges it counts (a node's calls and their time are
// counted alike), so a part of few iterations varies by that alone.
const minLoopPart = 20

// variationTail is the share of the parts left out at each end of the
// spread: a part that held the start-up or one long descheduling would
// set it alone, while the middle half (the quartiles) fell short of what
// identical runs of the halo on a busy machine differ by (0.66x on
// MPI_Allreduce against its quartiles' 0.23, 2 ranks' MPI_Wait).
const variationTail = 0.05

// rankVariation is how much each loop's time (and compute) per iteration
// and each node's time per call vary within one rank's run (see
// variationOf), by loop ID - 1 and by node index; -1 where it is not
// known.
type rankVariation struct {
	loops, compute, nodes []float64
}

// loop returns the variation of loop id's time and compute, -1 if not
// known.
func (v *rankVariation) loop(id int) (time, compute float64) {
	if v == nil || id < 1 || id > len(v.loops) {
		return -1, -1
	}
	return v.loops[id-1], v.compute[id-1]
}

// node returns the variation of node n, -1 if not known.
func (v *rankVariation) node(n int) float64 {
	if v == nil || n < 0 || n >= len(v.nodes) {
		return -1
	}
	return v.nodes[n]
}

// parts cuts one item's time into parts of about target iterations
// (calls) each, in the order of the run, and keeps each part's time per
// iteration.
type parts struct {
	target float64
	t, n   float64 // the current part's time and iterations
	per    []float32
}

// newParts returns the parts of an item of total iterations (calls), at
// least least of them a part.
func newParts(total int64, least float64) parts {
	return parts{target: max(float64(total)/variationParts, least)}
}

func (p *parts) add(t, n float64) {
	p.t, p.n = p.t+t, p.n+n
	if p.n >= p.target && p.n > 0 {
		p.per = append(p.per, float32(p.t/p.n))
		p.t, p.n = 0, 0
	}
}

// relative is the spread of the parts' times per iteration, between
// their variationTail and 1 - variationTail quantiles, over mean, the
// item's time per iteration over the whole run; -1 with fewer than
// minParts parts.
func (p *parts) relative(mean float64) float64 {
	if p.n >= p.target/2 && p.n > 0 { // the last part, unless a sliver
		p.per = append(p.per, float32(p.t/p.n))
	}
	if len(p.per) < minParts || mean <= 0 {
		return -1
	}
	slices.Sort(p.per)
	q := func(f float64) float64 {
		x := f * float64(len(p.per)-1)
		i := int(x)
		if i+1 >= len(p.per) {
			return float64(p.per[i])
		}
		return float64(p.per[i]) + (x-float64(i))*float64(p.per[i+1]-p.per[i])
	}
	return (q(1-variationTail) - q(variationTail)) / mean
}

// variationOf walks the timing intervals of g, whose loops are c, and
// returns how much each loop's time per iteration and each node's time
// per call vary within the run: in variationParts parts of the item's
// iterations (calls) in order, the spread of the parts' times per
// iteration (all but the extremes: variationTail), relative to the mean. Two runs of one
// program differ by about as much as the parts of one run (a rank that
// shares its core with another, a busy machine), so Diff takes it as a
// bound of noise. Nil when the timing is not made of whole intervals.
func variationOf(g *flowgraph.Graph, c *loops.Collapsed) *rankVariation {
	it, err := g.TimedIntervals()
	if err != nil || c == nil {
		return nil
	}
	lp := make([]parts, len(c.Loops))
	cp := make([]parts, len(c.Loops))        // their compute
	iterEdges := make([][]int, len(g.Edges)) // per edge, the loops it starts an iteration of
	for i := range c.Loops {
		l := &c.Loops[i]
		lp[i], cp[i] = newParts(l.Stats.Iterations, minLoopPart), newParts(l.Stats.Iterations, minLoopPart)
		for _, e := range l.BackEdges {
			iterEdges[e] = append(iterEdges[e], i)
		}
		for _, e := range l.Entries {
			iterEdges[e.Edge] = append(iterEdges[e.Edge], i)
		}
	}
	np := make([]parts, len(g.Nodes))
	for i := range g.Nodes {
		np[i] = newParts(g.Nodes[i].Count, 1)
	}
	// The time, compute and iterations of each loop in the current
	// interval, its nested loops' included (as Stats.Time), and the loops
	// touched.
	t := make([]float64, len(c.Loops))
	ct := make([]float64, len(c.Loops))
	n := make([]float64, len(c.Loops))
	in := make([]bool, len(c.Loops))
	var touched []int
	touch := func(i int) {
		if !in[i] {
			in[i] = true
			touched = append(touched, i)
		}
	}
	for it.Next() {
		for _, s := range it.Nodes {
			for id := c.LoopOf[s.Index]; id > 0; id = c.Loops[id-1].Parent {
				t[id-1] += float64(s.Sum)
				touch(id - 1)
			}
			np[s.Index].add(float64(s.Sum), float64(s.Count))
		}
		for _, s := range it.Edges {
			for id := c.EdgeLevel[s.Index]; id > 0; id = c.Loops[id-1].Parent {
				t[id-1] += float64(s.Sum)
				ct[id-1] += float64(s.Sum)
				touch(id - 1)
			}
			for _, i := range iterEdges[s.Index] {
				n[i] += float64(s.Count)
				touch(i)
			}
		}
		for _, i := range touched {
			lp[i].add(t[i], n[i])
			cp[i].add(ct[i], n[i])
			t[i], ct[i], n[i], in[i] = 0, 0, 0, false
		}
		touched = touched[:0]
	}
	if it.Err() != nil {
		return nil
	}
	v := &rankVariation{loops: make([]float64, len(lp)), compute: make([]float64, len(lp)), nodes: make([]float64, len(np))}
	for i := range lp {
		st := &c.Loops[i].Stats
		v.loops[i] = lp[i].relative(st.TimePerIteration())
		v.compute[i] = cp[i].relative(perIteration(st.EdgeTime, st.Iterations))
	}
	for i := range np {
		nd := &g.Nodes[i]
		v.nodes[i] = np[i].relative(perIteration(nd.Time.Total, nd.Count))
	}
	return v
}

// perIteration is t over n, 0 when n is 0.
func perIteration(t, n int64) float64 {
	if n == 0 {
		return 0
	}
	return float64(t) / float64(n)
}
