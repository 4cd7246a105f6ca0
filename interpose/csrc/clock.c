/*
 * clock.c: the choice of clock and the TSC's calibration and
 * re-synchronization (see clock.h).
 */
#include "clock.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How often a thread's TSC map is re-synchronized with CLOCK_MONOTONIC,
 * and how long the first calibration takes. Within a span the map drifts
 * by the difference of the rates (NTP slews CLOCK_MONOTONIC by at most
 * 500 ppm: 500 ns per ms). */
#define MF_CLOCK_SPAN_NS 1000000
#define MF_CLOCK_CALIBRATE_NS 1000000
/* The rate is measured over a thread's life once that is this many spans
 * long (the error of a synchronization, ~20 ns, then adds < 1e-6). */
#define MF_CLOCK_RATE_SPANS 64
/* A synchronization is trusted when its TSC reads are at most this far
 * apart (clock_gettime takes 25-40 ns): its error is at most half. */
#define MF_CLOCK_SYNC_NS 400

int mf_clock_kind;
__thread mf_clock mf_tls_clock __attribute__((tls_model("initial-exec")));

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char warning[160];
#ifdef MF_HAVE_TSC
static uint64_t init_mult;  /* ns per tick, 32.32, from the calibration */
static uint64_t span_ticks; /* MF_CLOCK_SPAN_NS in ticks */
static uint64_t sync_limit; /* MF_CLOCK_SYNC_NS in ticks */

/* sync_point reads the TSC and CLOCK_MONOTONIC at nearly the same instant:
 * the reading between the closest pair of TSC reads, of at least tries and
 * at most 16 while the pairs are more than limit ticks apart (the thread
 * was preempted or interrupted in between). It returns that pair's width,
 * twice the largest error of *tsc. */
static uint64_t sync_point(int tries, uint64_t limit, uint64_t *tsc, int64_t *ns)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 16 && (i < tries || best > limit); i++) {
		uint64_t a = __rdtsc();
		int64_t m = mf_mono();
		uint64_t b = __rdtsc();
		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = m;
		}
	}
	return best;
}

/* tsc_invariant reports whether the first "flags" line of /proc/cpuinfo lists
 * both constant_tsc and nonstop_tsc. */
static int tsc_invariant(void)
{
	static char buf[16384];
	int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = 0, r;
	while (n < (ssize_t)sizeof buf - 1 && (r = read(fd, buf + n, sizeof buf - 1 - (size_t)n)) > 0)
		n += r;
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	char *line = strstr(buf, "\nflags");
	if (!line)
		return 0;
	char *end = strchr(line + 1, '\n');
	if (end)
		*end = 0;
	return strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
}

/* calibrate measures the tick rate over MF_CLOCK_CALIBRATE_NS. */
static int calibrate(void)
{
	uint64_t t1, t2;
	int64_t m1, m2;
	sync_point(8, UINT64_MAX, &t1, &m1);
	while (mf_mono() < m1 + MF_CLOCK_CALIBRATE_NS)
		;
	sync_point(8, UINT64_MAX, &t2, &m2);
	if (t2 <= t1 || m2 <= m1)
		return -1;
	init_mult = (uint64_t)(((unsigned __int128)(m2 - m1) << 32) / (t2 - t1));
	if (init_mult == 0)
		return -1;
	span_ticks = (uint64_t)(((unsigned __int128)MF_CLOCK_SPAN_NS << 32) / init_mult);
	sync_limit = (uint64_t)(((unsigned __int128)MF_CLOCK_SYNC_NS << 32) / init_mult);
	return 0;
}
#endif

static void choose(void)
{
	const char *v = getenv("MPIFLOW_CLOCK");
	int want = MF_CLOCK_UNSET;
	if (v && *v) {
		if (!strcmp(v, "tsc"))
			want = MF_CLOCK_TSC;
		else if (!strcmp(v, "monotonic"))
			want = MF_CLOCK_MONOTONIC;
		else
			snprintf(warning, sizeof warning, "MPIFLOW_CLOCK=%.40s: use tsc or monotonic; choosing by the CPU", v);
	}
	int kind = MF_CLOCK_MONOTONIC;
#ifdef MF_HAVE_TSC
	if (want != MF_CLOCK_MONOTONIC) {
		int inv = tsc_invariant();
		if (want == MF_CLOCK_TSC && !inv)
			snprintf(warning, sizeof warning,
				 "MPIFLOW_CLOCK=tsc: the CPU does not report an invariant TSC (constant_tsc, nonstop_tsc); using it anyway");
		if ((inv || want == MF_CLOCK_TSC) && calibrate() == 0)
			kind = MF_CLOCK_TSC;
	}
#else
	if (want == MF_CLOCK_TSC)
		snprintf(warning, sizeof warning, "MPIFLOW_CLOCK=tsc: no TSC on this CPU; using CLOCK_MONOTONIC");
#endif
	__atomic_store_n(&mf_clock_kind, kind, __ATOMIC_RELEASE);
}

#ifdef MF_HAVE_TSC
/* resync starts a new span of the calling thread's map at the current
 * instant. The new map starts at CLOCK_MONOTONIC, or where the old span
 * ended if that is later (times handed out never exceed it), so times
 * never go backwards; when it is ahead, it runs slower for one span so
 * that CLOCK_MONOTONIC catches up. The rate is the calibration's until the
 * thread has run MF_CLOCK_RATE_SPANS spans, then measured over its life. */
static int64_t resync(mf_clock *c)
{
	uint64_t t;
	int64_t m;
	if (c->span == 0) {
		sync_point(3, sync_limit, &t, &m);
		*c = (mf_clock){.base_tsc = t, .span = span_ticks, .base_ns = m, .mult = init_mult,
				.rate = init_mult, .first_tsc = t, .first_ns = m};
		return m;
	}
	int trusted = sync_point(1, sync_limit, &t, &m) <= sync_limit;
	int64_t d = (int64_t)(t - c->base_tsc);
	if (!trusted) /* carry on with the map */
		m = d > 0 ? c->base_ns + (int64_t)(((unsigned __int128)d * c->mult) >> 32) : c->base_ns;
	int64_t end = c->base_ns + (int64_t)(((unsigned __int128)c->span * c->mult) >> 32);
	if (trusted && t - c->first_tsc >= MF_CLOCK_RATE_SPANS * span_ticks && m > c->first_ns)
		c->rate = (uint64_t)(((unsigned __int128)(m - c->first_ns) << 32) / (t - c->first_tsc));
	uint64_t rate = c->rate;
	int64_t base = end > m ? end : m;
	uint64_t slow = (uint64_t)(((unsigned __int128)(base - m) << 32) / span_ticks);
	c->mult = slow < rate / 2 ? rate - slow : rate / 2;
	c->base_tsc = t;
	c->base_ns = base;
	return base;
}
#endif

int64_t mf_clock_slow(void)
{
	if (__atomic_load_n(&mf_clock_kind, __ATOMIC_ACQUIRE) == MF_CLOCK_UNSET)
		pthread_once(&once, choose);
#ifdef MF_HAVE_TSC
	if (mf_clock_kind == MF_CLOCK_TSC)
		return resync(&mf_tls_clock);
#endif
	return mf_mono();
}

const char *mf_clock_name(void)
{
	return mf_clock_kind == MF_CLOCK_TSC ? "TSC synchronized to CLOCK_MONOTONIC" : "CLOCK_MONOTONIC";
}

const char *mf_clock_warning(void)
{
	return warning[0] ? warning : NULL;
}
