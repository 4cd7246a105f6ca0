/*
 * jobid.h: the job's id, which names the partial files and the job file
 * and fills Header.JobID. Needs no MPI header: jobid.c is also built into
 * the Go package for its tests.
 */
#ifndef MPIFLOW_JOBID_H
#define MPIFLOW_JOBID_H

#include <stddef.h>

/* mf_job_id writes into out (n bytes, cut to n-1) the scheduler's job id
 * when there is one (the name sites file their jobs by; SLURM's with its
 * step), else the launcher's, each byte that is not a letter, a digit,
 * '-', '_' or '.' made '_' so the id cannot escape a directory. It returns
 * 0 when no variable names the job: the caller then uses rank 0's pid. */
int mf_job_id(char *out, size_t n);

#endif
