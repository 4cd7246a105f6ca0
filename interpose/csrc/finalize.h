/*
 * finalize.h: the end of recording at MPI_Finalize (finalize.c): the Go
 * part converts and writes the job file, or the partial files keep it.
 */
#ifndef MPIFLOW_FINALIZE_H
#define MPIFLOW_FINALIZE_H

#include "visibility.h"

/* mf_finish ends recording at MPI_Finalize, before the MPI's own. */
MF_HIDDEN void mf_finish(void);

#endif
