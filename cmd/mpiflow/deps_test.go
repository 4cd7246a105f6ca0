package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/export/otf2"
)

// buildCLI builds the mpiflow command into a temporary directory, as make
// builds bin/mpiflow, and returns its path.
func buildCLI(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	bin := filepath.Join(t.TempDir(), "mpiflow")
	out, err := exec.Command(goBin, "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// runCLI runs the command line prefix (the binary and its arguments, or a
// wrapper of it) with env added to an environment without
// MPIFLOW_OTF2_LIB, and returns its standard output, standard error and
// exit code.
func runCLI(t *testing.T, env []string, prefix ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(prefix[0], prefix[1:]...)
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "MPIFLOW_OTF2_LIB=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return o.String(), e.String(), code
}

// libcLevel are the libraries bin/mpiflow may need: the C library and
// the loader, those split from it in older glibc, and the vDSO.
var libcLevel = []string{"linux-vdso.so", "ld-linux", "libc.so", "libdl.so", "libpthread.so", "libm.so", "librt.so", "libresolv.so"}

// otf2Libraries are the real files of the OTF2 library the dynamic loader
// knows (ldconfig -p).
func otf2Libraries(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("ldconfig", "-p").Output()
	if err != nil {
		t.Skipf("ldconfig -p: %v", err)
	}
	seen := map[string]bool{}
	var files []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		name, path, ok := strings.Cut(sc.Text(), " => ")
		if !ok || !strings.HasPrefix(strings.TrimSpace(name), "libopen-trace-format2.so") {
			continue
		}
		real, err := filepath.EvalSymlinks(strings.TrimSpace(path))
		if err == nil && !seen[real] {
			seen[real] = true
			files = append(files, real)
		}
	}
	return files
}

// TestCLIRuntimeDependencies: the built command links no optional library
// (issue 41: without OTF2 it did not start at all, even for stats); OTF2 is
// loaded when an OTF2 export or import needs it, and without it these fail
// with an error naming the library and its package, while every other
// command runs.
func TestCLIRuntimeDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := buildCLI(t)
	profile := filepath.Join("..", "..", "testdata", "profiles", "halo.mpiflow")

	t.Run("ldd", func(t *testing.T) {
		out, err := exec.Command("ldd", bin).CombinedOutput()
		if strings.Contains(string(out), "not a dynamic executable") {
			return // no library at all (built without cgo)
		}
		require.NoError(t, err, "%s", out)
		assert.NotContains(t, string(out), "libopen-trace-format2")
		var libs []string
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(line)
			require.NotEmpty(t, f)
			lib := filepath.Base(f[0])
			libs = append(libs, lib)
			ok := false
			for _, p := range libcLevel {
				ok = ok || strings.HasPrefix(lib, p)
			}
			assert.True(t, ok, "%s is not a libc-level library: load it with dlopen when needed", lib)
		}
		assert.Contains(t, strings.Join(libs, " "), "libc.so", "ldd output parsed:\n%s", out)
	})

	t.Run("stats", func(t *testing.T) {
		stdout, stderr, code := runCLI(t, nil, bin, "stats", profile)
		require.Equal(t, 0, code, "%s", stderr)
		assert.Contains(t, stdout, "mpi_tasks : 4")
	})

	// MPIFLOW_OTF2_LIB names a library that cannot be loaded: the OTF2
	// commands fail, exit 1 and say what to install; the others run.
	t.Run("MPIFLOW_OTF2_LIB=/nonexistent", func(t *testing.T) {
		if !otf2.Supported {
			t.Skip("built without OTF2 support")
		}
		missing := []string{"MPIFLOW_OTF2_LIB=/nonexistent"}
		const cannot = "cannot load the OTF2 library (libopen-trace-format2.so.10, Debian package libopen-trace-format2-10) " +
			"from MPIFLOW_OTF2_LIB=/nonexistent: /nonexistent: cannot open shared object file"
		dir := filepath.Join(t.TempDir(), "arch")
		arch := filepath.Join(dir, "trace.otf2")
		_, stderr, code := runCLI(t, missing, bin, "trace", profile, "--format", "otf2", "-o", arch)
		assert.Equal(t, 1, code, "%s", stderr)
		assert.True(t, strings.HasPrefix(stderr, "mpiflow: --format otf2: "+cannot), "%s", stderr)
		assert.NotContains(t, stderr, "goroutine", "no panic")
		assert.NoDirExists(t, dir, "nothing written")

		_, stderr, code = runCLI(t, missing, bin, "stats", profile)
		assert.Equal(t, 0, code, "%s", stderr)

		// The OTF2 importer (aggregate of an archive) the same way.
		_, stderr, code = runCLI(t, nil, bin, "trace", profile, "--format", "otf2", "-o", arch)
		require.Equal(t, 0, code, "with the library: %s", stderr)
		_, stderr, code = runCLI(t, missing, bin, "aggregate", arch)
		assert.Equal(t, 1, code, "%s", stderr)
		assert.Contains(t, stderr, "mpiflow: read "+arch+": "+cannot)
		assert.NotContains(t, stderr, "goroutine", "no panic")
		stdout, stderr, code := runCLI(t, nil, bin, "aggregate", arch)
		assert.Equal(t, 0, code, "with the library: %s", stderr)
		assert.Contains(t, stdout, "4 resources")
	})

	// A machine without OTF2: the library's files are hidden (bind-mounted
	// over by /dev/null in a mount namespace of the command's own).
	t.Run("without OTF2 installed", func(t *testing.T) {
		if !otf2.Supported {
			t.Skip("built without OTF2 support")
		}
		libs := otf2Libraries(t)
		require.NotEmpty(t, libs, "the OTF2 library this build needs is known to ldconfig")
		if err := exec.Command("unshare", "--mount", "--propagation", "private", "true").Run(); err != nil {
			t.Skipf("cannot make a mount namespace (unshare --mount: %v)", err)
		}
		const hide = `while [ "$1" != -- ]; do mount --bind /dev/null "$1" || exit 97; shift; done; shift; exec "$@"`
		without := append([]string{"unshare", "--mount", "--propagation", "private", "sh", "-c", hide, "sh"}, libs...)
		without = append(without, "--", bin)

		stdout, stderr, code := runCLI(t, nil, append(without, "stats", profile)...)
		require.NotEqual(t, 97, code, "hiding %v: %s", libs, stderr)
		assert.Equal(t, 0, code, "%s", stderr)
		assert.Contains(t, stdout, "mpi_tasks : 4")

		dir := filepath.Join(t.TempDir(), "arch")
		_, stderr, code = runCLI(t, nil, append(without, "trace", profile, "--format", "otf2", "-o", filepath.Join(dir, "t.otf2"))...)
		assert.Equal(t, 1, code, "%s", stderr)
		assert.Contains(t, stderr, "mpiflow: --format otf2: cannot load the OTF2 library libopen-trace-format2.so.10 "+
			"(install Debian package libopen-trace-format2-10, or set MPIFLOW_OTF2_LIB to its path): ")
		assert.NotContains(t, stderr, "goroutine", "no panic")
		assert.NoDirExists(t, dir, "nothing written")
	})
}
