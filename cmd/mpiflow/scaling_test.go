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
		assert.NotContains(t, []string{"MPI_Init", "MPI_Finalize"}, c.Name, "start-up and shut-down are the launcher's")
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

// The scaling table's loop rows are the loops of each run as mpiflow loops
// gives them: a row's time in a run is its loop's mean time over the ranks
// that have it times those ranks, summed over the groups (the halo at 2,
// 4 and 8 ranks, each rank its own number of iterations; at 8, ranks 6-7
// probe once).
func TestScalingRowsMatchLoops(t *testing.T) {
	iters := func(n, each int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = each + i
		}
		return out
	}
	paths := []string{haloJob(t, iters(2, 200)), haloJob(t, iters(4, 100)), haloJob(t, iters(8, 50), 6, 7)}
	js, _, err := run(t, append([]string{"scaling", "--json"}, paths...)...)
	require.NoError(t, err)
	var s analysis.Scaling
	require.NoError(t, json.Unmarshal([]byte(js), &s))
	require.Len(t, s.Runs, 3)
	for k, path := range paths {
		js, _, err := run(t, "loops", "--json", path)
		require.NoError(t, err)
		var lj struct {
			Groups []struct {
				Tree []struct {
					ID      int     `json:"id"`
					Parent  int     `json:"parent"`
					Header  string  `json:"header"`
					Self    bool    `json:"self_loop"`
					Ranks   int     `json:"ranks"`
					AvgTime float64 `json:"avg_time"`
				} `json:"tree"`
			} `json:"groups"`
		}
		require.NoError(t, json.Unmarshal([]byte(js), &lj))
		want := map[string]float64{}
		for _, g := range lj.Groups {
			name := map[int]string{}
			for _, r := range g.Tree {
				n := r.Header
				if r.Self {
					n += " [self]"
				}
				if p, ok := name[r.Parent]; ok {
					n = p + " > " + n
				}
				name[r.ID] = n
				want[n] += r.AvgTime * float64(r.Ranks)
			}
		}
		require.NotEmpty(t, want, path)
		got := map[string]float64{}
		for _, it := range s.Loops {
			if p := it.Points[k]; p.Present {
				got[it.Name] = p.Time
			}
		}
		require.Len(t, got, len(want), "run %d: the loops of mpiflow loops", k)
		for n, w := range want {
			assert.InDelta(t, w, got[n], 1e-6*w, "run %d: %s", k, n)
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
