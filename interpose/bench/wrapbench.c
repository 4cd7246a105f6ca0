/* wrapbench: instructions each wrapper adds per call, for make
 * bench-wrappers. One process (a singleton MPI job) runs each test N times
 * through the MPI_ functions (which a preloaded libmpiflow intercepts) and
 * N times through the PMPI_ ones, each in a function of its own, so that
 * callgrind's inclusive counts of mpi_<test> and pmpi_<test> differ by what
 * the library adds (run.sh's ns are too noisy on a shared machine to
 * resolve a few instructions). The tests are the repeated calls of
 * bench-overhead: MPI_Comm_rank, MPI_Test and MPI_Testany on pending
 * receives, MPI_Allreduce of one double, each from one call site. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPENDING 4
static MPI_Request pending[NPENDING];
static char pbuf[NPENDING];
static double x = 1, y;
static int r, flag, idx, done;

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
	}
TESTS(, )
TESTS(P, p)

static const struct {
	const char *name;
	void (*mpi)(int), (*pmpi)(int);
} tests[] = {
	{"comm_rank", mpi_comm_rank, pmpi_comm_rank},
	{"test", mpi_test, pmpi_test},
	{"testany", mpi_testany, pmpi_testany},
	{"allreduce", mpi_allreduce, pmpi_allreduce},
};

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100000, rank, ran = 0;
	const char *only = argc > 2 ? argv[2] : NULL;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	/* receives from ourselves that stay pending until the end */
	for (int k = 0; k < NPENDING; k++)
		MPI_Irecv(&pbuf[k], 1, MPI_BYTE, rank, 10 + k, MPI_COMM_WORLD, &pending[k]);
	for (size_t k = 0; k < sizeof tests / sizeof tests[0]; k++) {
		if (only && strcmp(only, tests[k].name))
			continue;
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
