package mpicall

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// specNames returns the names of the spec's wrapped calls and of those it
// excludes (which the table lacks), with the MPI_ prefix.
func specNames(t *testing.T) (wrapped, excluded []string) {
	f, err := os.Open("../interpose/gen/mpi.spec")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if n, ok := strings.CutPrefix(line, "!"); ok {
			n, _, _ = strings.Cut(n, "|")
			excluded = append(excluded, "MPI_"+strings.TrimSpace(n))
		} else if n, _, ok := strings.Cut(line, "("); ok && !strings.HasPrefix(line, "#") {
			wrapped = append(wrapped, "MPI_"+n)
		}
	}
	require.NoError(t, sc.Err())
	require.Greater(t, len(wrapped), 300)
	require.Greater(t, len(excluded), 100)
	return wrapped, excluded
}

// The functions the taxonomy replaces, as they were (aggregate.CallGroup,
// analysis's sendKind, report's p2pDir).
var oldCollectives = map[string]bool{
	"barrier": true, "bcast": true, "reduce": true, "allreduce": true, "gather": true, "gatherv": true,
	"allgather": true, "allgatherv": true, "scatter": true, "scatterv": true, "alltoall": true,
	"alltoallv": true, "alltoallw": true, "reduce_scatter": true, "reduce_scatter_block": true,
	"scan": true, "exscan": true, "neighbor_allgather": true, "neighbor_allgatherv": true,
	"neighbor_alltoall": true, "neighbor_alltoallv": true, "neighbor_alltoallw": true,
}

var oldP2P = map[string]bool{
	"send": true, "recv": true, "isend": true, "irecv": true, "ssend": true, "issend": true,
	"bsend": true, "ibsend": true, "rsend": true, "irsend": true, "sendrecv": true,
	"sendrecv_replace": true, "probe": true, "iprobe": true, "mprobe": true, "improbe": true,
	"mrecv": true, "imrecv": true, "start": true, "startall": true,
	"isendrecv": true, "isendrecv_replace": true,
	"psend": true, "precv": true, "pready": true, "pready_range": true, "pready_list": true,
	"put": true, "get": true, "accumulate": true, "get_accumulate": true, "fetch_and_op": true,
	"compare_and_swap": true, "rput": true, "rget": true, "raccumulate": true, "rget_accumulate": true,
}

func oldCallGroup(call string) string {
	name := strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(call, "MPI_"), "PMPI_"))
	name = strings.TrimSuffix(name, "_c")
	name = strings.TrimSuffix(name, "_init")
	switch {
	case strings.HasPrefix(name, "file_"):
		return IO
	case strings.HasPrefix(name, "wait"), strings.HasPrefix(name, "test"), name == "parrived",
		name == "win_fence", name == "win_wait", name == "win_complete", name == "win_flush",
		name == "win_flush_all", name == "win_unlock", name == "win_unlock_all":
		return Wait
	case oldCollectives[name], strings.HasPrefix(name, "i") && oldCollectives[name[1:]]:
		return Collective
	case oldP2P[name]:
		return P2P
	}
	return Other
}

func oldSendKind(call string) Dir {
	switch strings.TrimSuffix(call, "_c") {
	case "MPI_Send", "MPI_Bsend", "MPI_Rsend", "MPI_Ssend", "MPI_Isend", "MPI_Ibsend", "MPI_Irsend", "MPI_Issend":
		return DirSend
	case "MPI_Sendrecv", "MPI_Sendrecv_replace", "MPI_Isendrecv", "MPI_Isendrecv_replace":
		return DirSendRecv
	}
	return DirNone
}

func oldP2PDir(call string) Dir {
	switch call {
	case "MPI_Send", "MPI_Isend", "MPI_Ssend", "MPI_Issend", "MPI_Bsend", "MPI_Ibsend", "MPI_Rsend", "MPI_Irsend":
		return DirSend
	case "MPI_Recv", "MPI_Irecv", "MPI_Mrecv", "MPI_Imrecv":
		return DirRecv
	}
	return DirNone
}

// TestAgreesWithOldFunctions: on every call of the spec, on those it
// excludes, in other spellings and on names it lacks, the table gives
// what the three functions it replaces gave.
func TestAgreesWithOldFunctions(t *testing.T) {
	wrapped, excluded := specNames(t)
	names := append(append([]string{}, wrapped...), excluded...)
	for _, n := range append([]string{}, names...) {
		names = append(names, "P"+n, strings.ToLower(n), strings.ToUpper(n), n+"_c", n+"_init", n+"_init_c", n+"_c_c", n+"_init_init")
	}
	for k := range oldCollectives {
		names = append(names, k, "i"+k, "MPI_"+k, "MPI_I"+k)
	}
	for k := range oldP2P {
		names = append(names, k, "MPI_"+k)
	}
	names = append(names, "", "MPI_", "MPI_Isomething", "MPI_Comm_create_from_group", "MPI_Waitfoo", "MPI_Testfoo",
		"MPI_File_foo", "i", "MPI_I", "Compute", "MPI_Win_flush_local", "MPI_Send_init_c")
	for _, n := range names {
		assert.Equal(t, oldCallGroup(n), Group(n), "group of %q", n)
		d := Direction(n)
		sends, oneWay := d, d // what sendKind and p2pDir knew of d
		if d == DirRecv {
			sends = DirNone
		}
		if d == DirSendRecv {
			oneWay = DirNone
		}
		assert.Equal(t, oldSendKind(n), sends, "sends of %q", n)
		if !strings.HasSuffix(n, "_c") { // p2pDir did not know large counts
			assert.Equal(t, oldP2PDir(n), oneWay, "direction of %q", n)
		}
	}
}

// TestGeneratedTableUpToDate regenerates the table from the spec and
// compares it with the file in the tree.
func TestGeneratedTableUpToDate(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command")
	}
	out := filepath.Join(t.TempDir(), "calls_gen.go")
	b, err := exec.Command("go", "run", "../interpose/gen", "-spec", "../interpose/gen/mpi.spec", "-taxonomy", out).CombinedOutput()
	require.NoError(t, err, string(b))
	fresh, err := os.ReadFile(out)
	require.NoError(t, err)
	have, err := os.ReadFile("calls_gen.go")
	require.NoError(t, err)
	assert.True(t, bytes.Equal(have, fresh), "calls_gen.go is stale: run go generate in mpicall/")
}
