/*
 * papi.h: the hardware counters of MPIFLOW_PAPI, read through PAPI when
 * it can be loaded (papi.c).
 */
#ifndef MPIFLOW_PAPI_H
#define MPIFLOW_PAPI_H

#include <stdint.h>

#include "visibility.h"

/* mf_papi_start sets up those of
 * MPIFLOW_PAPI on the calling (main) thread and returns how many work;
 * mf_papi_thread sets up the same on the calling thread (recording thread
 * number thread) and returns their number, or 0 (warned once) when it
 * cannot; mf_papi_names is their names, comma-separated ("" for none). */
MF_HIDDEN int mf_papi_start(void);
MF_HIDDEN int mf_papi_thread(int thread);
MF_HIDDEN const char *mf_papi_names(void);
/* mf_counters_read stores the current hardware counter values (as many as
 * the recorder's ncounters). */
MF_HIDDEN void mf_counters_read(int64_t *v);

#endif
