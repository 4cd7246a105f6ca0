/*
 * mf_mpi.h: what the generated MPI wrappers (wrappers_gen.c) use: the
 * per-thread recorder pointer and the entry points of the library's
 * files, with their headers: the recorder's hot path (record.h), the clock
 * (clock.h), the handle caches (handles.h), the Fortran sentinels
 * (fortran.h), the regions (regions.h) and the crash paths (crash.h).
 * Built against one MPI's mpi.h.
 */
#ifndef MPIFLOW_MF_MPI_H
#define MPIFLOW_MF_MPI_H

#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "record.h"
#include "clock.h"
#include "crash.h"
#include "finalize.h"
#include "fortran.h"
#include "handles.h"
#include "papi.h"
#include "regions.h"
#include "visibility.h"

/* The calling thread's recorder, NULL when not recording (before MPI_Init,
 * after MPI_Finalize, in threads other than the one that initialized MPI,
 * in processes that never call MPI_Init). Issue 4 gives every thread its
 * own. */
extern __thread mf_rec *mf_tls_rec __attribute__((tls_model("initial-exec"))) MF_HIDDEN;
MF_HIDDEN void mf_start(int64_t init_mono, int64_t init_real, int provided);
/* mf_thread_rec gives a thread without a recorder its own, when several
 * threads may call MPI (MPI_THREAD_SERIALIZED, MULTIPLE); else NULL. */
MF_HIDDEN mf_rec *mf_thread_rec(void);

#endif
