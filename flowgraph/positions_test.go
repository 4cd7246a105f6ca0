package flowgraph_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

// graphOf builds the graph of a call sequence given as node names, one
// nanosecond per call and gap.
func graphOf(names ...string) flowgraph.Graph {
	b := flowgraph.NewBuilder(0, 0)
	for i, n := range names {
		t := int64(2 * i)
		b.Add(flowgraph.Call{Key: flowgraph.NodeKey{Call: n, Site: -1, Partner: -1, Comm: -1}, Enter: t, Exit: t + 1, Partner: -1})
	}
	return b.Graph()
}

// polls is a loop of calls a, b, c around a poll p tried tries(i) times in
// iteration i; first puts the poll before a.
func polls(iters int, first bool, tries func(i int) int) []string {
	var s []string
	for i := range iters {
		k := tries(i)
		if first {
			for range k {
				s = append(s, "p")
			}
		}
		s = append(s, "a", "b")
		if !first {
			for range k {
				s = append(s, "p")
			}
		}
		s = append(s, "c")
	}
	return s
}

func varying(i int) int { return 1 + (i*i*7+i*3)%23 }

// twoTries is 1 or, for about one i in four, 2, in no pattern.
func twoTries(i int) int {
	h := uint64(i+1) * 0x9e3779b97f4a7c15
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	return 1 + int(h>>62)/3
}

func TestPositionsRoundTrip(t *testing.T) {
	tests := []struct {
		name      string
		g         flowgraph.Graph
		positions bool
	}{
		{"poll in a loop", graphOf(polls(500, false, varying)...), true},
		{"poll first", graphOf(polls(500, true, varying)...), true},
		{"two polls back to back", graphOf(append(polls(300, false, varying), polls(300, true, func(i int) int { return 1 + i%5 })...)...), true},
		{"poll of one or two tries", graphOf(polls(800, false, twoTries)...), true},
		{"constant polls", graphOf(polls(500, false, func(int) int { return 4 })...), false},
		{"no polls", graphOf(polls(500, false, func(int) int { return 0 })...), false},
	}
	for _, seed := range []uint64{0, 3, 5, 7} {
		g := flowgen.New(flowgen.Options{Seed: 40 + seed, Events: 100_000, Depth: 3, Sites: 12, Branchy: seed%2 == 1, Polls: true, Counters: int(seed % 2)}).Graph(1)
		tests = append(tests, struct {
			name      string
			g         flowgraph.Graph
			positions bool
		}{"flowgen polls", g, true})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := tt.g
			require.NoError(t, g.Validate())
			assert.Equal(t, tt.positions, flowgraph.UsePositions(&g))
			b, _, err := flowgraph.EncodeRank(&flowgraph.Rank{Graph: g})
			require.NoError(t, err)
			r, err := flowgraph.DecodeRank(b)
			require.NoError(t, err)
			require.Len(t, r.Graph.Edges, len(g.Edges))
			for i := range g.Edges {
				assert.Equal(t, g.Edges[i].Seq.Terms(), r.Graph.Edges[i].Seq.Terms(), "edge %d", i)
			}
		})
	}
}

// TestPositionsSmaller checks what positions are for: a poll whose tries
// vary no longer breaks the progressions of the edges around it.
func TestPositionsSmaller(t *testing.T) {
	g := graphOf(polls(2000, false, varying)...)
	var plain []byte
	for i := range g.Edges {
		plain = g.Edges[i].Seq.AppendBinary(plain)
	}
	stored, pos := flowgraph.StoredSeqs(&g)
	require.True(t, pos)
	// the self-loop's run lengths (about 2 bytes each) remain; the
	// edges a->b, b->p, p->c, c->a are one term each
	assert.Less(t, len(stored), len(plain)/2, "positions %d bytes, event indices %d", len(stored), len(plain))
}

func TestPositionsRejectBadInput(t *testing.T) {
	good := graphOf(polls(100, false, varying)...)
	self := -1
	for i, e := range good.Edges {
		if e.Src == e.Dst {
			self = i
		}
	}
	require.GreaterOrEqual(t, self, 0)
	stored := func() flowgraph.Graph {
		g := good
		g.Edges = append([]flowgraph.Edge(nil), good.Edges...)
		// positions by hand: the edges in the loop at 1, 2, 3 ... and
		// one run length per poll
		var ps flowgraph.Seq
		for k := range int64(100) {
			ps.Append(k + 1)
		}
		g.Edges[self].Seq = ps
		return g
	}
	base := stored()
	require.NoError(t, flowgraph.FromPositions(&base))
	tests := map[string]func(g *flowgraph.Graph){
		"fewer run lengths than runs": func(g *flowgraph.Graph) { g.Edges[self].Seq = flowgraph.SeqOf(1, 2, 3) },
		"runs beyond the events": func(g *flowgraph.Graph) {
			g.Edges[self].Seq = flowgraph.Seq{}
			for k := range int64(100) {
				g.Edges[self].Seq.Append(1 + k*1_000_000)
			}
		},
		"two self-loops":    func(g *flowgraph.Graph) { g.Edges = append(g.Edges, g.Edges[self]) },
		"edge out of range": func(g *flowgraph.Graph) { g.Edges[0].Dst = len(g.Nodes) },
		"no events":         func(g *flowgraph.Graph) { g.NumEvents = 0 },
	}
	for name, spoil := range tests {
		t.Run(name, func(t *testing.T) {
			g := stored()
			spoil(&g)
			assert.Error(t, flowgraph.FromPositions(&g))
		})
	}
}

// nodesOf returns the node of every event of g, in order.
func nodesOf(t *testing.T, g *flowgraph.Graph) []int {
	t.Helper()
	var ns []int
	it := g.Events()
	for it.Next() {
		ns = append(ns, it.Event().Node)
	}
	require.NoError(t, it.Err())
	return ns
}

// collapse drops every event that repeats the one before it.
func collapse(ns []int) []int {
	var out []int
	for i, n := range ns {
		if i == 0 || n != ns[i-1] {
			out = append(out, n)
		}
	}
	return out
}

// TestFitBudget: programs with polls, and with polls and branches on data,
// made to fit budgets that approximate poll run lengths, then arrange
// intervals, then cannot be met, against their exact graphs.
func TestFitBudget(t *testing.T) {
	for _, branchy := range []bool{false, true} {
		t.Run(fmt.Sprintf("branchy=%v", branchy), func(t *testing.T) {
			testFitBudget(t, flowgen.Options{Seed: 40, Events: 400_000, Depth: 3, Sites: 12, Polls: true, Branchy: branchy,
				TimingBytes: 12 << 10})
		})
	}
}

func testFitBudget(t *testing.T, opt flowgen.Options) {
	exact := flowgen.New(opt).Graph(1)
	raw, pos := flowgraph.StoredSeqs(&exact)
	require.True(t, pos)
	t.Logf("sequences %d bytes unpacked", len(raw))
	a0 := exact.FitBudget(1 << 30)
	if assert.NotNil(t, a0) {
		assert.True(t, a0.Fits())
		assert.Zero(t, a0.Approximate, "fits as it is")
		assert.Positive(t, a0.Runs)
	}

	truth := nodesOf(t, &exact)
	// The sequences' share of the budget: what the timing leaves. 1 KiB
	// is less than even arranged intervals take; just above what they
	// take there, the arrangement fits. With branches on data in loops
	// whose call sites recur elsewhere (flowgen draws 12), grouping a
	// node's exits breaks more than it saves (37.5 KB for 29.9): the
	// order stays as recorded, and the budget is exceeded.
	tim := int64(exact.Timing.Size())
	var arrangedAll int64
	for _, budget := range []int64{tim + 12<<10, tim + 6<<10, 1 << 10, -1} {
		if budget < 0 {
			if arrangedAll == 0 {
				continue
			}
			budget = arrangedAll + 256
		}
		g := flowgen.New(opt).Graph(1)
		a := g.FitBudget(budget)
		require.NotNil(t, a)
		require.Same(t, a, g.Budget)
		t.Logf("budget %d: %+v", budget, *a)
		require.NoError(t, g.Validate())
		assert.Positive(t, a.Approximate)
		assert.LessOrEqual(t, a.Approximate, a.Runs)
		assert.Positive(t, a.ErrMax)
		assert.Less(t, a.Bytes, a0.Bytes)
		switch {
		case opt.Branchy:
			assert.Zero(t, a.Arranged, "arranging saves nothing")
		case budget == 1<<10:
			assert.False(t, a.Fits(), "1 KiB is less than the order of the other calls takes")
			assert.Positive(t, a.Arranged)
			arrangedAll = a.Bytes
		case budget > tim+4<<10:
			assert.True(t, a.Fits())
			assert.Zero(t, a.Arranged, "approximate run lengths suffice")
		default:
			assert.True(t, a.Fits())
			assert.Positive(t, a.Arranged)
			assert.Positive(t, a.Moved)
		}
		checkFitted(t, &exact, &g, truth, !opt.Branchy || a.Arranged == 0)
	}
}

// checkFitted checks graph g, made by FitBudget from exact (whose events'
// nodes are truth): the file holds what FitBudget says; every node's count
// and every transition's in every timing interval are exact, so are the
// interval's last event and the order of first occurrences, and every
// node's time; with orderKept, the order up to poll run lengths too.
func checkFitted(t *testing.T, exact, g *flowgraph.Graph, truth []int, orderKept bool) {
	t.Helper()
	a := g.Budget
	b, _, err := flowgraph.EncodeRank(&flowgraph.Rank{Graph: *g})
	require.NoError(t, err)
	r, err := flowgraph.DecodeRank(b)
	require.NoError(t, err)
	assert.Equal(t, *a, *r.Graph.Budget)
	for i := range g.Edges {
		require.Equal(t, g.Edges[i].Seq.Terms(), r.Graph.Edges[i].Seq.Terms(), "edge %d", i)
	}
	got := nodesOf(t, g)
	require.Len(t, got, len(truth))
	// An arrangement of polls alone changes only their run lengths.
	assert.Equal(t, orderKept, slices.Equal(collapse(truth), collapse(got)), "order up to run lengths")
	it := g.Timing.Intervals()
	for it.Next() {
		iv := it.Interval()
		end := min(iv.Start+iv.Events, int64(len(truth)))
		want, have := map[[2]int]int{}, map[[2]int]int{}
		for i := iv.Start; i < end; i++ {
			want[[2]int{truth[i], -1}]++
			have[[2]int{got[i], -1}]++
			if i+1 < int64(len(truth)) {
				want[[2]int{truth[i], truth[i+1]}]++
				have[[2]int{got[i], got[i+1]}]++
			}
		}
		require.Equal(t, want, have, "interval %d", iv.Index)
		require.Equal(t, truth[end-1], got[end-1], "interval %d", iv.Index)
		// Sums of intervals of Keep 0 go to the nodes and edges
		// in order of first occurrence, which must not change.
		require.Equal(t, firstOccurrences(truth, iv.Start, end), firstOccurrences(got, iv.Start, end), "interval %d", iv.Index)
	}
	require.NoError(t, it.Err())
	for i := range g.Nodes {
		assert.Equal(t, exact.Nodes[i].Count, g.Nodes[i].Count)
	}
	for i := range g.Edges {
		assert.Equal(t, exact.Edges[i].Count, g.Edges[i].Count, "edge %d", i)
	}
	// The rebuilt times keep every node's total.
	tot := make([]int64, len(g.Nodes))
	ev := g.Events()
	for ev.Next() {
		e := ev.Event()
		tot[e.Node] += e.End - e.Start
	}
	require.NoError(t, ev.Err())
	want := make([]int64, len(g.Nodes))
	ev = exact.Events()
	for ev.Next() {
		e := ev.Event()
		want[e.Node] += e.End - e.Start
	}
	assert.Equal(t, want, tot)
}

// TestFitBudgetArrangesBranches: an arrival-driven loop (post a receive,
// poll it a long-tailed number of times, then handle the message if it
// came, or do other work and poll again), whose branch order alone exceeds
// the budget: the densest intervals are arranged until it fits.
func TestFitBudgetArrangesBranches(t *testing.T) {
	build := func() flowgraph.Graph {
		b := flowgraph.NewBuilderBudget(0, flowgraph.TimingBudget{Bytes: 4 << 10})
		rng := rand.New(rand.NewPCG(3, 4))
		var now int64
		call := func(name string, site int, dur, gap int64) {
			now += gap
			s := b.Site(flowgraph.CallSite{Addr: uint64(0x1000 + site)})
			b.Add(flowgraph.Call{Key: flowgraph.NodeKey{Call: name, Site: s, Partner: -1, Comm: -1}, Enter: now, Exit: now + dur,
				Partner: -1})
			now += dur
		}
		for i := 0; i < 20_000; i++ {
			call("MPI_Irecv", 1, 300, 2000)
			for {
				for range 1 + int(rng.ExpFloat64()*8) {
					call("MPI_Test", 2, 50, 40)
				}
				if rng.IntN(3) == 0 {
					break
				}
				call("MPI_Iprobe", 3, 80, 500+rng.Int64N(1000))
			}
			if rng.IntN(4) == 0 {
				call("MPI_Send", 4, 900, 300)
			} else {
				call("MPI_Isend", 5, 200, 300)
			}
			if i%500 == 499 { // a sparse phase of long collectives
				call("MPI_Allreduce", 6, 5_000_000, 1000)
			}
		}
		return b.Graph()
	}
	exact := build()
	truth := nodesOf(t, &exact)
	all := build()
	aAll := all.FitBudget(1)
	t.Logf("everything approximate: %+v", *aAll)
	require.Positive(t, aAll.Arranged)
	budget := aAll.Bytes * 11 / 10
	g := build()
	a := g.FitBudget(budget)
	t.Logf("budget %d: %+v", budget, *a)
	require.NoError(t, g.Validate())
	assert.True(t, a.Fits())
	assert.Positive(t, a.Arranged)
	assert.Less(t, a.Arranged, aAll.Arranged, "the fewest intervals that fit")
	assert.Positive(t, a.Moved)
	checkFitted(t, &exact, &g, truth, false)
}

// firstOccurrences lists the nodes of events [from, to) of nodes and then
// the transitions out of them (pairs of nodes), each at its first
// occurrence.
func firstOccurrences(nodes []int, from, to int64) [][2]int {
	var out [][2]int
	seen := map[[2]int]bool{}
	add := func(k [2]int) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	for i := from; i < to; i++ {
		add([2]int{nodes[i], -1})
	}
	for i := from; i < to && i+1 < int64(len(nodes)); i++ {
		add([2]int{nodes[i], nodes[i+1]})
	}
	return out
}

// BenchmarkFitBudget: what MPI_Finalize adds per rank for a rank of 10^6
// events with polls, made to fit a quarter of its exact size, and what
// reading it back costs.
func BenchmarkFitBudget(b *testing.B) {
	opt := flowgen.Options{Seed: 40, Events: 1_000_000, Depth: 3, Sites: 12, Polls: true}
	g0 := flowgen.New(opt).Graph(1)
	raw, _ := flowgraph.StoredSeqs(&g0)
	b.Run("fit", func(b *testing.B) {
		for b.Loop() {
			g := g0
			g.Edges = append([]flowgraph.Edge(nil), g0.Edges...)
			g.FitBudget(int64(len(raw) / 4))
		}
	})
	blk, _, err := flowgraph.EncodeRank(&flowgraph.Rank{Graph: g0})
	require.NoError(b, err)
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			if _, err := flowgraph.DecodeRank(blk); err != nil {
				b.Fatal(err)
			}
		}
	})
}
