//go:build cgo && !nootf2

package otf2

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/aggregate"
	"mpiflow/export"
	exportotf2 "mpiflow/export/otf2"
	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

// TestRoundTrip writes a generated job as OTF2 and reads it back: the
// Compute and MPI regions are at the top level, so the microscopic model
// must equal the one built from the graph directly.
func TestRoundTrip(t *testing.T) {
	h, ranks := flowgen.Run(flowgen.Options{Seed: 21, Events: 2500, Depth: 3, Sites: 12, Branchy: true}, 6, 4)
	dir := t.TempDir()
	path := filepath.Join(dir, "job.mpiflow")
	require.NoError(t, flowgraph.WriteFile(path, h, ranks))
	f, err := flowgraph.Open(path)
	require.NoError(t, err)
	defer f.Close()
	arch := filepath.Join(dir, "out", "trace.otf2")
	_, err = exportotf2.Write(arch, f, export.Options{})
	require.NoError(t, err)

	tr, err := Read(arch)
	require.NoError(t, err)
	require.Len(t, tr.Res, 6)
	for i, r := range tr.Res {
		assert.Equal(t, i, r.Rank, "ranks from the location group names")
		assert.Equal(t, "MPI Rank "+string(rune('0'+i)), r.Name)
	}
	fs, err := aggregate.NewRankSource(&h, ranks, aggregate.FlowOptions{})
	require.NoError(t, err)
	want, err := aggregate.Build(fs, 20, 2)
	require.NoError(t, err)
	got, err := aggregate.Build(tr, 20, 2)
	require.NoError(t, err)
	assert.Equal(t, want.Bounds, got.Bounds)
	gotState := map[string]int{}
	for i, s := range got.States {
		gotState[s] = i
	}
	require.Len(t, got.States, len(want.States))
	for r := range want.Resources {
		for ts := 0; ts < 20; ts++ {
			wc, gc := want.Cell(r, ts), got.Cell(r, ts)
			for s, name := range want.States {
				gs, ok := gotState[name]
				require.True(t, ok, name)
				assert.InDelta(t, float64(wc[s]), float64(gc[gs]), 0.5, "rank %d slice %d %s", r, ts, name)
			}
		}
	}

	// Hierarchy: machine -> host -> rank, like job -> host -> rank.
	hh, err := aggregate.NewHierarchy(tr.DefaultSpec(), tr.Resources())
	require.NoError(t, err)
	assert.Equal(t, "machine", hh.Nodes[0].Name)
	assert.Equal(t, 2, hh.Height())
	assert.Len(t, hh.Nodes[0].Children, 2, "two hosts")
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.otf2")
	require.NoError(t, os.WriteFile(junk, []byte("not an archive\n"), 0o644))
	for _, p := range []string{junk, filepath.Join(dir, "missing.otf2"), dir} {
		_, err := Read(p)
		require.Error(t, err, p)
		assert.Contains(t, err.Error(), p)
	}
}
