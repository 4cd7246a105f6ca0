package flowgraph_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

func TestMerge(t *testing.T) {
	h, ranks := flowgen.Run(flowgen.Options{Seed: 5, Events: 500, Depth: 2, Sites: 8}, 4, 2)
	dir := t.TempDir()
	// Per-rank partial files, as crashing ranks write them; rank 3 never
	// wrote one and rank 1 stopped early.
	ranks[1].Complete = false
	var parts []string
	for _, r := range ranks[:3] {
		ph := h
		ph.Hosts = make([]string, h.NumRanks)
		ph.Hosts[r.Rank] = h.Hosts[r.Rank]
		p := filepath.Join(dir, fmt.Sprintf("job.%d.partial", r.Rank))
		require.NoError(t, flowgraph.WriteFile(p, ph, []*flowgraph.Rank{r}))
		parts = append(parts, p)
	}
	// Out of order on purpose: the merged file is sorted by rank.
	parts[0], parts[2] = parts[2], parts[0]
	out := filepath.Join(dir, "job.mpiflow")
	require.NoError(t, flowgraph.Merge(out, parts))
	f, err := flowgraph.Open(out)
	require.NoError(t, err)
	defer f.Close()
	assert.True(t, f.Header.Incomplete)
	assert.Equal(t, h.Hosts[:3], f.Header.Hosts[:3])
	// Rank 3 left no host name: it is no host of its own.
	var want []string
	for _, host := range h.Hosts[:3] {
		if !slices.Contains(want, host) {
			want = append(want, host)
		}
	}
	assert.Equal(t, want, f.Header.DistinctHosts())
	require.Len(t, f.Index, 3)
	for i := range 3 {
		r, err := f.ReadRank(i)
		require.NoError(t, err)
		assert.Equal(t, ranks[i], r)
	}

	// A duplicate rank and a foreign job are refused.
	err = flowgraph.Merge(filepath.Join(dir, "dup.mpiflow"), []string{parts[0], parts[0]})
	assert.ErrorContains(t, err, "is in both")
	other := filepath.Join(dir, "other")
	h2 := h
	h2.JobID = "other"
	require.NoError(t, flowgraph.WriteFile(other, h2, []*flowgraph.Rank{ranks[3]}))
	assert.ErrorContains(t, flowgraph.Merge(filepath.Join(dir, "x"), []string{parts[0], other}), `from job "other"`)
	assert.ErrorContains(t, flowgraph.Merge(out, nil), "no input files")
}
