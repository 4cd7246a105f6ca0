package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"mpiflow/flowgraph"
	"mpiflow/report"
)

// runOptions are the flags of mpiflow run.
type runOptions struct {
	dir    string
	key    string
	trace  bool
	exact  bool
	quiet  bool
	mpi    string
	asJSON bool
	// noReport skips the HTML report written beside each profile.
	noReport bool
}

// launchKind is how a command line starts MPI processes.
type launchKind int

const (
	launchDirect  launchKind = iota // not a known launcher: the environment carries the preload
	launchOpenMPI                   // Open MPI's mpirun/mpiexec/orterun: -x NAME
	launchHydra                     // MPICH's mpiexec (hydra): -genv NAME value
)

// launcherKind classifies argv[0] of the job's command line.
func launcherKind(argv0, flavor string) launchKind {
	switch filepath.Base(argv0) {
	case "mpirun", "mpiexec", "orterun", "mpiexec.openmpi", "mpirun.openmpi", "mpiexec.hydra", "mpirun.mpich", "mpiexec.mpich":
		if flavor == mpiMPICH || strings.HasSuffix(argv0, "hydra") || strings.HasSuffix(argv0, ".mpich") {
			return launchHydra
		}
		return launchOpenMPI
	}
	return launchDirect
}

// injectEnv returns the job's command line with the environment variables
// vars (sorted by name) passed to every rank by the launcher's own option.
func injectEnv(argv []string, kind launchKind, vars map[string]string) []string {
	if kind == launchDirect || len(argv) == 0 {
		return argv
	}
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, k)
	}
	sort.Strings(names)
	out := []string{argv[0]}
	for _, k := range names {
		if kind == launchOpenMPI {
			// mpirun takes the value from its own environment (runJob
			// sets it there), so values are never parsed on its
			// command line.
			out = append(out, "-x", k)
		} else {
			out = append(out, "-genv", k, vars[k])
		}
	}
	return append(out, argv[1:]...)
}

// jobVars are the variables every rank needs: the preload (kept in front
// of a preload the user already has) and mpiflow's settings, which are
// every MPIFLOW_* variable of environ (os.Environ()) with the flags on top.
// Remote ranks see only what the launcher passes on, so none may be left
// to the environment.
func jobVars(lib, dir string, o runOptions, environ []string) map[string]string {
	v := map[string]string{}
	for _, kv := range environ {
		k, val, ok := strings.Cut(kv, "=")
		// An empty value means the default to the library, as unset does.
		if ok && strings.HasPrefix(k, "MPIFLOW_") && val != "" {
			v[k] = val
		}
	}
	v["LD_PRELOAD"] = lib
	for _, kv := range environ {
		if old, ok := strings.CutPrefix(kv, "LD_PRELOAD="); ok && old != "" {
			v["LD_PRELOAD"] = lib + ":" + old
		}
	}
	v["MPIFLOW_DIR"] = dir
	if o.key != "" {
		v["MPIFLOW_KEY"] = o.key
	}
	if o.trace {
		v["MPIFLOW_TRACE"] = "1"
	}
	if o.exact {
		v["MPIFLOW_EXACT"] = "1"
	}
	if o.quiet {
		v["MPIFLOW_QUIET"] = "1"
	}
	return v
}

// outputDir returns the absolute path of the profile directory: the
// --dir flag, else $MPIFLOW_DIR, else the working directory, with the
// placeholders of MPIFLOW_DIR expanded (expandDir). It creates the
// directory when missing.
func outputDir(flag, env string) (string, error) {
	dir := flag
	if dir == "" {
		dir = env
	}
	if dir == "" {
		dir = "."
	}
	dir = expandDir(dir, time.Now(), os.Getenv)
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("output directory %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", fmt.Errorf("create the output directory: %w", err)
	}
	return abs, nil
}

// expandDir expands the placeholders of an MPIFLOW_DIR as the preload
// library does at MPI_Init (interpose/csrc/core.c): %u the user's name, %j
// the scheduler's job id (SLURM_JOB_ID with SLURM_STEP_ID, PBS_JOBID,
// LSB_JOBID, FLUX_JOB_ID, COBALT_JOBID; outside a scheduler, where the
// library takes the launcher's id, "run<pid>" of this command), %Y, %m
// and %d the date (local time), %% a percent sign; any other % stays. The
// job then gets the expanded directory, so library and command agree.
func expandDir(t string, now time.Time, env func(string) string) string {
	if !strings.Contains(t, "%") {
		return t
	}
	name := strconv.Itoa(os.Getuid())
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	job := fmt.Sprintf("run%d", os.Getpid())
	for _, k := range []string{"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID", "COBALT_JOBID"} {
		if v := env(k); v != "" {
			if s := env("SLURM_STEP_ID"); k == "SLURM_JOB_ID" && s != "" {
				v += "." + s
			}
			job = v
			break
		}
	}
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		if t[i] != '%' || i+1 == len(t) {
			b.WriteByte(t[i])
			continue
		}
		switch t[i+1] {
		case 'u':
			b.WriteString(name)
		case 'j':
			b.WriteString(job)
		case 'Y':
			b.WriteString(now.Format("2006"))
		case 'm':
			b.WriteString(now.Format("01"))
		case 'd':
			b.WriteString(now.Format("02"))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			continue
		}
		i++
	}
	return b.String()
}

// partialSuffix ends the per-rank files of ranks that never reached
// MPI_Finalize (interpose/csrc/partial.h).
const partialSuffix = ".partial.mpiflow"

// profiles lists the job files in dir, or with partial the per-rank
// partial files.
func profiles(dir string, partial bool) map[string]bool {
	m, _ := filepath.Glob(filepath.Join(dir, "*.mpiflow"))
	set := make(map[string]bool, len(m))
	for _, p := range m {
		if strings.HasSuffix(p, partialSuffix) == partial {
			set[p] = true
		}
	}
	return set
}

// partialJobs groups partial files by job: the name up to ".rank<N>"
// (<exe>.<job>), which is also the merged file's name.
func partialJobs(files []string) map[string][]string {
	jobs := map[string][]string{}
	for _, f := range files {
		base := strings.TrimSuffix(f, partialSuffix)
		i := strings.LastIndex(base, ".rank")
		if i < 0 {
			continue
		}
		jobs[base[:i]] = append(jobs[base[:i]], f)
	}
	for _, fs := range jobs {
		sort.Strings(fs)
	}
	return jobs
}

// mergePartials merges the partial files of each job into one job file in
// dir (flowgraph.Merge) and removes them; it returns the job files, and
// whether any of them is incomplete. A job whose files cannot be merged
// keeps them.
func mergePartials(files []string, dir string) ([]string, bool, error) {
	jobs := partialJobs(files)
	prefixes := make([]string, 0, len(jobs))
	for p := range jobs {
		prefixes = append(prefixes, p)
	}
	sort.Strings(prefixes)
	var out []string
	incomplete := false
	for _, prefix := range prefixes {
		base := filepath.Join(dir, filepath.Base(prefix))
		dst := base + ".mpiflow"
		for i := 2; ; i++ {
			_, err := os.Lstat(dst)
			if os.IsNotExist(err) {
				break
			}
			if err != nil {
				return out, incomplete, fmt.Errorf("merge the partial files %s.rank*%s (kept): %w", prefix, partialSuffix, err)
			}
			dst = fmt.Sprintf("%s.%d.mpiflow", base, i)
		}
		if err := flowgraph.Merge(dst, jobs[prefix]); err != nil {
			return out, incomplete, fmt.Errorf("merge the partial files %s.rank*%s (kept): %w", prefix, partialSuffix, err)
		}
		for _, f := range jobs[prefix] {
			os.Remove(f)
		}
		f, err := flowgraph.Open(dst)
		if err != nil {
			return out, incomplete, err
		}
		incomplete = incomplete || f.Header.Incomplete
		f.Close()
		out = append(out, dst)
	}
	return out, incomplete, nil
}

// runResult is what mpiflow run --json prints.
type runResult struct {
	ExitCode int      `json:"exit_code"`
	Files    []string `json:"files"`
	Command  []string `json:"command"`
	// Incomplete: ranks stopped before MPI_Finalize and Files include
	// their merged partial files.
	Incomplete bool `json:"incomplete"`
	// Merged: Files include partial files merged by run (ranks that
	// stopped early, or a job file that could not be written).
	Merged bool `json:"merged,omitempty"`
	// Reports are the HTML reports written beside Files.
	Reports []string `json:"reports,omitempty"`
}

// reportPath is where mpiflow run and mpiflow report put the report of
// the profile at path: beside it, .mpiflow replaced with .html.
func reportPath(path string) string {
	return strings.TrimSuffix(path, ".mpiflow") + ".html"
}

// writeReports writes the report of each profile beside it and returns
// the reports written. A report that fails is a warning: the job and its
// profile are fine, and mpiflow report can try again.
func writeReports(ctx context.Context, files []string, stderr io.Writer) []string {
	var out []string
	if len(files) > 0 {
		_ = checkDot("dot", false, stderr) // only warns without --dot
	}
	for _, f := range files {
		dst := reportPath(f)
		if err := writeReport(ctx, dst, f, 0, report.Options{}); err != nil {
			fmt.Fprintf(stderr, "mpiflow: no report for %s: %v\n", f, err)
			continue
		}
		out = append(out, dst)
	}
	return out
}

// checkKey checks a --key value as the library parses MPIFLOW_KEY, so
// that a typo fails here instead of a warning in every job.
func checkKey(key string) error {
	if _, err := flowgraph.ParseKey(key); err != nil {
		return fmt.Errorf("--key %q: %w", key, err)
	}
	return nil
}

// runJob runs the job under the library and returns its exit code and the
// job files it wrote.
func runJob(argv []string, o runOptions, stdout, stderr io.Writer) (*runResult, error) {
	if err := checkKey(o.key); err != nil {
		return nil, err
	}
	// Ask a launcher which MPI it is; never run a program that is not a
	// launcher with --version: then the mpirun on PATH tells.
	kind := launcherKind(argv[0], "")
	asked := argv[0]
	if kind == launchDirect {
		asked = "mpirun"
	}
	flavor, err := resolveFlavor(o.mpi, asked)
	if err != nil {
		if kind != launchDirect {
			return nil, err
		}
		flavor = mpiOpenMPI // a direct run without mpirun on PATH: try the default
	}
	kind = launcherKind(argv[0], flavor)
	lib, err := findLib(flavor)
	if err != nil {
		return nil, err
	}
	dir, err := outputDir(o.dir, os.Getenv("MPIFLOW_DIR"))
	if err != nil {
		return nil, err
	}
	vars := jobVars(lib, dir, o, os.Environ())
	cmdline := injectEnv(argv, kind, vars)
	before := profiles(dir, false)
	// Ranks that cannot write the job file keep their data as partial
	// files in the output directory, else in their temporary directory.
	partialDirs := []string{dir}
	if tmp, err := filepath.Abs(os.TempDir()); err == nil && tmp != dir {
		partialDirs = append(partialDirs, tmp)
	}
	beforePartial := map[string]bool{}
	for _, d := range partialDirs {
		maps.Copy(beforePartial, profiles(d, true))
	}

	cmd := exec.Command(cmdline[0], cmdline[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	cmd.Env = os.Environ()
	for k, v := range vars {
		// Local ranks and direct runs get them from the environment too.
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// The launcher gets Ctrl-C from the terminal itself; forward
	// termination requests sent to mpiflow alone.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sig:
				cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	werr := cmd.Wait()
	close(done)
	res := &runResult{Command: cmdline}
	var ee *exec.ExitError
	switch {
	case errors.As(werr, &ee):
		res.ExitCode = ee.ExitCode()
		if res.ExitCode < 0 {
			res.ExitCode = 128 + int(ee.Sys().(syscall.WaitStatus).Signal())
		}
	case werr != nil:
		return nil, fmt.Errorf("run %s: %w", argv[0], werr)
	}
	for p := range profiles(dir, false) {
		if !before[p] {
			res.Files = append(res.Files, p)
		}
	}
	var partials []string
	for _, d := range partialDirs {
		for p := range profiles(d, true) {
			if !beforePartial[p] {
				partials = append(partials, p)
			}
		}
	}
	if len(partials) > 0 {
		merged, incomplete, err := mergePartials(partials, dir)
		res.Files = append(res.Files, merged...)
		res.Incomplete, res.Merged = incomplete, len(merged) > 0
		if err != nil {
			fmt.Fprintf(stderr, "mpiflow: %v\n", err)
		}
	}
	sort.Strings(res.Files)
	return res, nil
}

func newRunCmd() *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run [flags] -- LAUNCHER ARGS...",
		Short: "Run an MPI job with the recording library preloaded on every rank",
		Long: `run starts an MPI job with mpiflow's interposition library preloaded on
every rank and prints where the job's profile was written. The preload and
every MPIFLOW_* setting of the environment (with the flags on top) go to all
ranks, remote ones too: for Open MPI's mpirun it adds -x NAME for each, for
MPICH's mpiexec -genv NAME VALUE; any other command (a singleton run, srun)
gets them through the environment. The --dir directory is created when
missing. The job's exit code is kept. At the end it writes the HTML report
of each profile beside it (FILE.html; --no-report skips it).

When ranks stop before MPI_Finalize (exit, MPI_Abort, a fatal signal), each
writes its own partial file; run merges them into one job file marked
incomplete and removes them. So it does when the job file cannot be written
(a full file system): then each rank keeps its data in a partial file in
the output directory, else in $TMPDIR. Ranks killed with SIGKILL (MPICH's hydra does
that to the other ranks when one fails) leave no data.`,
		Example: `  mpiflow run -- mpirun -np 4 ./app args
  mpiflow run --dir profiles --trace -- mpiexec -n 8 ./solver input.dat
  mpiflow run --json -- mpirun -np 2 ./ring`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := runJob(args, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if !o.noReport {
				res.Reports = writeReports(cmd.Context(), res.Files, cmd.ErrOrStderr())
			}
			if o.asJSON {
				if err := writeJSON(cmd.OutOrStdout(), res); err != nil {
					return err
				}
			} else if len(res.Files) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "mpiflow: no profile was written (did the job reach MPI_Finalize? see the messages above)")
			} else {
				switch {
				case res.Incomplete:
					fmt.Fprintln(cmd.ErrOrStderr(), "mpiflow: the job did not finish normally: ranks that stopped early wrote partial data, merged below (incomplete run)")
				case res.Merged:
					fmt.Fprintln(cmd.ErrOrStderr(), "mpiflow: the job file could not be written at MPI_Finalize; the ranks' own files were merged below (complete run)")
				}
				for _, f := range res.Files {
					fmt.Fprintf(cmd.ErrOrStderr(), "mpiflow: profile: %s\n", f)
				}
				for _, f := range res.Reports {
					fmt.Fprintf(cmd.ErrOrStderr(), "mpiflow: report:  %s\n", f)
				}
			}
			if res.ExitCode != 0 {
				// Keep the job's exit code for scripts and batch systems.
				os.Exit(res.ExitCode)
			}
			return nil
		},
	}
	f := cmd.Flags()
	// Everything from the launcher on belongs to the job, even without "--".
	f.SetInterspersed(false)
	f.StringVar(&o.dir, "dir", "", "directory for the profile, created when missing (default $MPIFLOW_DIR or the working directory)")
	f.StringVar(&o.key, "key", "", "node key fields, e.g. call,site,bytes,partner,comm (default call,site)")
	f.BoolVar(&o.trace, "trace", false, "also write a full trace of every event (MPIFLOW_TRACE=1)")
	f.BoolVar(&o.exact, "exact", false, "time every call, also in fast polling loops (MPIFLOW_EXACT=1)")
	f.BoolVar(&o.quiet, "quiet", false, "no banner from the library (MPIFLOW_QUIET=1)")
	f.StringVar(&o.mpi, "mpi", "auto", "MPI flavor: auto, openmpi or mpich")
	f.BoolVar(&o.asJSON, "json", false, "print the exit code and profile paths as JSON")
	f.BoolVar(&o.noReport, "no-report", false, "do not write the HTML report beside the profile")
	return cmd
}
