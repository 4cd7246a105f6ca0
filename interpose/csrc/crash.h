/*
 * crash.h: the partial files of runs that never reach MPI_Finalize
 * (crash.c): written at exit, MPI_Abort and fatal signals, and as
 * checkpoints. crash.c registers its setup with core (core.h, mf_hooks).
 */
#ifndef MPIFLOW_CRASH_H
#define MPIFLOW_CRASH_H

#include <stdint.h>

#include "visibility.h"

struct mf_thr;

/* mf_partial_now writes every recording thread's partial file (once per
 * process; see partial.h). safe: not in a signal handler, so call sites
 * may be located with dladdr. */
MF_HIDDEN void mf_partial_now(int safe);
/* mf_partial_setup prepares them and installs the crash paths at MPI_Init;
 * mf_start_checkpoints arms the checkpoints of a thread; mf_partial_off
 * stops the partial files for good (MPI_Finalize); mf_remove_checkpoints
 * removes the checkpoint files once the job file is written;
 * mf_partial_fallback keeps the ranks' data as partial files when it was
 * not (collective). */
MF_HIDDEN void mf_partial_setup(void);
MF_HIDDEN void mf_start_checkpoints(struct mf_thr *t);
MF_HIDDEN void mf_partial_off(void);
MF_HIDDEN void mf_remove_checkpoints(void);
MF_HIDDEN void mf_partial_fallback(int64_t wall);

#endif
