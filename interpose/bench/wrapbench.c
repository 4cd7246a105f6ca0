/* wrapbench: instructions each wrapper adds per call, for make
 * bench-wrappers. One process (a singleton MPI job) runs each test N times
 * through the MPI_ functions (which a preloaded libmpiflow intercepts) and
 * N times through the PMPI_ ones, each in a function of its own, so that
 * callgrind's inclusive counts of mpi_<test> and pmpi_<test> differ by what
 * the library adds (run.sh's ns are too noisy on a shared machine to
 * resolve a few instructions). The tests are calls of bench-overhead:
 * MPI_Comm_rank, MPI_Test and MPI_Testany on pending receives,
 * MPI_Allreduce of one double, each repeated from one call site, and
 * MPI_Irecv, MPI_Isend and MPI_Waitall of 8 bytes to itself in a loop
 * (no repeats: each call's record takes the general path; the count is
 * of the three), and split_waitall: the same with a MPI_Waitall for the
 * send, while the receive is in flight, and one for the receive (the
 * count is of the four).
 *
 * Usage: wrapbench N [TEST [WARM]]. Each test is first run through the
 * MPI_ functions, from functions of their own, for WARM seconds (default
 * 2): a recorder times all repeats until it has seen the thread keep its
 * processor for a while (recorder.h, MF_TIGHT_CLEAN), so the counts are
 * those of a long run's steady state, where 1 repeat in 16 is timed; with
 * WARM 0, those of the first calls, all timed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NPENDING 4
static MPI_Request pending[NPENDING];
static char pbuf[NPENDING];
static double x = 1, y;
static char sbuf[8], rbuf[8];
static int r, me, flag, idx, done;

#define TESTS(P, V)                                                                       \
	__attribute__((noinline)) static void V##mpi_comm_rank(int n)                  \
	{                                                                              \
		for (int i = 0; i < n; i++)                                            \
			P##MPI_Comm_rank(MPI_COMM_WORLD, &r);                          \
	}                                                                              \
	__attribute__((noinline)) static void V##mpi_test(int n)                       \
	{                                                                              \
		for (int i = 0; i < n; i++) {                                          \
			P##MPI_Test(&pending[0], &flag, MPI_STATUS_IGNORE);            \
			done |= flag;                                                  \
		}                                                                      \
	}                                                                              \
	__attribute__((noinline)) static void V##mpi_testany(int n)                    \
	{                                                                              \
		for (int i = 0; i < n; i++) {                                          \
			P##MPI_Testany(NPENDING, pending, &idx, &flag, MPI_STATUS_IGNORE); \
			done |= flag;                                                  \
		}                                                                      \
	}                                                                              \
	__attribute__((noinline)) static void V##mpi_allreduce(int n)                  \
	{                                                                              \
		for (int i = 0; i < n; i++)                                            \
			P##MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); \
	}                                                                              \
	__attribute__((noinline)) static void V##mpi_isend_irecv_waitall(int n)        \
	{                                                                              \
		MPI_Request rq[2];                                                     \
		for (int i = 0; i < n; i++) {                                          \
			P##MPI_Irecv(rbuf, 8, MPI_BYTE, me, 1, MPI_COMM_WORLD, &rq[0]); \
			P##MPI_Isend(sbuf, 8, MPI_BYTE, me, 1, MPI_COMM_WORLD, &rq[1]); \
			P##MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);                    \
		}                                                                      \
	}                                                                              \
	__attribute__((noinline)) static void V##mpi_split_waitall(int n)              \
	{                                                                              \
		MPI_Request rq[2];                                                     \
		for (int i = 0; i < n; i++) {                                          \
			P##MPI_Irecv(rbuf, 8, MPI_BYTE, me, 1, MPI_COMM_WORLD, &rq[0]); \
			P##MPI_Isend(sbuf, 8, MPI_BYTE, me, 1, MPI_COMM_WORLD, &rq[1]); \
			P##MPI_Waitall(1, &rq[1], MPI_STATUSES_IGNORE);                \
			P##MPI_Waitall(1, &rq[0], MPI_STATUSES_IGNORE);                \
		}                                                                      \
	}
TESTS(, )
TESTS(P, p)
TESTS(, warm_)

static const struct {
	const char *name;
	void (*mpi)(int), (*pmpi)(int), (*warm)(int);
} tests[] = {
	{"comm_rank", mpi_comm_rank, pmpi_comm_rank, warm_mpi_comm_rank},
	{"test", mpi_test, pmpi_test, warm_mpi_test},
	{"testany", mpi_testany, pmpi_testany, warm_mpi_testany},
	{"allreduce", mpi_allreduce, pmpi_allreduce, warm_mpi_allreduce},
	{"isend_irecv_waitall", mpi_isend_irecv_waitall, pmpi_isend_irecv_waitall, warm_mpi_isend_irecv_waitall},
	{"split_waitall", mpi_split_waitall, pmpi_split_waitall, warm_mpi_split_waitall},
};

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100000, rank, ran = 0;
	const char *only = argc > 2 ? argv[2] : NULL;
	const double warm = argc > 3 ? atof(argv[3]) : 2;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	me = rank;
	/* receives from ourselves that stay pending until the end */
	for (int k = 0; k < NPENDING; k++)
		MPI_Irecv(&pbuf[k], 1, MPI_BYTE, rank, 10 + k, MPI_COMM_WORLD, &pending[k]);
	for (size_t k = 0; k < sizeof tests / sizeof tests[0]; k++) {
		if (only && strcmp(only, tests[k].name))
			continue;
		for (double t0 = seconds(); seconds() - t0 < warm;)
			tests[k].warm(1000);
		tests[k].mpi(n);
		tests[k].pmpi(n);
		ran++;
	}
	for (int k = 0; k < NPENDING; k++) {
		char one = 1;
		MPI_Send(&one, 1, MPI_BYTE, rank, 10 + k, MPI_COMM_WORLD);
	}
	MPI_Waitall(NPENDING, pending, MPI_STATUSES_IGNORE);
	MPI_Finalize();
	if (done) {
		fprintf(stderr, "wrapbench: a pending request completed during a test\n");
		return 1;
	}
	if (!ran) {
		fprintf(stderr, "wrapbench: no test %s\n", only);
		return 2;
	}
	return 0;
}
