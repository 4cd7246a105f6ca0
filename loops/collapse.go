package loops

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	"mpiflow/flowgraph"
)

// Collapsed is a graph whose loops have been collapsed level by level.
//
// Loops are numbered 1..len(Loops) by first execution (see Loop.FirstEvent);
// Loops[i] has ID i+1 and ID 0 stands for the top level, the part of the
// program outside every loop. Levels[0] is the top level and Levels[id] the
// inside of loop id.
//
// Time accounting, which makes every level add up exactly:
//   - A node's time counts at the level of its innermost loop (LoopOf).
//   - An edge's time counts at the level of the innermost loop that holds
//     both of its ends (EdgeLevel): an entry or exit edge belongs to the
//     level that holds the loop node it connects, not to the loop itself.
//   - A back edge of loop L (from inside L to L's header) counts at L's own
//     level as Level.BackTime; it is not drawn, it is what makes iterations.
//   - A loop's Stats.Time is the sum of everything at its level plus the
//     Stats.Time of its child loops, and a level's Total() (nodes + drawn
//     edges + back edges + child loop nodes) equals the Stats.Time of its loop,
//     or Collapsed.Total for the top level.
//
// So a loop's time is that of its nodes and of the edges between them, back
// edges included, and the time of entering and leaving it is outside. The
// iterations of a loop are its back edge traversals plus its entries.
type Collapsed struct {
	Loops  []Loop  `json:"loops"`
	Levels []Level `json:"levels"`
	// LoopOf is, per graph node, the ID of the innermost loop containing
	// it (0: top level). A header's innermost loop is the loop it heads,
	// or that loop's nested self-loop (see Loop.Header).
	LoopOf []int `json:"loop_of"`
	// EdgeLevel is, per graph edge, the ID of the level the edge belongs
	// to: the innermost loop containing both of its ends (0: top level).
	EdgeLevel []int `json:"edge_level"`
	// Total is the rank's total time: all node times plus all edge times.
	Total int64 `json:"total"`
	// Init is the time inside MPI_Init or MPI_Init_thread, start-up cost
	// that loop shares leave out, as mpiflow stats does (flowgraph.IsInit).
	Init int64 `json:"init"`
	// NumCounters is the number of counter sums per edge and loop.
	NumCounters int `json:"counters"`
}

// Loop is one loop of the graph with its place in the nesting tree.
type Loop struct {
	ID   int    `json:"id"`
	Name string `json:"name"` // "Loop <ID>"
	// Header is the graph node that heads the loop. Two loops share a
	// header when a call repeated back to back (a self-loop) starts the
	// body of a larger loop: the nested one holds only the header and
	// the edge to itself, the larger one the rest.
	Header int `json:"header"`
	// Parent is the ID of the enclosing loop, 0 for an outermost loop.
	Parent int `json:"parent"`
	// Children are the IDs of the loops directly nested in this one, in
	// ID order.
	Children []int `json:"children"`
	// Depth is 1 for an outermost loop, 2 for a loop nested in it, ...
	Depth int `json:"depth"`
	// Nodes are the graph nodes whose innermost loop this is, ascending;
	// see Collapsed.Members for all nodes including nested loops.
	Nodes []int `json:"nodes"`
	// Entries are the edges from outside the loop to a node inside it.
	Entries []Entry `json:"entries"`
	// Exits are the indices of the edges from inside the loop to outside.
	Exits []int `json:"exits"`
	// BackEdges are the indices of the edges from inside the loop to its
	// header.
	BackEdges []int `json:"back_edges"`
	// InitialInside is set when the rank's first event lies in the loop:
	// the loop was entered once without an entry edge.
	InitialInside bool `json:"initial_inside"`
	// Irreducible is set when the loop can be entered at more than one node.
	Irreducible bool `json:"irreducible"`
	// SelfLoop is set when the loop is a call repeated back to back: the
	// header's edge to itself is one of the loop's back edges.
	SelfLoop bool `json:"self_loop"`
	// FirstEvent is the index of the first event inside the loop (the
	// smallest sequence number of an edge into one of its nodes, or 0 if
	// it holds the initial node); -1 when the edges carry no sequence
	// numbers. Loops are numbered by (FirstEvent, Depth, DFS preorder of
	// the header), with unknown FirstEvent last, so an enclosing loop
	// always has a smaller ID than the loops nested in it.
	FirstEvent int64 `json:"first_event"`
	Stats      Stats `json:"stats"`
}

// Entry is one entry edge of a loop.
type Entry struct {
	Edge  int   `json:"edge"`
	Count int64 `json:"count"` // how often the loop was entered through it
	// Iterations is how many iterations began with an entry through this
	// edge: the entries themselves plus the back edge traversals before
	// the next entry of the loop. -1 when the edges carry no sequence
	// numbers and the loop has more than one way in.
	Iterations int64 `json:"iterations"`
}

// Stats are the accumulated statistics of a loop, nested loops included.
type Stats struct {
	// Iterations is the number of back edge traversals plus entries.
	Iterations int64 `json:"iterations"`
	// Entries is the number of times the loop was entered (entry edge
	// traversals, plus one if the first event of the rank is inside).
	Entries int64 `json:"entries"`
	// Calls is the number of MPI calls (node visits) inside.
	Calls int64 `json:"calls"`
	// NodeTime is the time spent inside MPI calls, EdgeTime the time of
	// the compute phases between calls inside the loop (back edges
	// included, entry and exit edges excluded); Time is their sum.
	NodeTime int64 `json:"node_time"`
	EdgeTime int64 `json:"edge_time"`
	Time     int64 `json:"time"`
	// Bytes is the sum of the bytes moved by the calls inside.
	Bytes int64 `json:"bytes"`
	// Counters are the counter sums of the edges inside.
	Counters []int64 `json:"counters"`
	// Share is Time divided by the rank's time after MPI_Init
	// (Collapsed.Total - Collapsed.Init).
	Share float64 `json:"share"`
}

// TimePerIteration is the average time of one iteration in ns.
func (s *Stats) TimePerIteration() float64 { return perIter(s.Time, s.Iterations) }

// CallsPerIteration is the average number of MPI calls per iteration.
func (s *Stats) CallsPerIteration() float64 { return perIter(s.Calls, s.Iterations) }

// BytesPerIteration is the average number of bytes moved per iteration.
func (s *Stats) BytesPerIteration() float64 { return perIter(s.Bytes, s.Iterations) }

// CountersPerIteration are the average counter values per iteration.
func (s *Stats) CountersPerIteration() []float64 {
	out := make([]float64, len(s.Counters))
	for i, c := range s.Counters {
		out[i] = perIter(c, s.Iterations)
	}
	return out
}

func perIter(v, n int64) float64 {
	if n == 0 {
		return 0
	}
	return float64(v) / float64(n)
}

// Level is one level of the collapsed graph: the top level or the inside of
// one loop. It is acyclic.
type Level struct {
	// Loop is the ID of the loop whose inside this is, 0 for the top level.
	Loop int `json:"loop"`
	// Nodes are the graph nodes whose innermost loop this is and the
	// loop nodes of the directly nested loops, in topological order
	// (ties broken by first execution).
	Nodes []LevelNode `json:"nodes"`
	// Edges are the edges between Nodes; parallel graph edges (e.g. two
	// exits of a nested loop to the same node) are merged into one.
	Edges []LevelEdge `json:"edges"`
	// BackEdges are the graph edges to this level's loop header that are
	// not drawn (they make the loop's iterations).
	BackEdges []int `json:"back_edges"`
	// NodeTime is the time of the plain nodes, EdgeTime that of the drawn
	// edges, BackTime that of the back edges and LoopTime the Stats.Time
	// of the loop nodes.
	NodeTime int64 `json:"node_time"`
	EdgeTime int64 `json:"edge_time"`
	BackTime int64 `json:"back_time"`
	LoopTime int64 `json:"loop_time"`
}

// Total is the time accounted at this level: NodeTime + EdgeTime + BackTime
// + LoopTime.
func (l *Level) Total() int64 { return l.NodeTime + l.EdgeTime + l.BackTime + l.LoopTime }

// LevelNode is a node of a level: a graph node (Loop == 0) or the loop node
// of a nested loop (Loop > 0, Node == -1).
type LevelNode struct {
	Node int `json:"node"`
	Loop int `json:"loop"`
}

// LevelEdge is an edge of a level between two of its nodes (indices into
// Level.Nodes), standing for the graph edges listed in Edges.
type LevelEdge struct {
	Src   int   `json:"src"`
	Dst   int   `json:"dst"`
	Edges []int `json:"edges"`
	Count int64 `json:"count"`
	Time  int64 `json:"time"`
}

// Collapse computes the loop-nesting forest of g and collapses it. It fails
// only on malformed graphs.
func Collapse(g *flowgraph.Graph) (*Collapsed, error) {
	f, err := NewForest(g)
	if err != nil {
		return nil, err
	}
	return collapse(g, f)
}

// Members returns all graph nodes of loop id, nested loops included,
// ascending.
func (c *Collapsed) Members(id int) []int {
	var out []int
	stack := []int{id}
	for len(stack) > 0 {
		l := &c.Loops[stack[len(stack)-1]-1]
		stack = stack[:len(stack)-1]
		out = append(out, l.Nodes...)
		stack = append(stack, l.Children...)
	}
	sort.Ints(out)
	return out
}

// Loop returns the loop with the given ID, nil if there is none.
func (c *Collapsed) Loop(id int) *Loop {
	if id < 1 || id > len(c.Loops) {
		return nil
	}
	return &c.Loops[id-1]
}

// collapse collapses g along the forest f that NewForest computed from it
// (so the graph's edges have been checked).
func collapse(g *flowgraph.Graph, f *Forest) (*Collapsed, error) {
	k := &collapser{g: g, f: f, n: len(g.Nodes), c: &Collapsed{}}
	for i := range g.Edges {
		k.c.NumCounters = max(k.c.NumCounters, len(g.Edges[i].Counters))
	}
	if err := k.provisionalLoops(); err != nil {
		return nil, err
	}
	k.firstExecutions()
	k.orderLoops()
	k.loopTree()
	k.fillLoops()
	k.levelSums()
	k.classifyEdges()
	k.listEdges()
	k.accumulate()
	if err := buildLevels(k.c, g, k.lv, k.loopOf, k.tr.parent, k.first, k.gsrc, k.gdst); err != nil {
		return nil, err
	}
	k.c.Levels = k.lv
	return k.c, nil
}

// collapser holds the state collapse's phases hand on: the loops first
// under provisional indices t (by header index, then the split self-loops),
// then under final IDs 1 to nl (0 is the top level).
type collapser struct {
	g *flowgraph.Graph
	f *Forest
	c *Collapsed
	n int

	headers []int32 // header node of each provisional loop
	tmpOf   []int32 // provisional loop a header heads, -1
	selfOf  []int32 // provisional index of a header's split self-loop, -1
	nh, nl  int     // loops but the split self-loops, all loops
	tparent []int32 // parent of a provisional loop, -1: top level
	tloopOf []int32 // innermost provisional loop of a node, -1
	tdepth  []int32

	first  []int64 // first event of every node
	tfirst []int64 // first event of every provisional loop
	order  []int32 // provisional loops in ID order
	idOf   []int32 // final ID of each provisional loop

	tr     tree
	header []int32 // header node of each loop ID, -1 for the root
	loopOf []int32 // innermost loop ID of each node, 0: top level

	ctrs []int64 // the loops' counters: accumulated, then own-level sums
	lv   []Level
	own  []Stats // each loop's sums at its own level

	gsrc, gdst   []int32 // level node ids of each edge, -1 for back edges
	backs, exits buckets[int]
	entries      buckets[Entry]
}

func (k *collapser) isSplit(t int32) bool { return int(t) >= k.nh }

// provisionalLoops numbers the loops by header, splits off self-loops,
// and finds each loop's parent and depth and each node's loop.
func (k *collapser) provisionalLoops() error {
	f, n := k.f, k.n
	k.tmpOf = make([]int32, n)
	for v := range n {
		k.tmpOf[v] = -1
		if f.IsHeader[v] {
			k.tmpOf[v] = int32(len(k.headers))
			k.headers = append(k.headers, int32(v))
		}
	}
	k.splitSelfLoops()
	nl := len(k.headers)
	k.nl = nl
	k.tparent = make([]int32, nl) // -1: top level
	for t, h := range k.headers {
		k.tparent[t] = -1
		if k.isSplit(int32(t)) {
			k.tparent[t] = k.tmpOf[h]
			continue
		}
		if p := f.Header[h]; p >= 0 {
			if p >= n || !f.IsHeader[p] {
				return fmt.Errorf("forest: header %d of node %d is not a loop header", p, h)
			}
			k.tparent[t] = k.tmpOf[p]
		}
	}
	k.tloopOf = make([]int32, n)
	for v := range n {
		switch {
		case f.IsHeader[v] && k.selfOf[v] >= 0:
			k.tloopOf[v] = k.selfOf[v]
		case f.IsHeader[v]:
			k.tloopOf[v] = k.tmpOf[v]
		case f.Header[v] >= 0:
			if !f.IsHeader[f.Header[v]] {
				return fmt.Errorf("forest: header %d of node %d is not a loop header", f.Header[v], v)
			}
			k.tloopOf[v] = k.tmpOf[f.Header[v]]
		default:
			k.tloopOf[v] = -1
		}
	}
	var err error
	k.tdepth, err = depths(k.tparent)
	return err
}

// splitSelfLoops gives a header with an edge to itself that also heads a
// larger loop a second loop, nested in the larger one and holding only the
// header. Such a header is a call repeated back to back at the top of that
// loop's body (e.g. a loop of MPI_Irecv as the first statement of the time
// step loop); the forest has one loop per header, and without the split
// the larger loop's iterations would count the repetitions.
func (k *collapser) splitSelfLoops() {
	f, n := k.f, k.n
	hasBody := make([]bool, n)
	for v := range n {
		if h := f.Header[v]; h >= 0 && h < n {
			hasBody[h] = true
		}
	}
	k.selfOf = make([]int32, n)
	k.nh = len(k.headers)
	for _, h := range k.headers[:k.nh] {
		k.selfOf[h] = -1
		if f.SelfLoop[h] && hasBody[h] {
			k.selfOf[h] = int32(len(k.headers))
			k.headers = append(k.headers, h)
		}
	}
}

// firstExecutions finds the first event of every node and of the nodes
// of every loop.
func (k *collapser) firstExecutions() {
	g, n, nl := k.g, k.n, k.nl
	first := make([]int64, n)
	for v := range first {
		first[v] = math.MaxInt64
	}
	if g.Initial >= 0 && g.Initial < n {
		first[g.Initial] = 0
	}
	for i := range g.Edges {
		e := &g.Edges[i]
		if f := g.FirstEvent(i); f >= 0 && f < first[e.Dst] {
			first[e.Dst] = f
		}
	}
	tfirst := make([]int64, nl)
	for t := range tfirst {
		tfirst[t] = math.MaxInt64
	}
	for v := range n {
		if t := k.tloopOf[v]; t >= 0 {
			tfirst[t] = min(tfirst[t], first[v])
		}
	}
	k.first, k.tfirst = first, tfirst
}

// orderLoops carries each loop's first event up to its ancestors and
// numbers the loops by first event, depth and header preorder.
func (k *collapser) orderLoops() {
	nl, tdepth, tparent, tfirst := k.nl, k.tdepth, k.tparent, k.tfirst
	// Deepest loops first, so each minimum reaches the root.
	byDepth := make([]int32, nl)
	for t := range byDepth {
		byDepth[t] = int32(t)
	}
	slices.SortFunc(byDepth, func(a, b int32) int { return cmp.Compare(tdepth[b], tdepth[a]) })
	for _, t := range byDepth {
		if p := tparent[t]; p >= 0 {
			tfirst[p] = min(tfirst[p], tfirst[t])
		}
	}
	order := byDepth // reuse: sort into ID order
	slices.SortFunc(order, func(a, b int32) int {
		if c := cmp.Compare(tfirst[a], tfirst[b]); c != 0 {
			return c
		}
		if c := cmp.Compare(tdepth[a], tdepth[b]); c != 0 {
			return c
		}
		return cmp.Compare(k.f.Preorder[k.headers[a]], k.f.Preorder[k.headers[b]])
	})
	k.idOf = make([]int32, nl)
	for i, t := range order {
		k.idOf[t] = int32(i + 1)
	}
	k.order = order
}

// loopTree builds the loop tree under final IDs; 0 is the root (top level).
func (k *collapser) loopTree() {
	nl := k.nl
	k.tr = tree{parent: make([]int32, nl+1), depth: make([]int32, nl+1)}
	k.header = make([]int32, nl+1)
	k.header[0] = -1
	for t := range nl {
		id := k.idOf[t]
		k.header[id] = k.headers[t]
		if p := k.tparent[t]; p >= 0 {
			k.tr.parent[id] = k.idOf[p]
		}
		k.tr.depth[id] = k.tdepth[t] + 1
	}
	k.tr.build()
	k.loopOf = make([]int32, k.n)
	for v := range k.n {
		if t := k.tloopOf[v]; t >= 0 {
			k.loopOf[v] = k.idOf[t]
		}
	}
}

// fillLoops sets the loops' fields known from the tree, and their nodes
// and children.
func (k *collapser) fillLoops() {
	c, f, n, nl := k.c, k.f, k.n, k.nl
	c.Loops = make([]Loop, nl)
	nc := c.NumCounters
	k.ctrs = make([]int64, 2*(nl+1)*nc) // accumulated, then own-level sums
	for id := 1; id <= nl; id++ {
		t := k.order[id-1]
		l := &c.Loops[id-1]
		l.ID = id
		l.Name = "Loop " + strconv.Itoa(id)
		l.Header = int(k.header[id])
		l.Parent = int(k.tr.parent[id])
		l.Depth = int(k.tr.depth[id])
		if k.isSplit(t) {
			l.SelfLoop = true
		} else {
			l.Irreducible = f.Irreducible[l.Header]
			l.SelfLoop = f.SelfLoop[l.Header] && k.selfOf[l.Header] < 0
		}
		l.FirstEvent = k.tfirst[t]
		if l.FirstEvent == math.MaxInt64 {
			l.FirstEvent = -1
		}
		l.Stats.Counters = k.ctrs[id*nc : (id+1)*nc : (id+1)*nc]
	}
	c.LoopOf = make([]int, n)
	direct := newBuckets[int](nl + 1)
	for v := range n {
		c.LoopOf[v] = int(k.loopOf[v])
		direct.count(k.loopOf[v])
	}
	direct.alloc()
	for v := range n {
		direct.put(k.loopOf[v], v)
	}
	for id := 1; id <= nl; id++ {
		c.Loops[id-1].Nodes = direct.get(id)
	}
	loopChildren(c.Loops)
}

// levelSums starts the per level sums (level id 0 is the top) with the
// nodes' times.
func (k *collapser) levelSums() {
	nl, nc := k.nl, k.c.NumCounters
	lv := make([]Level, nl+1)
	for id := range lv {
		lv[id].Loop = id
	}
	own := make([]Stats, nl+1)
	for id := range own {
		off := (nl + 1 + id) * nc
		own[id].Counters = k.ctrs[off : off+nc : off+nc]
	}
	for v := range k.n {
		nd := &k.g.Nodes[v]
		id := k.loopOf[v]
		lv[id].NodeTime += nd.Time.Total
		own[id].Calls += nd.Count
		own[id].Bytes += nd.Bytes.Total
		own[id].NodeTime += nd.Time.Total
	}
	k.lv, k.own = lv, own
}

// rep is the node standing for v at the level of loop level: v itself or
// the child loop of level that holds it (numbered after the n nodes).
func (k *collapser) rep(v int32, level int32) int32 {
	l := k.loopOf[v]
	if l == level {
		return v
	}
	return int32(k.n) + k.tr.climb(l, k.tr.depth[level]+1) - 1
}

// classifyEdges finds the level each edge belongs to, back edges, the
// level nodes it connects, and counts the loops it enters and leaves.
func (k *collapser) classifyEdges() {
	g, c, nl, tr, loopOf, lv, own := k.g, k.c, k.nl, &k.tr, k.loopOf, k.lv, k.own
	ne := len(g.Edges)
	c.EdgeLevel = make([]int, ne)
	k.gsrc = make([]int32, ne)
	k.gdst = make([]int32, ne)
	k.backs = newBuckets[int](nl + 1)
	k.entries = newBuckets[Entry](nl + 1)
	k.exits = newBuckets[int](nl + 1)
	for i := range g.Edges {
		e := &g.Edges[i]
		u, v := int32(e.Src), int32(e.Dst)
		a, b := loopOf[u], loopOf[v]
		level := tr.lca(a, b)
		c.EdgeLevel[i] = int(level)
		for x := a; x != level; x = tr.parent[x] {
			k.exits.count(x)
		}
		for x := b; x != level; x = tr.parent[x] {
			k.entries.count(x)
			own[x].Entries += e.Count
		}
		own[level].EdgeTime += e.Time.Total
		for j, ctr := range e.Counters {
			own[level].Counters[j] += ctr
		}
		if level != 0 && v == k.header[level] {
			k.backs.count(level)
			lv[level].BackTime += e.Time.Total
			own[level].Iterations += e.Count
			k.gsrc[i], k.gdst[i] = -1, -1
			continue
		}
		lv[level].EdgeTime += e.Time.Total
		k.gsrc[i], k.gdst[i] = k.rep(u, level), k.rep(v, level)
	}
	if g.Initial >= 0 {
		for x := loopOf[g.Initial]; x != 0; x = tr.parent[x] {
			c.Loops[x-1].InitialInside = true
			own[x].Entries++
		}
	}
}

// listEdges fills the per-loop lists of back edges, entries and exits,
// sized by classifyEdges.
func (k *collapser) listEdges() {
	g, tr, loopOf := k.g, &k.tr, k.loopOf
	k.backs.alloc()
	k.entries.alloc()
	k.exits.alloc()
	for i := range g.Edges {
		e := &g.Edges[i]
		level := int32(k.c.EdgeLevel[i])
		for x := loopOf[e.Src]; x != level; x = tr.parent[x] {
			k.exits.put(x, i)
		}
		for x := loopOf[e.Dst]; x != level; x = tr.parent[x] {
			k.entries.put(x, Entry{Edge: i, Count: e.Count})
		}
		if k.gsrc[i] < 0 {
			k.backs.put(level, i)
		}
	}
}

// accumulate sums the loops' statistics bottom-up (children have larger
// IDs) and hands each loop its edge lists.
func (k *collapser) accumulate() {
	g, c, lv := k.g, k.c, k.lv
	c.Total, c.Init = 0, 0
	for v := range g.Nodes {
		c.Total += g.Nodes[v].Time.Total
		if flowgraph.IsInit(g.Nodes[v].Key.Call) {
			c.Init += g.Nodes[v].Time.Total
		}
	}
	for i := range g.Edges {
		c.Total += g.Edges[i].Time.Total
	}
	for id := k.nl; id >= 1; id-- {
		s := &k.own[id]
		s.Iterations += s.Entries
		s.Time = s.NodeTime + s.EdgeTime
		l := &c.Loops[id-1]
		st := &l.Stats
		st.Iterations, st.Entries = s.Iterations, s.Entries
		addStats(st, s)
		if run := c.Total - c.Init; run > 0 {
			st.Share = float64(st.Time) / float64(run)
		}
		lv[l.Parent].LoopTime += st.Time
		if l.Parent != 0 {
			ps := &c.Loops[l.Parent-1].Stats
			addStats(ps, st)
		}
		l.BackEdges = k.backs.get(id)
		l.Exits = k.exits.get(id)
		l.Entries = k.entries.get(id)
		attributeIterations(g, l)
		lv[id].BackEdges = l.BackEdges
	}
}

// addStats adds s's calls, times, bytes and counters to st.
func addStats(st, s *Stats) {
	st.Calls += s.Calls
	st.NodeTime += s.NodeTime
	st.EdgeTime += s.EdgeTime
	st.Time += s.Time
	st.Bytes += s.Bytes
	for k := range s.Counters {
		st.Counters[k] += s.Counters[k]
	}
}

// depths returns the depth (0 for outermost) of every loop given the parent
// of each (-1 for none), without recursion, and fails on a cycle.
func depths(parent []int32) ([]int32, error) {
	d := make([]int32, len(parent))
	for i := range d {
		d[i] = -1
	}
	var path []int32
	for t := range parent {
		x := int32(t)
		for x >= 0 && d[x] < 0 {
			d[x] = -2 // on the path
			path = append(path, x)
			x = parent[x]
		}
		if x >= 0 && d[x] == -2 {
			return nil, fmt.Errorf("forest: loop headers form a cycle at node index %d", x)
		}
		base := int32(-1)
		if x >= 0 {
			base = d[x]
		}
		for k := len(path) - 1; k >= 0; k-- {
			base++
			d[path[k]] = base
		}
		path = path[:0]
	}
	return d, nil
}

// loopChildren fills the Children lists from the Parent links.
func loopChildren(ls []Loop) {
	cnt := make([]int, len(ls)+1)
	for i := range ls {
		cnt[ls[i].Parent]++
	}
	for i := range ls {
		if k := cnt[ls[i].ID]; k > 0 {
			ls[i].Children = make([]int, 0, k)
		}
	}
	for i := range ls {
		if p := ls[i].Parent; p != 0 {
			ls[p-1].Children = append(ls[p-1].Children, ls[i].ID)
		}
	}
}

// buckets groups values by a small integer key in one backing array,
// keeping their order: count every key, alloc, then put every value.
type buckets[T any] struct {
	start []int32
	fill  []int32
	vals  []T
}

func newBuckets[T any](nkeys int) buckets[T] {
	return buckets[T]{start: make([]int32, nkeys+1)}
}

func (b *buckets[T]) count(k int32) { b.start[k+1]++ }

func (b *buckets[T]) alloc() {
	nk := len(b.start) - 1
	for k := 0; k < nk; k++ {
		b.start[k+1] += b.start[k]
	}
	b.fill = make([]int32, nk)
	copy(b.fill, b.start[:nk])
	b.vals = make([]T, b.start[nk])
}

func (b *buckets[T]) put(k int32, v T) {
	b.vals[b.fill[k]] = v
	b.fill[k]++
}

func (b *buckets[T]) get(k int) []T {
	lo, hi := b.start[k], b.start[k+1]
	if lo == hi {
		return nil
	}
	return b.vals[lo:hi:hi]
}

// tree is the loop tree with level-ancestor and lowest-common-ancestor
// queries. Node 0 is the root. Jump pointers are only built for deep trees;
// shallow ones (the usual case) are climbed one step at a time.
type tree struct {
	parent []int32
	depth  []int32
	up     [][]int32 // up[k][x] is the 2^k-th ancestor of x
}

const maxClimb = 64

func (t *tree) build() {
	var maxDepth int32
	for _, d := range t.depth {
		maxDepth = max(maxDepth, d)
	}
	if maxDepth <= maxClimb {
		return
	}
	t.up = [][]int32{t.parent}
	for span := int32(2); span <= maxDepth; span *= 2 {
		prev := t.up[len(t.up)-1]
		next := make([]int32, len(prev))
		for x := range prev {
			next[x] = prev[prev[x]]
		}
		t.up = append(t.up, next)
	}
}

// climb returns the ancestor of x at depth d <= depth(x).
func (t *tree) climb(x, d int32) int32 {
	diff := t.depth[x] - d
	if t.up == nil {
		for ; diff > 0; diff-- {
			x = t.parent[x]
		}
		return x
	}
	for k := 0; diff > 0; k++ {
		if diff&1 != 0 {
			x = t.up[k][x]
		}
		diff >>= 1
	}
	return x
}

func (t *tree) lca(a, b int32) int32 {
	if t.depth[a] > t.depth[b] {
		a = t.climb(a, t.depth[b])
	} else {
		b = t.climb(b, t.depth[a])
	}
	if a == b {
		return a
	}
	if t.up == nil {
		for a != b {
			a, b = t.parent[a], t.parent[b]
		}
		return a
	}
	for k := len(t.up) - 1; k >= 0; k-- {
		if t.up[k][a] != t.up[k][b] {
			a, b = t.up[k][a], t.up[k][b]
		}
	}
	return t.parent[a]
}
