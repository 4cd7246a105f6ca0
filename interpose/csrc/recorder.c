/*
 * recorder.c: the slow paths of the recorder (new nodes, edges, sites,
 * sequence runs, timing intervals) and the full-trace writer. See
 * recorder.h.
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

static void tm_publish(mf_rec *r);

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
	r->tm_budget = 2 * (timing_bytes - MF_TM_HEAD);
	r->tm_maxint = max_intervals >= 2 ? max_intervals : 0;
	r->tm_spacing = 1;
	r->tm_deadline = INT64_MAX;
	r->tm_gen = 1;
	r->tm_mgen = 1;
	r->tm_pgen = 1;
	r->trace_fd = -1;
	r->bk_edge = -1;
	r->ckpt_next = INT64_MAX;
	r->nhashcap = 256;
	r->ehashcap = 256;
	r->shashcap = 64;
	r->nhash = calloc(r->nhashcap, sizeof(int32_t));
	r->ehash = calloc(r->ehashcap, sizeof(int32_t));
	r->shash = calloc(r->shashcap, sizeof(int32_t));
	r->tm_buf[0] = malloc((size_t)(r->tm_budget / 2 + 1));
	r->tm_buf[1] = malloc((size_t)(r->tm_budget / 2 + 1));
	if (!r->nhash || !r->ehash || !r->shash || !r->tm_buf[0] || !r->tm_buf[1]) {
		mf_rec_free(r);
		return -1;
	}
	tm_publish(r);
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
	free(r->tm_buf[0]);
	free(r->tm_buf[1]);
	free(r->tm_ids[0]);
	free(r->tm_ids[1]);
	free(r->tm_open[0]);
	free(r->tm_open[1]);
	free(r->tm_mlist[0]);
	free(r->tm_mlist[1]);
	free(r->tm_plist);
	free(r->tm_carry);
	free(r->tm_m);
	free(r->tm_p);
	free(r->tm_entries);
	free(r->tm_codes);
	free(r->tm_rests);
	free(r->tm_kept);
	free(r->tm_order);
	free(r->tbuf);
	r->nodes = NULL;
	r->edges = NULL;
	r->sites = NULL;
	r->nhash = r->ehash = r->shash = NULL;
	r->tm_buf[0] = r->tm_buf[1] = NULL;
	r->tm_ids[0] = r->tm_ids[1] = NULL;
	r->tm_idcap[0] = r->tm_idcap[1] = 0;
	r->tm_open[0] = r->tm_open[1] = r->tm_mlist[0] = r->tm_mlist[1] = r->tm_plist = r->tm_entries = NULL;
	r->tm_carry = NULL;
	r->tm_m = r->tm_p = NULL;
	r->tm_codes = NULL;
	r->tm_rests = NULL;
	r->tm_kept = NULL;
	r->tm_order = NULL;
	r->tm_pub[0].buf = r->tm_pub[1].buf = NULL;
	r->tm_pub[0].len = r->tm_pub[1].len = 0;
	r->tm_pub[0].nclosed = r->tm_pub[1].nclosed = 0;
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

static void fail(mf_rec *r)
{
	r->failed = 1;
	r->rep_call = -1; /* no more repeats either */
	mf_rec_mode(r);
}

/* tm_grow reallocs *p to n elements of size elem; it returns -1 (and
 * leaves *p) when out of memory. */
static int tm_grow(void **p, int64_t n, size_t elem)
{
	void *q = realloc(*p, (size_t)n * elem);
	if (!q)
		return -1;
	*p = q;
	return 0;
}

/* tm_reserve makes room for every node and edge in the timing lists and
 * per id arrays (whose new entries are zero: no carry, old stamps). */
static int tm_reserve(mf_rec *r)
{
	int64_t need = (int64_t)r->nnodes + r->nedges;
	if (need > r->tm_cap) {
		int64_t nc = r->tm_cap ? r->tm_cap * 2 : 64;
		while (nc < need)
			nc *= 2;
		if (tm_grow((void **)&r->tm_open[0], nc, sizeof(uint32_t)) ||
		    tm_grow((void **)&r->tm_open[1], nc, sizeof(uint32_t)) ||
		    tm_grow((void **)&r->tm_mlist[0], nc, sizeof(uint32_t)) ||
		    tm_grow((void **)&r->tm_mlist[1], nc, sizeof(uint32_t)) ||
		    tm_grow((void **)&r->tm_plist, nc, sizeof(uint32_t)) ||
		    tm_grow((void **)&r->tm_entries, nc, sizeof(uint32_t)) ||
		    tm_grow((void **)&r->tm_codes, nc, sizeof(uint64_t)) ||
		    tm_grow((void **)&r->tm_rests, nc, sizeof(int64_t)) || tm_grow((void **)&r->tm_kept, nc, 1) ||
		    tm_grow((void **)&r->tm_order, nc, sizeof(mf_cap_entry))) {
			fail(r);
			return -1;
		}
		r->tm_cap = nc;
	}
	int64_t ids = 2 * (int64_t)(r->nnodes > r->nedges ? r->nnodes : r->nedges);
	if (ids > r->tm_idn) {
		int64_t nc = r->tm_idn ? r->tm_idn * 2 : 128;
		while (nc < ids)
			nc *= 2;
		if (tm_grow((void **)&r->tm_carry, nc, sizeof(int64_t)) || tm_grow((void **)&r->tm_m, nc, sizeof(mf_tm_slot)) ||
		    tm_grow((void **)&r->tm_p, nc, sizeof(mf_tm_slot))) {
			fail(r);
			return -1;
		}
		memset(r->tm_carry + r->tm_idn, 0, (size_t)(nc - r->tm_idn) * sizeof(int64_t));
		memset(r->tm_m + r->tm_idn, 0, (size_t)(nc - r->tm_idn) * sizeof(mf_tm_slot));
		memset(r->tm_p + r->tm_idn, 0, (size_t)(nc - r->tm_idn) * sizeof(mf_tm_slot));
		r->tm_idn = nc;
	}
	return 0;
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
			fail(r);
			return -1;
		}
	}
	if (grow((void **)&r->nodes, &r->capnodes, r->nnodes + 1, sizeof(mf_node))) {
		fail(r);
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
	n->succ_edge = -1;
	r->nhash[j] = i + 1;
	if ((uint32_t)r->nnodes * 2 > r->nhashcap && rehash(&r->nhash, &r->nhashcap, r->nnodes, node_hash_at, r)) {
		fail(r);
		return -1;
	}
	if (tm_reserve(r))
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
		fail(r);
		return -1;
	}
	int32_t i = r->nedges++;
	mf_edge *e = &r->edges[i];
	memset(e, 0, sizeof(*e));
	e->src = src;
	e->dst = dst;
	r->ehash[j] = i + 1;
	if ((uint32_t)r->nedges * 2 > r->ehashcap && rehash(&r->ehash, &r->ehashcap, r->nedges, edge_hash_at, r)) {
		fail(r);
		return -1;
	}
	if (tm_reserve(r))
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
			fail(r);
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
				fail(r);
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
void mf_settle(mf_rec *r, int64_t enter)
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
	if (enter != INT64_MIN) {
		double span = enter > r->last_exit ? (double)(enter - r->last_exit) : 0;
		double w = (double)(j + 1) * mg + (double)j * md;
		if (r->tight_ok) {
			const int64_t expect = (int64_t)w, excess = (int64_t)span - expect;
			if (MF_TIGHT_UNUSUAL(excess, expect)) {
				const int b = mf_tight_size(excess);
				double share = n->tlsize[b] > 0 && (!b || n->tlnlarge >= MF_TIGHT_EVIDENCE)
						       ? (double)n->tlcall[b] / (double)n->tlsize[b]
						       : 0;
				share = share > 1 ? 1 : share;
				md += (double)excess * share / (double)j;
				d = md;
				w = (double)(j + 1) * mg + (double)j * md;
				if (!b)
					n->tquiet = r->nevents + MF_TIGHT_QUIET;
			}
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
	const int64_t dtot = (int64_t)((double)j * d + 0.5), gtot = (int64_t)((double)j * g + 0.5);
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

/* ---- Timing: the slow paths of flowgraph's timingRec, step for step ---- */

/* Nibble streams (flowgraph.Timing): nibble i is the high half of byte i/2
 * when i is even. A nibble varint holds 3 bits a nibble, least significant
 * first, the high bit set when more follow. */
static inline int nib_len(uint64_t v)
{
	return (64 - __builtin_clzll(v | 1) + 2) / 3;
}

static inline void put_nib(uint8_t *b, int64_t *n, uint64_t v)
{
	int64_t i = *n;
	if (v < 8) { /* the common cases: one nibble, two */
		if (i & 1)
			b[i >> 1] |= (uint8_t)v;
		else
			b[i >> 1] = (uint8_t)(v << 4);
		*n = i + 1;
		return;
	}
	if (v < 64) {
		uint8_t x0 = (uint8_t)((v & 7) | 8), x1 = (uint8_t)(v >> 3);
		if (i & 1) {
			b[i >> 1] |= x0;
			b[(i >> 1) + 1] = (uint8_t)(x1 << 4);
		} else {
			b[i >> 1] = (uint8_t)(x0 << 4 | x1);
		}
		*n = i + 2;
		return;
	}
	for (;;) {
		uint8_t x = (uint8_t)(v & 7);
		v >>= 3;
		if (v)
			x |= 8;
		if (i & 1)
			b[i >> 1] |= x;
		else
			b[i >> 1] = (uint8_t)(x << 4);
		i++;
		if (!v)
			break;
	}
	*n = i;
}

/* get_nib reads a nibble varint of our own encoding at nibble *pos. */
static inline uint64_t get_nib(const uint8_t *b, int64_t *pos)
{
	int64_t i = *pos;
	unsigned x0 = (unsigned)(b[i >> 1] >> (4 - 4 * (i & 1))) & 15;
	if (x0 < 8) { /* the common cases: one nibble, two */
		*pos = i + 1;
		return x0;
	}
	unsigned x1 = (unsigned)(b[(i + 1) >> 1] >> (4 - 4 * ((i + 1) & 1))) & 15;
	if (x1 < 8) {
		*pos = i + 2;
		return (x0 & 7) | x1 << 3;
	}
	uint64_t v = 0;
	for (int s = 0;; s += 3) {
		unsigned x = (unsigned)(b[i >> 1] >> (4 - 4 * (i & 1))) & 15;
		i++;
		v |= (uint64_t)(x & 7) << s;
		if (x < 8)
			break;
	}
	*pos = i;
	return v;
}

/* put_id and get_id write and read the uvarints of the id buffers. */
static inline int64_t put_id(uint8_t *b, int64_t n, uint32_t id)
{
	if (id < 0x80) {
		b[n] = (uint8_t)id;
		return n + 1;
	}
	size_t k = (size_t)n;
	mf_trace_uvarint(b, &k, id);
	return (int64_t)k;
}

static inline uint32_t get_id(const uint8_t *b, int64_t *pos)
{
	if (b[*pos] < 0x80)
		return b[(*pos)++];
	uint32_t v = 0;
	int shift = 0;
	for (;;) {
		uint8_t c = b[(*pos)++];
		v |= (uint32_t)(c & 0x7f) << shift;
		if (c < 0x80)
			return v;
		shift += 7;
	}
}

/* quantize is flowgraph's quantize: the code of v at quantum 2^shift,
 * rounded half up (at most INT64_MAX >> shift), with the rounding left in
 * *rest; v <= 0 gives code 0 and rest v. */
static inline uint64_t quantize(int64_t v, int32_t shift, int64_t *rest)
{
	if (v <= 0) {
		*rest = v;
		return 0;
	}
	int64_t c = v >> shift;
	if (shift > 0)
		c += (v >> (shift - 1)) & 1;
	if (c > INT64_MAX >> shift)
		c = INT64_MAX >> shift;
	*rest = v - (int64_t)((uint64_t)c << shift);
	return (uint64_t)c;
}

/* quantum_shift is flowgraph's quantumShift. */
static int32_t quantum_shift(int64_t total)
{
	int b = total > 0 ? 64 - __builtin_clzll((uint64_t)total) : 0;
	return b > MF_TM_QUANTUM_BITS ? b - MF_TM_QUANTUM_BITS : 0;
}

/* TM_F is field f of the node or edge of id. */
#define TM_F(r, id, f) (*((id) & 1 ? &(r)->edges[(id) >> 1].f : &(r)->nodes[(id) >> 1].f))

static void tm_publish(mf_rec *r)
{
	int i = 1 - r->tm_pubi;
	r->tm_pub[i] = (mf_timing_pub){.buf = r->tm_buf[r->tm_cur], .len = r->tm_len, .nclosed = r->tm_nclosed,
				       .spacing = r->tm_spacing, .start = r->tm_start, .keep = r->tm_keep,
				       .shift = r->tm_shift};
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	r->tm_pubi = i;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* tm_reset_open empties the open interval, zeroing the sums it took. */
static void tm_reset_open(mf_rec *r)
{
	for (int64_t i = 0; i < r->tm_nopen[0]; i++)
		r->nodes[r->tm_open[0][i] >> 1].tsum = 0;
	for (int64_t i = 0; i < r->tm_nopen[1]; i++)
		r->edges[r->tm_open[1][i] >> 1].tsum = 0;
	r->tm_gen++;
	r->tm_nopen[0] = r->tm_nopen[1] = 0;
	r->tm_mrest = r->tm_crest = 0;
}

static inline void tm_merge(mf_rec *r, uint32_t id, int64_t v)
{
	mf_tm_slot *s = &r->tm_m[id];
	if (s->stamp != r->tm_mgen) {
		s->stamp = r->tm_mgen;
		s->v = v;
		r->tm_mlist[id & 1][r->tm_nmlist[id & 1]++] = id;
	} else {
		s->v += v;
	}
}

/* The sums of an interval to put, and the carries to round it with. */
enum { TM_OPEN, TM_MERGED };
enum { TM_RECORDING, TM_PASS };

static inline int64_t tm_sum(const mf_rec *r, uint32_t id, int src)
{
	return src == TM_OPEN ? TM_F(r, id, tsum) : r->tm_m[id].v;
}

static inline int64_t tm_carry_of(const mf_rec *r, uint32_t id, int carry)
{
	if (carry == TM_RECORDING)
		return r->tm_carry[id];
	return r->tm_p[id].stamp == r->tm_pgen ? r->tm_p[id].v : 0;
}

static inline void tm_set_carry(mf_rec *r, uint32_t id, int carry, int64_t v)
{
	if (carry == TM_RECORDING) {
		r->tm_carry[id] = v;
		return;
	}
	mf_tm_slot *s = &r->tm_p[id];
	if (s->stamp == r->tm_pgen) {
		s->v = v;
	} else if (v != 0) { /* an untouched pass carry is 0 */
		s->stamp = r->tm_pgen;
		s->v = v;
		r->tm_plist[r->tm_nplist++] = id;
	}
}

static int cap_cmp(const void *a, const void *b)
{
	const mf_cap_entry *x = a, *y = b;
	if (x->code != y->code)
		return x->code > y->code ? -1 : 1;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

/* cap_codes (timingRec.capCodes) marks the keep largest of the n codes of
 * r->tm_codes (ties: the earlier first) in r->tm_kept and folds the others
 * into the remainder codes by kind. */
static void cap_codes(mf_rec *r, int64_t n, int32_t keep, uint64_t *mc, uint64_t *cc)
{
	for (int64_t i = 0; i < n; i++)
		r->tm_order[i] = (mf_cap_entry){.code = r->tm_codes[i], .pos = i};
	qsort(r->tm_order, (size_t)n, sizeof(mf_cap_entry), cap_cmp);
	memset(r->tm_kept, 0, (size_t)n);
	for (int32_t k = 0; k < keep; k++)
		r->tm_kept[r->tm_order[k].pos] = 1;
	for (int64_t i = 0; i < n; i++) {
		if (r->tm_kept[i])
			continue;
		if (r->tm_entries[i] & 1)
			*cc += r->tm_codes[i];
		else
			*mc += r->tm_codes[i];
	}
}

/* tm_events_code is flowgraph's eventsCode: the code of an interval of
 * events events at spacing sp, 0 when it is full. */
static inline uint64_t tm_events_code(int64_t events, int64_t sp)
{
	return events == sp ? 0 : (uint64_t)events;
}

/* tm_put (timingRec.put) rounds an interval of events events, the ids of
 * lists (nodes, edges, each in first touch order) with the raw sums of src
 * and raw remainders mr, cr, with the carries of carry, caps it to keep
 * entries when capped, and writes it at spacing sp at nibble *len of out
 * and its ids at byte *nids of r->tm_ids[ib] if that keeps *len within
 * limit, then updates the carries and adds its time as encoded to *time.
 * It returns 0, or -1 (nothing written) if the interval does not fit or
 * memory runs out (r->failed). */
static int tm_put(mf_rec *r, uint8_t *out, int64_t *len, int64_t limit, int ib, int64_t *nids,
		  uint32_t *const lists[2], const int64_t counts[2], int src, int carry, int32_t keep, int capped,
		  int64_t mr, int64_t cr, uint64_t *time, int64_t events, int64_t sp)
{
	int32_t shift = r->tm_shift;
	int64_t n = counts[0] + counts[1];
	const uint64_t ec = tm_events_code(events, sp);
	if (*nids + 5 * n > r->tm_idcap[ib]) {
		int64_t c = r->tm_idcap[ib] ? 2 * r->tm_idcap[ib] : 4096;
		while (c < *nids + 5 * n)
			c *= 2;
		if (tm_grow((void **)&r->tm_ids[ib], c, 1)) {
			fail(r);
			return -1;
		}
		r->tm_idcap[ib] = c;
	}
	uint8_t *ids = r->tm_ids[ib];
	int64_t l = *len, ni = *nids;
	uint64_t t = 0;
	if (keep == 0 && l + 22 + 2 * 11 + n * 22 <= limit) {
		/* It fits whatever the codes: round and write in one go. The
		 * tables are in locals: the byte stores could alias r. */
		uint8_t *restrict o = out, *restrict io = ids;
		const mf_node *nodes = r->nodes;
		const mf_edge *edges = r->edges;
		const mf_tm_slot *msum = r->tm_m;
		int64_t *carries = r->tm_carry;
		mf_tm_slot *pc = r->tm_p;
		const int64_t pgen = r->tm_pgen;
		put_nib(o, &l, ec);
		put_nib(o, &l, (uint64_t)counts[0]);
		put_nib(o, &l, (uint64_t)counts[1]);
		for (int kind = 0; kind < 2; kind++) {
			const uint32_t *list = lists[kind];
			const int64_t cnt = counts[kind];
			for (int64_t i = 0; i < cnt; i++) {
				uint32_t id = list[i];
				int64_t v, rest;
				if (src == TM_OPEN)
					v = kind ? edges[id >> 1].tsum : nodes[id >> 1].tsum;
				else
					v = msum[id].v;
				if (carry == TM_RECORDING)
					v += carries[id];
				else if (pc[id].stamp == pgen)
					v += pc[id].v;
				uint64_t code = quantize(v, shift, &rest);
				put_nib(o, &l, code);
				ni = put_id(io, ni, id);
				t += code << shift;
				if (carry == TM_RECORDING)
					carries[id] = rest;
				else if (rest != 0 || pc[id].stamp == pgen)
					tm_set_carry(r, id, carry, rest);
			}
		}
		*len = l;
		*nids = ni;
		*time += t;
		return 0;
	}
	uint32_t *entries = r->tm_entries;
	uint64_t *codes = r->tm_codes;
	int64_t *rests = r->tm_rests;
	for (int kind = 0, k = 0; kind < 2; kind++) {
		for (int64_t i = 0; i < counts[kind]; i++, k++) {
			uint32_t id = lists[kind][i];
			entries[k] = id;
			codes[k] = quantize(tm_sum(r, id, src) + tm_carry_of(r, id, carry), shift, &rests[k]);
		}
	}
	int64_t *rc = carry == TM_RECORDING ? r->tm_rcarry : r->tm_prcarry;
	uint64_t mc = 0, cc = 0;
	int64_t mrest = 0, crest = 0;
	if (keep > 0) {
		mc = quantize(mr + rc[0], shift, &mrest);
		cc = quantize(cr + rc[1], shift, &crest);
	}
	const uint8_t *kept = NULL;
	uint64_t nn = (uint64_t)counts[0], ne = (uint64_t)counts[1];
	if (capped && keep > 0 && n > keep) {
		cap_codes(r, n, keep, &mc, &cc);
		kept = r->tm_kept;
		nn = 0;
		for (int64_t i = 0; i < counts[0]; i++)
			nn += kept[i];
		ne = (uint64_t)keep - nn;
	}
	int64_t size = nib_len(ec) + nib_len(nn) + nib_len(ne);
	if (keep > 0)
		size += nib_len(mc) + nib_len(cc);
	for (int64_t i = 0; i < n; i++) {
		if (kept && !kept[i])
			continue;
		size += nib_len(codes[i]);
		if (keep > 0)
			size += nib_len(entries[i] >> 1);
	}
	if (l + size > limit)
		return -1;
	put_nib(out, &l, ec);
	put_nib(out, &l, nn);
	put_nib(out, &l, ne);
	if (keep > 0) {
		put_nib(out, &l, mc);
		put_nib(out, &l, cc);
		t = (mc + cc) << shift;
	}
	for (int64_t i = 0; i < n; i++) {
		if (!kept || kept[i]) {
			if (keep > 0)
				put_nib(out, &l, entries[i] >> 1);
			put_nib(out, &l, codes[i]);
			ni = put_id(ids, ni, entries[i]);
			t += codes[i] << shift;
		}
		tm_set_carry(r, entries[i], carry, rests[i]);
	}
	if (keep > 0) {
		rc[0] = mrest;
		rc[1] = crest;
	}
	*len = l;
	*nids = ni;
	*time += t;
	return 0;
}

/* over_projected is flowgraph's overProjected: whether a pass that wrote
 * out nibbles after reading pos of the total of the closed intervals is
 * bound to end over limit. */
static int over_projected(int64_t out, int64_t limit, int64_t pos, int64_t total)
{
	if (16 * pos < total)
		return 0;
	return (unsigned __int128)(16 * (uint64_t)out) * (uint64_t)total >
	       (unsigned __int128)(17 * (uint64_t)limit) * (uint64_t)pos;
}

/* tm_open_time is the open interval's raw time (timingRec.openTime). */
static int64_t tm_open_time(const mf_rec *r)
{
	int64_t total = r->tm_mrest + r->tm_crest;
	for (int kind = 0; kind < 2; kind++)
		for (int64_t i = 0; i < r->tm_nopen[kind]; i++)
			total += TM_F(r, r->tm_open[kind][i], tsum);
	return total;
}

static inline int64_t sat_add(int64_t a, int64_t b) /* b >= 0 */
{
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* tm_set_deadline sets where the open interval closes (timingRec's
 * setDeadline, and tm_end). */
static void tm_set_deadline(mf_rec *r)
{
	r->tm_end = r->tm_start + r->tm_spacing;
	r->tm_deadline = r->tm_span > 0 ? sat_add(sat_add(r->t0, r->tm_ctime), r->tm_span) : INT64_MAX;
}

/* span_for is flowgraph's spanFor: the time sp events took on average,
 * total over nev. */
static int64_t span_for(int64_t sp, int64_t total, int64_t nev)
{
	unsigned __int128 p = (unsigned __int128)(uint64_t)(total > 0 ? total : 0) * (uint64_t)sp;
	if ((uint64_t)(p >> 64) >= (uint64_t)nev)
		return INT64_MAX;
	unsigned __int128 q = p / (uint64_t)nev;
	return q > INT64_MAX ? INT64_MAX : (int64_t)q;
}

/* tm_peek_time is the time of the closed interval at nibble pos of in,
 * after its events (timingRec.peekClosed's). */
static int64_t tm_peek_time(const uint8_t *in, int64_t pos, int32_t shift, int32_t keep)
{
	uint64_t n = get_nib(in, &pos);
	n += get_nib(in, &pos);
	uint64_t t = 0;
	if (keep > 0) {
		t += get_nib(in, &pos);
		t += get_nib(in, &pos);
	}
	for (uint64_t e = 0; e < n; e++) {
		if (keep > 0)
			get_nib(in, &pos);
		t += get_nib(in, &pos);
	}
	return (int64_t)(t << shift);
}

/* tm_group_reset empties the merge scratch for the next group. */
static void tm_group_reset(mf_rec *r)
{
	++r->tm_mgen;
	r->tm_nmlist[0] = r->tm_nmlist[1] = 0;
	r->tm_mmrest = r->tm_mcrest = 0;
}

/* tm_pass (timingRec.pass during the run) merges the closed intervals,
 * written at quantum 2^old_shift with old_keep, and the open one, which
 * ends before event nev and takes its carries as a flush would, into
 * groups of adjacent intervals of at most sp events and, unless one
 * interval is longer, span ns (0: no limit), written to the other buffers
 * at the quantum and keep of r. It returns 1 if the groups before the last
 * fit in limit nibbles (their number in *groups, their size, ids, time and
 * events in tm_olen, tm_onids, tm_otime, tm_ostart), else 0 (at the first
 * that does not, or as soon as they are bound not to: over_projected). The
 * last group is left in the merge scratch. */
static int tm_pass(mf_rec *r, int64_t sp, int64_t span, int32_t old_shift, int32_t old_keep, int64_t limit,
		   int64_t nev, int64_t *groups)
{
	int cur = r->tm_cur, alt = 1 - cur;
	const uint8_t *in = r->tm_buf[cur], *inids = r->tm_ids[cur];
	int64_t m = r->tm_nclosed + 1, pos = 0, idpos = 0, len = 0, nids = 0, gev = 0, gtime = 0, ng = 0, ostart = 0;
	uint64_t time = 0;
	r->tm_pgen++;
	r->tm_nplist = 0;
	r->tm_prcarry[0] = r->tm_prcarry[1] = 0;
	mf_tm_slot *msum = r->tm_m;
	uint32_t *mlist[2] = {r->tm_mlist[0], r->tm_mlist[1]};
	tm_group_reset(r);
	*groups = 0;
	for (int64_t k = 0; k < m; k++) {
		/* the interval's events, and its time where the group's
		 * limits need it before the merge; the merge sums it too */
		int64_t ev, tm = 0, body = pos;
		const int closed = k < r->tm_nclosed;
		if (closed) {
			uint64_t c = get_nib(in, &body);
			ev = c ? (int64_t)c : r->tm_spacing;
		} else {
			ev = nev - r->tm_start;
			tm = tm_open_time(r);
		}
		if (gev > 0 && gev + ev <= sp && span > 0 && closed)
			tm = tm_peek_time(in, body, old_shift, old_keep);
		if (gev > 0 && (gev + ev > sp || (span > 0 && tm > span - gtime))) {
			if (tm_put(r, r->tm_buf[alt], &len, limit, alt, &nids, r->tm_mlist, r->tm_nmlist, TM_MERGED,
				   TM_PASS, r->tm_keep, 1, r->tm_mmrest, r->tm_mcrest, &time, gev, sp))
				return 0;
			*groups = ++ng;
			ostart += gev;
			gev = gtime = 0;
			tm_group_reset(r);
			if (over_projected(len, limit, pos, r->tm_len))
				return 0;
		}
		if (closed) {
			const int64_t mgen = r->tm_mgen;
			int64_t nm[2] = {r->tm_nmlist[0], r->tm_nmlist[1]};
			pos = body;
			uint64_t n = get_nib(in, &pos), t = 0;
			n += get_nib(in, &pos);
			if (old_keep > 0) {
				t = get_nib(in, &pos);
				r->tm_mmrest += (int64_t)(t << old_shift);
				uint64_t c = get_nib(in, &pos);
				r->tm_mcrest += (int64_t)(c << old_shift);
				t += c;
			}
			for (uint64_t e = 0; e < n; e++) {
				if (old_keep > 0)
					get_nib(in, &pos); /* the index, as in the ids */
				uint64_t code = get_nib(in, &pos);
				t += code;
				int64_t v = (int64_t)(code << old_shift);
				uint32_t id = get_id(inids, &idpos);
				mf_tm_slot *sl = &msum[id]; /* tm_merge */
				if (sl->stamp != mgen) {
					sl->stamp = mgen;
					sl->v = v;
					mlist[id & 1][nm[id & 1]++] = id;
				} else {
					sl->v += v;
				}
			}
			r->tm_nmlist[0] = nm[0];
			r->tm_nmlist[1] = nm[1];
			tm = (int64_t)(t << old_shift);
		} else { /* the open interval, the last */
			r->tm_mmrest += r->tm_mrest + r->tm_rcarry[0];
			r->tm_mcrest += r->tm_crest + r->tm_rcarry[1];
			for (int kind = 0; kind < 2; kind++) {
				for (int64_t e = 0; e < r->tm_nopen[kind]; e++) {
					uint32_t id = r->tm_open[kind][e];
					tm_merge(r, id, TM_F(r, id, tsum) + r->tm_carry[id]);
				}
			}
		}
		gev += ev;
		gtime = sat_add(gtime, tm > 0 ? tm : 0);
	}
	r->tm_olen = len;
	r->tm_onids = nids;
	r->tm_otime = (int64_t)time;
	r->tm_ostart = ostart;
	return 1;
}

/* tm_compact (timingRec.compact during the run) merges the closed
 * intervals and the open one, which ends before event nev, until they fit
 * in MF_TM_TARGET/8 of the budget and the interval limit: when the budget
 * is what is exceeded (coarsen), at the quantum for the time so far, first
 * alone if that coarsens it enough; then at 2, 4, ... times the spacing
 * (one pass per try, stopped as soon as it is over), each with the span
 * of its spacing (span_for). The merged intervals are written to the
 * other buffers and then published, so a signal handler sees the old
 * intervals or the new ones, never a mix; the last group becomes the open
 * interval. */
static void tm_compact(mf_rec *r, int coarsen, int64_t nev)
{
	int64_t target = r->tm_budget * MF_TM_TARGET / 8;
	int32_t old_shift = r->tm_shift, old_keep = r->tm_keep;
	const int64_t total = r->tm_ctime + tm_open_time(r);
	if (coarsen) {
		int32_t s = quantum_shift(total);
		if (s > r->tm_shift)
			r->tm_shift = s;
	}
	/* requantizing alone pays when the quantum grows at least 8-fold */
	int64_t first = r->tm_shift >= old_shift + 3 ? 1 : 2, g = first, sp, span, groups;
	for (;;) {
		sp = r->tm_spacing * g;
		span = span_for(sp, total, nev);
		int ok = tm_pass(r, sp, span, old_shift, old_keep, target, nev, &groups);
		if (r->failed) {
			r->tm_shift = old_shift;
			r->tm_keep = old_keep;
			return;
		}
		if (ok && (r->tm_maxint == 0 || groups + 1 <= r->tm_maxint))
			break;
		if (r->tm_keep == 0 && !ok && nev / sp < MF_TM_MIN_INTERVALS) {
			/* keepFor: MF_TM_MIN_INTERVALS capped intervals fit */
			int64_t k = (r->tm_budget * MF_TM_TARGET / 8 / MF_TM_MIN_INTERVALS - MF_TM_IHEAD_MAX) / MF_TM_ENTRY_MAX;
			r->tm_keep = k < 1 ? 1 : (int32_t)k;
			g = first;
			continue;
		}
		g *= 2;
	}
	r->tm_cur = 1 - r->tm_cur;
	r->tm_len = r->tm_olen;
	r->tm_nids = r->tm_onids;
	r->tm_ctime = r->tm_otime;
	r->tm_nclosed = groups;
	r->tm_spacing = sp;
	r->tm_span = span;
	r->tm_start = r->tm_ostart;
	/* the open interval took its carries; the pass left its own */
	for (int kind = 0; kind < 2; kind++)
		for (int64_t i = 0; i < r->tm_nopen[kind]; i++)
			r->tm_carry[r->tm_open[kind][i]] = 0;
	for (int64_t i = 0; i < r->tm_nplist; i++) {
		uint32_t id = r->tm_plist[i];
		r->tm_carry[id] += r->tm_p[id].v;
	}
	r->tm_rcarry[0] = r->tm_prcarry[0];
	r->tm_rcarry[1] = r->tm_prcarry[1];
	tm_publish(r);
	tm_reset_open(r);
	for (int kind = 0; kind < 2; kind++) {
		for (int64_t i = 0; i < r->tm_nmlist[kind]; i++) {
			uint32_t id = r->tm_mlist[kind][i];
			mf_tm_touch(r, &TM_F(r, id, tsum), &TM_F(r, id, tstamp), id, r->tm_m[id].v);
		}
	}
	r->tm_mrest = r->tm_mmrest;
	r->tm_crest = r->tm_mcrest;
	tm_set_deadline(r);
}

/* flush_list writes the open interval's sums of kind (0 nodes, 1 edges),
 * rounded with their carries, at nibble *len of o and their ids at byte
 * *nids of io, zeroes them and adds their time as encoded to *t: the loop
 * of tm_put's fast path for the flush, with the reset. */
static inline __attribute__((always_inline)) void flush_list(mf_rec *r, int kind, int32_t shift, uint8_t *restrict o,
								int64_t *len, uint8_t *restrict io, int64_t *nids,
								uint64_t *t)
{
	const uint32_t *list = r->tm_open[kind];
	const int64_t n = r->tm_nopen[kind];
	int64_t *carry = r->tm_carry;
	int64_t l = *len, ni = *nids, rest;
	uint64_t tt = 0;
	for (int64_t i = 0; i < n; i++) {
		uint32_t id = list[i];
		int64_t *sum = kind ? &r->edges[id >> 1].tsum : &r->nodes[id >> 1].tsum;
		uint64_t code = quantize(*sum + carry[id], shift, &rest);
		*sum = 0;
		carry[id] = rest;
		put_nib(o, &l, code);
		ni = put_id(io, ni, id);
		tt += code << shift;
	}
	*len = l;
	*nids = ni;
	*t += tt;
}

/* Why the open interval could not be closed (timingRec.close). */
enum { TM_CLOSED, TM_OVER_COUNT, TM_OVER_BUDGET, TM_FAILED };

/* tm_close (timingRec.close during the run) closes the open interval,
 * which ends before event idx, if it fits the budget and leaves room for
 * one more interval within the limit. */
static int tm_close(mf_rec *r, int64_t idx)
{
	if (r->tm_maxint != 0 && r->tm_nclosed + 2 > r->tm_maxint)
		return TM_OVER_COUNT;
	const int64_t n0 = r->tm_nopen[0], n1 = r->tm_nopen[1], events = idx - r->tm_start;
	int64_t len = r->tm_len, nids = r->tm_nids;
	if (r->tm_keep == 0 && len + 22 + 2 * 11 + (n0 + n1) * 22 <= r->tm_budget &&
	    nids + 5 * (n0 + n1) <= r->tm_idcap[r->tm_cur]) {
		/* tm_put's fast path, with the reset of the open interval: the
		 * tables are in locals, the byte stores could alias r */
		uint8_t *restrict o = r->tm_buf[r->tm_cur], *restrict io = r->tm_ids[r->tm_cur];
		uint64_t t = 0;
		put_nib(o, &len, tm_events_code(events, r->tm_spacing));
		put_nib(o, &len, (uint64_t)n0);
		put_nib(o, &len, (uint64_t)n1);
		if (r->tm_shift == 0) { /* until the budget fills: quantize is the identity for sums > 0 */
			flush_list(r, 0, 0, o, &len, io, &nids, &t);
			flush_list(r, 1, 0, o, &len, io, &nids, &t);
		} else {
			flush_list(r, 0, r->tm_shift, o, &len, io, &nids, &t);
			flush_list(r, 1, r->tm_shift, o, &len, io, &nids, &t);
		}
		r->tm_len = len;
		r->tm_nids = nids;
		r->tm_ctime = (int64_t)((uint64_t)r->tm_ctime + t);
		r->tm_nclosed++;
		r->tm_start = idx;
		tm_publish(r);
		r->tm_gen++;
		r->tm_nopen[0] = r->tm_nopen[1] = 0;
		r->tm_mrest = r->tm_crest = 0;
		tm_set_deadline(r);
		return TM_CLOSED;
	}
	uint64_t time = (uint64_t)r->tm_ctime;
	if (tm_put(r, r->tm_buf[r->tm_cur], &len, r->tm_budget, r->tm_cur, &nids, r->tm_open, r->tm_nopen, TM_OPEN,
		   TM_RECORDING, r->tm_keep, 1, r->tm_mrest, r->tm_crest, &time, events, r->tm_spacing) == 0) {
		r->tm_len = len;
		r->tm_nids = nids;
		r->tm_ctime = (int64_t)time;
		r->tm_nclosed++;
		r->tm_start = idx;
		tm_publish(r);
		tm_reset_open(r);
		tm_set_deadline(r);
		return TM_CLOSED;
	}
	return r->failed ? TM_FAILED : TM_OVER_BUDGET;
}

/* mf_timing_flush closes the open interval before event idx, entered at
 * enter (timingRec.flush): a compaction leaves its last group open, and
 * closes it too if event idx would not fit in it. */
void mf_timing_flush(mf_rec *r, int64_t idx, int64_t enter)
{
	for (;;) {
		int why = tm_close(r, idx);
		if (why == TM_CLOSED || why == TM_FAILED)
			return;
		tm_compact(r, why == TM_OVER_BUDGET, idx);
		if (r->failed || (idx < r->tm_end && enter < r->tm_deadline))
			return;
	}
}

int64_t mf_timing_prefix(const mf_timing_pub *p, int64_t maxev)
{
	int64_t pos = 0, ev = 0;
	for (int64_t k = 0; k < p->nclosed; k++) {
		const int64_t at = pos;
		uint64_t c = get_nib(p->buf, &pos);
		ev += c ? (int64_t)c : p->spacing;
		if (ev > maxev)
			return at;
		uint64_t n = get_nib(p->buf, &pos);
		n += get_nib(p->buf, &pos);
		if (p->keep > 0)
			n = 2 * n + 2; /* remainders, indices */
		for (uint64_t e = 0; e < n; e++)
			get_nib(p->buf, &pos);
	}
	return pos;
}

/* A nibble stream written through put in chunks. */
typedef struct {
	void (*put)(void *ctx, const uint8_t *b, size_t n);
	void *ctx;
	uint8_t b[64];
	size_t n;
	uint64_t total;
	int half; /* a high nibble is pending */
	uint8_t pending;
} nib_out;

static void nout_byte(nib_out *o, uint8_t c)
{
	o->total++;
	if (!o->put)
		return;
	o->b[o->n++] = c;
	if (o->n == sizeof(o->b)) {
		o->put(o->ctx, o->b, o->n);
		o->n = 0;
	}
}

static void nout_var(nib_out *o, uint64_t v)
{
	for (;;) {
		uint8_t x = (uint8_t)(v & 7);
		v >>= 3;
		if (v)
			x |= 8;
		if (o->half)
			nout_byte(o, (uint8_t)(o->pending | x));
		else
			o->pending = (uint8_t)(x << 4);
		o->half = !o->half;
		if (!v)
			return;
	}
}

uint64_t mf_timing_encode(const mf_rec *r, const mf_timing_pub *p, int64_t nibs, int64_t open,
			  void (*put)(void *ctx, const uint8_t *b, size_t n), void *ctx)
{
	nib_out o = {.put = put, .ctx = ctx};
	if (nibs / 2 > 0 && put)
		put(ctx, p->buf, (size_t)(nibs / 2));
	o.total = (uint64_t)(nibs / 2);
	if (nibs & 1) {
		o.half = 1;
		o.pending = p->buf[nibs / 2] & 0xf0;
	}
	if (open > 0) {
		/* timingRec.put of the open interval, uncapped */
		int64_t rest;
		nout_var(&o, tm_events_code(open, p->spacing));
		nout_var(&o, (uint64_t)r->tm_nopen[0]);
		nout_var(&o, (uint64_t)r->tm_nopen[1]);
		if (p->keep > 0) {
			nout_var(&o, quantize(r->tm_mrest + r->tm_rcarry[0], p->shift, &rest));
			nout_var(&o, quantize(r->tm_crest + r->tm_rcarry[1], p->shift, &rest));
		}
		for (int kind = 0; kind < 2; kind++) {
			for (int64_t i = 0; i < r->tm_nopen[kind]; i++) {
				uint32_t id = r->tm_open[kind][i];
				if (p->keep > 0)
					nout_var(&o, id >> 1);
				nout_var(&o, quantize(TM_F(r, id, tsum) + r->tm_carry[id], p->shift, &rest));
			}
		}
	}
	if (o.half)
		nout_byte(&o, o.pending);
	if (put && o.n > 0)
		put(ctx, o.b, o.n);
	return o.total;
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
