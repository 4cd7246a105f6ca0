/*
 * timing.c: the timing intervals' slow paths, those of flowgraph's
 * timingRec step for step: closing an interval, compacting the closed ones
 * (merging adjacent intervals, coarsening the quantum), and encoding them
 * for a file. The hot path's part is inline in recorder.h (mf_tm_touch,
 * the checks that call mf_timing_check). See recorder.h and interpose/README.md,
 * "Timing".
 */
#include "recorder.h"

#include <stdlib.h>
#include <string.h>

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

/* mf_tm_reserve makes room for every node and edge in the timing lists and
 * per id arrays (whose new entries are zero: no carry, old stamps). */
int mf_tm_reserve(mf_rec *r)
{
	int64_t need = (int64_t)r->nnodes + r->nedges;
	if (need > r->tm.cap) {
		int64_t nc = r->tm.cap ? r->tm.cap * 2 : 64;
		while (nc < need)
			nc *= 2;
		if (tm_grow((void **)&r->tm_open[0], nc, sizeof(uint32_t)) ||
		    tm_grow((void **)&r->tm_open[1], nc, sizeof(uint32_t)) ||
		    tm_grow((void **)&r->tm.mlist[0], nc, sizeof(uint32_t)) ||
		    tm_grow((void **)&r->tm.mlist[1], nc, sizeof(uint32_t)) ||
		    tm_grow((void **)&r->tm.plist, nc, sizeof(uint32_t)) ||
		    tm_grow((void **)&r->tm.entries, nc, sizeof(uint32_t)) ||
		    tm_grow((void **)&r->tm.codes, nc, sizeof(uint64_t)) ||
		    tm_grow((void **)&r->tm.rests, nc, sizeof(int64_t)) || tm_grow((void **)&r->tm.kept, nc, 1) ||
		    tm_grow((void **)&r->tm.order, nc, sizeof(mf_cap_entry))) {
			mf_rec_fail(r);
			return -1;
		}
		r->tm.cap = nc;
	}
	int64_t ids = 2 * (int64_t)(r->nnodes > r->nedges ? r->nnodes : r->nedges);
	if (ids > r->tm.idn) {
		int64_t nc = r->tm.idn ? r->tm.idn * 2 : 128;
		while (nc < ids)
			nc *= 2;
		if (tm_grow((void **)&r->tm.carry, nc, sizeof(int64_t)) || tm_grow((void **)&r->tm.m, nc, sizeof(mf_tm_slot)) ||
		    tm_grow((void **)&r->tm.p, nc, sizeof(mf_tm_slot))) {
			mf_rec_fail(r);
			return -1;
		}
		memset(r->tm.carry + r->tm.idn, 0, (size_t)(nc - r->tm.idn) * sizeof(int64_t));
		memset(r->tm.m + r->tm.idn, 0, (size_t)(nc - r->tm.idn) * sizeof(mf_tm_slot));
		memset(r->tm.p + r->tm.idn, 0, (size_t)(nc - r->tm.idn) * sizeof(mf_tm_slot));
		r->tm.idn = nc;
	}
	return 0;
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

/* put_last writes the last gap and the last duration of an interval that
 * ends early at quantum 2^shift. */
static void put_last(uint8_t *b, int64_t *n, mf_tm_last last, int32_t shift)
{
	put_nib(b, n, (uint64_t)(last.gap > 0 ? last.gap : 0) >> shift);
	put_nib(b, n, (uint64_t)(last.dur > 0 ? last.dur : 0) >> shift);
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

void mf_tm_publish(mf_rec *r)
{
	int i = 1 - r->tm.pubi;
	r->tm.pub[i] = (mf_timing_pub){.buf = r->tm.buf[r->tm.cur], .len = r->tm.len, .nclosed = r->tm.nclosed,
				       .spacing = r->tm.spacing, .start = r->tm.start, .keep = r->tm.keep,
				       .shift = r->tm.shift};
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	r->tm.pubi = i;
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
	r->tm.mrest = r->tm.crest = 0;
}

static inline void tm_merge(mf_rec *r, uint32_t id, int64_t v)
{
	mf_tm_slot *s = &r->tm.m[id];
	if (s->stamp != r->tm.mgen) {
		s->stamp = r->tm.mgen;
		s->v = v;
		r->tm.mlist[id & 1][r->tm.nmlist[id & 1]++] = id;
	} else {
		s->v += v;
	}
}

/* The sums of an interval to put, and the carries to round it with. */
enum { TM_OPEN, TM_MERGED };
enum { TM_RECORDING, TM_PASS };

static inline int64_t tm_sum(const mf_rec *r, uint32_t id, int src)
{
	return src == TM_OPEN ? TM_F(r, id, tsum) : r->tm.m[id].v;
}

static inline int64_t tm_carry_of(const mf_rec *r, uint32_t id, int carry)
{
	if (carry == TM_RECORDING)
		return r->tm.carry[id];
	return r->tm.p[id].stamp == r->tm.pgen ? r->tm.p[id].v : 0;
}

static inline void tm_set_carry(mf_rec *r, uint32_t id, int carry, int64_t v)
{
	if (carry == TM_RECORDING) {
		r->tm.carry[id] = v;
		return;
	}
	mf_tm_slot *s = &r->tm.p[id];
	if (s->stamp == r->tm.pgen) {
		s->v = v;
	} else if (v != 0) { /* an untouched pass carry is 0 */
		s->stamp = r->tm.pgen;
		s->v = v;
		r->tm.plist[r->tm.nplist++] = id;
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
 * and its ids at byte *nids of r->tm.ids[ib] if that keeps *len within
 * limit, then updates the carries and adds its time as encoded to *time.
 * It returns 0, or -1 (nothing written) if the interval does not fit or
 * memory runs out (r->failed). */
static int tm_put(mf_rec *r, uint8_t *out, int64_t *len, int64_t limit, int ib, int64_t *nids,
		  uint32_t *const lists[2], const int64_t counts[2], int src, int carry, int32_t keep, int capped,
		  int64_t mr, int64_t cr, uint64_t *time, int64_t events, int64_t sp, mf_tm_last last)
{
	int32_t shift = r->tm.shift;
	int64_t n = counts[0] + counts[1];
	const uint64_t ec = tm_events_code(events, sp);
	if (*nids + 5 * n > r->tm.idcap[ib]) {
		int64_t c = r->tm.idcap[ib] ? 2 * r->tm.idcap[ib] : 4096;
		while (c < *nids + 5 * n)
			c *= 2;
		if (tm_grow((void **)&r->tm.ids[ib], c, 1)) {
			mf_rec_fail(r);
			return -1;
		}
		r->tm.idcap[ib] = c;
	}
	uint8_t *ids = r->tm.ids[ib];
	int64_t l = *len, ni = *nids;
	uint64_t t = 0;
	if (keep == 0 && l + 22 + 2 * 11 + 2 * 22 + n * 22 <= limit) {
		/* It fits whatever the codes: round and write in one go. The
		 * tables are in locals: the byte stores could alias r. */
		uint8_t *restrict o = out, *restrict io = ids;
		const mf_node *nodes = r->nodes;
		const mf_edge *edges = r->edges;
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
		return 0;
	}
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
	int64_t *rc = carry == TM_RECORDING ? r->tm.rcarry : r->tm.prcarry;
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
		kept = r->tm.kept;
		nn = 0;
		for (int64_t i = 0; i < counts[0]; i++)
			nn += kept[i];
		ne = (uint64_t)keep - nn;
	}
	int64_t size = nib_len(ec) + nib_len(nn) + nib_len(ne);
	if (keep > 0)
		size += nib_len(mc) + nib_len(cc);
	if (ec)
		size += nib_len((uint64_t)(last.gap > 0 ? last.gap : 0) >> shift) +
			nib_len((uint64_t)(last.dur > 0 ? last.dur : 0) >> shift);
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
	if (ec)
		put_last(out, &l, last, shift);
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
	int64_t total = r->tm.mrest + r->tm.crest;
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
	r->tm_end = r->tm.start + r->tm.spacing;
	r->tm_deadline = r->tm.span > 0 ? sat_add(sat_add(r->t0, r->tm.ctime), r->tm.span) : INT64_MAX;
	r->tm_long = INT64_MAX;
	if (r->tm.span > 0) { /* timingRec.setDeadline */
		int64_t a = r->tm.span / MF_TM_LONG_SHARE, b = r->tm.span / r->tm.spacing * MF_TM_OUTLIER;
		r->tm_long = a > b ? a : b;
		if (r->tm_long < 1)
			r->tm_long = 1;
	}
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
	++r->tm.mgen;
	r->tm.nmlist[0] = r->tm.nmlist[1] = 0;
	r->tm.mmrest = r->tm.mcrest = 0;
}

/* tm_pass (timingRec.pass during the run) merges the closed intervals,
 * written at quantum 2^old_shift with old_keep, and the open one, which
 * ends before event nev and takes its carries as a flush would, into
 * groups of adjacent intervals of at most sp events and, unless one
 * interval is longer, span ns (0: no limit), written to the other buffers
 * at the quantum and keep of r. It returns 1 if the groups before the last
 * fit in limit nibbles (their number in *groups, their size, ids, time and
 * events in tm.olen, tm.onids, tm.otime, tm.ostart), else 0 (at the first
 * that does not, or as soon as they are bound not to: over_projected). The
 * last group is left in the merge scratch. */
static int tm_pass(mf_rec *r, int64_t sp, int64_t span, int32_t old_shift, int32_t old_keep, int64_t limit,
		   int64_t nev, int64_t *groups)
{
	int cur = r->tm.cur, alt = 1 - cur;
	const uint8_t *in = r->tm.buf[cur], *inids = r->tm.ids[cur];
	int64_t m = r->tm.nclosed + 1, pos = 0, idpos = 0, len = 0, nids = 0, gev = 0, gtime = 0, ng = 0, ostart = 0;
	mf_tm_last glast = {0, 0}; /* of the group's last interval */
	uint64_t time = 0;
	r->tm.pgen++;
	r->tm.nplist = 0;
	r->tm.prcarry[0] = r->tm.prcarry[1] = 0;
	mf_tm_slot *msum = r->tm.m;
	uint32_t *mlist[2] = {r->tm.mlist[0], r->tm.mlist[1]};
	tm_group_reset(r);
	*groups = 0;
	for (int64_t k = 0; k < m; k++) {
		/* the interval's events, and its time where the group's
		 * limits need it before the merge; the merge sums it too */
		int64_t ev, tm = 0, body = pos;
		const int closed = k < r->tm.nclosed;
		uint64_t c = 0;
		if (closed) {
			c = get_nib(in, &body);
			ev = c ? (int64_t)c : r->tm.spacing;
		} else {
			ev = nev - r->tm.start;
			tm = tm_open_time(r);
		}
		if (gev > 0 && gev + ev <= sp && span > 0 && closed)
			tm = tm_peek_time(in, body, old_shift, old_keep);
		if (gev > 0 && (gev + ev > sp || (span > 0 && tm > span - gtime))) {
			if (tm_put(r, r->tm.buf[alt], &len, limit, alt, &nids, r->tm.mlist, r->tm.nmlist, TM_MERGED,
				   TM_PASS, r->tm.keep, 1, r->tm.mmrest, r->tm.mcrest, &time, gev, sp, glast))
				return 0;
			*groups = ++ng;
			ostart += gev;
			gev = gtime = 0;
			tm_group_reset(r);
			if (over_projected(len, limit, pos, r->tm.len))
				return 0;
		}
		if (closed) {
			const int64_t mgen = r->tm.mgen;
			int64_t nm[2] = {r->tm.nmlist[0], r->tm.nmlist[1]};
			pos = body;
			uint64_t n = get_nib(in, &pos), t = 0;
			n += get_nib(in, &pos);
			if (old_keep > 0) {
				t = get_nib(in, &pos);
				r->tm.mmrest += (int64_t)(t << old_shift);
				uint64_t c = get_nib(in, &pos);
				r->tm.mcrest += (int64_t)(c << old_shift);
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
			r->tm.nmlist[0] = nm[0];
			r->tm.nmlist[1] = nm[1];
			tm = (int64_t)(t << old_shift);
			glast.gap = glast.dur = 0;
			if (c) {
				glast.gap = (int64_t)(get_nib(in, &pos) << old_shift);
				glast.dur = (int64_t)(get_nib(in, &pos) << old_shift);
			}
		} else { /* the open interval, the last */
			r->tm.mmrest += r->tm.mrest + r->tm.rcarry[0];
			r->tm.mcrest += r->tm.crest + r->tm.rcarry[1];
			for (int kind = 0; kind < 2; kind++) {
				for (int64_t e = 0; e < r->tm_nopen[kind]; e++) {
					uint32_t id = r->tm_open[kind][e];
					tm_merge(r, id, TM_F(r, id, tsum) + r->tm.carry[id]);
				}
			}
			glast = r->tm.lastin;
		}
		gev += ev;
		gtime = sat_add(gtime, tm > 0 ? tm : 0);
	}
	r->tm.olen = len;
	r->tm.onids = nids;
	r->tm.otime = (int64_t)time;
	r->tm.ostart = ostart;
	return 1;
}

/* tm_compact (timingRec.compact during the run) merges the closed
 * intervals and the open one, which ends before event nev, until they fit
 * in MF_TM_TARGET/8 of the budget and the interval limit: when the budget
 * is what is exceeded (coarsen), at the quantum for the time so far, first
 * alone if that coarsens it enough; then at 2, 4, ... times the spacing
 * (one pass per try, stopped as soon as it is over), each first with the
 * span of half of it, then with its own (span_for). The merged intervals are written to the
 * other buffers and then published, so a signal handler sees the old
 * intervals or the new ones, never a mix; the last group becomes the open
 * interval. */
static void tm_compact(mf_rec *r, int coarsen, int64_t nev)
{
	int64_t target = r->tm.budget * MF_TM_TARGET / 8;
	int32_t old_shift = r->tm.shift, old_keep = r->tm.keep;
	const int64_t total = r->tm.ctime + tm_open_time(r);
	if (coarsen) {
		int32_t s = quantum_shift(total);
		if (s > r->tm.shift)
			r->tm.shift = s;
	}
	/* requantizing alone pays when the quantum grows at least 8-fold */
	int64_t first = r->tm.shift >= old_shift + 3 ? 1 : 2, g = first, sp, span, groups;
	int half = first > 1;
	for (;;) {
		sp = r->tm.spacing * g;
		span = span_for(half ? sp / 2 : sp, total, nev);
		int ok = tm_pass(r, sp, span, old_shift, old_keep, target, nev, &groups);
		if (r->failed) {
			r->tm.shift = old_shift;
			r->tm.keep = old_keep;
			return;
		}
		if (ok && (r->tm.maxint == 0 || groups + 1 <= r->tm.maxint))
			break;
		if (r->tm.keep == 0 && !ok && !half && nev / sp < MF_TM_MIN_INTERVALS) {
			/* keepFor: MF_TM_MIN_INTERVALS capped intervals fit */
			int64_t k = (r->tm.budget * MF_TM_TARGET / 8 / MF_TM_MIN_INTERVALS - MF_TM_IHEAD_MAX) / MF_TM_ENTRY_MAX;
			r->tm.keep = k < 1 ? 1 : (int32_t)k;
			g = first;
			half = first > 1;
			continue;
		}
		if (half) {
			half = 0;
		} else {
			g *= 2;
			half = 1;
		}
	}
	r->tm.cur = 1 - r->tm.cur;
	r->tm.len = r->tm.olen;
	r->tm.nids = r->tm.onids;
	r->tm.ctime = r->tm.otime;
	r->tm.nclosed = groups;
	r->tm.spacing = sp;
	r->tm.span = span;
	r->tm.start = r->tm.ostart;
	/* the open interval took its carries; the pass left its own */
	for (int kind = 0; kind < 2; kind++)
		for (int64_t i = 0; i < r->tm_nopen[kind]; i++)
			r->tm.carry[r->tm_open[kind][i]] = 0;
	for (int64_t i = 0; i < r->tm.nplist; i++) {
		uint32_t id = r->tm.plist[i];
		r->tm.carry[id] += r->tm.p[id].v;
	}
	r->tm.rcarry[0] = r->tm.prcarry[0];
	r->tm.rcarry[1] = r->tm.prcarry[1];
	mf_tm_publish(r);
	tm_reset_open(r);
	for (int kind = 0; kind < 2; kind++) {
		for (int64_t i = 0; i < r->tm.nmlist[kind]; i++) {
			uint32_t id = r->tm.mlist[kind][i];
			mf_tm_touch(r, &TM_F(r, id, tsum), &TM_F(r, id, tstamp), id, r->tm.m[id].v);
		}
	}
	r->tm.mrest = r->tm.mmrest;
	r->tm.crest = r->tm.mcrest;
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
	int64_t *carry = r->tm.carry;
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
	if (r->tm.maxint != 0 && r->tm.nclosed + 2 > r->tm.maxint)
		return TM_OVER_COUNT;
	const int64_t n0 = r->tm_nopen[0], n1 = r->tm_nopen[1], events = idx - r->tm.start;
	int64_t len = r->tm.len, nids = r->tm.nids;
	if (r->tm.keep == 0 && len + 22 + 2 * 11 + 2 * 22 + (n0 + n1) * 22 <= r->tm.budget &&
	    nids + 5 * (n0 + n1) <= r->tm.idcap[r->tm.cur]) {
		/* tm_put's fast path, with the reset of the open interval: the
		 * tables are in locals, the byte stores could alias r */
		uint8_t *restrict o = r->tm.buf[r->tm.cur], *restrict io = r->tm.ids[r->tm.cur];
		uint64_t t = 0;
		const uint64_t ec = tm_events_code(events, r->tm.spacing);
		put_nib(o, &len, ec);
		put_nib(o, &len, (uint64_t)n0);
		put_nib(o, &len, (uint64_t)n1);
		if (r->tm.shift == 0) { /* until the budget fills: quantize is the identity for sums > 0 */
			flush_list(r, 0, 0, o, &len, io, &nids, &t);
			flush_list(r, 1, 0, o, &len, io, &nids, &t);
		} else {
			flush_list(r, 0, r->tm.shift, o, &len, io, &nids, &t);
			flush_list(r, 1, r->tm.shift, o, &len, io, &nids, &t);
		}
		if (ec)
			put_last(o, &len, r->tm.lastin, r->tm.shift);
		r->tm.len = len;
		r->tm.nids = nids;
		r->tm.ctime = (int64_t)((uint64_t)r->tm.ctime + t);
		r->tm.nclosed++;
		r->tm.start = idx;
		mf_tm_publish(r);
		r->tm_gen++;
		r->tm_nopen[0] = r->tm_nopen[1] = 0;
		r->tm.mrest = r->tm.crest = 0;
		tm_set_deadline(r);
		return TM_CLOSED;
	}
	uint64_t time = (uint64_t)r->tm.ctime;
	if (tm_put(r, r->tm.buf[r->tm.cur], &len, r->tm.budget, r->tm.cur, &nids, r->tm_open, r->tm_nopen, TM_OPEN,
		   TM_RECORDING, r->tm.keep, 1, r->tm.mrest, r->tm.crest, &time, events, r->tm.spacing,
		   r->tm.lastin) == 0) {
		r->tm.len = len;
		r->tm.nids = nids;
		r->tm.ctime = (int64_t)time;
		r->tm.nclosed++;
		r->tm.start = idx;
		mf_tm_publish(r);
		tm_reset_open(r);
		tm_set_deadline(r);
		return TM_CLOSED;
	}
	return r->failed ? TM_FAILED : TM_OVER_BUDGET;
}

/* stands_out is flowgraph's standsOut: v, the last of the values that add
 * up to sum, if it is more than 1/MF_TM_OUTLIER of sum and not all of it,
 * else 0. */
static inline int64_t stands_out(int64_t v, int64_t sum)
{
	return v < sum && v > sum / MF_TM_OUTLIER ? v : 0;
}

/* outlier is past.outlier: whether v is more than MF_TM_OUTLIER times the
 * mean of count values of total (0 without one). */
static inline int outlier(int64_t v, int64_t total, int64_t count)
{
	return count > 0 && v > 0 &&
	       (unsigned __int128)(uint64_t)v * (uint64_t)count >
		       (unsigned __int128)MF_TM_OUTLIER * (uint64_t)(total > 0 ? total : 0);
}

/* tm_flush closes the open interval before event idx, entered at
 * enter after gap, whose edge's open sum with it is gapsum
 * (timingRec.flush): a compaction leaves its last group open, and closes
 * it too if event idx would not fit in it. The interval keeps its last gap
 * and, if it was long, the duration of its last event (node prev) apart
 * where they stand out. */
static void tm_flush(mf_rec *r, int64_t idx, int64_t enter, int64_t gap, int64_t gapsum)
{
	const mf_node *p = &r->nodes[r->prev];
	r->tm.lastin.gap = stands_out(gap, gapsum);
	r->tm.lastin.dur = r->tm.lidx == idx - 1 ? stands_out(r->tm.ldur, p->tstamp == r->tm_gen ? p->tsum : 0) : 0;
	for (;;) {
		int why = tm_close(r, idx);
		if (why == TM_CLOSED || why == TM_FAILED)
			return;
		tm_compact(r, why == TM_OVER_BUDGET, idx);
		if (r->failed || (idx < r->tm_end && enter < r->tm_deadline))
			return;
	}
}

void mf_timing_check(mf_rec *r, int64_t idx, int64_t enter, int64_t gap, int64_t dur, const mf_node *n,
		     const mf_edge *e, int ecounted)
{
	const int long_ = gap + dur >= r->tm_long;
	if (idx >= r->tm_end || enter >= r->tm_deadline ||
	    (long_ && outlier(gap, e->time.total - gap, e->count - ecounted)))
		tm_flush(r, idx, enter, gap, e->tsum);
	if (long_) {
		r->tm.lidx = idx;
		r->tm.ldur = dur;
		if (outlier(dur, n->time.total - dur, n->count - 1) && r->tm_end > idx + 1)
			r->tm_end = idx + 1;
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
		nout_var(&o, (uint64_t)r->tm_nopen[0]);
		nout_var(&o, (uint64_t)r->tm_nopen[1]);
		if (p->keep > 0) {
			nout_var(&o, quantize(r->tm.mrest + r->tm.rcarry[0], p->shift, &rest));
			nout_var(&o, quantize(r->tm.crest + r->tm.rcarry[1], p->shift, &rest));
		}
		for (int kind = 0; kind < 2; kind++) {
			for (int64_t i = 0; i < r->tm_nopen[kind]; i++) {
				uint32_t id = r->tm_open[kind][i];
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

