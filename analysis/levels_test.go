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
