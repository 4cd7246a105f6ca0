/*
 * mpiflow.h: the interface between the LD_PRELOAD library (the rest of
 * csrc/, built against one MPI) and the Go part (interpose/, built without
 * any MPI headers). At MPI_Finalize the preload library dlopen()s the Go
 * library and calls mpiflowFinalize(ctx): Go converts the recorder's tables
 * into a flowgraph.Rank and writes the job file through the MPI helpers in
 * ops, so the Go part never includes mpi.h and one Go library serves every
 * MPI.
 */
#ifndef MPIFLOW_H
#define MPIFLOW_H

#include "record.h"
#include "regions.h"
#include "tmenc.h"

/* Reduction operations of mf_ops.allreduce_i64. */
enum { MF_SUM = 0, MF_MIN = 1, MF_MAX = 2 };

/* MPI helpers on MPI_COMM_WORLD. Every function returns an MPI error code
 * (0 = MPI_SUCCESS), or MF_ERR_SHORT from a write that wrote fewer bytes
 * than asked without an error (Open MPI on a full file system). The file
 * functions work on one file at a time. */
#define MF_ERR_SHORT (-1)
/* file_open: a path longer than the MPI-IO library can take without
 * aborting the process (Open MPI 4.1's lockedfile component formats
 * "<path>.locktest.<rank>" into 256 bytes at every open) */
#define MF_ERR_LONGPATH (-2)
typedef struct mf_ops {
	int (*bcast)(void *buf, int len); /* from rank 0 */
	int (*allreduce_i64)(int64_t *inout, int n, int op);
	int (*exscan_i64)(int64_t in, int64_t *out); /* 0 on rank 0 */
	int (*gather)(const void *send, int len, void *recv); /* recv: len*size bytes on rank 0 */
	int (*file_open)(const char *path); /* collective: create, write only */
	int (*file_write_at_all)(int64_t off, const void *buf, int64_t len); /* collective */
	int (*file_write_at)(int64_t off, const void *buf, int64_t len);
	int (*file_close)(void); /* collective */
	void (*error_string)(int code, char *buf, int len);
} mf_ops;

/* One recording thread of a rank. */
typedef struct mf_thread_data {
	mf_rec *rec;
	int thread;            /* 0: the thread that initialized MPI */
	const char *trace_tmp; /* path of its full trace so far, or NULL */
	int trace_err;         /* errno of a failed full trace, 0 if fine */
} mf_thread_data;

/* What the Go part gets at MPI_Finalize. */
typedef struct mf_ctx {
	mf_thread_data *threads;
	int nthreads;
	const mf_ops *ops;
	const char *const *names; /* call names, indexed by mf_event.call */
	int ncalls;
	int rank, size;
	int64_t init_real;     /* CLOCK_REALTIME at MPI_Init, ns since 1970 */
	int64_t init_mono;     /* the recorder's clock at MPI_Init */
	int64_t finalize_mono; /* the recorder's clock at MPI_Finalize */
	const char *mpi_library; /* MPI_Get_library_version */
	const char *mpi_version; /* MPI_Get_version, "3.1" */
	const char *clock;       /* name of the recorder's clock */
	int complete;            /* 1 when the rank reached MPI_Finalize */
	const char *counters;    /* comma-separated counter names ("" for none) */
	int64_t budget;          /* bytes of a graph's sequences and timing (MPIFLOW_BUDGET); 0: none */
	const mf_region *regions; /* what the pseudo call sites of MPI_Pcontrol stand for */
	int nregions;
	const char *output_dir; /* MPIFLOW_DIR with its placeholders expanded, or "." */
	const char *job;        /* the job's id (core.c's job_id), the same on every rank */
} mf_ctx;

/* The Go part's entry point (exported by the Go library). It returns 0 on
 * every rank when the job file was written, else 1 on every rank (when the
 * ranks could still agree). It never aborts the application. */
typedef int (*mf_finalize_fn)(mf_ctx *ctx);

#endif
