/*
 * partial.h: write one rank's recorder state as a complete, single-rank
 * mpiflow file (flowgraph/format.go) without Go, without malloc and without
 * stdio, so that it can run from a signal handler, an atexit handler or an
 * MPI_Abort wrapper of a rank that never reaches MPI_Finalize.
 *
 * The file is <dir>/<exe>.<job>.rank<R>[.t<T>].partial.mpiflow (".t<T>"
 * only for threads other than 0). Its rank block has Complete=false and its
 * header Incomplete=true, NumRanks = the world size and only this rank's
 * entry of Hosts set, so `flowgraph.Merge` can join the partial files of a
 * job into one incomplete job file. Call sites carry their raw address;
 * Object and Offset stay empty unless a table resolved in advance is given
 * (dladdr is not async-signal-safe).
 *
 * Only open, write, rename, unlink, close, getpid and getrusage are called.
 * See notes/partial.md for how the crash paths use it.
 */
#ifndef MPIFLOW_PARTIAL_H
#define MPIFLOW_PARTIAL_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"
#include "regions.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A call site resolved in advance (e.g. with dladdr at MPI_Init or when a
 * site is first seen, outside any signal handler), indexed like
 * mf_rec.tab.sites. obj NULL leaves CallSite.Object empty. */
typedef struct mf_partial_site {
	const char *obj;
	uint64_t off;
} mf_partial_site;

/* Everything the file needs beyond the recorder. Every pointer may be NULL
 * (an empty string, or a nil list for argv). */
typedef struct mf_partial_info {
	int rank;   /* world rank */
	int size;   /* world size: Header.NumRanks and the length of Hosts */
	int thread; /* Rank.Thread, 0 for the thread that initialized MPI */
	const char *host;
	const char *job_id; /* file name and Header.JobID; NULL gives the pid */
	const char *exe;    /* base name for the file name; NULL gives "mpi" */
	const char *const *argv; /* Header.Command */
	int argc;
	int64_t start_unix; /* Header.StartUnixNano; 0 gives init_real */
	int64_t init_real;  /* CLOCK_REALTIME at MPI_Init, ns since 1970 */
	int64_t init_mono;  /* the recorder's clock at MPI_Init */
	int64_t wall;       /* Header.Wallclock: ns from MPI_Init until now */
	const char *mpi_library;
	const char *mpi_version;
	const char *clock;    /* Header.ClockSource */
	const char *counters; /* comma-separated counter names, "" or NULL for none */
	const char *const *names; /* call names, indexed by mf_event.call */
	int ncalls;
	const mf_partial_site *sites; /* optional, nsites entries */
	int nsites;
	const mf_region *regions; /* optional: the pseudo call sites of MPI_Pcontrol */
	int nregions;
	int rusage; /* 1: fill UserTime, SysTime and MaxRSS with getrusage(RUSAGE_SELF) */
	/* 1: a periodic checkpoint, written through its own temporary name so
	 * that a crash path interrupting it writes the file independently */
	int checkpoint;
	/* 1: the rank reached MPI_Finalize (its block Complete, the header not
	 * Incomplete): the fallback when the job file could not be written */
	int complete;
	/* Optional output buffer (at least MF_PARTIAL_MINBUF bytes). Without
	 * one a static buffer is used, which one call at a time may hold: a
	 * second concurrent call returns -EBUSY. */
	uint8_t *buf;
	size_t buflen;
} mf_partial_info;

#define MF_PARTIAL_MINBUF 4096
#define MF_PARTIAL_STATICBUF (64 * 1024)

/* mf_write_partial writes the file and returns 0, or a negative errno:
 * -EINVAL for a NULL argument, -ENAMETOOLONG, -EBUSY (static buffer in
 * use), or the error of open/write/rename (the temporary file is then
 * removed). A recorder that ran out of memory (failed == 1) is written up
 * to the last event whose transition is fully recorded. It keeps errno. */
int mf_write_partial(const mf_rec *r, const mf_partial_info *info, const char *dir);

/* mf_partial_path writes the final path of the file into out (n bytes) and
 * returns its length, or -ENAMETOOLONG. */
int mf_partial_path(const mf_partial_info *info, const char *dir, char *out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
