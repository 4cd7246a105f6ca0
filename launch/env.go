package launch

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"mpiflow/flowgraph"
)

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
		if flavor == MPICH || strings.HasSuffix(argv0, "hydra") || strings.HasSuffix(argv0, ".mpich") {
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
			// mpirun takes the value from its own environment (Run
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
func jobVars(lib, dir string, o Options, environ []string) map[string]string {
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
	if o.Key != "" {
		v["MPIFLOW_KEY"] = o.Key
	}
	if o.Trace {
		v["MPIFLOW_TRACE"] = "1"
	}
	if o.Exact {
		v["MPIFLOW_EXACT"] = "1"
	}
	if o.Quiet {
		v["MPIFLOW_QUIET"] = "1"
	}
	return v
}

// checkKey checks a --key value as the library parses MPIFLOW_KEY, so
// that a typo fails here instead of a warning in every job.
func checkKey(key string) error {
	if _, err := flowgraph.ParseKey(key); err != nil {
		return fmt.Errorf("--key %q: %w", key, err)
	}
	return nil
}
