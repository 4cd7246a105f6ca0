/*
 * trace.c: the full-trace writer (MPIFLOW_TRACE=1).
 */
#include "trace.h"
#include "record.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Full-trace file: "MPIFLOWT", uint32 version, uint32 rank (big-endian),
 * then per event uvarint(node+1), uvarint(zigzag(enter-previous exit)),
 * uvarint(exit-enter); then uvarint(0), the node table, "MFTE".
 * flowgraph/fulltrace.go reads it. */
#define MF_TRACE_VERSION 1
#define MF_TRACE_BUF (1 << 20)


static int write_all(int fd, const uint8_t *b, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, b, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

void mf_trace_flush(mf_rec *r)
{
	if (r->cfg.trace_fd >= 0 && r->tr.len > 0 && !r->tr.err && write_all(r->cfg.trace_fd, r->tr.buf, r->tr.len))
		r->tr.err = errno ? errno : EIO;
	r->tr.len = 0;
}

static void put_be32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

int mf_trace_open(mf_rec *r, int fd, int rank)
{
	r->tr.buf = malloc(MF_TRACE_BUF);
	if (!r->tr.buf)
		return -1;
	r->tr.cap = MF_TRACE_BUF;
	memcpy(r->tr.buf, "MPIFLOWT", 8);
	put_be32(r->tr.buf + 8, MF_TRACE_VERSION);
	put_be32(r->tr.buf + 12, (uint32_t)rank);
	r->tr.len = 16;
	r->tr.prev_exit = 0;
	r->cfg.trace_fd = fd;
	mf_rec_mode(r);
	return 0;
}

int mf_trace_close(mf_rec *r, const char *const *names, int ncalls)
{
	if (r->cfg.trace_fd < 0)
		return 0;
	mf_trace_uvarint(r->tr.buf, &r->tr.len, 0);
	mf_trace_uvarint(r->tr.buf, &r->tr.len, (uint64_t)r->tab.nnodes);
	for (int32_t i = 0; i < r->tab.nnodes; i++) {
		const mf_node *n = &r->tab.nodes[i];
		const char *name = n->call >= 0 && n->call < ncalls ? names[n->call] : "?";
		size_t l = strlen(name);
		if (l > 200)
			l = 200;
		if (r->tr.cap - r->tr.len < l + 64)
			mf_trace_flush(r);
		mf_trace_uvarint(r->tr.buf, &r->tr.len, l);
		memcpy(r->tr.buf + r->tr.len, name, l);
		r->tr.len += l;
		mf_trace_uvarint(r->tr.buf, &r->tr.len, n->site);
		mf_trace_uvarint(r->tr.buf, &r->tr.len, ((uint64_t)n->kbytes << 1) ^ (uint64_t)(n->kbytes >> 63));
		mf_trace_uvarint(r->tr.buf, &r->tr.len, (uint64_t)(int64_t)(n->kpartner + 1));
		mf_trace_uvarint(r->tr.buf, &r->tr.len, (uint64_t)(int64_t)(n->kcomm + 1));
	}
	memcpy(r->tr.buf + r->tr.len, "MFTE", 4);
	r->tr.len += 4;
	mf_trace_flush(r);
	int err = r->tr.err;
	if (close(r->cfg.trace_fd) && !err)
		err = errno;
	r->cfg.trace_fd = -1;
	mf_rec_mode(r);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}
