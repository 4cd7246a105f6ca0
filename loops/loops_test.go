package loops

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
)

// wantLoop describes an expected loop by node names; edges are "A->B".
type wantLoop struct {
	header      string
	parent      int
	members     []string
	entries     []string
	exits       []string
	back        []string
	iterations  int64
	perEntry    []int64 // Entry.Iterations in entry order; nil: not checked
	time        int64   // accumulated time, worked out by hand
	irreducible bool
	self        bool
}

// wantLevel describes a level: node names ("Loop N" for loop nodes) in
// topological order and drawn edges; "A->B x2" is an edge standing for two
// graph edges.
type wantLevel struct {
	nodes []string
	edges []string
}

func TestCollapse(t *testing.T) {
	// Times of hand-built graphs.
	twoExits := handGraph(0,
		[]string{"Init", "A", "B", "X", "Y", "Fin"},
		[]int64{1, 10, 20, 30, 40, 50},
		[]handEdge{
			{0, 1, 2, 100}, // Init->A
			{1, 2, 9, 200}, // A->B
			{2, 1, 7, 300}, // B->A
			{1, 3, 1, 400}, // A->X  exit
			{2, 3, 1, 500}, // B->X  exit to the same node
			{2, 4, 1, 600}, // B->Y  exit
			{3, 5, 1, 700},
			{4, 5, 1, 800},
		})
	irrNoSeq := handGraph(0,
		[]string{"Init", "A", "B", "Fin"},
		[]int64{1, 2, 3, 4},
		[]handEdge{
			{0, 1, 1, 10}, // Init->A
			{0, 2, 1, 20}, // Init->B: second entry
			{1, 2, 5, 30},
			{2, 1, 4, 40},
			{1, 3, 1, 50},
		})

	tests := []struct {
		name   string
		g      *flowgraph.Graph
		loops  []wantLoop
		levels []wantLevel
	}{
		{
			name: "no loops",
			g:    seqGraph("Init", "A", "B", "Fin"),
			levels: []wantLevel{
				{nodes: []string{"Init", "A", "B", "Fin"}, edges: []string{"Init->A", "A->B", "B->Fin"}},
			},
		},
		{
			name: "single loop",
			g:    seqGraph(cat([]string{"Init"}, repeat(3, "A", "B"), []string{"Fin"})...),
			loops: []wantLoop{{
				header: "A", members: []string{"A", "B"},
				entries: []string{"Init->A"}, exits: []string{"B->Fin"}, back: []string{"B->A"},
				iterations: 3, perEntry: []int64{3},
				// A B A B A B: 6 calls, 5 transitions inside.
				time: 6*callTime + 5*gapTime,
			}},
			levels: []wantLevel{
				{nodes: []string{"Init", "Loop 1", "Fin"}, edges: []string{"Init->Loop 1", "Loop 1->Fin"}},
				{nodes: []string{"A", "B"}, edges: []string{"A->B"}},
			},
		},
		{
			name: "nested 3 levels",
			g: seqGraph(cat([]string{"Init"},
				repeat(2, cat([]string{"O"}, repeat(2, cat([]string{"M"}, repeat(2, "I1", "I2"))...))...),
				[]string{"Fin"})...),
			loops: []wantLoop{
				{
					header: "O", members: []string{"O", "M", "I1", "I2"},
					entries: []string{"Init->O"}, exits: []string{"I2->Fin"}, back: []string{"I2->O"},
					// Two outer iterations of 11 calls each.
					iterations: 2, time: 22*callTime + 21*gapTime,
				},
				{
					header: "M", parent: 1, members: []string{"M", "I1", "I2"},
					entries: []string{"O->M"}, exits: []string{"I2->O", "I2->Fin"}, back: []string{"I2->M"},
					// Two runs of 2 iterations, each run 10 calls, 9 transitions.
					iterations: 4, time: 20*callTime + 18*gapTime,
				},
				{
					header: "I1", parent: 2, members: []string{"I1", "I2"},
					entries: []string{"M->I1"}, exits: []string{"I2->M", "I2->O", "I2->Fin"}, back: []string{"I2->I1"},
					// Four runs of 2 iterations, each run 4 calls, 3 transitions.
					iterations: 8, time: 16*callTime + 12*gapTime,
				},
			},
			levels: []wantLevel{
				{nodes: []string{"Init", "Loop 1", "Fin"}, edges: []string{"Init->Loop 1", "Loop 1->Fin"}},
				{nodes: []string{"O", "Loop 2"}, edges: []string{"O->Loop 2"}},
				{nodes: []string{"M", "Loop 3"}, edges: []string{"M->Loop 3"}},
				{nodes: []string{"I1", "I2"}, edges: []string{"I1->I2"}},
			},
		},
		{
			name: "two sibling loops",
			g:    seqGraph(cat([]string{"Init"}, repeat(3, "A", "B"), repeat(2, "C", "D"), []string{"Fin"})...),
			loops: []wantLoop{
				{
					header: "A", members: []string{"A", "B"}, entries: []string{"Init->A"}, exits: []string{"B->C"},
					back: []string{"B->A"}, iterations: 3, time: 6*callTime + 5*gapTime,
				},
				{
					header: "C", members: []string{"C", "D"}, entries: []string{"B->C"}, exits: []string{"D->Fin"},
					back: []string{"D->C"}, iterations: 2, time: 4*callTime + 3*gapTime,
				},
			},
			levels: []wantLevel{
				{nodes: []string{"Init", "Loop 1", "Loop 2", "Fin"}, edges: []string{"Init->Loop 1", "Loop 1->Loop 2", "Loop 2->Fin"}},
				{nodes: []string{"A", "B"}, edges: []string{"A->B"}},
				{nodes: []string{"C", "D"}, edges: []string{"C->D"}},
			},
		},
		{
			name: "loop with two exits",
			g:    twoExits,
			loops: []wantLoop{{
				header: "A", members: []string{"A", "B"}, entries: []string{"Init->A"},
				exits: []string{"A->X", "B->X", "B->Y"}, back: []string{"B->A"},
				iterations: 7 + 2, perEntry: []int64{9},
				time: 10 + 20 + 200 + 300,
			}},
			levels: []wantLevel{
				{nodes: []string{"Init", "Loop 1", "X", "Y", "Fin"}, edges: []string{"Init->Loop 1", "Loop 1->X x2", "Loop 1->Y", "X->Fin", "Y->Fin"}},
				{nodes: []string{"A", "B"}, edges: []string{"A->B"}},
			},
		},
		{
			// Init X A B A X B A B X Fin: the inner loop {A,B} is entered
			// from X once at A and once at B.
			name: "irreducible loop with two entries",
			g:    seqGraph("Init", "X", "A", "B", "A", "X", "B", "A", "B", "X", "Fin"),
			loops: []wantLoop{
				{
					header: "X", members: []string{"X", "A", "B"}, entries: []string{"Init->X"}, exits: []string{"X->Fin"},
					back: []string{"A->X", "B->X"}, iterations: 3, time: 9*callTime + 8*gapTime,
				},
				{
					header: "A", parent: 1, members: []string{"A", "B"}, entries: []string{"X->A", "X->B"},
					exits: []string{"A->X", "B->X"}, back: []string{"B->A"}, irreducible: true,
					// Entry at A (event 2) then B->A at 4; entry at B (6) then B->A at 7.
					iterations: 4, perEntry: []int64{2, 2}, time: 6*callTime + 4*gapTime,
				},
			},
			levels: []wantLevel{
				{nodes: []string{"Init", "Loop 1", "Fin"}, edges: []string{"Init->Loop 1", "Loop 1->Fin"}},
				{nodes: []string{"X", "Loop 2"}, edges: []string{"X->Loop 2 x2"}},
				{nodes: []string{"A", "B"}, edges: []string{"A->B"}},
			},
		},
		{
			name: "irreducible loop without sequence numbers",
			g:    irrNoSeq,
			loops: []wantLoop{{
				header: "A", members: []string{"A", "B"}, entries: []string{"Init->A", "Init->B"}, exits: []string{"A->Fin"},
				back: []string{"B->A"}, irreducible: true, iterations: 4 + 2, perEntry: []int64{-1, -1},
				time: 2 + 3 + 30 + 40,
			}},
			levels: []wantLevel{
				{nodes: []string{"Init", "Loop 1", "Fin"}, edges: []string{"Init->Loop 1 x2", "Loop 1->Fin"}},
				{nodes: []string{"A", "B"}, edges: []string{"A->B"}},
			},
		},
		{
			name: "self-loops",
			g:    seqGraph("Init", "A", "A", "A", "B", "B", "Fin"),
			loops: []wantLoop{
				{header: "A", members: []string{"A"}, entries: []string{"Init->A"}, exits: []string{"A->B"}, back: []string{"A->A"},
					self: true, iterations: 3, time: 3*callTime + 2*gapTime},
				{header: "B", members: []string{"B"}, entries: []string{"A->B"}, exits: []string{"B->Fin"}, back: []string{"B->B"},
					self: true, iterations: 2, time: 2*callTime + 1*gapTime},
			},
			levels: []wantLevel{
				{nodes: []string{"Init", "Loop 1", "Loop 2", "Fin"}, edges: []string{"Init->Loop 1", "Loop 1->Loop 2", "Loop 2->Fin"}},
				{nodes: []string{"A"}},
				{nodes: []string{"B"}},
			},
		},
		{
			// A repeated at the top of the loop body: the repetition is a
			// loop nested in the loop that A also heads.
			name: "self-loop heading a loop",
			g:    seqGraph(cat([]string{"Init"}, repeat(3, "A", "A", "B"), []string{"Fin"})...),
			loops: []wantLoop{
				{header: "A", members: []string{"A", "B"}, entries: []string{"Init->A"}, exits: []string{"B->Fin"}, back: []string{"B->A"},
					iterations: 3, perEntry: []int64{3}, time: 9*callTime + 8*gapTime},
				{header: "A", parent: 1, members: []string{"A"}, entries: []string{"Init->A", "B->A"}, exits: []string{"A->B"}, back: []string{"A->A"},
					self: true, iterations: 6, perEntry: []int64{2, 4}, time: 6*callTime + 3*gapTime},
			},
			levels: []wantLevel{
				{nodes: []string{"Init", "Loop 1", "Fin"}, edges: []string{"Init->Loop 1", "Loop 1->Fin"}},
				{nodes: []string{"Loop 2", "B"}, edges: []string{"Loop 2->B"}},
				{nodes: []string{"A"}},
			},
		},
		{
			name: "self-loop nested in a loop",
			g:    seqGraph(cat([]string{"Init"}, repeat(2, "A", "B", "B"), []string{"Fin"})...),
			loops: []wantLoop{
				{header: "A", members: []string{"A", "B"}, entries: []string{"Init->A"}, exits: []string{"B->Fin"}, back: []string{"B->A"},
					iterations: 2, time: 6*callTime + 5*gapTime},
				{header: "B", parent: 1, members: []string{"B"}, entries: []string{"A->B"}, exits: []string{"B->A", "B->Fin"}, back: []string{"B->B"},
					self: true, iterations: 4, perEntry: []int64{4}, time: 4*callTime + 2*gapTime},
			},
			levels: []wantLevel{
				{nodes: []string{"Init", "Loop 1", "Fin"}, edges: []string{"Init->Loop 1", "Loop 1->Fin"}},
				{nodes: []string{"A", "Loop 2"}, edges: []string{"A->Loop 2"}},
				{nodes: []string{"B"}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.g
			c, err := Collapse(g)
			require.NoError(t, err)
			checkInvariants(t, g, c)
			require.Len(t, c.Loops, len(tc.loops))
			names := func(nodes []int) []string {
				out := make([]string, len(nodes))
				for i, v := range nodes {
					out[i] = g.Nodes[v].Key.Call
				}
				return out
			}
			edgeNames := func(es []int) []string {
				out := make([]string, len(es))
				for i, ei := range es {
					out[i] = g.Nodes[g.Edges[ei].Src].Key.Call + "->" + g.Nodes[g.Edges[ei].Dst].Key.Call
				}
				return out
			}
			for i, w := range tc.loops {
				l := c.Loops[i]
				assert.Equal(t, fmt.Sprintf("Loop %d", i+1), l.Name)
				assert.Equal(t, w.header, g.Nodes[l.Header].Key.Call, "loop %d header", l.ID)
				assert.Equal(t, w.parent, l.Parent, "loop %d parent", l.ID)
				assert.ElementsMatch(t, w.members, names(c.Members(l.ID)), "loop %d members", l.ID)
				ents := make([]int, len(l.Entries))
				for k, e := range l.Entries {
					ents[k] = e.Edge
					assert.Equal(t, g.Edges[e.Edge].Count, e.Count)
				}
				assert.ElementsMatch(t, w.entries, edgeNames(ents), "loop %d entries", l.ID)
				assert.ElementsMatch(t, w.exits, edgeNames(l.Exits), "loop %d exits", l.ID)
				assert.ElementsMatch(t, w.back, edgeNames(l.BackEdges), "loop %d back edges", l.ID)
				assert.ElementsMatch(t, w.back, edgeNames(c.Levels[l.ID].BackEdges), "level %d back edges", l.ID)
				assert.Equal(t, w.iterations, l.Stats.Iterations, "loop %d iterations", l.ID)
				assert.Equal(t, w.time, l.Stats.Time, "loop %d time", l.ID)
				assert.Equal(t, w.irreducible, l.Irreducible, "loop %d irreducible", l.ID)
				assert.Equal(t, w.self, l.SelfLoop, "loop %d self", l.ID)
				assert.Equal(t, l.Depth, depthOf(c, l.ID))
				if w.perEntry != nil {
					got := make([]int64, len(l.Entries))
					for k, e := range l.Entries {
						got[k] = e.Iterations
					}
					assert.Equal(t, w.perEntry, got, "loop %d per-entry iterations", l.ID)
				}
			}
			require.Len(t, c.Levels, len(tc.levels))
			for id, w := range tc.levels {
				l := c.Levels[id]
				nn := make([]string, len(l.Nodes))
				for k, x := range l.Nodes {
					if x.Loop > 0 {
						nn[k] = c.Loops[x.Loop-1].Name
					} else {
						nn[k] = g.Nodes[x.Node].Key.Call
					}
				}
				assert.Equal(t, w.nodes, nn, "level %d nodes", id)
				var ee []string
				for _, e := range l.Edges {
					s := nn[e.Src] + "->" + nn[e.Dst]
					if len(e.Edges) > 1 {
						s += fmt.Sprintf(" x%d", len(e.Edges))
					}
					ee = append(ee, s)
				}
				assert.ElementsMatch(t, w.edges, ee, "level %d edges", id)
			}
		})
	}
}

func depthOf(c *Collapsed, id int) int {
	d := 0
	for ; id != 0; id = c.Loops[id-1].Parent {
		d++
	}
	return d
}

func TestLoopChildrenAndMembers(t *testing.T) {
	g := seqGraph(cat([]string{"Init"}, repeat(2, cat([]string{"O"}, repeat(2, "A", "B"), repeat(2, "C"))...), []string{"Fin"})...)
	c, err := Collapse(g)
	require.NoError(t, err)
	checkInvariants(t, g, c)
	require.Len(t, c.Loops, 3)
	// O's loop holds the loop over A,B and the self-loop C, in order of
	// first execution.
	assert.Equal(t, []int{2, 3}, c.Loops[0].Children)
	assert.Equal(t, "A", g.Nodes[c.Loops[1].Header].Key.Call)
	assert.Equal(t, "C", g.Nodes[c.Loops[2].Header].Key.Call)
	assert.Equal(t, []int{nodeByName(t, g, "O")}, c.Loops[0].Nodes)
	assert.Equal(t, 1, c.LoopOf[nodeByName(t, g, "O")])
	assert.Equal(t, 0, c.LoopOf[nodeByName(t, g, "Init")])
	assert.Equal(t, 1, c.EdgeLevel[edgeByName(t, g, "B", "C")], "exit of loop 2 into loop 3 lies in loop 1")
	assert.Equal(t, 0, c.EdgeLevel[edgeByName(t, g, "C", "Fin")])
	// Per-iteration averages: loop 2 runs 4 iterations of A and B.
	s := c.Loops[1].Stats
	assert.Equal(t, int64(4), s.Iterations)
	assert.InDelta(t, 2.0, s.CallsPerIteration(), 1e-12)
	assert.InDelta(t, 16.0, s.BytesPerIteration(), 1e-12)
	// A B A B: 4 calls, 3 transitions per run, 2 runs.
	assert.InDelta(t, float64(8*callTime+6*gapTime)/4, s.TimePerIteration(), 1e-12)
	// The counter advances by 100*i - (100*(i-1)+1) = 99 per transition.
	require.Len(t, s.Counters, 1)
	assert.Equal(t, int64(6*99), s.Counters[0])
	assert.InDelta(t, 6*99/4.0, s.CountersPerIteration()[0], 1e-12)
	// Init O A B A B C C O ...: loops first run at events 1, 2 and 6.
	assert.Equal(t, []int64{1, 2, 6}, []int64{c.Loops[0].FirstEvent, c.Loops[1].FirstEvent, c.Loops[2].FirstEvent})
}

func TestForestEdgeCases(t *testing.T) {
	t.Run("empty graph", func(t *testing.T) {
		c, err := Collapse(&flowgraph.Graph{Initial: -1})
		require.NoError(t, err)
		assert.Empty(t, c.Loops)
		require.Len(t, c.Levels, 1)
		assert.Empty(t, c.Levels[0].Nodes)
	})
	t.Run("unreachable nodes become roots", func(t *testing.T) {
		// 0 -> 1; 2 <-> 3 is not reachable from the initial node.
		g := handGraph(0, []string{"A", "B", "C", "D"}, []int64{1, 2, 3, 4},
			[]handEdge{{0, 1, 1, 5}, {2, 3, 1, 6}, {3, 2, 1, 7}})
		c, err := Collapse(g)
		require.NoError(t, err)
		checkInvariants(t, g, c)
		require.Len(t, c.Loops, 1)
		assert.Equal(t, 2, c.Loops[0].Header)
		assert.Equal(t, []int{2, 3}, c.Members(1))
	})
	t.Run("initial node inside a loop", func(t *testing.T) {
		g := seqGraph("A", "B", "A", "B")
		c, err := Collapse(g)
		require.NoError(t, err)
		checkInvariants(t, g, c)
		require.Len(t, c.Loops, 1)
		l := c.Loops[0]
		assert.True(t, l.InitialInside)
		assert.Equal(t, int64(0), l.FirstEvent)
		// Start at A, back edge once: two iterations, one (implicit) entry.
		assert.Equal(t, int64(2), l.Stats.Iterations)
		assert.Equal(t, int64(1), l.Stats.Entries)
	})
	bad := []struct {
		name string
		g    *flowgraph.Graph
	}{
		{"edge to missing node", handGraph(0, []string{"A"}, []int64{1}, []handEdge{{0, 3, 1, 1}})},
		{"negative edge source", handGraph(0, []string{"A"}, []int64{1}, []handEdge{{-1, 0, 1, 1}})},
		{"initial out of range", handGraph(5, []string{"A"}, []int64{1}, nil)},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Collapse(tc.g)
			require.Error(t, err)
		})
	}
}

func TestDeepChainNoStackOverflow(t *testing.T) {
	// A 1M-node chain closed into one big loop, and 100k nested loops:
	// both would overflow a recursive DFS.
	const n = 1 << 20
	g := &flowgraph.Graph{Initial: 0}
	g.Nodes = make([]flowgraph.Node, n)
	for i := 0; i+1 < n; i++ {
		g.Edges = append(g.Edges, flowgraph.Edge{Src: i, Dst: i + 1, Count: 1})
	}
	g.Edges = append(g.Edges, flowgraph.Edge{Src: n - 1, Dst: 1, Count: 1})
	c, err := Collapse(g)
	require.NoError(t, err)
	require.Len(t, c.Loops, 1)
	assert.Len(t, c.Members(1), n-1)

	// Nested: i -> i+1 for i < m, then m+k -> m-k back edges outward.
	const m = 100000
	g = &flowgraph.Graph{Initial: 0}
	g.Nodes = make([]flowgraph.Node, 2*m+1)
	for i := 0; i < 2*m; i++ {
		g.Edges = append(g.Edges, flowgraph.Edge{Src: i, Dst: i + 1, Count: 1})
	}
	for k := 1; k < m; k++ {
		g.Edges = append(g.Edges, flowgraph.Edge{Src: m + k, Dst: m - k, Count: 1})
	}
	c, err = Collapse(g)
	require.NoError(t, err)
	require.Len(t, c.Loops, m-1)
	depth := 0
	for _, l := range c.Loops {
		depth = max(depth, l.Depth)
	}
	assert.Equal(t, m-1, depth)
	checkLevelsAcyclic(t, c)
}

func checkLevelsAcyclic(t *testing.T, c *Collapsed) {
	t.Helper()
	for id, l := range c.Levels {
		for _, e := range l.Edges {
			require.Less(t, e.Src, e.Dst, "level %d", id)
		}
	}
}

func TestStatsHelpersZeroIterations(t *testing.T) {
	var s Stats
	assert.Zero(t, s.TimePerIteration())
	assert.Empty(t, s.CountersPerIteration())
}
