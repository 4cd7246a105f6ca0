package loops

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"mpiflow/flowgraph"
)

// bigGraph generates a program-like graph of n nodes and about m edges: a
// chain of calls, nested loops over blocks of it (back edges from a block's
// end to its start, up to 6 levels), and inside each innermost loop
// forward branches, continues (jumps to the loop's header) and breaks
// (jumps to just after the loop), plus a few gotos into the middle of
// other loops, which make irreducible loops.
func bigGraph(seed uint64, n, m int) *flowgraph.Graph {
	r := rand.New(rand.NewPCG(seed, 1))
	g := &flowgraph.Graph{Initial: 0, Nodes: make([]flowgraph.Node, n)}
	for i := range g.Nodes {
		g.Nodes[i] = flowgraph.Node{Key: flowgraph.NodeKey{Call: "MPI_Send", Site: -1}, Count: 1, Time: flowgraph.Stat{Total: r.Int64N(1000)}}
	}
	g.Edges = make([]flowgraph.Edge, 0, m)
	add := func(u, v int) {
		g.Edges = append(g.Edges, flowgraph.Edge{Src: u, Dst: v, Count: 1, Time: flowgraph.Stat{Total: r.Int64N(1000)},
			Seq: flowgraph.SeqOf(1 + r.Int64N(int64(10*m)))})
	}
	for i := 0; i+1 < n; i++ {
		add(i, i+1)
	}
	type block struct{ lo, hi, depth int }
	inner := make([]block, n) // innermost loop of each node
	for i := range inner {
		inner[i] = block{0, n, 0}
	}
	stack := []block{{0, n, 0}}
	for len(stack) > 0 {
		b := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if b.hi-b.lo < 4 || b.depth >= 6 {
			continue
		}
		if b.depth > 0 {
			add(b.hi-1, b.lo)
			for i := b.lo; i < b.hi; i++ {
				inner[i] = b
			}
		}
		k := 2 + r.IntN(9)
		lo := b.lo
		for j := 1; j <= k && lo < b.hi; j++ {
			hi := b.lo + (b.hi-b.lo)*j/k
			stack = append(stack, block{lo, hi, b.depth + 1})
			lo = hi
		}
	}
	for len(g.Edges) < m {
		u := r.IntN(n)
		b := inner[u]
		switch x := r.IntN(1000); {
		case x < 500: // branch forward
			if v := u + 2 + r.IntN(30); v < b.hi {
				add(u, v)
			}
		case x < 750: // continue
			if b.depth > 0 && u > b.lo {
				add(u, b.lo)
			}
		case x < 999: // break
			if b.depth > 0 && b.hi < n {
				add(u, b.hi)
			}
		default: // goto forward, possibly into the middle of a later loop
			if v := u + 2 + r.IntN(1000); v < n {
				add(u, v)
			}
		}
	}
	return g
}

// tangledGraph is a worst case rather than a program: a chain with random
// short jumps, a quarter of them backwards, which makes one strongly
// connected component with hundreds of thousands of nested irreducible
// loops.
func tangledGraph(seed uint64, n, m int) *flowgraph.Graph {
	r := rand.New(rand.NewPCG(seed, 2))
	g := &flowgraph.Graph{Initial: 0, Nodes: make([]flowgraph.Node, n)}
	g.Edges = make([]flowgraph.Edge, 0, m)
	add := func(u, v int) {
		g.Edges = append(g.Edges, flowgraph.Edge{Src: u, Dst: v, Count: 1, Time: flowgraph.Stat{Total: r.Int64N(1000)},
			Seq: flowgraph.SeqOf(1 + r.Int64N(int64(10*m)))})
	}
	for i := 0; i+1 < n; i++ {
		add(i, i+1)
	}
	for len(g.Edges) < m {
		u := r.IntN(n)
		d := 1 + r.IntN(30)
		if r.IntN(4) == 0 {
			d = -d
		}
		if v := u + d; v >= 0 && v < n {
			add(u, v)
		}
	}
	return g
}

func BenchmarkForest1M(b *testing.B) {
	g := bigGraph(1, 1_000_000, 3_000_000)
	b.ResetTimer()
	cpu := cpuTime()
	for b.Loop() {
		if _, err := NewForest(g); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/1e9/float64(b.N), "cpu-s/op")
}

func BenchmarkCollapse1M(b *testing.B) {
	g := bigGraph(1, 1_000_000, 3_000_000)
	b.ResetTimer()
	var c *Collapsed
	cpu := cpuTime()
	for b.Loop() {
		var err error
		if c, err = Collapse(g); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/1e9/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(len(c.Loops)), "loops")
	b.ReportMetric(float64(len(c.Levels[0].Nodes)), "top-nodes")
}

func BenchmarkCollapseTangled1M(b *testing.B) {
	g := tangledGraph(1, 1_000_000, 3_000_000)
	b.ResetTimer()
	var c *Collapsed
	for b.Loop() {
		var err error
		if c, err = Collapse(g); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(c.Loops)), "loops")
}

func TestBigGraphShape(t *testing.T) {
	if testing.Short() {
		t.Skip("large graph")
	}
	g := bigGraph(1, 20000, 60000)
	c, err := Collapse(g)
	if err != nil {
		t.Fatal(err)
	}
	checkLevelsAcyclic(t, c)
	if len(c.Loops) < 10 {
		t.Fatalf("generator made only %d loops", len(c.Loops))
	}
}

// pollGraph is the graph of testdata/apps/poll.c with the given number of
// passes: an MPI_Test every pass, an MPI_Testany every third, so the
// self-loop of MPI_Test is entered from MPI_Testany a third of the passes.
func pollGraph(passes int) *flowgraph.Graph {
	b := flowgraph.NewBuilder(0, 0)
	var t int64
	call := func(name string) {
		b.Add(flowgraph.Call{Key: flowgraph.NodeKey{Call: name, Site: -1}, Enter: t, Exit: t + 3, Partner: -1})
		t += 5
	}
	for _, c := range []string{"MPI_Init", "MPI_Comm_rank", "MPI_Comm_size", "MPI_Irecv", "MPI_Irecv"} {
		call(c)
	}
	for i := range passes {
		call("MPI_Test")
		if i%3 == 2 {
			call("MPI_Testany")
		}
	}
	for _, c := range []string{"MPI_Send", "MPI_Send", "MPI_Waitall", "MPI_Reduce", "MPI_Finalize"} {
		call(c)
	}
	g := b.Graph()
	return &g
}

// BenchmarkCollapsePoll collapses the graph of a polling loop of 10^3 and
// 10^6 passes: the same graph, whose collapse must cost the same (it
// follows the sequence descriptors, not the events).
func BenchmarkCollapsePoll(b *testing.B) {
	for _, passes := range []int{1e3, 1e6} {
		g := pollGraph(passes)
		b.Run(fmt.Sprint(passes), func(b *testing.B) {
			for b.Loop() {
				if _, err := Collapse(g); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
