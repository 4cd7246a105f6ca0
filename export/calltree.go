package export

import (
	"cmp"
	"path/filepath"
	"slices"

	"mpiflow/analysis"
	"mpiflow/flowgraph"
	"mpiflow/loops"
)

// TreeKind tells what a node of a CallTree stands for.
type TreeKind uint8

// Kinds of call tree nodes.
const (
	// TreeProgram is the root: the program the ranks run.
	TreeProgram TreeKind = iota
	// TreeLoop is a loop of the collapsed graph, under the loop (or the
	// program) it is nested in.
	TreeLoop
	// TreeCall is an MPI call at one call site.
	TreeCall
	// TreeCompute is the compute time of a level: the graph's edges
	// (compute phases between calls) that the level holds.
	TreeCompute
)

// ComputeName is the name of the compute node of every level.
const ComputeName = "compute"

// CallTree is the collapsed event flow graphs of a job's ranks as one call
// tree: the program at the root, then the loops as the loop-nesting forest
// nests them, and under each loop (or the program) its MPI calls, one node
// per call and call site, and one compute node for the compute phases
// inside it. The ranks share the tree (nodes of the same name under the
// same parent are one node), each with its values on the nodes it has.
//
// Values are exclusive and exact: a call node holds the time, calls and
// bytes of its graph nodes, a compute node the time and counters of its
// level's edges (back edges included), loops and the program nothing of
// their own. A rank's values so add up to its total time (every node and
// edge of its graph), its calls to its events, and a call's values over the
// ranks to that call's in the job's summary (analysis.Job.Calls). Unlike
// the drawn levels (analysis.Level), no level is capped.
type CallTree struct {
	Header flowgraph.Header
	// Nodes are in creation order: a parent comes before its children;
	// Nodes[0] is the root.
	Nodes []TreeNode
	// Blocks are the job's ranks (one per rank and thread), in its order.
	Blocks []TreeBlock
	// index finds a node by parent and name.
	index map[treeKey]int
}

type treeKey struct {
	parent int
	name   string
}

// TreeNode is one node of a CallTree.
type TreeNode struct {
	Kind TreeKind
	// Name is the node's label: the program's name, "loop MPI_Waitall at
	// exchange halo.c:88" (a loop by its header's call and call site, as
	// mpiflow loops names the header; loopName), "MPI_Send at exchange
	// halo.c:42" (call and call site), or ComputeName.
	Name string
	// Parent indexes CallTree.Nodes, -1 for the root.
	Parent int
	// Depth is 0 for the root, 1 for its children, ...
	Depth int
	// Call is the MPI call of a call node, the header's of a loop.
	Call string
	// Function, File and Line locate the call site of a call node (the
	// header's of a loop) as the objects' debug information resolved it:
	// empty when it could not. The program's File is its executable.
	Function string
	File     string
	Line     int
}

// TreeBlock is one rank (or thread of a rank) of a CallTree.
type TreeBlock struct {
	Rank, Thread int
	// Values are the block's values on the nodes it has, by ascending
	// node: every ancestor of a node it has is there too.
	Values []TreeValue
}

// TreeValue is what a block has on one node, exclusive of its children.
type TreeValue struct {
	Node int
	// Time is in ns; Calls counts MPI calls (call nodes only); Bytes the
	// bytes they moved.
	Time, Calls, Bytes int64
	// Counters are the sums of the job's counters (Header.Counters) over
	// the compute phases of a compute node; nil elsewhere.
	Counters []int64
}

// NewCallTree builds the call tree of the ranks of job. It needs the
// ranks' loops (a job loaded without analysis.Options.NoLoops, or whose
// loops FindLoops found); a rank whose loop analysis failed, or whose loops
// are not there, is one level: its calls and one compute node under the
// root.
func NewCallTree(job *analysis.Job) *CallTree {
	t := &CallTree{Header: job.Header, index: map[treeKey]int{}}
	exe := job.Header.Executable
	if exe == "" && len(job.Header.Command) > 0 {
		exe = job.Header.Command[0]
	}
	name := filepath.Base(exe)
	if exe == "" {
		name = "program"
	}
	t.Nodes = append(t.Nodes, TreeNode{Kind: TreeProgram, Name: name, Parent: -1, File: exe})
	for _, r := range job.Ranks {
		t.Blocks = append(t.Blocks, t.block(r, len(job.Header.Counters)))
	}
	return t
}

// node returns the child of parent named name, adding it if new.
func (t *CallTree) node(parent int, kind TreeKind, name string, g *flowgraph.Graph, v int) int {
	k := treeKey{parent, name}
	if i, ok := t.index[k]; ok {
		return i
	}
	n := TreeNode{Kind: kind, Name: name, Parent: parent, Depth: t.Nodes[parent].Depth + 1}
	if v >= 0 {
		key := &g.Nodes[v].Key
		n.Call = key.Call
		if s := key.Site; s >= 0 && s < len(g.Sites) {
			cs := &g.Sites[s]
			n.Function, n.File, n.Line = cs.Function, cs.File, cs.Line
		}
	}
	t.Nodes = append(t.Nodes, n)
	t.index[k] = len(t.Nodes) - 1
	return len(t.Nodes) - 1
}

// block adds the nodes of rank r and returns its values. Nodes are added
// as the levels of the collapse order them (by first execution), each
// level's loops in their place and its compute node last.
func (t *CallTree) block(r *analysis.Rank, ncounters int) TreeBlock {
	g := &r.Graph
	c := r.Collapsed
	vals := map[int]*TreeValue{0: {Node: 0}}
	val := func(node int) *TreeValue {
		v := vals[node]
		if v == nil {
			v = &TreeValue{Node: node}
			vals[node] = v
		}
		return v
	}
	// at is the tree node of each graph node, compute that of each
	// level's compute phases (by loop ID, 0: the top level).
	at := make([]int, len(g.Nodes))
	for v := range at {
		at[v] = -1
	}
	var compute []int
	edgeLevel := func(int) int { return 0 }
	if c != nil && len(c.EdgeLevel) == len(g.Edges) {
		edgeLevel = func(e int) int { return c.EdgeLevel[e] }
		compute = make([]int, len(c.Levels))
		for id := range compute {
			compute[id] = -1
		}
		hasEdges := make([]bool, len(c.Levels))
		for _, id := range c.EdgeLevel {
			if id >= 0 && id < len(hasEdges) {
				hasEdges[id] = true
			}
		}
		var walk func(id, parent int, seen []bool)
		walk = func(id, parent int, seen []bool) {
			if id < 0 || id >= len(c.Levels) || seen[id] {
				return
			}
			seen[id] = true
			for _, ln := range c.Levels[id].Nodes {
				switch {
				case ln.Loop > 0 && ln.Loop <= len(c.Loops):
					l := c.Loop(ln.Loop)
					n := t.node(parent, TreeLoop, loopName(g, l), g, l.Header)
					val(n)
					walk(ln.Loop, n, seen)
				case ln.Loop == 0 && ln.Node >= 0 && ln.Node < len(at):
					at[ln.Node] = t.node(parent, TreeCall, loops.HeaderLabel(g, ln.Node), g, ln.Node)
				}
			}
			if hasEdges[id] {
				compute[id] = t.node(parent, TreeCompute, ComputeName, nil, -1)
			}
		}
		walk(0, 0, make([]bool, len(c.Levels)))
	}
	for v := range g.Nodes {
		if at[v] < 0 { // not collapsed, or in no level
			at[v] = t.node(0, TreeCall, loops.HeaderLabel(g, v), g, v)
		}
		n := &g.Nodes[v]
		x := val(at[v])
		x.Time += n.Time.Total
		x.Calls += n.Count
		x.Bytes += n.Bytes.Total
	}
	for i := range g.Edges {
		e := &g.Edges[i]
		node := -1
		if id := edgeLevel(i); id >= 0 && id < len(compute) {
			node = compute[id]
		}
		if node < 0 {
			node = t.node(0, TreeCompute, ComputeName, nil, -1)
		}
		x := val(node)
		x.Time += e.Time.Total
		if ncounters > 0 && x.Counters == nil {
			x.Counters = make([]int64, ncounters)
		}
		for k, v := range e.Counters {
			if k < ncounters {
				x.Counters[k] += v
			}
		}
	}
	b := TreeBlock{Rank: r.Rank.Rank, Thread: r.Thread, Values: make([]TreeValue, 0, len(vals))}
	for _, v := range vals {
		b.Values = append(b.Values, *v)
	}
	slices.SortFunc(b.Values, func(a, b TreeValue) int { return cmp.Compare(a.Node, b.Node) })
	return b
}

// loopName names a loop by its header, as the loop tables do, without its
// number: the numbers follow each rank's first executions, and one loop
// must be one node for every rank and every run of an ensemble (a loop's
// header heads no sibling loop; a self-loop nests in the loop it starts).
func loopName(g *flowgraph.Graph, l *loops.Loop) string {
	name := "loop " + loops.HeaderLabel(g, l.Header)
	if l.SelfLoop {
		name += " [self]"
	}
	return name
}

// Path returns the nodes from node up to the root, node first.
func (t *CallTree) Path(node int) []int {
	var out []int
	for ; node >= 0; node = t.Nodes[node].Parent {
		out = append(out, node)
	}
	return out
}

// Inclusive returns the inclusive time of each of b's values (in the order
// of b.Values): its own and that of every node below it.
func (t *CallTree) Inclusive(b *TreeBlock) []int64 {
	at := make(map[int]int, len(b.Values))
	inc := make([]int64, len(b.Values))
	for i, v := range b.Values {
		at[v.Node] = i
		inc[i] = v.Time
	}
	// Children come after their parents.
	for i := len(b.Values) - 1; i >= 0; i-- {
		if p := t.Nodes[b.Values[i].Node].Parent; p >= 0 {
			if k, ok := at[p]; ok {
				inc[k] += inc[i]
			}
		}
	}
	return inc
}
