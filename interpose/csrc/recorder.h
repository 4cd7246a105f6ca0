/*
 * recorder.h: the per-rank event flow graph recorder, in plain C.
 *
 * It knows nothing about MPI, so that the same code is compiled into the
 * LD_PRELOAD library (built against one MPI) and into the Go package
 * (which converts the tables at MPI_Finalize and tests the recorder against
 * flowgraph.Builder). It must produce exactly what flowgraph.Builder produces
 * for the same call sequence: nodes and edges numbered by first appearance,
 * the same sequence runs, the same timing intervals byte for byte
 * (flowgraph/timing.go; the Go side closes the last interval).
 *
 * The hot path (mf_record) is inline: a successor cache per node hits for
 * every loop iteration after the first, so a repeated event costs a key
 * compare, a few stat updates, one sequence-run extension and two timing
 * sums. Sequence numbers are nested progressions (flowgraph.Seq): a run
 * that ends is folded into repeats of the edge's earlier terms
 * (mf_seq_close), so memory is bounded by the number of distinct nodes and
 * edges, the terms that periodic loop nests do not repeat, and the timing
 * budget.
 *
 * All state lives in one mf_rec so that a thread-local recorder per thread
 * (MPI_THREAD_MULTIPLE) only has to change how the wrappers find it.
 */
#ifndef MPIFLOW_RECORDER_H
#define MPIFLOW_RECORDER_H

#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Key fields beyond the call, as chosen by MPIFLOW_KEY. */
enum {
	MF_KEY_SITE = 1,
	MF_KEY_BYTES = 2,
	MF_KEY_PARTNER = 4,
	MF_KEY_COMM = 8,
};

#define MF_MAX_PARTNERS 64 /* flowgraph.MaxPartners */
#define MF_TIMING_BYTES (64 << 10)  /* flowgraph.DefaultTimingBytes */
#define MF_TIMING_MIN (1 << 10)      /* flowgraph.MinTimingBytes */
#define MF_TIMING_MAX (1 << 30)      /* flowgraph.MaxTimingBytes */
#define MF_BUDGET_BYTES (128 << 10)  /* flowgraph.DefaultBudget */
/* flowgraph's timingHeaderMax, timingMinIntervals, timingTarget,
 * timingLongShare, timingOutlier, TimingQuantumBits,
 * timingIntervalHeadMax, timingEntryMax (nibbles) */
#define MF_TM_HEAD 16
#define MF_TM_MIN_INTERVALS 16
#define MF_TM_TARGET 3
#define MF_TM_LONG_SHARE 16
#define MF_TM_OUTLIER 8
#define MF_TM_QUANTUM_BITS 20
#define MF_TM_IHEAD_MAX (22 + 2 * 11 + 4 * 22)
#define MF_TM_ENTRY_MAX (11 + 22)
#define MF_MAX_COUNTERS 8   /* hardware counters per edge (MPIFLOW_PAPI) */
#define MF_SEQ_WINDOW 8     /* flowgraph.seqWindow */

/* Fast repeats (below) split an unusual excess of time between calls and
 * gaps as the node's unusual excess of the same size was split, of two
 * (mf_tight_size): under 64 us (a call or gap delayed by an interrupt, a
 * peer, a burst of work) or more (mostly the gaps between phases of a loop
 * at one site). Why: gaps of 470 us between phases of 30 ns polls, split
 * as the node's few long calls were, made the polls 20% slower than they
 * were. */
#define MF_TIGHT_SIZES 2
static inline int mf_tight_size(int64_t excess)
{
	return excess >= 1 << 16;
}
_Static_assert(MF_TIGHT_SIZES == 2, "mf_tight_size and mf_tight_set know two sizes");
/* The fraction bits of the fast repeats' moving averages: each step of
 * an average is 1/16 or 1/256 of a sample's difference to it, and in whole
 * ns the steps under 16 ns were lost, which moved the averages of polls of
 * 10-90 ns by up to 48% (a long tail up, a common value just over the
 * mean down); 12 bits keep steps of 1/16 ns at 1/256. */
#define MF_TIGHT_FX 12

/* mf_term is a flowgraph.SeqTerm: a leaf (body 0) is an arithmetic run;
 * a repeat is the body terms after it, repeated count times at offsets of
 * stride, their starts relative to each repetition's base. size counts the
 * terms of the subtree. Terms are stored in prefix order. */
typedef struct {
	int64_t start, stride, count;
	int32_t body, size;
} mf_term;
typedef struct { int64_t total, min, max; } mf_stat;
typedef struct { int64_t rank, count; } mf_partner;

typedef struct {
	/* hot: what every event of the node updates, together (a repeat
	 * touches nothing else of it) */
	int64_t count;
	mf_stat time, bytes;
	/* nonblocking receives recorded with their posted size and corrected
	 * at completion (mf_node_got): how many, and the largest received
	 * (next to bytes, which the correction updates too) */
	int64_t gotn, gotmax;
	/* timing: raw sum in the open interval (0 unless tstamp ==
	 * mf_rec.tm_gen) */
	int64_t tsum, tstamp;
	mf_partner *partners;
	int32_t last_partner; /* index of the partner seen last, a cache */
	int32_t commsize;
	/* key: fields outside the key are 0 (site, bytes) or -1 (partner, comm) */
	uint64_t site;
	int64_t kbytes;
	int32_t call;
	int32_t kpartner;
	int32_t kcomm;
	int32_t site_idx; /* index into mf_rec.sites, -1 if the site is not in the key */
	/* successor cache: the node and edge that followed this node last */
	int32_t succ_node, succ_edge;
	int32_t npartners;
	int64_t other_partners;
	/* samples of its runs of repeats (timed repeats that follow a timed
	 * one, so that the gap before them is measured too): sums of their
	 * durations and gaps, halved now and then so that they follow the
	 * program's phases */
	int64_t sdur, sgap, sn;
	/* fast repeats (mf_tight_sample): moving averages of the period
	 * (duration plus gap) and the duration of its usual timed repeats,
	 * and how many there were (up to MF_TIGHT_WARM), in ns with
	 * MF_TIGHT_FX fraction bits */
	int64_t tper_fx, tdur_fx;
	int32_t tn;
	int32_t tlnlarge; /* how many timed calls made tlcall[1] */
	/* of its recent timed repeats (mf_tight_sample): the time, and per
	 * size of excess (mf_tight_size) the unusual excess in it and the
	 * part of that in the calls */
	int64_t tspan, tlsize[MF_TIGHT_SIZES], tlcall[MF_TIGHT_SIZES];
	/* the gap after its runs' last repeat where that was timed (the
	 * program's work once a poll completed), a moving average in ns with
	 * MF_TIGHT_FX fraction bits; -1: none yet */
	int64_t texit_fx;
	int64_t tquiet; /* all timed before this index (after an unusual time) */
} mf_node;

typedef struct {
	/* hot: what every traversal updates, in one cache line */
	int64_t count;
	mf_stat time;
	int64_t ocount;       /* the open run of sequence numbers: ocount terms */
	int64_t tsum, tstamp; /* as in mf_node */
	int64_t ostart, ostride; /* from ostart, stride ostride */
	int32_t src, dst;
	/* closed terms (prefix order) and the positions of the top-level ones */
	mf_term *terms;
	int32_t nterms, capterms;
	int32_t *roots;
	int32_t nroots, caproots;
	int64_t counters[MF_MAX_COUNTERS]; /* sums over the compute phases */
} mf_edge;

/* The closed timing intervals as a signal handler may read them: the
 * recorder fills the other of two copies and then switches (tm.pubi), and
 * never changes the nibbles below len (a nibble stream, see
 * flowgraph.Timing) of a published buffer. */
typedef struct {
	const uint8_t *buf;
	int64_t len, nclosed, spacing;
	int64_t start; /* the events of the closed intervals */
	int32_t keep, shift;
} mf_timing_pub;

typedef struct { uint64_t code; int64_t pos; } mf_cap_entry;
typedef struct { int64_t v, stamp; } mf_tm_slot; /* v is valid if stamp is the generation */

/* One MPI call as the wrappers see it. partner and comm are -1 for none. */
typedef struct {
	int32_t call;
	int32_t partner;
	int32_t comm;
	int32_t commsize;
	uint64_t site;
	int64_t bytes;
	int64_t enter, exit;
	/* counter values at enter and exit (cumulative), read only when the
	 * recorder has counters */
	const int64_t *cin, *cout;
} mf_event;

/* mf_tm_last is the last gap and the last duration an interval keeps
 * apart where they stand out, else 0 (flowgraph's lastTimes). */
typedef struct {
	int64_t gap, dur;
} mf_tm_last;

/* mf_timing is the state of the timing's slow paths (timing.c) and of
 * the writers of its files; the fields the hot path reads (tm_end,
 * tm_deadline, tm_long, tm_gen, the open interval's lists) stay in
 * mf_rec. */
typedef struct mf_timing {
	/* Timing (flowgraph.Timing, mirrored by flowgraph's timingRec): the
	 * open interval's raw sums live in the nodes and edges (tsum), touched
	 * in the order tm_open; closed intervals are encoded in buf[cur]
	 * (nibbles), the ids of their entries in ids[cur] (uvarints). */
	int64_t budget;    /* nibbles for the intervals */
	int64_t maxint;    /* most intervals, 0: no limit */
	int64_t spacing;   /* most events an interval holds, a power of two */
	int64_t span;      /* an interval closes at its first event this late (ns; 0: never) */
	int64_t start;     /* the events of the closed intervals: the open one's first */
	int32_t keep;      /* entries kept per interval, 0: all */
	int32_t shift;     /* the quantum is 2^shift ns */
	uint8_t *buf[2];   /* each budget / 2 + 1 bytes */
	uint8_t *ids[2];
	int64_t idcap[2];
	int cur;
	int64_t len, nids, nclosed;
	int64_t ctime; /* the time of the closed intervals as encoded */
	mf_timing_pub pub[2];
	volatile int pubi;
	int64_t mrest, crest; /* the open interval's raw remainders */
	int64_t rcarry[2];    /* the rounding carried into them */
	/* per id (idn >= 2 * max(nnodes, nedges)): the rounding carried
	 * into its next sum, a merged group's sum (generation mgen), a
	 * pass's carry (generation pgen) */
	int64_t idn;
	int64_t *carry;
	mf_tm_slot *m, *p;
	/* scratch of cap >= nnodes + nedges entries: a merged group's ids
	 * by kind, a pass's carried ids, an interval's ids, codes, rests and
	 * cap */
	int64_t cap;
	uint32_t *mlist[2];
	int64_t nmlist[2], mgen, mmrest, mcrest;
	uint32_t *plist;
	int64_t nplist, pgen, prcarry[2];
	uint32_t *entries;
	uint64_t *codes;
	int64_t *rests;
	uint8_t *kept;
	mf_cap_entry *order;
	int64_t olen, onids, otime, ostart; /* a pass's output */
	mf_tm_last lastin; /* the open interval's (timingRec.lastIn) */
	int64_t lidx, ldur; /* the last long event and its duration (timingRec.longIdx, longDur) */
} mf_timing;

typedef struct mf_rec {
	/* Hot: what a repeat reads and writes (mf_repeat, mf_record_rep)
	 * comes first, the untimed ones' in the first cache line.
	 *
	 * Repeats: once the events repeat node prev along its self-loop
	 * (MF_REP_TIMED times), the wrappers record the next ones through
	 * mf_record_rep, a few counter updates (mf_repeat tells them). With
	 * sampling (MPIFLOW_SAMPLE > 1) only some of them are timed: the event
	 * sample_at, the one after it, and those that start a timing
	 * interval; the time the others took is split over them at the next
	 * timed event (mf_settle). The untimed ones touch only the first
	 * cache line: their node's and edge's counts and byte total wait in
	 * pending and pend_bytes until mf_settle (each cache line more cost a
	 * polling loop 1-2 ns a call with 2 ranks in step, whose MPI calls
	 * evict it), and only a byte count other than rep_bytes, a larger
	 * communicator than rep_csize or a partner update the node at once
	 * (mf_rep_node). The wrappers of most calls without a partner count
	 * them before the call, with no frame of their own (mf_rep_quick). */
	int16_t rep_call;     /* prev's call while its repeats take mf_record_rep, else -1 (ids: wrappers_gen.c) */
	uint8_t rep_lean;     /* neither sampled nor traced: mf_repeat gives 1 or 2 */
	volatile uint8_t busy; /* inside mf_record: a signal handler sees a table mid-update */
	int32_t rep_csize;    /* prev's largest communicator size */
	uint64_t rep_site;    /* the call site of prev's events */
	int64_t nevents;
	/* fast repeats (mf_tight_set): while prev's repeats come faster than
	 * MF_TIGHT_NS, those before index tight_next go untimed and are
	 * settled (mf_settle) when it comes. 0: all timed. */
	int64_t tight_next;
	int64_t pending;      /* untimed repeats since the last timed event */
	int64_t pend_bytes;   /* their bytes */
	int64_t rep_bytes;    /* a byte count within prev's range */
	/* the communicator, window or file (MF_H; 0: none) of the last event
	 * of a call that mf_rep_quick takes: while it repeats the run with
	 * that handle, its size is at most rep_csize */
	uintptr_t rep_handle;
	/* timing: the open interval closes at event tm_end (tm.start +
	 * tm.spacing, or the event after a long call; 0 before the first
	 * event) or at the first event entered at or after tm_deadline; an
	 * event whose gap and duration take tm_long or more is checked
	 * (mf_timing_check) */
	int64_t tm_end, tm_deadline, tm_long;
	mf_node *prev_node;   /* &nodes[prev] (kept when the table grows) */
	mf_edge *rep_edge;    /* while rep_call >= 0: prev's self-loop */
	int64_t last_exit;
	int64_t tm_gen;       /* timing: the open interval's generation */
	/* checkpoint: after the first event that ends at or after ckpt_next,
	 * mf_record calls ckpt(r) (which sets the next due time). mf_rec_init
	 * leaves it off (INT64_MAX, NULL). */
	int64_t ckpt_next;
	void (*ckpt)(struct mf_rec *r);
	int32_t prev;
	int32_t ncounters; /* 0..MF_MAX_COUNTERS */
	int failed; /* out of memory: recording stopped, the graph is incomplete */
	/* failed, a key other than the default, counters or a full trace:
	 * mf_record_fast's checks of what seldom changes, in one (kept by
	 * mf_rec_mode) */
	int unusual;
	/* ids (2*node, 2*edge+1) of the open timing interval, nodes [0] and
	 * edges [1], each in order of first touch */
	uint32_t *tm_open[2];
	int64_t tm_nopen[2];
	int64_t sample_at;    /* the next repeat to time (0 without sampling) */
	int64_t tight_pick;   /* fast repeats: the next one timed as the sample (mf_tight_set) */
	int64_t sample_mask;  /* sample - 1; 0: every event timed */
	int trace_fd; /* full-trace mode (MPIFLOW_TRACE=1): >= 0 when active */
	int tight_ok; /* fast repeats may go untimed (not MPIFLOW_EXACT=1 nor sampling); mf_rec_init: 0 */
	/* fast repeats also need the thread to have kept its processor
	 * (mf_tight_probe): the time and thread CPU time (cpu_now) of the
	 * last probe, how many probes in a row found it so, and the time of
	 * the last probe that did not */
	int32_t cpu_clean;
	int64_t cpu_wall, cpu_time, cpu_lost;
	int64_t (*cpu_now)(const struct mf_rec *r); /* thread CPU time, ns; -1: unknown */
	int32_t rep_len;      /* repeats of prev in a row, counted up to MF_REP_TIMED */
	uint64_t rng;         /* xorshift state for the distance to sample_at */

	uint32_t keyflags;
	mf_node *nodes;
	int32_t nnodes, capnodes;
	int32_t *nhash; /* open addressing: node index + 1, 0 = empty */
	uint32_t nhashcap;
	mf_edge *edges;
	int32_t nedges, capedges;
	int32_t *ehash;
	uint32_t ehashcap;
	uint64_t *sites;
	int32_t nsites, capsites;
	int32_t *shash;
	uint32_t shashcap;

	int32_t initial;
	int64_t t0;

	mf_timing tm; /* the timing's slow paths (timing.c) */

	/* While mf_seq_close folds the terms of edge bk_edge (-1: none), a
	 * signal handler must see them as they were before the close: terms
	 * [0, bk_from) of the edge, then bk[bk_from, bk_n), then the run
	 * bk_o*. Positions the fold is about to change are copied to bk
	 * first. */
	int32_t bk_edge, bk_from, bk_n, bk_cap;
	mf_term *bk;
	int64_t bk_ostart, bk_ostride, bk_ocount;

	int64_t last_counts[MF_MAX_COUNTERS]; /* counters at the last exit */

	int trace_err;
	uint8_t *tbuf;
	size_t tlen, tcap;
	int64_t tprev_exit;
} __attribute__((aligned(64))) mf_rec;
_Static_assert(offsetof(mf_rec, rep_handle) + sizeof(uintptr_t) <= 64, "an untimed repeat's fields fill one cache line");

/* mf_rec_init sets up an empty recorder whose timing takes at most
 * timing_bytes (0: MF_TIMING_BYTES; clamped to MF_TIMING_MIN..MAX) in at
 * most max_intervals intervals (no limit if < 2). It returns 0, or -1 when
 * out of memory. */
int mf_rec_init(mf_rec *r, uint32_t keyflags, int64_t timing_bytes, int64_t max_intervals);
/* mf_rec_free releases every table (not r itself). */
void mf_rec_free(mf_rec *r);
/* mf_view is what to write of a recorder: all of it, or, after it ran out
 * of memory (failed), the longest consistent prefix of events. */
typedef struct mf_view {
	int64_t nevents; /* events to write */
	int drop_edges;  /* 1: edges are inconsistent, write none (and no events) */
} mf_view;

/* mf_rec_view returns the view of r to write. Pure: safe in a signal
 * handler. */
mf_view mf_rec_view(const mf_rec *r);

/* mf_rec_edge_count is the count of edge e to write: after a failure, no
 * more than its stored sequence numbers. */
int64_t mf_rec_edge_count(const mf_rec *r, const mf_edge *e);

/* mf_seqv is what to write of an edge's sequence numbers: terms a[0, na),
 * then b[0, nb), then the open run if ocount > 0. */
typedef struct mf_seqv {
	const mf_term *a, *b;
	int32_t na, nb;
	int64_t ostart, ostride, ocount;
} mf_seqv;

/* mf_rec_seq returns the view of edge e's sequence numbers: as recorded,
 * or as before the close in progress when a signal interrupts a fold.
 * Pure: safe in a signal handler. */
mf_seqv mf_rec_seq(const mf_rec *r, const mf_edge *e);
/* mf_seqv_encode writes the encoding of flowgraph.Seq.AppendBinary through
 * put (NULL: only count) and returns its length. Signal-safe. */
uint64_t mf_seqv_encode(const mf_seqv *v, void (*put)(void *ctx, const uint8_t *b, size_t n), void *ctx);

/* mf_parse_key parses an MPIFLOW_KEY value ("call,site,bytes,...") into key
 * flags; it returns -1 on an unknown field. NULL or "" gives the default. */
int mf_parse_key(const char *s, uint32_t *flags);

/* Full trace: mf_trace_open starts writing events to fd (which the recorder
 * then owns); mf_trace_close appends the node table (names[call] gives a
 * call's name) and closes the fd. They return 0 or -1 (errno kept). */
int mf_trace_open(mf_rec *r, int fd, int rank);
int mf_trace_close(mf_rec *r, const char *const *names, int ncalls);

/* Slow paths of mf_record. */
int32_t mf_node_lookup(mf_rec *r, const mf_event *ev, uint64_t site, int64_t kbytes, int32_t kpartner, int32_t kcomm);
int32_t mf_edge_lookup(mf_rec *r, int32_t src, int32_t dst);
void mf_seq_close(mf_rec *r, mf_edge *e, int64_t n);
void mf_partner_add(mf_rec *r, mf_node *n, int32_t rank);

/* mf_timing_check is called for event idx of node n, entered at enter
 * after gap on edge e and of duration dur (both in their statistics and
 * timing sums, n in its count, e in its count if ecounted), if the open
 * interval ends before it (tm_end, tm_deadline) or it is long (tm_long):
 * the interval also ends before a long gap, and after a long call, that
 * is more than MF_TM_OUTLIER times the mean of its edge or node before it
 * (timingRec.add). */
__attribute__((noinline)) void mf_timing_check(mf_rec *r, int64_t idx, int64_t enter, int64_t gap, int64_t dur,
					       const mf_node *n, const mf_edge *e, int ecounted);
void mf_trace_flush(mf_rec *r);

/* Between recorder.c and timing.c: mf_rec_fail stops recording (out of
 * memory), mf_tm_reserve makes room in the timing's tables for every node
 * and edge (-1 when out of memory), mf_tm_publish makes the closed
 * intervals visible to a signal handler (mf_timing_pub). */
void mf_rec_fail(mf_rec *r);
int mf_tm_reserve(mf_rec *r);
void mf_tm_publish(mf_rec *r);

/* mf_timing_prefix returns the nibbles of the closed intervals of p that
 * end at or before event maxev. Pure: safe in a signal handler. */
int64_t mf_timing_prefix(const mf_timing_pub *p, int64_t maxev);

/* mf_timing_encode writes through put (NULL: only counts) the intervals
 * of flowgraph.Timing's encoding: the first nibs nibbles of p's closed
 * intervals and, with open > 0, r's open interval of open events as the
 * last, uncapped and rounded with the carries as flowgraph's
 * timingRec.finish closes it. It returns the number of bytes. Pure: safe
 * in a signal handler. */
uint64_t mf_timing_encode(const mf_rec *r, const mf_timing_pub *p, int64_t nibs, int64_t open,
			  void (*put)(void *ctx, const uint8_t *b, size_t n), void *ctx);

/* mf_timing_sum is the open interval's raw sum of id. */
static inline int64_t mf_timing_sum(const mf_rec *r, uint32_t id)
{
	return id & 1 ? r->edges[id >> 1].tsum : r->nodes[id >> 1].tsum;
}

/* mf_tm_touch adds v to the open interval's raw sum of id (which is 0
 * until its first touch: a flush zeroes the sums it takes), listing id at
 * its first touch. */
static inline void mf_tm_touch(mf_rec *r, int64_t *sum, int64_t *stamp, uint32_t id, int64_t v)
{
	*sum += v;
	if (*stamp != r->tm_gen) {
		*stamp = r->tm_gen;
		r->tm_open[id & 1][r->tm_nopen[id & 1]++] = id;
	}
}

/* mf_rec_mode sets r->unusual from what it sums up; whatever changes
 * failed, keyflags, ncounters or trace_fd calls it. */
static inline void mf_rec_mode(mf_rec *r)
{
	r->unusual = r->failed || r->keyflags != MF_KEY_SITE || r->ncounters || r->trace_fd >= 0;
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
/* Fast repeats: in a run of repeats whose period (duration plus gap,
 * averaged over its timed repeats) is under MF_TIGHT_NS, only every
 * (MF_TIGHT_MASK+1)-th call reads the clock, once the node has had
 * MF_TIGHT_WARM timed repeats; mf_settle estimates the others. Why: a
 * poll costs ~50 ns and a clock read ~15 ns here; the two reads were most
 * of what mpiflow added to a polling loop (interpose/README.md, "Fast
 * repeats", has the error this makes). */
#define MF_TIGHT_NS 2000
#define MF_TIGHT_MASK 15
#define MF_TIGHT_WARM 8
/* A time that exceeds the expected one by MF_TIGHT_UNUSUAL (the process
 * descheduled, a call that yields the processor, more work in a gap) is
 * split between calls and gaps as the node's unusual repeats timed at
 * both ends were, and when under 64 us (mf_tight_size) the node's next
 * MF_TIGHT_QUIET repeats are all timed, to see where such times fall
 * while they recur. Not after longer ones, the gaps between phases of a
 * loop, which do not: after those of a microbenchmark's blocks of
 * MPI_Allreduce they were 40% of the repeats timed. */
#define MF_TIGHT_UNUSUAL(excess, expect) ((excess) > 1000 + (expect) / 4)
#define MF_TIGHT_QUIET 64
/* An unusual excess of the larger size (mf_tight_size) goes to calls only
 * once MF_TIGHT_EVIDENCE timed calls of the node took one too: one 150 us
 * MPI_Allreduce timed, as the sample of its 16 repeats, had the gaps of
 * 280 us between phases of the loop counted as 20-70% calls. (Not for
 * smaller ones: rare calls of 20 us then went to the gaps.) */
#define MF_TIGHT_EVIDENCE 4
/* Where unusual times are over MF_TIGHT_EXCESS(lall, span) of a node's
 * recent time (MF_TIGHT_WINDOW ns, about), the repeats are all timed: the
 * split would be mostly guesswork, and timing them all is cheap, as they
 * take under a quarter of the time. Not less: a loop whose runs of polls
 * alternate with compute phases at the same site (or a benchmark's
 * alternating blocks) looks unusual at every phase, and descheduling is
 * found by the probes below (a host with more ranks than processors times
 * all, core.c tight_ok). */
#define MF_TIGHT_EXCESS(lall, span) ((lall) * 4 > (span) * 3)
#define MF_TIGHT_WINDOW (1 << 27)
/* A thread that loses its processor (other processes on its cores, ranks
 * taking turns, a call that yields) is descheduled for milliseconds inside
 * untimed stretches, in calls and gaps alike, and no sample tells which:
 * so about every MF_TIGHT_PROBE_NS of the time of fast repeats,
 * mf_tight_probe compares the thread's CPU time with the time passed, and
 * repeats go untimed only after MF_TIGHT_CLEAN probes in a row lost less
 * than 1/MF_TIGHT_LOST of it (one system call a millisecond). A loss
 * more than MF_TIGHT_CALM_NS (268 ms) after the previous one (a
 * neighbour's burst, a hypervisor's steal) needs only MF_TIGHT_RECOVER
 * clean probes: the next is as unlikely to come soon, and 16 ms of timed
 * repeats after each such loss were most of what a polling loop cost on a
 * quiet shared machine. Losses that recur (a loaded host: every few ms)
 * keep the full MF_TIGHT_CLEAN. */
#define MF_TIGHT_PROBE_NS (1 << 20)
#define MF_TIGHT_CLEAN 16
#define MF_TIGHT_LOST 8
#define MF_TIGHT_CALM_NS (1 << 28)
#define MF_TIGHT_RECOVER 2

/* mf_tight_probe reads the thread's CPU time at time now (mf_tight_sample
 * calls it every MF_TIGHT_PROBE_NS) and counts the probes in a row that
 * found the thread running all along. */
void mf_tight_probe(mf_rec *r, int64_t now);

/* mf_settle splits the time since the last timed event over the untimed
 * repeats (the enter time of the next timed event, or INT64_MIN at the end
 * of the recording: the means then); ended: that event is another call's,
 * so the run of repeats ended and the span's last gap is not the run's. */
void mf_settle(mf_rec *r, int64_t enter, int ended);

/* mf_sample keeps the duration and gap of a timed repeat that follows a
 * timed one (both measured) as a sample of node n, and chooses the next
 * repeat to time. */
void mf_sample(mf_rec *r, mf_node *n, int64_t idx, int64_t dur, int64_t gap, int64_t untimed);

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
	if (r->tcap - r->tlen < 32)
		mf_trace_flush(r);
	/* tag = node + 1 (0 ends the events), enter - previous exit
	 * (zigzag), duration */
	int64_t gap = enter - r->tprev_exit;
	mf_trace_uvarint(r->tbuf, &r->tlen, (uint64_t)ni + 1);
	mf_trace_uvarint(r->tbuf, &r->tlen, ((uint64_t)gap << 1) ^ (uint64_t)(gap >> 63));
	mf_trace_uvarint(r->tbuf, &r->tlen, (uint64_t)(exit - enter));
	r->tprev_exit = exit;
}

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
 * (tight_pick), at the place mf_tight_place gives. Not always the first:
 * a poll whose time follows a period of a few calls (Open MPI's MPI_Test
 * was 3 ns slower every 4th call), timed always at the same place of it,
 * was 5-14% slower or faster than it was. Not at random per rank: ranks
 * in step (a loop of MPI_Allreduce) then timed different iterations, so a
 * rank waited for each other rank's timed calls too, which made what
 * mpiflow added to MPICH's Allreduce 0.28 of the minimal wrapper's
 * instead of 0.15. A timing interval that ends by its count of events
 * (tm_end) ends at a timed repeat (mf_rep_time), which is no sample; one
 * that ends by time ends at the first timed event past its deadline. */
static inline void mf_tight_set(mf_rec *r, const mf_node *n)
{
	if (!(r->tight_ok && r->cpu_clean >= MF_TIGHT_CLEAN && n->tn >= MF_TIGHT_WARM && n->tper_fx > 0 &&
	      n->tper_fx < (MF_TIGHT_NS << MF_TIGHT_FX) && r->nevents >= n->tquiet && !MF_TIGHT_EXCESS(n->tlsize[0] + n->tlsize[1], n->tspan))) {
		r->tight_next = 0;
		return;
	}
	const int64_t last = r->nevents - 1, bound = r->tm_end;
	if (r->tight_pick <= last) { /* the sample was timed, or none is chosen: this group's or the next's */
		int64_t g = last & ~(int64_t)MF_TIGHT_MASK;
		if ((r->tight_pick = g + mf_tight_place(g)) <= last) {
			g += MF_TIGHT_MASK + 1;
			r->tight_pick = g + mf_tight_place(g);
		}
	}
	r->tight_next = r->tight_pick < bound ? r->tight_pick : bound;
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
	if (n->tn >= MF_TIGHT_WARM) {
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

/* mf_record_ adds one event. Mirrors flowgraph.Builder.Add. */
static inline void mf_record_(mf_rec *r, const mf_event *ev)
{
	if (__builtin_expect(r->failed, 0))
		return;
	const uint32_t kf = r->keyflags;
	if (r->pending)
		mf_settle(r, ev->enter, mf_ends_run(r, ev));
	else if (r->tight_ok && r->nevents && r->prev_node->tn >= MF_TIGHT_WARM)
		mf_tight_exit(r, ev);
	const int64_t idx = r->nevents;
	const int32_t prev = r->prev;
	int32_t ni = -1, ei = -1;
	mf_node *n = NULL;

	if (__builtin_expect(idx != 0, 1)) { /* prev >= 0 */
		const mf_node *p = r->prev_node;
		int32_t s = p->succ_node;
		if (s >= 0) {
			mf_node *c = &r->nodes[s];
			/* the default key (call and site): the other fields of
			 * every node's key are 0 and -1 */
			if (c->call == ev->call &&
			    (kf == MF_KEY_SITE ? c->site == ev->site : mf_node_is(c, kf, ev))) {
				ni = s;
				ei = p->succ_edge;
				n = c;
			}
		}
	}
	if (ni < 0) {
		const uint64_t site = (kf & MF_KEY_SITE) ? ev->site : 0;
		const int64_t kbytes = (kf & MF_KEY_BYTES) ? ev->bytes : 0;
		const int32_t kpartner = (kf & MF_KEY_PARTNER) ? ev->partner : -1;
		const int32_t kcomm = (kf & MF_KEY_COMM) ? ev->comm : -1;
		ni = mf_node_lookup(r, ev, site, kbytes, kpartner, kcomm);
		if (ni < 0)
			return; /* out of memory, r->failed is set */
		n = &r->nodes[ni];
	}
	const int64_t dur = ev->exit - ev->enter;
	mf_stat_add(&n->time, dur, n->count);
	mf_node_record(r, n, ev);

	if (idx == 0) {
		r->initial = ni;
		r->t0 = ev->enter;
	} else {
		if (ei < 0) {
			ei = mf_edge_lookup(r, prev, ni);
			if (ei < 0)
				return;
			mf_node *p = r->prev_node;
			p->succ_node = ni;
			p->succ_edge = ei;
		}
		mf_edge *e = &r->edges[ei];
		mf_stat_add(&e->time, ev->enter - r->last_exit, e->count);
		/* the gap belongs to the interval of the previous event, which
		 * closes here if this event starts the next one */
		mf_tm_touch(r, &e->tsum, &e->tstamp, 2 * (uint32_t)ei + 1, ev->enter - r->last_exit);
		if (idx >= r->tm_end || ev->enter >= r->tm_deadline || ev->exit - r->last_exit >= r->tm_long)
			mf_timing_check(r, idx, ev->enter, ev->enter - r->last_exit, dur, n, e, 0);
		for (int32_t c = 0; c < r->ncounters; c++)
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
	}
	mf_tm_touch(r, &n->tsum, &n->tstamp, 2 * (uint32_t)ni, dur);
	r->last_exit = ev->exit;
	for (int32_t c = 0; c < r->ncounters; c++)
		r->last_counts[c] = ev->cout[c];
	r->prev = ni;
	r->prev_node = n;
	r->nevents = idx + 1;
	/* The next repeats take mf_record_rep once this is the
	 * MF_REP_TIMED-th along a self-loop whose run of sequence numbers it
	 * can extend, if the node depends on no more than call and site and
	 * there are no counters to read. */
	if (ni == prev) {
		mf_edge *e = &r->edges[ei];
		if (r->rep_len < MF_REP_TIMED)
			r->rep_len++;
		if (r->rep_len >= MF_REP_TIMED && e->ocount >= 2 && e->ostride == 1 && !r->ncounters &&
		    !(kf & ~(uint32_t)MF_KEY_SITE)) {
			r->rep_call = ev->call;
			r->rep_site = ev->site;
			/* valid until the next mf_record_, the only place
			 * that grows the tables */
			r->rep_edge = e;
			mf_rep_cache(r, n, ev->bytes);
			r->rep_lean = !r->sample_mask && r->trace_fd < 0;
			mf_tight_set(r, n);
			r->sample_at = r->sample_mask ? idx + 2 + (int64_t)(mf_rand(r) & (2 * r->sample_mask + 1)) : 0;
		}
	} else {
		r->rep_len = 0;
		r->rep_call = -1;
	}

	if (r->trace_fd >= 0)
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
		return r->trace_fd >= 0 ? 3 : 2;
	if (r->nevents >= r->sample_at || r->nevents >= r->tm_end)
		return 4;
	return r->trace_fd >= 0 ? 3 : 2;
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
	if (idx >= r->tm_end || enter >= r->tm_deadline || gap + dur >= r->tm_long)
		mf_timing_check(r, idx, enter, gap, dur, n, e, 1);
	mf_tm_touch(r, &n->tsum, &n->tstamp, 2 * (uint32_t)r->prev, dur);
}

/* mf_rep_node adds to node n the statistics of an untimed repeat with
 * bytes, partner and commsize other than its run's cache has (its count
 * and byte total wait for mf_settle). */
void mf_rep_node(mf_rec *r, mf_node *n, int64_t bytes, int32_t partner, int32_t commsize);

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
		if (r->sample_mask)
			mf_sample(r, n, idx, dur, gap, untimed);
		else if (r->tight_ok)
			mf_tight_sample(r, n, dur, span, untimed);
		if (how == 4 && r->trace_fd >= 0)
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
	return r->nodes[ni].count + (ni == r->prev ? r->pending : 0);
}

/* mf_node_got corrects node ni, whose event was recorded with posted
 * bytes, for the got bytes it moved in the end (a nonblocking receive at
 * its completion, got <= posted): the total exactly, the minimum where got
 * is below it, and the maximum once every event of the node has been
 * corrected (before, a posted size may still be the largest). A receive
 * that got what it posted (the usual case) changes only the maximum's
 * bookkeeping, inline; mf_node_got_ does the rest. */
void mf_node_got_(mf_rec *r, int32_t ni, int64_t posted, int64_t got);

/* mf_node_source counts partner rank (>= 0; else nothing) at node ni, whose
 * event was recorded without one: a receive from MPI_ANY_SOURCE, at its
 * completion. */
void mf_node_source(mf_rec *r, int32_t ni, int32_t rank);

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
	if (__builtin_expect(got != posted || r->failed || (uint32_t)ni >= (uint32_t)r->nnodes, 0)) {
		mf_node_got_(r, ni, posted, got);
		return;
	}
	mf_node *n = &r->nodes[ni];
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
	if (__builtin_expect(r->unusual || r->pending || idx >= r->tm_end || enter >= r->tm_deadline ||
				     exit - r->last_exit >= r->tm_long, 0))
		return 0; /* idx 0 too (tm_end 0): no previous node */
	mf_node *p = r->prev_node;
	const int32_t ni = p->succ_node, ei = p->succ_edge;
	if (ni < 0 || ni == r->prev)
		return 0;
	mf_node *n = &r->nodes[ni];
	const int32_t call = (int32_t)(uint32_t)cp, partner = (int32_t)(cp >> 32);
	if (n->call != call || n->site != site)
		return 0;
	mf_edge *e = &r->edges[ei];
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
