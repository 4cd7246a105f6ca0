package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
	"mpiflow/report"
)

// run executes the CLI with args and returns stdout, stderr and the error.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0)) // --workers sets it
	err := root.Execute()
	return out.String(), errOut.String(), err
}

// genJob writes a generated 4-rank job and returns its path.
func genJob(t *testing.T) (string, []*flowgraph.Rank) {
	t.Helper()
	h, ranks := flowgen.Run(flowgen.Options{Seed: 3, Events: 2000, Depth: 3, Sites: 10, Branchy: true}, 4, 2)
	h.Command = []string{"./halo", "<script>"}
	h.Executable, h.Env = "/opt/apps/halo", []string{"MPIFLOW_BUDGET=64K", "OMP_NUM_THREADS=2"}
	path := filepath.Join(t.TempDir(), "halo.mpiflow")
	require.NoError(t, flowgraph.WriteFile(path, h, ranks))
	return path, ranks
}

func TestStats(t *testing.T) {
	path, ranks := genJob(t)
	out, _, err := run(t, "stats", path)
	require.NoError(t, err)
	assert.Contains(t, out, "mpi_tasks : 4 on 2 host(s)")
	assert.Contains(t, out, "./halo <script>")
	assert.Contains(t, out, "# exe       : /opt/apps/halo\n# env       : MPIFLOW_BUDGET=64K OMP_NUM_THREADS=2\n")

	// The table's counts add up to the events of all ranks.
	var events int64
	for _, r := range ranks {
		events += r.Graph.NumEvents
	}
	js, _, err := run(t, "stats", "--json", path)
	require.NoError(t, err)
	var got report.StatsOutput
	require.NoError(t, json.Unmarshal([]byte(js), &got))
	var sum int64
	for _, c := range got.Calls {
		sum += c.Count
		assert.Contains(t, out, c.Call, "text table lists %s", c.Call)
	}
	assert.Equal(t, events, sum)
	assert.Len(t, got.Ranks, 4)
	assert.Greater(t, got.MPIPercent, 0.0)
	assert.Less(t, got.MPIPercent, 100.0)
	// The spread over the ranks, as IPM's banner: the text gives the JSON's
	// figures.
	require.Len(t, got.Spread, 7)
	assert.Contains(t, out, "[total]     <avg>")
	for _, q := range got.Spread {
		assert.Regexp(t, fmt.Sprintf(`# +%s +%s +%s +%s +%d +%s +%d\n`, q.Name, regexp.QuoteMeta(q.Format(q.Total)),
			regexp.QuoteMeta(q.Format(q.Mean)), regexp.QuoteMeta(q.Format(q.Min)), q.MinRank,
			regexp.QuoteMeta(q.Format(q.Max)), q.MaxRank), out)
	}
	assert.InDelta(t, got.MPIPercent, got.Spread[2].Total, 1e-9)
	// JSON keys are snake_case like the rest of the output, not Go names.
	for _, k := range []string{`"command":`, `"wallclock_ns":`, `"clock":`, `"total":`, `"min":`, `"max":`, `"executable":`, `"env":`} {
		assert.Contains(t, js, k)
	}
	assert.NotContains(t, js, `"Total"`)
	assert.NotContains(t, js, `"ClockSource"`)

	js, _, err = run(t, "stats", "--json", "--rank", "1-2", path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(js), &got))
	assert.Len(t, got.Ranks, 2)
}

func TestTraceCSV(t *testing.T) {
	path, ranks := genJob(t)
	out := filepath.Join(t.TempDir(), "t.csv")
	_, _, err := run(t, "trace", path, "--rank", "2", "--format", "csv", "-o", out)
	require.NoError(t, err)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	require.NoError(t, err)
	g := &ranks[2].Graph
	require.Len(t, rows, int(g.NumEvents)+1)
	assert.Equal(t, strings.Split(strings.TrimSpace(strings.ReplaceAll("rank,thread,index,call,site,start_ns,end_ns,duration_ns,compute_before_ns,bytes_mean", " ", "")), ","), rows[0])
	var prevEnd int64
	for i, row := range rows[1:] {
		assert.Equal(t, "2", row[0])
		assert.Equal(t, strconv.Itoa(i), row[2])
		start, _ := strconv.ParseInt(row[5], 10, 64)
		end, _ := strconv.ParseInt(row[6], 10, 64)
		assert.GreaterOrEqual(t, start, prevEnd)
		prevEnd = end
	}
}

func TestCorruptAndBadInput(t *testing.T) {
	path, _ := genJob(t)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	bad := filepath.Join(t.TempDir(), "bad.mpiflow")
	require.NoError(t, os.WriteFile(bad, data[:len(data)-100], 0o644))
	corrupt := filepath.Join(t.TempDir(), "corrupt.mpiflow")
	data[100] ^= 0xff
	require.NoError(t, os.WriteFile(corrupt, data, 0o644))

	fifo := filepath.Join(t.TempDir(), "fifo.mpiflow")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))

	tests := []struct {
		args []string
		want string
	}{
		{[]string{"stats", bad}, bad},
		{[]string{"stats", fifo}, fifo + ": not a regular file (a named pipe)"},
		{[]string{"aggregate", fifo}, "not a regular file"},
		{[]string{"report", fifo}, "not a regular file"},
		{[]string{"stats", corrupt}, "rank 0 at byte 16"},
		{[]string{"trace", corrupt}, "block checksum"},
		{[]string{"stats", "/nonexistent.mpiflow"}, "no such file"},
		{[]string{"stats", "--rank", "x", path}, "bad rank list"},
		{[]string{"stats", "--rank", "99", path}, "no rank matches"},
		{[]string{"stats", "--rank", "9223372036854775807", path}, "the file has ranks 0-3"},
		{[]string{"trace", "--rank", "9223372036854775800-9223372036854775807", path}, "no rank matches"},
		{[]string{"fidelity", "--rank", "9223372036854775807", path}, "no rank matches"},
		{[]string{"trace", "--format", "xml", path}, "unknown format"},
		{[]string{"trace", path, "-o", "/nonexistent-dir/x.csv"}, "/nonexistent-dir/x.csv"},
		{[]string{"stats", "--bogus", path}, "unknown flag"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, _, err := run(t, tt.args...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	// Ranges as wide as an int select what the file holds, at no cost.
	for _, list := range []string{"0-9223372036854775807", "1-100000000000,0"} {
		out, _, err := run(t, "stats", "--json", "--rank", list, path)
		require.NoError(t, err, list)
		var st struct {
			Ranks []json.RawMessage `json:"ranks"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &st))
		assert.Len(t, st.Ranks, 4, list)
	}
}

func TestVersion(t *testing.T) {
	out, _, err := run(t, "version")
	require.NoError(t, err)
	assert.Contains(t, out, fmt.Sprintf("file format %d", flowgraph.FormatVersion))
}

func TestMergeCommand(t *testing.T) {
	h, ranks := flowgen.Run(flowgen.Options{Seed: 4, Events: 300, Depth: 2, Sites: 6}, 2, 2)
	dir := t.TempDir()
	var parts []string
	for _, r := range ranks[:1] {
		p := filepath.Join(dir, "part"+strconv.Itoa(r.Rank))
		require.NoError(t, flowgraph.WriteFile(p, h, []*flowgraph.Rank{r}))
		parts = append(parts, p)
	}
	out := filepath.Join(dir, "job.mpiflow")
	stdout, _, err := run(t, append([]string{"merge", out}, parts...)...)
	require.NoError(t, err)
	assert.Contains(t, stdout, "1 block(s) of 2 rank(s)")
	assert.Contains(t, stdout, "incomplete run")
	// Every reading command says so too.
	stdout, _, err = run(t, "stats", out)
	require.NoError(t, err)
	assert.Contains(t, stdout, "incomplete run")
	// An existing file is replaced only with --force, and never by one
	// of the inputs.
	before, err := os.ReadFile(out)
	require.NoError(t, err)
	_, _, err = run(t, append([]string{"merge", out}, parts...)...)
	require.ErrorContains(t, err, "--force")
	_, _, err = run(t, append([]string{"merge", "--force", parts[0]}, parts...)...)
	require.ErrorContains(t, err, "is the input")
	_, _, err = run(t, append([]string{"merge", "--force", out}, parts...)...)
	require.NoError(t, err)
	after, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, len(before), len(after))
}

// TestOutputIsNotInput: no command writes its output over its input, by
// name or through a link; the input is left as it was.
func TestOutputIsNotInput(t *testing.T) {
	in, _ := genJob(t)
	link := filepath.Join(filepath.Dir(in), "link.mpiflow")
	require.NoError(t, os.Symlink(in, link))
	before, err := os.ReadFile(in)
	require.NoError(t, err)
	for _, out := range []string{in, link} {
		for _, args := range [][]string{
			{"report", in, "-o", out},
			{"trace", in, "--format", "csv", "-o", out},
			{"graph", in, "--rank", "0", "-o", out},
		} {
			_, _, err := run(t, args...)
			require.ErrorContains(t, err, "is the input", "%v", args)
			after, err := os.ReadFile(in)
			require.NoError(t, err)
			require.Equal(t, before, after, "%v", args)
		}
	}
}
