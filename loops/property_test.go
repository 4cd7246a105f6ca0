package loops

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
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
// It also returns the walk as call names.
func randomWalkGraph(r *rand.Rand, n, m, steps int) (*flowgraph.Graph, []string) {
	tmpl := randomGraph(r, n, m)
	out := make([][]int, n)
	for _, e := range tmpl.Edges {
		out[e.Src] = append(out[e.Src], e.Dst)
	}
	b := flowgraph.NewBuilder(0, 0)
	v := tmpl.Initial
	var t int64
	var walk []string
	for range steps {
		d := 1 + r.Int64N(20)
		walk = append(walk, fmt.Sprintf("C%d", v))
		b.Add(flowgraph.Call{Key: flowgraph.NodeKey{Call: walk[len(walk)-1], Site: -1}, Enter: t, Exit: t + d, Bytes: int64(v), Partner: -1})
		t += d + 1 + r.Int64N(20)
		if len(out[v]) == 0 {
			break
		}
		v = out[v][r.IntN(len(out[v]))]
	}
	g := b.Graph()
	return &g, walk
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
		var walk []string
		n := 1 + r.IntN(30)
		if iter%2 == 0 {
			g = randomGraph(r, n, r.IntN(3*n+1))
		} else {
			g, walk = randomWalkGraph(r, n, 1+r.IntN(3*n), 1+r.IntN(300))
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
			if !l.Irreducible && walk != nil {
				require.Equal(t, headerVisits(g, c, l.ID), l.Stats.Iterations, "%s: loop %d", name, l.ID)
			}
			if walk != nil {
				checkPerEntry(t, g, walkNodes(g, walk), c, l.ID, mem)
			}
		}
	}
}

// checkPerEntry replays the walk: every step into the loop from outside is
// an entry through that edge and starts an iteration, as does every step to
// the header from inside; Entry.Iterations must match the replay.
func checkPerEntry(t *testing.T, g *flowgraph.Graph, walk []int, c *Collapsed, id int, mem map[int]bool) {
	t.Helper()
	l := c.Loops[id-1]
	splitChild := hasSplitSelfLoop(c, id)
	edge := map[[2]int]int{}
	for i, e := range g.Edges {
		edge[[2]int{e.Src, e.Dst}] = i
	}
	want := map[int]int64{}
	var iterations int64
	cur := -1 // entry edge of the current stay in the loop
	if mem[walk[0]] {
		iterations++
	}
	for k := 1; k < len(walk); k++ {
		u, v := walk[k-1], walk[k]
		switch {
		case !mem[u] && mem[v]:
			cur = edge[[2]int{u, v}]
			want[cur]++
			iterations++
		case mem[u] && v == l.Header && !(splitChild && u == v):
			iterations++
			if cur >= 0 {
				want[cur]++
			}
		}
	}
	require.Equal(t, iterations, l.Stats.Iterations, "loop %d iterations", id)
	got := map[int]int64{}
	for _, e := range l.Entries {
		if e.Iterations != 0 {
			got[e.Edge] = e.Iterations
		}
	}
	require.Equal(t, want, got, "loop %d per-entry iterations", id)
}

// walkNodes maps a walk of call names to node indices.
func walkNodes(g *flowgraph.Graph, walk []string) []int {
	index := map[string]int{}
	for i := range g.Nodes {
		index[g.Nodes[i].Key.Call] = i
	}
	out := make([]int, len(walk))
	for i, name := range walk {
		out[i] = index[name]
	}
	return out
}

// TestPropertyGeneratedPrograms runs the checks on graphs of generated
// programs of nested loops and branches, replaying each execution.
func TestPropertyGeneratedPrograms(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		opt := flowgen.Options{Seed: seed, Events: 3000, Depth: 1 + int(seed%4), Sites: 5 + int(seed%20), Branchy: seed%2 == 0, Counters: 1}
		p := flowgen.New(opt)
		b := p.NewBuilder()
		var keys []flowgraph.NodeKey
		p.Execute(1, func(c flowgraph.Call) {
			b.Add(c)
			keys = append(keys, c.Key)
		})
		gr := b.Graph()
		g := &gr
		c, err := Collapse(g)
		require.NoError(t, err, "seed %d", seed)
		checkInvariants(t, g, c)
		index := map[flowgraph.NodeKey]int{}
		for i := range g.Nodes {
			index[g.Nodes[i].Key] = i
		}
		walk := make([]int, len(keys))
		for i, k := range keys {
			walk[i] = index[k]
		}
		var outer [][]int
		for _, l := range c.Loops {
			mem := map[int]bool{}
			for _, v := range c.Members(l.ID) {
				mem[v] = true
			}
			if l.Parent == 0 {
				outer = append(outer, c.Members(l.ID))
			}
			if !l.Irreducible {
				require.Equal(t, headerVisits(g, c, l.ID), l.Stats.Iterations, "seed %d loop %d", seed, l.ID)
			}
			checkPerEntry(t, g, walk, c, l.ID, mem)
		}
		require.ElementsMatch(t, sccs(g), outer, "seed %d", seed)
	}
}
