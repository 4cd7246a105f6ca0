/*
 * seq.c: sequence numbers: the same algorithm as flowgraph.Seq (seq.go),
 * which the tests compare it with, the views a writer reads and their
 * encoding (flowgraph.Seq.AppendBinary).
 */
#include "seq.h"
#include "record.h"

#include <stdlib.h>
#include <string.h>

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

/* bk_touch saves terms [p, bk.from) of e before the fold changes them, so a
 * signal handler keeps seeing the state before the close. */
static void bk_touch(mf_rec *r, const mf_edge *e, int32_t p)
{
	if (p >= r->bk.from)
		return;
	memcpy(&r->bk.terms[p], &e->terms[p], (size_t)(r->bk.from - p) * sizeof(mf_term));
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	r->bk.from = p;
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
	return mf_grow((void **)p, cap, need, sizeof(mf_term));
}

void mf_seq_close(mf_rec *r, mf_edge *e, int64_t n)
{
	if (e->ocount > 0) {
		if (grow_terms(&e->terms, &e->capterms, e->nterms + 1) ||
		    mf_grow((void **)&e->roots, &e->caproots, e->nroots + 1, sizeof(int32_t)) ||
		    grow_terms(&r->bk.terms, &r->bk.cap, e->nterms + 1)) {
			mf_rec_fail(r);
			return;
		}
		/* Until the new run is open, a signal handler sees the terms and
		 * the open run as they are now (mf_rec_seq). */
		r->bk.from = r->bk.n = e->nterms;
		r->bk.ostart = e->ostart;
		r->bk.ostride = e->ostride;
		r->bk.ocount = e->ocount;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		r->bk.edge = (int32_t)(e - r->tab.edges);
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
	r->bk.edge = -1;
}

/* edge_pending is how many untimed repeats along e wait for mf_settle
 * (they go along prev's self-loop). */
static int64_t edge_pending(const mf_rec *r, const mf_edge *e)
{
	return r->pending > 0 && r->prev >= 0 && e == &r->tab.edges[r->tab.nodes[r->prev].succ_edge] ? r->pending : 0;
}

mf_seqv mf_rec_seq(const mf_rec *r, const mf_edge *e)
{
	if (r->bk.edge >= 0 && &r->tab.edges[r->bk.edge] == e)
		return (mf_seqv){.a = e->terms, .na = r->bk.from, .b = r->bk.terms + r->bk.from, .nb = r->bk.n - r->bk.from,
				 .ostart = r->bk.ostart, .ostride = r->bk.ostride, .ocount = r->bk.ocount};
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
	for (int32_t i = 0; i < r->tab.nedges; i++)
		total += mf_rec_edge_count(r, &r->tab.edges[i]);
	if (total + 1 < v.nevents)
		v.nevents = total + 1;
	for (int32_t i = 0; i < r->tab.nedges; i++) {
		const mf_edge *e = &r->tab.edges[i];
		mf_seqv sv = mf_rec_seq(r, e);
		if (mf_rec_edge_count(r, e) != mf_seqv_len(&sv) || mf_seqv_last(&sv) >= v.nevents) {
			v.nevents = 0;
			v.drop_edges = 1;
			break;
		}
	}
	return v;
}
