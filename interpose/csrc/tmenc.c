/*
 * tmenc.c: the timing encoder: an interval's sums rounded and written as
 * nibbles (timingRec.put), the prefix of the closed intervals a partial
 * file may take, and the encoding of the intervals for a file.
 */
#include "tmenc.h"
#include "record.h"

#include <string.h>

static int cap_cmp(const void *a, const void *b)
{
	const mf_cap_entry *x = a, *y = b;
	if (x->code != y->code)
		return x->code > y->code ? -1 : 1;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

/* cap_codes (timingRec.capCodes) marks the keep largest of the n codes of
 * r->tm.codes (ties: the earlier first) in r->tm.kept and folds the others
 * into the remainder codes by kind. */
static void cap_codes(mf_rec *r, int64_t n, int32_t keep, uint64_t *mc, uint64_t *cc)
{
	for (int64_t i = 0; i < n; i++)
		r->tm.order[i] = (mf_cap_entry){.code = r->tm.codes[i], .pos = i};
	qsort(r->tm.order, (size_t)n, sizeof(mf_cap_entry), cap_cmp);
	memset(r->tm.kept, 0, (size_t)n);
	for (int32_t k = 0; k < keep; k++)
		r->tm.kept[r->tm.order[k].pos] = 1;
	for (int64_t i = 0; i < n; i++) {
		if (r->tm.kept[i])
			continue;
		if (r->tm.entries[i] & 1)
			*cc += r->tm.codes[i];
		else
			*mc += r->tm.codes[i];
	}
}

/* tm_ids_room makes room for the ids of n entries at byte nids of
 * r->tm.ids[ib]; it returns -1 when out of memory (r->failed). */
static int tm_ids_room(mf_rec *r, int ib, int64_t nids, int64_t n)
{
	if (nids + 5 * n > r->tm.idcap[ib]) {
		int64_t c = r->tm.idcap[ib] ? 2 * r->tm.idcap[ib] : 4096;
		while (c < nids + 5 * n)
			c *= 2;
		if (tm_grow((void **)&r->tm.ids[ib], c, 1)) {
			mf_rec_fail(r);
			return -1;
		}
		r->tm.idcap[ib] = c;
	}
	return 0;
}

/* tm_put_direct is mf_tm_put of an uncapped interval that fits whatever
 * the codes: round and write in one go. The tables are in locals: the byte
 * stores could alias r. */
static inline void tm_put_direct(mf_rec *r, uint8_t *restrict o, int64_t *len, uint8_t *restrict io, int64_t *nids,
				 uint32_t *const lists[2], const int64_t counts[2], int src, int carry,
				 uint64_t *time, uint64_t ec, mf_tm_last last)
{
	const int32_t shift = r->tm.shift;
	int64_t l = *len, ni = *nids;
	uint64_t t = 0;
	const mf_node *nodes = r->tab.nodes;
	const mf_edge *edges = r->tab.edges;
	const mf_tm_slot *msum = r->tm.m;
	int64_t *carries = r->tm.carry;
	mf_tm_slot *pc = r->tm.p;
	const int64_t pgen = r->tm.pgen;
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
	if (ec)
		put_last(o, &l, last, shift);
	*len = l;
	*nids = ni;
	*time += t;
}

/* tm_round rounds the entries of lists with the raw sums of src and the
 * carries of carry into r->tm.entries, codes and rests. */
static void tm_round(mf_rec *r, uint32_t *const lists[2], const int64_t counts[2], int src, int carry)
{
	const int32_t shift = r->tm.shift;
	uint32_t *entries = r->tm.entries;
	uint64_t *codes = r->tm.codes;
	int64_t *rests = r->tm.rests;
	for (int kind = 0, k = 0; kind < 2; kind++) {
		for (int64_t i = 0; i < counts[kind]; i++, k++) {
			uint32_t id = lists[kind][i];
			entries[k] = id;
			codes[k] = quantize(tm_sum(r, id, src) + tm_carry_of(r, id, carry), shift, &rests[k]);
		}
	}
}

/* tm_head is the head of an interval as mf_tm_put writes it: the events'
 * code, the kept nodes and edges, the remainders' codes and their rests,
 * and which of the rounded entries are kept (NULL: all). */
typedef struct {
	uint64_t ec, nn, ne, mc, cc;
	int64_t mrest, crest;
	const uint8_t *kept;
} tm_head;

/* tm_cap rounds the raw remainders mr, cr with the carries rc (keep > 0)
 * and, when capped and over keep, keeps the keep largest of the n rounded
 * entries (cap_codes). */
static void tm_cap(mf_rec *r, tm_head *h, const int64_t counts[2], int64_t n, int32_t keep, int capped, int64_t mr,
		   int64_t cr, const int64_t *rc)
{
	const int32_t shift = r->tm.shift;
	h->nn = (uint64_t)counts[0];
	h->ne = (uint64_t)counts[1];
	if (keep > 0) {
		h->mc = quantize(mr + rc[0], shift, &h->mrest);
		h->cc = quantize(cr + rc[1], shift, &h->crest);
	}
	if (capped && keep > 0 && n > keep) {
		cap_codes(r, n, keep, &h->mc, &h->cc);
		h->kept = r->tm.kept;
		h->nn = 0;
		for (int64_t i = 0; i < counts[0]; i++)
			h->nn += h->kept[i];
		h->ne = (uint64_t)keep - h->nn;
	}
}

/* tm_size is the nibbles of the interval of head h and n rounded entries. */
static int64_t tm_size(const mf_rec *r, const tm_head *h, int64_t n, int32_t keep, mf_tm_last last)
{
	const int32_t shift = r->tm.shift;
	int64_t size = nib_len(h->ec) + nib_len(h->nn) + nib_len(h->ne);
	if (keep > 0)
		size += nib_len(h->mc) + nib_len(h->cc);
	if (h->ec)
		size += nib_len((uint64_t)(last.gap > 0 ? last.gap : 0) >> shift) +
			nib_len((uint64_t)(last.dur > 0 ? last.dur : 0) >> shift);
	for (int64_t i = 0; i < n; i++) {
		if (h->kept && !h->kept[i])
			continue;
		size += nib_len(r->tm.codes[i]);
		if (keep > 0)
			size += nib_len(r->tm.entries[i] >> 1);
	}
	return size;
}

/* tm_write writes the interval of head h and n rounded entries at nibble
 * *len of out and its ids at byte *nids of ids, updates the carries and
 * returns its time as encoded. */
static uint64_t tm_write(mf_rec *r, const tm_head *h, int64_t n, int32_t keep, int carry, uint8_t *out, int64_t *len,
			 uint8_t *ids, int64_t *nids, mf_tm_last last)
{
	const int32_t shift = r->tm.shift;
	const uint32_t *entries = r->tm.entries;
	const uint64_t *codes = r->tm.codes;
	const int64_t *rests = r->tm.rests;
	int64_t l = *len, ni = *nids;
	uint64_t t = 0;
	put_nib(out, &l, h->ec);
	put_nib(out, &l, h->nn);
	put_nib(out, &l, h->ne);
	if (keep > 0) {
		put_nib(out, &l, h->mc);
		put_nib(out, &l, h->cc);
		t = (h->mc + h->cc) << shift;
	}
	for (int64_t i = 0; i < n; i++) {
		if (!h->kept || h->kept[i]) {
			if (keep > 0)
				put_nib(out, &l, entries[i] >> 1);
			put_nib(out, &l, codes[i]);
			ni = put_id(ids, ni, entries[i]);
			t += codes[i] << shift;
		}
		tm_set_carry(r, entries[i], carry, rests[i]);
	}
	if (h->ec)
		put_last(out, &l, last, shift);
	*len = l;
	*nids = ni;
	return t;
}

int mf_tm_put(mf_rec *r, uint8_t *out, int64_t *len, int64_t limit, int ib, int64_t *nids, uint32_t *const lists[2],
	      const int64_t counts[2], int src, int carry, int32_t keep, int capped, int64_t mr, int64_t cr,
	      uint64_t *time, int64_t events, int64_t sp, mf_tm_last last)
{
	const int64_t n = counts[0] + counts[1];
	const uint64_t ec = tm_events_code(events, sp);
	if (tm_ids_room(r, ib, *nids, n))
		return -1;
	if (keep == 0 && *len + 22 + 2 * 11 + 2 * 22 + n * 22 <= limit) {
		tm_put_direct(r, out, len, r->tm.ids[ib], nids, lists, counts, src, carry, time, ec, last);
		return 0;
	}
	tm_round(r, lists, counts, src, carry);
	int64_t *rc = carry == TM_RECORDING ? r->tm.rcarry : r->tm.prcarry;
	tm_head h = {.ec = ec};
	tm_cap(r, &h, counts, n, keep, capped, mr, cr, rc);
	if (*len + tm_size(r, &h, n, keep, last) > limit)
		return -1;
	*time += tm_write(r, &h, n, keep, carry, out, len, r->tm.ids[ib], nids, last);
	if (keep > 0) {
		rc[0] = h.mrest;
		rc[1] = h.crest;
	}
	return 0;
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
		if (c)
			n += 2; /* the last gap and duration */
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
		nout_var(&o, (uint64_t)r->iv.nids[0]);
		nout_var(&o, (uint64_t)r->iv.nids[1]);
		if (p->keep > 0) {
			nout_var(&o, quantize(r->tm.mrest + r->tm.rcarry[0], p->shift, &rest));
			nout_var(&o, quantize(r->tm.crest + r->tm.rcarry[1], p->shift, &rest));
		}
		for (int kind = 0; kind < 2; kind++) {
			for (int64_t i = 0; i < r->iv.nids[kind]; i++) {
				uint32_t id = r->iv.ids[kind][i];
				if (p->keep > 0)
					nout_var(&o, id >> 1);
				nout_var(&o, quantize(TM_F(r, id, tsum) + r->tm.carry[id], p->shift, &rest));
			}
		}
		if (tm_events_code(open, p->spacing)) { /* no event follows: no last gap or duration */
			nout_var(&o, 0);
			nout_var(&o, 0);
		}
	}
	if (o.half)
		nout_byte(&o, o.pending);
	if (put && o.n > 0)
		put(ctx, o.b, o.n);
	return o.total;
}
