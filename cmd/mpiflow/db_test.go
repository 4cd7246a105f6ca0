package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
	"mpiflow/jobdb"
)

// db add loads a directory of job files (not the partial ones), db jobs
// and db sql read them back; bad input is an error naming what is wrong.
func TestDBCommand(t *testing.T) {
	dir := t.TempDir()
	job, _ := genJob(t)
	data, err := os.ReadFile(job)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "halo.mpiflow"), data, 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	regions, err := os.ReadFile("../../testdata/profiles/regions.mpiflow")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "regions.mpiflow"), regions, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "x.r1.partial.mpiflow"), []byte("partial"), 0o644))
	db := filepath.Join(t.TempDir(), "jobs.db")

	_, stderr, err := run(t, "db", "add", "--db", db, dir)
	require.NoError(t, err)
	assert.Contains(t, stderr, "2 added, 0 already present, 0 failed")
	_, stderr, err = run(t, "db", "add", "--db", db, dir, job)
	require.NoError(t, err)
	assert.Contains(t, stderr, "0 added, 3 already present, 0 failed")

	// $MPIFLOW_DB is the default database.
	t.Setenv("MPIFLOW_DB", db)
	js, _, err := run(t, "db", "jobs", "--sort", "mpi", "--json")
	require.NoError(t, err)
	var jobs []jobdb.Job
	require.NoError(t, json.Unmarshal([]byte(js), &jobs))
	require.Len(t, jobs, 2)
	assert.GreaterOrEqual(t, jobs[0].MPIShare, jobs[1].MPIShare)
	cmds := []string{jobs[0].Command, jobs[1].Command}
	assert.Contains(t, cmds, "./halo <script>")

	out, _, err := run(t, "db", "jobs", "--command", "halo")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2, out)
	assert.Equal(t, "id", strings.Fields(lines[0])[0])
	assert.Contains(t, lines[1], "./halo <script>")

	js, _, err = run(t, "db", "sql", "--json", "SELECT r.path, r.entries FROM regions r ORDER BY r.path")
	require.NoError(t, err)
	var rows []map[string]any
	require.NoError(t, json.Unmarshal([]byte(js), &rows))
	require.Len(t, rows, 5)
	paths := []string{}
	for _, r := range rows {
		paths = append(paths, r["path"].(string))
	}
	assert.Contains(t, paths, "solve > halo")

	out, _, err = run(t, "db", "sql", "SELECT count(*) AS n FROM ranks")
	require.NoError(t, err)
	assert.Equal(t, []string{"n", "8"}, strings.Fields(out))

	// Names from files are escaped in tables.
	out, _, err = run(t, "db", "sql", "SELECT 'a'||char(27)||'[31m' AS x")
	require.NoError(t, err)
	assert.NotContains(t, out, "\x1b")
}

func TestDBBadInput(t *testing.T) {
	dir := t.TempDir()
	job, _ := genJob(t)
	corrupt := filepath.Join(dir, "corrupt.mpiflow")
	require.NoError(t, os.WriteFile(corrupt, []byte("garbage"), 0o644))
	db := filepath.Join(t.TempDir(), "jobs.db")
	_, _, err := run(t, "db", "add", "--db", db, job)
	require.NoError(t, err)
	roDir := filepath.Join(t.TempDir(), "ro")
	require.NoError(t, os.Mkdir(roDir, 0o555))

	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing file", []string{"db", "add", "--db", db, filepath.Join(dir, "none.mpiflow")}, "none.mpiflow"},
		{"corrupt file", []string{"db", "add", "--db", db, corrupt, job}, "corrupt.mpiflow"},
		{"no path", []string{"db", "add", "--db", db}, "arg"},
		{"bad sql", []string{"db", "sql", "--db", db, "SELECT * FROM nosuch"}, "nosuch"},
		{"not a select", []string{"db", "sql", "--db", db, "DELETE FROM jobs"}, "DELETE"},
		{"hidden write", []string{"db", "sql", "--db", db, "WITH x AS (SELECT 1) DELETE FROM jobs"}, "readonly"},
		{"missing db", []string{"db", "jobs", "--db", filepath.Join(dir, "none.db")}, "none.db"},
		{"bad sort", []string{"db", "jobs", "--db", db, "--sort", "size"}, "--sort"},
		{"bad date", []string{"db", "jobs", "--db", db, "--since", "yesterday"}, "--since"},
		{"db under a file", []string{"db", "add", "--db", filepath.Join(corrupt, "jobs.db"), job}, "corrupt.mpiflow/jobs.db"},
		{"db is a directory", []string{"db", "add", "--db", dir, job}, dir},
		{"not a database", []string{"db", "jobs", "--db", corrupt}, "corrupt.mpiflow"},
		{"bad limit", []string{"db", "jobs", "--db", db, "--limit", "-1"}, "--limit"},
	}
	if os.Geteuid() != 0 { // root writes anywhere
		tests = append(tests, struct {
			name string
			args []string
			want string
		}{"unwritable db", []string{"db", "add", "--db", filepath.Join(roDir, "jobs.db"), job}, "ro/jobs.db"})
	}
	for _, tt := range tests {
		_, _, err := run(t, tt.args...)
		require.Error(t, err, tt.name)
		assert.Contains(t, err.Error(), tt.want, tt.name)
	}
	// The corrupt file did not stop the good one, nor change the database.
	out, _, err := run(t, "db", "sql", "--db", db, "SELECT count(*) FROM jobs")
	require.NoError(t, err)
	assert.Equal(t, "1", strings.Fields(out)[1])
}

// Two processes adding overlapping sets to one new database at once store
// each job once; a process given a corrupt file exits non-zero naming it.
func TestDBAddTwoProcesses(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range 8 {
		h, ranks := flowgen.Run(flowgen.Options{Seed: uint64(10 + i), Events: 1500, Depth: 3, Sites: 8, Branchy: true}, 2+i%2, 2)
		p := filepath.Join(dir, fmt.Sprintf("job%d.mpiflow", i))
		require.NoError(t, flowgraph.WriteFile(p, h, ranks))
		paths = append(paths, p)
	}
	corrupt := filepath.Join(dir, "corrupt.mpiflow")
	require.NoError(t, os.WriteFile(corrupt, []byte("garbage"), 0o644))
	db := filepath.Join(t.TempDir(), "jobs.db")
	exe, err := os.Executable()
	require.NoError(t, err)
	start := func(files ...string) (*exec.Cmd, *bytes.Buffer) {
		args, _ := json.Marshal(append([]string{"db", "add", "--db", db}, files...))
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), cliArgs+"="+string(args))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		return cmd, &stderr
	}
	a, aErr := start(paths[:6]...)
	b, bErr := start(append([]string{corrupt}, paths[2:]...)...)
	require.NoError(t, a.Wait(), aErr.String())
	err = b.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "the corrupt file fails the command")
	assert.NotEqual(t, 0, ee.ExitCode())
	assert.Contains(t, bErr.String(), "corrupt.mpiflow")
	assert.NotContains(t, aErr.String()+bErr.String(), "panic")

	out, _, err := run(t, "db", "sql", "--db", db, "SELECT count(*) AS n, count(DISTINCT key) AS k, sum(ranks) AS r FROM jobs")
	require.NoError(t, err)
	assert.Equal(t, []string{"8", "8", "20"}, strings.Fields(out)[3:])
	out, _, err = run(t, "db", "sql", "--db", db, "SELECT count(*) FROM ranks")
	require.NoError(t, err)
	assert.Equal(t, "20", strings.Fields(out)[1])
}
