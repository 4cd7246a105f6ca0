package jobdb

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/analysis"
	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

// day0 is the start of the generated jobs; job i starts i days later.
var day0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// genJobs writes n small generated job files to dir: job i has seed i,
// 2 + i%3 ranks, user "u<i%2>", command "app<i%3> arg" and starts i days
// after day0.
func genJobs(t testing.TB, dir string, n, events int) []string {
	t.Helper()
	var paths []string
	for i := range n {
		h, ranks := flowgen.Run(flowgen.Options{Seed: uint64(i + 1), Events: int64(events), Depth: 3, Sites: 8, MaxIter: 8, Branchy: true},
			2+i%3, 2)
		h.Command = []string{fmt.Sprintf("app%d", i%3), "arg"}
		// The user: in the header, or in older files in USER.
		if i%4 < 2 {
			h.User = fmt.Sprintf("u%d", i%2)
		} else {
			h.Env = append(h.Env, fmt.Sprintf("USER=u%d", i%2))
		}
		h.StartUnixNano = day0.AddDate(0, 0, i).UnixNano()
		h.JobID = fmt.Sprint(1000 + i)
		p := filepath.Join(dir, fmt.Sprintf("job%04d.mpiflow", i))
		require.NoError(t, flowgraph.WriteFile(p, h, ranks))
		paths = append(paths, p)
	}
	return paths
}

func openDB(t testing.TB) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "jobs.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

func count(t *testing.T, db *DB, query string) int64 {
	t.Helper()
	_, rows, err := db.Query(context.Background(), query)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	return rows[0][0].(int64)
}

func TestAddTotals(t *testing.T) {
	ctx := context.Background()
	paths := genJobs(t, t.TempDir(), 3, 3000)
	paths = append(paths, "../testdata/profiles/regions.mpiflow")
	db := openDB(t)
	res, err := db.Add(ctx, paths...)
	require.NoError(t, err)
	assert.Equal(t, AddResult{Added: 4}, res)

	for _, p := range paths {
		job, err := analysis.Load(p, analysis.Options{NoSequences: true})
		require.NoError(t, err)
		abs, _ := filepath.Abs(p)
		var id int64
		require.NoError(t, db.db.QueryRow("SELECT id FROM jobs WHERE path = ?", abs).Scan(&id))
		// Calls equal the job's, call by call.
		rows, err := db.db.Query("SELECT call, count, time_ns, bytes FROM calls WHERE job = ? ORDER BY time_ns DESC, call", id)
		require.NoError(t, err)
		got := map[string][3]int64{}
		for rows.Next() {
			var c string
			var v [3]int64
			require.NoError(t, rows.Scan(&c, &v[0], &v[1], &v[2]))
			got[c] = v
		}
		require.NoError(t, rows.Err())
		want := map[string][3]int64{}
		for _, c := range job.Calls {
			want[c.Call] = [3]int64{c.Count, c.Time.Total, c.Bytes}
		}
		assert.Equal(t, want, got, p)
		n := func(table string) int64 {
			var n int64
			require.NoError(t, db.db.QueryRow("SELECT count(*) FROM "+table+" WHERE job = ?", id).Scan(&n))
			return n
		}
		assert.EqualValues(t, len(job.Summary.Ranks), n("ranks"), p)
		assert.EqualValues(t, len(job.CallSites), n("call_sites"), p)
		assert.EqualValues(t, len(job.Regions), n("regions"), p)
		loops := 0
		for _, g := range job.Groups {
			loops += len(g.Tree)
		}
		assert.EqualValues(t, loops, n("loops"), p)
		var mpi, wall int64
		for _, r := range job.Summary.Ranks {
			mpi += r.MPI
			wall += r.Wall
		}
		var gotMPI int64
		var share float64
		require.NoError(t, db.db.QueryRow("SELECT mpi_ns, mpi_share FROM jobs WHERE id = ?", id).Scan(&gotMPI, &share))
		assert.Equal(t, mpi, gotMPI)
		assert.InDelta(t, float64(mpi)/float64(wall), share, 1e-12)
	}
	assert.Positive(t, count(t, db, "SELECT count(*) FROM loops"), "the generated programs have loops")
	assert.Equal(t, int64(5), count(t, db, "SELECT count(*) FROM regions r JOIN jobs j ON j.id = r.job WHERE j.command LIKE '%regions%'"))
	assert.Equal(t, int64(1), count(t, db, "SELECT count(*) FROM regions WHERE path = 'solve > halo'"))
}

func TestReAddAndBadFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	paths := genJobs(t, dir, 3, 2000)
	bad := filepath.Join(dir, "bad.mpiflow")
	require.NoError(t, os.WriteFile(bad, []byte("not a job file"), 0o644))
	cut := filepath.Join(dir, "cut.mpiflow")
	data, err := os.ReadFile(paths[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cut, data[:len(data)/2], 0o644))
	missing := filepath.Join(dir, "missing.mpiflow")
	db := openDB(t)

	tests := []struct {
		name  string
		paths []string
		want  AddResult
		errs  []string
		jobs  int64
	}{
		{"add", paths[:2], AddResult{Added: 2}, nil, 2},
		{"re-add", paths[:2], AddResult{Present: 2}, nil, 2},
		{"bad files skipped", []string{bad, paths[2], cut, missing}, AddResult{Added: 1, Failed: 3}, []string{bad, cut, missing}, 3},
		{"all again", append(paths, paths...), AddResult{Present: 6}, nil, 3},
	}
	for _, tt := range tests {
		res, err := db.Add(ctx, tt.paths...)
		assert.Equal(t, tt.want, res, tt.name)
		if tt.errs == nil {
			assert.NoError(t, err, tt.name)
		} else {
			require.Error(t, err, tt.name)
			for _, e := range tt.errs {
				assert.Contains(t, err.Error(), e, tt.name)
			}
		}
		assert.Equal(t, tt.jobs, count(t, db, "SELECT count(*) FROM jobs"), tt.name)
		// Never a half-loaded job: every job has its ranks and calls.
		assert.Equal(t, int64(0), count(t, db, "SELECT count(*) FROM jobs j WHERE NOT EXISTS (SELECT 1 FROM ranks r WHERE r.job = j.id) OR NOT EXISTS (SELECT 1 FROM calls c WHERE c.job = j.id)"), tt.name)
		assert.Equal(t, int64(0), count(t, db, "SELECT count(*) FROM calls WHERE job NOT IN (SELECT id FROM jobs)"), tt.name)
	}
}

func TestConcurrentAdd(t *testing.T) {
	ctx := context.Background()
	paths := genJobs(t, t.TempDir(), 6, 1500)
	file := filepath.Join(t.TempDir(), "jobs.db")
	// Two databases handles (as two processes) add overlapping sets at once.
	sets := [][]string{paths[:4], paths[2:]}
	var wg sync.WaitGroup
	results := make([]AddResult, len(sets))
	errs := make([]error, len(sets))
	for i, set := range sets {
		wg.Go(func() {
			db, err := Open(file)
			if err != nil {
				errs[i] = err
				return
			}
			defer db.Close()
			results[i], errs[i] = db.Add(ctx, set...)
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	assert.Equal(t, 6, results[0].Added+results[1].Added)
	assert.Equal(t, 2, results[0].Present+results[1].Present)
	db, err := Open(file)
	require.NoError(t, err)
	defer db.Close()
	assert.Equal(t, int64(6), count(t, db, "SELECT count(*) FROM jobs"))
	assert.Equal(t, int64(6), count(t, db, "SELECT count(DISTINCT key) FROM jobs"))
	assert.Equal(t, count(t, db, "SELECT sum(ranks) FROM jobs"), count(t, db, "SELECT count(*) FROM ranks"))
}

func TestJobsFilterSort(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	_, err := db.Add(ctx, genJobs(t, t.TempDir(), 6, 1500)...)
	require.NoError(t, err)
	all, err := db.Jobs(ctx, Filter{})
	require.NoError(t, err)
	require.Len(t, all, 6)

	tests := []struct {
		name   string
		f      Filter
		n      int
		check  func(a, b Job) bool // holds for consecutive rows
		each   func(j Job) bool
		errMsg string
	}{
		{name: "start", f: Filter{}, n: 6, check: func(a, b Job) bool { return a.StartNs >= b.StartNs }},
		{name: "mpi", f: Filter{Sort: "mpi"}, n: 6, check: func(a, b Job) bool { return a.MPIShare >= b.MPIShare }},
		{name: "imbalance", f: Filter{Sort: "imbalance"}, n: 6, check: func(a, b Job) bool { return a.Imbalance >= b.Imbalance }},
		{name: "bytes", f: Filter{Sort: "bytes"}, n: 6, check: func(a, b Job) bool { return a.Bytes >= b.Bytes }},
		{name: "wallclock", f: Filter{Sort: "wallclock"}, n: 6, check: func(a, b Job) bool { return a.WallclockNs >= b.WallclockNs }},
		{name: "limit", f: Filter{Sort: "mpi", Limit: 2}, n: 2},
		{name: "user", f: Filter{User: "u1"}, n: 3, each: func(j Job) bool { return j.User == "u1" }},
		{name: "command", f: Filter{Command: "app2"}, n: 2, each: func(j Job) bool { return j.Command == "app2 arg" }},
		{name: "since", f: Filter{Since: day0.AddDate(0, 0, 2)}, n: 4},
		{name: "until", f: Filter{Until: day0.AddDate(0, 0, 2)}, n: 2},
		{name: "both", f: Filter{User: "u0", Since: day0.AddDate(0, 0, 1), Until: day0.AddDate(0, 0, 5)}, n: 2,
			each: func(j Job) bool { return j.User == "u0" }},
		{name: "none", f: Filter{Command: "nothing"}, n: 0},
		{name: "bad sort", f: Filter{Sort: "size"}, errMsg: "size"},
	}
	for _, tt := range tests {
		jobs, err := db.Jobs(ctx, tt.f)
		if tt.errMsg != "" {
			require.ErrorContains(t, err, tt.errMsg, tt.name)
			continue
		}
		require.NoError(t, err, tt.name)
		require.Len(t, jobs, tt.n, tt.name)
		for i := range jobs {
			if tt.check != nil && i > 0 {
				assert.True(t, tt.check(jobs[i-1], jobs[i]), "%s: row %d", tt.name, i)
			}
			if tt.each != nil {
				assert.True(t, tt.each(jobs[i]), "%s: row %d", tt.name, i)
			}
		}
	}
	// The sorts are not all the same order (the test can fail).
	byMPI, _ := db.Jobs(ctx, Filter{Sort: "mpi"})
	byStart, _ := db.Jobs(ctx, Filter{Sort: "start"})
	assert.NotEqual(t, byMPI, byStart)
}

func TestQuery(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	tests := []struct {
		q      string
		errMsg string
	}{
		{"SELECT count(*) FROM jobs", ""},
		{"  -- comment\n with x AS (SELECT 1) SELECT * FROM x", ""},
		{"/* c */ select 1", ""},
		{"", "only SELECT"},
		{"DELETE FROM jobs", "DELETE"},
		{"DROP TABLE jobs", "DROP"},
		{"SELECT * FROM nosuch", "nosuch"},
	}
	for _, tt := range tests {
		_, _, err := db.Query(ctx, tt.q)
		if tt.errMsg == "" {
			assert.NoError(t, err, tt.q)
		} else {
			assert.ErrorContains(t, err, tt.errMsg, tt.q)
		}
	}
	// A read-only handle refuses writes hidden behind a SELECT.
	ro, err := OpenReadOnly(db.path)
	require.NoError(t, err)
	defer ro.Close()
	_, err = ro.db.Exec("DELETE FROM jobs")
	assert.ErrorContains(t, err, "readonly")
	_, err = OpenReadOnly(filepath.Join(t.TempDir(), "none.db"))
	assert.Error(t, err)
}

func TestFindJobFiles(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a.mpiflow", "sub/b.mpiflow", "sub/c.partial.mpiflow", "d.txt"} {
		p := filepath.Join(dir, n)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, nil, 0o644))
	}
	got, err := FindJobFiles(dir, filepath.Join(dir, "d.txt"))
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, "a.mpiflow"), filepath.Join(dir, "sub/b.mpiflow"), filepath.Join(dir, "d.txt")}, got)
	_, err = FindJobFiles(filepath.Join(dir, "none"))
	assert.ErrorContains(t, err, "none")
}

// BenchmarkAdd1000 adds 1,000 small generated job files to a new
// database, then lists them by MPI share (the targets: <= 30 s and
// < 1 s).
func BenchmarkAdd1000(b *testing.B) {
	paths := genJobs(b, b.TempDir(), 1000, 500)
	ctx := context.Background()
	for b.Loop() {
		db, err := Open(filepath.Join(b.TempDir(), "jobs.db"))
		require.NoError(b, err)
		t0 := time.Now()
		res, err := db.Add(ctx, paths...)
		require.NoError(b, err)
		require.Equal(b, 1000, res.Added)
		add := time.Since(t0)
		t0 = time.Now()
		jobs, err := db.Jobs(ctx, Filter{Sort: "mpi"})
		require.NoError(b, err)
		require.Len(b, jobs, 1000)
		b.ReportMetric(add.Seconds(), "add-s")
		b.ReportMetric(time.Since(t0).Seconds(), "jobs-s")
		db.Close()
	}
}
