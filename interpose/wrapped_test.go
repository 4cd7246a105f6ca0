package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mpiHeaders finds the mpi.h that the compiler wrapper cc uses, and the
// headers beside it that it includes (MPICH declares its functions in
// mpi_proto.h and mpio.h).
func mpiHeaders(t *testing.T, cc string) []string {
	t.Helper()
	var dirs []string
	if out, err := exec.Command(cc, "--showme:incdirs").Output(); err == nil {
		dirs = strings.Fields(string(out))
	} else if out, err := exec.Command(cc, "-show").Output(); err == nil {
		for _, f := range strings.Fields(string(out)) {
			if strings.HasPrefix(f, "-I") {
				dirs = append(dirs, f[2:])
			}
		}
	}
	for _, d := range dirs {
		p := filepath.Join(d, "mpi.h")
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		out := []string{p}
		for _, m := range includeRE.FindAllSubmatch(b, -1) {
			q := filepath.Join(d, string(m[1]))
			if _, err := os.Stat(q); err == nil {
				out = append(out, q)
			}
		}
		return out
	}
	t.Skipf("no mpi.h in %s's include directories %v", cc, dirs)
	return nil
}

var (
	includeRE = regexp.MustCompile(`(?m)^\s*#\s*include\s*[<"](\w+\.h)[>"]`)
	pmpiRE    = regexp.MustCompile(`\b(?:int|double)\s+PMPI_(\w+)\s*\(`)
	commentRE = regexp.MustCompile(`(?s)/\*.*?\*/`)
	versionRE = regexp.MustCompile(`(?m)^\s*#\s*define\s+MPI_VERSION\s+(\d+)\s*$`)
	subverRE  = regexp.MustCompile(`(?m)^\s*#\s*define\s+MPI_SUBVERSION\s+(\d+)\s*$`)
)

// mpiVersion returns MPI_VERSION and MPI_SUBVERSION as the headers define
// them.
func mpiVersion(t *testing.T, paths []string) (major, minor int) {
	t.Helper()
	major, minor = -1, 0
	for _, path := range paths {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		if m := versionRE.FindSubmatch(b); m != nil && major < 0 {
			major, _ = strconv.Atoi(string(m[1]))
			if m := subverRE.FindSubmatch(b); m != nil {
				minor, _ = strconv.Atoi(string(m[1]))
			}
		}
	}
	require.GreaterOrEqual(t, major, 1, "no #define MPI_VERSION in %v", paths)
	return major, minor
}

// versionAtLeast reports whether MPI version major.minor is v ("4.0") or
// newer.
func versionAtLeast(t *testing.T, major, minor int, v string) bool {
	t.Helper()
	a, b, ok := strings.Cut(v, ".")
	require.True(t, ok, "bad version %q", v)
	vm, err := strconv.Atoi(a)
	require.NoError(t, err)
	vn, err := strconv.Atoi(b)
	require.NoError(t, err)
	return major > vm || (major == vm && minor >= vn)
}

// pmpiFunctions lists the MPI functions that the headers declare a PMPI_
// prototype for.
func pmpiFunctions(t *testing.T, paths []string) []string {
	seen := map[string]bool{}
	for _, path := range paths {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		src := commentRE.ReplaceAll(b, nil)
		for _, m := range pmpiRE.FindAllSubmatch(src, -1) {
			seen["MPI_"+string(m[1])] = true
		}
	}
	var names []string
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// TestEveryMPIFunctionIsWrappedOrExcluded parses the PMPI_ prototypes of
// the mpi.h of each MPI installed: each must be wrapped or deliberately
// excluded in gen/mpi.spec, so nothing is silently missed.
func TestEveryMPIFunctionIsWrappedOrExcluded(t *testing.T) {
	if len(available()) == 0 {
		t.Skip("needs Open MPI or MPICH to find mpi.h (Debian: apt-get install libopenmpi-dev libmpich-dev)")
	}
	for _, m := range available() {
		t.Run(m.name, func(t *testing.T) { testWrappedOrExcluded(t, m.cc) })
	}
}

func testWrappedOrExcluded(t *testing.T, cc string) {
	headers := mpiHeaders(t, cc)
	fns := pmpiFunctions(t, headers)
	major, minor := mpiVersion(t, headers)
	require.Greater(t, len(fns), 300, "parsed too few prototypes")
	wrapped := map[string]bool{}
	for _, w := range wrappedCalls() {
		wrapped[w] = true
	}
	excluded := excludedCalls()
	var missing []string
	for _, f := range fns {
		if !wrapped[f] && excluded[f] == "" {
			missing = append(missing, f)
		}
	}
	assert.Empty(t, missing, "add these to interpose/gen/mpi.spec, wrapped or excluded with a reason")
	have := map[string]bool{}
	for _, f := range fns {
		have[f] = true
	}
	// Functions of a newer MPI than the header's are wrapped only where
	// mpi.h is of that version (#if MPI_VERSION in wrappers_gen.c); all
	// others must be declared.
	since := wrappedSince()
	newer := 0
	for w := range wrapped {
		if v, ok := since[w]; ok && !versionAtLeast(t, major, minor, v) {
			newer++
			assert.False(t, have[w], "%s is MPI-%s but the MPI-%d.%d mpi.h declares it", w, v, major, minor)
		} else {
			assert.True(t, have[w], "%s is wrapped but the MPI-%d.%d mpi.h does not declare it", w, major, minor)
		}
		assert.Empty(t, excluded[w], "%s is both wrapped and excluded", w)
	}
	for w := range since {
		assert.True(t, wrapped[w], "%s has a version but is not wrapped", w)
	}
	t.Logf("MPI %d.%d: %d functions declared, %d wrapped, %d of them newer than the header", major, minor, len(fns), len(wrapped), newer)
	if major >= 4 {
		for _, f := range []string{"MPI_Isendrecv", "MPI_Isendrecv_replace", "MPI_Allreduce_init", "MPI_Bcast_init", "MPI_Barrier_init",
			"MPI_Neighbor_alltoallw_init", "MPI_Psend_init", "MPI_Precv_init", "MPI_Pready", "MPI_Pready_range", "MPI_Pready_list",
			"MPI_Parrived", "MPI_Send_c", "MPI_Allreduce_c", "MPI_Alltoallv_c", "MPI_File_write_at_c"} {
			assert.True(t, wrapped[f], f)
			assert.Equal(t, "4.0", since[f], f)
		}
	}
	// The API of the issue is covered.
	for _, f := range []string{"MPI_Send", "MPI_Irecv", "MPI_Send_init", "MPI_Mprobe", "MPI_Improbe", "MPI_Waitall",
		"MPI_Ialltoallw", "MPI_Ineighbor_alltoallv", "MPI_Rget_accumulate", "MPI_File_iwrite_at_all",
		"MPI_Comm_split_type", "MPI_Dist_graph_create_adjacent", "MPI_Init_thread", "MPI_Finalize"} {
		assert.True(t, wrapped[f], f)
	}
}

// TestGeneratedFilesUpToDate regenerates the wrappers and compares them
// with the files in the tree.
func TestGeneratedFilesUpToDate(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command")
	}
	dir := t.TempDir()
	c, g, md := filepath.Join(dir, "w.c"), filepath.Join(dir, "w.go"), filepath.Join(dir, "w.md")
	out, err := exec.Command("go", "run", "./gen", "-spec", "gen/mpi.spec", "-c", c, "-go", g, "-md", md).CombinedOutput()
	require.NoError(t, err, string(out))
	for have, fresh := range map[string]string{"csrc/wrappers_gen.c": c, "csrc/wrappers_gen.h": filepath.Join(dir, "w.h"),
		"wrapped_gen.go": g, "WRAPPED.md": md} {
		a, err := os.ReadFile(have)
		require.NoError(t, err)
		b, err := os.ReadFile(fresh)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(a, b), "%s is stale: run go generate in interpose/", have)
	}
}
