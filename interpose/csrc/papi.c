/*
 * papi.c: the hardware counters of MPIFLOW_PAPI, through a dlopen()ed
 * libpapi: setting them up at MPI_Init and reading them per call.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "papi.h"
#include "core.h"

/* Hardware counters (MPIFLOW_PAPI), read through a dlopen()ed libpapi so
 * that the library works where PAPI is absent. PAPI counts per thread:
 * each recording thread has an event set of its own with the counters
 * the main thread could add, in the same order. */
static struct {
	int (*create)(int *eventset);
	int (*add)(int eventset, const char *name);
	int (*start)(int eventset);
	int (*read)(int eventset, long long *values);
	int n;
	char names[512]; /* comma-separated, for the header */
	int threads;     /* PAPI_thread_init succeeded: other threads may count */
	int warned;      /* a thread without counters was reported (rank 0, as the others) */
} papi;

/* The calling thread's event set and last values. */
static __thread int tls_eventset __attribute__((tls_model("initial-exec"))) = -1;
static __thread int64_t tls_last[MF_MAX_COUNTERS] __attribute__((tls_model("initial-exec")));

void mf_counters_read(int64_t *v)
{
	long long tmp[MF_MAX_COUNTERS];
	if (papi.read(tls_eventset, tmp) == 0)
		for (int i = 0; i < papi.n; i++)
			tls_last[i] = tmp[i];
	/* On a failed read, repeat the last values: the phase counts 0. */
	for (int i = 0; i < papi.n; i++)
		v[i] = tls_last[i];
}

static unsigned long thread_id(void) { return (unsigned long)pthread_self(); }

/* mf_papi_start sets up the counters named in MPIFLOW_PAPI and returns how
 * many work; rank 0 says once why others do not. */
int mf_papi_start(void)
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
	int (*thread_init)(unsigned long (*)(void)) = h ? (int (*)(unsigned long (*)(void)))dlsym(h, "PAPI_thread_init") : NULL;
	papi.create = h ? (int (*)(int *))dlsym(h, "PAPI_create_eventset") : NULL;
	papi.add = h ? (int (*)(int, const char *))dlsym(h, "PAPI_add_named_event") : NULL;
	papi.start = h ? (int (*)(int))dlsym(h, "PAPI_start") : NULL;
	papi.read = h ? (int (*)(int, long long *))dlsym(h, "PAPI_read") : NULL;
	if (!init || !papi.create || !papi.add || !papi.start || !papi.read) {
		if (G.rank == 0)
			fprintf(stderr, "mpiflow: MPIFLOW_PAPI: cannot use libpapi (%s); recording without counters\n", h ? "symbols missing" : err);
		return 0;
	}
	/* PAPI_library_init wants the exact major.minor it was built as. */
	static const int versions[] = {0x07020000, 0x07010000, 0x07000000, 0x06000000, 0x05070000, 0x05060000, 0x05050000, 0x05040000};
	int ok = 0;
	for (size_t i = 0; i < sizeof versions / sizeof versions[0] && !ok; i++)
		ok = init(versions[i]) == versions[i];
	/* Threads need PAPI to tell them apart; without it only the main
	 * thread counts. */
	papi.threads = ok && thread_init && thread_init(thread_id) == 0;
	if (!ok || papi.create(&tls_eventset) != 0) {
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
		if (papi.add(tls_eventset, name) != 0) {
			if (G.rank == 0)
				fprintf(stderr, "mpiflow: MPIFLOW_PAPI: counter %s is not available here; going on without it\n", name);
			continue;
		}
		size_t l = strlen(papi.names);
		snprintf(papi.names + l, sizeof papi.names - l, "%s%s", l ? "," : "", name);
		papi.n++;
	}
	if (papi.n > 0 && papi.start(tls_eventset) != 0) {
		if (G.rank == 0)
			fprintf(stderr, "mpiflow: MPIFLOW_PAPI: cannot start the counters; recording without counters\n");
		papi.n = 0;
	}
	if (papi.n == 0)
		papi.names[0] = 0;
	return papi.n;
}

int mf_papi_thread(int thread)
{
	if (papi.n == 0)
		return 0;
	int ok = papi.threads && papi.create(&tls_eventset) == 0;
	char buf[512];
	snprintf(buf, sizeof buf, "%s", papi.names);
	for (char *save = NULL, *name = strtok_r(buf, ",", &save); ok && name; name = strtok_r(NULL, ",", &save))
		ok = papi.add(tls_eventset, name) == 0;
	if (ok && papi.start(tls_eventset) == 0)
		return papi.n;
	if (G.rank == 0 && !__atomic_exchange_n(&papi.warned, 1, __ATOMIC_RELAXED))
		fprintf(stderr, "mpiflow: rank %d: MPIFLOW_PAPI: no counters on thread %d (%s); its calls are recorded without\n",
			G.rank, thread, papi.threads ? "PAPI refused its event set" : "PAPI_thread_init failed");
	return 0;
}

const char *mf_papi_names(void) { return papi.names; }
