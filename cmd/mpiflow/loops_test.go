package main

import (
	"encoding/json"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
	"mpiflow/report"
)

// haloJob writes a job whose ranks run: Init, iters x (Irecv, Send, Wait,
// Allreduce), Finalize; rare ranks also call MPI_Iprobe once, in their
// 25th iteration.
func haloJob(t *testing.T, iters []int, rare ...int) string {
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
		for i := range n {
			add("MPI_Irecv")
			add("MPI_Send")
			add("MPI_Wait")
			add("MPI_Allreduce")
			if i == 25 && slices.Contains(rare, r) {
				add("MPI_Iprobe")
			}
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
	var got report.LoopsOutput
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

// TestLoopsSimilarity: ranks 1 and 3 take a branch once in 50 iterations;
// by default all four ranks are one group of two structures, each rank
// with its similarity to the representative; with --similarity 1, two.
func TestLoopsSimilarity(t *testing.T) {
	path := haloJob(t, []int{50, 50, 50, 50}, 1, 3)
	out, _, err := run(t, "loops", path)
	require.NoError(t, err)
	assert.Contains(t, out, "4 rank(s) in 1 group(s) of similar structure (similarity 0.90)")
	assert.Regexp(t, `2 structures; representative rank [0-3]; least similar member 0\.9[0-9]+`, out)

	js, _, err := run(t, "loops", "--json", path)
	require.NoError(t, err)
	var got report.LoopsOutput
	require.NoError(t, json.Unmarshal([]byte(js), &got))
	assert.InDelta(t, 0.9, got.Similarity, 1e-12)
	require.Len(t, got.Groups, 1)
	g := got.Groups[0]
	assert.Equal(t, 2, g.Structures)
	require.Len(t, g.Ranks, 4)
	rep := g.Representative.Rank
	for _, m := range g.Ranks {
		if m.Rank%2 == rep%2 {
			assert.InDelta(t, 1, m.Similarity, 1e-12, "rank %d has the representative's structure", m.Rank)
		} else {
			assert.Less(t, m.Similarity, 1.0, "rank %d", m.Rank)
			assert.Greater(t, m.Similarity, 0.9, "rank %d", m.Rank)
		}
	}

	out, _, err = run(t, "loops", "--similarity", "1", path)
	require.NoError(t, err)
	assert.Contains(t, out, "4 rank(s) in 2 group(s) with the same loop structure")
	assert.Contains(t, out, "rank(s) 0,2,")
	assert.Contains(t, out, "rank(s) 1,3,")
}

// TestWorkers: --workers bounds the ranks analysed at once, not what is
// found.
func TestWorkers(t *testing.T) {
	path, _ := genJob(t)
	want, _, err := run(t, "loops", "--json", path)
	require.NoError(t, err)
	before := runtime.GOMAXPROCS(0)
	got, _, err := run(t, "--workers", "1", "loops", "--json", path)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, before, runtime.GOMAXPROCS(0), "the test helper restores it")
}
