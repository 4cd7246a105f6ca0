/*
 * recorder.c: setting up and freeing a recorder, and parsing MPIFLOW_KEY.
 * record.h has the hot path; tables.c, seq.c, settle.c, tight.c,
 * timing.c, tmenc.c and trace.c its slow paths by concern.
 */
#include "recorder.h"
#include "record.h"
#include "clock.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* thread_cpu is the calling thread's CPU time in ns, -1 if unknown. */
static int64_t thread_cpu(const mf_rec *r)
{
	(void)r;
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return -1;
	return MF_SLOWDOWN((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec); /* as mf_now's times */
}

int mf_rec_init(mf_rec *r, uint32_t keyflags, int64_t timing_bytes, int64_t max_intervals)
{
	memset(r, 0, sizeof(*r));
	r->cfg.keyflags = keyflags;
	r->initial = -1;
	r->prev = -1;
	r->rep_call = -1;
	r->cfg.sample_mask = MF_SAMPLE - 1;
	r->rng = 0x9e3779b97f4a7c15u;
	r->cpu_now = thread_cpu;
	if (timing_bytes == 0)
		timing_bytes = MF_TIMING_BYTES;
	timing_bytes = timing_bytes < MF_TIMING_MIN ? MF_TIMING_MIN : timing_bytes > MF_TIMING_MAX ? MF_TIMING_MAX : timing_bytes;
	r->tm.budget = 2 * (timing_bytes - MF_TM_HEAD);
	r->tm.maxint = max_intervals >= 2 ? max_intervals : 0;
	r->tm.spacing = 1;
	r->iv.deadline = r->iv.long_ns = INT64_MAX;
	r->iv.gen = 1;
	r->tm.mgen = 1;
	r->tm.pgen = 1;
	r->cfg.trace_fd = -1;
	r->bk.edge = -1;
	r->ckpt_next = INT64_MAX;
	r->tab.nhashcap = 256;
	r->tab.ehashcap = 256;
	r->tab.shashcap = 64;
	r->tab.nhash = calloc(r->tab.nhashcap, sizeof(int32_t));
	r->tab.ehash = calloc(r->tab.ehashcap, sizeof(int32_t));
	r->tab.shash = calloc(r->tab.shashcap, sizeof(int32_t));
	r->tm.buf[0] = malloc((size_t)(r->tm.budget / 2 + 1));
	r->tm.buf[1] = malloc((size_t)(r->tm.budget / 2 + 1));
	if (!r->tab.nhash || !r->tab.ehash || !r->tab.shash || !r->tm.buf[0] || !r->tm.buf[1]) {
		mf_rec_free(r);
		return -1;
	}
	mf_tm_publish(r);
	mf_rec_mode(r);
	return 0;
}

void mf_rec_free(mf_rec *r)
{
	r->rep_call = -1; /* a call after MPI_Finalize must not reach the freed tables */
	for (int32_t i = 0; i < r->tab.nnodes; i++)
		free(r->tab.nodes[i].partners);
	for (int32_t i = 0; i < r->tab.nedges; i++) {
		free(r->tab.edges[i].terms);
		free(r->tab.edges[i].roots);
	}
	free(r->bk.terms);
	r->bk.terms = NULL;
	r->bk.cap = 0;
	free(r->tab.nodes);
	free(r->tab.edges);
	free(r->tab.sites);
	free(r->tab.nhash);
	free(r->tab.ehash);
	free(r->tab.shash);
	free(r->tm.buf[0]);
	free(r->tm.buf[1]);
	free(r->tm.ids[0]);
	free(r->tm.ids[1]);
	free(r->iv.ids[0]);
	free(r->iv.ids[1]);
	free(r->tm.mlist[0]);
	free(r->tm.mlist[1]);
	free(r->tm.plist);
	free(r->tm.carry);
	free(r->tm.m);
	free(r->tm.p);
	free(r->tm.entries);
	free(r->tm.codes);
	free(r->tm.rests);
	free(r->tm.kept);
	free(r->tm.order);
	free(r->tr.buf);
	r->tab.nodes = NULL;
	r->tab.edges = NULL;
	r->tab.sites = NULL;
	r->tab.nhash = r->tab.ehash = r->tab.shash = NULL;
	r->tm.buf[0] = r->tm.buf[1] = NULL;
	r->tm.ids[0] = r->tm.ids[1] = NULL;
	r->tm.idcap[0] = r->tm.idcap[1] = 0;
	r->iv.ids[0] = r->iv.ids[1] = r->tm.mlist[0] = r->tm.mlist[1] = r->tm.plist = r->tm.entries = NULL;
	r->tm.carry = NULL;
	r->tm.m = r->tm.p = NULL;
	r->tm.codes = NULL;
	r->tm.rests = NULL;
	r->tm.kept = NULL;
	r->tm.order = NULL;
	r->tm.pub[0].buf = r->tm.pub[1].buf = NULL;
	r->tm.pub[0].len = r->tm.pub[1].len = 0;
	r->tm.pub[0].nclosed = r->tm.pub[1].nclosed = 0;
	r->tr.buf = NULL;
	r->tab.nnodes = r->tab.nedges = r->tab.nsites = 0;
}

int mf_parse_key(const char *s, uint32_t *flags)
{
	if (!s || !*s) {
		*flags = MF_KEY_SITE;
		return 0;
	}
#define MF_KEY_FIELD(name, bit) {name, sizeof name - 1, bit},
	static const struct {
		const char *name;
		size_t len;
		uint32_t bit;
	} fields[] = {MF_KEY_FIELDS(MF_KEY_FIELD)};
#undef MF_KEY_FIELD
	uint32_t f = 0;
	int names = 0; /* ",," names nothing: an error, not "call" */
	while (*s) {
		const char *e = strchr(s, ',');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		names += n != 0;
		size_t i = 0;
		while (i < sizeof fields / sizeof fields[0] && !(n == fields[i].len && !strncmp(s, fields[i].name, n)))
			i++;
		if (i < sizeof fields / sizeof fields[0])
			f |= fields[i].bit;
		else if (n != 0)
			return -1;
		s += n;
		if (*s == ',')
			s++;
	}
	if (!names)
		return -1;
	*flags = f;
	return 0;
}

void mf_rec_fail(mf_rec *r)
{
	r->failed = 1;
	r->rep_call = -1; /* no more repeats either */
	mf_rec_mode(r);
}
