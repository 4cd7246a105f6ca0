/*
 * status.c: completion calls on requests whose status the MPI fills with
 * anything (sends, persistent sends, collectives, files), with statuses
 * that hold a stale source, next to receives whose status names the
 * partner; and receives from MPI_ANY_SOURCE completed by calls that
 * complete several requests. Pairs of ranks (r, r^1); an even number of
 * ranks. Each case is a function of its own, so that the test finds its
 * nodes by the function of their call site. Prints "status: N ranks, E
 * errors".
 */
#include <mpi.h>
#include <stdio.h>
#pragma GCC diagnostic ignored "-Wstringop-overflow" /* MPICH's MPI_STATUSES_IGNORE */
#include <string.h>

#define N 60
static int rank, other, errors;
static int sbuf[N], rbuf[10 * N];

/* stale leaves the program's own rank as the status's source, as a status
 * reused from an earlier call might. */
static void stale(MPI_Status *st)
{
	memset(st, 0, sizeof *st);
	st->MPI_SOURCE = rank;
}

static void __attribute__((noinline)) wait_isend(void)
{
	MPI_Request r;
	MPI_Status st;
	stale(&st);
	MPI_Isend(sbuf, N, MPI_INT, other, 1, MPI_COMM_WORLD, &r);
	MPI_Recv(rbuf, N, MPI_INT, other, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Wait(&r, &st);
}

static void __attribute__((noinline)) wait_persistent_send(void)
{
	MPI_Request r;
	MPI_Status st;
	MPI_Send_init(sbuf, N, MPI_INT, other, 2, MPI_COMM_WORLD, &r);
	for (int i = 0; i < 3; i++) {
		stale(&st);
		MPI_Start(&r);
		MPI_Recv(rbuf, N, MPI_INT, other, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Wait(&r, i == 0 ? MPI_STATUS_IGNORE : &st);
	}
	MPI_Request_free(&r);
}

static void __attribute__((noinline)) wait_ibarrier(void)
{
	MPI_Request r;
	MPI_Status st;
	stale(&st);
	MPI_Ibarrier(MPI_COMM_WORLD, &r);
	MPI_Wait(&r, &st);
	int flag = 0;
	MPI_Ibarrier(MPI_COMM_WORLD, &r);
	while (!flag) {
		stale(&st);
		MPI_Test(&r, &flag, &st);
	}
}

static void __attribute__((noinline)) wait_file(const char *path)
{
	MPI_File fh;
	MPI_Request r;
	MPI_Status st;
	MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh);
	stale(&st);
	MPI_File_iwrite_at(fh, (MPI_Offset)rank * N * sizeof(int), sbuf, N, MPI_INT, &r);
	MPI_Wait(&r, &st);
	MPI_File_close(&fh);
}

static void __attribute__((noinline)) wait_irecv(void)
{
	MPI_Request r[2];
	MPI_Status st;
	int index;
	stale(&st);
	MPI_Irecv(rbuf, N, MPI_INT, other, 3, MPI_COMM_WORLD, &r[0]);
	MPI_Send(sbuf, N, MPI_INT, other, 3, MPI_COMM_WORLD);
	MPI_Wait(&r[0], &st);
	/* an empty message */
	MPI_Irecv(rbuf, 0, MPI_INT, other, 4, MPI_COMM_WORLD, &r[0]);
	MPI_Send(sbuf, 0, MPI_INT, other, 4, MPI_COMM_WORLD);
	MPI_Wait(&r[0], MPI_STATUS_IGNORE);
	/* Waitany over a send and a receive */
	MPI_Irecv(rbuf, N, MPI_INT, other, 5, MPI_COMM_WORLD, &r[0]);
	MPI_Isend(sbuf, N, MPI_INT, other, 5, MPI_COMM_WORLD, &r[1]);
	for (int k = 0; k < 2; k++) {
		stale(&st);
		MPI_Waitany(2, r, &index, &st);
	}
}

static void __attribute__((noinline)) wait_persistent_recv(void)
{
	MPI_Request r;
	MPI_Status st;
	MPI_Recv_init(rbuf, N, MPI_INT, other, 6, MPI_COMM_WORLD, &r);
	for (int i = 0; i < 3; i++) {
		stale(&st);
		MPI_Start(&r);
		MPI_Send(sbuf, N, MPI_INT, other, 6, MPI_COMM_WORLD);
		MPI_Wait(&r, &st);
		if (st.MPI_SOURCE != other)
			errors++;
	}
	MPI_Request_free(&r);
}

/* any_source posts receives from MPI_ANY_SOURCE and completes them with
 * Waitall, Waitsome, Testall and Testsome. */
static void __attribute__((noinline)) any_source(void)
{
	MPI_Request r[2];
	MPI_Status st[2];
	int n, idx[2], flag;
	for (int how = 0; how < 4; how++) {
		MPI_Irecv(rbuf, N, MPI_INT, MPI_ANY_SOURCE, 10 + how, MPI_COMM_WORLD, &r[0]);
		MPI_Irecv(rbuf + N, N, MPI_INT, MPI_ANY_SOURCE, 10 + how, MPI_COMM_WORLD, &r[1]);
		MPI_Send(sbuf, N / 2, MPI_INT, other, 10 + how, MPI_COMM_WORLD);
		MPI_Send(sbuf, N / 3, MPI_INT, other, 10 + how, MPI_COMM_WORLD);
		switch (how) {
		case 0:
			MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
			break;
		case 1:
			for (int done = 0; done < 2; done += n)
				MPI_Waitsome(2, r, &n, idx, st);
			break;
		case 2:
			for (flag = 0; !flag;)
				MPI_Testall(2, r, &flag, st);
			break;
		default:
			for (int done = 0; done < 2; done += n)
				MPI_Testsome(2, r, &n, idx, MPI_STATUSES_IGNORE);
		}
	}
}

#if MPI_VERSION >= 4
static void __attribute__((noinline)) wait_mpi4(void)
{
	MPI_Request r;
	MPI_Status st;
	stale(&st);
	MPI_Isend_c(sbuf, N, MPI_INT, other, 20, MPI_COMM_WORLD, &r);
	MPI_Recv(rbuf, N, MPI_INT, other, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Wait(&r, &st);
	/* partitioned: the even rank sends */
	if (rank % 2 == 0)
		MPI_Psend_init(sbuf, 2, N / 2, MPI_INT, other, 21, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
	else
		MPI_Precv_init(rbuf, 2, N / 2, MPI_INT, other, 21, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
	MPI_Start(&r);
	if (rank % 2 == 0) {
		MPI_Pready(0, r);
		MPI_Pready(1, r);
	}
	stale(&st);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	MPI_Request_free(&r);
}
#endif

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	other = rank ^ 1;
	char path[4096];
	snprintf(path, sizeof path, "%s.%d.tmp", argc > 1 ? argv[1] : "status", size);
	wait_isend();
	wait_persistent_send();
	wait_ibarrier();
	wait_file(path);
	wait_irecv();
	wait_persistent_recv();
	any_source();
#if MPI_VERSION >= 4
	wait_mpi4();
#endif
	int all = 0;
	MPI_Reduce(&errors, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("status: %d ranks, %d errors\n", size, all);
	MPI_Finalize();
	return 0;
}
