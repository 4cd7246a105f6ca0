package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/analysis"
	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
	"mpiflow/internal/units"
	"mpiflow/report"
)

// stats --sites prints the call sites in text and JSON with the same
// numbers, and they add up to the calls of the table.
func TestStatsSites(t *testing.T) {
	path, ranks := genJob(t)
	js, _, err := run(t, "stats", "--sites", "--json", path)
	require.NoError(t, err)
	var got report.StatsOutput
	require.NoError(t, json.Unmarshal([]byte(js), &got))
	require.NotEmpty(t, got.Sites)
	var events int64
	for _, r := range ranks {
		events += r.Graph.NumEvents
	}
	perCall := map[string]int64{}
	for _, s := range got.Sites {
		perCall[s.Call] += s.Count
	}
	for _, c := range got.Calls {
		assert.Equal(t, c.Count, perCall[c.Call], c.Call)
		events -= c.Count
	}
	assert.Zero(t, events, "the calls are all the events")

	out, _, err := run(t, "stats", "--sites", path)
	require.NoError(t, err)
	for _, s := range got.Sites {
		// One row per site: call, site, count, total, avg, bytes, ranks.
		row := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(s.Call) + `\s+` + regexp.QuoteMeta(s.Site) + `\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+ \S+)\s+(\d+) \(`)
		m := row.FindStringSubmatch(out)
		require.NotNil(t, m, "row of %s at %s in\n%s", s.Call, s.Site, out)
		assert.Equal(t, []string{strconv.FormatInt(s.Count, 10), units.NS(s.Time.Total), units.NS(s.Avg()), units.Bytes(float64(s.Bytes)), strconv.Itoa(s.Ranks)}, m[1:])
	}

	// Without --sites: no table, no JSON field.
	out, _, err = run(t, "stats", path)
	require.NoError(t, err)
	assert.NotContains(t, out, "site")
	js, _, err = run(t, "stats", "--json", path)
	require.NoError(t, err)
	assert.False(t, strings.Contains(js, `"sites"`))
}

// stats --matrix counts every send once, at its sender, and prints the
// same cells in text as in JSON: the whole matrix for few ranks, the
// busiest pairs for many.
func TestStatsMatrix(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "profiles", "unusual.mpiflow") // asymmetric, some sends without a destination
	f, err := flowgraph.Open(path)
	require.NoError(t, err)
	defer f.Close()
	js, _, err := run(t, "stats", "--matrix", "--json", path)
	require.NoError(t, err)
	var got report.StatsOutput
	require.NoError(t, json.Unmarshal([]byte(js), &got))
	require.NotNil(t, got.Comm)
	require.NotEmpty(t, got.Comm.Cells)
	var sends int64
	for i := range f.Index {
		r, err := f.ReadRank(i)
		require.NoError(t, err)
		for _, n := range r.Graph.Nodes {
			switch n.Key.Call {
			case "MPI_Send", "MPI_Isend", "MPI_Ssend", "MPI_Issend", "MPI_Bsend", "MPI_Ibsend", "MPI_Rsend", "MPI_Irsend":
				sends += n.Count
			}
		}
	}
	require.Positive(t, sends)
	counted := got.Comm.Unattributed.Count
	for _, c := range got.Comm.Cells {
		counted += c.Count
	}
	assert.Equal(t, sends, counted, "every send once")

	out, _, err := run(t, "stats", "--matrix", path)
	require.NoError(t, err)
	rows := map[int][]string{}
	for _, line := range strings.Split(out[strings.Index(out, "from\\to"):], "\n")[1:] {
		if f := strings.Fields(line); len(f) > 0 {
			r, err := strconv.Atoi(f[0])
			require.NoError(t, err, line)
			rows[r] = f[1:]
		}
	}
	require.Len(t, rows, got.Comm.Size)
	// Bytes take two fields ("1.5 KiB"), empty cells one ("-").
	cell := func(from, to int) string {
		f := rows[from]
		for k := 0; k < to; k++ {
			if f[0] == "-" {
				f = f[1:]
			} else {
				f = f[2:]
			}
		}
		if f[0] == "-" {
			return "-"
		}
		return f[0] + " " + f[1]
	}
	filled := map[[2]int]bool{}
	for _, c := range got.Comm.Cells {
		assert.Equal(t, units.Bytes(float64(c.Bytes)), cell(c.From, c.To), "%d -> %d", c.From, c.To)
		filled[[2]int{c.From, c.To}] = true
	}
	for from := 0; from < got.Comm.Size; from++ {
		for to := 0; to < got.Comm.Size; to++ {
			if !filled[[2]int{from, to}] {
				assert.Equal(t, "-", cell(from, to), "%d -> %d", from, to)
			}
		}
	}

	// Without --matrix: no JSON field.
	js, _, err = run(t, "stats", "--json", path)
	require.NoError(t, err)
	assert.NotContains(t, js, `"comm"`)
}

// stats says what the recording's budget approximated, in text and JSON,
// and nothing of a budget where there was none.
func TestStatsBudget(t *testing.T) {
	h, ranks := flowgen.Run(flowgen.Options{Seed: 40, Events: 100_000, Depth: 3, Sites: 12, Polls: true, Budget: 4 << 10}, 2, 2)
	path := filepath.Join(t.TempDir(), "poll.mpiflow")
	require.NoError(t, flowgraph.WriteFile(path, h, ranks))
	var approx int64
	for _, r := range ranks {
		approx += r.Graph.Budget.Approximate
	}
	require.Positive(t, approx)
	js, _, err := run(t, "stats", "--json", path)
	require.NoError(t, err)
	var got report.StatsOutput
	require.NoError(t, json.Unmarshal([]byte(js), &got))
	require.NotNil(t, got.Budget)
	assert.Equal(t, analysis.BudgetSummary{Blocks: 2, Budget: 4 << 10, Runs: ranks[0].Graph.Budget.Runs + ranks[1].Graph.Budget.Runs,
		Approximate: approx, ErrMax: max(ranks[0].Graph.Budget.ErrMax, ranks[1].Graph.Budget.ErrMax)}, *got.Budget)
	out, _, err := run(t, "stats", path)
	require.NoError(t, err)
	assert.Contains(t, out, "# budget    : 4.0 KiB a rank for sequences and timing, 0 of 2 over it; "+strconv.FormatInt(approx, 10)+" of ")

	path, _ = genJob(t)
	out, _, err = run(t, "stats", path)
	require.NoError(t, err)
	assert.NotContains(t, out, "budget")
	js, _, err = run(t, "stats", "--json", path)
	require.NoError(t, err)
	assert.NotContains(t, js, `"budget"`)
}

// stats prints the regions of MPI_Pcontrol, nested ones indented, with the
// figures of --json; a job without them prints no region table.
func TestStatsRegions(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "profiles", "regions.mpiflow") // testdata/apps/regions.c, 4 ranks
	js, _, err := run(t, "stats", "--json", path)
	require.NoError(t, err)
	var got report.StatsOutput
	require.NoError(t, json.Unmarshal([]byte(js), &got))
	require.Len(t, got.Regions, 5)
	out, _, err := run(t, "stats", path)
	require.NoError(t, err)
	i := strings.Index(out, "region (MPI_Pcontrol)")
	require.GreaterOrEqual(t, i, 0, out)
	lines := strings.Split(strings.TrimSpace(out[i:]), "\n")[1:]
	require.Len(t, lines, len(got.Regions))
	for k, r := range got.Regions {
		indent := strings.Repeat("  ", len(r.Path)-1)
		assert.True(t, strings.HasPrefix(strings.TrimPrefix(lines[k], "  "), indent+r.Name), lines[k])
		f := strings.Fields(lines[k][strings.Index(lines[k], r.Name)+len(r.Name):])
		assert.Equal(t, []string{r.RankList, strconv.FormatInt(r.Entries, 10)}, f[:2], lines[k])
		assert.Equal(t, []string{fmt.Sprintf("%.2f", r.MPIPercent()), strconv.FormatInt(r.Calls, 10), r.ByCall[0].Call}, f[len(f)-3:], lines[k])
	}
	assert.Equal(t, []string{"solve", "halo"}, []string{got.Regions[0].Name, got.Regions[1].Name})
	assert.Equal(t, []string{"solve", "halo"}, got.Regions[1].Path)
	assert.EqualValues(t, 40, got.Regions[0].Entries, "10 steps on 4 ranks")

	// With counters (2 instructions per cycle, 3 flop per ns: see the
	// report's TestRegionTable), the compute phases' IPC and Gflop/s.
	out, _, err = run(t, "stats", filepath.Join("..", "..", "testdata", "profiles", "regions-counters.mpiflow"))
	require.NoError(t, err)
	i = strings.Index(out, "region (MPI_Pcontrol)")
	require.GreaterOrEqual(t, i, 0, out)
	lines = strings.Split(strings.TrimSpace(out[i:]), "\n")
	assert.Equal(t, []string{"%mpi", "calls", "IPC", "Gflop/s", "most", "MPI", "time"}, strings.Fields(lines[0])[10:])
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		assert.Equal(t, []string{"2.00", "3"}, f[len(f)-3:len(f)-1], l)
	}

	out, _, err = run(t, "stats", filepath.Join("..", "..", "testdata", "profiles", "ring.mpiflow"))
	require.NoError(t, err)
	assert.NotContains(t, out, "region")
}
