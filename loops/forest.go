// Package loops finds the loops of an event flow graph, nests them into a
// loop-nesting forest and collapses every loop into a single loop node, so
// that each level of the program's loop structure is an acyclic graph.
//
// The forest is computed with the depth-first algorithm of Wei, Mao, Zou and
// Chen, "A New Algorithm for Identifying Loops in Decompilation" (SAS 2007):
// one traversal, almost linear time, and it handles irreducible loops (loops
// with more than one entry node). A call repeated back to back (an edge from
// a node to itself) is a loop too.
//
// Collapse numbers the loops by first execution ("Loop N"), gives every loop
// its own acyclic level graph in which nested loops are single loop nodes,
// and accumulates per-loop statistics such that every level adds up exactly
// to the time of the loop it belongs to (see Collapsed). LoopKeys and
// GroupTree compare loops across ranks.
package loops

import (
	"fmt"

	"mpiflow/flowgraph"
)

// Forest is the loop-nesting forest of a graph, one entry per graph node.
//
// A loop is identified by its header node. The members of the loop headed by
// h are h and every node whose chain of Header links reaches h.
type Forest struct {
	// Header is the header of the innermost loop that contains the node
	// without being headed by it, -1 if there is none. For a loop header
	// this is the header of the enclosing loop, so following Header from
	// any node walks outward through all loops containing it.
	Header []int
	// IsHeader marks the loop headers.
	IsHeader []bool
	// Irreducible marks headers of loops that are entered at more than one
	// node (the header and at least one re-entry node).
	Irreducible []bool
	// ReEntry marks nodes other than a header through which a loop is
	// entered from outside.
	ReEntry []bool
	// SelfLoop marks nodes with an edge to themselves. Such a node is
	// always a header: a call repeated back to back is a loop.
	SelfLoop []bool
	// Preorder is the position of each node in the depth-first traversal
	// (0 for the first root). Every node is visited: nodes the initial
	// node does not reach become further roots, in index order.
	Preorder []int
}

// csr is a compressed adjacency list: the successors of node v are
// dst[start[v]:start[v+1]], in edge index order. Keeping the successors
// themselves, not edge indices, saves a cache miss per edge in the DFS.
type csr struct {
	start []int32
	dst   []int32
}

// outEdges builds the adjacency list of g after checking that every edge
// refers to existing nodes.
func outEdges(g *flowgraph.Graph) (csr, error) {
	n := len(g.Nodes)
	// Nodes and loop nodes share one int32 numbering in the collapse.
	if n >= 1<<30 || len(g.Edges) >= 1<<31-1 {
		return csr{}, fmt.Errorf("graph too large: %d nodes, %d edges", n, len(g.Edges))
	}
	c := csr{start: make([]int32, n+1), dst: make([]int32, len(g.Edges))}
	for i := range g.Edges {
		e := &g.Edges[i]
		if e.Src < 0 || e.Src >= n || e.Dst < 0 || e.Dst >= n {
			return csr{}, fmt.Errorf("edge %d (%d -> %d) refers to a node outside 0..%d", i, e.Src, e.Dst, n-1)
		}
		c.start[e.Src+1]++
	}
	for v := 0; v < n; v++ {
		c.start[v+1] += c.start[v]
	}
	fill := make([]int32, n)
	copy(fill, c.start[:n])
	for i := range g.Edges {
		s := g.Edges[i].Src
		c.dst[fill[s]] = int32(g.Edges[i].Dst)
		fill[s]++
	}
	return c, nil
}

// NewForest computes the loop-nesting forest of g. The traversal starts at
// g.Initial and then at every node not reached yet, in index order. It uses
// an explicit stack, so arbitrarily long paths do not overflow the goroutine
// stack. It fails only on malformed graphs (edges to missing nodes).
func NewForest(g *flowgraph.Graph) (*Forest, error) {
	adj, err := outEdges(g)
	if err != nil {
		return nil, err
	}
	n := len(g.Nodes)
	if g.Initial >= n || g.Initial < -1 {
		return nil, fmt.Errorf("initial node %d outside 0..%d", g.Initial, n-1)
	}
	w := wmzc{
		adj:    adj,
		pos:    make([]int32, n),
		header: make([]int32, n),
		pre:    make([]int32, n),
		flags:  make([]uint8, n),
	}
	for i := range w.header {
		w.header[i] = -1
		w.pre[i] = -1
	}
	if g.Initial >= 0 {
		w.dfs(int32(g.Initial))
	}
	for v := range n {
		if w.pre[v] < 0 {
			w.dfs(int32(v))
		}
	}
	f := &Forest{
		Header:      make([]int, n),
		IsHeader:    make([]bool, n),
		Irreducible: make([]bool, n),
		ReEntry:     make([]bool, n),
		SelfLoop:    make([]bool, n),
		Preorder:    make([]int, n),
	}
	for v := range n {
		f.Header[v] = int(w.header[v])
		fl := w.flags[v]
		f.IsHeader[v] = fl&flagHeader != 0
		f.Irreducible[v] = fl&flagIrreducible != 0
		f.ReEntry[v] = fl&flagReEntry != 0
		f.SelfLoop[v] = fl&flagSelf != 0
		f.Preorder[v] = int(w.pre[v])
	}
	return f, nil
}

const (
	flagHeader uint8 = 1 << iota
	flagIrreducible
	flagReEntry
	flagSelf
)

// wmzc holds the state of the traversal. pos is the 1-based depth of a node
// on the current DFS path and 0 when the node is not on it (never visited or
// finished); pre tells the two apart.
type wmzc struct {
	adj    csr
	pos    []int32
	header []int32
	pre    []int32
	flags  []uint8
	npre   int32
	stack  []frame
}

// frame is one node on the DFS path and the next of its out-edges to look at.
type frame struct {
	node int32
	next int32
}

// dfs runs the traversal from root. The recursion of the paper is unrolled:
// returning from a child is the moment its innermost header is woven into
// the parent's header chain.
func (w *wmzc) dfs(root int32) {
	w.enter(root)
	for len(w.stack) > 0 {
		top := &w.stack[len(w.stack)-1]
		b0 := top.node
		if top.next == w.adj.start[b0+1] {
			// Finished: leave the path and hand the innermost
			// header to the parent.
			w.pos[b0] = 0
			w.stack = w.stack[:len(w.stack)-1]
			if len(w.stack) > 0 {
				w.tagHead(w.stack[len(w.stack)-1].node, w.header[b0])
			}
			continue
		}
		b := w.adj.dst[top.next]
		top.next++
		switch {
		case w.pre[b] < 0:
			// Tree edge: descend; the tagging happens on return.
			w.enter(b)
		case w.pos[b] > 0:
			// Edge to a node on the path: b heads a loop that
			// contains b0.
			w.flags[b] |= flagHeader
			if b == b0 {
				w.flags[b] |= flagSelf
			}
			w.tagHead(b0, b)
		case w.header[b] < 0:
			// Edge to a finished node outside any loop: nothing.
		default:
			h := w.header[b]
			if w.pos[h] > 0 {
				// b is in a loop still on the path: b0 is in it too.
				w.tagHead(b0, h)
				break
			}
			// b is inside a finished loop that b0 enters other
			// than through its header: a re-entry. The loop and
			// every enclosing loop not on the path is irreducible;
			// the first enclosing loop on the path contains b0.
			w.flags[b] |= flagReEntry
			w.flags[h] |= flagIrreducible
			for w.header[h] >= 0 {
				h = w.header[h]
				if w.pos[h] > 0 {
					w.tagHead(b0, h)
					break
				}
				w.flags[h] |= flagIrreducible
			}
		}
	}
}

func (w *wmzc) enter(v int32) {
	w.pre[v] = w.npre
	w.npre++
	w.stack = append(w.stack, frame{node: v, next: w.adj.start[v]})
	w.pos[v] = int32(len(w.stack))
}

// tagHead weaves header h into the header chain of b, keeping the chain
// ordered from the deepest header on the DFS path to the shallowest.
func (w *wmzc) tagHead(b, h int32) {
	if b == h || h < 0 {
		return
	}
	cur1, cur2 := b, h
	for w.header[cur1] >= 0 {
		ih := w.header[cur1]
		if ih == cur2 {
			return
		}
		if w.pos[ih] < w.pos[cur2] {
			w.header[cur1] = cur2
			cur1, cur2 = cur2, ih
		} else {
			cur1 = ih
		}
	}
	w.header[cur1] = cur2
}
