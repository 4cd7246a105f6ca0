/*
 * partial.c: the async-signal-safe writer of a single-rank partial mpiflow
 * file. See partial.h.
 *
 * The msgpack encoding is written by hand to decode with
 * github.com/vmihailenco/msgpack/v5 into the Go structs of flowgraph: maps
 * keyed by the msgpack tag names (partial_keys.h, generated from them), nil where the Go conversion (convert.go)
 * leaves a slice nil and an empty array where it makes one, sequence
 * numbers as a bin (mf_seqv_encode, flowgraph/seq.go), the Timing as a bin
 * (flowgraph/timing.go). Integers
 * use the shortest msgpack form; the decoder accepts every form.
 */
#include "partial.h"
#include "tmenc.h"
#include "mpout.h"
#include "partial_keys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h> /* rename only: a system call, no FILE streams */
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define MF_FORMAT_VERSION 5 /* flowgraph.FormatVersion */
#define MF_PATH_MAX 4096

/* write_timing writes the "timing" bin (flowgraph.Timing): the published
 * closed intervals and the open one as the last, uncapped (the Go side
 * would close it the same way while it fits the budget). A recorder that
 * failed (or was interrupted mid-event: busy) gets only the closed
 * intervals whose events and gaps are all within the view, as convert.go's
 * recTiming. */
static void write_timing(mf_out *o, const mf_rec *r, const mf_view *v)
{
	mf_mp_key(o, MF_PK_GRAPH_TIMING);
	mf_timing_pub p = r->tm.pub[r->tm.pubi];
	int64_t open = !r->failed && v->nevents > 0 ? v->nevents - p.start : 0;
	int64_t closed = open > 0 ? p.len : mf_timing_prefix(&p, v->nevents > 0 ? v->nevents - 1 : 0);
	mf_mp_bin(o, 3 + (uint64_t)mf_uvlen((uint64_t)p.spacing) + (uint64_t)mf_uvlen((uint64_t)p.keep) +
			  (uint64_t)mf_uvlen((uint64_t)p.shift) + mf_timing_encode(r, &p, closed, open, NULL, NULL));
	mf_put_uv(o, 0); /* format v5: intervals with their number of events */
	mf_put_uv(o, 0); /* their last gaps */
	mf_put_uv(o, 0); /* and their last durations */
	mf_put_uv(o, (uint64_t)p.spacing);
	mf_put_uv(o, (uint64_t)p.keep);
	mf_put_uv(o, (uint64_t)p.shift);
	mf_timing_encode(r, &p, closed, open, mf_put_cb, o);
}

/* write_node writes node i of r (flowgraph.Node). */
static void write_node(mf_out *o, const mf_rec *r, const mf_partial_info *in, int32_t i)
{
	const mf_node *n = &r->tab.nodes[i];
	mf_mp_map(o, 7);
	mf_mp_key(o, MF_PK_NODE_KEY);
	mf_mp_map(o, 5);
	mf_mp_key(o, MF_PK_NODEKEY_CALL);
	if (n->call >= 0 && n->call < in->ncalls && in->names && in->names[n->call])
		mf_mp_str(o, in->names[n->call]);
	else
		mf_mp_key(o, "?");
	mf_mp_key(o, MF_PK_NODEKEY_SITE);
	mf_mp_int(o, n->site_idx >= 0 && n->site_idx < r->tab.nsites ? n->site_idx : -1);
	mf_mp_key(o, MF_PK_NODEKEY_BYTES);
	mf_mp_int(o, n->kbytes);
	mf_mp_key(o, MF_PK_NODEKEY_PARTNER);
	mf_mp_int(o, n->kpartner);
	mf_mp_key(o, MF_PK_NODEKEY_COMM);
	mf_mp_int(o, n->kcomm);
	mf_mp_key(o, MF_PK_NODE_COUNT);
	mf_mp_int(o, mf_rec_node_count(r, i));
	mf_mp_key(o, MF_PK_NODE_TIME);
	mf_mp_stat(o, &n->time);
	mf_mp_key(o, MF_PK_NODE_BYTES);
	mf_stat b = n->bytes;
	if (i == r->prev)
		b.total += r->pend_bytes; /* untimed repeats' (mf_record_rep) */
	mf_mp_stat(o, &b);
	mf_mp_key(o, MF_PK_NODE_PARTNERS);
	int32_t np = n->partners ? n->npartners : 0;
	if (np == 0) {
		mf_mp_nil(o);
	} else {
		mf_mp_arr(o, (uint64_t)np);
		for (int32_t p = 0; p < np; p++) {
			mf_mp_map(o, 2);
			mf_mp_key(o, MF_PK_PARTNERCOUNT_RANK);
			mf_mp_int(o, n->partners[p].rank);
			mf_mp_key(o, MF_PK_PARTNERCOUNT_COUNT);
			mf_mp_int(o, n->partners[p].count);
		}
	}
	mf_mp_key(o, MF_PK_NODE_OTHERPARTNERS);
	mf_mp_int(o, n->other_partners);
	mf_mp_key(o, MF_PK_NODE_COMMSIZE);
	mf_mp_int(o, n->commsize);
}

/* write_nodes writes the "nodes" of r. */
static void write_nodes(mf_out *o, const mf_rec *r, const mf_partial_info *in)
{
	mf_mp_key(o, MF_PK_GRAPH_NODES);
	mf_mp_arr(o, (uint64_t)r->tab.nnodes);
	for (int32_t i = 0; i < r->tab.nnodes; i++)
		write_node(o, r, in, i);
}

/* write_edges writes the "edges" of r in view v (flowgraph.Edge). */
static void write_edges(mf_out *o, const mf_rec *r, const mf_view *v)
{
	mf_mp_key(o, MF_PK_GRAPH_EDGES);
	int32_t ne = v->drop_edges ? 0 : r->tab.nedges;
	int32_t nc = r->cfg.ncounters < 0 ? 0 : r->cfg.ncounters > MF_MAX_COUNTERS ? MF_MAX_COUNTERS : r->cfg.ncounters;
	mf_mp_arr(o, (uint64_t)ne);
	for (int32_t i = 0; i < ne; i++) {
		const mf_edge *e = &r->tab.edges[i];
		mf_mp_map(o, 6);
		mf_mp_key(o, MF_PK_EDGE_SRC);
		mf_mp_int(o, e->src);
		mf_mp_key(o, MF_PK_EDGE_DST);
		mf_mp_int(o, e->dst);
		mf_mp_key(o, MF_PK_EDGE_COUNT);
		mf_mp_int(o, mf_rec_edge_count(r, e));
		mf_mp_key(o, MF_PK_EDGE_TIME);
		mf_mp_stat(o, &e->time);
		mf_mp_key(o, MF_PK_EDGE_COUNTERS);
		mf_mp_arr(o, (uint64_t)nc);
		for (int32_t c = 0; c < nc; c++)
			mf_mp_int(o, e->counters[c]);
		mf_mp_key(o, MF_PK_EDGE_SEQ);
		mf_seqv sv = mf_rec_seq(r, e);
		mf_mp_bin(o, mf_seqv_encode(&sv, NULL, NULL));
		mf_seqv_encode(&sv, mf_put_cb, o);
	}
}

/* write_sites writes the "sites" of r (flowgraph.Site). */
static void write_sites(mf_out *o, const mf_rec *r, const mf_partial_info *in)
{
	mf_mp_key(o, MF_PK_GRAPH_SITES);
	if (r->tab.nsites == 0) {
		mf_mp_nil(o);
	} else {
		mf_mp_arr(o, (uint64_t)r->tab.nsites);
		for (int32_t i = 0; i < r->tab.nsites; i++) {
			const mf_partial_site *ps = in->sites && i < in->nsites ? &in->sites[i] : NULL;
			const mf_region *rg = mf_region_of(in->regions, in->nregions, r->tab.sites[i]);
			mf_mp_map(o, rg ? 8 : 6);
			mf_mp_key(o, MF_PK_CALLSITE_ADDR);
			mf_mp_uint(o, rg ? rg->caller : r->tab.sites[i]);
			if (rg) {
				mf_mp_key(o, MF_PK_CALLSITE_REGION);
				mf_mp_str(o, rg->name);
				mf_mp_key(o, MF_PK_CALLSITE_LEVEL);
				mf_mp_int(o, rg->level);
			}
			mf_mp_key(o, MF_PK_CALLSITE_OBJECT);
			mf_mp_str(o, ps ? ps->obj : NULL);
			mf_mp_key(o, MF_PK_CALLSITE_OFFSET);
			mf_mp_uint(o, ps && ps->obj ? ps->off : 0);
			mf_mp_key(o, MF_PK_CALLSITE_FUNCTION);
			mf_mp_key(o, "");
			mf_mp_key(o, MF_PK_CALLSITE_FILE);
			mf_mp_key(o, "");
			mf_mp_key(o, MF_PK_CALLSITE_LINE);
			mf_mp_int(o, 0);
		}
	}
}

static void write_graph(mf_out *o, const mf_rec *r, const mf_partial_info *in, const mf_view *v)
{
	mf_mp_map(o, 7);
	write_nodes(o, r, in);
	write_edges(o, r, v);
	write_sites(o, r, in);

	mf_mp_key(o, MF_PK_GRAPH_INITIAL);
	mf_mp_int(o, v->nevents > 0 ? r->initial : -1);
	mf_mp_key(o, MF_PK_GRAPH_NUMEVENTS);
	mf_mp_int(o, v->nevents);

	/* anchors derive from the timing: not stored */
	mf_mp_key(o, MF_PK_GRAPH_ANCHORS);
	mf_mp_nil(o);
	write_timing(o, r, v);
}

static void write_rank(mf_out *o, const mf_rec *r, const mf_partial_info *in)
{
	mf_view v = mf_rec_view(r);
	int64_t utime = 0, stime = 0, maxrss = 0;
	struct rusage ru;
	/* getrusage is a plain system call, safe in a signal handler in
	 * practice though POSIX does not list it */
	if (in->rusage && getrusage(RUSAGE_SELF, &ru) == 0) {
		utime = (int64_t)ru.ru_utime.tv_sec * 1000000000 + (int64_t)ru.ru_utime.tv_usec * 1000;
		stime = (int64_t)ru.ru_stime.tv_sec * 1000000000 + (int64_t)ru.ru_stime.tv_usec * 1000;
		maxrss = (int64_t)ru.ru_maxrss * 1024;
	}
	int64_t start_unix = in->start_unix ? in->start_unix : in->init_real;
	mf_mp_map(o, 9);
	mf_mp_key(o, MF_PK_RANK_RANK);
	mf_mp_int(o, in->rank);
	mf_mp_key(o, MF_PK_RANK_THREAD);
	mf_mp_int(o, in->thread);
	mf_mp_key(o, MF_PK_RANK_HOST);
	mf_mp_str(o, in->host);
	mf_mp_key(o, MF_PK_RANK_USERTIME);
	mf_mp_int(o, utime);
	mf_mp_key(o, MF_PK_RANK_SYSTIME);
	mf_mp_int(o, stime);
	mf_mp_key(o, MF_PK_RANK_MAXRSS);
	mf_mp_int(o, maxrss);
	mf_mp_key(o, MF_PK_RANK_COMPLETE);
	mf_mp_bool(o, in->complete != 0);
	mf_mp_key(o, MF_PK_RANK_START);
	mf_mp_int(o, v.nevents > 0 ? in->init_real + (r->t0 - in->init_mono) - start_unix : 0);
	mf_mp_key(o, MF_PK_RANK_GRAPH);
	write_graph(o, r, in, &v);
}

/* fmt_u appends v in decimal. */
static size_t fmt_u(char *b, uint64_t v)
{
	char t[24];
	size_t n = 0;
	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		b[i] = t[n - 1 - i];
	return n;
}

/* counted list of comma-separated names, as strings.Split (none for "") */
static void mp_split(mf_out *o, const char *s)
{
	if (!s || !*s) {
		mf_mp_nil(o);
		return;
	}
	uint64_t n = 1;
	for (const char *p = s; *p; p++)
		n += *p == ',';
	mf_mp_arr(o, n);
	const char *p = s;
	for (;;) {
		const char *e = strchr(p, ',');
		if (!e) {
			mf_mp_str(o, p);
			break;
		}
		mf_mp_strn(o, p, (size_t)(e - p));
		p = e + 1;
	}
}

static void write_footer(mf_out *o, const mf_rec *r, const mf_partial_info *in, const char *job,
			 int64_t blk_off, int64_t blk_len, uint32_t blk_crc)
{
	mf_mp_map(o, 2);
	mf_mp_key(o, MF_PK_FOOTER_HEADER);
	mf_mp_map(o, 13);
	mf_mp_key(o, MF_PK_HEADER_VERSION);
	mf_mp_int(o, MF_FORMAT_VERSION);
	mf_mp_key(o, MF_PK_HEADER_JOBID);
	mf_mp_str(o, job);
	mf_mp_key(o, MF_PK_HEADER_COMMAND);
	if (!in->argv) {
		mf_mp_nil(o);
	} else {
		int n = in->argc < 0 ? 0 : in->argc;
		mf_mp_arr(o, (uint64_t)n);
		for (int i = 0; i < n; i++)
			mf_mp_str(o, in->argv[i]);
	}
	mf_mp_key(o, MF_PK_HEADER_STARTUNIXNANO);
	mf_mp_int(o, in->start_unix ? in->start_unix : in->init_real);
	mf_mp_key(o, MF_PK_HEADER_WALLCLOCK);
	mf_mp_int(o, in->wall);
	mf_mp_key(o, MF_PK_HEADER_NUMRANKS);
	int size = in->size > in->rank ? in->size : in->rank + 1;
	mf_mp_int(o, size);
	mf_mp_key(o, MF_PK_HEADER_HOSTS);
	mf_mp_arr(o, (uint64_t)size);
	for (int i = 0; i < size; i++)
		mf_mp_str(o, i == in->rank ? in->host : NULL);
	mf_mp_key(o, MF_PK_HEADER_MPILIBRARY);
	mf_mp_str(o, in->mpi_library);
	mf_mp_key(o, MF_PK_HEADER_MPIVERSION);
	mf_mp_str(o, in->mpi_version);
	mf_mp_key(o, MF_PK_HEADER_COUNTERS);
	mp_split(o, in->counters);
	mf_mp_key(o, MF_PK_HEADER_CLOCKSOURCE);
	mf_mp_str(o, in->clock);
	mf_mp_key(o, MF_PK_HEADER_KEYFIELDS);
	/* the key's fields: the call, in every key, and those of keyflags */
#define MF_KEY_FIELD(name, bit) {bit, name},
	static const struct {
		uint32_t bit;
		const char *name;
	} keys[] = {MF_KEY_FIELDS(MF_KEY_FIELD)};
#undef MF_KEY_FIELD
	uint64_t nk = 0;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		nk += !keys[i].bit || (r->cfg.keyflags & keys[i].bit);
	mf_mp_arr(o, nk);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!keys[i].bit || (r->cfg.keyflags & keys[i].bit))
			mf_mp_str(o, keys[i].name);
	mf_mp_key(o, MF_PK_HEADER_INCOMPLETE);
	mf_mp_bool(o, in->complete == 0);

	mf_mp_key(o, MF_PK_FOOTER_INDEX);
	mf_mp_arr(o, 1);
	mf_mp_map(o, 5);
	mf_mp_key(o, MF_PK_INDEXENTRY_RANK);
	mf_mp_int(o, in->rank);
	mf_mp_key(o, MF_PK_INDEXENTRY_THREAD);
	mf_mp_int(o, in->thread);
	mf_mp_key(o, MF_PK_INDEXENTRY_OFFSET);
	mf_mp_int(o, blk_off);
	mf_mp_key(o, MF_PK_INDEXENTRY_LENGTH);
	mf_mp_int(o, blk_len);
	mf_mp_key(o, MF_PK_INDEXENTRY_CRC);
	mf_mp_uint(o, blk_crc);
}

/* path building without snprintf */
typedef struct {
	char *b;
	size_t len, cap;
	int over;
} pbuf;

static void pb_raw(pbuf *p, const char *s, size_t n)
{
	if (p->over || p->len + n + 1 > p->cap) {
		p->over = 1;
		return;
	}
	memcpy(p->b + p->len, s, n);
	p->len += n;
	p->b[p->len] = 0;
}

static void pb_str(pbuf *p, const char *s) { pb_raw(p, s, strlen(s)); }

/* pb_clean appends s with every byte outside [A-Za-z0-9._-] replaced by
 * '_', as finalize.go's sanitize, so a job id cannot escape dir. */
static void pb_clean(pbuf *p, const char *s)
{
	for (; *s; s++) {
		char c = *s;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
			c = '_';
		pb_raw(p, &c, 1);
	}
}

static void pb_num(pbuf *p, int64_t v)
{
	char t[24];
	size_t n = 0;
	if (v < 0) {
		t[n++] = '-';
		v = -v;
	}
	n += fmt_u(t + n, (uint64_t)v);
	pb_raw(p, t, n);
}

/* job_id is info->job_id or the process id, in jb. The crash paths pass
 * core's G.job (crash.c); partial.c cannot read it itself, as it links
 * without core.c into the Go package and works from its arguments alone
 * in a signal handler, so a caller without a job id gets the pid. */
static const char *job_id(const mf_partial_info *in, char *jb)
{
	if (in->job_id && *in->job_id)
		return in->job_id;
	jb[fmt_u(jb, (uint64_t)getpid())] = 0;
	return jb;
}

static void base_path(pbuf *p, const char *dir)
{
	pb_str(p, dir);
	if (p->len > 0 && p->b[p->len - 1] != '/')
		pb_raw(p, "/", 1);
}

static void file_name(pbuf *p, const mf_partial_info *in, const char *job)
{
	pb_clean(p, in->exe && *in->exe ? in->exe : "mpi");
	pb_raw(p, ".", 1);
	pb_clean(p, job);
	pb_str(p, ".rank");
	pb_num(p, in->rank);
	if (in->thread != 0) {
		pb_str(p, ".t");
		pb_num(p, in->thread);
	}
	pb_str(p, ".partial.mpiflow");
}

int mf_partial_path(const mf_partial_info *info, const char *dir, char *outp, size_t n)
{
	if (!info || !dir || !outp)
		return -EINVAL;
	char jb[24];
	const char *job = job_id(info, jb);
	pbuf p = {.b = outp, .cap = n};
	if (n > 0)
		outp[0] = 0;
	base_path(&p, dir);
	file_name(&p, info, job);
	return p.over ? -ENAMETOOLONG : (int)p.len;
}

static uint8_t static_buf[MF_PARTIAL_STATICBUF];
static int static_busy;

int mf_write_partial(const mf_rec *r, const mf_partial_info *info, const char *dir)
{
	if (!r || !info || !dir || !*dir)
		return -EINVAL;
	if (info->buf && info->buflen < MF_PARTIAL_MINBUF)
		return -EINVAL;
	int saved_errno = errno;
	char jb[24];
	const char *job = job_id(info, jb);

	char final[MF_PATH_MAX], tmp[MF_PATH_MAX];
	pbuf pf = {.b = final, .cap = sizeof(final)};
	base_path(&pf, dir);
	pbuf pt = pf;
	pt.b = tmp;
	memcpy(tmp, final, pf.len + 1);
	file_name(&pf, info, job);
	pb_raw(&pt, ".", 1);
	file_name(&pt, info, job);
	pb_str(&pt, info->checkpoint ? ".ckpt.tmp" : ".tmp");
	pb_num(&pt, getpid());
	if (pf.over || pt.over)
		return -ENAMETOOLONG;

	uint8_t *buf = info->buf;
	size_t cap = info->buflen;
	int own_static = 0;
	if (!buf) {
		if (__atomic_exchange_n(&static_busy, 1, __ATOMIC_ACQUIRE))
			return -EBUSY;
		own_static = 1;
		buf = static_buf;
		cap = sizeof(static_buf);
	}

	int rc = 0;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		rc = -errno;
		goto done;
	}
	mf_out o = {.fd = fd, .buf = buf, .cap = cap};

	/* preamble: magic, version, zero */
	mf_put(&o, "MPIFLOW\0", 8);
	mf_put_be(&o, MF_FORMAT_VERSION, 4);
	mf_put_be(&o, 0, 4);

	int64_t blk_off = o.off;
	o.crc = 0;
	write_rank(&o, r, info);
	int64_t blk_len = o.off - blk_off;
	uint32_t blk_crc = o.crc;

	int64_t foot_off = o.off;
	o.crc = 0;
	write_footer(&o, r, info, job, blk_off, blk_len, blk_crc);
	int64_t foot_len = o.off - foot_off;
	uint32_t foot_crc = o.crc;

	mf_put_be(&o, (uint64_t)foot_off, 8);
	mf_put_be(&o, (uint64_t)foot_len, 8);
	mf_put_be(&o, foot_crc, 4);
	mf_put(&o, "MFT\0", 4);
	mf_out_flush(&o);

	if (o.err)
		rc = -o.err;
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, final) != 0)
		rc = -errno;
	if (rc != 0)
		unlink(tmp);
done:
	if (own_static)
		__atomic_store_n(&static_busy, 0, __ATOMIC_RELEASE);
	errno = saved_errno;
	return rc;
}
