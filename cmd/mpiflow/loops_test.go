package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
)

// haloJob writes a job whose ranks run: Init, iters x (Irecv x4, Send x4,
// Wait x4 ... as one loop body of 3 calls), Allreduce, Finalize.
func haloJob(t *testing.T, iters []int) string {
	t.Helper()
	h := flowgraph.Header{NumRanks: len(iters), KeyFields: []string{"call", "site"}}
	var ranks []*flowgraph.Rank
	for r, n := range iters {
		b := flowgraph.NewBuilder(0, 0)
		var now int64
		add := func(call string) {
			now += 100
			b.Add(flowgraph.Call{Key: flowgraph.NodeKey{Call: call, Site: -1, Partner: -1, Comm: -1}, Enter: now, Exit: now + 10, Partner: -1})
			now += 10
		}
		add("MPI_Init")
		for range n {
			add("MPI_Irecv")
			add("MPI_Send")
			add("MPI_Wait")
			add("MPI_Allreduce")
		}
		add("MPI_Finalize")
		h.Hosts = append(h.Hosts, "h")
		ranks = append(ranks, &flowgraph.Rank{Rank: r, Complete: true, Graph: b.Graph()})
	}
	path := filepath.Join(t.TempDir(), "halo.mpiflow")
	require.NoError(t, flowgraph.WriteFile(path, h, ranks))
	return path
}

func TestLoopsCommand(t *testing.T) {
	path := haloJob(t, []int{50, 50, 50, 0})
	out, _, err := run(t, "loops", path)
	require.NoError(t, err)
	assert.Contains(t, out, "4 rank(s) in 2 group(s)")
	assert.Contains(t, out, "Loop 1")

	js, _, err := run(t, "loops", "--json", path)
	require.NoError(t, err)
	var got loopsOutput
	require.NoError(t, json.Unmarshal([]byte(js), &got))
	require.Len(t, got.Groups, 2)
	// Ranks 0-2 share one structure: a single loop of 50 iterations.
	g := got.Groups[0]
	assert.Len(t, g.Ranks, 3)
	require.Len(t, g.Tree, 1)
	assert.InDelta(t, 50, g.Tree[0].AvgIterations, 1e-9)
	// 6 distinct calls collapse into Init -> Loop 1 -> Finalize.
	assert.InDelta(t, 6, g.Summary.AvgNodes, 1e-9)
	assert.InDelta(t, 3, g.Summary.AvgTopNodes, 1e-9)
	// Rank 3 never loops.
	assert.Empty(t, got.Groups[1].Tree)

	_, _, err = run(t, "loops", "--rank", "7", path)
	assert.ErrorContains(t, err, "no rank matches")
}
