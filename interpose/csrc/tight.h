/*
 * tight.h: fast repeats: which repeats of a node go untimed, learnt from its
 * timed ones (interpose/README.md, "Fast repeats"): their constants and
 * the inline steps the hot path (record.h) takes at a timed repeat and at
 * the end of a run; the probe of the thread's processor is tight.c.
 */
#ifndef MPIFLOW_TIGHT_H
#define MPIFLOW_TIGHT_H

#include "recorder.h"

/* The constants of fast repeats; interpose/README.md ("Fast repeats",
 * "The constants") has the measurements that set them.
 *
 * mf_tight_size: an unusual excess is split between calls and gaps as the
 * node's unusual excess of the same size was, of two: under 64 us (an
 * interrupt, a peer, a burst of work) or more (mostly the gaps between
 * phases of a loop at one site). */
static inline int mf_tight_size(int64_t excess)
{
	return excess >= 1 << 16;
}
_Static_assert(MF_TIGHT_SIZES == 2, "mf_tight_size and mf_tight_set know two sizes");
/* The fraction bits of the moving averages: in whole ns their steps (1/16
 * or 1/256 of a difference) under 16 ns were lost. */
#define MF_TIGHT_FX 12

/* In a run of repeats whose period (duration plus gap) is under
 * MF_TIGHT_NS, only every (MF_TIGHT_MASK+1)-th call reads the clock once
 * the node has had MF_TIGHT_WARM timed repeats: the two clock reads were
 * most of what mpiflow added to a polling loop. */
#define MF_TIGHT_NS 2000
#define MF_TIGHT_MASK 15
#define MF_TIGHT_WARM 8
/* A time over the expected one by MF_TIGHT_UNUSUAL is unusual; after one
 * under 64 us the node's next MF_TIGHT_QUIET repeats are all timed, to see
 * where such times fall while they recur (not after longer ones, the gaps
 * between phases of a loop, which do not). */
#define MF_TIGHT_UNUSUAL(excess, expect) ((excess) > 1000 + (expect) / 4)
#define MF_TIGHT_QUIET 64
/* An unusual excess of the larger size goes to calls only once
 * MF_TIGHT_EVIDENCE timed calls of the node took one too. */
#define MF_TIGHT_EVIDENCE 4
/* Where unusual times are over MF_TIGHT_EXCESS(lall, span) of a node's
 * recent time (about MF_TIGHT_WINDOW ns), all its repeats are timed: the
 * split would be guesswork, and they take under a quarter of the time.
 * Not less: polls alternating with compute phases at one site look
 * unusual at every phase (descheduling is found by the probes below). */
#define MF_TIGHT_EXCESS(lall, span) ((lall) * 4 > (span) * 3)
#define MF_TIGHT_WINDOW (1 << 27)
/* A thread descheduled inside untimed stretches leaves no sign in any
 * sample: about every MF_TIGHT_PROBE_NS of fast repeats, mf_tight_probe
 * compares its CPU time with the time passed, and repeats go untimed only
 * after MF_TIGHT_CLEAN probes in a row lost less than 1/MF_TIGHT_LOST of
 * it; after a lone loss (more than MF_TIGHT_CALM_NS after the previous
 * one) MF_TIGHT_RECOVER suffice. */
#define MF_TIGHT_PROBE_NS (1 << 20)
#define MF_TIGHT_CLEAN 16
#define MF_TIGHT_LOST 8
#define MF_TIGHT_CALM_NS (1 << 28)
#define MF_TIGHT_RECOVER 2

/* mf_tight_probe reads the thread's CPU time at time now (mf_tight_sample
 * calls it every MF_TIGHT_PROBE_NS) and counts the probes in a row that
 * found the thread running all along. */
void mf_tight_probe(mf_rec *r, int64_t now);

/* mf_tight_place is where in the group of MF_TIGHT_MASK+1 events from
 * index g (a multiple of that) mf_tight_set times its sample: a hash of g,
 * so that the place is spread as at random over the groups but the same
 * on every rank (mf_tight_set). */
static inline int64_t mf_tight_place(int64_t g)
{
	return (int64_t)(((uint64_t)g * 0x9e3779b97f4a7c15u) >> 58 & MF_TIGHT_MASK);
}

/* mf_tight_set sets the recorder's fast-repeat state for the repeats of
 * node n that follow the event just recorded. Of each group of
 * MF_TIGHT_MASK+1 events by index one is timed as the sample
 * (tight_pick), at the place mf_tight_place gives: not always the first,
 * so that a period of the MPI library's is not sampled at one place, and
 * not at random per rank, so that ranks in step time the same iterations
 * (README, "Fast repeats"). A timing interval that ends by its count of
 * events (iv.end) ends at a timed repeat (mf_rep_time), which is no
 * sample; one that ends by time ends at the first timed event past its
 * deadline. */
static inline void mf_tight_set(mf_rec *r, const mf_node *n)
{
	if (!(r->cfg.tight_ok && r->cpu_clean >= MF_TIGHT_CLEAN && n->tn >= MF_TIGHT_WARM && n->tper_fx > 0 &&
	      n->tper_fx < (MF_TIGHT_NS << MF_TIGHT_FX) && r->nevents >= n->tquiet && !MF_TIGHT_EXCESS(n->tlsize[0] + n->tlsize[1], n->tspan))) {
		r->tight_next = 0;
		return;
	}
	const int64_t last = r->nevents - 1, bound = r->iv.end;
	if (r->tight_pick <= last) { /* the sample was timed, or none is chosen: this group's or the next's */
		int64_t g = last & ~(int64_t)MF_TIGHT_MASK;
		if ((r->tight_pick = g + mf_tight_place(g)) <= last) {
			g += MF_TIGHT_MASK + 1;
			r->tight_pick = g + mf_tight_place(g);
		}
	}
	r->tight_next = r->tight_pick < bound ? r->tight_pick : bound;
}

/* mf_tight_span adds a stretch of span ns to node n's recent time, of
 * about MF_TIGHT_WINDOW ns, over which its unusual excess is weighed. */
static inline void mf_tight_span(mf_node *n, int64_t span)
{
	n->tspan += span > 0 ? span : 0;
	if (n->tspan > MF_TIGHT_WINDOW) {
		n->tspan >>= 1;
		for (int b = 0; b < MF_TIGHT_SIZES; b++) {
			n->tlsize[b] >>= 1;
			n->tlcall[b] >>= 1;
		}
		n->tlnlarge >>= 1;
	}
}

/* mf_tight_sample learns from a timed repeat of node n that took dur and
 * ended span after the last timed one, with untimed repeats between. The
 * share of unusual excess time that falls in the calls is estimated, per
 * size of excess, as the excess of the sampled calls, each standing for
 * its group (a stratified sample, mf_tight_set), over the excess of the
 * spans. */
static inline void mf_tight_sample(mf_rec *r, mf_node *n, int64_t dur, int64_t span, int64_t untimed)
{
	if (r->last_exit - r->cpu_wall >= MF_TIGHT_PROBE_NS)
		mf_tight_probe(r, r->last_exit);
	const int64_t tper = n->tper_fx >> MF_TIGHT_FX, tdur = n->tdur_fx >> MF_TIGHT_FX;
	const int64_t k = untimed + 1, expect = k * tper, excess = span - expect, c = dur - tdur;
	const int unusual = MF_TIGHT_UNUSUAL(excess, expect), long_call = MF_TIGHT_UNUSUAL(c, tdur);
	/* a sample of the calls: timed at its place in its group, or all
	 * are; not only as the end of a timing interval */
	const int pick = !r->tight_next || r->nevents - 1 == r->tight_pick;
	if (n->tn >= MF_TIGHT_WARM)
		mf_tight_span(n, span);
	if (n->tn >= MF_TIGHT_WARM && (unusual || long_call)) {
		const int b = mf_tight_size(excess > c ? excess : c);
		if (!b)
			n->tquiet = r->nevents + MF_TIGHT_QUIET;
		if (long_call) {
			/* a sample stands for its group of calls; a call
			 * timed as the end of an interval for itself (its
			 * excess is in the span's) */
			n->tlcall[b] += (pick && r->tight_next ? MF_TIGHT_MASK + 1 : 1) * c;
			n->tlnlarge += b;
		}
		if (unusual)
			n->tlsize[mf_tight_size(excess)] += excess;
	} else if (pick) {
		/* clamped: a slower loop is not estimated anyway. Not the
		 * duration to the stretch's mean period: durations with a long
		 * tail (a collective waiting for the slowest rank) had their
		 * mean underestimated by 5% (TestRecorderFastRepeats) */
		int64_t per = k == 1 ? span : span / k; /* no division while all are timed */
		per = per < 0 ? 0 : per > 2 * MF_TIGHT_NS ? 2 * MF_TIGHT_NS : per;
		dur = dur < 0 ? 0 : dur > 2 * MF_TIGHT_NS ? 2 * MF_TIGHT_NS : dur;
		if (n->tn < MF_TIGHT_WARM) { /* the mean so far, then over ~256 repeats */
			n->tn++;
			n->tper_fx += ((per << MF_TIGHT_FX) - n->tper_fx) / n->tn;
			n->tdur_fx += ((dur << MF_TIGHT_FX) - n->tdur_fx) / n->tn;
		} else {
			/* a sample stands for its group of MF_TIGHT_MASK+1,
			 * a repeat timed with all the others for itself: the
			 * MF_TIGHT_QUIET all timed after an unusual time had
			 * replaced the average of the run before them */
			const int64_t w = r->tight_next ? 16 : 256;
			n->tper_fx += ((per << MF_TIGHT_FX) - n->tper_fx) / w;
			n->tdur_fx += ((dur << MF_TIGHT_FX) - n->tdur_fx) / w;
		}
	}
	mf_tight_set(r, n);
}

/* mf_ends_run tells whether ev, the next event, is another call or call
 * site than the last one's node: it ends that node's run of repeats. */
static inline int mf_ends_run(const mf_rec *r, const mf_event *ev)
{
	return ev->call != r->prev_node->call || ev->site != r->prev_node->site;
}

/* mf_tight_exit measures the gap after the timed last event of a node
 * with fast repeats (none pending) when ev, the next event, ends its
 * run. */
static inline void mf_tight_exit(mf_rec *r, const mf_event *ev)
{
	mf_node *p = r->prev_node;
	if (!mf_ends_run(r, ev))
		return;
	const int64_t g = ev->enter - r->last_exit;
	const int64_t gfx = (g < 0 ? 0 : g > 1 << 24 ? 1 << 24 : g) << MF_TIGHT_FX;
	p->texit_fx = p->texit_fx < 0 ? gfx : p->texit_fx + (gfx - p->texit_fx) / 16;
}


#endif
