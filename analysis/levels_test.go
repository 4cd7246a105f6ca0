package analysis

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
)

// levelTime sums the time of a level's nodes (loop nodes with their
// loop's time) and edges, back edges included, in s.
func levelTime(lg *Level, nt int) float64 {
	var s float64
	for _, e := range lg.Nodes {
		s += e.Vals[nt]
	}
	for _, e := range lg.Edges {
		s += e.Vals[nt]
	}
	return s
}

// TestBackEdgesAddUp checks that every level's elements, back edges
// included, add up to its loop's time (the rank's total for the top
// level), on a small loop whose numbers are known and on generated jobs
// with nested and irreducible loops.
func TestBackEdgesAddUp(t *testing.T) {
	const ms = int64(1_000_000)
	// MPI_Init, 3 iterations of 1 ms compute, Send (1 ms), 1 ms compute,
	// Recv (2 ms), then 1 ms compute and MPI_Finalize.
	b := flowgraph.NewBuilder(0, 0)
	now := int64(0)
	for i, c := range []string{"MPI_Init", "MPI_Send", "MPI_Recv", "MPI_Send", "MPI_Recv", "MPI_Send", "MPI_Recv", "MPI_Finalize"} {
		site := b.Site(flowgraph.CallSite{Addr: uint64(0x1000 + len(c)), Object: "/bin/pp", Offset: uint64(0x100 + len(c))})
		dur := ms
		if c == "MPI_Recv" {
			dur = 2 * ms
		}
		if i > 0 {
			now += ms
		}
		b.Add(flowgraph.Call{Key: flowgraph.NodeKey{Call: c, Site: site, Partner: -1, Comm: -1}, Enter: now, Exit: now + dur, Partner: -1})
		now += dur
	}
	g := b.Graph()
	require.NoError(t, g.Validate())
	levels, c, err := RankLevels(&g, nil)
	require.NoError(t, err)
	require.Len(t, levels, 2)
	nt, nc := MetricIndex(Metrics(nil), MetricTime), MetricIndex(Metrics(nil), MetricCount)
	loop := &levels[1]
	require.Len(t, loop.Edges, 2, "send -> recv and the back edge recv -> send")
	back := loop.Edges[1]
	assert.True(t, back.Back)
	assert.False(t, loop.Edges[0].Back)
	assert.Equal(t, "MPI_Recv", loop.Nodes[back.Src].Call)
	assert.Equal(t, "MPI_Send", loop.Nodes[back.Dst].Call)
	assert.Equal(t, 2.0, back.Vals[nc], "two iterations start over")
	assert.InDelta(t, 0.002, back.Vals[nt], 1e-12)
	// 3 x (send 1 + compute 1 + recv 2) + 2 x 1 ms back: 14 ms.
	assert.InDelta(t, 0.014, levelTime(loop, nt), 1e-12)
	assert.InDelta(t, float64(c.Loops[0].Stats.Time)/1e9, levelTime(loop, nt), 1e-12)
	assert.InDelta(t, float64(c.Total)/1e9, levelTime(&levels[0], nt), 1e-12)
	for _, e := range levels[0].Edges {
		assert.False(t, e.Back, "the top level has no back edges")
	}

	job, err := Load(genJob(t, 6, nil), Options{})
	require.NoError(t, err)
	backs := 0
	for _, r := range job.Ranks {
		require.NoError(t, r.LoopErr)
		for id := range r.Levels {
			lg := &r.Levels[id]
			want := float64(r.Collapsed.Total) / 1e9
			if id > 0 {
				want = float64(r.Collapsed.Loop(id).Stats.Time) / 1e9
			}
			assert.InDelta(t, want, levelTime(lg, nt), 1e-9*max(1, want), "%s level %d", r.Label, id)
			for _, e := range lg.Edges {
				if e.Back {
					backs++
					assert.Equal(t, lg.Nodes[e.Dst].Call, r.Graph.Nodes[r.Collapsed.Loop(id).Header].Key.Call, "a back edge ends at the header")
				}
			}
		}
	}
	assert.Positive(t, backs)
}

// TestLevelCap checks that a level of more than MaxLevelNodes nodes keeps
// its heaviest nodes, its first node and its loop header, and that the
// merged node and the edges to it keep every second and call: on a run of
// distinct call sites at the top level, and inside a loop whose body has
// that many call sites.
func TestLevelCap(t *testing.T) {
	const n = 3 * MaxLevelNodes
	build := func(iters int) flowgraph.Graph {
		b := flowgraph.NewBuilder(0, 0)
		now := int64(0)
		add := func(c string, i int, dur int64) {
			site := b.Site(flowgraph.CallSite{Addr: uint64(0x1000 + 16*i), Object: "/bin/sites", Offset: uint64(16 * i)})
			b.Add(flowgraph.Call{Key: flowgraph.NodeKey{Call: c, Site: site, Partner: -1, Comm: -1}, Enter: now, Exit: now + dur, Partner: -1})
			now += dur + 10
		}
		add("MPI_Init", 0, 5)
		for range iters {
			for i := 1; i <= n; i++ {
				add("MPI_Barrier", i, int64(i)) // later sites take longer
			}
		}
		add("MPI_Finalize", n+1, 1)
		return b.Graph()
	}
	for _, tc := range []struct {
		name  string
		iters int
		level int
	}{{"top level", 1, 0}, {"loop body", 3, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			g := build(tc.iters)
			require.NoError(t, g.Validate())
			levels, c, err := RankLevels(&g, nil)
			require.NoError(t, err)
			require.Greater(t, len(levels), tc.level)
			nt, nc := MetricIndex(Metrics(nil), MetricTime), MetricIndex(Metrics(nil), MetricCount)
			lg := &levels[tc.level]
			require.Len(t, lg.Nodes, MaxLevelNodes)
			other := lg.Nodes[len(lg.Nodes)-1]
			assert.Equal(t, "other nodes", other.Call)
			kept := map[string]bool{}
			for _, e := range lg.Nodes[:len(lg.Nodes)-1] {
				assert.Zero(t, e.Merged)
				kept[e.Where] = true
			}
			assert.True(t, kept[siteWhere(&g, n-1)], "a heavy site is kept")
			assert.False(t, kept[siteWhere(&g, 2)], "a light site is merged")
			var levelNodes int
			var calls float64
			for _, e := range lg.Nodes {
				calls += e.Vals[nc]
			}
			if tc.level == 0 {
				levelNodes = len(c.Levels[0].Nodes)
				assert.Equal(t, 0, lg.Initial, "MPI_Init holds the first event")
				assert.Equal(t, "MPI_Init", lg.Nodes[0].Call)
				assert.InDelta(t, float64(c.Total)/1e9, levelTime(lg, nt), 1e-12)
				assert.Equal(t, float64(g.NumEvents), calls)
			} else {
				l := c.Loop(tc.level)
				levelNodes = len(c.Levels[tc.level].Nodes)
				assert.Contains(t, lg.Header, "MPI_Barrier")
				assert.Equal(t, g.Nodes[l.Header].Key.Site, lg.Nodes[0].Site, "the header is kept")
				assert.InDelta(t, float64(l.Stats.Time)/1e9, levelTime(lg, nt), 1e-12)
				assert.Equal(t, float64(tc.iters*n), calls)
			}
			assert.Equal(t, levelNodes-(MaxLevelNodes-1), other.Merged)
			for _, e := range lg.Edges {
				assert.Less(t, e.Src, len(lg.Nodes))
				assert.Less(t, e.Dst, len(lg.Nodes))
			}
			assert.Contains(t, structure(levels), otherKey)
		})
	}
}

// TestRawLevelsCap checks the cap on the whole graph drawn as one level.
func TestRawLevelsCap(t *testing.T) {
	b := flowgraph.NewBuilder(0, 0)
	for i := range 2 * MaxLevelNodes {
		site := b.Site(flowgraph.CallSite{Addr: uint64(0x1000 + 16*i)})
		b.Add(flowgraph.Call{Key: flowgraph.NodeKey{Call: "MPI_Barrier", Site: site, Partner: -1, Comm: -1}, Enter: int64(100 * i), Exit: int64(100*i + i), Partner: -1})
	}
	g := b.Graph()
	lg := rawLevels(&g, Metrics(nil), nil)[0]
	require.Len(t, lg.Nodes, MaxLevelNodes)
	assert.Equal(t, MaxLevelNodes+1, lg.Nodes[MaxLevelNodes-1].Merged)
	assert.Equal(t, 0, lg.Initial)
	nc := MetricIndex(Metrics(nil), MetricCount)
	var edges float64
	for _, e := range lg.Edges {
		edges += e.Vals[nc]
	}
	assert.Equal(t, float64(len(g.Edges)), edges, "every transition is still counted")
}

// TestLevelCapMergedLoops: loops merged into a level's other node count
// their calls, as its other nodes do, not their iterations.
func TestLevelCapMergedLoops(t *testing.T) {
	b := flowgraph.NewBuilder(0, 0)
	now := int64(0)
	add := func(site int, dur int64) {
		s := b.Site(flowgraph.CallSite{Addr: uint64(0x1000 + 16*site)})
		b.Add(flowgraph.Call{Key: flowgraph.NodeKey{Call: "MPI_Barrier", Site: s, Partner: -1, Comm: -1}, Enter: now, Exit: now + dur, Partner: -1})
		now += dur + 10
	}
	add(0, 1)
	for i := 1; i <= MaxLevelNodes+50; i++ {
		add(i, 1000+int64(i)) // heavy calls of their own
	}
	for l := range 100 { // light loops of two calls, three iterations
		for range 3 {
			add(10000+2*l, 1)
			add(10001+2*l, 1)
		}
	}
	g := b.Graph()
	levels, c, err := RankLevels(&g, nil)
	require.NoError(t, err)
	require.Len(t, c.Loops, 100)
	nc := MetricIndex(Metrics(nil), MetricCount)
	lg := &levels[0]
	require.Len(t, lg.Nodes, MaxLevelNodes)
	other := lg.Nodes[len(lg.Nodes)-1]
	require.Positive(t, other.Merged)
	kept := 0.0
	for _, e := range lg.Nodes[:len(lg.Nodes)-1] {
		require.Equal(t, KindNode, e.Kind, "the light loops are merged")
		kept += e.Vals[nc]
	}
	assert.Equal(t, float64(g.NumEvents)-kept, other.Vals[nc], "600 calls of the loops, 3 x 2 each")
}
