/*
 * record.h: the recorder's hot path, inline: mf_record (a new event),
 * mf_repeat and mf_record_rep (repeats along a self-loop), and the small
 * helpers they share with the slow paths. The inline steps of fast
 * repeats are tight.h's; the slow paths are declared by seq.h, settle.h,
 * tables.h, timing.h and trace.h.
 *
 * A successor cache per node hits for every loop iteration after the
 * first, so a repeated event costs a key compare, a few stat updates, one
 * sequence-run extension and two timing sums.
 */
#ifndef MPIFLOW_RECORD_H
#define MPIFLOW_RECORD_H

#include "recorder.h"
#include "seq.h"
#include "settle.h"
#include "tables.h"
#include "tight.h"
#include "timing.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* mf_timing_sum is the open interval's raw sum of id. */
static inline int64_t mf_timing_sum(const mf_rec *r, uint32_t id)
{
	return id & 1 ? r->tab.edges[id >> 1].tsum : r->tab.nodes[id >> 1].tsum;
}

/* mf_tm_touch adds v to the open interval's raw sum of id (which is 0
 * until its first touch: a flush zeroes the sums it takes), listing id at
 * its first touch. */
static inline void mf_tm_touch(mf_rec *r, int64_t *sum, int64_t *stamp, uint32_t id, int64_t v)
{
	*sum += v;
	if (*stamp != r->iv.gen) {
		*stamp = r->iv.gen;
		r->iv.ids[id & 1][r->iv.nids[id & 1]++] = id;
	}
}

/* mf_rec_mode sets r->unusual from what it sums up; whatever changes
 * failed, keyflags, ncounters or trace_fd calls it. */
static inline void mf_rec_mode(mf_rec *r)
{
	r->unusual = r->failed || r->cfg.keyflags != MF_KEY_SITE || r->cfg.ncounters || r->cfg.trace_fd >= 0;
}

static inline void mf_stat_add(mf_stat *s, int64_t v, int64_t before)
{
	if (before == 0 || v < s->min)
		s->min = v;
	if (before == 0 || v > s->max)
		s->max = v;
	s->total += v;
}

/* mf_uvlen is the length of the uvarint of v. */
static inline int mf_uvlen(uint64_t v)
{
	int n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* mf_trace_uvarint appends the uvarint of v at b + *len. */
static inline void mf_trace_uvarint(uint8_t *b, size_t *len, uint64_t v)
{
	size_t n = *len;
	while (v >= 0x80) {
		b[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b[n++] = (uint8_t)v;
	*len = n;
}

/* MF_REP_TIMED: after this many repeats in a row through mf_record, the
 * next take mf_record_rep. */
#define MF_REP_TIMED 4
/* MPIFLOW_SAMPLE=K times a pair of consecutive events in about K of a run
 * of repeats, at random distances (2 to 2K+1) so that sampling does not
 * alias with periodic costs inside the MPI library (progress engines poll
 * some sources every n-th call). MF_SAMPLE is the default: every event
 * timed. */
#define MF_SAMPLE 1

/* mf_rand is the next of the recorder's pseudo-random numbers. */
static inline uint64_t mf_rand(mf_rec *r)
{
	r->rng ^= r->rng << 13;
	r->rng ^= r->rng >> 7;
	r->rng ^= r->rng << 17;
	return r->rng;
}

/* mf_node_partner counts an event with partner rank >= 0 at n. */
static inline void mf_node_partner(mf_rec *r, mf_node *n, int32_t rank)
{
	int32_t lp = n->last_partner;
	if (lp >= 0 && n->partners[lp].rank == rank)
		n->partners[lp].count++;
	else
		mf_partner_add(r, n, rank);
}

/* mf_node_record adds ev's bytes, communicator size and partner to n. */
static inline void mf_node_record(mf_rec *r, mf_node *n, const mf_event *ev)
{
	mf_stat_add(&n->bytes, ev->bytes, n->count);
	n->count++;
	if (ev->commsize > n->commsize)
		n->commsize = ev->commsize;
	if (ev->partner >= 0)
		mf_node_partner(r, n, ev->partner);
}

/* mf_trace_event appends an event of node ni to the full trace. */
static inline void mf_trace_event(mf_rec *r, int32_t ni, int64_t enter, int64_t exit)
{
	if (r->tr.cap - r->tr.len < 32)
		mf_trace_flush(r);
	/* tag = node + 1 (0 ends the events), enter - previous exit
	 * (zigzag), duration */
	int64_t gap = enter - r->tr.prev_exit;
	mf_trace_uvarint(r->tr.buf, &r->tr.len, (uint64_t)ni + 1);
	mf_trace_uvarint(r->tr.buf, &r->tr.len, ((uint64_t)gap << 1) ^ (uint64_t)(gap >> 63));
	mf_trace_uvarint(r->tr.buf, &r->tr.len, (uint64_t)(exit - enter));
	r->tr.prev_exit = exit;
}

/* mf_rep_cache keeps in r what an untimed repeat of node n compares its
 * bytes (b, a value in the node's range) and communicator size with. */
static inline void mf_rep_cache(mf_rec *r, const mf_node *n, int64_t b)
{
	r->rep_bytes = b;
	r->rep_csize = n->commsize;
}

/* mf_node_is tells whether node c, whose call is ev's, is ev's node under
 * key flags kf. */
static inline int mf_node_is(const mf_node *c, uint32_t kf, const mf_event *ev)
{
	return c->site == ((kf & MF_KEY_SITE) ? ev->site : 0) && c->kbytes == ((kf & MF_KEY_BYTES) ? ev->bytes : 0) &&
	       c->kpartner == ((kf & MF_KEY_PARTNER) ? ev->partner : -1) &&
	       c->kcomm == ((kf & MF_KEY_COMM) ? ev->comm : -1);
}

/* mf_find_node is the index of ev's node under key flags kf, -1 when out
 * of memory (r->failed): the previous node's successor, with the edge to
 * it in *ei, if that is ev's node (event idx > 0), else looked up. */
static inline __attribute__((always_inline)) int32_t mf_find_node(mf_rec *r, const mf_event *ev, uint32_t kf,
								  int64_t idx, int32_t *ei)
{
	if (__builtin_expect(idx != 0, 1)) { /* prev >= 0 */
		const mf_node *p = r->prev_node;
		int32_t s = p->succ_node;
		if (s >= 0) {
			const mf_node *c = &r->tab.nodes[s];
			/* the default key (call and site): the other fields of
			 * every node's key are 0 and -1 */
			if (c->call == ev->call &&
			    (kf == MF_KEY_SITE ? c->site == ev->site : mf_node_is(c, kf, ev))) {
				*ei = p->succ_edge;
				return s;
			}
		}
	}
	const uint64_t site = (kf & MF_KEY_SITE) ? ev->site : 0;
	const int64_t kbytes = (kf & MF_KEY_BYTES) ? ev->bytes : 0;
	const int32_t kpartner = (kf & MF_KEY_PARTNER) ? ev->partner : -1;
	const int32_t kcomm = (kf & MF_KEY_COMM) ? ev->comm : -1;
	return mf_node_lookup(r, ev, site, kbytes, kpartner, kcomm);
}

/* mf_record_edge adds to the edge from node prev to node ni (*ei; -1:
 * looked up and cached as prev's successor) event idx of node n, of
 * duration dur: the gap before it, the counters and its sequence number.
 * It returns -1 when out of memory (r->failed). */
static inline __attribute__((always_inline)) int mf_record_edge(mf_rec *r, const mf_event *ev, int64_t idx,
								int32_t prev, int32_t ni, int32_t *ei, const mf_node *n,
								int64_t dur)
{
	if (*ei < 0) {
		*ei = mf_edge_lookup(r, prev, ni);
		if (*ei < 0)
			return -1;
		mf_node *p = r->prev_node;
		p->succ_node = ni;
		p->succ_edge = *ei;
	}
	mf_edge *e = &r->tab.edges[*ei];
	mf_stat_add(&e->time, ev->enter - r->last_exit, e->count);
	/* the gap belongs to the interval of the previous event, which
	 * closes here if this event starts the next one */
	mf_tm_touch(r, &e->tsum, &e->tstamp, 2 * (uint32_t)*ei + 1, ev->enter - r->last_exit);
	if (idx >= r->iv.end || ev->enter >= r->iv.deadline || ev->exit - r->last_exit >= r->iv.long_ns)
		mf_timing_check(r, idx, ev->enter, ev->enter - r->last_exit, dur, n, e, 0);
	for (int32_t c = 0; c < r->cfg.ncounters; c++)
		e->counters[c] += ev->cin[c] - r->last_counts[c];
	e->count++;
	/* Seq.Append */
	if (e->ocount == 1) {
		e->ostride = idx - e->ostart;
		e->ocount = 2;
	} else if (idx == e->ostart + e->ocount * e->ostride) { /* ocount 0: ostart 0 < idx */
		e->ocount++;
	} else {
		mf_seq_close(r, e, idx);
	}
	return 0;
}

/* mf_rep_start lets the next repeats take mf_record_rep once event idx
 * (ev, node n = ni, edge ei from prev) is the MF_REP_TIMED-th along a
 * self-loop whose run of sequence numbers it can extend, if the node
 * depends on no more than call and site (kf) and there are no counters to
 * read. */
static inline __attribute__((always_inline)) void mf_rep_start(mf_rec *r, const mf_event *ev, mf_node *n,
							       int32_t ni, int32_t prev, int32_t ei, int64_t idx,
							       uint32_t kf)
{
	if (ni != prev) {
		r->rep_len = 0;
		r->rep_call = -1;
		return;
	}
	mf_edge *e = &r->tab.edges[ei];
	if (r->rep_len < MF_REP_TIMED)
		r->rep_len++;
	if (r->rep_len >= MF_REP_TIMED && e->ocount >= 2 && e->ostride == 1 && !r->cfg.ncounters &&
	    !(kf & ~(uint32_t)MF_KEY_SITE)) {
		r->rep_call = ev->call;
		r->rep_site = ev->site;
		/* valid until the next mf_record_, the only place
		 * that grows the tables */
		r->rep_edge = e;
		mf_rep_cache(r, n, ev->bytes);
		r->rep_lean = !r->cfg.sample_mask && r->cfg.trace_fd < 0;
		mf_tight_set(r, n);
		r->sample_at = r->cfg.sample_mask ? idx + 2 + (int64_t)(mf_rand(r) & (2 * r->cfg.sample_mask + 1)) : 0;
	}
}

/* mf_record_ adds one event. Mirrors flowgraph.Builder.Add. */
static inline void mf_record_(mf_rec *r, const mf_event *ev)
{
	if (__builtin_expect(r->failed, 0))
		return;
	const uint32_t kf = r->cfg.keyflags;
	if (r->pending)
		mf_settle(r, ev->enter, mf_ends_run(r, ev));
	else if (r->cfg.tight_ok && r->nevents && r->prev_node->tn >= MF_TIGHT_WARM)
		mf_tight_exit(r, ev);
	const int64_t idx = r->nevents;
	const int32_t prev = r->prev;
	int32_t ei = -1;
	const int32_t ni = mf_find_node(r, ev, kf, idx, &ei);
	if (ni < 0)
		return; /* out of memory, r->failed is set */
	mf_node *n = &r->tab.nodes[ni];
	const int64_t dur = ev->exit - ev->enter;
	mf_stat_add(&n->time, dur, n->count);
	mf_node_record(r, n, ev);

	if (idx == 0) {
		r->initial = ni;
		r->t0 = ev->enter;
	} else if (mf_record_edge(r, ev, idx, prev, ni, &ei, n, dur)) {
		return;
	}
	mf_tm_touch(r, &n->tsum, &n->tstamp, 2 * (uint32_t)ni, dur);
	r->last_exit = ev->exit;
	for (int32_t c = 0; c < r->cfg.ncounters; c++)
		r->last_counts[c] = ev->cout[c];
	r->prev = ni;
	r->prev_node = n;
	r->nevents = idx + 1;
	mf_rep_start(r, ev, n, ni, prev, ei, idx, kf);

	if (r->cfg.trace_fd >= 0)
		mf_trace_event(r, ni, ev->enter, ev->exit);
}

/* mf_repeat tells the wrapper of a call about to start how to record it:
 * 0 with mf_record; else it repeats the previous event and goes to
 * mf_record_rep, 1 timed (neither sampling nor a full trace: the short
 * path), 4 timed, 2 untimed (no clock read), 3 untimed but its times are
 * needed for the full trace. */
static inline int mf_repeat(const mf_rec *r, int32_t call, uint64_t site)
{
	if (r->rep_call != call || r->rep_site != site)
		return 0;
	if (__builtin_expect(r->rep_lean, 1))
		return r->nevents < r->tight_next ? 2 : 1;
	if (r->nevents < r->tight_next) /* a full trace of fast repeats */
		return r->cfg.trace_fd >= 0 ? 3 : 2;
	if (r->nevents >= r->sample_at || r->nevents >= r->iv.end)
		return 4;
	return r->cfg.trace_fd >= 0 ? 3 : 2;
}

/* mf_rep_quick tells whether the call about to start, call at site on
 * handle h (MF_H of its communicator, window or file; 0: none), is an
 * untimed repeat (mf_repeat's 2) on the handle of its run's last event,
 * whose communicator size it therefore has; mf_rep_count then records it
 * if its bytes are the run's cached ones too: what mf_record_rep does
 * with such a repeat, before the call. The wrapper of a call whose
 * results it does not record then ends in a tail call of the PMPI
 * function, with no frame of its own to build (the bulk of what the
 * untimed repeat of a collective cost). */
static inline __attribute__((always_inline)) int mf_rep_quick(const mf_rec *r, int32_t call, uint64_t site,
							       uintptr_t h)
{
	return r->rep_call == call && r->rep_site == site && r->rep_lean && r->nevents < r->tight_next &&
	       r->rep_handle == h;
}

static inline __attribute__((always_inline)) int mf_rep_count(mf_rec *r, int64_t bytes)
{
	if (bytes != r->rep_bytes)
		return 0;
	r->busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	r->nevents++;
	r->pending++;
	r->pend_bytes += bytes;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	r->busy = 0;
	return 1;
}

/* mf_rep_time adds the duration of timed repeat idx of node n, entered at
 * enter, and the gap before it (edge e, the self-loop) to their statistics
 * and timing sums. */
static inline __attribute__((always_inline)) void mf_rep_time(mf_rec *r, mf_node *n, mf_edge *e, int64_t idx,
								int64_t enter, int64_t dur, int64_t gap)
{
	mf_stat_add(&n->time, dur, 1);
	mf_stat_add(&e->time, gap, 1);
	mf_tm_touch(r, &e->tsum, &e->tstamp, 2 * (uint32_t)n->succ_edge + 1, gap);
	if (idx >= r->iv.end || enter >= r->iv.deadline || gap + dur >= r->iv.long_ns)
		mf_timing_check(r, idx, enter, gap, dur, n, e, 1);
	mf_tm_touch(r, &n->tsum, &n->tstamp, 2 * (uint32_t)r->prev, dur);
}


/* mf_record_rep adds an event that mf_repeat found to repeat node prev
 * along its self-loop (how = mf_repeat's answer), from enter to exit,
 * with bytes, partner (-1: none) and commsize. An untimed one counts, and
 * its duration and the gap before it are known only at the next timed
 * event (mf_settle); its times are used only for the full trace. The node
 * and edge are at hand (prev_node, rep_edge) and nothing needs a lookup, so
 * the wrappers call it with their values rather than an mf_event. */
static inline __attribute__((always_inline)) void mf_record_rep(mf_rec *r, int how, int64_t enter, int64_t exit,
								 int64_t bytes, int32_t partner, int32_t commsize)
{
	r->busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	const int64_t idx = r->nevents;
	r->nevents = idx + 1;
	if (how == 2 || how == 3) { /* untimed: r's first cache line */
		r->pending++;
		r->pend_bytes += bytes;
		if (__builtin_expect(bytes != r->rep_bytes || commsize > r->rep_csize || partner >= 0, 0))
			mf_rep_node(r, r->prev_node, bytes, partner, commsize);
		if (how == 3)
			mf_trace_event(r, r->prev, enter, exit);
	} else {
		const int64_t untimed = r->pending, span = exit - r->last_exit;
		if (untimed)
			mf_settle(r, enter, 0);
		mf_node *n = r->prev_node;
		mf_edge *e = r->rep_edge;
		/* mf_node_record; a node that has seen only 0 bytes (the
		 * calls without bytes) keeps its byte statistics at another 0 */
		if (bytes != 0 || n->bytes.min != 0)
			mf_stat_add(&n->bytes, bytes, 1);
		n->count++;
		if (commsize > n->commsize)
			n->commsize = commsize;
		if (partner >= 0)
			mf_node_partner(r, n, partner);
		mf_rep_cache(r, n, bytes);
		e->count++;
		e->ocount++; /* the run of stride 1 goes on (mf_record_) */
		const int64_t dur = exit - enter, gap = enter - r->last_exit;
		mf_rep_time(r, n, e, idx, enter, dur, gap);
		r->last_exit = exit;
		if (r->cfg.sample_mask)
			mf_sample(r, n, idx, dur, gap, untimed);
		else if (r->cfg.tight_ok)
			mf_tight_sample(r, n, dur, span, untimed);
		if (how == 4 && r->cfg.trace_fd >= 0)
			mf_trace_event(r, r->prev, enter, exit);
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	r->busy = 0;
	if (__builtin_expect((how == 1 || how == 4) && exit >= r->ckpt_next, 0))
		r->ckpt(r);
}

/* mf_record_repeat is mf_record_rep of an mf_event. */
static inline __attribute__((always_inline)) void mf_record_repeat(mf_rec *r, const mf_event *ev, int how)
{
	mf_record_rep(r, how, ev->enter, ev->exit, ev->bytes, ev->partner, ev->commsize);
}

/* mf_rec_node_count is node ni's count with the untimed repeats that
 * wait for mf_settle. */
static inline int64_t mf_rec_node_count(const mf_rec *r, int32_t ni)
{
	return r->tab.nodes[ni].count + (ni == r->prev ? r->pending : 0);
}


/* mf_node_got_max counts got among the corrected events of node ni (n)
 * and sets its maximum once all its events are; it returns whether it
 * did. */
static inline int mf_node_got_max(const mf_rec *r, mf_node *n, int32_t ni, int64_t got)
{
	if (got > n->gotmax)
		n->gotmax = got;
	if (++n->gotn != mf_rec_node_count(r, ni))
		return 0;
	n->bytes.max = n->gotmax;
	return 1;
}

static inline __attribute__((always_inline)) void mf_node_got(mf_rec *r, int32_t ni, int64_t posted, int64_t got)
{
	if (__builtin_expect(got != posted || r->failed || (uint32_t)ni >= (uint32_t)r->tab.nnodes, 0)) {
		mf_node_got_(r, ni, posted, got);
		return;
	}
	mf_node *n = &r->tab.nodes[ni];
	if (mf_node_got_max(r, n, ni, got) && ni == r->prev) /* the cache must stay within the range */
		mf_rep_cache(r, n, n->bytes.min);
}

/* mf_record_fast is mf_record_ for the usual event, in fewer steps (the
 * calls of the general case cost its every event the saving of registers):
 * the successor cache of the previous node names its node and edge under
 * the default key, not a self-loop, and the event needs nothing else: no
 * counters, full trace or untimed repeats to settle, no timing interval
 * ends, its edge's run of sequence numbers goes on, its partner is none or
 * the node's last. It returns 0, having changed nothing, for any other.
 * It takes the event's fields it reads as values, call and partner in cp
 * (mf_cp), because an mf_event would be stored by every wrapper only to
 * be read back here. */
__attribute__((noinline)) static int mf_record_fast(mf_rec *r, uint64_t site, int64_t bytes, int64_t enter,
						     int64_t exit, uint64_t cp, int32_t commsize)
{
	const int64_t idx = r->nevents;
	if (__builtin_expect(r->unusual || r->pending || idx >= r->iv.end || enter >= r->iv.deadline ||
				     exit - r->last_exit >= r->iv.long_ns, 0))
		return 0; /* idx 0 too (iv.end 0): no previous node */
	mf_node *p = r->prev_node;
	const int32_t ni = p->succ_node, ei = p->succ_edge;
	if (ni < 0 || ni == r->prev)
		return 0;
	mf_node *n = &r->tab.nodes[ni];
	const int32_t call = (int32_t)(uint32_t)cp, partner = (int32_t)(cp >> 32);
	if (n->call != call || n->site != site)
		return 0;
	mf_edge *e = &r->tab.edges[ei];
	if (e->ocount != 1 && idx != e->ostart + e->ocount * e->ostride)
		return 0;
	const int32_t lp = n->last_partner;
	if (partner >= 0 && (lp < 0 || n->partners[lp].rank != partner))
		return 0;
	const int64_t dur = exit - enter, gap = enter - r->last_exit;
	mf_stat_add(&n->time, dur, n->count);
	mf_stat_add(&n->bytes, bytes, n->count);
	n->count++;
	if (commsize > n->commsize)
		n->commsize = commsize;
	if (partner >= 0)
		n->partners[lp].count++;
	mf_stat_add(&e->time, gap, e->count);
	mf_tm_touch(r, &e->tsum, &e->tstamp, 2 * (uint32_t)ei + 1, gap);
	e->count++;
	if (e->ocount == 1) {
		e->ostride = idx - e->ostart;
		e->ocount = 2;
	} else {
		e->ocount++;
	}
	mf_tm_touch(r, &n->tsum, &n->tstamp, 2 * (uint32_t)ni, dur);
	r->last_exit = exit;
	r->prev = ni;
	r->prev_node = n;
	r->nevents = idx + 1;
	r->rep_len = 0;
	r->rep_call = -1;
	return 1;
}

/* mf_cp packs a call and a partner for mf_record_fast. */
static inline uint64_t mf_cp(int32_t call, int32_t partner)
{
	return (uint64_t)(uint32_t)call | (uint64_t)(uint32_t)partner << 32;
}

/* mf_record_slow is mf_record_ for the events mf_record_fast declines,
 * out of line so that each wrapper holds only the call. */
__attribute__((noinline)) static void mf_record_slow(mf_rec *r, int32_t call, int32_t partner, int32_t comm,
						      int32_t commsize, uint64_t site, int64_t bytes, int64_t enter,
						      int64_t exit, const int64_t *cin, const int64_t *cout)
{
	const mf_event ev = {.call = call, .partner = partner, .comm = comm, .commsize = commsize, .site = site,
			     .bytes = bytes, .enter = enter, .exit = exit, .cin = cin, .cout = cout};
	mf_record_(r, &ev);
}

/* mf_record_call adds one event given as values (the wrappers' way: the
 * usual event never makes an mf_event), marking the recorder busy
 * meanwhile so that a partial file written from a signal handler
 * (partial.h) knows the tables may be mid-update. */
static inline void mf_record_call(mf_rec *r, int32_t call, int32_t partner, int32_t comm, int32_t commsize,
				  uint64_t site, int64_t bytes, int64_t enter, int64_t exit, const int64_t *cin,
				  const int64_t *cout)
{
	r->busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!mf_record_fast(r, site, bytes, enter, exit, mf_cp(call, partner), commsize))
		mf_record_slow(r, call, partner, comm, commsize, site, bytes, enter, exit, cin, cout);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	r->busy = 0;
	if (__builtin_expect(exit >= r->ckpt_next, 0))
		r->ckpt(r);
}

/* mf_record adds one event (mf_record_call), for callers that hold an
 * mf_event (the tests). */
static inline void mf_record(mf_rec *r, const mf_event *ev)
{
	mf_record_call(r, ev->call, ev->partner, ev->comm, ev->commsize, ev->site, ev->bytes, ev->enter, ev->exit,
		       ev->cin, ev->cout);
}

#ifdef __cplusplus
}
#endif
#endif