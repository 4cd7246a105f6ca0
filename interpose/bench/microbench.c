/* microbench: time per MPI call for the overhead benchmark (make
 * bench-overhead). Run with 2 ranks. Each test runs in BLOCKS blocks that
 * alternate between the MPI_ functions (which a preloaded library
 * intercepts) and the PMPI_ ones (which it does not), so the difference is
 * what the library adds, measured within the same process and the same few
 * milliseconds: a shared machine's speed changes between runs (2-core
 * virtual machines here run ping-pong 3x faster now and then) but hardly
 * between neighboring blocks.
 *
 * Rank 0 prints, one a line:
 *   tests NAME...             the tests, first, so that a missing row shows
 *   sym MPI_X OBJ PMPI_OBJ    for each function the tests call, the object
 *                             the MPI_ and the PMPI_ name resolve to, so the
 *                             caller can check what intercepted them
 *   row NAME MPI_NS PMPI_NS   per test, ns per call, the medians over its
 *                             blocks */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BLOCKS 40 /* even: as many blocks of each kind */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int rank, peer, r;
static char buf[8], rbuf[8];
static double x = 1, y;

/* TESTS(P, V) defines the tests <name>_V, each running m iterations
 * through the P##MPI_ functions (P empty or P) and returning the number of
 * calls per iteration. */
#define TESTS(P, V)                                                                                  \
	static int comm_rank_##V(int m)                                                             \
	{                                                                                           \
		for (int i = 0; i < m; i++)                                                         \
			P##MPI_Comm_rank(MPI_COMM_WORLD, &r);                                       \
		return 1;                                                                           \
	}                                                                                           \
	static int pingpong_##V(int m)                                                              \
	{                                                                                           \
		for (int i = 0; i < m; i++) {                                                       \
			if (rank == 0) {                                                            \
				P##MPI_Send(buf, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD);             \
				P##MPI_Recv(buf, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); \
			} else {                                                                    \
				P##MPI_Recv(buf, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); \
				P##MPI_Send(buf, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD);             \
			}                                                                           \
		}                                                                                   \
		return 2;                                                                           \
	}                                                                                           \
	static int isend_irecv_waitall_##V(int m)                                                   \
	{                                                                                           \
		MPI_Request rq[2];                                                                  \
		for (int i = 0; i < m; i++) {                                                       \
			P##MPI_Irecv(rbuf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &rq[0]);           \
			P##MPI_Isend(buf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &rq[1]);            \
			P##MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);                                 \
		}                                                                                   \
		return 3;                                                                           \
	}                                                                                           \
	static int allreduce_##V(int m)                                                             \
	{                                                                                           \
		for (int i = 0; i < m; i++)                                                         \
			P##MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);           \
		return 1;                                                                           \
	}
TESTS(, mpi)
TESTS(P, pmpi)

/* The functions the tests call through MPI_. */
static const char *const called[] = {
	"Comm_rank", "Send", "Recv", "Isend", "Irecv", "Waitall", "Allreduce",
};

struct test {
	const char *name;
	int (*wrapped)(int), (*pmpi)(int);
	int div; /* iterations per block: n / BLOCKS / div */
};

/* object writes to out (PATH_MAX bytes) the path of the object that
 * defines name, or "none". */
static void object(const char *name, char *out)
{
	void *f = dlsym(RTLD_DEFAULT, name);
	Dl_info info;
	if (!f || !dladdr(f, &info) || !info.dli_fname || !realpath(info.dli_fname, out))
		snprintf(out, PATH_MAX, "none");
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100000, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "microbench: run with 2 ranks\n");
		MPI_Finalize();
		return 1;
	}
	peer = 1 - rank;
	struct test tests[] = {
		{"comm_rank", comm_rank_mpi, comm_rank_pmpi, 1},
		{"pingpong", pingpong_mpi, pingpong_pmpi, 10},
		{"isend_irecv_waitall", isend_irecv_waitall_mpi, isend_irecv_waitall_pmpi, 10},
		{"allreduce", allreduce_mpi, allreduce_pmpi, 10},
	};
	const size_t ntests = sizeof tests / sizeof tests[0];
	if (rank == 0) {
		printf("tests");
		for (size_t k = 0; k < ntests; k++)
			printf(" %s", tests[k].name);
		printf("\n");
		for (size_t k = 0; k < sizeof called / sizeof called[0]; k++) {
			char name[64], mobj[PATH_MAX], pobj[PATH_MAX];
			snprintf(name, sizeof name, "MPI_%s", called[k]);
			object(name, mobj);
			snprintf(name, sizeof name, "PMPI_%s", called[k]);
			object(name, pobj);
			printf("sym MPI_%s %s %s\n", called[k], mobj, pobj);
		}
		fflush(stdout);
	}
	for (size_t k = 0; k < ntests; k++) {
		struct test *tt = &tests[k];
		int m = n / BLOCKS / tt->div;
		if (m < 1)
			m = 1;
		double w[BLOCKS / 2], p[BLOCKS / 2];
		tt->wrapped(m); /* warm up both paths */
		tt->pmpi(m);
		for (int b = 0; b < BLOCKS; b++) {
			int wrapped = b % 2 == 0;
			PMPI_Barrier(MPI_COMM_WORLD);
			double t = now();
			int calls = wrapped ? tt->wrapped(m) : tt->pmpi(m);
			double ns = (now() - t) * 1e9 / ((double)m * calls);
			if (wrapped)
				w[b / 2] = ns;
			else
				p[b / 2] = ns;
		}
		if (rank == 0) {
			printf("row %s %.1f %.1f\n", tt->name, median(w, BLOCKS / 2), median(p, BLOCKS / 2));
			fflush(stdout);
		}
	}
	MPI_Finalize();
	return 0;
}
