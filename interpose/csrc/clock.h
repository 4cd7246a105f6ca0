/*
 * clock.h: the timestamps of MPI calls, in nanoseconds of CLOCK_MONOTONIC.
 *
 * clock_gettime costs 25-40 ns through the vDSO on the virtual machines we
 * measure, more than the rest of a recorded call. Where the TSC is
 * invariant (the CPU reports constant_tsc and nonstop_tsc) mf_now reads it
 * instead (~11-15 ns) and converts ticks to CLOCK_MONOTONIC nanoseconds
 * with a per-thread linear map that is re-synchronized with clock_gettime
 * every MF_CLOCK_SPAN_NS (clock.c), so times stay within about a
 * microsecond of CLOCK_MONOTONIC (NTP slews it; the TSC is not slewed) and
 * never go backwards on a thread. MPIFLOW_CLOCK=tsc|monotonic forces one.
 * Needs no MPI header: clock.c is also built into a test program.
 */
#ifndef MPIFLOW_CLOCK_H
#define MPIFLOW_CLOCK_H

#include <stdint.h>
#include <time.h>

#include "visibility.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define MF_HAVE_TSC 1
#endif

/* The clock in use: 0 until the first mf_now, then one of these. */
enum { MF_CLOCK_UNSET = 0, MF_CLOCK_MONOTONIC = 1, MF_CLOCK_TSC = 2 };
extern int mf_clock_kind MF_HIDDEN;

/* A thread's map from TSC ticks to nanoseconds, valid for ticks in
 * [base_tsc, base_tsc + span): ns = base_ns + ((tsc - base_tsc) * mult >> 32).
 * span 0: not set up yet (a new thread). */
typedef struct {
	uint64_t base_tsc, span;
	int64_t base_ns;
	uint64_t mult;      /* ns per tick, 32.32 fixed point */
	uint64_t rate;      /* the measured tick rate, the same unit */
	uint64_t first_tsc; /* the thread's first synchronization, from */
	int64_t first_ns;   /* which the rate is measured */
} mf_clock;
extern __thread mf_clock mf_tls_clock __attribute__((tls_model("initial-exec"))) MF_HIDDEN;

static inline int64_t mf_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* mf_clock_slow chooses the clock on first use and re-synchronizes the
 * TSC map when a thread's span is over. */
MF_HIDDEN int64_t mf_clock_slow(void);

/* mf_clock_name describes the clock in use, as stored in job files. */
MF_HIDDEN const char *mf_clock_name(void);

/* mf_clock_warning is a problem with MPIFLOW_CLOCK to report once (or
 * NULL), known only after the first mf_now. */
MF_HIDDEN const char *mf_clock_warning(void);

/* MF_SLOWDOWN(t) is time t as the recorder sees it: t itself, but in the
 * library that make bench-wrappers counts under valgrind, which runs code
 * some MF_SLOWDOWN_BY times slower, t / MF_SLOWDOWN_BY, so that its rules
 * that depend on time (which repeats go untimed, when timing intervals
 * end) take the branches of a run without valgrind. */
#ifdef MF_SLOWDOWN_BY
#define MF_SLOWDOWN(t) ((t) / MF_SLOWDOWN_BY)
#else
#define MF_SLOWDOWN(t) (t)
#endif
/* mf_now is the time of an MPI call's enter or exit. */
static inline int64_t mf_now(void)
{
#ifdef MF_HAVE_TSC
	if (__builtin_expect(mf_clock_kind == MF_CLOCK_TSC, 1)) {
		mf_clock *c = &mf_tls_clock;
		uint64_t d = __rdtsc() - c->base_tsc;
		if (__builtin_expect(d < c->span, 1))
			return MF_SLOWDOWN(c->base_ns + (int64_t)(((unsigned __int128)d * c->mult) >> 32));
	}
#endif
	return MF_SLOWDOWN(mf_clock_slow());
}

/* mf_now_real is the wall-clock time, ns since the epoch. */
static inline int64_t mf_now_real(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#endif
