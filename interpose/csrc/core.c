/*
 * core.c: the start of recording at MPI_Init (mf_start) with the settings
 * it reads (MPIFLOW_DISABLE, _KEY, _ANCHORS, _TIMING, _TRACE, _CHECKPOINT,
 * _DIR with its placeholders), the job id, and the recording threads (mf_thread_rec; each one's full trace).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <pwd.h>
#include <unistd.h>

#include "core.h"
#include "jobid.h"

__thread mf_rec *mf_tls_rec __attribute__((tls_model("initial-exec")));

mf_state G = {.mu = PTHREAD_MUTEX_INITIALIZER};
mf_hooks mf_core_hooks;

/* job_id is the job's id (mf_job_id), else rank 0's pid (broadcast: every
 * rank's partial file must carry the same id). */
static void job_id(char *out, size_t n)
{
	if (mf_job_id(out, n))
		return;
	int pid = (int)getpid();
	PMPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
	snprintf(out, n, "%d", pid);
}

/* The output directory: MPIFLOW_DIR with its placeholders expanded, or
 * "." (set_output_dir). */
static char outdir[PATH_MAX];

const char *mf_output_dir(void) { return outdir[0] ? outdir : "."; }

/* expand_dir writes the directory template t into out (n bytes) with its
 * placeholders expanded, the way sites file logs (Darshan's
 * <user>/<year>/<month>/<day>): %u the user's name, %j the job id, %Y, %m
 * and %d the date of the job's start (local time at real time t0, ns), %%
 * a percent sign; any other % stays. It returns 0, or -1 if the result
 * does not fit. */
static int expand_dir(const char *t, char *out, size_t n, int64_t t0)
{
	char user[256] = "";
	struct passwd pw, *pp = NULL;
	char pwbuf[4096];
	if (getpwuid_r(getuid(), &pw, pwbuf, sizeof pwbuf, &pp) == 0 && pp && pp->pw_name)
		snprintf(user, sizeof user, "%s", pp->pw_name);
	else if (getenv("USER") && *getenv("USER"))
		snprintf(user, sizeof user, "%s", getenv("USER"));
	else
		snprintf(user, sizeof user, "%u", (unsigned)getuid());
	time_t secs = (time_t)(t0 / 1000000000);
	struct tm tm;
	localtime_r(&secs, &tm);
	size_t k = 0;
	for (const char *c = t; *c; c++) {
		char part[256];
		part[0] = *c;
		part[1] = 0;
		if (*c == '%' && c[1]) {
			switch (c[1]) {
			case 'u': snprintf(part, sizeof part, "%s", user); c++; break;
			case 'j': snprintf(part, sizeof part, "%s", G.job); c++; break;
			case 'Y': snprintf(part, sizeof part, "%04d", tm.tm_year + 1900); c++; break;
			case 'm': snprintf(part, sizeof part, "%02d", tm.tm_mon + 1); c++; break;
			case 'd': snprintf(part, sizeof part, "%02d", tm.tm_mday); c++; break;
			case '%': c++; break;
			}
		}
		size_t l = strlen(part);
		if (k + l >= n)
			return -1;
		memcpy(out + k, part, l + 1);
		k += l;
	}
	return 0;
}

/* make_dirs creates the missing directories of path, readable by the
 * group (0750 whatever the umask: a site's administrators read the logs
 * of its users through their group); it returns 0 or an errno. */
static int make_dirs(const char *path)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s", path);
	for (char *c = p + 1;; c++) {
		if (*c != '/' && *c != 0)
			continue;
		const char end = *c;
		*c = 0;
		if (mkdir(p, 0750) == 0)
			chmod(p, 0750);
		else if (errno != EEXIST)
			return errno;
		if (!end)
			return 0;
		*c = '/';
	}
}

/* set_output_dir sets the output directory at MPI_Init (collective): rank
 * 0 expands MPIFLOW_DIR (a template with placeholders: expand_dir) and
 * creates what is missing of it, and every rank takes its result. */
static void set_output_dir(int64_t init_real)
{
	const char *d = getenv("MPIFLOW_DIR");
	if (!d || !*d)
		return;
	if (G.rank == 0) {
		if (expand_dir(d, outdir, sizeof outdir, init_real)) {
			fprintf(stderr, "mpiflow: MPIFLOW_DIR=%s: longer than %d bytes once expanded; using it as it is\n", d, PATH_MAX);
			snprintf(outdir, sizeof outdir, "%s", d);
		}
		int err = make_dirs(outdir);
		if (err)
			fprintf(stderr, "mpiflow: cannot create the output directory %s: %s\n", outdir, strerror(err));
	}
	if (strchr(d, '%'))
		PMPI_Bcast(outdir, sizeof outdir, MPI_CHAR, 0, MPI_COMM_WORLD);
	else
		snprintf(outdir, sizeof outdir, "%s", d);
}

/* open_trace starts the full trace of thread t, if asked for. */
static void open_trace(mf_thr *t)
{
	if (!G.trace)
		return;
	int n = snprintf(t->trace_tmp, sizeof t->trace_tmp, "%s/.mpiflow-trace.%d.%d.%d.tmp", mf_output_dir(), (int)getpid(), G.rank,
			 t->index);
	/* a truncated name would be the same for every rank */
	int fd = n < 0 || (size_t)n >= sizeof t->trace_tmp ? (errno = ENAMETOOLONG, -1)
							   : open(t->trace_tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || mf_trace_open(&t->rec, fd, G.rank)) {
		t->trace_err = errno ? errno : EIO;
		fprintf(stderr, "mpiflow: rank %d: cannot write the full trace %s: %s\n", G.rank, t->trace_tmp, strerror(t->trace_err));
		if (fd >= 0) {
			close(fd);
			unlink(t->trace_tmp);
		}
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

int mf_flag(const char *name, int def)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return def;
	if (!strcmp(v, "0") || !strcmp(v, "1"))
		return v[0] == '1';
	if (G.rank == 0)
		fprintf(stderr, "mpiflow: %s=%s: use 0 or 1; using %d\n", name, v, def);
	return def;
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

/* size_setting parses setting name (value v), a size in bytes with an
 * optional k or M suffix (KiB, MiB) from 1k to 1024M. Unset or invalid
 * means def (with a warning on rank 0 for an invalid value). */
static int64_t size_setting(const char *name, const char *v, int64_t def)
{
	if (!v || !*v)
		return def;
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
			fprintf(stderr, "mpiflow: %s=%s: use a size from 1k to 1024M; using %lldk\n", name, v,
				(long long)def >> 10);
		return def;
	}
	return n * mul;
}

/* budget parses MPIFLOW_BUDGET, the bytes a graph's sequences and timing
 * may take in the file (MF_BUDGET_BYTES if unset), and MPIFLOW_ORDER:
 * "exact" means no budget (0), every run length kept. */
static int64_t budget(const char *v, const char *order)
{
	if (order && *order) {
		if (strcmp(order, "exact") == 0)
			return 0;
		if (G.rank == 0)
			fprintf(stderr, "mpiflow: MPIFLOW_ORDER=%s: use exact, or leave it unset for run lengths that may be "
					"approximate past the budget\n",
				order);
	}
	return size_setting("MPIFLOW_BUDGET", v, MF_BUDGET_BYTES);
}

/* sample_mask parses MPIFLOW_SAMPLE, how many of a run of repeated calls
 * (after the first MF_REP_TIMED) share one timed pair: a power of two
 * from 1 (every call timed) to 65536. Unset or invalid means MF_SAMPLE
 * (with a warning on rank 0 for an invalid value). */
static int64_t sample_mask(const char *v)
{
	if (!v || !*v)
		return MF_SAMPLE - 1;
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (errno || *end || n < 1 || n > 65536 || (n & (n - 1))) {
		if (G.rank == 0)
			fprintf(stderr, "mpiflow: MPIFLOW_SAMPLE=%s: use a power of two from 1 to 65536; using %d\n", v,
				MF_SAMPLE);
		return MF_SAMPLE - 1;
	}
	return n - 1;
}

/* local_ranks returns the number of ranks on this host as the launcher
 * tells it (Open MPI, MPICH's Hydra), or 0 if it does not. */
static long local_ranks(void)
{
	const char *names[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		const char *v = getenv(names[i]);
		if (v && *v)
			return atol(v);
	}
	return 0;
}

/* tight_ok parses MPIFLOW_EXACT: 1 times every call, 0 (the default)
 * times only a sample of fast runs of repeats (MF_TIGHT_NS) unless the
 * host runs more ranks than it has processors: ranks that take turns on a
 * processor are descheduled inside calls and gaps alike, and the split of
 * an untimed stretch would be guesswork. Sampling (MPIFLOW_SAMPLE > 1)
 * has its own. */
static int tight_ok(int exact, int64_t sample)
{
	const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return !exact && !sample && !(cpus > 0 && local_ranks() > cpus);
}

void mf_start(int64_t init_mono, int64_t init_real, int provided)
{
	G.started = 1;
	if (G.active)
		return;
	PMPI_Comm_rank(MPI_COMM_WORLD, &G.rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &G.size);
	if (mf_flag("MPIFLOW_DISABLE", 0))
		return;
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
	G.timing_bytes = size_setting("MPIFLOW_TIMING", getenv("MPIFLOW_TIMING"), MF_TIMING_BYTES);
	G.budget = budget(getenv("MPIFLOW_BUDGET"), getenv("MPIFLOW_ORDER"));
	/* the timing takes at most the budget; at MPI_Finalize, where the
	 * sequences need room, it is merged to fit what they leave or half
	 * of it (FitBudgetFrom) */
	if (G.budget > 0 && G.timing_bytes > G.budget)
		G.timing_bytes = G.budget < MF_TIMING_MIN ? MF_TIMING_MIN : G.budget;
	G.sample_mask = sample_mask(getenv("MPIFLOW_SAMPLE"));
	G.tight_ok = tight_ok(mf_flag("MPIFLOW_EXACT", 0), G.sample_mask);
	mf_flag("MPIFLOW_QUIET", 0); /* read by the Go part: warned of here */
	if (mf_rec_init(&G.main.rec, G.keyflags, G.timing_bytes, G.max_intervals) || add_thread(&G.main)) {
		fprintf(stderr, "mpiflow: rank %d: out of memory, not recording\n", G.rank);
		return;
	}
	G.main.rec.cfg.sample_mask = G.sample_mask;
	G.main.rec.cfg.tight_ok = G.tight_ok;
	job_id(G.job, sizeof G.job);
	set_output_dir(init_real);
	G.trace = mf_flag("MPIFLOW_TRACE", 0);
	open_trace(&G.main);
	G.main.rec.cfg.ncounters = mf_papi_start();
	mf_rec_mode(&G.main.rec);
	G.init_mono = init_mono;
	G.init_real = init_real;
	G.threads = provided == MPI_THREAD_SERIALIZED || provided == MPI_THREAD_MULTIPLE;
	mf_recv_shared = G.threads;
	G.active = 1;
	if (mf_core_hooks.start)
		mf_core_hooks.start();
	G.ckpt_every = checkpoint_every(getenv("MPIFLOW_CHECKPOINT"));
	if (mf_core_hooks.thread)
		mf_core_hooks.thread(&G.main);
	mf_tls_rec = &G.main.rec;
}

mf_rec *mf_thread_rec(void)
{
	if (!G.threads || !G.active)
		return NULL;
	mf_thr *t = aligned_alloc(_Alignof(mf_thr), sizeof *t); /* the recorder's hot cache line */
	if (t)
		memset(t, 0, sizeof *t);
	if (!t || mf_rec_init(&t->rec, G.keyflags, G.timing_bytes, G.max_intervals)) {
		free(t);
		return NULL;
	}
	t->rec.cfg.sample_mask = G.sample_mask;
	t->rec.cfg.tight_ok = G.tight_ok;
	pthread_mutex_lock(&G.mu);
	int ok = G.active && !add_thread(t);
	pthread_mutex_unlock(&G.mu);
	if (!ok) {
		mf_rec_free(&t->rec);
		free(t);
		return NULL;
	}
	/* PAPI counts per thread: this one gets its own event set. */
	t->rec.cfg.ncounters = mf_papi_thread(t->index);
	mf_rec_mode(&t->rec);
	open_trace(t);
	if (mf_core_hooks.thread)
		mf_core_hooks.thread(t);
	mf_tls_rec = &t->rec;
	return &t->rec;
}

/* never_started says, at the end of a process that initialized MPI without
 * passing through the library's MPI_Init, MPI_Init_thread or their Fortran
 * entry points, that nothing was recorded: a program that calls PMPI_Init,
 * or whose binding looks MPI_Init up in the MPI library itself (ctypes,
 * MPI.jl), or a Fortran binding whose names the library does not define,
 * would otherwise end with no profile and no word. The process of world
 * rank 0 says it (by its launcher's environment; a singleton too).
 * Destructors of a preloaded library run before those of the MPI library
 * it needs. */
__attribute__((destructor)) static void never_started(void)
{
	int init = 0;
	if (G.started || PMPI_Initialized(&init) != MPI_SUCCESS || !init)
		return;
	const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		const char *v = getenv(vars[i]);
		if (v && *v && strcmp(v, "0"))
			return; /* not rank 0 */
	}
	fprintf(stderr, "mpiflow: MPI was initialized without calling MPI_Init or MPI_Init_thread through mpiflow "
			"(PMPI_Init, or a binding that looks MPI_Init up in the MPI library itself?): nothing was recorded, "
			"no profile written\n");
}
