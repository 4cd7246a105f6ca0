/*
 * seq.h: sequence numbers (flowgraph.Seq): closing a run of an edge, the
 * views a writer (or a signal handler) reads, and their encoding.
 */
#ifndef MPIFLOW_SEQ_H
#define MPIFLOW_SEQ_H

#include "recorder.h"

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

/* mf_seq_close closes edge e's open run of sequence numbers before n, which
 * does not extend it, folding it into repeats of earlier terms. */
void mf_seq_close(mf_rec *r, mf_edge *e, int64_t n);

#endif
