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
		"mf_record_rep(mf_r, mf_u, mf_t0, mf_t1, mf_bytes, mf_peer(mf_g, status->MPI_SOURCE), mf_g->size);",
		"mf_record_call(mf_r, 0, mf_peer(mf_g, status->MPI_SOURCE), mf_g->id, mf_g->size,",
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

func TestSinceGroup(t *testing.T) {
	spec := `## P2P
Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) | comm=comm bytes=MF_CB(count,datatype) peer=@dest
## MPI-4.0: large count | since=4.0
Send_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) | comm=comm bytes=MF_CB(count,datatype) peer=@dest
Pready(int partition, MPI_Request request)
## Later
Barrier(MPI_Comm comm) | comm=comm
Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request) | comm=comm since=4.1
`
	s, err := Parse(strings.NewReader(spec))
	require.NoError(t, err)
	require.Len(t, s.Funcs, 5)
	assert.Equal(t, []string{"", "4.0", "4.0", "", "4.1"}, []string{s.Funcs[0].Since, s.Funcs[1].Since, s.Funcs[2].Since, s.Funcs[3].Since, s.Funcs[4].Since})
	assert.Equal(t, "MPI-4.0: large count", s.Funcs[1].Group)
	c := string(s.C())
	// The name table is unconditional, the wrappers are not.
	names := strings.Index(c, `"MPI_Send",`+"\n\t"+`"MPI_Send_c",`+"\n\t"+`"MPI_Pready",`+"\n\t"+`"MPI_Barrier",`+"\n\t"+`"MPI_Barrier_init",`)
	require.Positive(t, names)
	assert.Contains(t, c, "const int mf_ncalls = 5;")
	open4, close4 := strings.Index(c, "#if MPI_VERSION >= 4\n"), strings.Index(c, "#endif /* MPI 4.0 */")
	require.Greater(t, open4, names)
	require.Greater(t, close4, open4)
	for _, f := range []string{"MF_EXPORT int MPI_Send_c(", "MF_EXPORT int MPI_Pready("} {
		i := strings.Index(c, f)
		assert.True(t, i > open4 && i < close4, "%s inside #if", f)
	}
	assert.Less(t, strings.Index(c, "MF_EXPORT int MPI_Send("), open4)
	b := strings.Index(c, "MF_EXPORT int MPI_Barrier(")
	assert.True(t, b > close4, "MPI-3.1 group after the MPI-4.0 one is not conditional")
	assert.Contains(t, c, "#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)\n")
	// Call numbers follow the spec in every build.
	assert.Contains(t, c, "mf_record_call(mf_r, 1, ")
	// The Fortran entry points of the newer functions are as conditional
	// (C, mpif.h, mpi_f08: 2 blocks each), large counts only in mpi_f08
	// and only where mf_mpi.h names them (MF_F08L).
	assert.Equal(t, 6, strings.Count(c, "#if "))
	assert.Equal(t, strings.Count(c, "#if ")+strings.Count(c, "#ifdef "), strings.Count(c, "#endif"))
	f77, f08, ok := strings.Cut(c[strings.Index(c, "/* ---- Fortran entry points"):], "/* ---- Fortran 2008 entry points")
	require.True(t, ok)
	for _, fc := range []struct{ code, entry string }{{f77, "MF_EXPORT void mpi_pready_("}, {f08, "MF_EXPORT void mpi_pready_f08_("}, {f08, "MF_EXPORT void MF_F08L(mpi_send)("}} {
		i, open := strings.Index(fc.code, fc.entry), strings.Index(fc.code, "#if MPI_VERSION >= 4\n")
		require.Positive(t, i, fc.entry)
		assert.True(t, open >= 0 && open < i && i < strings.Index(fc.code, "#endif /* MPI 4.0 */"), "%s inside #if", fc.entry)
	}
	assert.Contains(t, f08, "#ifdef MF_F08L\nMF_EXPORT void MF_F08L(mpi_send)(mf_f08buf *buf, MPI_Count *count,")
	assert.Contains(t, f08, "if (!mf_f08_next((void **)&mf_real, MF_F08L_STR(mpi_send), mf_ierror))")
	assert.Contains(t, f08, "int mf_rc = mf_Send_c(mf_site, mf_f08_addr(buf), *count,")
	assert.Contains(t, f77, "mpi_send_(")
	assert.NotContains(t, f77, "mpi_send_c", "no large counts in mpif.h")
	assert.Less(t, strings.Index(f77, "MF_EXPORT void mpi_barrier_("), strings.Index(f77, "#if MPI_VERSION > 4"))
	assert.Contains(t, f77, "MF_EXPORT void mpi_barrier_init_(")
	g, err := s.Go()
	require.NoError(t, err)
	assert.Regexp(t, `"MPI_Send_c":\s+"4.0"`, string(g))
	assert.Regexp(t, `"MPI_Barrier_init":\s+"4.1"`, string(g))
	assert.NotContains(t, string(g), `"MPI_Send": "`)
	md := string(s.Markdown())
	assert.Contains(t, md, "### MPI-4.0: large count\n")
	assert.Contains(t, md, "### Later\n")
	assert.Contains(t, md, "(2 of MPI-3.1, 2 added by\nMPI-4.0, 1 added by MPI-4.1)")
	assert.Contains(t, md, "datatype-array or address arguments): . ", "none of MPI-3.1 without one")
	assert.Contains(t, md, "recording the same way: MPI_Pready, MPI_Barrier_init; large\ncount: MPI_Send_c.")
}

func TestSinceErrors(t *testing.T) {
	for _, spec := range []string{"## G | since=4\nSend(int a)\n", "## G | colour=red\n", "Send(int a) | since=four\n"} {
		_, err := Parse(strings.NewReader(spec))
		require.Error(t, err, spec)
		assert.Contains(t, err.Error(), "since=MAJOR.MINOR")
	}
}

// TestReceivedSizeDirectives: a receive with recv= is remembered, the
// completion calls with recvd= correct it from the status (theirs, or ours
// in place of MPI_STATUSES_IGNORE) and a call that makes another request
// forgets its handle.
func TestReceivedSizeDirectives(t *testing.T) {
	spec := `## P2P
Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request) | comm=comm bytes=MF_CB(count,datatype) recv=*request
Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request) | comm=comm bytes=MF_CB(count,datatype)
Wait(MPI_Request *request, MPI_Status *status) | status=status req=*request recvd=status
Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]) | reqs=count,array_of_requests recvall=array_of_statuses
Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[]) | reqs=count,array_of_requests recvd=array_of_statuses
Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status) | status=status reqs=count,array_of_requests recvd=status,index
Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[], MPI_Status array_of_statuses[]) | reqs=incount,array_of_requests recvd=array_of_statuses,array_of_indices,outcount
Cancel(MPI_Request *request)
`
	s, err := Parse(strings.NewReader(spec))
	require.NoError(t, err)
	c := string(s.C())
	body := func(name string) string {
		start := strings.Index(c, "int mf_"+name+"(")
		require.GreaterOrEqual(t, start, 0, name)
		end := strings.Index(c[start:], "\n}\n")
		return c[start : start+end]
	}
	assert.Contains(t, body("Irecv"), "mf_recv_track(mf_r, MF_H(*request), mf_bytes, NULL);")
	assert.Contains(t, body("Isend"), "if (mf_tls_recvs.n && mf_recv_shared && mf_rc == MPI_SUCCESS)\n\t\tmf_recv_forget(MF_H(*request));",
		"only where another thread may have completed a receive of the handle")
	assert.NotContains(t, body("Cancel"), "mf_recv_forget", "works on a request, makes none")
	assert.Contains(t, body("Wait"), "mf_recv_done(mf_r, mf_rh, mf_rc == MPI_SUCCESS ? status : NULL);")
	assert.Contains(t, body("Waitall"), "if (mf_recvs_take(&mf_tk, count, array_of_requests) && array_of_statuses == MPI_STATUSES_IGNORE && (mf_sts = mf_statuses(count, mf_stbuf)))",
		"statuses of ours only for an array that holds a receive in flight")
	assert.Contains(t, body("Waitall"), "mf_saved = mf_nreq ? mf_reqs_save(", "no copy of the handles for the receives")
	assert.Contains(t, body("Waitall"), "mf_recvs_got(mf_r, &mf_tk, array_of_requests, array_of_statuses, mf_rc);")
	assert.Contains(t, body("Testall"), "mf_recvs_all(mf_r, count, mf_saved, array_of_requests, mf_rc == MPI_SUCCESS ? array_of_statuses : NULL);",
		"a poll that completes nothing looks nothing up")
	assert.Contains(t, body("Waitany"), "mf_recvs_done(mf_r, count, mf_saved, array_of_requests, mf_rc == MPI_SUCCESS ? status : NULL, index, 1);")
	assert.NotContains(t, body("Waitany"), "mf_statuses(", "one status, which status= provides")
	assert.Contains(t, body("Waitsome"), "array_of_indices, *outcount);")
	assert.Contains(t, body("Waitsome"), "mf_statuses(incount, mf_stbuf)")
}

// TestF08Entries: the use mpi_f08 entry points decode choice buffers
// (MPICH's descriptors), an optional ierror and the module's sentinels,
// and exist for the functions with mpif.h ones (and their large-count
// forms).
func TestF08Entries(t *testing.T) {
	spec := `## P2P
Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) | comm=comm bytes=MF_CB(count,datatype) peer=@dest
Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status) | comm=comm status=status bytes=MF_CB(count,datatype) peer=@status->MPI_SOURCE
Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
Comm_rank(MPI_Comm comm, int *rank) | comm=comm
File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh) | comm=comm
Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[], int outdegree, const int destinations[], const int destweights[], MPI_Info info, int reorder, MPI_Comm *comm_dist_graph) | comm=comm_old
## MPI-4.0 | since=4.0
Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request *request) | comm=comm
`
	s, err := Parse(strings.NewReader(spec))
	require.NoError(t, err)
	c := string(s.C())
	i08 := strings.Index(c, "/* ---- Fortran 2008 entry points")
	f77, f08 := c[:i08], c[i08:]
	// MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are variables in Fortran.
	assert.Contains(t, f77, "(int *)sources, mf_fweights(sourceweights), (int)*outdegree, (int *)destinations, mf_fweights(destweights),")
	assert.Contains(t, f08, "(int *)sources, mf_f08weights(sourceweights), (int)*outdegree, (int *)destinations, mf_f08weights(destweights),")
	for _, want := range []string{
		// A choice buffer: the MPI's suffix, its descriptor or address.
		"MF_EXPORT void MF_F08B(mpi_send)(mf_f08buf *buf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *dest, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *mf_ierror)\n{\n" +
			"\tuint64_t mf_site = (uint64_t)(uintptr_t)__builtin_return_address(0);\n" +
			"\tif (__builtin_expect(!mf_f08_contig(buf), 0)) {\n",
		"if (!mf_f08_next((void **)&mf_real, MF_F08B_STR(mpi_send), mf_ierror))\n\t\t\tmf_real(buf, count, datatype, dest, tag, comm, mf_ierror);\n\t\treturn;\n",
		"int mf_rc = mf_Send(mf_site, mf_f08_addr(buf), (int)*count, PMPI_Type_f2c(*datatype), (int)*dest, (int)*tag, PMPI_Comm_f2c(*comm));",
		// ierror is optional.
		"\tMPI_Fint mf_ierr_absent, *ierr = mf_ierror ? mf_ierror : &mf_ierr_absent;\n",
		// The module's sentinels.
		"mf_f08status_ignore(status) ? MPI_STATUS_IGNORE",
		"mf_f08statuses_ignore(array_of_statuses) ? MPI_STATUSES_IGNORE",
		// No buffer: the same name in both MPIs, and no fallback.
		"MF_EXPORT void mpi_comm_rank_f08_(MPI_Fint *comm, MPI_Fint *rank, MPI_Fint *mf_ierror)\n{\n\tuint64_t mf_site = (uint64_t)(uintptr_t)__builtin_return_address(0);\n\tMPI_Fint mf_ierr_absent",
		"MF_EXPORT void mpi_waitall_f08_(",
	} {
		assert.Contains(t, f08, want)
	}
	assert.Equal(t, 6, strings.Count(f08, "*ierr = mf_rc;"), "Send, Recv, Waitall, Comm_rank, Dist_graph_create_adjacent, Isendrecv: one store each")
	assert.Equal(t, 3, strings.Count(f08, "MF_EXPORT void MF_F08B("), "Send, Recv, Isendrecv")
	assert.NotContains(t, f08, "mf_fbuf(", "not mpif.h's sentinels")
	assert.NotContains(t, f08, "mpi_file_open", "no string arguments")
	assert.Contains(t, f08, "#if MPI_VERSION >= 4\n\nMF_EXPORT void MF_F08B(mpi_isendrecv)(mf_f08buf *sendbuf,", "MPI-4.0 functions where mpi.h has them")
	md := string(s.Markdown())
	assert.Contains(t, md, "The same 5 have `use mpi_f08` entry points")
	assert.Contains(t, md, "Of the functions newer than MPI-3.1, 1 have both kinds of entry point, and 0 of\nthe")
}

// TestQuickEntries: the calls whose record is known from their arguments
// and that need nothing done after them get a C entry that counts an
// untimed repeat and tail-calls the PMPI function; the others do not.
func TestQuickEntries(t *testing.T) {
	spec := `Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) | comm=comm bytes=MF_CB(count,datatype)
Comm_rank(MPI_Comm comm, int *rank) | comm=comm
Win_fence(int assert, MPI_Win win) | win=win
Pready(int partition, MPI_Request request)
Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) | comm=comm bytes=MF_CB(count,datatype) peer=@dest
Test(MPI_Request *request, int *flag, MPI_Status *status) | status=status req=*request peer=(*flag?mf_speer(mf_rg,status):-1) recvd=status
Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request) | comm=comm bytes=MF_CB(count,datatype)
Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) | comm=comm bytes=MF_CB(recvcount,recvtype)*MF_N(mf_g)
Comm_free(MPI_Comm *comm) | comm=*comm forget=comm:*comm
Abort(MPI_Comm comm, int errorcode) | comm=comm
`
	s, err := Parse(strings.NewReader(spec))
	require.NoError(t, err)
	want := map[string]string{"Allreduce": "MF_H(comm)", "Comm_rank": "MF_H(comm)", "Win_fence": "MF_H(win)", "Pready": "0"}
	for _, f := range s.Funcs {
		assert.Equal(t, want[f.Name], f.quickHandle(), f.Name)
	}
	c := string(s.C())
	for _, w := range []string{
		"static __attribute__((noinline)) int mf_Allreduce(uint64_t mf_site,",
		"if (mf_r && mf_rep_quick(mf_r, 0, mf_site, MF_H(comm))) {",
		"const int64_t mf_bytes = MF_CBK(&mf_miss, count,datatype);",
		"if (!mf_miss && mf_rep_count(mf_r, mf_bytes))\n\t\t\treturn PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);\n\t}\n" +
			"\treturn mf_Allreduce(mf_site, sendbuf, recvbuf, count, datatype, op, comm);",
		"mf_r->rep_handle = MF_H(comm);\n\treturn mf_rc;",
		"if (mf_rep_count(mf_r, 0))\n\t\t\treturn PMPI_Pready(partition, request);",
		"static inline __attribute__((always_inline)) int mf_Send(uint64_t mf_site,",
		"return mf_Send((uint64_t)(uintptr_t)__builtin_return_address(0), buf,",
	} {
		assert.Contains(t, c, w)
	}
	assert.Equal(t, 4, strings.Count(c, "mf_rep_quick("), "only the four quick calls")
}
