/*
 * recorder.c: the slow paths of the recorder (new nodes, edges, sites,
 * sequence runs, anchors) and the full-trace writer. See recorder.h.
 */
#include "recorder.h"

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

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static uint64_t node_hash(int32_t call, uint64_t site, int64_t kbytes, int32_t kpartner, int32_t kcomm)
{
	uint64_t h = mix64((uint64_t)(uint32_t)call * 0x9e3779b97f4a7c15ULL ^ site);
	h = mix64(h ^ (uint64_t)kbytes);
	return mix64(h ^ ((uint64_t)(uint32_t)kpartner << 32 | (uint32_t)kcomm));
}

int mf_rec_init(mf_rec *r, uint32_t keyflags, int budget)
{
	memset(r, 0, sizeof(*r));
	r->keyflags = keyflags;
	r->initial = -1;
	r->prev = -1;
	r->budget = budget < 2 ? MF_MAX_ANCHORS : budget;
	r->trace_fd = -1;
	r->ckpt_next = INT64_MAX;
	r->nhashcap = 256;
	r->ehashcap = 256;
	r->shashcap = 64;
	r->nhash = calloc(r->nhashcap, sizeof(int32_t));
	r->ehash = calloc(r->ehashcap, sizeof(int32_t));
	r->shash = calloc(r->shashcap, sizeof(int32_t));
	r->anchors = malloc(sizeof(mf_anchor) * (size_t)(r->budget + 1));
	if (!r->nhash || !r->ehash || !r->shash || !r->anchors) {
		mf_rec_free(r);
		return -1;
	}
	return 0;
}

void mf_rec_free(mf_rec *r)
{
	for (int32_t i = 0; i < r->nnodes; i++)
		free(r->nodes[i].partners);
	for (int32_t i = 0; i < r->nedges; i++)
		free(r->edges[i].runs);
	free(r->nodes);
	free(r->edges);
	free(r->sites);
	free(r->nhash);
	free(r->ehash);
	free(r->shash);
	free(r->anchors);
	free(r->tbuf);
	r->nodes = NULL;
	r->edges = NULL;
	r->sites = NULL;
	r->nhash = r->ehash = r->shash = NULL;
	r->anchors = NULL;
	r->tbuf = NULL;
	r->nnodes = r->nedges = r->nsites = 0;
}

int mf_parse_key(const char *s, uint32_t *flags)
{
	if (!s || !*s) {
		*flags = MF_KEY_SITE;
		return 0;
	}
	uint32_t f = 0;
	while (*s) {
		const char *e = strchr(s, ',');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		if (n == 4 && !strncmp(s, "call", 4))
			;
		else if (n == 4 && !strncmp(s, "site", 4))
			f |= MF_KEY_SITE;
		else if (n == 5 && !strncmp(s, "bytes", 5))
			f |= MF_KEY_BYTES;
		else if (n == 7 && !strncmp(s, "partner", 7))
			f |= MF_KEY_PARTNER;
		else if (n == 4 && !strncmp(s, "comm", 4))
			f |= MF_KEY_COMM;
		else if (n != 0)
			return -1;
		s += n;
		if (*s == ',')
			s++;
	}
	*flags = f;
	return 0;
}

static void fail(mf_rec *r)
{
	r->failed = 1;
}

/* grow doubles an array of elem-sized entries to hold at least need. */
static int grow(void **p, int32_t *cap, int32_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	int32_t nc = *cap ? *cap * 2 : 16;
	while (nc < need)
		nc *= 2;
	void *q = realloc(*p, (size_t)nc * elem);
	if (!q)
		return -1;
	*p = q;
	*cap = nc;
	return 0;
}

/* rehash rebuilds a table of index+1 entries at twice the size. */
static int rehash(int32_t **tab, uint32_t *cap, int32_t n, uint64_t (*hash)(mf_rec *, int32_t), mf_rec *r)
{
	uint32_t nc = *cap * 2;
	int32_t *t = calloc(nc, sizeof(int32_t));
	if (!t)
		return -1;
	for (int32_t i = 0; i < n; i++) {
		uint32_t j = (uint32_t)hash(r, i) & (nc - 1);
		while (t[j])
			j = (j + 1) & (nc - 1);
		t[j] = i + 1;
	}
	free(*tab);
	*tab = t;
	*cap = nc;
	return 0;
}

static uint64_t node_hash_at(mf_rec *r, int32_t i)
{
	const mf_node *n = &r->nodes[i];
	return node_hash(n->call, n->site, n->kbytes, n->kpartner, n->kcomm);
}

static uint64_t edge_hash(int32_t src, int32_t dst)
{
	return mix64((uint64_t)(uint32_t)src << 32 | (uint32_t)dst);
}

static uint64_t edge_hash_at(mf_rec *r, int32_t i)
{
	return edge_hash(r->edges[i].src, r->edges[i].dst);
}

static uint64_t site_hash_at(mf_rec *r, int32_t i)
{
	return mix64(r->sites[i]);
}

static int32_t site_index(mf_rec *r, uint64_t addr)
{
	uint32_t j = (uint32_t)mix64(addr) & (r->shashcap - 1);
	for (;;) {
		int32_t v = r->shash[j];
		if (!v)
			break;
		if (r->sites[v - 1] == addr)
			return v - 1;
		j = (j + 1) & (r->shashcap - 1);
	}
	if (grow((void **)&r->sites, &r->capsites, r->nsites + 1, sizeof(uint64_t)))
		return -1;
	int32_t i = r->nsites++;
	r->sites[i] = addr;
	r->shash[j] = i + 1;
	if ((uint32_t)r->nsites * 2 > r->shashcap && rehash(&r->shash, &r->shashcap, r->nsites, site_hash_at, r))
		return -1;
	return i;
}

int32_t mf_node_lookup(mf_rec *r, const mf_event *ev, uint64_t site, int64_t kbytes, int32_t kpartner, int32_t kcomm)
{
	uint32_t mask = r->nhashcap - 1;
	uint32_t j = (uint32_t)node_hash(ev->call, site, kbytes, kpartner, kcomm) & mask;
	for (;;) {
		int32_t v = r->nhash[j];
		if (!v)
			break;
		const mf_node *c = &r->nodes[v - 1];
		if (c->call == ev->call && c->site == site && c->kbytes == kbytes && c->kpartner == kpartner &&
		    c->kcomm == kcomm)
			return v - 1;
		j = (j + 1) & mask;
	}
	int32_t sidx = -1;
	if (r->keyflags & MF_KEY_SITE) {
		sidx = site_index(r, site);
		if (sidx < 0) {
			fail(r);
			return -1;
		}
	}
	if (grow((void **)&r->nodes, &r->capnodes, r->nnodes + 1, sizeof(mf_node))) {
		fail(r);
		return -1;
	}
	int32_t i = r->nnodes++;
	mf_node *n = &r->nodes[i];
	memset(n, 0, sizeof(*n));
	n->call = ev->call;
	n->site = site;
	n->kbytes = kbytes;
	n->kpartner = kpartner;
	n->kcomm = kcomm;
	n->site_idx = sidx;
	n->last_partner = -1;
	n->succ_node = -1;
	n->succ_edge = -1;
	r->nhash[j] = i + 1;
	if ((uint32_t)r->nnodes * 2 > r->nhashcap && rehash(&r->nhash, &r->nhashcap, r->nnodes, node_hash_at, r)) {
		fail(r);
		return -1;
	}
	return i;
}

int32_t mf_edge_lookup(mf_rec *r, int32_t src, int32_t dst)
{
	uint32_t mask = r->ehashcap - 1;
	uint32_t j = (uint32_t)edge_hash(src, dst) & mask;
	for (;;) {
		int32_t v = r->ehash[j];
		if (!v)
			break;
		const mf_edge *e = &r->edges[v - 1];
		if (e->src == src && e->dst == dst)
			return v - 1;
		j = (j + 1) & mask;
	}
	if (grow((void **)&r->edges, &r->capedges, r->nedges + 1, sizeof(mf_edge))) {
		fail(r);
		return -1;
	}
	int32_t i = r->nedges++;
	mf_edge *e = &r->edges[i];
	memset(e, 0, sizeof(*e));
	e->src = src;
	e->dst = dst;
	r->ehash[j] = i + 1;
	if ((uint32_t)r->nedges * 2 > r->ehashcap && rehash(&r->ehash, &r->ehashcap, r->nedges, edge_hash_at, r)) {
		fail(r);
		return -1;
	}
	return i;
}

void mf_run_grow(mf_rec *r, mf_edge *e, int64_t n)
{
	if (e->nruns == e->capruns) {
		int64_t nc = e->capruns ? e->capruns * 2 : 2;
		mf_run *q = realloc(e->runs, (size_t)nc * sizeof(mf_run));
		if (!q) {
			fail(r);
			return;
		}
		e->runs = q;
		e->capruns = nc;
	}
	e->runs[e->nruns++] = (mf_run){.start = n, .stride = 0, .count = 1};
}

void mf_partner_add(mf_rec *r, mf_node *n, int32_t rank)
{
	for (int32_t i = 0; i < n->npartners; i++) {
		if (n->partners[i].rank == rank) {
			n->partners[i].count++;
			n->last_partner = i;
			return;
		}
	}
	if (n->npartners < MF_MAX_PARTNERS) {
		if (!n->partners) {
			n->partners = malloc(sizeof(mf_partner) * MF_MAX_PARTNERS);
			if (!n->partners) {
				fail(r);
				return;
			}
		}
		n->partners[n->npartners] = (mf_partner){.rank = rank, .count = 1};
		n->last_partner = n->npartners++;
		return;
	}
	n->other_partners++;
}

void mf_anchor_add(mf_rec *r, int64_t idx, int64_t time)
{
	if (r->nanchors == r->budget) {
		/* Keep every other anchor and double the spacing, so the budget
		 * holds for any number of events (as Builder.anchor). */
		int32_t k = 0;
		for (int32_t i = 0; i < r->nanchors; i += 2)
			r->anchors[k++] = r->anchors[i];
		r->nanchors = k;
		r->spacing_mask = r->spacing_mask * 2 + 1;
		if (idx & r->spacing_mask)
			return;
	}
	r->anchors[r->nanchors++] = (mf_anchor){.event = idx, .time = time, .mpitime = r->mpitime};
}

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
	if (r->trace_fd >= 0 && r->tlen > 0 && !r->trace_err && write_all(r->trace_fd, r->tbuf, r->tlen))
		r->trace_err = errno ? errno : EIO;
	r->tlen = 0;
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
	r->tbuf = malloc(MF_TRACE_BUF);
	if (!r->tbuf)
		return -1;
	r->tcap = MF_TRACE_BUF;
	memcpy(r->tbuf, "MPIFLOWT", 8);
	put_be32(r->tbuf + 8, MF_TRACE_VERSION);
	put_be32(r->tbuf + 12, (uint32_t)rank);
	r->tlen = 16;
	r->tprev_exit = 0;
	r->trace_fd = fd;
	return 0;
}

int mf_trace_close(mf_rec *r, const char *const *names, int ncalls)
{
	if (r->trace_fd < 0)
		return 0;
	mf_trace_uvarint(r->tbuf, &r->tlen, 0);
	mf_trace_uvarint(r->tbuf, &r->tlen, (uint64_t)r->nnodes);
	for (int32_t i = 0; i < r->nnodes; i++) {
		const mf_node *n = &r->nodes[i];
		const char *name = n->call >= 0 && n->call < ncalls ? names[n->call] : "?";
		size_t l = strlen(name);
		if (l > 200)
			l = 200;
		if (r->tcap - r->tlen < l + 64)
			mf_trace_flush(r);
		mf_trace_uvarint(r->tbuf, &r->tlen, l);
		memcpy(r->tbuf + r->tlen, name, l);
		r->tlen += l;
		mf_trace_uvarint(r->tbuf, &r->tlen, n->site);
		mf_trace_uvarint(r->tbuf, &r->tlen, ((uint64_t)n->kbytes << 1) ^ (uint64_t)(n->kbytes >> 63));
		mf_trace_uvarint(r->tbuf, &r->tlen, (uint64_t)(int64_t)(n->kpartner + 1));
		mf_trace_uvarint(r->tbuf, &r->tlen, (uint64_t)(int64_t)(n->kcomm + 1));
	}
	memcpy(r->tbuf + r->tlen, "MFTE", 4);
	r->tlen += 4;
	mf_trace_flush(r);
	int err = r->trace_err;
	if (close(r->trace_fd) && !err)
		err = errno;
	r->trace_fd = -1;
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

static int64_t seq_len(const mf_edge *e)
{
	int64_t n = 0;
	for (int64_t i = 0; i < e->nruns; i++)
		n += e->runs[i].count;
	return n;
}

int64_t mf_rec_edge_count(const mf_rec *r, const mf_edge *e)
{
	if (!r->failed)
		return e->count;
	int64_t s = seq_len(e);
	return s < e->count ? s : e->count;
}

/* A recorder that failed stopped inside one event: a new node or edge may
 * have a count of 0, or an edge counted the event without its sequence
 * number (mf_run_grow). Then the last event whose transition is stored ends
 * the graph. */
mf_view mf_rec_view(const mf_rec *r)
{
	mf_view v = {.nevents = r->nevents, .drop_edges = 0};
	if (!r->failed || r->nevents == 0)
		return v;
	int64_t total = 0;
	for (int32_t i = 0; i < r->nedges; i++)
		total += mf_rec_edge_count(r, &r->edges[i]);
	if (total + 1 < v.nevents)
		v.nevents = total + 1;
	for (int32_t i = 0; i < r->nedges; i++) {
		const mf_edge *e = &r->edges[i];
		int64_t k = e->nruns;
		if (mf_rec_edge_count(r, e) != seq_len(e) ||
		    (k > 0 && e->runs[k - 1].start + (e->runs[k - 1].count - 1) * e->runs[k - 1].stride >= v.nevents)) {
			v.nevents = 0;
			v.drop_edges = 1;
			break;
		}
	}
	return v;
}
