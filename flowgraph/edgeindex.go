package flowgraph

import (
	"math"
	"sort"
)

// edgeIndex answers IntervalIter's queries on one edge's sequence numbers
// (event indices): from an index of its Seq, or for a graph read by
// File.ReadLazy without mapping them, from an index of its stored
// positions (an edge that is not a self-loop) or from its runs (a
// self-loop). Mapping a polled rank's positions was most of the time of
// timing its intervals.
type edgeIndex struct {
	x *seqIndex // event indices, or positions when m is set
	m *posMap   // maps x's positions to event indices
	// self: a self-loop of a lazy graph; its traversals are the blocks
	// runs of sm ([start(k), end(k))), before[k] those of runs[:k].
	self   bool
	sm     *posMap
	runs   []int32
	before []int64
}

// start is the first traversal of self-loop run k.
func (x *edgeIndex) start(k int) int64 {
	j := x.runs[k]
	return x.sm.keys[j] + x.sm.before[j]
}

// end is the traversal after self-loop run k.
func (x *edgeIndex) end(k int) int64 {
	j := x.runs[k]
	return x.sm.keys[j] + x.sm.before[j+1]
}

// edgeCursor walks an edge's numbers from where edgeIndex.seek put it.
type edgeCursor struct {
	val int64 // the current number, math.MaxInt64 past the last
	w   walkCursor
	k   int // self: the current run; positions: the blocks at or below w.val
}

// edgeIndexes returns an index of each edge of g.
func edgeIndexes(g *Graph) []edgeIndex {
	ix := make([]edgeIndex, len(g.Edges))
	m := g.lazy
	if m == nil {
		for i := range g.Edges {
			ix[i].x = newSeqIndex(&g.Edges[i].Seq)
		}
		return ix
	}
	for i := range g.Edges {
		if e := &g.Edges[i]; e.Src == e.Dst {
			runs := m.byEdge[i]
			x := edgeIndex{self: true, sm: m, runs: runs, before: make([]int64, len(runs)+1)}
			for k, j := range runs {
				x.before[k+1] = x.before[k] + m.count(int(j))
			}
			ix[i] = x
		} else {
			ix[i] = edgeIndex{x: newSeqIndex(&m.pos[i]), m: m}
		}
	}
	return ix
}

// run is the first run of a self-loop that ends after v, len(start) if
// none.
func (x *edgeIndex) run(v int64) int {
	return sort.Search(len(x.runs), func(k int) bool { return x.end(k) > v })
}

// succ is the smallest number at least v, math.MaxInt64 if none.
func (x *edgeIndex) succ(v int64) int64 {
	switch {
	case x.self:
		if k := x.run(v); k < len(x.runs) {
			return max(v, x.start(k))
		}
		return math.MaxInt64
	case x.m != nil:
		if p := x.x.succ(x.m.ceil(v)); p != math.MaxInt64 {
			return x.m.index(p)
		}
		return math.MaxInt64
	}
	return x.x.succ(v)
}

// rank is the number of numbers below v.
func (x *edgeIndex) rank(v int64) int64 {
	switch {
	case x.self:
		k := x.run(v)
		if k < len(x.runs) {
			return x.before[k] + max(0, v-x.start(k))
		}
		return x.before[k]
	case x.m != nil:
		return x.x.rank(x.m.ceil(v))
	}
	return x.x.rank(v)
}

// seek positions c at the smallest number at least v.
func (x *edgeIndex) seek(c *edgeCursor, v int64) {
	switch {
	case x.self:
		c.k = x.run(v)
		c.val = math.MaxInt64
		if c.k < len(x.runs) {
			c.val = max(v, x.start(c.k))
		}
	case x.m != nil:
		x.x.seek(&c.w, x.m.ceil(v))
		c.k = sort.Search(len(x.m.keys), func(j int) bool { return x.m.keys[j] > c.w.val })
		c.setPos(x.m)
	default:
		x.x.seek(&c.w, v)
		c.val = c.w.val
	}
}

// next moves c to the next number.
func (x *edgeIndex) next(c *edgeCursor) {
	switch {
	case x.self:
		if c.val++; c.val == x.end(c.k) {
			if c.k++; c.k < len(x.runs) {
				c.val = x.start(c.k)
			} else {
				c.val = math.MaxInt64
			}
		}
	case x.m != nil:
		c.w.Next()
		// Every edge's cursor passes the blocks between its numbers:
		// galloping keeps that O(log) per number, not O(blocks).
		keys, p := x.m.keys, c.w.val
		if c.k < len(keys) && keys[c.k] <= p {
			step := 1
			for c.k+step < len(keys) && keys[c.k+step] <= p {
				c.k += step
				step *= 2
			}
			hi := min(c.k+step, len(keys))
			c.k += sort.Search(hi-c.k, func(j int) bool { return keys[c.k+j] > p })
		}
		c.setPos(x.m)
	default:
		c.w.Next()
		c.val = c.w.val
	}
}

// contiguous is how many numbers from c's on follow one another (at least
// 1, unless c is past the last), as far as c's current run shows them.
func (x *edgeIndex) contiguous(c *edgeCursor) int64 {
	switch {
	case c.val == math.MaxInt64:
		return 0
	case x.self:
		return x.end(c.k) - c.val
	case x.m == nil && c.w.stride == 1:
		return c.w.left
	}
	return 1
}

// skip moves c by n numbers, of which contiguous must have counted n.
func (x *edgeIndex) skip(c *edgeCursor, n int64) {
	if n <= 0 {
		return
	}
	switch {
	case x.self:
		c.val += n - 1
	case x.m == nil:
		c.w.val += n - 1
		c.w.left -= n - 1
		c.val = c.w.val
	default:
		for range n - 1 {
			x.next(c)
		}
	}
	x.next(c)
}

// setPos sets c's number from its position, c.k being the blocks at or
// below it.
func (c *edgeCursor) setPos(m *posMap) {
	c.val = math.MaxInt64
	if c.w.val != math.MaxInt64 {
		c.val = c.w.val + m.before[c.k]
	}
}

// ceil is the smallest position whose event index is at least v (v >= 0).
func (m *posMap) ceil(v int64) int64 { return m.query(v, 0).p }

// edgeHint is where IntervalIter.Next's queries on an edge last found its
// numbers, and how many there are below its next one: the queries only
// move forward, so each searches from there.
type edgeHint struct {
	root  int   // the top-level term of x
	run   int   // a self-loop's run
	below int64 // the edge's numbers below IntervalIter.nxt
}

// numQuery is a number v and, for a graph read by File.ReadLazy, the
// smallest position p whose event index is at least v (posMap.ceil) and
// the blocks j at or below p: what every edge's query on v shares.
type numQuery struct {
	v, p int64
	j    int
}

// query returns the numQuery of v, searching m's blocks from hint.
func (m *posMap) query(v int64, hint int) numQuery {
	if m == nil {
		return numQuery{v: v, p: v}
	}
	j := searchFrom(len(m.keys), hint, func(j int) bool { return m.keys[j]+m.before[j] > v })
	q := numQuery{v: v, p: v, j: j}
	switch {
	case j == 0:
	case v < m.keys[j-1]+m.before[j]: // in block j-1: the position after it
		q.p = m.keys[j-1]
	default:
		q.p = v - m.before[j]
	}
	return q
}

// rankFrom is rank(q.v), searched from h.
func (x *edgeIndex) rankFrom(h *edgeHint, q numQuery) int64 {
	switch {
	case x.self:
		k := x.runFrom(h, q.v)
		if k < len(x.runs) {
			return x.before[k] + max(0, q.v-x.start(k))
		}
		return x.before[k]
	case x.m != nil:
		h.root = x.x.rootFrom(h.root, q.p)
		return x.x.rankIn(h.root, q.p)
	}
	h.root = x.x.rootFrom(h.root, q.v)
	return x.x.rankIn(h.root, q.v)
}

// succFrom is succ(q.v), searched from h.
func (x *edgeIndex) succFrom(h *edgeHint, q numQuery) int64 {
	switch {
	case x.self:
		if k := x.runFrom(h, q.v); k < len(x.runs) {
			return max(q.v, x.start(k))
		}
		return math.MaxInt64
	case x.m != nil:
		h.root = x.x.rootFrom(h.root, q.p)
		p := x.x.succIn(h.root, q.p)
		if p == math.MaxInt64 {
			return p
		}
		// Its blocks are at least q's.
		keys := x.m.keys
		return p + x.m.before[searchFrom(len(keys), q.j, func(j int) bool { return keys[j] > p })]
	}
	h.root = x.x.rootFrom(h.root, q.v)
	return x.x.succIn(h.root, q.v)
}

// runFrom is run(v), searched from h, which it moves there.
func (x *edgeIndex) runFrom(h *edgeHint, v int64) int {
	h.run = searchFrom(len(x.runs), h.run, func(k int) bool { return x.end(k) > v })
	return h.run
}
