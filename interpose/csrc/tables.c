/*
 * tables.c: the growable tables of nodes, edges and call sites, open addressing
 * on a 64-bit mix of the key.
 */
#include "tables.h"
#include "record.h"

#include <stdlib.h>
#include <string.h>

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

/* mf_grow: see tables.h. */
int mf_grow(void **p, int32_t *cap, int32_t need, size_t elem)
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
	const mf_node *n = &r->tab.nodes[i];
	return node_hash(n->call, n->site, n->kbytes, n->kpartner, n->kcomm);
}

static uint64_t edge_hash(int32_t src, int32_t dst)
{
	return mix64((uint64_t)(uint32_t)src << 32 | (uint32_t)dst);
}

static uint64_t edge_hash_at(mf_rec *r, int32_t i)
{
	return edge_hash(r->tab.edges[i].src, r->tab.edges[i].dst);
}

static uint64_t site_hash_at(mf_rec *r, int32_t i)
{
	return mix64(r->tab.sites[i]);
}

static int32_t site_index(mf_rec *r, uint64_t addr)
{
	uint32_t j = (uint32_t)mix64(addr) & (r->tab.shashcap - 1);
	for (;;) {
		int32_t v = r->tab.shash[j];
		if (!v)
			break;
		if (r->tab.sites[v - 1] == addr)
			return v - 1;
		j = (j + 1) & (r->tab.shashcap - 1);
	}
	if (mf_grow((void **)&r->tab.sites, &r->tab.capsites, r->tab.nsites + 1, sizeof(uint64_t)))
		return -1;
	int32_t i = r->tab.nsites++;
	r->tab.sites[i] = addr;
	r->tab.shash[j] = i + 1;
	if ((uint32_t)r->tab.nsites * 2 > r->tab.shashcap && rehash(&r->tab.shash, &r->tab.shashcap, r->tab.nsites, site_hash_at, r))
		return -1;
	return i;
}

int32_t mf_node_lookup(mf_rec *r, const mf_event *ev, uint64_t site, int64_t kbytes, int32_t kpartner, int32_t kcomm)
{
	uint32_t mask = r->tab.nhashcap - 1;
	uint32_t j = (uint32_t)node_hash(ev->call, site, kbytes, kpartner, kcomm) & mask;
	for (;;) {
		int32_t v = r->tab.nhash[j];
		if (!v)
			break;
		const mf_node *c = &r->tab.nodes[v - 1];
		if (c->call == ev->call && c->site == site && c->kbytes == kbytes && c->kpartner == kpartner &&
		    c->kcomm == kcomm)
			return v - 1;
		j = (j + 1) & mask;
	}
	int32_t sidx = -1;
	if (r->cfg.keyflags & MF_KEY_SITE) {
		sidx = site_index(r, site);
		if (sidx < 0) {
			mf_rec_fail(r);
			return -1;
		}
	}
	if (mf_grow((void **)&r->tab.nodes, &r->tab.capnodes, r->tab.nnodes + 1, sizeof(mf_node))) {
		mf_rec_fail(r);
		return -1;
	}
	if (r->prev >= 0) /* the table may have moved */
		r->prev_node = &r->tab.nodes[r->prev];
	int32_t i = r->tab.nnodes++;
	mf_node *n = &r->tab.nodes[i];
	memset(n, 0, sizeof(*n));
	n->call = ev->call;
	n->site = site;
	n->kbytes = kbytes;
	n->kpartner = kpartner;
	n->kcomm = kcomm;
	n->site_idx = sidx;
	n->last_partner = -1;
	n->succ_node = -1;
	n->texit_fx = -1;
	n->succ_edge = -1;
	r->tab.nhash[j] = i + 1;
	if ((uint32_t)r->tab.nnodes * 2 > r->tab.nhashcap && rehash(&r->tab.nhash, &r->tab.nhashcap, r->tab.nnodes, node_hash_at, r)) {
		mf_rec_fail(r);
		return -1;
	}
	if (mf_tm_reserve(r))
		return -1;
	return i;
}

int32_t mf_edge_lookup(mf_rec *r, int32_t src, int32_t dst)
{
	uint32_t mask = r->tab.ehashcap - 1;
	uint32_t j = (uint32_t)edge_hash(src, dst) & mask;
	for (;;) {
		int32_t v = r->tab.ehash[j];
		if (!v)
			break;
		const mf_edge *e = &r->tab.edges[v - 1];
		if (e->src == src && e->dst == dst)
			return v - 1;
		j = (j + 1) & mask;
	}
	if (mf_grow((void **)&r->tab.edges, &r->tab.capedges, r->tab.nedges + 1, sizeof(mf_edge))) {
		mf_rec_fail(r);
		return -1;
	}
	int32_t i = r->tab.nedges++;
	mf_edge *e = &r->tab.edges[i];
	memset(e, 0, sizeof(*e));
	e->src = src;
	e->dst = dst;
	r->tab.ehash[j] = i + 1;
	if ((uint32_t)r->tab.nedges * 2 > r->tab.ehashcap && rehash(&r->tab.ehash, &r->tab.ehashcap, r->tab.nedges, edge_hash_at, r)) {
		mf_rec_fail(r);
		return -1;
	}
	if (mf_tm_reserve(r))
		return -1;
	return i;
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
				mf_rec_fail(r);
				return;
			}
		}
		n->partners[n->npartners] = (mf_partner){.rank = rank, .count = 1};
		n->last_partner = n->npartners++;
		return;
	}
	n->other_partners++;
}
