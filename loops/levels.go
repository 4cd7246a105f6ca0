package loops

import (
	"fmt"
	"math"

	"mpiflow/flowgraph"
)

// buildLevels fills the nodes and edges of every level. Level nodes are
// numbered globally ("gid"): graph node v is gid v, loop id is gid n+id-1;
// gsrc/gdst hold the gids each drawn edge connects (-1 for back edges);
// gsrc is overwritten.
func buildLevels(c *Collapsed, g *flowgraph.Graph, lv []Level, loopOf, parent []int32, first []int64, gsrc, gdst []int32) error {
	n := len(g.Nodes)
	b := &levelBuilder{c: c, g: g, n: n, nl: len(c.Loops), ng: n + len(c.Loops), loopOf: loopOf, parent: parent, first: first}
	b.sortDrawn(gsrc, gdst)
	b.mergeParallel(gsrc, gdst)
	b.groupByLevel()
	local := make([]int32, b.ng)
	h := readyHeap{first: b.firstOf}
	for id := 0; id <= b.nl; id++ {
		if err := b.orderLevel(id, &lv[id], &h, local); err != nil {
			return err
		}
		b.levelEdges(&lv[id], local)
	}
	return nil
}

// levelBuilder holds the state buildLevels' phases hand on.
type levelBuilder struct {
	c             *Collapsed
	g             *flowgraph.Graph
	n, nl, ng     int // graph nodes, loops, level nodes
	loopOf        []int32
	parent        []int32
	first         []int64
	drawn         int
	sorted        []int   // drawn edges by (src gid, dst gid)
	outStart      []int32 // into sorted, per source gid
	aggStart      []int32 // merged edges of each source gid
	mStart        []int32 // merged edge k covers sorted[mStart[k]:mStart[k+1]]
	mDst          []int32
	mCount, mTime []int64
	indeg         []int32
	lstart        []int32 // members[lstart[id]:lstart[id+1]] are level id's
	members       []int32
}

func (b *levelBuilder) levelOf(gid int32) int32 {
	if int(gid) < b.n {
		return b.loopOf[gid]
	}
	return b.parent[int(gid)-b.n+1]
}

func (b *levelBuilder) firstOf(gid int32) int64 {
	if int(gid) < b.n {
		return b.first[gid]
	}
	if fe := b.c.Loops[int(gid)-b.n].FirstEvent; fe >= 0 {
		return fe
	}
	return math.MaxInt64
}

// sortDrawn sorts the drawn edges by (src gid, dst gid) with two counting
// sorts, so parallel edges become neighbours and each source's edges are
// contiguous.
func (b *levelBuilder) sortDrawn(gsrc, gdst []int32) {
	ng := b.ng
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
	b.drawn, b.sorted, b.outStart = drawn, sorted, outStart
}

// mergeParallel merges parallel edges. aggStart[s]..aggStart[s+1] are the
// merged edges of source gid s; merged edge k covers
// sorted[mStart[k]:mStart[k+1]].
func (b *levelBuilder) mergeParallel(gsrc, gdst []int32) {
	ng, drawn, sorted, outStart := b.ng, b.drawn, b.sorted, b.outStart
	aggStart := make([]int32, ng+1)
	mStart := make([]int32, 0, drawn+1)
	mDst := make([]int32, 0, drawn)
	aggOf := gsrc // reused: gsrc is not needed any more
	for s := 0; s < ng; s++ {
		aggStart[s] = int32(len(mDst))
		prev := int32(-1)
		for k := outStart[s]; k < outStart[s+1]; k++ {
			ei := sorted[k]
			d := gdst[ei]
			if k == outStart[s] || d != prev {
				mStart = append(mStart, k)
				mDst = append(mDst, d)
				prev = d
			}
			aggOf[ei] = int32(len(mDst) - 1)
		}
	}
	aggStart[ng] = int32(len(mDst))
	mStart = append(mStart, int32(drawn))
	// Sum counts and times in edge order: scattered reads of the large
	// Edge structs would cost a cache miss each.
	mCount := make([]int64, len(mDst))
	mTime := make([]int64, len(mDst))
	for i := range b.g.Edges {
		if gdst[i] >= 0 {
			mCount[aggOf[i]] += b.g.Edges[i].Count
			mTime[aggOf[i]] += b.g.Edges[i].Time.Total
		}
	}
	indeg := make([]int32, ng)
	for _, d := range mDst {
		indeg[d]++
	}
	b.aggStart, b.mStart, b.mDst, b.mCount, b.mTime, b.indeg = aggStart, mStart, mDst, mCount, mTime, indeg
}

// groupByLevel groups the level nodes by level.
func (b *levelBuilder) groupByLevel() {
	ng, nl := b.ng, b.nl
	lstart := make([]int32, nl+2)
	for gid := range ng {
		lstart[b.levelOf(int32(gid))+1]++
	}
	for k := 0; k <= nl; k++ {
		lstart[k+1] += lstart[k]
	}
	members := make([]int32, ng)
	fill := make([]int32, nl+1)
	copy(fill, lstart[:nl+1])
	for gid := range ng {
		l := b.levelOf(int32(gid))
		members[fill[l]] = int32(gid)
		fill[l]++
	}
	b.lstart, b.members = lstart, members
}

// orderLevel puts level id's nodes in topological order (Kahn), the
// earliest executed ready node first, and records each one's index in
// local. A node left over means a cycle, which the forest rules out;
// report it rather than draw a wrong graph.
func (b *levelBuilder) orderLevel(id int, l *Level, h *readyHeap, local []int32) error {
	n, aggStart, mDst, indeg := b.n, b.aggStart, b.mDst, b.indeg
	ms := b.members[b.lstart[id]:b.lstart[id+1]]
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
	return nil
}

// levelEdges fills the edges of level l, whose nodes are ordered, from
// the merged edges of its nodes.
func (b *levelBuilder) levelEdges(l *Level, local []int32) {
	n, aggStart := b.n, b.aggStart
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
			idx := b.sorted[b.mStart[k]:b.mStart[k+1]:b.mStart[k+1]]
			l.Edges = append(l.Edges, LevelEdge{Src: si, Dst: int(local[b.mDst[k]]), Edges: idx, Count: b.mCount[k], Time: b.mTime[k]})
		}
	}
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
	// before it, using the sequence numbers. The entries and back edges
	// are fed in the order of their sequence numbers to a machine whose
	// state is the latest entry (-1 before the first: traversals before
	// it belong to the start of the rank, InitialInside, and to no entry
	// edge), which counts each entry and back edge traversal for it;
	// WalkSeqs counts repeated stretches without expanding them.
	if back := l.BackEdges; len(back) == 1 && len(l.Nodes) == 1 && len(l.Children) == 0 &&
		g.Edges[back[0]].Src == l.Header && g.Edges[back[0]].Dst == l.Header {
		// A call repeated back to back: each entry's iterations are
		// the entry and the repeats that follow it.
		entries := make([]int, len(l.Entries))
		for k, e := range l.Entries {
			entries[k] = e.Edge
		}
		runs := g.RunsAfter(back[0], entries)
		if runs == nil {
			markUnknown(l)
			return
		}
		for k, n := range runs {
			l.Entries[k].Iterations = g.Edges[entries[k]].Count + n
		}
		return
	}
	edges := make([]int, 0, len(l.Entries)+len(l.BackEdges))
	for _, e := range l.Entries {
		edges = append(edges, e.Edge)
	}
	edges = append(edges, l.BackEdges...)
	seqs := g.OrderSeqs(edges)
	for k, ei := range edges {
		if seqs[k].Len() != g.Edges[ei].Count {
			markUnknown(l)
			return
		}
	}
	ne := len(l.Entries)
	counts, _ := flowgraph.WalkSeqs(seqs, ne, -1, func(latest, i int) (int, int) {
		if i < ne {
			return i, i
		}
		return latest, latest
	})
	for k := range l.Entries {
		l.Entries[k].Iterations = counts[k]
	}
}

func markUnknown(l *Loop) {
	for k := range l.Entries {
		l.Entries[k].Iterations = -1
	}
}
