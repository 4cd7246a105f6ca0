/*
 * recorder.c: the slow paths of the recorder (new nodes, edges, sites,
 * sequence runs) and the full-trace writer; timing.c has the timing
 * intervals'. See recorder.h.
 */
#include "recorder.h"
#include "clock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Full-trace file: "MPIFLOWT", uint32 version, uint32 rank (big-endian),
 * then per event uvarint(node+1), uvarint(zigzag(enter-previous exit)),
 * uvarint(exit-enter); then uvarint(0), the node table, "MFTE".
 * flowgraph/fulltrace.go reads it. */
#define MF_TRACE_VERSION 1
#define MF_TRACE_BUF (1 << 20)

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static uint64_t node_hash(int32_t call, uint64_t site, int64_t kbytes, int32_t kpartner, int32_t kcomm)
{
	uint64_t h = mix64((uint64_t)(uint32_t)call * 0x9e3779b97f4a7c15ULL ^ site);
	h = mix64(h ^ (uint64_t)kbytes);
	return mix64(h ^ ((uint64_t)(uint32_t)kpartner << 32 | (uint32_t)kcomm));
}


/* thread_cpu is the calling thread's CPU time in ns, -1 if unknown. */
static int64_t thread_cpu(const mf_rec *r)
{
	(void)r;
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return -1;
	return MF_SLOWDOWN((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec); /* as mf_now's times */
}

void mf_tight_probe(mf_rec *r, int64_t now)
{
	const int64_t cpu = r->cpu_now(r), wall = now - r->cpu_wall;
	if (cpu < 0) { /* cannot tell: all timed */
		r->cpu_clean = 0;
		r->cpu_wall = INT64_MAX;
		return;
	}
	/* A long wait since the last probe (no fast repeats meanwhile, the
	 * thread maybe asleep in a blocking call) says nothing about them. */
	if (r->cpu_wall > 0 && wall <= MF_TIGHT_CLEAN * (int64_t)MF_TIGHT_PROBE_NS) {
		const int64_t lost = wall - (cpu - r->cpu_time);
		if (lost * MF_TIGHT_LOST > wall) {
			if (r->cpu_lost > 0 && now - r->cpu_lost < MF_TIGHT_CALM_NS)
				r->cpu_clean = 0;
			else if (r->cpu_clean > MF_TIGHT_CLEAN - MF_TIGHT_RECOVER)
				r->cpu_clean = MF_TIGHT_CLEAN - MF_TIGHT_RECOVER;
			r->cpu_lost = now;
		} else if (r->cpu_clean < MF_TIGHT_CLEAN)
			r->cpu_clean++;
	}
	r->cpu_wall = now;
	r->cpu_time = cpu;
}

void mf_node_got_(mf_rec *r, int32_t ni, int64_t posted, int64_t got)
{
	if (r->failed || ni < 0 || ni >= r->nnodes || got < 0 || got > posted)
		return;
	r->busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	mf_node *n = &r->nodes[ni];
	n->bytes.total += got - posted;
	if (got < n->bytes.min)
		n->bytes.min = got;
	mf_node_got_max(r, n, ni, got);
	if (ni == r->prev) /* not a node of a run of repeats (another call completes it), but the cache would follow */
		mf_rep_cache(r, n, n->bytes.min);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	r->busy = 0;
}

void mf_node_source(mf_rec *r, int32_t ni, int32_t rank)
{
	if (r->failed || ni < 0 || ni >= r->nnodes || rank < 0)
		return;
	r->busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	mf_node_partner(r, &r->nodes[ni], rank);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	r->busy = 0;
}

int mf_rec_init(mf_rec *r, uint32_t keyflags, int64_t timing_bytes, int64_t max_intervals)
{
	memset(r, 0, sizeof(*r));
	r->keyflags = keyflags;
	r->initial = -1;
	r->prev = -1;
	r->rep_call = -1;
	r->sample_mask = MF_SAMPLE - 1;
	r->rng = 0x9e3779b97f4a7c15u;
	r->cpu_now = thread_cpu;
	if (timing_bytes == 0)
		timing_bytes = MF_TIMING_BYTES;
	timing_bytes = timing_bytes < MF_TIMING_MIN ? MF_TIMING_MIN : timing_bytes > MF_TIMING_MAX ? MF_TIMING_MAX : timing_bytes;
	r->tm.budget = 2 * (timing_bytes - MF_TM_HEAD);
	r->tm.maxint = max_intervals >= 2 ? max_intervals : 0;
	r->tm.spacing = 1;
	r->tm_deadline = r->tm_long = INT64_MAX;
	r->tm_gen = 1;
	r->tm.mgen = 1;
	r->tm.pgen = 1;
	r->trace_fd = -1;
	r->bk_edge = -1;
	r->ckpt_next = INT64_MAX;
	r->nhashcap = 256;
	r->ehashcap = 256;
	r->shashcap = 64;
	r->nhash = calloc(r->nhashcap, sizeof(int32_t));
	r->ehash = calloc(r->ehashcap, sizeof(int32_t));
	r->shash = calloc(r->shashcap, sizeof(int32_t));
	r->tm.buf[0] = malloc((size_t)(r->tm.budget / 2 + 1));
	r->tm.buf[1] = malloc((size_t)(r->tm.budget / 2 + 1));
	if (!r->nhash || !r->ehash || !r->shash || !r->tm.buf[0] || !r->tm.buf[1]) {
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
	for (int32_t i = 0; i < r->nnodes; i++)
		free(r->nodes[i].partners);
	for (int32_t i = 0; i < r->nedges; i++) {
		free(r->edges[i].terms);
		free(r->edges[i].roots);
	}
	free(r->bk);
	r->bk = NULL;
	r->bk_cap = 0;
	free(r->nodes);
	free(r->edges);
	free(r->sites);
	free(r->nhash);
	free(r->ehash);
	free(r->shash);
	free(r->tm.buf[0]);
	free(r->tm.buf[1]);
	free(r->tm.ids[0]);
	free(r->tm.ids[1]);
	free(r->tm_open[0]);
	free(r->tm_open[1]);
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
	free(r->tbuf);
	r->nodes = NULL;
	r->edges = NULL;
	r->sites = NULL;
	r->nhash = r->ehash = r->shash = NULL;
	r->tm.buf[0] = r->tm.buf[1] = NULL;
	r->tm.ids[0] = r->tm.ids[1] = NULL;
	r->tm.idcap[0] = r->tm.idcap[1] = 0;
	r->tm_open[0] = r->tm_open[1] = r->tm.mlist[0] = r->tm.mlist[1] = r->tm.plist = r->tm.entries = NULL;
	r->tm.carry = NULL;
	r->tm.m = r->tm.p = NULL;
	r->tm.codes = NULL;
	r->tm.rests = NULL;
	r->tm.kept = NULL;
	r->tm.order = NULL;
	r->tm.pub[0].buf = r->tm.pub[1].buf = NULL;
	r->tm.pub[0].len = r->tm.pub[1].len = 0;
	r->tm.pub[0].nclosed = r->tm.pub[1].nclosed = 0;
	r->tbuf = NULL;
	r->nnodes = r->nedges = r->nsites = 0;
}

int mf_parse_key(const char *s, uint32_t *flags)
{
	if (!s || !*s) {
		*flags = MF_KEY_SITE;
		return 0;
	}
	uint32_t f = 0;
	int names = 0; /* ",," names nothing: an error, not "call" */
	while (*s) {
		const char *e = strchr(s, ',');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		names += n != 0;
		if (n == 4 && !strncmp(s, "call", 4))
			;
		else if (n == 4 && !strncmp(s, "site", 4))
			f |= MF_KEY_SITE;
		else if (n == 5 && !strncmp(s, "bytes", 5))
			f |= MF_KEY_BYTES;
		else if (n == 7 && !strncmp(s, "partner", 7))
			f |= MF_KEY_PARTNER;
		else if (n == 4 && !strncmp(s, "comm", 4))
			f |= MF_KEY_COMM;
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

/* grow doubles an array of elem-sized entries to hold at least need. */
static int grow(void **p, int32_t *cap, int32_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	int32_t nc = *cap ? *cap * 2 : 16;
	while (nc < need)
		nc *= 2;
	void *q = realloc(*p, (size_t)nc * elem);
	if (!q)
		return -1;
	*p = q;
	*cap = nc;
	return 0;
}

/* rehash rebuilds a table of index+1 entries at twice the size. */
static int rehash(int32_t **tab, uint32_t *cap, int32_t n, uint64_t (*hash)(mf_rec *, int32_t), mf_rec *r)
{
	uint32_t nc = *cap * 2;
	int32_t *t = calloc(nc, sizeof(int32_t));
	if (!t)
		return -1;
	for (int32_t i = 0; i < n; i++) {
		uint32_t j = (uint32_t)hash(r, i) & (nc - 1);
		while (t[j])
			j = (j + 1) & (nc - 1);
		t[j] = i + 1;
	}
	free(*tab);
	*tab = t;
	*cap = nc;
	return 0;
}

static uint64_t node_hash_at(mf_rec *r, int32_t i)
{
	const mf_node *n = &r->nodes[i];
	return node_hash(n->call, n->site, n->kbytes, n->kpartner, n->kcomm);
}

static uint64_t edge_hash(int32_t src, int32_t dst)
{
	return mix64((uint64_t)(uint32_t)src << 32 | (uint32_t)dst);
}

static uint64_t edge_hash_at(mf_rec *r, int32_t i)
{
	return edge_hash(r->edges[i].src, r->edges[i].dst);
}

static uint64_t site_hash_at(mf_rec *r, int32_t i)
{
	return mix64(r->sites[i]);
}

static int32_t site_index(mf_rec *r, uint64_t addr)
{
	uint32_t j = (uint32_t)mix64(addr) & (r->shashcap - 1);
	for (;;) {
		int32_t v = r->shash[j];
		if (!v)
			break;
		if (r->sites[v - 1] == addr)
			return v - 1;
		j = (j + 1) & (r->shashcap - 1);
	}
	if (grow((void **)&r->sites, &r->capsites, r->nsites + 1, sizeof(uint64_t)))
		return -1;
	int32_t i = r->nsites++;
	r->sites[i] = addr;
	r->shash[j] = i + 1;
	if ((uint32_t)r->nsites * 2 > r->shashcap && rehash(&r->shash, &r->shashcap, r->nsites, site_hash_at, r))
		return -1;
	return i;
}

int32_t mf_node_lookup(mf_rec *r, const mf_event *ev, uint64_t site, int64_t kbytes, int32_t kpartner, int32_t kcomm)
{
	uint32_t mask = r->nhashcap - 1;
	uint32_t j = (uint32_t)node_hash(ev->call, site, kbytes, kpartner, kcomm) & mask;
	for (;;) {
		int32_t v = r->nhash[j];
		if (!v)
			break;
		const mf_node *c = &r->nodes[v - 1];
		if (c->call == ev->call && c->site == site && c->kbytes == kbytes && c->kpartner == kpartner &&
		    c->kcomm == kcomm)
			return v - 1;
		j = (j + 1) & mask;
	}
	int32_t sidx = -1;
	if (r->keyflags & MF_KEY_SITE) {
		sidx = site_index(r, site);
		if (sidx < 0) {
			mf_rec_fail(r);
			return -1;
		}
	}
	if (grow((void **)&r->nodes, &r->capnodes, r->nnodes + 1, sizeof(mf_node))) {
		mf_rec_fail(r);
		return -1;
	}
	if (r->prev >= 0) /* the table may have moved */
		r->prev_node = &r->nodes[r->prev];
	int32_t i = r->nnodes++;
	mf_node *n = &r->nodes[i];
	memset(n, 0, sizeof(*n));
	n->call = ev->call;
	n->site = site;
	n->kbytes = kbytes;
	n->kpartner = kpartner;
	n->kcomm = kcomm;
	n->site_idx = sidx;
	n->last_partner = -1;
	n->succ_node = -1;
	n->texit_fx = -1;
	n->succ_edge = -1;
	r->nhash[j] = i + 1;
	if ((uint32_t)r->nnodes * 2 > r->nhashcap && rehash(&r->nhash, &r->nhashcap, r->nnodes, node_hash_at, r)) {
		mf_rec_fail(r);
		return -1;
	}
	if (mf_tm_reserve(r))
		return -1;
	return i;
}

int32_t mf_edge_lookup(mf_rec *r, int32_t src, int32_t dst)
{
	uint32_t mask = r->ehashcap - 1;
	uint32_t j = (uint32_t)edge_hash(src, dst) & mask;
	for (;;) {
		int32_t v = r->ehash[j];
		if (!v)
			break;
		const mf_edge *e = &r->edges[v - 1];
		if (e->src == src && e->dst == dst)
			return v - 1;
		j = (j + 1) & mask;
	}
	if (grow((void **)&r->edges, &r->capedges, r->nedges + 1, sizeof(mf_edge))) {
		mf_rec_fail(r);
		return -1;
	}
	int32_t i = r->nedges++;
	mf_edge *e = &r->edges[i];
	memset(e, 0, sizeof(*e));
	e->src = src;
	e->dst = dst;
	r->ehash[j] = i + 1;
	if ((uint32_t)r->nedges * 2 > r->ehashcap && rehash(&r->ehash, &r->ehashcap, r->nedges, edge_hash_at, r)) {
		mf_rec_fail(r);
		return -1;
	}
	if (mf_tm_reserve(r))
		return -1;
	return i;
}

/* Sequence numbers: the same algorithm as flowgraph.Seq (seq.go), which the
 * tests compare it with. */

static int same_shape(const mf_term *t, int32_t a, int32_t b)
{
	const mf_term *x = &t[a], *y = &t[b];
	if (x->stride != y->stride || x->count != y->count || x->body != y->body || x->size != y->size)
		return 0;
	/* mf_term has no padding: 3 int64 then 2 int32 */
	return memcmp(x + 1, y + 1, (size_t)(x->size - 1) * sizeof(mf_term)) == 0;
}

/* bk_touch saves terms [p, bk_from) of e before the fold changes them, so a
 * signal handler keeps seeing the state before the close. */
static void bk_touch(mf_rec *r, const mf_edge *e, int32_t p)
{
	if (p >= r->bk_from)
		return;
	memcpy(&r->bk[p], &e->terms[p], (size_t)(r->bk_from - p) * sizeof(mf_term));
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	r->bk_from = p;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* seq_extend is Seq.extend. */
static int seq_extend(mf_rec *r, mf_edge *e)
{
	int32_t nr = e->nroots;
	for (int32_t l = 1; l <= MF_SEQ_WINDOW && l < nr; l++) {
		int32_t p = e->roots[nr - l - 1];
		mf_term *rt = &e->terms[p];
		if (rt->body != l)
			continue;
		int64_t base = rt->start + rt->count * rt->stride;
		int32_t c = p + 1;
		int ok = 1;
		for (int32_t i = nr - l; i < nr; i++) {
			int32_t q = e->roots[i];
			if (e->terms[q].start != base + e->terms[c].start || !same_shape(e->terms, c, q)) {
				ok = 0;
				break;
			}
			c += e->terms[c].size;
		}
		if (!ok)
			continue;
		bk_touch(r, e, p);
		rt->count++;
		e->nterms = e->roots[nr - l];
		e->nroots = nr - l;
		return 1;
	}
	return 0;
}

/* seq_repeat is Seq.repeat. */
static int seq_repeat(mf_rec *r, mf_edge *e)
{
	int32_t nr = e->nroots;
	for (int32_t l = 1; l <= MF_SEQ_WINDOW && 2 * l <= nr; l++) {
		const int32_t *g1 = &e->roots[nr - 2 * l], *g2 = &e->roots[nr - l];
		int64_t d = e->terms[g2[0]].start - e->terms[g1[0]].start;
		int ok = 1;
		for (int32_t i = 0; i < l; i++) {
			if (e->terms[g2[i]].start - e->terms[g1[i]].start != d || !same_shape(e->terms, g1[i], g2[i])) {
				ok = 0;
				break;
			}
		}
		if (!ok)
			continue;
		int32_t at = g1[0], end = g2[0];
		int64_t base = e->terms[at].start;
		bk_touch(r, e, at);
		for (int32_t i = 0; i < l; i++)
			e->terms[g1[i]].start -= base;
		memmove(&e->terms[at + 1], &e->terms[at], (size_t)(end - at) * sizeof(mf_term));
		e->terms[at] = (mf_term){.start = base, .stride = d, .count = 2, .body = l, .size = end - at + 1};
		e->nterms = end + 1;
		e->roots[nr - 2 * l] = at;
		e->nroots = nr - 2 * l + 1;
		return 1;
	}
	return 0;
}

static int grow_terms(mf_term **p, int32_t *cap, int32_t need)
{
	return grow((void **)p, cap, need, sizeof(mf_term));
}

void mf_seq_close(mf_rec *r, mf_edge *e, int64_t n)
{
	if (e->ocount > 0) {
		if (grow_terms(&e->terms, &e->capterms, e->nterms + 1) ||
		    grow((void **)&e->roots, &e->caproots, e->nroots + 1, sizeof(int32_t)) ||
		    grow_terms(&r->bk, &r->bk_cap, e->nterms + 1)) {
			mf_rec_fail(r);
			return;
		}
		/* Until the new run is open, a signal handler sees the terms and
		 * the open run as they are now (mf_rec_seq). */
		r->bk_from = r->bk_n = e->nterms;
		r->bk_ostart = e->ostart;
		r->bk_ostride = e->ostride;
		r->bk_ocount = e->ocount;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		r->bk_edge = (int32_t)(e - r->edges);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		e->terms[e->nterms] = (mf_term){.start = e->ostart, .stride = e->ostride, .count = e->ocount, .size = 1};
		e->roots[e->nroots++] = e->nterms++;
		while (seq_extend(r, e) || seq_repeat(r, e))
			;
	}
	e->ostart = n;
	e->ostride = 0;
	e->ocount = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	r->bk_edge = -1;
}

/* edge_pending is how many untimed repeats along e wait for mf_settle
 * (they go along prev's self-loop). */
static int64_t edge_pending(const mf_rec *r, const mf_edge *e)
{
	return r->pending > 0 && r->prev >= 0 && e == &r->edges[r->nodes[r->prev].succ_edge] ? r->pending : 0;
}

mf_seqv mf_rec_seq(const mf_rec *r, const mf_edge *e)
{
	if (r->bk_edge >= 0 && &r->edges[r->bk_edge] == e)
		return (mf_seqv){.a = e->terms, .na = r->bk_from, .b = r->bk + r->bk_from, .nb = r->bk_n - r->bk_from,
				 .ostart = r->bk_ostart, .ostride = r->bk_ostride, .ocount = r->bk_ocount};
	return (mf_seqv){.a = e->terms, .na = e->nterms, .ostart = e->ostart, .ostride = e->ostride,
			 .ocount = e->ocount + edge_pending(r, e)};
}

/* mf_seqv_term is the k-th term of v (k < na + nb). */
static const mf_term *mf_seqv_term(const mf_seqv *v, int32_t k)
{
	return k < v->na ? &v->a[k] : &v->b[k - v->na];
}

static int64_t term_len(const mf_seqv *v, int32_t p)
{
	const mf_term *t = mf_seqv_term(v, p);
	if (t->body == 0)
		return t->count;
	int64_t n = 0;
	int32_t c = p + 1;
	for (int32_t k = 0; k < t->body; k++) {
		n += term_len(v, c);
		c += mf_seqv_term(v, c)->size;
	}
	return t->count * n;
}

static int64_t term_last(const mf_seqv *v, int32_t p)
{
	const mf_term *t = mf_seqv_term(v, p);
	int64_t x = t->start + (t->count - 1) * t->stride;
	if (t->body == 0)
		return x;
	int32_t c = p + 1;
	for (int32_t k = 1; k < t->body; k++)
		c += mf_seqv_term(v, c)->size;
	return x + term_last(v, c);
}

/* mf_seqv_len is the number of sequence numbers in v. */
static int64_t mf_seqv_len(const mf_seqv *v)
{
	int64_t n = v->ocount;
	for (int32_t p = 0; p < v->na + v->nb; p += mf_seqv_term(v, p)->size)
		n += term_len(v, p);
	return n;
}

/* mf_seqv_last is the last sequence number of v, -1 if none. */
static int64_t mf_seqv_last(const mf_seqv *v)
{
	if (v->ocount > 0)
		return v->ostart + (v->ocount - 1) * v->ostride;
	int32_t last = -1;
	for (int32_t p = 0; p < v->na + v->nb; p += mf_seqv_term(v, p)->size)
		last = p;
	return last < 0 ? -1 : term_last(v, last);
}

void mf_partner_add(mf_rec *r, mf_node *n, int32_t rank)
{
	for (int32_t i = 0; i < n->npartners; i++) {
		if (n->partners[i].rank == rank) {
			n->partners[i].count++;
			n->last_partner = i;
			return;
		}
	}
	if (n->npartners < MF_MAX_PARTNERS) {
		if (!n->partners) {
			n->partners = malloc(sizeof(mf_partner) * MF_MAX_PARTNERS);
			if (!n->partners) {
				mf_rec_fail(r);
				return;
			}
		}
		n->partners[n->npartners] = (mf_partner){.rank = rank, .count = 1};
		n->last_partner = n->npartners++;
		return;
	}
	n->other_partners++;
}

void mf_rep_node(mf_rec *r, mf_node *n, int64_t bytes, int32_t partner, int32_t commsize)
{
	if (bytes != 0 || n->bytes.min != 0) {
		if (bytes < n->bytes.min)
			n->bytes.min = bytes;
		if (bytes > n->bytes.max)
			n->bytes.max = bytes;
	}
	if (commsize > n->commsize)
		n->commsize = commsize;
	if (partner >= 0)
		mf_node_partner(r, n, partner);
	mf_rep_cache(r, n, bytes);
}

/* stat_addn adds values of about v, total in all, to s, which
 * holds some already. */
static void stat_addn(mf_stat *s, int64_t v, int64_t total)
{
	if (v < s->min)
		s->min = v;
	if (v > s->max)
		s->max = v;
	s->total += total;
}

/* calls_excess is the part of the excess of span over expect (untimed fast
 * repeats of node n) that goes to their calls: none when it is not
 * unusual (MF_TIGHT_UNUSUAL; *b = -1), else the share of it that the
 * node's unusual timed repeats of its size (*b, mf_tight_size) gave their
 * calls. */
static double calls_excess(const mf_node *n, int64_t expect, int64_t span, int *b)
{
	const int64_t excess = span - expect;
	*b = -1;
	if (!MF_TIGHT_UNUSUAL(excess, expect))
		return 0;
	*b = mf_tight_size(excess);
	double share = n->tlsize[*b] > 0 && (!*b || n->tlnlarge >= MF_TIGHT_EVIDENCE)
			       ? (double)n->tlcall[*b] / (double)n->tlsize[*b]
			       : 0;
	return (double)excess * (share > 1 ? 1 : share);
}

/* mf_settle: the untimed repeats and the gap before the next event share
 * the time since the last timed event. Each repeat takes an estimated
 * duration and the gaps the rest, or, when that leaves the gaps less than
 * nothing, all in the proportions of the estimated duration and gap. So
 * the sums per timing interval (and the MPI and compute time of the run)
 * stay exact; what is estimated is the split between the repeats'
 * durations and gaps, and each repeat gets the same. The estimate: with
 * sampling, the mean of the node's recent samples (the timed events among
 * its sampled repeats; before the first, of all its timed events); for
 * fast repeats (MF_TIGHT_NS), the node's usual duration and gap, and when
 * the time exceeds the expected one by MF_TIGHT_UNUSUAL, the calls also
 * take the share of the excess that the node's unusual repeats timed at
 * both ends gave their call. */
void mf_settle(mf_rec *r, int64_t enter, int ended)
{
	int64_t j = r->pending;
	mf_node *n = &r->nodes[r->prev];
	int32_t ei = n->succ_edge;
	mf_edge *e = &r->edges[ei];
	/* the counts the untimed repeats left to this (mf_record_rep) */
	n->count += j;
	n->bytes.total += r->pend_bytes;
	e->count += j;
	e->ocount += j;
	r->pending = r->pend_bytes = 0;
	double md, mg;
	if (r->tight_ok) {
		md = (double)n->tdur_fx / (1 << MF_TIGHT_FX);
		mg = n->tper_fx > n->tdur_fx ? (double)(n->tper_fx - n->tdur_fx) / (1 << MF_TIGHT_FX) : 0;
	} else if (n->sn > 0) {
		md = (double)n->sdur / (double)n->sn;
		mg = (double)n->sgap / (double)n->sn;
	} else { /* no sample yet: the means of the timed events */
		int64_t nt = n->count - j, et = e->count - j; /* >= 1 (MF_REP_TIMED) */
		md = nt > 0 ? (double)n->time.total / (double)nt : 0;
		mg = et > 0 ? (double)e->time.total / (double)et : 0;
	}
	/* d, g: each repeat's duration and gap, not rounded; their totals are
	 * rounded once (a poll of 9.75 ns counted as 9 made its node 8%
	 * faster) */
	double d = md, g = mg;
	const double span = enter > r->last_exit ? (double)(enter - r->last_exit) : 0;
	if (enter != INT64_MIN && ended) {
		/* The run ended: the last gap is another edge's, where the
		 * program does what a completed poll asked (HPCC's
		 * MPIRandomAccess: 9-11 us handling an arrived bucket after
		 * gaps of 40-90 ns between its MPI_Testany calls). It is
		 * expected to take the gap after the node's runs where their
		 * last repeat was timed (texit_fx), the repeats their means;
		 * an unusual excess over that is shared as within a run, the
		 * rest goes to that gap. Shared out as an excess of the run's
		 * own gaps and calls, 92% of the work went to the calls, and
		 * MPI_Testany took 4-6 pp too much of every 30th of HPCC's
		 * run. */
		if (r->tight_ok && n->texit_fx >= 0) {
			int b;
			const double expect = (double)j * (md + mg) + (double)n->texit_fx / (1 << MF_TIGHT_FX);
			d = md += calls_excess(n, (int64_t)expect, (int64_t)span, &b) / (double)j;
		}
		const double w = (double)j * (md + mg);
		if (w > span) { /* too little time: in proportion, none for the gap */
			d = span * md / w;
			g = span * mg / w;
		}
	} else if (enter != INT64_MIN) {
		double w = (double)(j + 1) * mg + (double)j * md;
		if (r->tight_ok) {
			int b;
			d = md += calls_excess(n, (int64_t)w, (int64_t)span, &b) / (double)j;
			w = (double)(j + 1) * mg + (double)j * md;
			if (!b)
				n->tquiet = r->nevents + MF_TIGHT_QUIET;
		}
		if ((double)j * md <= span) { /* the calls take theirs, the gaps the rest */
			g = (span - (double)j * md) / (double)(j + 1);
		} else if (w > 0) { /* too little time for that: in proportion */
			d = span * md / w;
			g = span * mg / w;
		} else {
			d = g = span / (double)(2 * j + 1);
		}
	}
	const int64_t dtot = (int64_t)((double)j * d + 0.5);
	int64_t gtot = (int64_t)((double)j * g + 0.5);
	if (enter != INT64_MIN && dtot + gtot > (int64_t)span) /* rounded up past the next enter */
		gtot = (int64_t)span - dtot;
	stat_addn(&n->time, (int64_t)d, dtot);
	stat_addn(&e->time, (int64_t)g, gtot);
	mf_tm_touch(r, &n->tsum, &n->tstamp, 2 * (uint32_t)r->prev, dtot);
	mf_tm_touch(r, &e->tsum, &e->tstamp, 2 * (uint32_t)ei + 1, gtot);
	r->last_exit += dtot + gtot;
}

void mf_sample(mf_rec *r, mf_node *n, int64_t idx, int64_t dur, int64_t gap, int64_t untimed)
{
	if (untimed) { /* time the next one too, to measure its gap */
		r->sample_at = idx + 1;
		return;
	}
	if (n->sn >= 256) { /* the last 256 to 512 samples */
		n->sdur >>= 1;
		n->sgap >>= 1;
		n->sn >>= 1;
	}
	n->sdur += dur;
	n->sgap += gap;
	n->sn++;
	r->sample_at = idx + 2 + (int64_t)(mf_rand(r) & (2 * r->sample_mask + 1));
}

static int write_all(int fd, const uint8_t *b, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, b, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

void mf_trace_flush(mf_rec *r)
{
	if (r->trace_fd >= 0 && r->tlen > 0 && !r->trace_err && write_all(r->trace_fd, r->tbuf, r->tlen))
		r->trace_err = errno ? errno : EIO;
	r->tlen = 0;
}

static void put_be32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

int mf_trace_open(mf_rec *r, int fd, int rank)
{
	r->tbuf = malloc(MF_TRACE_BUF);
	if (!r->tbuf)
		return -1;
	r->tcap = MF_TRACE_BUF;
	memcpy(r->tbuf, "MPIFLOWT", 8);
	put_be32(r->tbuf + 8, MF_TRACE_VERSION);
	put_be32(r->tbuf + 12, (uint32_t)rank);
	r->tlen = 16;
	r->tprev_exit = 0;
	r->trace_fd = fd;
	mf_rec_mode(r);
	return 0;
}

int mf_trace_close(mf_rec *r, const char *const *names, int ncalls)
{
	if (r->trace_fd < 0)
		return 0;
	mf_trace_uvarint(r->tbuf, &r->tlen, 0);
	mf_trace_uvarint(r->tbuf, &r->tlen, (uint64_t)r->nnodes);
	for (int32_t i = 0; i < r->nnodes; i++) {
		const mf_node *n = &r->nodes[i];
		const char *name = n->call >= 0 && n->call < ncalls ? names[n->call] : "?";
		size_t l = strlen(name);
		if (l > 200)
			l = 200;
		if (r->tcap - r->tlen < l + 64)
			mf_trace_flush(r);
		mf_trace_uvarint(r->tbuf, &r->tlen, l);
		memcpy(r->tbuf + r->tlen, name, l);
		r->tlen += l;
		mf_trace_uvarint(r->tbuf, &r->tlen, n->site);
		mf_trace_uvarint(r->tbuf, &r->tlen, ((uint64_t)n->kbytes << 1) ^ (uint64_t)(n->kbytes >> 63));
		mf_trace_uvarint(r->tbuf, &r->tlen, (uint64_t)(int64_t)(n->kpartner + 1));
		mf_trace_uvarint(r->tbuf, &r->tlen, (uint64_t)(int64_t)(n->kcomm + 1));
	}
	memcpy(r->tbuf + r->tlen, "MFTE", 4);
	r->tlen += 4;
	mf_trace_flush(r);
	int err = r->trace_err;
	if (close(r->trace_fd) && !err)
		err = errno;
	r->trace_fd = -1;
	mf_rec_mode(r);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

/* Encoding: flowgraph.Seq.AppendBinary. */

typedef struct {
	void (*put)(void *ctx, const uint8_t *b, size_t n);
	void *ctx;
	uint64_t n;
} seq_enc;

static void enc_uvarint(seq_enc *w, uint64_t x)
{
	uint8_t b[10];
	size_t k = 0;
	mf_trace_uvarint(b, &k, x);
	w->n += k;
	if (w->put)
		w->put(w->ctx, b, k);
}

static void enc_term(seq_enc *w, const mf_seqv *v, int32_t p, int64_t lo)
{
	const mf_term *t = mf_seqv_term(v, p);
	enc_uvarint(w, (uint64_t)t->body);
	enc_uvarint(w, (uint64_t)(t->start - lo));
	enc_uvarint(w, (uint64_t)(t->count - 1));
	int64_t min = 1;
	if (t->body > 0) {
		int64_t clo = 0, last = 0;
		int32_t c = p + 1;
		for (int32_t k = 0; k < t->body; k++) {
			enc_term(w, v, c, clo);
			last = term_last(v, c);
			clo = last + 1;
			c += mf_seqv_term(v, c)->size;
		}
		min = last - mf_seqv_term(v, p + 1)->start + 1;
	}
	if (t->count > 1)
		enc_uvarint(w, (uint64_t)(t->stride - min));
}

uint64_t mf_seqv_encode(const mf_seqv *v, void (*put)(void *ctx, const uint8_t *b, size_t n), void *ctx)
{
	seq_enc w = {.put = put, .ctx = ctx};
	uint64_t roots = v->ocount > 0;
	for (int32_t p = 0; p < v->na + v->nb; p += mf_seqv_term(v, p)->size)
		roots++;
	enc_uvarint(&w, roots);
	int64_t lo = 1;
	for (int32_t p = 0; p < v->na + v->nb; p += mf_seqv_term(v, p)->size) {
		enc_term(&w, v, p, lo);
		lo = term_last(v, p) + 1;
	}
	if (v->ocount > 0) {
		mf_term open = {.start = v->ostart, .stride = v->ostride, .count = v->ocount, .size = 1};
		mf_seqv ov = {.a = &open, .na = 1};
		enc_term(&w, &ov, 0, lo);
	}
	return w.n;
}

static int64_t seq_len(const mf_rec *r, const mf_edge *e)
{
	mf_seqv v = mf_rec_seq(r, e);
	return mf_seqv_len(&v);
}

int64_t mf_rec_edge_count(const mf_rec *r, const mf_edge *e)
{
	int64_t c = e->count + edge_pending(r, e);
	if (!r->failed)
		return c;
	int64_t s = seq_len(r, e);
	return s < c ? s : c;
}

/* A recorder that failed stopped inside one event: a new node or edge may
 * have a count of 0, or an edge counted the event without its sequence
 * number (mf_seq_close, or a close that a signal interrupted). Then the
 * last event whose transition is stored ends the graph. */
mf_view mf_rec_view(const mf_rec *r)
{
	mf_view v = {.nevents = r->nevents, .drop_edges = 0};
	if (!r->failed || r->nevents == 0)
		return v;
	int64_t total = 0;
	for (int32_t i = 0; i < r->nedges; i++)
		total += mf_rec_edge_count(r, &r->edges[i]);
	if (total + 1 < v.nevents)
		v.nevents = total + 1;
	for (int32_t i = 0; i < r->nedges; i++) {
		const mf_edge *e = &r->edges[i];
		mf_seqv sv = mf_rec_seq(r, e);
		if (mf_rec_edge_count(r, e) != mf_seqv_len(&sv) || mf_seqv_last(&sv) >= v.nevents) {
			v.nevents = 0;
			v.drop_edges = 1;
			break;
		}
	}
	return v;
}
