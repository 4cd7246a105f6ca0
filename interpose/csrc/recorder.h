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
 * The hot path (mf_record, record.h) is inline; the slow paths are in
 * files by concern: tables.c (nodes, edges, sites), seq.c (sequence
 * numbers, flowgraph.Seq), settle.c (untimed repeats), tight.c and tight.h
 * (fast repeats), timing.c and tmenc.c (timing intervals and their
 * encoding), trace.c (the full trace). Sequence numbers are nested
 * progressions: a run that ends is folded into repeats of the edge's
 * earlier terms (mf_seq_close), so memory is bounded by the number of
 * distinct nodes and edges, the terms that periodic loop nests do not
 * repeat, and the timing budget.
 *
 * All state lives in one mf_rec so that a thread-local recorder per thread
 * (MPI_THREAD_MULTIPLE) only has to change how the wrappers find it; the
 * state of each concern in a struct of its own (cfg: the settings, iv:
 * the open timing interval, tab: the tables, tm: the timing's slow paths,
 * bk: the sequence backup, tr: the trace buffer), the hot path's first.
 */
#ifndef MPIFLOW_RECORDER_H
#define MPIFLOW_RECORDER_H

#include <stdint.h>
#include <stddef.h>

#include "key_fields.h" /* MF_KEY_*: the key fields beyond the call, as chosen by MPIFLOW_KEY */

#ifdef __cplusplus
extern "C" {
#endif


#define MF_MAX_PARTNERS 64 /* flowgraph.MaxPartners */
#define MF_TIMING_BYTES (64 << 10)  /* flowgraph.DefaultTimingBytes */
#define MF_TIMING_MIN (1 << 10)      /* flowgraph.MinTimingBytes */
#define MF_TIMING_MAX (1 << 30)      /* flowgraph.MaxTimingBytes */
#define MF_BUDGET_BYTES (64 << 10)   /* flowgraph.DefaultBudget */
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

#define MF_TIGHT_SIZES 2 /* sizes of unusual excess (tight.h) */

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
	 * mf_rec.iv.gen) */
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
	int32_t site_idx; /* index into mf_rec.tab.sites, -1 if the site is not in the key */
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

/* mf_open_iv is what the hot path reads and writes of the timing: the
 * open interval's end and lists (timing.c sets them). One cache line. */
typedef struct {
	/* it closes at event end (tm.start + tm.spacing, or the event
	 * after a long call; 0 before the first event) or at the first
	 * event entered at or after deadline; an event whose gap and
	 * duration take long_ns or more is checked (mf_timing_check) */
	int64_t end, deadline, long_ns;
	int64_t gen; /* its generation: a tsum counts if its tstamp is gen */
	/* the ids (2*node, 2*edge+1) it touched, nodes [0] and edges [1],
	 * each in order of first touch */
	uint32_t *ids[2];
	int64_t nids[2];
} mf_open_iv;

/* mf_timing is the state of the timing's slow paths (timing.c) and of
 * the writers of its files; what the hot path reads is mf_open_iv. */
typedef struct mf_timing {
	/* Timing (flowgraph.Timing, mirrored by flowgraph's timingRec): the
	 * open interval's raw sums live in the nodes and edges (tsum), touched
	 * in the order iv.ids; closed intervals are encoded in buf[cur]
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

/* mf_tables holds the recorder's nodes, edges and call sites: growable
 * arrays, each found through an open-addressing hash table of index + 1
 * (0: empty) (tables.c). */
typedef struct {
	mf_node *nodes;
	int32_t nnodes, capnodes;
	int32_t *nhash;
	uint32_t nhashcap;
	mf_edge *edges;
	int32_t nedges, capedges;
	int32_t *ehash;
	uint32_t ehashcap;
	uint64_t *sites;
	int32_t nsites, capsites;
	int32_t *shash;
	uint32_t shashcap;
} mf_tables;

/* mf_seq_backup: while mf_seq_close folds the terms of edge `edge` (-1:
 * none), a signal handler must see them as they were before the close:
 * terms [0, from) of the edge, then terms[from, n), then the run o*.
 * Positions the fold is about to change are copied to terms first. */
typedef struct {
	int32_t edge, from, n, cap;
	mf_term *terms;
	int64_t ostart, ostride, ocount;
} mf_seq_backup;

/* mf_trace_buf is the full trace's buffer: its first errno (0: fine), the
 * bytes not yet written, and the exit time of the last event written. */
typedef struct {
	int err;
	uint8_t *buf;
	size_t len, cap;
	int64_t prev_exit;
} mf_trace_buf;

/* mf_rec_cfg is how the recorder records: set as it starts (mf_rec_init,
 * then core.c from the environment, trace.c), read on the hot path. */
typedef struct {
	uint32_t keyflags;   /* the key's fields beyond the call (MF_KEY_*) */
	int32_t ncounters;   /* hardware counters, 0..MF_MAX_COUNTERS */
	int64_t sample_mask; /* MPIFLOW_SAMPLE - 1; 0: every event timed */
	int tight_ok; /* fast repeats may go untimed (not MPIFLOW_EXACT=1 nor sampling); mf_rec_init: 0 */
	int trace_fd; /* the full trace (MPIFLOW_TRACE=1): >= 0 while written */
} mf_rec_cfg;

/* mf_rec is one thread's recorder. Its first cache lines hold what the
 * hot path touches, in the order of how often (MF_REC_LINE below pins
 * them): an untimed repeat touches only line 0, a timed repeat and the
 * usual event (mf_record_fast) lines 0 to 3. Each line more costs ranks
 * in step (README, "Fast repeats"). */
typedef struct mf_rec {
	/* Line 0: what an untimed repeat reads and writes.
	 *
	 * Repeats: once the events repeat node prev along its self-loop
	 * (MF_REP_TIMED times), the wrappers record the next ones through
	 * mf_record_rep, a few counter updates (mf_repeat tells them). With
	 * sampling (MPIFLOW_SAMPLE > 1) only some of them are timed: the event
	 * sample_at, the one after it, and those that start a timing
	 * interval; the time the others took is split over them at the next
	 * timed event (mf_settle). The untimed ones touch only this cache
	 * line: their node's and edge's counts and byte total wait in
	 * pending and pend_bytes until mf_settle, and only a byte count
	 * other than rep_bytes, a larger communicator than rep_csize or a
	 * partner update the node at once (mf_rep_node). The wrappers of
	 * most calls without a partner count them before the call, with no
	 * frame of their own (mf_rep_quick). */
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

	mf_open_iv iv; /* line 1: the open timing interval */

	/* Line 2: what a timed repeat and the usual event read besides,
	 * with the settings. */
	mf_node *prev_node;   /* &nodes[prev] (kept when the table grows) */
	mf_edge *rep_edge;    /* while rep_call >= 0: prev's self-loop */
	int64_t last_exit;
	/* checkpoint: after the first event that ends at or after ckpt_next,
	 * mf_record calls ckpt(r) (which sets the next due time). mf_rec_init
	 * leaves it off (INT64_MAX, NULL). */
	int64_t ckpt_next;
	int32_t prev;
	/* failed, a key other than the default, counters or a full trace:
	 * mf_record_fast's checks of what seldom changes, in one (kept by
	 * mf_rec_mode) */
	int unusual;
	mf_rec_cfg cfg;

	/* Line 3: what a timed fast repeat and the usual event read besides:
	 * rep_len, the sample's state and the tables' arrays.
	 *
	 * Fast repeats also need the thread to have kept its processor
	 * (mf_tight_probe): how many probes in a row found it so, and the
	 * time of the last probe (its thread CPU time, from cpu_now, and
	 * the time of the last probe that did not: cpu_time, cpu_lost). */
	int32_t rep_len;      /* repeats of prev in a row, counted up to MF_REP_TIMED */
	int32_t cpu_clean;
	int64_t tight_pick;   /* fast repeats: the next one timed as the sample (mf_tight_set) */
	int64_t cpu_wall;
	mf_tables tab;        /* nodes, edges, call sites (tables.c) */
	int failed; /* out of memory: recording stopped, the graph is incomplete */
	int32_t initial; /* the first event's node, -1 before it */

	int64_t cpu_time, cpu_lost;
	int64_t (*cpu_now)(const struct mf_rec *r); /* thread CPU time, ns; -1: unknown */
	void (*ckpt)(struct mf_rec *r); /* see ckpt_next */
	int64_t sample_at;    /* the next repeat to time (0 without sampling) */
	uint64_t rng;         /* xorshift state for the distance to sample_at */
	int64_t t0; /* the first event's enter */

	/* the timing's slow paths (timing.c), from a line's start: its
	 * 16-byte copies (mf_tm_publish) aligned */
	mf_timing tm __attribute__((aligned(64)));

	mf_seq_backup bk; /* the terms of an edge mf_seq_close folds (seq.c) */

	int64_t last_counts[MF_MAX_COUNTERS]; /* counters at the last exit */

	mf_trace_buf tr; /* the full trace's buffer (trace.c); its file in cfg */
} __attribute__((aligned(64))) mf_rec;

/* MF_REC_LINE pins field f of mf_rec to cache line n: a field moved out
 * of its line fails to compile. */
#define MF_REC_LINE(f, n)                                                                                   \
	_Static_assert(offsetof(mf_rec, f) / 64 == (n) &&                                                   \
			       (offsetof(mf_rec, f) + sizeof(((mf_rec *)0)->f) - 1) / 64 == (n),                   \
		       "mf_rec." #f " lies in cache line " #n)
_Static_assert(_Alignof(mf_rec) == 64, "mf_rec starts a cache line");
MF_REC_LINE(rep_call, 0);
MF_REC_LINE(rep_lean, 0);
MF_REC_LINE(busy, 0);
MF_REC_LINE(rep_csize, 0);
MF_REC_LINE(rep_site, 0);
MF_REC_LINE(nevents, 0);
MF_REC_LINE(tight_next, 0);
MF_REC_LINE(pending, 0);
MF_REC_LINE(pend_bytes, 0);
MF_REC_LINE(rep_bytes, 0);
MF_REC_LINE(rep_handle, 0);
MF_REC_LINE(iv, 1);
MF_REC_LINE(prev_node, 2);
MF_REC_LINE(rep_edge, 2);
MF_REC_LINE(last_exit, 2);
MF_REC_LINE(ckpt_next, 2);
MF_REC_LINE(prev, 2);
MF_REC_LINE(unusual, 2);
MF_REC_LINE(cfg, 2);
MF_REC_LINE(rep_len, 3);
MF_REC_LINE(cpu_clean, 3);
MF_REC_LINE(tight_pick, 3);
MF_REC_LINE(cpu_wall, 3);
MF_REC_LINE(tab.nodes, 3);
MF_REC_LINE(tab.nnodes, 3);
MF_REC_LINE(tab.edges, 3);

/* mf_rec_init sets up an empty recorder whose timing takes at most
 * timing_bytes (0: MF_TIMING_BYTES; clamped to MF_TIMING_MIN..MAX) in at
 * most max_intervals intervals (no limit if < 2). It returns 0, or -1 when
 * out of memory. */
int mf_rec_init(mf_rec *r, uint32_t keyflags, int64_t timing_bytes, int64_t max_intervals);
/* mf_rec_free releases every table (not r itself). */
void mf_rec_free(mf_rec *r);

/* mf_parse_key parses an MPIFLOW_KEY value ("call,site,bytes,...") into key
 * flags; it returns -1 on an unknown field. NULL or "" gives the default. */
int mf_parse_key(const char *s, uint32_t *flags);

/* mf_rec_fail stops recording (out of memory). */
void mf_rec_fail(mf_rec *r);

#ifdef __cplusplus
}
#endif
#endif
