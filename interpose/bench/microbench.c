/* microbench: time per MPI call for the overhead benchmark (make
 * bench-overhead). Run with 2 ranks: microbench ITERS MINWRAP.so. Each test
 * runs in BLOCKS blocks that cycle, in a changing order, through three
 * ways to call the same functions: the MPI_ ones (which a preloaded
 * library intercepts), the PMPI_ ones (which it does not) and the MPI_
 * ones of the minimal wrapper MINWRAP.so, opened with dlopen(RTLD_LOCAL)
 * so that it intercepts nothing else. The differences to PMPI_ are what
 * each library adds, measured side by side within the same process and
 * the same few milliseconds: a shared machine's speed changes between
 * runs (2-core virtual machines here run ping-pong 3x faster now and
 * then) but hardly between neighboring blocks.
 *
 * Rank 0 prints, one a line:
 *   tests NAME...             the tests, first, so that a missing row shows
 *   sym MPI_X OBJ PMPI_OBJ    for each function the tests call, the object
 *                             the MPI_ and the PMPI_ name resolve to, so the
 *                             caller can check what intercepted them
 *   row NAME MPI_NS PMPI_NS MINWRAP_NS
 *                             per test, ns per call, the medians over its
 *                             blocks
 * and it ends the job (MPI_Abort) when a pending request completes during
 * its test. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BLOCKS 60 /* a multiple of 3: as many blocks of each kind */

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

/* The pending requests of test_pending (MPI_Test on the first) and
 * testany_pending (MPI_Testany on all): receives from the peer, which
 * sends only after both ranks have timed the test. */
#define NPENDING 4
#define TAG_PENDING 10
static MPI_Request pending[NPENDING];
static char pbuf[NPENDING];

/* The call sites of the comm_rank_16sites tests: one MPI_Comm_rank per
 * case of a switch, each with its own return address (the ranks[k] keep
 * the compiler from merging the cases), called in the order order[0..norder)
 * that setup sets at run time, so that the compiler cannot unroll it. */
#define NSITES 16
static int ranks[NSITES], order[2 * NSITES], norder;
#define SITE(P, k)                                          \
	case k:                                             \
		P##MPI_Comm_rank(MPI_COMM_WORLD, &ranks[k]); \
		break;
#define SITES(P)                                                                        \
	SITE(P, 0) SITE(P, 1) SITE(P, 2) SITE(P, 3) SITE(P, 4) SITE(P, 5) SITE(P, 6) SITE(P, 7) \
	SITE(P, 8) SITE(P, 9) SITE(P, 10) SITE(P, 11) SITE(P, 12) SITE(P, 13) SITE(P, 14) SITE(P, 15)

/* The minimal wrapper's functions (dlsym of MINWRAP.so), called as
 * mw_MPI_X. */
#define MW(f) static __typeof__(PMPI_##f) *mw_MPI_##f;
MW(Comm_rank) MW(Test) MW(Testany) MW(Send) MW(Recv) MW(Isend) MW(Irecv) MW(Waitall) MW(Allreduce)

/* TESTS(P, V) defines the tests <name>_V, each running m iterations
 * through the P##MPI_ functions (P empty, P or mw_) and returning the
 * number of calls per iteration, or -1 when a pending request
 * completed. */
#define TESTS(P, V)                                                                                  \
	static int comm_rank_##V(int m)                                                             \
	{                                                                                           \
		for (int i = 0; i < m; i++)                                                         \
			P##MPI_Comm_rank(MPI_COMM_WORLD, &r);                                       \
		return 1;                                                                           \
	}                                                                                           \
	static int sites_##V(int m)                                                                 \
	{                                                                                           \
		for (int i = 0; i < m; i++)                                                         \
			for (int j = 0; j < norder; j++)                                            \
				switch (order[j]) {                                                 \
					SITES(P)                                                    \
				}                                                                   \
		return norder;                                                                      \
	}                                                                                           \
	static int test_pending_##V(int m)                                                          \
	{                                                                                           \
		int flag, done = 0;                                                                 \
		for (int i = 0; i < m; i++) {                                                       \
			P##MPI_Test(&pending[0], &flag, MPI_STATUS_IGNORE);                         \
			done |= flag;                                                               \
		}                                                                                   \
		return done ? -1 : 1;                                                               \
	}                                                                                           \
	static int testany_pending_##V(int m)                                                       \
	{                                                                                           \
		int flag, index, done = 0;                                                          \
		for (int i = 0; i < m; i++) {                                                       \
			P##MPI_Testany(NPENDING, pending, &index, &flag, MPI_STATUS_IGNORE);        \
			done |= flag;                                                               \
		}                                                                                   \
		return done ? -1 : 1;                                                               \
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
TESTS(mw_, mw)

/* The functions the tests call through MPI_ (the setups too). */
static const char *const called[] = {
	"Comm_rank", "Test", "Testany", "Send", "Recv", "Isend", "Irecv", "Waitall", "Allreduce",
};

/* Setups and teardowns, outside the timing. */
static void sites_in_order(void) /* successor cache hits: each site has one successor */
{
	for (int k = 0; k < NSITES; k++)
		order[k] = k;
	norder = NSITES;
}

static void sites_zigzag(void) /* 0..15 then 15..0: every site's successor changes */
{
	for (int k = 0; k < NSITES; k++) {
		order[k] = k;
		order[2 * NSITES - 1 - k] = k;
	}
	norder = 2 * NSITES;
}

static void pending_post(void)
{
	for (int k = 0; k < NPENDING; k++)
		MPI_Irecv(&pbuf[k], 1, MPI_BYTE, peer, TAG_PENDING + k, MPI_COMM_WORLD, &pending[k]);
}

static void pending_complete(void)
{
	MPI_Request s[NPENDING];
	char one = 1;
	PMPI_Barrier(MPI_COMM_WORLD); /* the peer has timed the test too */
	for (int k = 0; k < NPENDING; k++)
		MPI_Isend(&one, 1, MPI_BYTE, peer, TAG_PENDING + k, MPI_COMM_WORLD, &s[k]);
	MPI_Waitall(NPENDING, pending, MPI_STATUSES_IGNORE);
	MPI_Waitall(NPENDING, s, MPI_STATUSES_IGNORE);
}

struct test {
	const char *name;
	int (*wrapped)(int), (*pmpi)(int), (*mw)(int);
	int div; /* iterations per block: n / BLOCKS / div */
	void (*setup)(void), (*teardown)(void);
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

/* load_minwrap opens the minimal wrapper at path and finds its
 * functions, or says why it cannot. */
static int load_minwrap(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "microbench: %s\n", dlerror());
		return -1;
	}
#define MWLOAD(f)                                                                       \
	if (!(*(void **)&mw_MPI_##f = dlsym(h, "MPI_" #f))) {                            \
		fprintf(stderr, "microbench: %s has no MPI_%s\n", path, #f);              \
		return -1;                                                              \
	}
	MWLOAD(Comm_rank) MWLOAD(Test) MWLOAD(Testany) MWLOAD(Send) MWLOAD(Recv) MWLOAD(Isend) MWLOAD(Irecv)
	MWLOAD(Waitall) MWLOAD(Allreduce)
	return 0;
}

static void completed(const char *test)
{
	fprintf(stderr, "microbench: rank %d: %s: a pending request completed during the test\n", rank, test);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: microbench ITERS MINWRAP.so\n");
		return 2;
	}
	int n = atoi(argv[1]), size;
	if (load_minwrap(argv[2]))
		return 1;
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
		{"comm_rank", comm_rank_mpi, comm_rank_pmpi, comm_rank_mw, 1, NULL, NULL},
		{"comm_rank_16sites", sites_mpi, sites_pmpi, sites_mw, NSITES, sites_in_order, NULL},
		{"comm_rank_16sites_zigzag", sites_mpi, sites_pmpi, sites_mw, 2 * NSITES, sites_zigzag, NULL},
		{"test_pending", test_pending_mpi, test_pending_pmpi, test_pending_mw, 1, pending_post, pending_complete},
		{"testany_pending", testany_pending_mpi, testany_pending_pmpi, testany_pending_mw, 1, pending_post, pending_complete},
		{"pingpong", pingpong_mpi, pingpong_pmpi, pingpong_mw, 10, NULL, NULL},
		{"isend_irecv_waitall", isend_irecv_waitall_mpi, isend_irecv_waitall_pmpi, isend_irecv_waitall_mw, 10, NULL, NULL},
		{"allreduce", allreduce_mpi, allreduce_pmpi, allreduce_mw, 10, NULL, NULL},
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
		double t_[3][BLOCKS / 3];
		int (*run[3])(int) = {tt->wrapped, tt->pmpi, tt->mw};
		if (tt->setup)
			tt->setup();
		/* warm up all paths for 50 ms at least (the ranks agree when to
		 * stop), as a long run would: a profiler may adapt (mpiflow
		 * times fast repeats only in part after 16 ms of the thread
		 * running without a break) */
		double t0 = now();
		for (int done = 0; !done;) {
			for (int k = 0; k < 3; k++)
				if (run[k](m) < 0)
					completed(tt->name);
			int mine = now() - t0 >= 0.05;
			PMPI_Allreduce(&mine, &done, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
		}
		/* each round of three blocks in one of the six orders, so that
		 * no way always follows the same one */
		static const int order3[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
		for (int b = 0; b < BLOCKS; b++) {
			int kind = order3[b / 3 % 6][b % 3];
			PMPI_Barrier(MPI_COMM_WORLD);
			double t = now();
			int calls = run[kind](m);
			double ns = (now() - t) * 1e9 / ((double)m * calls);
			if (calls < 0)
				completed(tt->name);
			t_[kind][b / 3] = ns;
		}
		if (tt->teardown)
			tt->teardown();
		if (rank == 0) {
			printf("row %s %.1f %.1f %.1f\n", tt->name, median(t_[0], BLOCKS / 3), median(t_[1], BLOCKS / 3),
			       median(t_[2], BLOCKS / 3));
			fflush(stdout);
		}
	}
	MPI_Finalize();
	return 0;
}
