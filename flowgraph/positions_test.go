package flowgraph_test

import (
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

func TestFitBudget(t *testing.T) {
	opt := flowgen.Options{Seed: 40, Events: 400_000, Depth: 3, Sites: 12, Polls: true, TimingBytes: 12 << 10}
	exact := flowgen.New(opt).Graph(1)
	raw, pos := flowgraph.StoredSeqs(&exact)
	require.True(t, pos)
	t.Logf("sequences %d bytes unpacked", len(raw))
	if a := exact.FitBudget(1 << 30); assert.NotNil(t, a) {
		assert.True(t, a.Fits())
		assert.Zero(t, a.Approximate, "fits as it is")
		assert.Positive(t, a.Runs)
	}

	truth := nodesOf(t, &exact)
	// The sequences' share of the budget: what the timing leaves.
	tim := int64(exact.Timing.Size())
	for _, budget := range []int64{tim + 12<<10, tim + 6<<10, 1 << 10} {
		g := flowgen.New(opt).Graph(1)
		a := g.FitBudget(budget)
		require.NotNil(t, a)
		require.Same(t, a, g.Budget)
		t.Logf("budget %d: %+v", budget, *a)
		require.NoError(t, g.Validate())
		assert.Positive(t, a.Approximate)
		assert.LessOrEqual(t, a.Approximate, a.Runs)
		assert.Positive(t, a.ErrMax)
		if budget > 1<<10 {
			assert.True(t, a.Fits())
		} else {
			assert.False(t, a.Fits(), "1 KiB is less than the order of the other calls takes")
		}
		// What a file holds of it is what FitBudget says.
		b, _, err := flowgraph.EncodeRank(&flowgraph.Rank{Graph: g})
		require.NoError(t, err)
		r, err := flowgraph.DecodeRank(b)
		require.NoError(t, err)
		assert.Equal(t, *a, *r.Graph.Budget)
		for i := range g.Edges {
			require.Equal(t, g.Edges[i].Seq.Terms(), r.Graph.Edges[i].Seq.Terms(), "edge %d", i)
		}
		// Every other call in order, and every node's count exact in
		// every timing interval.
		got := nodesOf(t, &g)
		require.Len(t, got, len(truth))
		assert.Equal(t, collapse(truth), collapse(got))
		it := g.Timing.Intervals()
		for it.Next() {
			iv := it.Interval()
			end := min(iv.Start+iv.Events, int64(len(truth)))
			want, have := map[int]int{}, map[int]int{}
			for i := iv.Start; i < end; i++ {
				want[truth[i]]++
				have[got[i]]++
			}
			require.Equal(t, want, have, "interval %d", iv.Index)
			// Sums of intervals of Keep 0 go to the nodes and edges
			// in order of first occurrence, which must not change.
			require.Equal(t, firstOccurrences(truth, iv.Start, end), firstOccurrences(got, iv.Start, end), "interval %d", iv.Index)
		}
		for i := range g.Nodes {
			assert.Equal(t, exact.Nodes[i].Count, g.Nodes[i].Count)
		}
		for i := range g.Edges {
			assert.Equal(t, exact.Edges[i].Count, g.Edges[i].Count, "edge %d", i)
		}
	}
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
