package loops

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
)

func collapseRanks(t *testing.T, gs ...*flowgraph.Graph) []RankLoops {
	t.Helper()
	rs := make([]RankLoops, len(gs))
	for i, g := range gs {
		c, err := Collapse(g)
		require.NoError(t, err)
		rs[i] = RankLoops{Rank: i, Graph: g, Collapsed: c}
	}
	return rs
}

// treesOf returns the trees of rs, as GroupTree takes them.
func treesOf(rs []RankLoops) []RankTree {
	ts := make([]RankTree, len(rs))
	for i, r := range rs {
		ts[i] = r.Tree()
	}
	return ts
}

func TestCrossRank(t *testing.T) {
	// Ranks 0 and 1 run the same code with different iteration counts;
	// rank 2 runs the second loop first, so its loop numbers differ; rank
	// 3 calls an extra MPI_Barrier at the top level.
	prog := func(n1, n2 int, swap bool, extra ...string) *flowgraph.Graph {
		l1 := repeat(n1, "Send", "Recv")
		l2 := repeat(n2, "Allreduce")
		if swap {
			l1, l2 = l2, l1
		}
		return seqGraph(cat([]string{"Init"}, l1, l2, extra, []string{"Fin"})...)
	}
	rs := collapseRanks(t,
		prog(3, 2, false),
		prog(5, 4, false),
		prog(3, 2, true),
		prog(3, 2, false, "Barrier"),
	)

	keys0 := LoopKeys(rs[0].Graph, rs[0].Collapsed)
	require.Len(t, keys0, 2)
	assert.Equal(t, "Send", keys0[0].Call)
	assert.Equal(t, "/bin/app", keys0[0].Object)
	assert.Equal(t, rs[0].Graph.Sites[rs[0].Graph.Nodes[rs[0].Collapsed.Loops[0].Header].Key.Site].Offset, keys0[0].Addr)
	assert.Equal(t, "Allreduce", keys0[1].Call)
	keys2 := LoopKeys(rs[2].Graph, rs[2].Collapsed)
	assert.Equal(t, keys0[0], keys2[1], "Loop 1 of rank 0 is Loop 2 of rank 2")

	// Tree of ranks 0 and 1: Send/Recv loop runs 3 and 5 times.
	tree := GroupTree(treesOf(rs), []int{0, 1})
	require.Len(t, tree, 2)
	assert.Equal(t, "Loop 1", tree[0].Name)
	assert.Equal(t, 2, tree[0].Ranks)
	assert.InDelta(t, 4.0, tree[0].AvgIterations, 1e-12)
	s0, s1 := rs[0].Collapsed.Loops[0].Stats.Share, rs[1].Collapsed.Loops[0].Stats.Share
	assert.InDelta(t, (s0+s1)/2, tree[0].AvgShare, 1e-12)
	assert.InDelta(t, min(s0, s1), tree[0].MinShare, 1e-12)
	assert.InDelta(t, max(s0, s1), tree[0].MaxShare, 1e-12)
	assert.Equal(t, 1, tree[0].MaxRank, "rank 1 runs more iterations")
	assert.Contains(t, tree[0].Header, "Send at app+0x")
	// 8 iterations in all, each 2 calls; times summed over both ranks.
	st0, st1 := rs[0].Collapsed.Loops[0].Stats, rs[1].Collapsed.Loops[0].Stats
	assert.InDelta(t, float64(st0.Time+st1.Time)/8, tree[0].TimePerIteration, 1e-9)
	assert.InDelta(t, 2.0, tree[0].CallsPerIteration, 1e-12)
	assert.InDelta(t, 16.0, tree[0].BytesPerIteration, 1e-12)
	assert.InDelta(t, float64(st0.Time+st1.Time)/2, tree[0].AvgTime, 1e-9)
}

// TestGroupTreeUnion: the tree of a group whose members have different
// loops holds the representative's loops, then the others' (nested under
// the row of their parent's key), each with the ranks that have it.
func TestGroupTreeUnion(t *testing.T) {
	// Rank 1 has a nested Barrier loop inside the Send/Recv loop and a
	// second loop of its own; rank 2 has only the first loop.
	rs := collapseRanks(t,
		seqGraph(cat([]string{"Init"}, repeat(3, "Send", "Recv"), []string{"Fin"})...),
		seqGraph(cat([]string{"Init"}, repeat(3, cat([]string{"Send"}, repeat(4, "Barrier", "Wait"), []string{"Recv"})...),
			repeat(2, "Bcast", "Reduce"), []string{"Fin"})...),
		seqGraph(cat([]string{"Init"}, repeat(5, "Send", "Recv"), []string{"Fin"})...),
	)
	tree := GroupTree(treesOf(rs), []int{2, 0, 1})
	require.Len(t, tree, 3)
	byCall := map[string]TreeRow{}
	for _, r := range tree {
		byCall[r.Key.Call] = r
	}
	outer, nested, other := byCall["Send"], byCall["Barrier"], byCall["Bcast"]
	assert.Equal(t, 1, outer.ID, "the representative's loop first")
	assert.Equal(t, 3, outer.Ranks)
	assert.Empty(t, outer.Where)
	assert.InDelta(t, 11.0/3, outer.AvgIterations, 1e-12)
	assert.Equal(t, outer.ID, nested.Parent, "nested under the row of its parent's key")
	assert.Equal(t, 2, nested.Depth)
	assert.Equal(t, 1, nested.Ranks)
	assert.Equal(t, "1", nested.Where)
	assert.InDelta(t, 12.0, nested.AvgIterations, 1e-12)
	assert.Equal(t, 0, other.Parent)
	assert.Equal(t, "1", other.Where)
	assert.Equal(t, []string{"Loop 1", "Loop 2", "Loop 3"}, []string{tree[0].Name, tree[1].Name, tree[2].Name})
	assert.Equal(t, "Barrier", tree[1].Key.Call, "pre-order: the nested loop follows its parent")
	assert.Equal(t, "0-1,3,5-6", Ranges([]int{0, 1, 3, 5, 6}))
}

func TestLoopKeyNth(t *testing.T) {
	// Two loops headed by the same call site (nodes split by bytes).
	g := &flowgraph.Graph{Initial: 0, Sites: []flowgraph.CallSite{{Addr: 0x10}}}
	for _, b := range []int64{0, 8, 16} {
		g.Nodes = append(g.Nodes, flowgraph.Node{Key: flowgraph.NodeKey{Call: "Send", Site: 0, Bytes: b}})
	}
	g.Edges = []flowgraph.Edge{{Src: 0, Dst: 1}, {Src: 1, Dst: 1}, {Src: 1, Dst: 2}, {Src: 2, Dst: 2}}
	c, err := Collapse(g)
	require.NoError(t, err)
	keys := LoopKeys(g, c)
	require.Len(t, keys, 2)
	assert.Equal(t, LoopKey{Call: "Send", Addr: 0x10, Self: true}, keys[0])
	assert.Equal(t, LoopKey{Call: "Send", Addr: 0x10, Self: true, Nth: 1}, keys[1])
	assert.Equal(t, "Send@0x10 self#1", keys[1].String())
}

func TestTable(t *testing.T) {
	rs := []RankSummary{
		{Nodes: 10, TopNodes: 4, Loops: 2, Total: 100, LoopTime: 90},
		{Nodes: 20, TopNodes: 6, Loops: 4, Total: 300, LoopTime: 210},
	}
	row := Table(rs)
	assert.Equal(t, 2, row.Ranks)
	assert.InDelta(t, 15.0, row.AvgNodes, 1e-12)
	assert.InDelta(t, 5.0, row.AvgTopNodes, 1e-12)
	assert.InDelta(t, 3.0, row.AvgLoops, 1e-12)
	assert.InDelta(t, 100*(1-10.0/30), row.ReductionPct, 1e-9)
	assert.InDelta(t, 75.0, row.LoopTimePct, 1e-9)
	assert.Equal(t, TableRow{}, Table(nil))
}

func TestSummarize(t *testing.T) {
	g := seqGraph(cat([]string{"Init"}, repeat(3, "A", "B"), []string{"Fin"})...)
	rs := collapseRanks(t, g)
	s := Summarize(rs[0])
	assert.Equal(t, 4, s.Nodes)
	assert.Equal(t, 3, s.TopNodes)
	assert.Equal(t, 1, s.Loops)
	// The loop holds 6 calls and 5 transitions; the total adds Init,
	// Fin and the two transitions into and out of the loop.
	assert.Equal(t, int64(6*callTime+5*gapTime), s.LoopTime)
	assert.Equal(t, int64(8*callTime+7*gapTime), s.Total)
}

func TestGroupTreePreorder(t *testing.T) {
	// Loop 3 is nested in Loop 1 but got its number after the sibling
	// Loop 2 (Loop 1 was entered again after Loop 2 ran): nested loops
	// must still follow their parent.
	rows := []TreeRow{{ID: 1}, {ID: 2, Parent: 0}, {ID: 3, Parent: 1}, {ID: 4, Parent: 3}, {ID: 5, Parent: 2}}
	got := preorder(rows)
	ids := make([]int, len(got))
	for i, r := range got {
		ids[i] = r.ID
	}
	assert.Equal(t, []int{1, 3, 4, 2, 5}, ids)
}

func TestLoopKeySelfLoopSharingHeader(t *testing.T) {
	// Rank 0 repeats A at the top of its loop, rank 1 does not: the outer
	// loops must match each other, not rank 0's nested self-loop.
	rs := collapseRanks(t,
		seqGraph(cat([]string{"Init"}, repeat(3, "A", "A", "B"), []string{"Fin"})...),
		seqGraph(cat([]string{"Init"}, repeat(3, "A", "B"), []string{"Fin"})...),
	)
	k0 := LoopKeys(rs[0].Graph, rs[0].Collapsed)
	k1 := LoopKeys(rs[1].Graph, rs[1].Collapsed)
	require.Len(t, k0, 2)
	require.Len(t, k1, 1)
	assert.Equal(t, k0[0], k1[0])
	assert.True(t, k0[1].Self)
	assert.Equal(t, 0, k0[1].Nth)
}

// TestSharesLeaveOutInit checks that time inside MPI_Init, start-up cost,
// is not part of the time that loop shares divide, as in mpiflow stats.
func TestSharesLeaveOutInit(t *testing.T) {
	g := seqGraph(cat([]string{"MPI_Init"}, repeat(3, "A", "B"), []string{"Fin"})...)
	rs := collapseRanks(t, g)
	c := rs[0].Collapsed
	assert.Equal(t, int64(8*callTime+7*gapTime), c.Total, "Total keeps everything")
	assert.Equal(t, int64(callTime), c.Init)
	s := Summarize(rs[0])
	assert.Equal(t, int64(7*callTime+7*gapTime), s.Total)
	assert.InDelta(t, float64(6*callTime+5*gapTime)/float64(7*callTime+7*gapTime), c.Loops[0].Stats.Share, 1e-12)
}
