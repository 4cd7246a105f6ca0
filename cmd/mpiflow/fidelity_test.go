package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/export/otf2"
	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

// fidelityJSON is the schema `fidelity --json` promises.
type fidelityJSON struct {
	File   string `json:"file"`
	Slices int    `json:"slices"`
	Ranks  []struct {
		Rank           int            `json:"rank"`
		Thread         int            `json:"thread"`
		Events         int64          `json:"events"`
		OrderIdentical bool           `json:"order_identical"`
		StartError     map[string]int `json:"start_error_ns"`
		EndError       map[string]int `json:"end_error_ns"`
		MPIShare       *float64       `json:"max_mpi_share_error_pp"`
		CallShare      *float64       `json:"max_call_share_error_pp"`
		WorstCall      string         `json:"worst_call"`
		WorstSlice     *int           `json:"worst_slice"`
	} `json:"ranks"`
	MPIShare  *float64 `json:"max_mpi_share_error_pp"`
	CallShare *float64 `json:"max_call_share_error_pp"`
	WorstCall string   `json:"worst_call"`
	Aggregate []struct {
		P          float64 `json:"p"`
		Same       *bool   `json:"same"`
		Equivalent *bool   `json:"equivalent"`
		QualityGap float64 `json:"quality_gap"`
	} `json:"aggregate"`
}

// checkFidelity runs `fidelity --json` on path and checks what must hold
// whatever the timing: the schema, identical order, ordered percentiles,
// shares within 0..100 points.
func checkFidelity(t *testing.T, path string, nranks int, args ...string) fidelityJSON {
	t.Helper()
	out, _, err := run(t, append([]string{"fidelity", path, "--json"}, args...)...)
	require.NoError(t, err)
	var got fidelityJSON
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	assert.Equal(t, path, got.File)
	require.Len(t, got.Ranks, nranks)
	for _, r := range got.Ranks {
		assert.True(t, r.OrderIdentical, "rank %d", r.Rank)
		assert.Positive(t, r.Events)
		for _, e := range []map[string]int{r.StartError, r.EndError} {
			require.Len(t, e, 4, "p50, p90, p99, max")
			assert.LessOrEqual(t, 0, e["p50"])
			assert.LessOrEqual(t, e["p50"], e["p90"])
			assert.LessOrEqual(t, e["p90"], e["p99"])
			assert.LessOrEqual(t, e["p99"], e["max"])
		}
		require.NotNil(t, r.MPIShare)
		require.NotNil(t, r.CallShare)
		require.NotNil(t, r.WorstSlice)
		assert.True(t, *r.MPIShare >= 0 && *r.MPIShare <= 100)
		assert.True(t, *r.CallShare >= 0 && *r.CallShare <= 100)
		assert.True(t, *r.WorstSlice >= 0 && *r.WorstSlice < got.Slices)
	}
	require.NotNil(t, got.MPIShare)
	require.NotNil(t, got.CallShare)
	require.Len(t, got.Aggregate, 5)
	for i, a := range got.Aggregate {
		assert.InDelta(t, []float64{0.1, 0.3, 0.5, 0.7, 0.9}[i], a.P, 1e-12)
		assert.NotNil(t, a.Same)
		assert.NotNil(t, a.Equivalent)
	}
	return got
}

func TestFidelityCommand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gen.mpiflow")
	_, _, err := flowgen.WriteJob(path, flowgen.Options{Seed: 3, Events: 5000, Depth: 3, Sites: 10, Branchy: true, Anchors: 64}, 4, 2)
	require.NoError(t, err)

	got := checkFidelity(t, path, 4)
	assert.Equal(t, 30, got.Slices)
	got = checkFidelity(t, path, 2, "--rank", "1-2", "--slices", "12")
	assert.Equal(t, 12, got.Slices)
	assert.Equal(t, 1, got.Ranks[0].Rank)

	out, _, err := run(t, "fidelity", path)
	require.NoError(t, err)
	for _, s := range []string{"4 rank block(s), 20000 events, 30 time slices", "START ERR p50", "same", "Best partitions", "p=0.9"} {
		assert.Contains(t, out, s)
	}

	require.NoError(t, os.Remove(flowgraph.TracePath(path, 3, 0)))
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"fidelity", path}, flowgraph.TracePath(path, 3, 0) + ": no full trace of rank 3 thread 0: record the run with MPIFLOW_TRACE=1 (or `mpiflow run --trace`)"},
		{[]string{"fidelity", path, "--rank", "9"}, "no rank matches --rank 9"},
		{[]string{"fidelity", path, "--slices", "0"}, "--slices 0"},
		{[]string{"fidelity", "/nonexistent.mpiflow"}, "no such file"},
		{[]string{"trace", path, "--truth", "--rank", "3"}, "MPIFLOW_TRACE=1"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, _, err := run(t, tt.args...)
			assert.ErrorContains(t, err, tt.want)
		})
	}
	// The other ranks still compare.
	checkFidelity(t, path, 3, "--rank", "0-2")
}

// checkTruthCSV runs `trace --truth` on path and checks that the CSV has
// one row per recorded event, with the recorded times on the job's axis.
func checkTruthCSV(t *testing.T, path string, args ...string) {
	t.Helper()
	f, err := flowgraph.Open(path)
	require.NoError(t, err)
	defer f.Close()
	out := filepath.Join(t.TempDir(), "truth.csv")
	_, _, err = run(t, append([]string{"trace", path, "--truth", "-o", out}, args...)...)
	require.NoError(t, err)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	rows, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, rows)
	byRank := map[string][][]string{}
	for _, row := range rows[1:] {
		byRank[row[0]] = append(byRank[row[0]], row)
	}
	for i, e := range f.Index {
		r, err := f.ReadRank(i)
		require.NoError(t, err)
		ft, err := flowgraph.ReadFullTrace(flowgraph.TracePath(path, e.Rank, e.Thread))
		require.NoError(t, err)
		got := byRank[strconv.Itoa(e.Rank)]
		require.Len(t, got, len(ft.Events), "rank %d: one row per recorded event", e.Rank)
		t0 := ft.Events[0].Enter
		for k, ev := range ft.Events {
			assert.Equal(t, r.Graph.Nodes[ev.Node].Key.Call, got[k][3])
			assert.Equal(t, strconv.FormatInt(r.Start+ev.Enter-t0, 10), got[k][5], "rank %d event %d start", e.Rank, k)
			assert.Equal(t, strconv.FormatInt(ev.Exit-ev.Enter, 10), got[k][7], "rank %d event %d duration", e.Rank, k)
		}
	}
}

func TestTraceTruth(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gen.mpiflow")
	_, ranks, err := flowgen.WriteJob(path, flowgen.Options{Seed: 4, Events: 1500, Depth: 3, Sites: 10, Branchy: true, Anchors: 32}, 3, 2)
	require.NoError(t, err)
	checkTruthCSV(t, path)

	// The window and rank selection work as for the rebuilt trace.
	ft, err := flowgraph.ReadFullTrace(flowgraph.TracePath(path, 1, 0))
	require.NoError(t, err)
	t0 := ft.Events[0].Enter
	from, to := ranks[1].Start+ft.Events[200].Enter-t0, ranks[1].Start+ft.Events[400].Enter-t0
	want := 0
	for _, e := range ft.Events {
		if s, x := ranks[1].Start+e.Enter-t0, ranks[1].Start+e.Exit-t0; x > from && s < to {
			want++
		}
	}
	out, _, err := run(t, "trace", path, "--truth", "--rank", "1", "--from", strconv.FormatInt(from, 10)+"ns", "--to", strconv.FormatInt(to, 10)+"ns")
	require.NoError(t, err)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	assert.Len(t, rows, want+1)

	// Chrome: one complete event per recorded event.
	out, _, err = run(t, "trace", path, "--truth", "--format", "chrome", "--rank", "0")
	require.NoError(t, err)
	assert.Equal(t, int(ranks[0].Graph.NumEvents), strings.Count(out, `"ph":"X"`))
	out, _, err = run(t, "trace", path, "--truth", "--format", "paje")
	require.NoError(t, err)
	assert.Contains(t, out, "PajeSetState")
}

// The halo app under MPI with MPIFLOW_TRACE=1: fidelity runs and what
// must hold holds, and the recorded trace exports like the rebuilt one.
func TestFidelityRealRun(t *testing.T) {
	dir := buildHalo(t)
	prof := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "mpirun", "--oversubscribe", "-np", "4",
		"-x", "LD_PRELOAD="+filepath.Join(dir, "lib", "libmpiflow-openmpi.so"), "-x", "MPIFLOW_DIR="+prof,
		"-x", "MPIFLOW_TRACE=1", "-x", "MPIFLOW_QUIET=1", filepath.Join(dir, "halo"), "300")
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	jobs, err := filepath.Glob(filepath.Join(prof, "*.mpiflow"))
	require.NoError(t, err)
	require.Len(t, jobs, 1)

	got := checkFidelity(t, jobs[0], 4)
	for _, r := range got.Ranks {
		// MPI_Init, per iteration 2 Irecv, 2 Send, 2 Wait, 1 Allreduce,
		// and MPI_Finalize (the 2x2 grid gives every rank 2 neighbors).
		assert.GreaterOrEqual(t, r.Events, int64(300*7))
	}
	// The timing keeps exact sums per interval (here of one event: the
	// run fits the default budget), so the targets of format 2 hold: the
	// MPI share of every slice within 0.5 points, every call's within 1,
	// the same aggregation.
	require.NotNil(t, got.MPIShare)
	require.NotNil(t, got.CallShare)
	assert.LessOrEqual(t, *got.MPIShare, 0.5)
	assert.LessOrEqual(t, *got.CallShare, 1.0, "worst call %s", got.WorstCall)
	for _, a := range got.Aggregate {
		require.NotNil(t, a.Equivalent)
		assert.True(t, *a.Equivalent, "aggregate partitions differ at p = %v (quality gap %v)", a.P, a.QualityGap)
	}
	checkTruthCSV(t, jobs[0])

	if !otf2.Supported {
		return
	}
	arch := filepath.Join(t.TempDir(), "a", "truth.otf2")
	_, _, err = run(t, "trace", jobs[0], "--truth", "--format", "otf2", "-o", arch)
	require.NoError(t, err)
	otf2print, err := exec.LookPath("otf2-print")
	if err != nil {
		t.Skip("otf2-print (Debian package otf2-tools) not installed")
	}
	raw, err := exec.Command(otf2print, arch).CombinedOutput()
	require.NoError(t, err, "%s", raw)
	var enters int64
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(l, "ENTER ") && !strings.Contains(l, `"Compute"`) {
			enters++
		}
	}
	var events int64
	for _, r := range got.Ranks {
		events += r.Events
	}
	assert.Equal(t, events, enters, "one MPI region enter per recorded event")
}

// buildHalo builds the preload libraries and the halo app into a
// temporary directory (lib/ and halo), or skips without Open MPI.
func buildHalo(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs MPI: skipped with -short")
	}
	for _, tool := range []string{"make", "mpicc", "mpirun"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s (Open MPI: apt-get install libopenmpi-dev openmpi-bin): %v", tool, err)
		}
	}
	if err := exec.Command("mpicc", "--showme:version").Run(); err != nil {
		t.Skip("needs Open MPI's mpicc")
	}
	dir := t.TempDir()
	out, err := exec.Command("make", "-C", "../..", "libs", "LIBDIR="+filepath.Join(dir, "lib")).CombinedOutput()
	require.NoError(t, err, "make libs: %s", out)
	out, err = exec.Command("mpicc", "-g", "-O1", "-o", filepath.Join(dir, "halo"), "../../testdata/apps/halo.c", "-lm").CombinedOutput()
	require.NoError(t, err, "build halo: %s", out)
	return dir
}
