/*
 * crash.c: the partial files of runs that never reach MPI_Finalize: their
 * header prepared at MPI_Init, the crash paths that write them (at exit,
 * MPI_Abort, fatal signals) and the checkpoints that cover SIGKILL.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "crash.h"
#include "core.h"
#include "wrappers_gen.h"
#include "partial.h"

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

/* write_partial writes the partial file of thread t in dir and returns 0
 * or a negative errno. safe: outside a signal handler, so dladdr and malloc
 * may be used to locate call sites. */
static int write_partial(mf_thr *t, mf_partial_info in, const char *dir, int safe)
{
	mf_rec snap = t->rec;
	if (snap.busy)
		snap.failed = 1; /* the writer then keeps to what is consistent */
	in.thread = t->index;
	in.regions = mf_regions(&in.nregions);
	mf_partial_site *sites = NULL;
	if (safe && snap.tab.nsites > 0 && (sites = calloc((size_t)snap.tab.nsites, sizeof *sites))) {
		for (int k = 0; k < snap.tab.nsites; k++) {
			const mf_region *rg = mf_region_of(in.regions, in.nregions, snap.tab.sites[k]);
			const uint64_t addr = rg ? rg->caller : snap.tab.sites[k];
			Dl_info di;
			if (!dladdr((void *)(uintptr_t)addr, &di) || !di.dli_fname)
				continue;
			sites[k].obj = di.dli_fname[0] == '/' ? di.dli_fname : P.exe_path;
			sites[k].off = addr - (uint64_t)(uintptr_t)di.dli_fbase;
		}
	}
	in.sites = sites;
	in.nsites = sites ? snap.tab.nsites : 0;
	int rc = mf_write_partial(&snap, &in, dir);
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
		int rc = write_partial(G.thr[i], in, P.dir, safe);
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
	int rc = write_partial(t, in, P.dir, 1);
	t->ckpt_written = 1;
	if (rc < 0) {
		/* No more checkpoints of this thread; one warning per job. */
		r->ckpt_next = INT64_MAX;
		if (G.rank == 0 && t->index == 0)
			fprintf(stderr, "mpiflow: cannot write a checkpoint in %s: %s; no more checkpoints (MPIFLOW_CHECKPOINT)\n",
				P.dir, strerror(-rc));
	}
}

/* mf_start_checkpoints arms the checkpoints of thread t: the first one at
 * its next call, the second 1 s later (or MPIFLOW_CHECKPOINT if shorter;
 * checkpoint doubles the gap before using it). */
void mf_start_checkpoints(mf_thr *t)
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

/* mf_partial_setup prepares the partial file's header at MPI_Init. */
void mf_partial_setup(void)
{
	if (!mf_flag("MPIFLOW_PARTIAL", 1))
		return;
	gethostname(P.host, sizeof P.host - 1);
	snprintf(P.job, sizeof P.job, "%s", G.job);
	int n = 0, ver = 0, sub = 0;
	PMPI_Get_library_version(P.lib, &n);
	for (char *c = P.lib; *c; c++)
		if (*c == '\n' || *c == ',') {
			*c = 0;
			break;
		}
	PMPI_Get_version(&ver, &sub);
	snprintf(P.ver, sizeof P.ver, "%d.%d", ver, sub);
	if (!realpath(mf_output_dir(), P.dir))
		snprintf(P.dir, sizeof P.dir, "%s", mf_output_dir());
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
		.counters = mf_papi_names(),
		.names = mf_call_names,
		.ncalls = mf_ncalls,
		.rusage = 1,
	};
	P.ready = 1;
	install_crash_paths();
}

/* mf_partial_off stops the partial files for good: MPI_Finalize frees the
 * tables they are written from. */
void mf_partial_off(void) { P.done = 1; }

/* remove_checkpoint removes the checkpoint file of thread t. */
static void remove_checkpoint(mf_thr *t)
{
	free(t->ckpt_buf);
	t->ckpt_buf = NULL;
	if (!t->ckpt_written)
		return;
	mf_partial_info in = P.info;
	in.thread = t->index;
	char path[PATH_MAX];
	if (mf_partial_path(&in, P.dir, path, sizeof path) > 0)
		unlink(path);
	t->ckpt_written = 0;
}

/* mf_remove_checkpoints removes the checkpoint files once the job file is
 * written: the run finished, they are stale. */
void mf_remove_checkpoints(void)
{
	for (int i = 0; i < G.nthr; i++)
		remove_checkpoint(G.thr[i]);
}

/* mf_partial_fallback keeps what every thread of this rank recorded, in
 * complete partial files, when the job file could not be written (a full
 * file system, a Go part that did not load): in the output directory, else
 * in $TMPDIR (or /tmp); a failed write leaves nothing. Collective: rank 0
 * says where the job's data went and how to join it. wall: ns from
 * MPI_Init to MPI_Finalize. */
void mf_partial_fallback(int64_t wall)
{
	const char *tmp = getenv("TMPDIR");
	char alt[PATH_MAX];
	if (!tmp || !*tmp)
		tmp = "/tmp";
	if (!realpath(tmp, alt))
		snprintf(alt, sizeof alt, "%s", tmp);
	/* partial files kept in the output directory, in alt, and lost */
	int64_t n[3] = {0, 0, 0};
	for (int i = 0; P.ready && i < G.nthr; i++) {
		mf_thr *t = G.thr[i];
		mf_partial_info in = P.info;
		in.wall = wall;
		in.complete = 1;
		if (write_partial(t, in, P.dir, 1) == 0) {
			free(t->ckpt_buf); /* the checkpoint was replaced */
			t->ckpt_buf = NULL;
			t->ckpt_written = 0;
			n[0]++;
		} else if (strcmp(alt, P.dir) && write_partial(t, in, alt, 1) == 0) {
			remove_checkpoint(t);
			n[1]++;
		} else {
			n[2]++;
		}
	}
	if (!P.ready || PMPI_Allreduce(MPI_IN_PLACE, n, 3, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS || G.rank != 0)
		return;
	/* the file names as mf_partial_path makes them, rank 0's made a pattern */
	mf_partial_info in = P.info;
	char name[PATH_MAX] = "", *r0;
	if (mf_partial_path(&in, "", name, sizeof name) <= 0 || !(r0 = strstr(name, ".rank0.partial.mpiflow")))
		return;
	*r0 = 0;
	for (int k = 0; k < 2; k++)
		if (n[k])
			fprintf(stderr, "mpiflow: %lld partial profile(s) kept in %s%s; join them with: mpiflow merge %s.mpiflow %s/%s.rank*.partial.mpiflow\n",
				(long long)n[k], k ? alt : P.dir, k ? " on each rank's host" : "", name, k ? alt : P.dir, name);
	if (n[2])
		fprintf(stderr, "mpiflow: the data of %lld rank thread(s) is lost\n", (long long)n[2]);
}

/* register_hooks hands core the partial files' setup and the checkpoints
 * of each recording thread (core.h, mf_hooks) when the library loads. */
__attribute__((constructor)) static void register_hooks(void)
{
	mf_core_hooks.start = mf_partial_setup;
	mf_core_hooks.thread = mf_start_checkpoints;
}
