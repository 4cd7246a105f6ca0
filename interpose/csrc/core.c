/*
 * core.c: start and end of recording, the handle caches, and the MPI
 * helpers that the Go part calls at MPI_Finalize (see mpiflow.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "mf_mpi.h"
#include "mpiflow.h"
#include "partial.h"

__thread mf_rec *mf_tls_rec __attribute__((tls_model("initial-exec")));
mf_ginfo mf_world_info = {.id = 0, .identity = 1, .outdeg = -1};
mf_ginfo mf_null_info = {.id = -1, .identity = 1, .outdeg = -1};

/* One recording thread: its recorder and full trace. */
typedef struct mf_thr {
	mf_rec rec;
	int index; /* 0: the thread that initialized MPI */
	uint8_t *ckpt_buf; /* output buffer of its checkpoints */
	int64_t ckpt_gap;  /* ns to the next checkpoint: 1 s, doubling up to G.ckpt_every */
	int ckpt_written;  /* a checkpoint file of this thread exists */
	char trace_tmp[PATH_MAX];
	int trace_err;
} mf_thr;

/* Process-wide state. Under MPI_THREAD_SERIALIZED or MULTIPLE every
 * thread that calls MPI gets its own recorder (mf_thread_rec); the handle
 * caches and request table are then shared under mu, off the hot path of
 * MPI_COMM_WORLD. */
static struct {
	mf_thr main;
	mf_thr **thr; /* all recording threads, thr[0] == &main */
	int nthr, capthr;
	int threads; /* more than one thread may call MPI */
	pthread_mutex_t mu;
	uint32_t keyflags;
	int64_t timing_bytes;  /* timing budget per graph, MPIFLOW_TIMING */
	int64_t max_intervals; /* most timing intervals per graph, MPIFLOW_ANCHORS; 0: no limit */
	int64_t ckpt_every; /* ns between checkpoints, MPIFLOW_CHECKPOINT; 0: none */
	int trace;
	int active;
	int rank, size;
	int64_t init_mono, init_real;
	/* handle caches: small arrays, most recent first lookups */
	mf_ginfo **cache;
	int ncache, capcache;
	int next_id;
	mf_ginfo *last[MF_NKINDS];
	/* facts of freed handles: pending requests may still point to them */
	mf_ginfo **retired;
	int nretired, capretired;
	/* tracked requests (see mf_req_track), most recent last */
	struct mf_req {
		uintptr_t h;
		mf_ginfo *g;
	} * reqs;
	int capreqs;
} G = {.mu = PTHREAD_MUTEX_INITIALIZER};

int mf_nreq;

mf_fsentinels mf_fsent;

void mf_fsent_init(void)
{
	mf_fsentinels f = {.ready = 1};
#if defined(OPEN_MPI)
	f.bottom = dlsym(RTLD_DEFAULT, "mpi_fortran_bottom_");
	f.in_place = dlsym(RTLD_DEFAULT, "mpi_fortran_in_place_");
	f.status_ignore = dlsym(RTLD_DEFAULT, "mpi_fortran_status_ignore_");
	f.statuses_ignore = dlsym(RTLD_DEFAULT, "mpi_fortran_statuses_ignore_");
#else
	/* MPICH: COMMON /MPIPRIV1/ MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE
	 * and /MPIPRIV2/ MPI_STATUSES_IGNORE, MPI_ERRCODES_IGNORE (mpif.h). */
	const MPI_Fint *p1 = dlsym(RTLD_DEFAULT, "mpipriv1_");
	const MPI_Fint *p2 = dlsym(RTLD_DEFAULT, "mpipriv2_");
	if (p1) {
		f.bottom = p1;
		f.in_place = p1 + 1;
		f.status_ignore = p1 + 2;
	}
	f.statuses_ignore = p2;
#endif
	mf_fsent.bottom = f.bottom;
	mf_fsent.in_place = f.in_place;
	mf_fsent.status_ignore = f.status_ignore;
	mf_fsent.statuses_ignore = f.statuses_ignore;
	__atomic_store_n(&mf_fsent.ready, 1, __ATOMIC_RELEASE);
}

MPI_Status *mf_fstatuses(int n)
{
	MPI_Status *s = malloc(sizeof(MPI_Status) * (size_t)(n > 0 ? n : 1));
	return s ? s : MPI_STATUSES_IGNORE;
}

MPI_Request *mf_freqs(int n) { return malloc(sizeof(MPI_Request) * (size_t)(n > 0 ? n : 1)); }

void mf_ffree(void *p) { free(p); }

/* Hardware counters (MPIFLOW_PAPI), read through a dlopen()ed libpapi so
 * that the library works where PAPI is absent. */
static struct {
	int (*read)(int eventset, long long *values);
	int eventset;
	int n;
	char names[512]; /* comma-separated, for the header */
	int64_t last[MF_MAX_COUNTERS];
} papi;

void mf_counters_read(int64_t *v)
{
	long long tmp[MF_MAX_COUNTERS];
	if (papi.read(papi.eventset, tmp) == 0)
		for (int i = 0; i < papi.n; i++)
			papi.last[i] = tmp[i];
	/* On a failed read, repeat the last values: the phase counts 0. */
	for (int i = 0; i < papi.n; i++)
		v[i] = papi.last[i];
}

/* papi_start sets up the counters named in MPIFLOW_PAPI and returns how
 * many work; rank 0 says once why others do not. */
static int papi_start(void)
{
	const char *spec = getenv("MPIFLOW_PAPI");
	if (!spec || !*spec)
		return 0;
	const char *cands[] = {getenv("MPIFLOW_PAPI_LIB"), "libpapi.so", "libpapi.so.7", "libpapi.so.7.1", "libpapi.so.7.0",
			       "libpapi.so.6", "libpapi.so.6.0", "libpapi.so.5"};
	void *h = NULL;
	char err[512] = "not found";
	for (size_t i = 0; i < sizeof cands / sizeof cands[0] && !h; i++) {
		if (!cands[i] || !*cands[i])
			continue;
		h = dlopen(cands[i], RTLD_NOW | RTLD_LOCAL);
		if (!h)
			snprintf(err, sizeof err, "%s", dlerror());
		if (!h && i == 0)
			break; /* an explicit MPIFLOW_PAPI_LIB that fails is not replaced */
	}
	int (*init)(int) = h ? (int (*)(int))dlsym(h, "PAPI_library_init") : NULL;
	int (*create)(int *) = h ? (int (*)(int *))dlsym(h, "PAPI_create_eventset") : NULL;
	int (*add)(int, const char *) = h ? (int (*)(int, const char *))dlsym(h, "PAPI_add_named_event") : NULL;
	int (*start)(int) = h ? (int (*)(int))dlsym(h, "PAPI_start") : NULL;
	papi.read = h ? (int (*)(int, long long *))dlsym(h, "PAPI_read") : NULL;
	if (!init || !create || !add || !start || !papi.read) {
		if (G.rank == 0)
			fprintf(stderr, "mpiflow: MPIFLOW_PAPI: cannot use libpapi (%s); recording without counters\n", h ? "symbols missing" : err);
		return 0;
	}
	/* PAPI_library_init wants the exact major.minor it was built as. */
	static const int versions[] = {0x07020000, 0x07010000, 0x07000000, 0x06000000, 0x05070000, 0x05060000, 0x05050000, 0x05040000};
	int ok = 0;
	for (size_t i = 0; i < sizeof versions / sizeof versions[0] && !ok; i++)
		ok = init(versions[i]) == versions[i];
	papi.eventset = -1;
	if (!ok || create(&papi.eventset) != 0) {
		if (G.rank == 0)
			fprintf(stderr, "mpiflow: MPIFLOW_PAPI: PAPI does not initialize; recording without counters\n");
		return 0;
	}
	char buf[512];
	snprintf(buf, sizeof buf, "%s", spec);
	for (char *save = NULL, *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		if (papi.n == MF_MAX_COUNTERS) {
			if (G.rank == 0)
				fprintf(stderr, "mpiflow: MPIFLOW_PAPI: at most %d counters; ignoring %s and after\n", MF_MAX_COUNTERS, name);
			break;
		}
		if (add(papi.eventset, name) != 0) {
			if (G.rank == 0)
				fprintf(stderr, "mpiflow: MPIFLOW_PAPI: counter %s is not available here; going on without it\n", name);
			continue;
		}
		size_t l = strlen(papi.names);
		snprintf(papi.names + l, sizeof papi.names - l, "%s%s", l ? "," : "", name);
		papi.n++;
	}
	if (papi.n > 0 && start(papi.eventset) != 0) {
		if (G.rank == 0)
			fprintf(stderr, "mpiflow: MPIFLOW_PAPI: cannot start the counters; recording without counters\n");
		papi.n = 0;
	}
	if (papi.n == 0)
		papi.names[0] = 0;
	return papi.n;
}

static int *world_ranks(MPI_Group grp, int n, int *identity)
{
	MPI_Group wg;
	int *in = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
	int *out = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
	*identity = 1;
	if (!in || !out || PMPI_Comm_group(MPI_COMM_WORLD, &wg) != MPI_SUCCESS) {
		free(in);
		free(out);
		return NULL;
	}
	for (int i = 0; i < n; i++)
		in[i] = i;
	if (PMPI_Group_translate_ranks(grp, n, in, wg, out) != MPI_SUCCESS) {
		for (int i = 0; i < n; i++)
			out[i] = -1;
	}
	PMPI_Group_free(&wg);
	free(in);
	for (int i = 0; i < n; i++) {
		if (out[i] == MPI_UNDEFINED)
			out[i] = -1; /* e.g. a spawned process: not in our world */
		if (out[i] != i)
			*identity = 0;
	}
	return out;
}

static void fill_group(mf_ginfo *g, MPI_Group grp, int remote)
{
	int n = 0, r = MPI_UNDEFINED, id = 1;
	PMPI_Group_size(grp, &n);
	if (remote) {
		g->rsize = n;
		g->rworld = world_ranks(grp, n, &id);
		return;
	}
	PMPI_Group_rank(grp, &r);
	g->size = n;
	g->rank = r;
	g->world = world_ranks(grp, n, &id);
	g->identity = id && n <= G.size;
	if (g->identity) {
		free(g->world);
		g->world = NULL;
	} else if (!g->world) {
		g->identity = 1; /* out of memory: fall back to "same as world" */
	}
}

#define LOCK()                                      \
	do {                                        \
		if (G.threads)                      \
			pthread_mutex_lock(&G.mu);  \
	} while (0)
#define UNLOCK()                                    \
	do {                                        \
		if (G.threads)                      \
			pthread_mutex_unlock(&G.mu);\
	} while (0)

static mf_ginfo *lookup(int kind, uintptr_t handle, void *h);

mf_ginfo *mf_lookup(int kind, uintptr_t handle, void *h)
{
	LOCK();
	mf_ginfo *g = lookup(kind, handle, h);
	UNLOCK();
	return g;
}

static mf_ginfo *lookup(int kind, uintptr_t handle, void *h)
{
	mf_ginfo *l = G.last[kind];
	if (l && l->handle == handle)
		return l;
	for (int i = 0; i < G.ncache; i++) {
		mf_ginfo *g = G.cache[i];
		if (g->kind == kind && g->handle == handle) {
			G.last[kind] = g;
			return g;
		}
	}
	if (G.ncache == G.capcache) {
		int nc = G.capcache ? 2 * G.capcache : 16;
		mf_ginfo **q = realloc(G.cache, sizeof(*q) * (size_t)nc);
		if (!q)
			return &mf_null_info;
		G.cache = q;
		G.capcache = nc;
	}
	mf_ginfo *g = calloc(1, sizeof(*g));
	if (!g)
		return &mf_null_info;
	g->handle = handle;
	g->kind = kind;
	g->id = ++G.next_id;
	g->outdeg = -1;
	g->identity = 1;
	MPI_Group grp = MPI_GROUP_NULL;
	switch (kind) {
	case MF_KIND_COMM: {
		MPI_Comm c = *(MPI_Comm *)h;
		int inter = 0;
		PMPI_Comm_test_inter(c, &inter);
		if (PMPI_Comm_group(c, &grp) == MPI_SUCCESS) {
			fill_group(g, grp, 0);
			PMPI_Group_free(&grp);
		}
		if (inter && PMPI_Comm_remote_group(c, &grp) == MPI_SUCCESS) {
			g->inter = 1;
			fill_group(g, grp, 1);
			PMPI_Group_free(&grp);
		}
		break;
	}
	case MF_KIND_WIN:
		if (PMPI_Win_get_group(*(MPI_Win *)h, &grp) == MPI_SUCCESS) {
			fill_group(g, grp, 0);
			PMPI_Group_free(&grp);
		}
		break;
	case MF_KIND_FILE:
		if (PMPI_File_get_group(*(MPI_File *)h, &grp) == MPI_SUCCESS) {
			fill_group(g, grp, 0);
			PMPI_Group_free(&grp);
		}
		break;
	}
	G.cache[G.ncache++] = g;
	G.last[kind] = g;
	return g;
}

static void forget(int kind, uintptr_t handle);

void mf_forget(int kind, uintptr_t handle)
{
	LOCK();
	forget(kind, handle);
	UNLOCK();
}

static void forget(int kind, uintptr_t handle)
{
	for (int i = 0; i < G.ncache; i++) {
		mf_ginfo *g = G.cache[i];
		if (g->kind == kind && g->handle == handle) {
			if (G.last[kind] == g)
				G.last[kind] = NULL;
			G.cache[i] = G.cache[--G.ncache];
			/* A freed communicator can still have pending requests. */
			if (G.nretired == G.capretired) {
				int nc = G.capretired ? 2 * G.capretired : 16;
				mf_ginfo **q = realloc(G.retired, sizeof(*q) * (size_t)nc);
				if (!q)
					return; /* leak it rather than risk a dangling pointer */
				G.retired = q;
				G.capretired = nc;
			}
			G.retired[G.nretired++] = g;
			return;
		}
	}
}

void mf_req_track(uintptr_t h, mf_ginfo *g)
{
	LOCK();
	for (int i = mf_nreq - 1; i >= 0; i--) {
		if (G.reqs[i].h == h) {
			G.reqs[i].g = g;
			UNLOCK();
			return;
		}
	}
	if (mf_nreq == G.capreqs) {
		int nc = G.capreqs ? 2 * G.capreqs : 64;
		struct mf_req *q = realloc(G.reqs, sizeof(*q) * (size_t)nc);
		if (!q) {
			UNLOCK();
			return; /* Wait will then read the source as a world rank */
		}
		G.reqs = q;
		G.capreqs = nc;
	}
	G.reqs[mf_nreq++] = (struct mf_req){h, g};
	UNLOCK();
}

mf_ginfo *mf_req_find(uintptr_t h)
{
	mf_ginfo *g = NULL;
	LOCK();
	for (int i = mf_nreq - 1; i >= 0; i--) {
		if (G.reqs[i].h == h) {
			g = G.reqs[i].g;
			break;
		}
	}
	UNLOCK();
	return g;
}

void mf_req_done(uintptr_t h)
{
	LOCK();
	for (int i = mf_nreq - 1; i >= 0; i--) {
		if (G.reqs[i].h == h) {
			G.reqs[i] = G.reqs[--mf_nreq];
			break;
		}
	}
	UNLOCK();
}

uintptr_t *mf_reqs_save(int n, const MPI_Request *reqs)
{
	if (n <= 0 || !reqs)
		return NULL;
	uintptr_t *s = malloc(sizeof(uintptr_t) * (size_t)n);
	if (s)
		for (int i = 0; i < n; i++)
			s[i] = MF_H(reqs[i]);
	return s;
}

void mf_reqs_done(int n, uintptr_t *saved, const MPI_Request *reqs)
{
	for (int i = 0; i < n; i++)
		if (reqs[i] == MPI_REQUEST_NULL && saved[i] != MF_H(MPI_REQUEST_NULL))
			mf_req_done(saved[i]);
	free(saved);
}

int mf_outdeg(mf_ginfo *g, MPI_Comm c)
{
	if (g->outdeg >= 0)
		return g->outdeg;
	int topo = MPI_UNDEFINED, d = 0;
	PMPI_Topo_test(c, &topo);
	if (topo == MPI_CART) {
		PMPI_Cartdim_get(c, &d);
		d *= 2;
	} else if (topo == MPI_GRAPH) {
		PMPI_Graph_neighbors_count(c, g->rank, &d);
	} else if (topo == MPI_DIST_GRAPH) {
		int in = 0, w = 0;
		PMPI_Dist_graph_neighbors_count(c, &in, &d, &w);
	}
	g->outdeg = d;
	return d;
}

static void free_caches(void)
{
	for (int i = 0; i < G.ncache; i++) {
		free(G.cache[i]->world);
		free(G.cache[i]->rworld);
		free(G.cache[i]);
	}
	free(G.cache);
	G.cache = NULL;
	G.ncache = G.capcache = 0;
	for (int i = 0; i < G.nretired; i++) {
		free(G.retired[i]->world);
		free(G.retired[i]->rworld);
		free(G.retired[i]);
	}
	free(G.retired);
	G.retired = NULL;
	G.nretired = G.capretired = 0;
	free(G.reqs);
	G.reqs = NULL;
	G.capreqs = mf_nreq = 0;
	for (int k = 0; k < MF_NKINDS; k++)
		G.last[k] = NULL;
}

static const char *output_dir(void)
{
	const char *d = getenv("MPIFLOW_DIR");
	return d && *d ? d : ".";
}

/* open_trace starts the full trace of thread t, if asked for. */
static void open_trace(mf_thr *t)
{
	if (!G.trace)
		return;
	snprintf(t->trace_tmp, sizeof t->trace_tmp, "%s/.mpiflow-trace.%d.%d.%d.tmp", output_dir(), (int)getpid(), G.rank, t->index);
	int fd = open(t->trace_tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || mf_trace_open(&t->rec, fd, G.rank)) {
		t->trace_err = errno ? errno : EIO;
		fprintf(stderr, "mpiflow: rank %d: cannot write the full trace %s: %s\n", G.rank, t->trace_tmp, strerror(t->trace_err));
		if (fd >= 0)
			close(fd);
		unlink(t->trace_tmp);
		t->trace_tmp[0] = 0;
	}
}

/* add_thread registers t; it returns 0, or -1 when out of memory. */
static int add_thread(mf_thr *t)
{
	if (G.nthr == G.capthr) {
		int nc = G.capthr ? 2 * G.capthr : 8;
		mf_thr **q = realloc(G.thr, sizeof(*q) * (size_t)nc);
		if (!q)
			return -1;
		G.thr = q;
		G.capthr = nc;
	}
	t->index = G.nthr;
	G.thr[G.nthr++] = t;
	return 0;
}

/* ---- Runs that never reach MPI_Finalize ----
 * Everything a partial file needs beyond the recorder is prepared at
 * MPI_Init (P.info), so that the crash paths (atexit, MPI_Abort, fatal
 * signals) only call mf_write_partial, which is async-signal-safe. */
static struct {
	mf_partial_info info;
	int ready;
	volatile sig_atomic_t done; /* a partial file was written, or MPI_Finalize ran */
	volatile pid_t writer;      /* the thread writing the partial files, 0 when none */
	char host[256], job[128], lib[MPI_MAX_LIBRARY_VERSION_STRING], ver[32];
	char dir[PATH_MAX], exe[PATH_MAX], exe_path[PATH_MAX];
	char cmd[8192];
	const char *argv[256];
	struct sigaction old[NSIG];
	char altstack[64 * 1024];
} P;

static const int crash_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

/* job_id is the job's id as finalize.go's jobID makes it: from the
 * launcher's environment, else rank 0's pid (broadcast: every rank's
 * partial file must carry the same id). */
static void job_id(char *out, size_t n)
{
	const char *keys[] = {"SLURM_JOB_ID", "OMPI_MCA_ess_base_jobid", "PMI_JOBID", "PBS_JOBID"};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		const char *v = getenv(keys[i]);
		if (!v || !*v)
			continue;
		const char *step = getenv("SLURM_STEP_ID");
		if (i == 0 && step && *step)
			snprintf(out, n, "%s.%s", v, step);
		else
			snprintf(out, n, "%s", v);
		for (char *c = out; *c; c++)
			if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.'))
				*c = '_';
		return;
	}
	int pid = (int)getpid();
	PMPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
	snprintf(out, n, "%d", pid);
}

/* write_partial writes the partial file of thread t and returns 0 or a
 * negative errno. safe: outside a signal handler, so dladdr and malloc may
 * be used to locate call sites. */
static int write_partial(mf_thr *t, mf_partial_info in, int safe)
{
	mf_rec snap = t->rec;
	if (snap.busy)
		snap.failed = 1; /* the writer then keeps to what is consistent */
	in.thread = t->index;
	mf_partial_site *sites = NULL;
	if (safe && snap.nsites > 0 && (sites = calloc((size_t)snap.nsites, sizeof *sites))) {
		for (int k = 0; k < snap.nsites; k++) {
			Dl_info di;
			if (!dladdr((void *)(uintptr_t)snap.sites[k], &di) || !di.dli_fname)
				continue;
			sites[k].obj = di.dli_fname[0] == '/' ? di.dli_fname : P.exe_path;
			sites[k].off = snap.sites[k] - (uint64_t)(uintptr_t)di.dli_fbase;
		}
	}
	in.sites = sites;
	in.nsites = sites ? snap.nsites : 0;
	int rc = mf_write_partial(&snap, &in, P.dir);
	free(sites);
	return rc;
}

/* mf_partial_now writes the partial files, once. A second call from
 * another thread while the first writes (a launcher that sends SIGTERM
 * twice, the signal then delivered to another thread) waits for it, up to
 * 3 s: returning would hand the signal on, and the process would end in
 * the middle of the write. Only async-signal-safe calls when !safe. */
void mf_partial_now(int safe)
{
	pid_t me = (pid_t)syscall(SYS_gettid);
	if (__atomic_exchange_n(&P.done, 1, __ATOMIC_ACQ_REL)) {
		struct timespec ms = {0, 1000000};
		for (int i = 0; i < 3000; i++) {
			pid_t w = __atomic_load_n(&P.writer, __ATOMIC_ACQUIRE);
			if (w == 0 || w == me)
				break;
			nanosleep(&ms, NULL);
		}
		return;
	}
	if (!P.ready || !G.active)
		return;
	__atomic_store_n(&P.writer, me, __ATOMIC_RELEASE);
	mf_partial_info in = P.info;
	in.wall = mf_now() - G.init_mono;
	static uint8_t buf[MF_PARTIAL_STATICBUF];
	in.buf = buf;
	in.buflen = sizeof buf;
	for (int i = 0; i < G.nthr; i++) {
		int rc = write_partial(G.thr[i], in, safe);
		if (rc < 0 && safe)
			fprintf(stderr, "mpiflow: rank %d: cannot write the partial profile in %s: %s\n", G.rank, P.dir, strerror(-rc));
	}
	__atomic_store_n(&P.writer, 0, __ATOMIC_RELEASE);
}

/* checkpoint writes the partial file of the calling thread's recorder now
 * and then, so that a rank killed without a chance to run its exit path
 * (SIGKILL: MPICH's launcher kills the other ranks of a failed job at once)
 * still leaves what it recorded until then: after the first call that
 * follows MPI_Init, 1 s later, then at doubling intervals up to
 * MPIFLOW_CHECKPOINT, so short runs are covered and long ones write rarely.
 * A normal MPI_Finalize removes the checkpoints; a crash path overwrites
 * them. */
static void checkpoint(mf_rec *r)
{
	mf_thr *t = (mf_thr *)(void *)((char *)r - offsetof(mf_thr, rec));
	int64_t now = mf_now();
	t->ckpt_gap = t->ckpt_gap * 2 < G.ckpt_every ? t->ckpt_gap * 2 : G.ckpt_every;
	r->ckpt_next = now + t->ckpt_gap;
	if (P.done || !P.ready || !G.active)
		return;
	if (!t->ckpt_buf && !(t->ckpt_buf = malloc(MF_PARTIAL_STATICBUF))) {
		r->ckpt_next = INT64_MAX;
		return;
	}
	mf_partial_info in = P.info;
	in.wall = now - G.init_mono;
	in.buf = t->ckpt_buf;
	in.buflen = MF_PARTIAL_STATICBUF;
	in.checkpoint = 1;
	int rc = write_partial(t, in, 1);
	t->ckpt_written = 1;
	if (rc < 0) {
		/* No more checkpoints of this thread; one warning per job. */
		r->ckpt_next = INT64_MAX;
		if (G.rank == 0 && t->index == 0)
			fprintf(stderr, "mpiflow: cannot write a checkpoint in %s: %s; no more checkpoints (MPIFLOW_CHECKPOINT)\n",
				P.dir, strerror(-rc));
	}
}

/* checkpoint_every parses MPIFLOW_CHECKPOINT, the longest interval in
 * seconds between checkpoints (default 60; 0 or off: none). */
static int64_t checkpoint_every(const char *v)
{
	const int64_t def = 60 * 1000000000LL;
	if (!v || !*v)
		return def;
	if (!strcmp(v, "off"))
		return 0;
	char *end;
	errno = 0;
	double sec = strtod(v, &end);
	if (errno || *end || !(sec >= 0 && sec <= 1e9)) {
		if (G.rank == 0)
			fprintf(stderr, "mpiflow: MPIFLOW_CHECKPOINT=%s: use seconds (0 or off: none); using 60\n", v);
		return def;
	}
	return sec > 0 && sec < 1e-9 ? 1 : (int64_t)(sec * 1e9);
}

/* start_checkpoints arms the checkpoints of thread t: the first one at
 * its next call, the second 1 s later (or MPIFLOW_CHECKPOINT if shorter;
 * checkpoint doubles the gap before using it). */
static void start_checkpoints(mf_thr *t)
{
	if (!P.ready || G.ckpt_every <= 0)
		return;
	t->ckpt_gap = G.ckpt_every < 1000000000 ? G.ckpt_every / 2 : 500000000;
	t->rec.ckpt = checkpoint;
	t->rec.ckpt_next = mf_now();
}

static void at_exit(void) { mf_partial_now(1); }

/* on_signal writes the partial files, then hands the signal on to the
 * action that was there before (the application's or the MPI's handler,
 * or the default), so the process ends as it would without mpiflow. */
static void on_signal(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	mf_partial_now(0);
	struct sigaction *o = &P.old[sig];
	if (!(o->sa_flags & SA_SIGINFO) && o->sa_handler == SIG_IGN) {
		errno = saved;
		return;
	}
	if ((o->sa_flags & SA_SIGINFO) ? o->sa_sigaction != NULL : o->sa_handler != SIG_DFL) {
		if (o->sa_flags & SA_RESETHAND) {
			struct sigaction dfl = {.sa_handler = SIG_DFL};
			sigaction(sig, &dfl, NULL);
		}
		errno = saved;
		if (o->sa_flags & SA_SIGINFO)
			o->sa_sigaction(sig, si, uc);
		else
			o->sa_handler(sig);
		return;
	}
	sigaction(sig, o, NULL);
	errno = saved;
	/* A sent signal is raised again and delivered when the handler
	 * returns; a fault (SEGV, BUS, FPE, ILL from the kernel) happens again
	 * when the instruction is re-executed, now with the default action. */
	if (si == NULL || si->si_code <= 0 || sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGABRT)
		raise(sig);
}

static void install_crash_paths(void)
{
	stack_t ss = {.ss_sp = P.altstack, .ss_size = sizeof P.altstack};
	stack_t old;
	if (sigaltstack(NULL, &old) == 0 && (old.ss_flags & SS_DISABLE))
		sigaltstack(&ss, NULL); /* so that a stack overflow can be written too */
	struct sigaction sa = {.sa_sigaction = on_signal, .sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK};
	sigfillset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++) {
		int s = crash_signals[i];
		if (sigaction(s, NULL, &P.old[s]) != 0)
			continue;
		if (!(P.old[s].sa_flags & SA_SIGINFO) && P.old[s].sa_handler == SIG_IGN)
			continue; /* ignored by the application (nohup): keep it so */
		sigaction(s, &sa, NULL);
	}
	atexit(at_exit);
}

/* partial_setup prepares the partial file's header at MPI_Init. */
static void partial_setup(void)
{
	const char *d = getenv("MPIFLOW_PARTIAL");
	if (d && !strcmp(d, "0"))
		return;
	gethostname(P.host, sizeof P.host - 1);
	job_id(P.job, sizeof P.job);
	int n = 0, ver = 0, sub = 0;
	PMPI_Get_library_version(P.lib, &n);
	for (char *c = P.lib; *c; c++)
		if (*c == '\n' || *c == ',') {
			*c = 0;
			break;
		}
	PMPI_Get_version(&ver, &sub);
	snprintf(P.ver, sizeof P.ver, "%d.%d", ver, sub);
	if (!realpath(output_dir(), P.dir))
		snprintf(P.dir, sizeof P.dir, "%s", output_dir());
	ssize_t l = readlink("/proc/self/exe", P.exe_path, sizeof P.exe_path - 1);
	P.exe_path[l > 0 ? l : 0] = 0;
	const char *base = strrchr(P.exe_path, '/');
	snprintf(P.exe, sizeof P.exe, "%s", base ? base + 1 : (P.exe_path[0] ? P.exe_path : "mpi"));
	int argc = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t got = read(fd, P.cmd, sizeof P.cmd - 1);
		close(fd);
		for (ssize_t i = 0; got > 0 && i < got && argc < (int)(sizeof P.argv / sizeof P.argv[0]); i += (ssize_t)strlen(P.cmd + i) + 1)
			P.argv[argc++] = P.cmd + i;
	}
	P.info = (mf_partial_info){
		.rank = G.rank,
		.size = G.size,
		.host = P.host,
		.job_id = P.job,
		.exe = P.exe,
		.argv = P.argv,
		.argc = argc,
		.init_real = G.init_real,
		.init_mono = G.init_mono,
		.mpi_library = P.lib,
		.mpi_version = P.ver,
		.clock = mf_clock_name(),
		.counters = papi.names,
		.names = mf_call_names,
		.ncalls = mf_ncalls,
		.rusage = 1,
	};
	P.ready = 1;
	install_crash_paths();
}

/* max_intervals parses MPIFLOW_ANCHORS, kept from format 1 (time anchors)
 * as the most timing intervals per graph (an interval starts where an
 * anchor stood): fewer intervals, coarser times. Unset means no limit but
 * the byte budget; invalid ones warn on rank 0. */
static int64_t max_intervals(const char *v)
{
	if (!v || !*v)
		return 0;
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (errno || *end || n < 2 || n > (1L << 24)) {
		if (G.rank == 0)
			fprintf(stderr, "mpiflow: MPIFLOW_ANCHORS=%s: use a number from 2 to 16777216; using no limit\n", v);
		return 0;
	}
	return n;
}

/* timing_bytes parses MPIFLOW_TIMING, the timing budget per graph in
 * bytes, with an optional k or M suffix (KiB, MiB). Unset or invalid means
 * MF_TIMING_BYTES (with a warning on rank 0 for an invalid value). */
static int64_t timing_bytes(const char *v)
{
	if (!v || !*v)
		return MF_TIMING_BYTES;
	char *end;
	errno = 0;
	long long n = strtoll(v, &end, 10);
	long long mul = 1;
	if (*end == 'k' || *end == 'K')
		mul = 1 << 10, end++;
	else if (*end == 'M' || *end == 'm')
		mul = 1 << 20, end++;
	if (errno || *end || end == v || n < 0 || n > MF_TIMING_MAX / mul || n * mul < MF_TIMING_MIN) {
		if (G.rank == 0)
			fprintf(stderr, "mpiflow: MPIFLOW_TIMING=%s: use a size from 1k to 1024M; using %dk\n", v,
				MF_TIMING_BYTES >> 10);
		return MF_TIMING_BYTES;
	}
	return n * mul;
}

void mf_start(int64_t init_mono, int64_t init_real, int provided)
{
	const char *dis = getenv("MPIFLOW_DISABLE");
	if (G.active || (dis && !strcmp(dis, "1")))
		return;
	PMPI_Comm_rank(MPI_COMM_WORLD, &G.rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &G.size);
	mf_world_info.size = G.size;
	mf_world_info.rank = G.rank;
	mf_null_info.rank = -1;

	if (mf_parse_key(getenv("MPIFLOW_KEY"), &G.keyflags)) {
		if (G.rank == 0)
			fprintf(stderr, "mpiflow: MPIFLOW_KEY=%s: use a comma-separated list of call, site, bytes, partner, comm; using call,site\n",
				getenv("MPIFLOW_KEY"));
		G.keyflags = MF_KEY_SITE;
	}
	if (G.rank == 0 && mf_clock_warning())
		fprintf(stderr, "mpiflow: %s\n", mf_clock_warning());
	G.max_intervals = max_intervals(getenv("MPIFLOW_ANCHORS"));
	G.timing_bytes = timing_bytes(getenv("MPIFLOW_TIMING"));
	if (mf_rec_init(&G.main.rec, G.keyflags, G.timing_bytes, G.max_intervals) || add_thread(&G.main)) {
		fprintf(stderr, "mpiflow: rank %d: out of memory, not recording\n", G.rank);
		return;
	}
	const char *tr = getenv("MPIFLOW_TRACE");
	G.trace = tr && !strcmp(tr, "1");
	open_trace(&G.main);
	G.main.rec.ncounters = papi_start();
	G.init_mono = init_mono;
	G.init_real = init_real;
	G.threads = provided == MPI_THREAD_SERIALIZED || provided == MPI_THREAD_MULTIPLE;
	G.active = 1;
	partial_setup();
	G.ckpt_every = checkpoint_every(getenv("MPIFLOW_CHECKPOINT"));
	start_checkpoints(&G.main);
	mf_tls_rec = &G.main.rec;
}

mf_rec *mf_thread_rec(void)
{
	if (!G.threads || !G.active)
		return NULL;
	mf_thr *t = calloc(1, sizeof *t);
	if (!t || mf_rec_init(&t->rec, G.keyflags, G.timing_bytes, G.max_intervals)) {
		free(t);
		return NULL;
	}
	/* Counters are per thread in PAPI: only the main thread has them. */
	pthread_mutex_lock(&G.mu);
	int ok = G.active && !add_thread(t);
	pthread_mutex_unlock(&G.mu);
	if (!ok) {
		mf_rec_free(&t->rec);
		free(t);
		return NULL;
	}
	open_trace(t);
	start_checkpoints(t);
	mf_tls_rec = &t->rec;
	return &t->rec;
}

/* ---- MPI helpers for the Go part (mf_ops) ---- */

static MPI_File fh = MPI_FILE_NULL;

static int op_bcast(void *buf, int len) { return PMPI_Bcast(buf, len, MPI_BYTE, 0, MPI_COMM_WORLD); }

static int op_allreduce(int64_t *v, int n, int op)
{
	MPI_Op o = op == MF_MIN ? MPI_MIN : op == MF_MAX ? MPI_MAX : MPI_SUM;
	return PMPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT64_T, o, MPI_COMM_WORLD);
}

static int op_exscan(int64_t in, int64_t *out)
{
	*out = 0;
	int rc = PMPI_Exscan(&in, out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	if (G.rank == 0)
		*out = 0; /* undefined on rank 0 */
	return rc;
}

static int op_gather(const void *send, int len, void *recv)
{
	return PMPI_Gather(send, len, MPI_BYTE, recv, len, MPI_BYTE, 0, MPI_COMM_WORLD);
}

static int op_open(const char *path)
{
	int rc = PMPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
	if (rc == MPI_SUCCESS)
		PMPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
	return rc;
}

#define CHUNK ((int64_t)1 << 30)

static int op_write_at_all(int64_t off, const void *buf, int64_t len)
{
	/* All ranks must make the same number of collective calls. */
	int64_t rounds = (len + CHUNK - 1) / CHUNK;
	int rc = PMPI_Allreduce(MPI_IN_PLACE, &rounds, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
	if (rounds < 1)
		rounds = 1;
	for (int64_t i = 0; i < rounds && rc == MPI_SUCCESS; i++) {
		int64_t o = i * CHUNK, n = len - o;
		if (n < 0)
			n = 0;
		if (n > CHUNK)
			n = CHUNK;
		MPI_Status st;
		rc = PMPI_File_write_at_all(fh, (MPI_Offset)(off + o), (const char *)buf + (n ? o : 0), (int)n, MPI_BYTE, &st);
	}
	return rc;
}

static int op_write_at(int64_t off, const void *buf, int64_t len)
{
	int rc = MPI_SUCCESS;
	for (int64_t o = 0; o < len && rc == MPI_SUCCESS; o += CHUNK) {
		int64_t n = len - o > CHUNK ? CHUNK : len - o;
		MPI_Status st;
		rc = PMPI_File_write_at(fh, (MPI_Offset)(off + o), (const char *)buf + o, (int)n, MPI_BYTE, &st);
	}
	return rc;
}

static int op_close(void) { return fh == MPI_FILE_NULL ? MPI_SUCCESS : PMPI_File_close(&fh); }

static void op_errstr(int code, char *buf, int len)
{
	char s[MPI_MAX_ERROR_STRING];
	int n = 0;
	if (PMPI_Error_string(code, s, &n) != MPI_SUCCESS)
		snprintf(s, sizeof s, "MPI error %d", code);
	snprintf(buf, (size_t)len, "%s", s);
}

static const mf_ops ops = {
	.bcast = op_bcast,
	.allreduce_i64 = op_allreduce,
	.exscan_i64 = op_exscan,
	.gather = op_gather,
	.file_open = op_open,
	.file_write_at_all = op_write_at_all,
	.file_write_at = op_write_at,
	.file_close = op_close,
	.error_string = op_errstr,
};

/* go_part loads the Go library that sits next to this one (next to the
 * file a symlink to this one points to, else next to the symlink), or
 * $MPIFLOW_GOLIB, and returns its entry point, or NULL. */
static mf_finalize_fn go_part(char *err, size_t errlen)
{
	char paths[2][PATH_MAX];
	int n = 0;
	const char *env = getenv("MPIFLOW_GOLIB");
	if (env && *env) {
		snprintf(paths[n++], PATH_MAX, "%s", env);
	} else {
		Dl_info info;
		if (!dladdr((void *)&mf_start, &info) || !info.dli_fname) {
			snprintf(err, errlen, "cannot find where libmpiflow is installed");
			return NULL;
		}
		char real[PATH_MAX];
		const char *from[2] = {realpath(info.dli_fname, real) ? real : NULL, info.dli_fname};
		for (int i = 0; i < 2; i++) {
			if (!from[i] || (i == 1 && from[0] && !strcmp(from[0], from[1])))
				continue;
			snprintf(paths[n], PATH_MAX, "%s", from[i]);
			char *slash = strrchr(paths[n], '/');
			size_t dir = slash ? (size_t)(slash - paths[n] + 1) : 0;
			snprintf(paths[n] + dir, PATH_MAX - dir, "libmpiflow-go.so");
			n++;
		}
	}
	void *h = NULL;
	for (int i = 0; i < n && !h; i++) {
		h = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
		if (!h)
			snprintf(err, errlen, "cannot load %s: %s", paths[i], dlerror());
	}
	if (!h)
		return NULL;
	mf_finalize_fn f = (mf_finalize_fn)dlsym(h, "mpiflowFinalize");
	if (!f)
		snprintf(err, errlen, "libmpiflow-go.so has no mpiflowFinalize");
	return f;
}

/* remove_checkpoints removes the checkpoint files once the job file is
 * written: the run finished, they are stale. */
static void remove_checkpoints(void)
{
	for (int i = 0; i < G.nthr; i++) {
		mf_thr *t = G.thr[i];
		free(t->ckpt_buf);
		t->ckpt_buf = NULL;
		if (!t->ckpt_written)
			continue;
		mf_partial_info in = P.info;
		in.thread = t->index;
		char path[PATH_MAX];
		if (mf_partial_path(&in, P.dir, path, sizeof path) > 0)
			unlink(path);
		t->ckpt_written = 0;
	}
}

void mf_finish(void)
{
	if (!G.active)
		return;
	int64_t fin = mf_now();
	P.done = 1; /* the tables are freed below: no partial file from here on */
	mf_tls_rec = NULL;
	pthread_mutex_lock(&G.mu);
	G.active = 0; /* no new threads from here on */
	pthread_mutex_unlock(&G.mu);

	mf_thread_data *td = calloc((size_t)G.nthr, sizeof *td);
	for (int i = 0; i < G.nthr; i++) {
		mf_thr *t = G.thr[i];
		if (t->rec.trace_fd >= 0 && mf_trace_close(&t->rec, mf_call_names, mf_ncalls))
			t->trace_err = errno ? errno : EIO;
		if (td)
			td[i] = (mf_thread_data){.rec = &t->rec, .thread = t->index,
						 .trace_tmp = t->trace_tmp[0] ? t->trace_tmp : NULL, .trace_err = t->trace_err};
	}

	char err[PATH_MAX + 256] = "";
	mf_finalize_fn fn = td ? go_part(err, sizeof err) : NULL;
	if (!td)
		snprintf(err, sizeof err, "out of memory");
	int ok = fn != NULL;
	PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (!fn)
		fprintf(stderr, "mpiflow: rank %d: %s; no profile written\n", G.rank, err);
	if (ok) {
		char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
		int n = 0, ver = 0, sub = 0;
		PMPI_Get_library_version(lib, &n);
		char *nl = strchr(lib, '\n');
		if (nl)
			*nl = 0;
		nl = strchr(lib, ',');
		if (nl)
			*nl = 0;
		PMPI_Get_version(&ver, &sub);
		char vs[32];
		snprintf(vs, sizeof vs, "%d.%d", ver, sub);
		mf_ctx ctx = {
			.threads = td,
			.nthreads = G.nthr,
			.ops = &ops,
			.names = mf_call_names,
			.ncalls = mf_ncalls,
			.rank = G.rank,
			.size = G.size,
			.init_real = G.init_real,
			.init_mono = G.init_mono,
			.finalize_mono = fin,
			.mpi_library = lib,
			.mpi_version = vs,
			.clock = mf_clock_name(),
			.complete = 1,
			.counters = papi.names,
		};
		fn(&ctx);
		remove_checkpoints();
	} else {
		for (int i = 0; i < G.nthr; i++)
			if (G.thr[i]->trace_tmp[0])
				unlink(G.thr[i]->trace_tmp);
	}
	free(td);
	/* Other threads keep pointers to their recorders (a call after
	 * MPI_Finalize is erroneous, but must not crash): their tables are
	 * freed and recording stopped, the structs stay. */
	for (int i = 0; i < G.nthr; i++) {
		G.thr[i]->rec.failed = 1;
		mf_rec_free(&G.thr[i]->rec);
	}
	free_caches();
}
