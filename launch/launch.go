// Package launch runs an MPI job with mpiflow's recording library
// preloaded on every rank, and collects the job files the job writes,
// merging the partial files of ranks that stopped early.
package launch

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"syscall"
)

// Options are the settings of a job run under the library.
type Options struct {
	// Dir is the directory for the profile, created when missing
	// (default $MPIFLOW_DIR or the working directory).
	Dir string
	// Key is the node key fields (MPIFLOW_KEY), e.g. "call,site,bytes".
	Key string
	// Trace also writes a full trace (MPIFLOW_TRACE=1).
	Trace bool
	// Exact times every call (MPIFLOW_EXACT=1).
	Exact bool
	// Quiet silences the library's banner (MPIFLOW_QUIET=1).
	Quiet bool
	// MPI is the MPI flavor: auto (or empty), openmpi or mpich.
	MPI string
	// Stdin, Stdout and Stderr are the job's standard streams.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Result is how a job ended and the job files it wrote.
type Result struct {
	ExitCode int      `json:"exit_code"`
	Files    []string `json:"files"`
	Command  []string `json:"command"`
	// Incomplete: ranks stopped before MPI_Finalize and Files include
	// their merged partial files.
	Incomplete bool `json:"incomplete"`
	// Merged: Files include partial files merged by run (ranks that
	// stopped early, or a job file that could not be written).
	Merged bool `json:"merged,omitempty"`
}

// job is a command line ready to run and where its files go.
type job struct {
	cmdline []string
	vars    map[string]string
	dir     string
	// partialDirs are where ranks that cannot write the job file keep
	// their data: the output directory, else their temporary directory.
	partialDirs []string
}

// Run runs the job of the command line argv (a launcher such as mpirun,
// or the program itself) under the library and returns its exit code and
// the job files it wrote. A merge of partial files that fails is reported
// on o.Stderr and keeps them.
func Run(argv []string, o Options) (*Result, error) {
	j, err := prepare(argv, o)
	if err != nil {
		return nil, err
	}
	before := profiles(j.dir, false)
	beforePartial := map[string]bool{}
	for _, d := range j.partialDirs {
		maps.Copy(beforePartial, profiles(d, true))
	}
	code, err := j.execute(o)
	if err != nil {
		return nil, err
	}
	res := &Result{Command: j.cmdline, ExitCode: code}
	for p := range profiles(j.dir, false) {
		if !before[p] {
			res.Files = append(res.Files, p)
		}
	}
	var partials []string
	for _, d := range j.partialDirs {
		for p := range profiles(d, true) {
			if !beforePartial[p] {
				partials = append(partials, p)
			}
		}
	}
	if len(partials) > 0 {
		merged, incomplete, err := mergePartials(partials, j.dir)
		res.Files = append(res.Files, merged...)
		res.Incomplete, res.Merged = incomplete, len(merged) > 0
		if err != nil {
			fmt.Fprintf(o.Stderr, "mpiflow: %v\n", err)
		}
	}
	sort.Strings(res.Files)
	return res, nil
}

// prepare checks the options, finds the library for the job's MPI and
// builds the command line that passes the environment to every rank.
func prepare(argv []string, o Options) (*job, error) {
	if err := checkKey(o.Key); err != nil {
		return nil, err
	}
	// Ask a launcher which MPI it is; never run a program that is not a
	// launcher with --version: then the mpirun on PATH tells.
	kind := launcherKind(argv[0], "")
	asked := argv[0]
	if kind == launchDirect {
		asked = "mpirun"
	}
	flavor, err := resolveFlavor(o.MPI, asked)
	if err != nil {
		if kind != launchDirect {
			return nil, err
		}
		flavor = OpenMPI // a direct run without mpirun on PATH: try the default
	}
	kind = launcherKind(argv[0], flavor)
	lib, err := findLib(flavor)
	if err != nil {
		return nil, err
	}
	dir, err := outputDir(o.Dir, os.Getenv("MPIFLOW_DIR"))
	if err != nil {
		return nil, err
	}
	vars := jobVars(lib, dir, o, os.Environ())
	j := &job{cmdline: injectEnv(argv, kind, vars), vars: vars, dir: dir, partialDirs: []string{dir}}
	if tmp, err := filepath.Abs(os.TempDir()); err == nil && tmp != dir {
		j.partialDirs = append(j.partialDirs, tmp)
	}
	return j, nil
}

// execute runs the job to its end, forwarding termination requests, and
// returns its exit code (128 + the signal for a job a signal ended).
func (j *job) execute(o Options) (int, error) {
	cmd := exec.Command(j.cmdline[0], j.cmdline[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = o.Stdin, o.Stdout, o.Stderr
	cmd.Env = os.Environ()
	for k, v := range j.vars {
		// Local ranks and direct runs get them from the environment too.
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// The launcher gets Ctrl-C from the terminal itself; forward
	// termination requests sent to mpiflow alone.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start %s: %w", j.cmdline[0], err)
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
	var ee *exec.ExitError
	switch {
	case errors.As(werr, &ee):
		code := ee.ExitCode()
		if code < 0 {
			code = 128 + int(ee.Sys().(syscall.WaitStatus).Signal())
		}
		return code, nil
	case werr != nil:
		return 0, fmt.Errorf("run %s: %w", j.cmdline[0], werr)
	}
	return 0, nil
}
