package launch

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// MPI flavors that have their own interposition library.
const (
	OpenMPI = "openmpi"
	MPICH   = "mpich"
)

// libName is the file name of the preload library for an MPI flavor.
func libName(flavor string) string { return "libmpiflow-" + flavor + ".so" }

// detectMPI tells which MPI the launcher (or mpirun on PATH) belongs to,
// from its --version output.
func detectMPI(launcher string) (string, error) {
	if launcher == "" {
		launcher = "mpirun"
	}
	out, err := exec.Command(launcher, "--version").CombinedOutput()
	s := string(out)
	switch {
	case strings.Contains(s, "Open MPI") || strings.Contains(s, "OpenRTE"):
		return OpenMPI, nil
	case strings.Contains(s, "HYDRA") || strings.Contains(s, "MPICH") || strings.Contains(s, "Intel(R) MPI"):
		return MPICH, nil
	case err != nil:
		return "", fmt.Errorf("cannot tell which MPI %s is: %w", launcher, err)
	}
	return "", fmt.Errorf("cannot tell which MPI %s is (its --version mentions neither Open MPI nor MPICH); use --mpi", launcher)
}

// findLib returns the absolute path of the preload library: $MPIFLOW_LIB,
// else lib/<name> next to the bin/ directory holding the mpiflow executable.
func findLib(flavor string) (string, error) {
	if p := os.Getenv("MPIFLOW_LIB"); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", fmt.Errorf("MPIFLOW_LIB=%s: %w", p, err)
		}
		if _, err := os.Stat(abs); err != nil {
			return "", fmt.Errorf("MPIFLOW_LIB=%s: %w", p, err)
		}
		return abs, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the mpiflow executable: %w", err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	dir := filepath.Dir(exe)
	var tried []string
	for _, d := range []string{filepath.Join(dir, "..", "lib"), filepath.Join(dir, "lib")} {
		p := filepath.Join(d, libName(flavor))
		if _, err := os.Stat(p); err == nil {
			if _, err := os.Stat(filepath.Join(d, "libmpiflow-go.so")); err != nil {
				return "", fmt.Errorf("%s is there but libmpiflow-go.so next to it is missing (run make)", p)
			}
			return filepath.Clean(p), nil
		}
		tried = append(tried, filepath.Clean(p))
	}
	return "", fmt.Errorf("no interposition library for %s (looked for %s; run make, or set MPIFLOW_LIB)", flavor, strings.Join(tried, ", "))
}

// resolveFlavor is the --mpi flag's value, or the detected MPI for "auto".
func resolveFlavor(flag, launcher string) (string, error) {
	switch flag {
	case OpenMPI, MPICH:
		return flag, nil
	case "", "auto":
		return detectMPI(launcher)
	}
	return "", errors.New("--mpi must be auto, openmpi or mpich, not " + flag)
}

// PickLib returns the flavor and path of the preload library for an MPI
// flavor (auto, openmpi or mpich): for auto, the MPI of the mpirun on PATH,
// or when that cannot be told, the only library installed.
func PickLib(mpi string) (string, string, error) {
	if os.Getenv("MPIFLOW_LIB") != "" && (mpi == "auto" || mpi == "") {
		p, err := findLib(mpi)
		return mpi, p, err
	}
	flavor, derr := resolveFlavor(mpi, "")
	if derr == nil {
		p, err := findLib(flavor)
		return flavor, p, err
	}
	if mpi != "auto" && mpi != "" {
		return "", "", derr
	}
	var found []string
	var path string
	for _, f := range []string{OpenMPI, MPICH} {
		if p, err := findLib(f); err == nil {
			found = append(found, f)
			path = p
		}
	}
	if len(found) == 1 {
		return found[0], path, nil
	}
	return "", "", derr
}
