/*
 * settle.h: node statistics that the hot path leaves to a call (partners,
 * untimed repeats, received sizes) and the settling of untimed repeats.
 */
#ifndef MPIFLOW_SETTLE_H
#define MPIFLOW_SETTLE_H

#include "recorder.h"

/* mf_settle splits the time since the last timed event over the untimed
 * repeats (the enter time of the next timed event, or INT64_MIN at the end
 * of the recording: the means then); ended: that event is another call's,
 * so the run of repeats ended and the span's last gap is not the run's. */
void mf_settle(mf_rec *r, int64_t enter, int ended);

/* mf_sample keeps the duration and gap of a timed repeat that follows a
 * timed one (both measured) as a sample of node n, and chooses the next
 * repeat to time. */
void mf_sample(mf_rec *r, mf_node *n, int64_t idx, int64_t dur, int64_t gap, int64_t untimed);

/* mf_rep_node adds to node n the statistics of an untimed repeat with
 * bytes, partner and commsize other than its run's cache has (its count
 * and byte total wait for mf_settle). */
void mf_rep_node(mf_rec *r, mf_node *n, int64_t bytes, int32_t partner, int32_t commsize);

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

#endif
