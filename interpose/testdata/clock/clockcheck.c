/* clockcheck SECONDS THREADS [light]: calls mf_now (csrc/clock.c) in
 * THREADS threads for SECONDS seconds, now and then sleeping up to 20 ms
 * (with light, also 200 us after every 256 calls, to leave the CPU to
 * others), and
 * checks that each thread's times never go backwards and that every 64th
 * lies within TOLERANCE_NS of CLOCK_MONOTONIC read just before and after.
 * Prints "clock <name> calls N checked C ahead_ns A behind_ns B" (the
 * largest deviations seen) and exits 1 on a violation. */
#include "clock.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOLERANCE_NS 1000

static double seconds;
static int light;

typedef struct {
	long calls, checked, bad;
	int64_t ahead, behind;
	unsigned seed;
} result;

static void *run(void *arg)
{
	result *r = arg;
	int64_t end = mf_mono() + (int64_t)(seconds * 1e9), prev = INT64_MIN;
	for (long i = 0;; i++) {
		int64_t m1 = 0, m2 = 0, t;
		int check = (i & 63) == 0;
		if (check)
			m1 = mf_mono();
		t = mf_now();
		if (check) {
			m2 = mf_mono();
			r->checked++;
			if (t - m2 > r->ahead)
				r->ahead = t - m2;
			if (m1 - t > r->behind)
				r->behind = m1 - t;
			if (t > m2 + TOLERANCE_NS || t < m1 - TOLERANCE_NS) {
				if (r->bad++ < 5)
					fprintf(stderr, "clockcheck: %lld ns, CLOCK_MONOTONIC %lld..%lld\n", (long long)t,
						(long long)m1, (long long)m2);
			}
			if (m2 > end)
				break;
		}
		if (t < prev) {
			if (r->bad++ < 5)
				fprintf(stderr, "clockcheck: went backwards: %lld after %lld\n", (long long)t, (long long)prev);
		}
		prev = t;
		r->calls++;
		if (light && (i & 255) == 255)
			usleep(200);
		if (rand_r(&r->seed) % 200000 == 0)
			usleep((useconds_t)(rand_r(&r->seed) % 20000));
	}
	return NULL;
}

int main(int argc, char **argv)
{
	seconds = argc > 1 ? atof(argv[1]) : 5;
	int n = argc > 2 ? atoi(argv[2]) : 2;
	light = argc > 3 && !strcmp(argv[3], "light");
	if (seconds <= 0 || n < 1 || n > 64) {
		fprintf(stderr, "usage: clockcheck SECONDS THREADS [light]\n");
		return 2;
	}
	pthread_t th[64];
	result res[64] = {{0}};
	for (int i = 0; i < n; i++) {
		res[i].seed = (unsigned)i + 1;
		if (pthread_create(&th[i], NULL, run, &res[i])) {
			perror("clockcheck: pthread_create");
			return 2;
		}
	}
	result all = {0};
	for (int i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		all.calls += res[i].calls;
		all.checked += res[i].checked;
		all.bad += res[i].bad;
		all.ahead = res[i].ahead > all.ahead ? res[i].ahead : all.ahead;
		all.behind = res[i].behind > all.behind ? res[i].behind : all.behind;
	}
	printf("clock %s calls %ld checked %ld ahead_ns %lld behind_ns %lld\n", mf_clock_name(), all.calls, all.checked,
	       (long long)all.ahead, (long long)all.behind);
	const char *w = mf_clock_warning();
	if (w)
		printf("warning %s\n", w);
	return all.bad ? 1 : 0;
}
