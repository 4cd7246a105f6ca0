/*
 * timing.c: the timing intervals' slow paths, those of flowgraph's
 * timingRec step for step: closing an interval, compacting the closed ones
 * (merging adjacent intervals, coarsening the quantum). tmenc.c encodes
 * them; the hot path's part is inline in record.h (mf_tm_touch, the checks
 * that call mf_timing_check). See interpose/README.md, "Timing".
 */
#include "timing.h"
#include "record.h"
#include "tmenc.h"

#include <stdlib.h>
#include <string.h>

/* mf_tm_reserve makes room for every node and edge in the timing lists and
 * per id arrays (whose new entries are zero: no carry, old stamps). */
int mf_tm_reserve(mf_rec *r)
{
	int64_t need = (int64_t)r->tab.nnodes + r->tab.nedges;
	if (need > r->tm.cap) {
		int64_t nc = r->tm.cap ? r->tm.cap * 2 : 64;
		while (nc < need)
			nc *= 2;
		if (tm_grow((void **)&r->iv.ids[0], nc, sizeof(uint32_t)) ||
		    tm_grow((void **)&r->iv.ids[1], nc, sizeof(uint32_t)) ||
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
	int64_t ids = 2 * (int64_t)(r->tab.nnodes > r->tab.nedges ? r->tab.nnodes : r->tab.nedges);
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
	for (int64_t i = 0; i < r->iv.nids[0]; i++)
		r->tab.nodes[r->iv.ids[0][i] >> 1].tsum = 0;
	for (int64_t i = 0; i < r->iv.nids[1]; i++)
		r->tab.edges[r->iv.ids[1][i] >> 1].tsum = 0;
	r->iv.gen++;
	r->iv.nids[0] = r->iv.nids[1] = 0;
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
		for (int64_t i = 0; i < r->iv.nids[kind]; i++)
			total += TM_F(r, r->iv.ids[kind][i], tsum);
	return total;
}

static inline int64_t sat_add(int64_t a, int64_t b) /* b >= 0 */
{
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* tm_set_deadline sets where the open interval closes (timingRec's
 * setDeadline, and iv.end). */
static void tm_set_deadline(mf_rec *r)
{
	r->iv.end = r->tm.start + r->tm.spacing;
	r->iv.deadline = r->tm.span > 0 ? sat_add(sat_add(r->t0, r->tm.ctime), r->tm.span) : INT64_MAX;
	r->iv.long_ns = INT64_MAX;
	if (r->tm.span > 0) { /* timingRec.setDeadline */
		int64_t a = r->tm.span / MF_TM_LONG_SHARE, b = r->tm.span / r->tm.spacing * MF_TM_OUTLIER;
		r->iv.long_ns = a > b ? a : b;
		if (r->iv.long_ns < 1)
			r->iv.long_ns = 1;
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
			if (mf_tm_put(r, r->tm.buf[alt], &len, limit, alt, &nids, r->tm.mlist, r->tm.nmlist, TM_MERGED,
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
				for (int64_t e = 0; e < r->iv.nids[kind]; e++) {
					uint32_t id = r->iv.ids[kind][e];
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
		for (int64_t i = 0; i < r->iv.nids[kind]; i++)
			r->tm.carry[r->iv.ids[kind][i]] = 0;
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
	const uint32_t *list = r->iv.ids[kind];
	const int64_t n = r->iv.nids[kind];
	int64_t *carry = r->tm.carry;
	int64_t l = *len, ni = *nids, rest;
	uint64_t tt = 0;
	for (int64_t i = 0; i < n; i++) {
		uint32_t id = list[i];
		int64_t *sum = kind ? &r->tab.edges[id >> 1].tsum : &r->tab.nodes[id >> 1].tsum;
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
	const int64_t n0 = r->iv.nids[0], n1 = r->iv.nids[1], events = idx - r->tm.start;
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
		r->iv.gen++;
		r->iv.nids[0] = r->iv.nids[1] = 0;
		r->tm.mrest = r->tm.crest = 0;
		tm_set_deadline(r);
		return TM_CLOSED;
	}
	uint64_t time = (uint64_t)r->tm.ctime;
	if (mf_tm_put(r, r->tm.buf[r->tm.cur], &len, r->tm.budget, r->tm.cur, &nids, r->iv.ids, r->iv.nids, TM_OPEN,
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
	const mf_node *p = &r->tab.nodes[r->prev];
	r->tm.lastin.gap = stands_out(gap, gapsum);
	r->tm.lastin.dur = r->tm.lidx == idx - 1 ? stands_out(r->tm.ldur, p->tstamp == r->iv.gen ? p->tsum : 0) : 0;
	for (;;) {
		int why = tm_close(r, idx);
		if (why == TM_CLOSED || why == TM_FAILED)
			return;
		tm_compact(r, why == TM_OVER_BUDGET, idx);
		if (r->failed || (idx < r->iv.end && enter < r->iv.deadline))
			return;
	}
}

void mf_timing_check(mf_rec *r, int64_t idx, int64_t enter, int64_t gap, int64_t dur, const mf_node *n,
		     const mf_edge *e, int ecounted)
{
	const int long_ = gap + dur >= r->iv.long_ns;
	if (idx >= r->iv.end || enter >= r->iv.deadline ||
	    (long_ && outlier(gap, e->time.total - gap, e->count - ecounted)))
		tm_flush(r, idx, enter, gap, e->tsum);
	if (long_) {
		r->tm.lidx = idx;
		r->tm.ldur = dur;
		if (outlier(dur, n->time.total - dur, n->count - 1) && r->iv.end > idx + 1)
			r->iv.end = idx + 1;
	}
}

