/* recbench: the recorder alone, without MPI or a clock, as instructions
 * and nanoseconds per event (make bench-recorder). Each run records N
 * events of a loop of BODY calls (one call site each) with durations and
 * gaps that vary a little, as the wrappers do (a loop of 1 call is a run of
 * repeats: mf_record_repeat); the best of 3
 * runs is printed. Run it under valgrind --tool=callgrind to count
 * instructions, which this shared machine's timings cannot resolve to a
 * few ns. */
#include "record.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int body = argc > 2 ? atoi(argv[2]) : 1;
	int reps = argc > 3 ? atoi(argv[3]) : 3;
	if (n < 1 || body < 1 || reps < 1) {
		fprintf(stderr, "usage: recbench [EVENTS [BODY [RUNS]]]\n");
		return 2;
	}
	mf_event *evs = malloc(sizeof(mf_event) * (size_t)n);
	if (!evs)
		return 1;
	int64_t t = 1000;
	for (long i = 0; i < n; i++) {
		int c = (int)(i % body);
		evs[i] = (mf_event){.call = c, .partner = -1, .comm = -1, .site = 0x1000 + (uint64_t)c * 16,
				    .enter = t, .exit = t + 50 + (i & 7)};
		t += 100 + (i % 13);
	}
	double best = 1e30;
	for (int r = 0; r < reps; r++) {
		mf_rec rec;
		if (mf_rec_init(&rec, MF_KEY_SITE, 0, 0))
			return 1;
		double s = now();
		for (long i = 0; i < n; i++) {
			/* as the wrappers do */
			int how = mf_repeat(&rec, evs[i].call, evs[i].site);
			if (how)
				mf_record_repeat(&rec, &evs[i], how);
			else
				mf_record(&rec, &evs[i]);
		}
		double e = (now() - s) / (double)n * 1e9;
		best = e < best ? e : best;
		mf_rec_free(&rec);
	}
	printf("recorder: %ld events, loop of %d calls: %.1f ns/event (best of %d)\n", n, body, best, reps);
	free(evs);
	return 0;
}
