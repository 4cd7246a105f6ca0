// Package jobdb keeps many mpiflow job files in one SQLite database
// (modernc.org/sqlite, pure Go), so that a center can look across jobs:
// Add loads job files through the analysis package, Jobs lists them with
// filters and a sort, Query runs any read-only SQL.
//
// The database is plain SQLite in WAL mode, readable by any SQLite (or
// DuckDB) client. Times are nanoseconds, bytes are bytes, shares are
// fractions (0 to 1). Every table but jobs refers to its job by job, the
// rowid of jobs (jobs.id); deleting a job deletes its rows (foreign keys
// with ON DELETE CASCADE, when the client enables foreign_keys).
//
//	jobs       one row per job file
//	  id           INTEGER  rowid
//	  key          TEXT     SHA-256 of the file's content, unique: adding a file twice adds it once
//	  path         TEXT     absolute path of the file when added
//	  command      TEXT     the command line, arguments joined by spaces
//	  executable   TEXT     path of rank 0's program ("" in older files)
//	  user         TEXT     the user who ran the job (the header's; older files: USER of the recorded environment), "" if unknown
//	  job_id       TEXT     the header's job id (scheduler's or launcher's)
//	  start_ns     INTEGER  start, ns since the Unix epoch
//	  start        TEXT     start, UTC, "YYYY-MM-DDTHH:MM:SSZ"
//	  wallclock_ns INTEGER  MPI_Init to MPI_Finalize of the slowest rank
//	  ranks        INTEGER  MPI ranks
//	  hosts        INTEGER  distinct hosts
//	  host_list    TEXT     the distinct hosts, comma-separated
//	  mpi_library  TEXT     MPI library and version
//	  mpi_ns       INTEGER  time in MPI summed over ranks (from the end of MPI_Init)
//	  wall_ns      INTEGER  wall time summed over ranks
//	  mpi_share    REAL     mpi_ns / wall_ns
//	  bytes        INTEGER  bytes moved by MPI calls, all ranks
//	  imbalance    REAL     (max - mean) / mean of the ranks' MPI time (of their wall time when no MPI time)
//	  incomplete   INTEGER  1 when a rank did not reach MPI_Finalize
//	  added        TEXT     when the row was added, UTC
//	ranks      one row per rank and thread
//	  job, rank, thread, wall_ns, mpi_ns, bytes, events, user_ns, sys_ns, max_rss (bytes), complete (0/1)
//	calls      one row per job and MPI call (the totals of `mpiflow stats`)
//	  job, call, count, time_ns, time_min_ns, time_max_ns, bytes
//	call_sites one row per job, call and call site label
//	  job, call, site, count, time_ns, bytes, ranks (how many ranks call it), rank_list ("0-3,8")
//	loops      one row per job, group of ranks and loop of the group's loop tree (`mpiflow loops`)
//	  job, grp (group index), loop (loop id), parent (0: top level), depth, name,
//	  path (names from the outermost loop, " > "), header (header call and site),
//	  ranks (ranks of the group with the loop), iterations (mean), share, min_share, max_share
//	  (time shares of the rank's time), min_rank, max_rank
//	regions    one row per job and MPI_Pcontrol region
//	  job, path (outermost first, " > "), name, ranks, entries, wall_ns, mpi_ns, calls
package jobdb

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"mpiflow/analysis"
	"mpiflow/flowgraph"

	_ "modernc.org/sqlite" // the "sqlite" driver
)

const schema = `
CREATE TABLE IF NOT EXISTS jobs (
	id INTEGER PRIMARY KEY,
	key TEXT NOT NULL UNIQUE,
	path TEXT NOT NULL,
	command TEXT NOT NULL,
	executable TEXT NOT NULL,
	user TEXT NOT NULL,
	job_id TEXT NOT NULL,
	start_ns INTEGER NOT NULL,
	start TEXT NOT NULL,
	wallclock_ns INTEGER NOT NULL,
	ranks INTEGER NOT NULL,
	hosts INTEGER NOT NULL,
	host_list TEXT NOT NULL,
	mpi_library TEXT NOT NULL,
	mpi_ns INTEGER NOT NULL,
	wall_ns INTEGER NOT NULL,
	mpi_share REAL NOT NULL,
	bytes INTEGER NOT NULL,
	imbalance REAL NOT NULL,
	incomplete INTEGER NOT NULL,
	added TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_start ON jobs(start_ns);
CREATE TABLE IF NOT EXISTS ranks (
	job INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	rank INTEGER NOT NULL, thread INTEGER NOT NULL,
	wall_ns INTEGER NOT NULL, mpi_ns INTEGER NOT NULL, bytes INTEGER NOT NULL, events INTEGER NOT NULL,
	user_ns INTEGER NOT NULL, sys_ns INTEGER NOT NULL, max_rss INTEGER NOT NULL, complete INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS ranks_job ON ranks(job);
CREATE TABLE IF NOT EXISTS calls (
	job INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	call TEXT NOT NULL, count INTEGER NOT NULL,
	time_ns INTEGER NOT NULL, time_min_ns INTEGER NOT NULL, time_max_ns INTEGER NOT NULL, bytes INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS calls_job ON calls(job);
CREATE TABLE IF NOT EXISTS call_sites (
	job INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	call TEXT NOT NULL, site TEXT NOT NULL, count INTEGER NOT NULL, time_ns INTEGER NOT NULL,
	bytes INTEGER NOT NULL, ranks INTEGER NOT NULL, rank_list TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS call_sites_job ON call_sites(job);
CREATE TABLE IF NOT EXISTS loops (
	job INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	grp INTEGER NOT NULL, loop INTEGER NOT NULL, parent INTEGER NOT NULL, depth INTEGER NOT NULL,
	name TEXT NOT NULL, path TEXT NOT NULL, header TEXT NOT NULL, ranks INTEGER NOT NULL,
	iterations REAL NOT NULL, share REAL NOT NULL, min_share REAL NOT NULL, max_share REAL NOT NULL,
	min_rank INTEGER NOT NULL, max_rank INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS loops_job ON loops(job);
CREATE TABLE IF NOT EXISTS regions (
	job INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	path TEXT NOT NULL, name TEXT NOT NULL, ranks INTEGER NOT NULL, entries INTEGER NOT NULL,
	wall_ns INTEGER NOT NULL, mpi_ns INTEGER NOT NULL, calls INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS regions_job ON regions(job);
`

// DB is an open job database.
type DB struct {
	db   *sql.DB
	path string
	// Progress, if set, is called as Add goes through its files.
	Progress func(stage string, done, total int)
}

// busyMillis is how long a statement waits for another process's write
// transaction before it fails.
const busyMillis = 60000

func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyMillis))
	q.Add("_pragma", "foreign_keys(1)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
		// Write transactions take the write lock at BEGIN, so that two
		// writers wait for each other instead of failing on upgrade.
		q.Set("_txlock", "immediate")
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// Open opens the database at path, creating it and its schema if new.
func Open(path string) (*DB, error) {
	// Switching a new database to WAL takes an exclusive lock without
	// waiting on the busy timeout: when another process creates it at the
	// same moment, try again.
	deadline := time.Now().Add(busyMillis * time.Millisecond)
	for {
		d, err := open(path)
		if err == nil || !strings.Contains(err.Error(), "SQLITE_BUSY") || time.Now().After(deadline) {
			return d, err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func open(path string) (*DB, error) {
	db, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tx, err := db.Begin()
	if err == nil {
		if _, err = tx.Exec(schema); err == nil {
			err = tx.Commit()
		} else {
			tx.Rollback()
		}
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: creating the schema: %w", path, err)
	}
	return &DB{db: db, path: path}, nil
}

// OpenReadOnly opens the existing database at path for queries only.
func OpenReadOnly(path string) (*DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", dsn(path, true))
	if err == nil {
		err = db.Ping()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &DB{db: db, path: path}, nil
}

// Close closes the database.
func (d *DB) Close() error { return d.db.Close() }

// FindJobFiles returns the paths, with each directory replaced by the job
// files below it (*.mpiflow, not the ranks' *.partial.mpiflow), sorted.
func FindJobFiles(paths ...string) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			n := d.Name()
			if !d.IsDir() && strings.HasSuffix(n, ".mpiflow") && !strings.HasSuffix(n, ".partial.mpiflow") {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		slices.Sort(found)
		out = append(out, found...)
	}
	return out, nil
}

// AddResult counts what Add did with its files.
type AddResult struct {
	Added   int `json:"added"`   // new jobs
	Present int `json:"present"` // files already in the database
	Failed  int `json:"failed"`  // files that could not be read (see the error)
}

// Add loads the job files at paths into the database, each job in one
// transaction: a file already there (same content) is left alone, a file
// that cannot be read is skipped and named in the returned error (all
// such files joined) while the others are added.
func (d *DB) Add(ctx context.Context, paths ...string) (AddResult, error) {
	var res AddResult
	type loaded struct {
		key  string
		row  *jobRow
		err  error
		done bool // already present
	}
	out := make([]loaded, len(paths))
	ready := make([]chan struct{}, len(paths))
	for i := range ready {
		ready[i] = make(chan struct{})
	}
	// Files are read and analysed in parallel, written one by one in
	// order.
	workers := max(1, runtime.GOMAXPROCS(0))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				l := &out[i]
				l.key, l.err = hashFile(paths[i])
				if l.err == nil {
					var n int
					l.err = d.db.QueryRowContext(ctx, "SELECT count(*) FROM jobs WHERE key = ?", l.key).Scan(&n)
					l.done = n > 0
				}
				if l.err == nil && !l.done {
					l.row, l.err = loadJob(paths[i])
				}
				close(ready[i])
			}
		})
	}
	go func() {
		defer close(next)
		for i := range paths {
			select {
			case next <- i:
			case <-ctx.Done():
				for j := i; j < len(paths); j++ {
					out[j].err = ctx.Err()
					close(ready[j])
				}
				return
			}
		}
	}()
	defer wg.Wait()
	var errs []error
	for i, p := range paths {
		<-ready[i]
		l := &out[i]
		if errors.Is(l.err, context.Canceled) || errors.Is(l.err, context.DeadlineExceeded) {
			return res, l.err
		}
		if l.err == nil && !l.done {
			var added bool
			added, l.err = d.insert(ctx, p, l.key, l.row)
			l.done = !added
			if errors.Is(l.err, context.Canceled) || errors.Is(l.err, context.DeadlineExceeded) {
				return res, l.err
			}
		}
		switch {
		case l.err != nil:
			res.Failed++
			if !strings.Contains(l.err.Error(), p) {
				l.err = fmt.Errorf("%s: %w", p, l.err)
			}
			errs = append(errs, l.err)
		case l.done:
			res.Present++
		default:
			res.Added++
		}
		out[i] = loaded{} // free the analysis
		if d.Progress != nil {
			d.Progress("adding jobs", i+1, len(paths))
		}
	}
	return res, errors.Join(errs...)
}

func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// jobRow is what one job adds to the tables.
type jobRow struct {
	job *analysis.Job
}

func loadJob(path string) (*jobRow, error) {
	job, err := analysis.Load(path, analysis.Options{NoSequences: true, Workers: 1})
	if err != nil {
		return nil, err
	}
	return &jobRow{job: job}, nil
}

// imbalance is (max - mean) / mean of vs, 0 when the mean is 0.
func imbalance(vs []int64) float64 {
	if len(vs) == 0 {
		return 0
	}
	var sum, hi float64
	for _, v := range vs {
		sum += float64(v)
		hi = max(hi, float64(v))
	}
	mean := sum / float64(len(vs))
	if mean == 0 {
		return 0
	}
	return (hi - mean) / mean
}

// userOf is the job's user: the header's, or in files of older versions
// USER of rank 0's recorded environment.
func userOf(h *flowgraph.Header) string {
	if h.User != "" {
		return h.User
	}
	for _, e := range h.Env {
		if u, ok := strings.CutPrefix(e, "USER="); ok {
			return u
		}
	}
	return ""
}

// insert adds one analysed job in one transaction; it reports false when
// another Add (perhaps of another process) added the same key first.
func (d *DB) insert(ctx context.Context, path, key string, r *jobRow) (bool, error) {
	j := r.job
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	fg := figuresOf(j)
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	id, added, err := insertJob(ctx, tx, key, abs, &j.Header, &fg)
	if err != nil || !added {
		return false, err
	}
	if err := insertDetails(ctx, tx, id, j); err != nil {
		return false, err
	}
	return true, tx.Commit()
}

// jobFigures are the figures of a job's row worked out from its summary
// and header.
type jobFigures struct {
	mpi, wall, bytes int64
	share, imb       float64
	hosts            []string // distinct, sorted
	lib              string
	start            time.Time
}

func figuresOf(j *analysis.Job) jobFigures {
	h := &j.Header
	var fg jobFigures
	mpis := make([]int64, 0, len(j.Summary.Ranks))
	walls := make([]int64, 0, len(j.Summary.Ranks))
	for _, rs := range j.Summary.Ranks {
		fg.mpi += rs.MPI
		fg.wall += rs.Wall
		fg.bytes += rs.Bytes
		mpis = append(mpis, rs.MPI)
		walls = append(walls, rs.Wall)
	}
	if fg.wall > 0 {
		fg.share = float64(fg.mpi) / float64(fg.wall)
	}
	fg.imb = imbalance(mpis)
	if fg.mpi == 0 {
		fg.imb = imbalance(walls)
	}
	fg.hosts = slices.Clone(h.Hosts)
	slices.Sort(fg.hosts)
	fg.hosts = slices.Compact(fg.hosts)
	fg.lib = strings.TrimSpace(h.MPILibrary + " " + h.MPIVersion)
	fg.start = time.Unix(0, h.StartUnixNano).UTC()
	return fg
}

// insertJob inserts the job's row and returns its id; added is false when
// a job with the key is there already.
func insertJob(ctx context.Context, tx *sql.Tx, key, abs string, h *flowgraph.Header, fg *jobFigures) (id int64, added bool, err error) {
	res, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO jobs (key, path, command, executable, user, job_id,
		start_ns, start, wallclock_ns, ranks, hosts, host_list, mpi_library, mpi_ns, wall_ns, mpi_share, bytes,
		imbalance, incomplete, added) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		key, abs, strings.Join(h.Command, " "), h.Executable, userOf(h), h.JobID,
		h.StartUnixNano, fg.start.Format(time.RFC3339), h.Wallclock, h.NumRanks, len(fg.hosts), strings.Join(fg.hosts, ","),
		fg.lib, fg.mpi, fg.wall, fg.share, fg.bytes, fg.imb, h.Incomplete, time.Now().UTC().Format(time.RFC3339))
	if err != nil {
		return 0, false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return 0, false, err
	}
	id, err = res.LastInsertId()
	if err != nil {
		return 0, false, err
	}
	return id, true, nil
}

// insertDetails inserts the rows of job id's ranks, calls, call sites,
// loops and regions.
func insertDetails(ctx context.Context, tx *sql.Tx, id int64, j *analysis.Job) error {
	exec := func(query string, rows func(stmt *sql.Stmt) error) error {
		stmt, err := tx.PrepareContext(ctx, query)
		if err != nil {
			return err
		}
		defer stmt.Close()
		return rows(stmt)
	}
	err := exec(`INSERT INTO ranks VALUES (?,?,?,?,?,?,?,?,?,?,?)`, func(s *sql.Stmt) error {
		for _, rs := range j.Summary.Ranks {
			if _, err := s.ExecContext(ctx, id, rs.Rank, rs.Thread, rs.Wall, rs.MPI, rs.Bytes, rs.Events,
				rs.UserTime, rs.SysTime, rs.MaxRSS, rs.Complete); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = exec(`INSERT INTO calls VALUES (?,?,?,?,?,?,?)`, func(s *sql.Stmt) error {
			for _, c := range j.Calls {
				if _, err := s.ExecContext(ctx, id, c.Call, c.Count, c.Time.Total, c.Time.Min, c.Time.Max, c.Bytes); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err == nil {
		err = exec(`INSERT INTO call_sites VALUES (?,?,?,?,?,?,?,?)`, func(s *sql.Stmt) error {
			for _, c := range j.CallSites {
				if _, err := s.ExecContext(ctx, id, c.Call, c.Site, c.Count, c.Time.Total, c.Bytes, c.Ranks, c.RankList); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err == nil {
		err = exec(`INSERT INTO loops VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, func(s *sql.Stmt) error {
			return insertLoops(ctx, s, id, j)
		})
	}
	if err == nil {
		err = exec(`INSERT INTO regions VALUES (?,?,?,?,?,?,?,?)`, func(s *sql.Stmt) error {
			for _, rg := range j.Regions {
				if _, err := s.ExecContext(ctx, id, strings.Join(rg.Path, " > "), rg.Name, rg.Ranks, rg.Entries,
					rg.Wall, rg.MPI, rg.Calls); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return err
}

// insertLoops inserts the loops of job id's groups with their paths of
// names.
func insertLoops(ctx context.Context, s *sql.Stmt, id int64, j *analysis.Job) error {
	for g, grp := range j.Groups {
		paths := map[int]string{}
		for _, t := range grp.Tree {
			p := t.Name
			if pp, ok := paths[t.Parent]; ok && t.Parent != 0 {
				p = pp + " > " + t.Name
			}
			paths[t.ID] = p
			if _, err := s.ExecContext(ctx, id, g, t.ID, t.Parent, t.Depth, t.Name, p, t.Header, t.Ranks,
				t.AvgIterations, t.AvgShare, t.MinShare, t.MaxShare, t.MinRank, t.MaxRank); err != nil {
				return err
			}
		}
	}
	return nil
}

// Filter selects and orders the rows of Jobs.
type Filter struct {
	User    string    // exact user ("" for all)
	Command string    // substring of the command line
	Since   time.Time // jobs started at or after it (zero: no bound)
	Until   time.Time // jobs started before it (zero: no bound)
	// Sort is one of SortKeys ("" for start); mpi, imbalance, bytes and
	// wallclock sort by descending value, start by descending start.
	Sort  string
	Limit int // at most this many rows (0: all)
}

// SortKeys are the sorts Jobs knows, with their columns.
var SortKeys = map[string]string{
	"mpi":       "mpi_share DESC",
	"imbalance": "imbalance DESC",
	"bytes":     "bytes DESC",
	"start":     "start_ns DESC",
	"wallclock": "wallclock_ns DESC",
}

// Job is a row of the jobs table.
type Job struct {
	ID          int64   `json:"id"`
	Key         string  `json:"key"`
	Path        string  `json:"path"`
	Command     string  `json:"command"`
	Executable  string  `json:"executable"`
	User        string  `json:"user"`
	JobID       string  `json:"job_id"`
	StartNs     int64   `json:"start_ns"`
	Start       string  `json:"start"`
	WallclockNs int64   `json:"wallclock_ns"`
	Ranks       int     `json:"ranks"`
	Hosts       int     `json:"hosts"`
	HostList    string  `json:"host_list"`
	MPILibrary  string  `json:"mpi_library"`
	MPINs       int64   `json:"mpi_ns"`
	WallNs      int64   `json:"wall_ns"`
	MPIShare    float64 `json:"mpi_share"`
	Bytes       int64   `json:"bytes"`
	Imbalance   float64 `json:"imbalance"`
	Incomplete  bool    `json:"incomplete"`
	Added       string  `json:"added"`
}

// Jobs returns the jobs that pass f, in its order.
func (d *DB) Jobs(ctx context.Context, f Filter) ([]Job, error) {
	order, ok := SortKeys[cmpOr(f.Sort, "start")]
	if !ok {
		return nil, fmt.Errorf("sort %q: want one of mpi, imbalance, bytes, start, wallclock", f.Sort)
	}
	q := `SELECT id, key, path, command, executable, user, job_id, start_ns, start, wallclock_ns, ranks, hosts,
		host_list, mpi_library, mpi_ns, wall_ns, mpi_share, bytes, imbalance, incomplete, added FROM jobs WHERE 1`
	var args []any
	if f.User != "" {
		q += " AND user = ?"
		args = append(args, f.User)
	}
	if f.Command != "" {
		q += " AND instr(command, ?) > 0"
		args = append(args, f.Command)
	}
	if !f.Since.IsZero() {
		q += " AND start_ns >= ?"
		args = append(args, f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		q += " AND start_ns < ?"
		args = append(args, f.Until.UnixNano())
	}
	q += " ORDER BY " + order + ", id"
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}
	rows, err := d.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Job
	for rows.Next() {
		var j Job
		if err := rows.Scan(&j.ID, &j.Key, &j.Path, &j.Command, &j.Executable, &j.User, &j.JobID, &j.StartNs,
			&j.Start, &j.WallclockNs, &j.Ranks, &j.Hosts, &j.HostList, &j.MPILibrary, &j.MPINs, &j.WallNs,
			&j.MPIShare, &j.Bytes, &j.Imbalance, &j.Incomplete, &j.Added); err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Query runs one read-only statement (SELECT or WITH) and returns its
// column names and rows; values are int64, float64, string, []byte or nil.
func (d *DB) Query(ctx context.Context, query string) ([]string, [][]any, error) {
	if w := firstWord(query); w != "SELECT" && w != "WITH" {
		return nil, nil, fmt.Errorf("only SELECT and WITH statements are allowed, not %q", w)
	}
	rows, err := d.db.QueryContext(ctx, query)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, nil, err
	}
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		out = append(out, vals)
	}
	return cols, out, rows.Err()
}

// firstWord is the first keyword of query in upper case, after blanks,
// parentheses and comments.
func firstWord(q string) string {
	for {
		q = strings.TrimLeft(q, " \t\r\n(")
		switch {
		case strings.HasPrefix(q, "--"):
			i := strings.IndexByte(q, '\n')
			if i < 0 {
				return ""
			}
			q = q[i+1:]
		case strings.HasPrefix(q, "/*"):
			i := strings.Index(q, "*/")
			if i < 0 {
				return ""
			}
			q = q[i+2:]
		default:
			end := strings.IndexFunc(q, func(r rune) bool {
				return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
			})
			if end < 0 {
				end = len(q)
			}
			return strings.ToUpper(q[:end])
		}
	}
}
