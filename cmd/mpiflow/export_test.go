package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/report"
)

// TestExport: both formats, to -o, to the default name and to standard
// output, with the totals of stats --json.
func TestExport(t *testing.T) {
	path, _ := genJob(t)
	js, _, err := run(t, "stats", "--json", path)
	require.NoError(t, err)
	var st report.StatsOutput
	require.NoError(t, json.Unmarshal([]byte(js), &st))
	require.NotEmpty(t, st.Calls)
	dir := t.TempDir()

	// perCall sums the pprof samples by their leaf function: the MPI
	// call.
	perCall := func(t *testing.T, data []byte) map[string][3]int64 {
		p, err := profile.ParseData(data)
		require.NoError(t, err)
		out := map[string][3]int64{}
		for _, s := range p.Sample {
			name := s.Location[0].Line[0].Function.Name
			v := out[name]
			for k := range v {
				v[k] += s.Value[k]
			}
			out[name] = v
		}
		return out
	}
	checkPprof := func(t *testing.T, data []byte) {
		got := perCall(t, data)
		for _, c := range st.Calls {
			assert.Equal(t, [3]int64{c.Time.Total, c.Count, c.Bytes}, got[c.Call], c.Call)
		}
	}
	checkCaliper := func(t *testing.T, data []byte) {
		var doc map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(data, &doc))
		for _, k := range []string{"data", "columns", "column_metadata", "nodes", "command", "executable", "ranks", "mpi_library", "start_time", "wallclock"} {
			assert.Contains(t, doc, k)
		}
		assert.JSONEq(t, `"./halo <script>"`, string(doc["command"]))
		assert.JSONEq(t, `"/opt/apps/halo"`, string(doc["executable"]))
		assert.JSONEq(t, `4`, string(doc["ranks"]))
		var rows [][]float64
		require.NoError(t, json.Unmarshal(doc["data"], &rows))
		var total float64
		for _, r := range rows {
			total += r[2]
		}
		var want int64
		for _, r := range st.Ranks {
			want += r.Init + r.MPI + r.Compute
		}
		assert.InEpsilon(t, float64(want)/1e9, total, 1e-9)
	}

	tests := []struct {
		name   string
		args   []string
		out    string // the file written, "" for standard output
		stderr string
		check  func(*testing.T, []byte)
	}{
		{"pprof", []string{"--format", "pprof", "-o", filepath.Join(dir, "a.pb.gz")}, filepath.Join(dir, "a.pb.gz"), "wrote the pprof profile of 4 rank block(s)", checkPprof},
		{"caliper", []string{"--format", "caliper", "-o", filepath.Join(dir, "a.json")}, filepath.Join(dir, "a.json"), "to " + filepath.Join(dir, "a.json"), checkCaliper},
		{"pprof default name", []string{"--format", "pprof"}, strings.TrimSuffix(path, ".mpiflow") + ".pb.gz", "", checkPprof},
		{"caliper default name", []string{"--format", "caliper"}, strings.TrimSuffix(path, ".mpiflow") + ".json", "", checkCaliper},
		{"caliper to stdout", []string{"--format", "caliper", "-o", "-"}, "", "", checkCaliper},
		{"pprof to stdout", []string{"--format", "pprof", "-o", "-"}, "", "", checkPprof},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, err := run(t, append([]string{"export", path}, tt.args...)...)
			require.NoError(t, err)
			assert.Contains(t, stderr, tt.stderr)
			data := []byte(stdout)
			if tt.out != "" {
				assert.Empty(t, stdout)
				data, err = os.ReadFile(tt.out)
				require.NoError(t, err)
			}
			tt.check(t, data)
		})
	}

	// --rank keeps the ranks it names.
	out := filepath.Join(dir, "r.pb.gz")
	_, _, err = run(t, "export", path, "--format", "pprof", "--rank", "1-2", "-o", out)
	require.NoError(t, err)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	p, err := profile.ParseData(data)
	require.NoError(t, err)
	ranks := map[string]bool{}
	for _, s := range p.Sample {
		ranks[s.Label["rank"][0]] = true
	}
	assert.Equal(t, map[string]bool{"1": true, "2": true}, ranks)
}

// TestExportBadInput: bad files and flags are errors that name the file
// or the flag, never a panic, and leave no output behind.
func TestExportBadInput(t *testing.T) {
	path, _ := genJob(t)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	dir := t.TempDir()
	truncated := filepath.Join(dir, "truncated.mpiflow")
	require.NoError(t, os.WriteFile(truncated, data[:len(data)-100], 0o644))
	corrupt := filepath.Join(dir, "corrupt.mpiflow")
	data[100] ^= 0xff
	require.NoError(t, os.WriteFile(corrupt, data, 0o644))
	empty := filepath.Join(dir, "empty.mpiflow")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	fifo := filepath.Join(dir, "fifo.mpiflow")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	missing := filepath.Join(dir, "missing.mpiflow")
	readOnly := filepath.Join(dir, "ro")
	require.NoError(t, os.Mkdir(readOnly, 0o555))
	out := filepath.Join(dir, "out.pb.gz")

	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"missing file", []string{"export", missing, "--format", "pprof", "-o", out}, []string{missing, "no such file"}},
		{"truncated file", []string{"export", truncated, "--format", "caliper", "-o", out}, []string{truncated}},
		{"corrupt file", []string{"export", corrupt, "--format", "pprof", "-o", out}, []string{corrupt}},
		{"empty file", []string{"export", empty, "--format", "pprof", "-o", out}, []string{empty}},
		{"not a regular file", []string{"export", fifo, "--format", "pprof", "-o", out}, []string{fifo, "not a regular file"}},
		{"unknown format", []string{"export", path, "--format", "xml", "-o", out}, []string{`unknown format "xml"`, "pprof, caliper"}},
		{"no format", []string{"export", path, "-o", out}, []string{"--format is required"}},
		{"missing directory", []string{"export", path, "--format", "pprof", "-o", "/nonexistent-dir/x.pb.gz"}, []string{"/nonexistent-dir/x.pb.gz"}},
		{"unwritable directory", []string{"export", path, "--format", "caliper", "-o", filepath.Join(readOnly, "x.json")}, []string{filepath.Join(readOnly, "x.json")}},
		{"parent is a file", []string{"export", path, "--format", "pprof", "-o", filepath.Join(truncated, "x.pb.gz")}, []string{filepath.Join(truncated, "x.pb.gz"), "not a directory"}},
		{"output is a directory", []string{"export", path, "--format", "caliper", "-o", dir}, []string{dir, "is a directory"}},
		{"output is the input", []string{"export", path, "--format", "pprof", "-o", path}, []string{"is the input"}},
		{"no rank matches", []string{"export", path, "--format", "pprof", "--rank", "99", "-o", out}, []string{path, "no rank matches"}},
		{"no file", []string{"export", "--format", "pprof"}, []string{"accepts 1 arg"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "unwritable directory" && os.Geteuid() == 0 {
				t.Skip("root writes into read-only directories")
			}
			_, _, err := run(t, tt.args...)
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			_, statErr := os.Stat(out)
			assert.True(t, os.IsNotExist(statErr), "no output left behind")
		})
	}
	// No temporary files either.
	left, err := filepath.Glob(filepath.Join(dir, ".*tmp*"))
	require.NoError(t, err)
	assert.Empty(t, left)
}
