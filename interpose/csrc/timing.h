/*
 * timing.h: the timing intervals' slow paths (closing, compacting).
 */
#ifndef MPIFLOW_TIMING_H
#define MPIFLOW_TIMING_H

#include "recorder.h"

/* mf_timing_check is called for event idx of node n, entered at enter
 * after gap on edge e and of duration dur (both in their statistics and
 * timing sums, n in its count, e in its count if ecounted), if the open
 * interval ends before it (iv.end, iv.deadline) or it is long (iv.long_ns):
 * the interval also ends before a long gap, and after a long call, that
 * is more than MF_TM_OUTLIER times the mean of its edge or node before it
 * (timingRec.add). */
__attribute__((noinline)) void mf_timing_check(mf_rec *r, int64_t idx, int64_t enter, int64_t gap, int64_t dur,
					       const mf_node *n, const mf_edge *e, int ecounted);

/* Between the recorder and timing.c: mf_tm_reserve makes room in the
 * timing's tables for every node and edge (-1 when out of memory),
 * mf_tm_publish makes the closed intervals visible to a signal handler
 * (mf_timing_pub). */
int mf_tm_reserve(mf_rec *r);
void mf_tm_publish(mf_rec *r);

#endif
