/*
 * finalize.c: the end of recording at MPI_Finalize (mf_finish): loading
 * the Go part, libmpiflow-go.so, and the MPI helpers it calls to write the
 * job file (mf_ops, see mpiflow.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "finalize.h"
#include "core.h"
#include "wrappers_gen.h"
#include "crash.h"
#include "mpiflow.h"

/* ---- MPI helpers for the Go part (mf_ops) ---- */

static MPI_File fh = MPI_FILE_NULL;

static int op_bcast(void *buf, int len) { return PMPI_Bcast(buf, len, MPI_BYTE, 0, MPI_COMM_WORLD); }

static int op_allreduce(int64_t *v, int n, int op)
{
	MPI_Op o = op == MF_MIN ? MPI_MIN : op == MF_MAX ? MPI_MAX : MPI_SUM;
	return PMPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT64_T, o, MPI_COMM_WORLD);
}

static int op_exscan(int64_t in, int64_t *out)
{
	*out = 0;
	int rc = PMPI_Exscan(&in, out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	if (G.rank == 0)
		*out = 0; /* undefined on rank 0 */
	return rc;
}

static int op_gather(const void *send, int len, void *recv)
{
	return PMPI_Gather(send, len, MPI_BYTE, recv, len, MPI_BYTE, 0, MPI_COMM_WORLD);
}

/* MF_OMPI_PATH_MAX is the longest path given to Open MPI's MPI_File_open:
 * "<path>.locktest.<rank>" must fit in 256 bytes with ranks of 8 digits. */
#define MF_OMPI_PATH_MAX 230

static int op_open(const char *path)
{
#if defined(OPEN_MPI)
	if (strlen(path) > MF_OMPI_PATH_MAX)
		return MF_ERR_LONGPATH;
#endif
	int rc = PMPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
	if (rc == MPI_SUCCESS)
		PMPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
	return rc;
}

#define CHUNK ((int64_t)1 << 30)

/* check_count turns a write that returned success having written fewer
 * than n bytes into MF_ERR_SHORT: Open MPI's OMPIO prints "No space left
 * on device" and returns MPI_SUCCESS. */
static int check_count(int rc, MPI_Status *st, int64_t n)
{
	int got = 0;
	if (rc == MPI_SUCCESS && PMPI_Get_count(st, MPI_BYTE, &got) == MPI_SUCCESS && got != MPI_UNDEFINED && got < n)
		return MF_ERR_SHORT;
	return rc;
}

static int op_write_at_all(int64_t off, const void *buf, int64_t len)
{
	/* All ranks must make the same number of collective calls. */
	int64_t rounds = (len + CHUNK - 1) / CHUNK;
	int rc = PMPI_Allreduce(MPI_IN_PLACE, &rounds, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
	if (rounds < 1)
		rounds = 1;
	for (int64_t i = 0; i < rounds && rc == MPI_SUCCESS; i++) {
		int64_t o = i * CHUNK, n = len - o;
		if (n < 0)
			n = 0;
		if (n > CHUNK)
			n = CHUNK;
		MPI_Status st;
		rc = PMPI_File_write_at_all(fh, (MPI_Offset)(off + o), (const char *)buf + (n ? o : 0), (int)n, MPI_BYTE, &st);
		rc = check_count(rc, &st, n);
	}
	return rc;
}

static int op_write_at(int64_t off, const void *buf, int64_t len)
{
	int rc = MPI_SUCCESS;
	for (int64_t o = 0; o < len && rc == MPI_SUCCESS; o += CHUNK) {
		int64_t n = len - o > CHUNK ? CHUNK : len - o;
		MPI_Status st;
		rc = PMPI_File_write_at(fh, (MPI_Offset)(off + o), (const char *)buf + o, (int)n, MPI_BYTE, &st);
		rc = check_count(rc, &st, n);
	}
	return rc;
}

static int op_close(void) { return fh == MPI_FILE_NULL ? MPI_SUCCESS : PMPI_File_close(&fh); }

static void op_errstr(int code, char *buf, int len)
{
	char s[MPI_MAX_ERROR_STRING];
	int n = 0;
	if (code == MF_ERR_SHORT)
		snprintf(s, sizeof s, "fewer bytes written than asked (is the file system full?)");
	else if (code == MF_ERR_LONGPATH)
		snprintf(s, sizeof s, "the path is longer than Open MPI's MPI-IO takes without aborting (%d bytes)", MF_OMPI_PATH_MAX);
	else if (PMPI_Error_string(code, s, &n) != MPI_SUCCESS)
		snprintf(s, sizeof s, "MPI error %d", code);
	snprintf(buf, (size_t)len, "%s", s);
}

static const mf_ops ops = {
	.bcast = op_bcast,
	.allreduce_i64 = op_allreduce,
	.exscan_i64 = op_exscan,
	.gather = op_gather,
	.file_open = op_open,
	.file_write_at_all = op_write_at_all,
	.file_write_at = op_write_at,
	.file_close = op_close,
	.error_string = op_errstr,
};

/* go_part loads the Go library that sits next to this one (next to the
 * file a symlink to this one points to, else next to the symlink), or
 * $MPIFLOW_GOLIB, and returns its entry point, or NULL. */
static mf_finalize_fn go_part(char *err, size_t errlen)
{
	char paths[2][PATH_MAX];
	int n = 0;
	const char *env = getenv("MPIFLOW_GOLIB");
	if (env && *env) {
		snprintf(paths[n++], PATH_MAX, "%s", env);
	} else {
		Dl_info info;
		if (!dladdr((void *)&mf_start, &info) || !info.dli_fname) {
			snprintf(err, errlen, "cannot find where libmpiflow is installed");
			return NULL;
		}
		char real[PATH_MAX];
		const char *from[2] = {realpath(info.dli_fname, real) ? real : NULL, info.dli_fname};
		for (int i = 0; i < 2; i++) {
			if (!from[i] || (i == 1 && from[0] && !strcmp(from[0], from[1])))
				continue;
			snprintf(paths[n], PATH_MAX, "%s", from[i]);
			char *slash = strrchr(paths[n], '/');
			size_t dir = slash ? (size_t)(slash - paths[n] + 1) : 0;
			snprintf(paths[n] + dir, PATH_MAX - dir, "libmpiflow-go.so");
			n++;
		}
	}
	void *h = NULL;
	for (int i = 0; i < n && !h; i++) {
		h = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
		if (!h)
			snprintf(err, errlen, "cannot load %s: %s", paths[i], dlerror());
	}
	if (!h)
		return NULL;
	mf_finalize_fn f = (mf_finalize_fn)dlsym(h, "mpiflowFinalize");
	if (!f)
		snprintf(err, errlen, "libmpiflow-go.so has no mpiflowFinalize");
	return f;
}

void mf_finish(void)
{
	if (!G.active)
		return;
	int64_t fin = mf_now();
	mf_partial_off(); /* the tables are freed below: no partial file from here on */
	mf_tls_rec = NULL;
	pthread_mutex_lock(&G.mu);
	G.active = 0; /* no new threads from here on */
	pthread_mutex_unlock(&G.mu);

	mf_thread_data *td = calloc((size_t)G.nthr, sizeof *td);
	for (int i = 0; i < G.nthr; i++) {
		mf_thr *t = G.thr[i];
		if (t->rec.pending) /* the thread's last events were untimed repeats */
			mf_settle(&t->rec, INT64_MIN, 0);
		if (t->rec.cfg.trace_fd >= 0 && mf_trace_close(&t->rec, mf_call_names, mf_ncalls))
			t->trace_err = errno ? errno : EIO;
		if (td)
			td[i] = (mf_thread_data){.rec = &t->rec, .thread = t->index,
						 .trace_tmp = t->trace_tmp[0] ? t->trace_tmp : NULL, .trace_err = t->trace_err};
	}

	char err[PATH_MAX + 256] = "";
	mf_finalize_fn fn = td ? go_part(err, sizeof err) : NULL;
	if (!td)
		snprintf(err, sizeof err, "out of memory");
	int ok = fn != NULL;
	PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (!fn)
		fprintf(stderr, "mpiflow: rank %d: %s; no job file written\n", G.rank, err);
	int wrote = 0;
	if (ok) {
		char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
		int n = 0, ver = 0, sub = 0;
		PMPI_Get_library_version(lib, &n);
		char *nl = strchr(lib, '\n');
		if (nl)
			*nl = 0;
		nl = strchr(lib, ',');
		if (nl)
			*nl = 0;
		PMPI_Get_version(&ver, &sub);
		char vs[32];
		snprintf(vs, sizeof vs, "%d.%d", ver, sub);
		mf_ctx ctx = {
			.threads = td,
			.nthreads = G.nthr,
			.ops = &ops,
			.names = mf_call_names,
			.ncalls = mf_ncalls,
			.rank = G.rank,
			.size = G.size,
			.init_real = G.init_real,
			.init_mono = G.init_mono,
			.finalize_mono = fin,
			.mpi_library = lib,
			.mpi_version = vs,
			.clock = mf_clock_name(),
			.complete = 1,
			.counters = mf_papi_names(),
			.budget = G.budget,
		};
		ctx.regions = mf_regions(&ctx.nregions);
		ctx.output_dir = mf_output_dir();
		ctx.job = G.job;
		wrote = fn(&ctx) == 0;
	} else {
		for (int i = 0; i < G.nthr; i++)
			if (G.thr[i]->trace_tmp[0])
				unlink(G.thr[i]->trace_tmp);
	}
	if (wrote)
		mf_remove_checkpoints();
	else
		mf_partial_fallback(fin - G.init_mono);
	free(td);
	/* Other threads keep pointers to their recorders (a call after
	 * MPI_Finalize is erroneous, but must not crash): their tables are
	 * freed and recording stopped, the structs stay. */
	for (int i = 0; i < G.nthr; i++) {
		G.thr[i]->rec.failed = 1;
		mf_rec_mode(&G.thr[i]->rec);
		mf_rec_free(&G.thr[i]->rec);
	}
	mf_free_caches();
}
