package mpicall

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGroupAndDirection: representative calls of every group and
// direction, in their large-count (_c), persistent (_init), PMPI_ and
// lower-case forms, and names the spec lacks (imported traces).
func TestGroupAndDirection(t *testing.T) {
	tests := []struct {
		call  string
		group string
		dir   Dir
	}{
		{"MPI_Send", P2P, DirSend},
		{"MPI_Send_c", P2P, DirSend},
		{"MPI_Issend_c", P2P, DirSend},
		{"MPI_Send_init", P2P, DirNone}, // MPI_Start sends
		{"MPI_Send_init_c", P2P, DirNone},
		{"PMPI_Send", P2P, DirNone},
		{"mpi_send", Other, DirNone},
		{"MPI_Recv", P2P, DirRecv},
		{"MPI_Recv_c", P2P, DirRecv},
		{"MPI_Imrecv_c", P2P, DirRecv},
		{"MPI_Sendrecv", P2P, DirSendRecv},
		{"MPI_Isendrecv_replace_c", P2P, DirSendRecv},
		{"MPI_Iprobe", P2P, DirNone},
		{"MPI_Start", P2P, DirNone},
		{"MPI_Put", P2P, DirNone},
		{"MPI_Rget_accumulate_c", P2P, DirNone},
		{"MPI_Psend_init", P2P, DirNone},
		{"MPI_Pready_list", P2P, DirNone},
		{"MPI_Allreduce", Collective, DirNone},
		{"MPI_Iallreduce_c", Collective, DirNone},
		{"MPI_Ibarrier", Collective, DirNone},
		{"MPI_Neighbor_alltoallw_init_c", Collective, DirNone},
		{"MPI_Reduce_local", Other, DirNone},
		{"MPI_Wait", Wait, DirNone},
		{"MPI_Testany", Wait, DirNone},
		{"MPI_Parrived", Wait, DirNone},
		{"MPI_Win_fence", Wait, DirNone},
		{"MPI_Win_flush_local", Other, DirNone},
		{"MPI_File_write_at_all_c", IO, DirNone},
		{"MPI_Init", Other, DirNone},
		{"MPI_Comm_rank", Other, DirNone},
		// Not in the spec: by prefix.
		{"MPI_File_seek", IO, DirNone},
		{"MPI_Test_cancelled", Wait, DirNone},
		{"MPI_Waitfoo_c", Wait, DirNone},
		{"MPI_Session_init", Other, DirNone},
		{"MPI_Isomething", Other, DirNone},
		{"Compute", Other, DirNone},
		{"", Other, DirNone},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.group, Group(tt.call), "group of %q", tt.call)
		assert.Equal(t, tt.dir, Direction(tt.call), "direction of %q", tt.call)
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
