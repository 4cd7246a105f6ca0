package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/analysis"
	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

// TestDiffCommand: a halo loop run twice as long (as many iterations of
// the same calls) comes first in text and JSON with ratio 2; a job against
// itself has only changes within noise; --top limits the table.
func TestDiffCommand(t *testing.T) {
	a := haloJob(t, []int{50, 50, 50, 50})
	b := haloJob(t, []int{100, 100, 100, 100})

	js, _, err := run(t, "diff", "--json", a, b)
	require.NoError(t, err)
	var d analysis.JobDiff
	require.NoError(t, json.Unmarshal([]byte(js), &d))
	assert.Equal(t, a, d.A.Path)
	assert.Equal(t, b, d.B.Path)
	assert.False(t, d.PerRank)
	require.Len(t, d.Groups, 1)
	require.NotEmpty(t, d.Items)
	first := d.Items[0]
	assert.Equal(t, analysis.ItemLoop, first.Kind)
	assert.Equal(t, analysis.StatusMatched, first.Status)
	require.NotNil(t, first.A)
	require.NotNil(t, first.B)
	assert.InDelta(t, 4*50, first.A.Iterations, 1e-9)
	assert.InDelta(t, 4*100, first.B.Iterations, 1e-9)
	assert.InDelta(t, 2, first.Ratio, 0.05)
	assert.InDelta(t, 1, first.IterationRatio, 0.05, "each iteration takes as long")
	assert.False(t, first.WithinNoise)
	for _, k := range []string{`"items":`, `"time_ns":`, `"within_noise":`, `"verdict": "changed`, `"per_rank":`, `"wallclock_ratio":`} {
		assert.Contains(t, js, k)
	}

	out, _, err := run(t, "diff", a, b)
	require.NoError(t, err)
	assert.Contains(t, out, "# file       "+a)
	assert.Contains(t, out, "matched by signature")
	// The first row is that loop, changed, with its ratio and iterations.
	rows := strings.Split(out, "\n")
	i := slicesIndexPrefix(rows, "status")
	require.GreaterOrEqual(t, i, 0, out)
	assert.Regexp(t, `^changed, per iteration noise\s+1\s+\S+\s+\S+\s+\S+\s+\S+\s+x2\.0\d\s+\S+\s+\S+\s+200\s+400\s+.*loop `+regexp.QuoteMeta(first.Name)+`$`, rows[i+1])

	out, _, err = run(t, "diff", "--top", "1", a, a)
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^noise\s`, out)
	assert.NotRegexp(t, `(?m)^(changed|new|gone)\s`, out)
	assert.Regexp(t, `# \d+ more item\(s\): --top 0 or --json for all`, out)
	assert.Equal(t, 1, strings.Count(out, "\nnoise "), "--top 1: one row")
}

// TestDiffCommandRanksAndPartial: runs at 4 ranks and at 2 ranks compare
// per rank, and a partial run is named.
func TestDiffCommandRanksAndPartial(t *testing.T) {
	a := haloJob(t, []int{50, 50, 50, 50})
	h, ranks := flowgen.Run(flowgen.Options{Seed: 3, Events: 500, Depth: 2, Sites: 6}, 2, 2)
	h.Incomplete = true
	b := filepath.Join(t.TempDir(), "partial.mpiflow")
	require.NoError(t, flowgraph.WriteFile(b, h, ranks))
	out, _, err := run(t, "diff", a, b)
	require.NoError(t, err)
	assert.Contains(t, out, "# NOTE: B is an incomplete run")
	assert.NotContains(t, out, "# NOTE: A")
	assert.Contains(t, out, "the runs have 4 and 2 rank(s): times, iterations, calls and bytes are means per rank")
	assert.Contains(t, out, "-2 rank(s)")

	js, _, err := run(t, "diff", "--json", a, b)
	require.NoError(t, err)
	var d analysis.JobDiff
	require.NoError(t, json.Unmarshal([]byte(js), &d))
	assert.True(t, d.PerRank)
	assert.True(t, d.Change.Partial)
	assert.True(t, d.B.Incomplete)
}

// TestDiffBadInput: a missing or corrupt file, or a bad flag, is an error
// that names it, never a panic.
func TestDiffBadInput(t *testing.T) {
	good := filepath.Join("..", "..", "testdata", "profiles", "ring.mpiflow")
	data, err := os.ReadFile(good)
	require.NoError(t, err)
	dir := t.TempDir()
	truncated := filepath.Join(dir, "truncated.mpiflow")
	require.NoError(t, os.WriteFile(truncated, data[:len(data)/2], 0o644))
	flipped := filepath.Join(dir, "flipped.mpiflow")
	bad := append([]byte(nil), data...)
	bad[100] ^= 0xff
	require.NoError(t, os.WriteFile(flipped, bad, 0o644))
	garbage := filepath.Join(dir, "garbage.mpiflow")
	require.NoError(t, os.WriteFile(garbage, []byte("not a profile\n"), 0o644))
	missing := filepath.Join(dir, "missing.mpiflow")

	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing A", []string{"diff", missing, good}, missing},
		{"missing B", []string{"diff", good, missing}, missing},
		{"truncated B", []string{"diff", good, truncated}, truncated},
		{"corrupt A", []string{"diff", flipped, good}, flipped},
		{"not a profile", []string{"diff", good, garbage}, garbage},
		{"one file", []string{"diff", good}, "accepts 2 arg(s)"},
		{"bad --top", []string{"diff", "--top", "-1", good, good}, "--top -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := run(t, tt.args...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Empty(t, out)
		})
	}
}

// slicesIndexPrefix returns the index of the first of rows that starts
// with prefix, -1 if none does.
func slicesIndexPrefix(rows []string, prefix string) int {
	for i, r := range rows {
		if strings.HasPrefix(r, prefix) {
			return i
		}
	}
	return -1
}
