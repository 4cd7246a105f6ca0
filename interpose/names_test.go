package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
)

// solverFuncs are the functions of testdata/apps/solver.cpp that make MPI
// calls, as call sites name them.
var solverFuncs = []string{"main", "heat::Solver::Solver", "heat::Solver::exchange", "heat::Solver::sum"}

func init() {
	appCases = append(appCases, appCase{app: "solver", args: []string{"20"}, src: "solver.cpp", funcs: solverFuncs,
		check: func(t *testing.T, r *flowgraph.Rank) {
			g := &r.Graph
			left, right := (r.Rank+3)%4, (r.Rank+1)%4
			irecv, isend := nodesOf(g, "MPI_Irecv"), nodesOf(g, "MPI_Isend")
			require.Len(t, irecv, 2, "one per neighbor")
			require.Len(t, isend, 2, "one per neighbor")
			assert.Equal(t, []int{left}, partners(irecv[0]))
			assert.Equal(t, []int{right}, partners(irecv[1]))
			assert.EqualValues(t, 20, irecv[0].Count)
			assert.Len(t, nodesOf(g, "MPI_Allreduce"), 2, "the sum of each step and the sum of steps")
		}})
}

// sourceLine returns the number of the first line of the file at path that
// contains s.
func sourceLine(t *testing.T, path, s string) int {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if strings.Contains(sc.Text(), s) {
			return n
		}
	}
	require.NoError(t, sc.Err())
	t.Fatalf("%s: no line has %q", path, s)
	return 0
}

// TestCxxNamesThroughPATH runs testdata/apps/solver.cpp, a C++ program
// whose MPI calls are made by member functions of a class in a namespace,
// with `mpiflow run` as `mpirun -np 3 solver`: the program is found
// through PATH, from another working directory. Its call sites must be
// located in the program, and its loop header named by the demangled
// function and the source line in `mpiflow loops` (text and JSON),
// `mpiflow graph` and the report.
func TestCxxNamesThroughPATH(t *testing.T) {
	bin := buildCLI(t)
	line := sourceLine(t, "../testdata/apps/solver.cpp", "MPI_Irecv(")
	header := fmt.Sprintf("MPI_Irecv at heat::Solver::exchange solver.cpp:%d", line)
	forEachMPI(t, func(t *testing.T, m mpiImpl, dir, lib string) {
		app := filepath.Join(dir, "solver")
		if _, err := os.Stat(app); err != nil {
			t.Skip("solver was not built (no C++ compiler?)")
		}
		launch := []string{m.launcher, "--oversubscribe", "-np", "3"}
		if m.name == "mpich" {
			launch = []string{m.launcher, "-n", "3"}
		}
		prof := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append(append([]string{"run", "--quiet", "--dir", prof, "--"}, launch...), "solver", "20")...)
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
		if os.Getuid() == 0 {
			cmd.Env = append(cmd.Env, "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
		}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.NoError(t, ctx.Err(), "mpiflow run timed out")
		require.Contains(t, string(out), "solver: 3 ranks, 20 steps")
		file := jobFile(t, prof)

		// The sites are located in the program found through PATH.
		f, err := flowgraph.Open(file)
		require.NoError(t, err)
		defer f.Close()
		require.Len(t, f.Index, 3)
		r, err := f.ReadRank(0)
		require.NoError(t, err)
		for _, cs := range r.Graph.Sites {
			assert.Equal(t, app, cs.Object, "site %#x", cs.Addr)
		}

		cli := func(args ...string) string {
			t.Helper()
			out, err := exec.Command(bin, args...).Output()
			require.NoError(t, err, "mpiflow %v", args)
			return string(out)
		}
		loops := cli("loops", file)
		assert.Contains(t, loops, header)
		assert.NotContains(t, loops, "_ZN", "names demangled")

		var js struct {
			Groups []struct {
				Tree []struct {
					Header string `json:"header"`
				} `json:"tree"`
			} `json:"groups"`
		}
		require.NoError(t, json.Unmarshal([]byte(cli("loops", "--json", file)), &js))
		require.Len(t, js.Groups, 1)
		require.NotEmpty(t, js.Groups[0].Tree)
		assert.Equal(t, header, js.Groups[0].Tree[0].Header)

		// The top level's loop node and the loop's nodes say where they are.
		dot := cli("graph", file)
		assert.Contains(t, dot, "header "+header)
		assert.Contains(t, dot, `\nfunction heat::Solver::exchange()`, "full signature in the hover text")
		dot = cli("graph", file, "--loop", "1")
		assert.Regexp(t, fmt.Sprintf(`MPI_Irecv cs=\d+ at heat::Solver::exchange solver\.cpp:%d\\n`, line), dot)
		assert.NotContains(t, dot, "_ZN")

		html, err := os.ReadFile(strings.TrimSuffix(file, ".mpiflow") + ".html")
		require.NoError(t, err)
		assert.Contains(t, string(html), header)
		assert.NotContains(t, string(html), "_ZN")
	})
}
