package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/analysis"
)

// scaling prints the runs by rank count and the loops and calls with their
// efficiency, as --json gives them; bad input is an error naming it.
func TestScalingCommand(t *testing.T) {
	// The same work per rank at 2 and 4 ranks: weak scaling is ideal,
	// strong scaling 0.5.
	two, four := haloJob(t, []int{50, 50}), haloJob(t, []int{50, 50, 50, 50})
	js, _, err := run(t, "scaling", "--json", four, two)
	require.NoError(t, err)
	var s analysis.Scaling
	require.NoError(t, json.Unmarshal([]byte(js), &s))
	require.Len(t, s.Runs, 2)
	assert.Equal(t, []int{2, 4}, []int{s.Runs[0].Ranks, s.Runs[1].Ranks})
	require.NotEmpty(t, s.Loops)
	assert.InDelta(t, 0.5, s.Loops[0].Points[1].Efficiency, 1e-9)
	for _, c := range s.Calls {
		assert.NotEqual(t, "MPI_Init", c.Name, "start-up is not scaling")
	}

	out, _, err := run(t, "scaling", "--weak", two, four)
	require.NoError(t, err)
	assert.Contains(t, out, "weak scaling over 2 runs")
	i := strings.Index(out, "\nlost(s)")
	require.GreaterOrEqual(t, i, 0, out)
	rows := strings.Split(strings.TrimSpace(out[i:]), "\n")
	assert.Equal(t, []string{"lost(s)", "t/rank", "@2", "(eff)", "t/rank", "@4", "(eff)", "loop"}, strings.Fields(rows[0]))
	assert.Contains(t, rows[1], "(1.00)", "weak: ideal")

	junk := filepath.Join(t.TempDir(), "junk.mpiflow")
	require.NoError(t, os.WriteFile(junk, []byte("not a profile"), 0o644))
	for _, args := range [][]string{{"scaling", two}, {"scaling", two, junk}, {"scaling", two, filepath.Join(t.TempDir(), "missing.mpiflow")},
		{"scaling", "--top", "-1", two, four}} {
		_, _, err := run(t, args...)
		require.Error(t, err, "%v", args)
		if len(args) > 2 && args[1] != "--top" {
			assert.Contains(t, err.Error(), filepath.Base(args[len(args)-1]))
		}
	}
}

// report --scaling writes the scaling page of several runs; one run is an
// error, as several runs without --scaling.
func TestReportScaling(t *testing.T) {
	two, four := haloJob(t, []int{50, 50}), haloJob(t, []int{50, 50, 50, 50})
	out := filepath.Join(t.TempDir(), "s.html")
	_, stderr, err := run(t, "report", "--scaling", "--weak", two, four, "-o", out)
	require.NoError(t, err)
	assert.Contains(t, stderr, out)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(b), `id="scaling-loops-table"`)
	_, _, err = run(t, "report", "--scaling", two, "-o", out)
	assert.ErrorContains(t, err, "two or more")
	_, _, err = run(t, "report", two, four)
	assert.ErrorContains(t, err, "--scaling")
}
