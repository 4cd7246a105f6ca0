/*
 * trace.h: the full-trace writer (MPIFLOW_TRACE=1).
 */
#ifndef MPIFLOW_TRACE_H
#define MPIFLOW_TRACE_H

#include "recorder.h"

/* Full trace: mf_trace_open starts writing events to fd (which the recorder
 * then owns); mf_trace_close appends the node table (names[call] gives a
 * call's name) and closes the fd. They return 0 or -1 (errno kept). */
int mf_trace_open(mf_rec *r, int fd, int rank);
int mf_trace_close(mf_rec *r, const char *const *names, int ncalls);
/* mf_trace_flush writes the buffered events out. */
void mf_trace_flush(mf_rec *r);

#endif
