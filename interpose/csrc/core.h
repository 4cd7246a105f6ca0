/*
 * core.h: the process state that the preload library's files share (the
 * wrappers see only mf_mpi.h): the recording threads (mf_thr), the
 * settings and facts of the process (G), and what one file provides to
 * another.
 */
#ifndef MPIFLOW_CORE_H
#define MPIFLOW_CORE_H

#include <limits.h>
#include <pthread.h>
#include <stdint.h>

#include "mf_mpi.h"

/* One recording thread: its recorder and full trace. */
typedef struct mf_thr {
	mf_rec rec;
	int index; /* 0: the thread that initialized MPI */
	uint8_t *ckpt_buf; /* output buffer of its checkpoints */
	int64_t ckpt_gap;  /* ns to the next checkpoint: 1 s, doubling up to G.ckpt_every */
	int ckpt_written;  /* a checkpoint file of this thread exists */
	char trace_tmp[PATH_MAX];
	int trace_err;
} mf_thr;

/* Process-wide state. Under MPI_THREAD_SERIALIZED or MULTIPLE every
 * thread that calls MPI gets its own recorder (mf_thread_rec); the handle
 * caches and request table (handles.c) are then shared under mu, off the
 * hot path of MPI_COMM_WORLD. */
typedef struct mf_state {
	mf_thr main;
	mf_thr **thr; /* all recording threads, thr[0] == &main */
	int nthr, capthr;
	int threads; /* more than one thread may call MPI */
	pthread_mutex_t mu;
	uint32_t keyflags;
	int64_t timing_bytes;  /* timing budget per graph, MPIFLOW_TIMING */
	int64_t budget;        /* sequences and timing per graph, MPIFLOW_BUDGET; 0: MPIFLOW_ORDER=exact */
	int64_t max_intervals; /* most timing intervals per graph, MPIFLOW_ANCHORS; 0: no limit */
	int64_t sample_mask;   /* MPIFLOW_SAMPLE - 1 */
	int tight_ok;          /* not MPIFLOW_EXACT=1 (mf_rec.tight_ok) */
	int64_t ckpt_every; /* ns between checkpoints, MPIFLOW_CHECKPOINT; 0: none */
	int trace;
	int active;
	int started; /* mf_start was called (MPI_Init passed through the library) */
	int rank, size;
	int64_t init_mono, init_real;
	char job[128]; /* the job id (job_id in core.c; the same on every rank) */
} mf_state;
extern mf_state G MF_HIDDEN;

/* core.c: the output directory, MPIFLOW_DIR with its placeholders
 * expanded, or the working directory. */
MF_HIDDEN const char *mf_output_dir(void);
/* mf_flag is the boolean setting name: 0 or 1, def when unset or empty,
 * and def with a warning on rank 0 for anything else. */
MF_HIDDEN int mf_flag(const char *name, int def);

/* Hooks another file registers with core, so that core depends on none
 * of them (crash.c registers its partial files and checkpoints): start
 * runs at the end of mf_start, thread for each recording thread (the main
 * one included) once it records. NULL: none. */
typedef struct mf_hooks {
	void (*start)(void);
	void (*thread)(mf_thr *t);
} mf_hooks;
extern mf_hooks mf_core_hooks MF_HIDDEN;

#endif
