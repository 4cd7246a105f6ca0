package fidelity

import (
	"path/filepath"
	"strings"
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

// With run lengths approximated to fit a budget, the order is the recorded
// one up to run lengths, and the report says what was approximated.
func TestCompareApproximateRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "poll.mpiflow")
	opt := flowgen.Options{Seed: 40, Events: 100_000, Depth: 3, Sites: 12, Polls: true, Budget: 4 << 10}
	_, ranks, err := flowgen.WriteJob(path, opt, 2, 2)
	require.NoError(t, err)
	for _, r := range ranks {
		require.NotNil(t, r.Graph.Budget)
		require.Positive(t, r.Graph.Budget.Approximate)
	}
	f, err := flowgraph.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rep, err := Compare(f, Options{})
	require.NoError(t, err)
	assert.False(t, rep.OrderIdentical)
	assert.True(t, rep.OrderUpToRuns)
	for _, r := range rep.Ranks {
		assert.False(t, r.OrderIdentical)
		assert.True(t, r.OrderUpToRuns)
		require.NotNil(t, r.Budget)
		assert.Positive(t, r.Bytes.Sequences)
		assert.Equal(t, r.Budget.Bytes, r.Bytes.Sequences+r.Bytes.Timing)
	}
	var b strings.Builder
	require.NoError(t, rep.WriteText(&b))
	assert.Contains(t, b.String(), "same up to run lengths")
	assert.Contains(t, b.String(), "Recording budget")
}

func TestRunOrder(t *testing.T) {
	tests := []struct {
		name string
		a, b []int
		want bool
	}{
		{"same", []int{1, 2, 2, 3}, []int{1, 2, 2, 3}, true},
		{"runs differ", []int{1, 2, 2, 2, 3, 1, 2, 3}, []int{1, 2, 3, 1, 2, 2, 2, 3}, true},
		{"other call", []int{1, 2, 2, 3, 4}, []int{1, 2, 3, 3, 1}, false},
		{"missing run", []int{1, 2, 3, 3}, []int{1, 3, 3, 3}, false},
	}
	for _, tt := range tests {
		var o runOrder
		ok := true
		for i := range tt.a {
			ok = ok && o.add(tt.a[i], tt.b[i])
		}
		ok = ok && len(o.a) == 0 && len(o.b) == 0
		assert.Equal(t, tt.want, ok, tt.name)
	}
}
