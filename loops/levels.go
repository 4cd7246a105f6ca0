package loops

import (
	"fmt"
	"math"
	"sort"

	"mpiflow/flowgraph"
)

// buildLevels fills the nodes and edges of every level. Level nodes are
// numbered globally ("gid"): graph node v is gid v, loop id is gid n+id-1;
// gsrc/gdst hold the gids each drawn edge connects (-1 for back edges).
func buildLevels(c *Collapsed, g *flowgraph.Graph, lv []Level, loopOf, parent []int32, first []int64, gsrc, gdst []int32) error {
	n := len(g.Nodes)
	nl := len(c.Loops)
	ng := n + nl
	levelOf := func(gid int32) int32 {
		if int(gid) < n {
			return loopOf[gid]
		}
		return parent[int(gid)-n+1]
	}
	firstOf := func(gid int32) int64 {
		if int(gid) < n {
			return first[gid]
		}
		if fe := c.Loops[int(gid)-n].FirstEvent; fe >= 0 {
			return fe
		}
		return math.MaxInt64
	}

	// Sort the drawn edges by (src gid, dst gid) with two counting sorts,
	// so parallel edges become neighbours and each source's edges are
	// contiguous.
	var drawn int
	cnt := make([]int32, ng+1)
	for _, d := range gdst {
		if d >= 0 {
			cnt[d+1]++
			drawn++
		}
	}
	for k := 0; k < ng; k++ {
		cnt[k+1] += cnt[k]
	}
	byDst := make([]int32, drawn)
	for i, d := range gdst {
		if d >= 0 {
			byDst[cnt[d]] = int32(i)
			cnt[d]++
		}
	}
	clear(cnt)
	for _, i := range byDst {
		cnt[gsrc[i]+1]++
	}
	for k := 0; k < ng; k++ {
		cnt[k+1] += cnt[k]
	}
	outStart := make([]int32, ng+1) // into sorted, per source gid
	copy(outStart, cnt)
	sorted := make([]int, drawn)
	for _, i := range byDst {
		s := gsrc[i]
		sorted[cnt[s]] = int(i)
		cnt[s]++
	}

	// Merge parallel edges. aggStart[s]..aggStart[s+1] are the merged
	// edges of source gid s; merged edge k covers sorted[mStart[k]:mStart[k+1]].
	aggStart := make([]int32, ng+1)
	var mStart, mDst []int32
	for s := 0; s < ng; s++ {
		aggStart[s] = int32(len(mDst))
		for k := outStart[s]; k < outStart[s+1]; k++ {
			d := gdst[sorted[k]]
			if k == outStart[s] || d != gdst[sorted[k-1]] {
				mStart = append(mStart, k)
				mDst = append(mDst, d)
			}
		}
	}
	aggStart[ng] = int32(len(mDst))
	mStart = append(mStart, int32(drawn))
	indeg := make([]int32, ng)
	for _, d := range mDst {
		indeg[d]++
	}

	// Group level nodes by level.
	lstart := make([]int32, nl+2)
	for gid := range ng {
		lstart[levelOf(int32(gid))+1]++
	}
	for k := 0; k <= nl; k++ {
		lstart[k+1] += lstart[k]
	}
	members := make([]int32, ng)
	fill := make([]int32, nl+1)
	copy(fill, lstart[:nl+1])
	for gid := range ng {
		l := levelOf(int32(gid))
		members[fill[l]] = int32(gid)
		fill[l]++
	}

	// Topological order per level (Kahn), the earliest executed ready
	// node first. A node left over means a cycle, which the forest rules
	// out; report it rather than draw a wrong graph.
	local := make([]int32, ng)
	h := readyHeap{first: firstOf}
	for id := 0; id <= nl; id++ {
		ms := members[lstart[id]:lstart[id+1]]
		l := &lv[id]
		l.Nodes = make([]LevelNode, 0, len(ms))
		h.items = h.items[:0]
		for _, gid := range ms {
			if indeg[gid] == 0 {
				h.push(gid)
			}
		}
		for len(h.items) > 0 {
			gid := h.pop()
			local[gid] = int32(len(l.Nodes))
			if int(gid) < n {
				l.Nodes = append(l.Nodes, LevelNode{Node: int(gid)})
			} else {
				l.Nodes = append(l.Nodes, LevelNode{Node: -1, Loop: int(gid) - n + 1})
			}
			for k := aggStart[gid]; k < aggStart[gid+1]; k++ {
				d := mDst[k]
				indeg[d]--
				if indeg[d] == 0 {
					h.push(d)
				}
			}
		}
		if len(l.Nodes) != len(ms) {
			return fmt.Errorf("level %d of the collapsed graph is cyclic (%d of %d nodes ordered)", id, len(l.Nodes), len(ms))
		}
		var ne int
		for _, x := range l.Nodes {
			gid := x.Node
			if x.Loop > 0 {
				gid = n + x.Loop - 1
			}
			ne += int(aggStart[gid+1] - aggStart[gid])
		}
		l.Edges = make([]LevelEdge, 0, ne)
		for si, x := range l.Nodes {
			gid := x.Node
			if x.Loop > 0 {
				gid = n + x.Loop - 1
			}
			for k := aggStart[gid]; k < aggStart[gid+1]; k++ {
				idx := sorted[mStart[k]:mStart[k+1]:mStart[k+1]]
				le := LevelEdge{Src: si, Dst: int(local[mDst[k]]), Edges: idx}
				for _, ei := range idx {
					le.Count += g.Edges[ei].Count
					le.Time += g.Edges[ei].Time.Total
				}
				l.Edges = append(l.Edges, le)
			}
		}
	}
	return nil
}

// readyHeap is a binary min-heap of level node gids keyed by first
// execution, then gid.
type readyHeap struct {
	items []int32
	first func(int32) int64
}

func (h *readyHeap) less(a, b int32) bool {
	fa, fb := h.first(a), h.first(b)
	if fa != fb {
		return fa < fb
	}
	return a < b
}

func (h *readyHeap) push(x int32) {
	h.items = append(h.items, x)
	i := len(h.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(h.items[i], h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *readyHeap) pop() int32 {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < last && h.less(h.items[l], h.items[m]) {
			m = l
		}
		if r < last && h.less(h.items[r], h.items[m]) {
			m = r
		}
		if m == i {
			return top
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
}

// attributeIterations fills Entry.Iterations of loop l, whose Stats,
// Entries and BackEdges are complete.
func attributeIterations(g *flowgraph.Graph, l *Loop) {
	if len(l.Entries) == 0 {
		return
	}
	if len(l.Entries) == 1 && !l.InitialInside {
		l.Entries[0].Iterations = l.Stats.Iterations
		return
	}
	// Several ways in: give each back edge traversal to the latest entry
	// before it, using the sequence numbers.
	seqOK := func(ei int) bool { return g.Edges[ei].Seq.Len() == g.Edges[ei].Count }
	for _, e := range l.Entries {
		if !seqOK(e.Edge) {
			markUnknown(l)
			return
		}
	}
	for _, b := range l.BackEdges {
		if !seqOK(b) {
			markUnknown(l)
			return
		}
	}
	type event struct {
		seq   int64
		entry int
	}
	var evs []event
	for k, e := range l.Entries {
		g.Edges[e.Edge].Seq.All(func(s int64) bool {
			evs = append(evs, event{s, k})
			return true
		})
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].seq < evs[j].seq })
	counters := make([]runCounter, len(l.BackEdges))
	for k, b := range l.BackEdges {
		counters[k] = newRunCounter(g.Edges[b].Seq)
	}
	for i, ev := range evs {
		hi := int64(math.MaxInt64)
		if i+1 < len(evs) {
			hi = evs[i+1].seq
		}
		it := int64(1)
		for k := range counters {
			it += counters[k].below(hi) - counters[k].below(ev.seq)
		}
		l.Entries[ev.entry].Iterations += it
	}
}

func markUnknown(l *Loop) {
	for k := range l.Entries {
		l.Entries[k].Iterations = -1
	}
}

// runCounter counts the sequence numbers of a SeqRuns below a bound.
type runCounter struct {
	runs   flowgraph.SeqRuns
	before []int64 // numbers in runs[:k]
}

func newRunCounter(r flowgraph.SeqRuns) runCounter {
	rc := runCounter{runs: r, before: make([]int64, len(r)+1)}
	for k, x := range r {
		rc.before[k+1] = rc.before[k] + x.Count
	}
	return rc
}

// below is the number of stored sequence numbers < x.
func (rc *runCounter) below(x int64) int64 {
	// First run starting at or after x.
	k := sort.Search(len(rc.runs), func(i int) bool { return rc.runs[i].Start >= x })
	if k == 0 {
		return 0
	}
	r := rc.runs[k-1]
	in := r.Count
	if r.Count > 1 && r.Last() >= x {
		in = (x-r.Start-1)/r.Stride + 1
	}
	return rc.before[k-1] + in
}
