package loops

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
)

// randomGraph returns a graph of n nodes with about m random edges (self
// edges, parallel paths and unreachable parts included), without sequence
// numbers.
func randomGraph(r *rand.Rand, n, m int) *flowgraph.Graph {
	g := &flowgraph.Graph{Initial: r.IntN(n)}
	for i := range n {
		g.Nodes = append(g.Nodes, flowgraph.Node{
			Key:   flowgraph.NodeKey{Call: fmt.Sprintf("C%d", i), Site: -1},
			Count: 1 + r.Int64N(5), Time: flowgraph.Stat{Total: r.Int64N(1000)},
			Bytes: flowgraph.Stat{Total: r.Int64N(100)},
		})
	}
	seen := map[[2]int]bool{}
	for range m {
		u := r.IntN(n)
		v := r.IntN(n)
		if r.IntN(3) > 0 { // mostly short hops, as in real programs
			v = (u + 1 + r.IntN(3)) % n
		}
		if seen[[2]int{u, v}] {
			continue
		}
		seen[[2]int{u, v}] = true
		g.Edges = append(g.Edges, flowgraph.Edge{Src: u, Dst: v, Count: 1 + r.Int64N(9), Time: flowgraph.Stat{Total: r.Int64N(1000)},
			Counters: []int64{r.Int64N(50)}})
	}
	return g
}

// randomWalkGraph records a random walk of steps events over a random
// graph of n call sites with the Builder, so edges carry sequence numbers.
func randomWalkGraph(r *rand.Rand, n, m, steps int) *flowgraph.Graph {
	tmpl := randomGraph(r, n, m)
	out := make([][]int, n)
	for _, e := range tmpl.Edges {
		out[e.Src] = append(out[e.Src], e.Dst)
	}
	b := flowgraph.NewBuilder(0, 0)
	v := tmpl.Initial
	var t int64
	for range steps {
		d := 1 + r.Int64N(20)
		b.Add(flowgraph.Call{Key: flowgraph.NodeKey{Call: fmt.Sprintf("C%d", v), Site: -1}, Enter: t, Exit: t + d, Bytes: int64(v), Partner: -1})
		t += d + 1 + r.Int64N(20)
		if len(out[v]) == 0 {
			break
		}
		v = out[v][r.IntN(len(out[v]))]
	}
	g := b.Graph()
	return &g
}

// sccs returns the strongly connected components of g that contain a
// cycle (more than one node, or a self edge), each sorted.
func sccs(g *flowgraph.Graph) [][]int {
	n := len(g.Nodes)
	adj := make([][]int, n)
	self := make([]bool, n)
	for _, e := range g.Edges {
		adj[e.Src] = append(adj[e.Src], e.Dst)
		if e.Src == e.Dst {
			self[e.Src] = true
		}
	}
	index := make([]int, n)
	low := make([]int, n)
	on := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int
	var out [][]int
	next := 0
	var visit func(v int)
	visit = func(v int) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		on[v] = true
		for _, w := range adj[v] {
			if index[w] < 0 {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var comp []int
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			if len(comp) > 1 || self[v] {
				sort.Ints(comp)
				out = append(out, comp)
			}
		}
	}
	for v := range n {
		if index[v] < 0 {
			visit(v)
		}
	}
	return out
}

// reachesWithin reports whether every node of set can reach, and be
// reached from, h using only edges between nodes of set.
func stronglyConnectedWithin(g *flowgraph.Graph, set map[int]bool, h int) bool {
	reach := func(forward bool) int {
		seen := map[int]bool{h: true}
		queue := []int{h}
		for len(queue) > 0 {
			x := queue[0]
			queue = queue[1:]
			for _, e := range g.Edges {
				a, b := e.Src, e.Dst
				if !forward {
					a, b = b, a
				}
				if a == x && set[b] && !seen[b] {
					seen[b] = true
					queue = append(queue, b)
				}
			}
		}
		return len(seen)
	}
	return reach(true) == len(set) && reach(false) == len(set)
}

func TestPropertyRandomGraphs(t *testing.T) {
	r := rand.New(rand.NewPCG(2007, 42))
	for iter := range 400 {
		var g *flowgraph.Graph
		n := 1 + r.IntN(30)
		if iter%2 == 0 {
			g = randomGraph(r, n, r.IntN(3*n+1))
		} else {
			g = randomWalkGraph(r, n, 1+r.IntN(3*n), 1+r.IntN(300))
		}
		name := fmt.Sprintf("graph %d (%d nodes, %d edges)", iter, len(g.Nodes), len(g.Edges))
		c, err := Collapse(g)
		require.NoError(t, err, name)
		checkInvariants(t, g, c)

		// Outermost loops are exactly the cyclic strongly connected
		// components.
		var outer [][]int
		for _, l := range c.Loops {
			if l.Parent == 0 {
				outer = append(outer, c.Members(l.ID))
			}
		}
		require.ElementsMatch(t, sccs(g), outer, name)

		for _, l := range c.Loops {
			mem := map[int]bool{}
			for _, v := range c.Members(l.ID) {
				mem[v] = true
			}
			require.True(t, stronglyConnectedWithin(g, mem, l.Header), "%s: loop %d is not strongly connected", name, l.ID)
			if l.Parent != 0 {
				for v := range mem {
					require.Contains(t, c.Members(l.Parent), v, "%s: loop %d not inside its parent", name, l.ID)
				}
			}
			// In a loop entered only at its header, every iteration
			// starts with a visit of the header.
			if !l.Irreducible && len(g.Edges) > 0 && g.Edges[0].Seq != nil {
				require.Equal(t, g.Nodes[l.Header].Count, l.Stats.Iterations, "%s: loop %d", name, l.ID)
			}
		}
	}
}
