/*
 * partial.c: the async-signal-safe writer of a single-rank partial mpiflow
 * file. See partial.h.
 *
 * The msgpack encoding is written by hand to decode with
 * github.com/vmihailenco/msgpack/v5 into the Go structs of flowgraph: maps
 * keyed by the msgpack tag names, nil where the Go conversion (convert.go)
 * leaves a slice nil and an empty array where it makes one, sequence
 * numbers as a bin (mf_seqv_encode, flowgraph/seq.go), the Timing as a bin
 * (flowgraph/timing.go). Integers
 * use the shortest msgpack form; the decoder accepts every form.
 */
#include "partial.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h> /* rename only: a system call, no FILE streams */
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define MF_FORMAT_VERSION 5 /* flowgraph.FormatVersion */
#define MF_PATH_MAX 4096

/* CRC-32 (IEEE, reflected polynomial 0xEDB88320) as hash/crc32. The table
 * is built by a constructor; until then (or if constructors never ran) the
 * bitwise loop gives the same result. */
static uint32_t crc_table[256];
static volatile int crc_ready;

__attribute__((constructor)) static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
	__atomic_store_n(&crc_ready, 1, __ATOMIC_RELEASE);
}

/* crc_update continues a CRC over p; start with 0. */
static uint32_t crc_update(uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	if (__atomic_load_n(&crc_ready, __ATOMIC_ACQUIRE)) {
		while (n--)
			crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	} else {
		while (n--) {
			crc ^= *p++;
			for (int k = 0; k < 8; k++)
				crc = (crc & 1) ? 0xEDB88320u ^ (crc >> 1) : crc >> 1;
		}
	}
	return ~crc;
}

/* out is a buffered output stream that tracks the file offset and the CRC
 * of the current section. */
typedef struct {
	int fd;
	uint8_t *buf;
	size_t len, cap;
	int64_t off; /* bytes written so far, buffered included */
	uint32_t crc;
	int err; /* first errno, 0 if fine */
} out;

static void out_flush(out *o)
{
	size_t done = 0;
	while (o->err == 0 && done < o->len) {
		ssize_t w = write(o->fd, o->buf + done, o->len - done);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			o->err = errno ? errno : EIO;
		} else if (w == 0) {
			o->err = EIO;
		} else {
			done += (size_t)w;
		}
	}
	o->len = 0;
}

static void put(out *o, const void *p, size_t n)
{
	const uint8_t *b = p;
	o->crc = crc_update(o->crc, b, n);
	o->off += (int64_t)n;
	while (n > 0) {
		if (o->len == o->cap)
			out_flush(o);
		size_t k = o->cap - o->len;
		if (k > n)
			k = n;
		memcpy(o->buf + o->len, b, k);
		o->len += k;
		b += k;
		n -= k;
	}
}

static void put1(out *o, uint8_t c) { put(o, &c, 1); }

static void put_be(out *o, uint64_t v, int bytes)
{
	uint8_t b[8];
	for (int i = 0; i < bytes; i++)
		b[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
	put(o, b, (size_t)bytes);
}

/* msgpack */

static void mp_uint(out *o, uint64_t v)
{
	if (v < 128) {
		put1(o, (uint8_t)v);
	} else if (v <= 0xff) {
		put1(o, 0xcc);
		put_be(o, v, 1);
	} else if (v <= 0xffff) {
		put1(o, 0xcd);
		put_be(o, v, 2);
	} else if (v <= 0xffffffffu) {
		put1(o, 0xce);
		put_be(o, v, 4);
	} else {
		put1(o, 0xcf);
		put_be(o, v, 8);
	}
}

static void mp_int(out *o, int64_t v)
{
	if (v >= 0) {
		mp_uint(o, (uint64_t)v);
	} else if (v >= -32) {
		put1(o, (uint8_t)(int8_t)v);
	} else if (v >= -128) {
		put1(o, 0xd0);
		put_be(o, (uint64_t)v, 1);
	} else if (v >= -32768) {
		put1(o, 0xd1);
		put_be(o, (uint64_t)v, 2);
	} else if (v >= INT32_MIN) {
		put1(o, 0xd2);
		put_be(o, (uint64_t)v, 4);
	} else {
		put1(o, 0xd3);
		put_be(o, (uint64_t)v, 8);
	}
}

static void mp_len(out *o, uint64_t n, uint8_t fix, uint64_t fixmax, uint8_t c16)
{
	if (n <= fixmax) {
		put1(o, (uint8_t)(fix | n));
	} else if (n <= 0xffff) {
		put1(o, c16);
		put_be(o, n, 2);
	} else {
		put1(o, (uint8_t)(c16 + 1));
		put_be(o, n, 4);
	}
}

static void mp_bin(out *o, uint64_t n)
{
	if (n <= 0xff) {
		put1(o, 0xc4);
		put_be(o, n, 1);
	} else if (n <= 0xffff) {
		put1(o, 0xc5);
		put_be(o, n, 2);
	} else {
		put1(o, 0xc6);
		put_be(o, n, 4);
	}
}

/* put_cb is put for mf_seqv_encode and mf_timing_encode. */
static void put_cb(void *o, const uint8_t *b, size_t n) { put(o, b, n); }

static void mp_map(out *o, uint64_t n) { mp_len(o, n, 0x80, 15, 0xde); }
static void mp_arr(out *o, uint64_t n) { mp_len(o, n, 0x90, 15, 0xdc); }
static void mp_nil(out *o) { put1(o, 0xc0); }
static void mp_bool(out *o, int b) { put1(o, b ? 0xc3 : 0xc2); }

static void mp_strn(out *o, const char *s, size_t n)
{
	if (n < 32) {
		put1(o, (uint8_t)(0xa0 | n));
	} else if (n <= 0xff) {
		put1(o, 0xd9);
		put_be(o, n, 1);
	} else if (n <= 0xffff) {
		put1(o, 0xda);
		put_be(o, n, 2);
	} else {
		put1(o, 0xdb);
		put_be(o, n, 4);
	}
	put(o, s, n);
}

static void mp_str(out *o, const char *s) { mp_strn(o, s ? s : "", s ? strlen(s) : 0); }

/* mp_key writes a map key (a string literal). */
#define mp_key(o, k) mp_strn((o), (k), sizeof(k) - 1)

static void mp_stat(out *o, const mf_stat *s)
{
	mp_map(o, 3);
	mp_key(o, "t");
	mp_int(o, s->total);
	mp_key(o, "lo");
	mp_int(o, s->min);
	mp_key(o, "hi");
	mp_int(o, s->max);
}

static void put_uv(out *o, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;
	mf_trace_uvarint(b, &n, v);
	put(o, b, n);
}

/* write_timing writes the "timing" bin (flowgraph.Timing): the published
 * closed intervals and the open one as the last, uncapped (the Go side
 * would close it the same way while it fits the budget). A recorder that
 * failed (or was interrupted mid-event: busy) gets only the closed
 * intervals whose events and gaps are all within the view, as convert.go's
 * recTiming. */
static void write_timing(out *o, const mf_rec *r, const mf_view *v)
{
	mp_key(o, "timing");
	mf_timing_pub p = r->tm.pub[r->tm.pubi];
	int64_t open = !r->failed && v->nevents > 0 ? v->nevents - p.start : 0;
	int64_t closed = open > 0 ? p.len : mf_timing_prefix(&p, v->nevents > 0 ? v->nevents - 1 : 0);
	mp_bin(o, 3 + (uint64_t)mf_uvlen((uint64_t)p.spacing) + (uint64_t)mf_uvlen((uint64_t)p.keep) +
			  (uint64_t)mf_uvlen((uint64_t)p.shift) + mf_timing_encode(r, &p, closed, open, NULL, NULL));
	put_uv(o, 0); /* format v5: intervals with their number of events */
	put_uv(o, 0); /* their last gaps */
	put_uv(o, 0); /* and their last durations */
	put_uv(o, (uint64_t)p.spacing);
	put_uv(o, (uint64_t)p.keep);
	put_uv(o, (uint64_t)p.shift);
	mf_timing_encode(r, &p, closed, open, put_cb, o);
}

static void write_graph(out *o, const mf_rec *r, const mf_partial_info *in, const mf_view *v)
{
	mp_map(o, 7);
	mp_key(o, "nodes");
	mp_arr(o, (uint64_t)r->nnodes);
	for (int32_t i = 0; i < r->nnodes; i++) {
		const mf_node *n = &r->nodes[i];
		mp_map(o, 7);
		mp_key(o, "key");
		mp_map(o, 5);
		mp_key(o, "call");
		if (n->call >= 0 && n->call < in->ncalls && in->names && in->names[n->call])
			mp_str(o, in->names[n->call]);
		else
			mp_key(o, "?");
		mp_key(o, "site");
		mp_int(o, n->site_idx >= 0 && n->site_idx < r->nsites ? n->site_idx : -1);
		mp_key(o, "bytes");
		mp_int(o, n->kbytes);
		mp_key(o, "partner");
		mp_int(o, n->kpartner);
		mp_key(o, "comm");
		mp_int(o, n->kcomm);
		mp_key(o, "n");
		mp_int(o, mf_rec_node_count(r, i));
		mp_key(o, "time");
		mp_stat(o, &n->time);
		mp_key(o, "bytes");
		mf_stat b = n->bytes;
		if (i == r->prev)
			b.total += r->pend_bytes; /* untimed repeats' (mf_record_rep) */
		mp_stat(o, &b);
		mp_key(o, "partners");
		int32_t np = n->partners ? n->npartners : 0;
		if (np == 0) {
			mp_nil(o);
		} else {
			mp_arr(o, (uint64_t)np);
			for (int32_t p = 0; p < np; p++) {
				mp_map(o, 2);
				mp_key(o, "r");
				mp_int(o, n->partners[p].rank);
				mp_key(o, "n");
				mp_int(o, n->partners[p].count);
			}
		}
		mp_key(o, "otherp");
		mp_int(o, n->other_partners);
		mp_key(o, "commsize");
		mp_int(o, n->commsize);
	}

	mp_key(o, "edges");
	int32_t ne = v->drop_edges ? 0 : r->nedges;
	int32_t nc = r->ncounters < 0 ? 0 : r->ncounters > MF_MAX_COUNTERS ? MF_MAX_COUNTERS : r->ncounters;
	mp_arr(o, (uint64_t)ne);
	for (int32_t i = 0; i < ne; i++) {
		const mf_edge *e = &r->edges[i];
		mp_map(o, 6);
		mp_key(o, "src");
		mp_int(o, e->src);
		mp_key(o, "dst");
		mp_int(o, e->dst);
		mp_key(o, "n");
		mp_int(o, mf_rec_edge_count(r, e));
		mp_key(o, "time");
		mp_stat(o, &e->time);
		mp_key(o, "ctr");
		mp_arr(o, (uint64_t)nc);
		for (int32_t c = 0; c < nc; c++)
			mp_int(o, e->counters[c]);
		mp_key(o, "seq");
		mf_seqv sv = mf_rec_seq(r, e);
		mp_bin(o, mf_seqv_encode(&sv, NULL, NULL));
		mf_seqv_encode(&sv, put_cb, o);
	}

	mp_key(o, "sites");
	if (r->nsites == 0) {
		mp_nil(o);
	} else {
		mp_arr(o, (uint64_t)r->nsites);
		for (int32_t i = 0; i < r->nsites; i++) {
			const mf_partial_site *ps = in->sites && i < in->nsites ? &in->sites[i] : NULL;
			const mf_region *rg = mf_region_of(in->regions, in->nregions, r->sites[i]);
			mp_map(o, rg ? 8 : 6);
			mp_key(o, "addr");
			mp_uint(o, rg ? rg->caller : r->sites[i]);
			if (rg) {
				mp_key(o, "region");
				mp_str(o, rg->name);
				mp_key(o, "level");
				mp_int(o, rg->level);
			}
			mp_key(o, "obj");
			mp_str(o, ps ? ps->obj : NULL);
			mp_key(o, "off");
			mp_uint(o, ps && ps->obj ? ps->off : 0);
			mp_key(o, "fn");
			mp_key(o, "");
			mp_key(o, "file");
			mp_key(o, "");
			mp_key(o, "line");
			mp_int(o, 0);
		}
	}

	mp_key(o, "initial");
	mp_int(o, v->nevents > 0 ? r->initial : -1);
	mp_key(o, "nevents");
	mp_int(o, v->nevents);

	/* anchors derive from the timing: not stored */
	mp_key(o, "anchors");
	mp_nil(o);
	write_timing(o, r, v);
}

static void write_rank(out *o, const mf_rec *r, const mf_partial_info *in)
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
	mp_map(o, 9);
	mp_key(o, "rank");
	mp_int(o, in->rank);
	mp_key(o, "thread");
	mp_int(o, in->thread);
	mp_key(o, "host");
	mp_str(o, in->host);
	mp_key(o, "utime");
	mp_int(o, utime);
	mp_key(o, "stime");
	mp_int(o, stime);
	mp_key(o, "maxrss");
	mp_int(o, maxrss);
	mp_key(o, "complete");
	mp_bool(o, in->complete != 0);
	mp_key(o, "start");
	mp_int(o, v.nevents > 0 ? in->init_real + (r->t0 - in->init_mono) - start_unix : 0);
	mp_key(o, "graph");
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
static void mp_split(out *o, const char *s)
{
	if (!s || !*s) {
		mp_nil(o);
		return;
	}
	uint64_t n = 1;
	for (const char *p = s; *p; p++)
		n += *p == ',';
	mp_arr(o, n);
	const char *p = s;
	for (;;) {
		const char *e = strchr(p, ',');
		if (!e) {
			mp_str(o, p);
			break;
		}
		mp_strn(o, p, (size_t)(e - p));
		p = e + 1;
	}
}

static void write_footer(out *o, const mf_rec *r, const mf_partial_info *in, const char *job,
			 int64_t blk_off, int64_t blk_len, uint32_t blk_crc)
{
	mp_map(o, 2);
	mp_key(o, "header");
	mp_map(o, 13);
	mp_key(o, "version");
	mp_int(o, MF_FORMAT_VERSION);
	mp_key(o, "job");
	mp_str(o, job);
	mp_key(o, "cmd");
	if (!in->argv) {
		mp_nil(o);
	} else {
		int n = in->argc < 0 ? 0 : in->argc;
		mp_arr(o, (uint64_t)n);
		for (int i = 0; i < n; i++)
			mp_str(o, in->argv[i]);
	}
	mp_key(o, "start");
	mp_int(o, in->start_unix ? in->start_unix : in->init_real);
	mp_key(o, "wall");
	mp_int(o, in->wall);
	mp_key(o, "nranks");
	int size = in->size > in->rank ? in->size : in->rank + 1;
	mp_int(o, size);
	mp_key(o, "hosts");
	mp_arr(o, (uint64_t)size);
	for (int i = 0; i < size; i++)
		mp_str(o, i == in->rank ? in->host : NULL);
	mp_key(o, "mpilib");
	mp_str(o, in->mpi_library);
	mp_key(o, "mpiver");
	mp_str(o, in->mpi_version);
	mp_key(o, "counters");
	mp_split(o, in->counters);
	mp_key(o, "clock");
	mp_str(o, in->clock);
	mp_key(o, "key");
	static const struct {
		uint32_t bit;
		const char *name;
	} keys[] = {{MF_KEY_SITE, "site"}, {MF_KEY_BYTES, "bytes"}, {MF_KEY_PARTNER, "partner"}, {MF_KEY_COMM, "comm"}};
	uint64_t nk = 1;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		nk += (r->keyflags & keys[i].bit) != 0;
	mp_arr(o, nk);
	mp_key(o, "call");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (r->keyflags & keys[i].bit)
			mp_str(o, keys[i].name);
	mp_key(o, "incomplete");
	mp_bool(o, in->complete == 0);

	mp_key(o, "index");
	mp_arr(o, 1);
	mp_map(o, 5);
	mp_key(o, "rank");
	mp_int(o, in->rank);
	mp_key(o, "thread");
	mp_int(o, in->thread);
	mp_key(o, "off");
	mp_int(o, blk_off);
	mp_key(o, "len");
	mp_int(o, blk_len);
	mp_key(o, "crc");
	mp_uint(o, blk_crc);
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

/* job_id is info->job_id or the process id, in jb. */
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
	out o = {.fd = fd, .buf = buf, .cap = cap};

	/* preamble: magic, version, zero */
	put(&o, "MPIFLOW\0", 8);
	put_be(&o, MF_FORMAT_VERSION, 4);
	put_be(&o, 0, 4);

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

	put_be(&o, (uint64_t)foot_off, 8);
	put_be(&o, (uint64_t)foot_len, 8);
	put_be(&o, foot_crc, 4);
	put(&o, "MFT\0", 4);
	out_flush(&o);

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
