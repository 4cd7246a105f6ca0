/*
 * settle.c: the node statistics the hot path leaves to a call, and the
 * settling of untimed repeats (mf_settle) and sampling (mf_sample).
 */
#include "settle.h"
#include "record.h"

#include <stdlib.h>
#include <string.h>

void mf_node_got_(mf_rec *r, int32_t ni, int64_t posted, int64_t got)
{
	if (r->failed || ni < 0 || ni >= r->tab.nnodes || got < 0 || got > posted)
		return;
	r->busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	mf_node *n = &r->tab.nodes[ni];
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
	if (r->failed || ni < 0 || ni >= r->tab.nnodes || rank < 0)
		return;
	r->busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	mf_node_partner(r, &r->tab.nodes[ni], rank);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	r->busy = 0;
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
	mf_node *n = &r->tab.nodes[r->prev];
	int32_t ei = n->succ_edge;
	mf_edge *e = &r->tab.edges[ei];
	/* the counts the untimed repeats left to this (mf_record_rep) */
	n->count += j;
	n->bytes.total += r->pend_bytes;
	e->count += j;
	e->ocount += j;
	r->pending = r->pend_bytes = 0;
	double md, mg;
	if (r->cfg.tight_ok) {
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
		if (r->cfg.tight_ok && n->texit_fx >= 0) {
			int b;
			const double expect = (double)j * (md + mg) + (double)n->texit_fx / (1 << MF_TIGHT_FX);
			d = md += calls_excess(n, (int64_t)expect, (int64_t)span, &b) / (double)j;
			/* Its excess is learnt as that of a stretch ending in a
			 * sample (mf_tight_sample): the samples' calls stand
			 * for all, so the stretches must too. Without it, where
			 * runs end after a long call and a long gap (HPCC's
			 * MPI_Testany), calls took all of an excess half theirs. */
			mf_tight_span(n, (int64_t)span);
			if (b >= 0)
				n->tlsize[b] += (int64_t)(span - expect);
		}
		const double w = (double)j * (md + mg);
		if (w > span) { /* too little time: in proportion, none for the gap */
			d = span * md / w;
			g = span * mg / w;
		}
	} else if (enter != INT64_MIN) {
		double w = (double)(j + 1) * mg + (double)j * md;
		if (r->cfg.tight_ok) {
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
	r->sample_at = idx + 2 + (int64_t)(mf_rand(r) & (2 * r->cfg.sample_mask + 1));
}
