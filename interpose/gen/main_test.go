package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, spec, want string
	}{
		{"bad directive", "Send(int a) | colour=red\n", "bad directive"},
		{"twice", "Send(int a)\n!Send | local\n", "twice"},
		{"no reason", "!Wtime\n", "reason"},
		{"no params", "Send\n", "NAME(params)"},
		{"no name", "Send(int) | \n", "no name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.spec))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestGeneratedWrapper(t *testing.T) {
	spec := `## P2P
Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status) | comm=comm status=status bytes=MF_CB(count,datatype) peer=@status->MPI_SOURCE
Comm_free(MPI_Comm *comm) | comm=*comm forget=comm:*comm
Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
!Wtime | clock
`
	s, err := Parse(strings.NewReader(spec))
	require.NoError(t, err)
	require.Len(t, s.Funcs, 3)
	assert.Equal(t, "newgroup", s.Funcs[2].Params[3].Name)
	c := string(s.C())
	for _, want := range []string{
		"// Code generated",
		`"MPI_Recv",`,
		"MF_EXPORT int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status)",
		"return PMPI_Recv(buf, count, datatype, source, tag, comm, status);",
		"if (status == MPI_STATUS_IGNORE) {",
		".partner = mf_peer(mf_g, status->MPI_SOURCE)",
		"mf_ginfo *mf_g = mf_comm(*comm);",
		"uintptr_t mf_old = MF_H(*comm);",
		"mf_forget(MF_KIND_COMM, mf_old);",
		"const int mf_ncalls = 3;",
	} {
		assert.Contains(t, c, want)
	}
	g, err := s.Go()
	require.NoError(t, err)
	assert.Contains(t, string(g), `"MPI_Wtime": "clock"`)
	assert.Contains(t, string(s.Markdown()), "| MPI_Recv | `MF_CB(count,datatype)` |")
}
