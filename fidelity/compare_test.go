package fidelity

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

// On a generated job with heavy-tailed timings and the usual anchor
// budget, the rebuilt order is the recorded one, and the recorded trace
// compared with itself has no error.
func TestCompareGenerated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gen.mpiflow")
	opt := flowgen.Options{Seed: 11, Events: 20000, Depth: 3, Sites: 12, Branchy: true, Anchors: 64}
	_, ranks, err := flowgen.WriteJob(path, opt, 4, 2)
	require.NoError(t, err)
	for _, r := range ranks {
		var res RankResult
		a, err := OpenTruth(path, r)
		require.NoError(t, err)
		require.NoError(t, compareEvents(r.Graph.Events(), a, &res))
		a.Close()
		assert.True(t, res.OrderIdentical)
		assert.Equal(t, opt.Events, res.Events)
		assert.Positive(t, res.StartError.Max, "64 anchors for 20000 events cannot place every event")

		res = RankResult{}
		a, err = OpenTruth(path, r)
		require.NoError(t, err)
		b, err := OpenTruth(path, r)
		require.NoError(t, err)
		require.NoError(t, compareEvents(a, b, &res))
		a.Close()
		b.Close()
		assert.True(t, res.OrderIdentical)
		assert.Zero(t, res.StartError)
		assert.Zero(t, res.EndError)
	}
	f, err := flowgraph.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rep, err := Compare(f, Options{})
	require.NoError(t, err)
	assert.True(t, rep.OrderIdentical)
	assert.Equal(t, 4*opt.Events, rep.Events)
	assert.Positive(t, rep.MaxCallShareErrorPP)
	assert.LessOrEqual(t, rep.MaxMPIShareErrorPP, 100.0)
	assert.LessOrEqual(t, rep.MaxCallShareErrorPP, 100.0)
	assert.Len(t, rep.Aggregate, 5)
}
