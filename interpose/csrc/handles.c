/*
 * handles.c: the facts about communicators, windows and files, cached by
 * handle (mf_lookup, mf_forget, mf_outdeg), the requests on communicators
 * whose ranks are not world ranks (mf_req_track), and each thread's
 * nonblocking receives until they complete (mf_recv_track).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "handles.h"
#include "core.h"

mf_ginfo mf_world_info = {.id = 0, .identity = 1, .outdeg = -1};
mf_ginfo mf_null_info = {.id = -1, .identity = 1, .outdeg = -1};

/* The handle caches and the request table, shared under G.mu when more
 * than one thread may call MPI (see core.h). */
static struct {
	/* handle caches: small arrays, most recent first lookups */
	mf_ginfo **cache;
	int ncache, capcache;
	int next_id;
	mf_ginfo *last[MF_NKINDS];
	/* facts of freed handles: pending requests may still point to them */
	mf_ginfo **retired;
	int nretired, capretired;
	/* tracked requests (see mf_req_track), most recent last */
	struct mf_req {
		uintptr_t h;
		mf_reqinfo q;
	} * reqs;
	int capreqs;
} H;

int mf_nreq;

/* The sizes of the predefined datatypes seen so far (mf_mpi.h).
 * Predefined types are never freed, so a handle keeps its size for the
 * whole run; a derived type's handle can be freed and reused for another
 * type, so derived types are not cached. Entries are single words, read
 * and written atomically, so threads share the table without a lock. */
uint64_t mf_tsizes[MF_TSIZES];

int64_t mf_tsize_slow(MPI_Datatype t)
{
	uintptr_t h = MF_H(t);
	uint64_t e = __atomic_load_n(&mf_tsizes[mf_tsize_slot(h)], __ATOMIC_RELAXED);
	if (e != 0 && e >> 16 == h)
		return (int64_t)(e & 0xffff);
	if (t == MPI_DATATYPE_NULL)
		return 0;
	int ni, na, nd, combiner;
	MPI_Count s = 0; /* MPI_Type_size gives MPI_UNDEFINED from 2 GiB on */
	if (PMPI_Type_size_x(t, &s) != MPI_SUCCESS || s < 0)
		return 0;
	/* h << 16 must keep h: user-space addresses (Open MPI) and
	 * non-negative ints (MPICH) do */
	if (h != 0 && h >> 47 == 0 && s < 0x10000 &&
	    PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) == MPI_SUCCESS && combiner == MPI_COMBINER_NAMED)
		__atomic_store_n(&mf_tsizes[mf_tsize_slot(h)], (uint64_t)h << 16 | (uint64_t)s, __ATOMIC_RELAXED);
	return (int64_t)s;
}

static int *world_ranks(MPI_Group grp, int n, int *identity)
{
	MPI_Group wg;
	int *in = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
	int *out = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
	*identity = 1;
	if (!in || !out || PMPI_Comm_group(MPI_COMM_WORLD, &wg) != MPI_SUCCESS) {
		free(in);
		free(out);
		return NULL;
	}
	for (int i = 0; i < n; i++)
		in[i] = i;
	if (PMPI_Group_translate_ranks(grp, n, in, wg, out) != MPI_SUCCESS) {
		for (int i = 0; i < n; i++)
			out[i] = -1;
	}
	PMPI_Group_free(&wg);
	free(in);
	for (int i = 0; i < n; i++) {
		if (out[i] == MPI_UNDEFINED)
			out[i] = -1; /* e.g. a spawned process: not in our world */
		if (out[i] != i)
			*identity = 0;
	}
	return out;
}

static void fill_group(mf_ginfo *g, MPI_Group grp, int remote)
{
	int n = 0, r = MPI_UNDEFINED, id = 1;
	PMPI_Group_size(grp, &n);
	if (remote) {
		g->rsize = n;
		g->rworld = world_ranks(grp, n, &id);
		return;
	}
	PMPI_Group_rank(grp, &r);
	g->size = n;
	g->rank = r;
	g->world = world_ranks(grp, n, &id);
	g->identity = id && n <= G.size;
	if (g->identity) {
		free(g->world);
		g->world = NULL;
	} else if (!g->world) {
		g->identity = 1; /* out of memory: fall back to "same as world" */
	}
}

#define LOCK()                                      \
	do {                                        \
		if (G.threads)                      \
			pthread_mutex_lock(&G.mu);  \
	} while (0)
#define UNLOCK()                                    \
	do {                                        \
		if (G.threads)                      \
			pthread_mutex_unlock(&G.mu);\
	} while (0)

static mf_ginfo *lookup(int kind, uintptr_t handle, void *h);

mf_ginfo *mf_lookup(int kind, uintptr_t handle, void *h)
{
	LOCK();
	mf_ginfo *g = lookup(kind, handle, h);
	UNLOCK();
	return g;
}

static mf_ginfo *lookup(int kind, uintptr_t handle, void *h)
{
	mf_ginfo *l = H.last[kind];
	if (l && l->handle == handle)
		return l;
	for (int i = 0; i < H.ncache; i++) {
		mf_ginfo *g = H.cache[i];
		if (g->kind == kind && g->handle == handle) {
			H.last[kind] = g;
			return g;
		}
	}
	if (H.ncache == H.capcache) {
		int nc = H.capcache ? 2 * H.capcache : 16;
		mf_ginfo **q = realloc(H.cache, sizeof(*q) * (size_t)nc);
		if (!q)
			return &mf_null_info;
		H.cache = q;
		H.capcache = nc;
	}
	mf_ginfo *g = calloc(1, sizeof(*g));
	if (!g)
		return &mf_null_info;
	g->handle = handle;
	g->kind = kind;
	g->id = ++H.next_id;
	g->outdeg = -1;
	g->identity = 1;
	MPI_Group grp = MPI_GROUP_NULL;
	switch (kind) {
	case MF_KIND_COMM: {
		MPI_Comm c = *(MPI_Comm *)h;
		int inter = 0;
		PMPI_Comm_test_inter(c, &inter);
		if (PMPI_Comm_group(c, &grp) == MPI_SUCCESS) {
			fill_group(g, grp, 0);
			PMPI_Group_free(&grp);
		}
		if (inter && PMPI_Comm_remote_group(c, &grp) == MPI_SUCCESS) {
			g->inter = 1;
			fill_group(g, grp, 1);
			PMPI_Group_free(&grp);
		}
		break;
	}
	case MF_KIND_WIN:
		if (PMPI_Win_get_group(*(MPI_Win *)h, &grp) == MPI_SUCCESS) {
			fill_group(g, grp, 0);
			PMPI_Group_free(&grp);
		}
		break;
	case MF_KIND_FILE:
		if (PMPI_File_get_group(*(MPI_File *)h, &grp) == MPI_SUCCESS) {
			fill_group(g, grp, 0);
			PMPI_Group_free(&grp);
		}
		break;
	}
	H.cache[H.ncache++] = g;
	H.last[kind] = g;
	return g;
}

static void forget(int kind, uintptr_t handle);

void mf_forget(int kind, uintptr_t handle)
{
	LOCK();
	forget(kind, handle);
	UNLOCK();
}

static void forget(int kind, uintptr_t handle)
{
	for (int i = 0; i < H.ncache; i++) {
		mf_ginfo *g = H.cache[i];
		if (g->kind == kind && g->handle == handle) {
			if (H.last[kind] == g)
				H.last[kind] = NULL;
			H.cache[i] = H.cache[--H.ncache];
			/* A freed communicator can still have pending requests. */
			if (H.nretired == H.capretired) {
				int nc = H.capretired ? 2 * H.capretired : 16;
				mf_ginfo **q = realloc(H.retired, sizeof(*q) * (size_t)nc);
				if (!q)
					return; /* leak it rather than risk a dangling pointer */
				H.retired = q;
				H.capretired = nc;
			}
			H.retired[H.nretired++] = g;
			return;
		}
	}
}

void mf_req_track(uintptr_t h, mf_ginfo *g, int32_t peer)
{
	mf_reqinfo q = {g, peer};
	LOCK();
	for (int i = mf_nreq - 1; i >= 0; i--) {
		if (H.reqs[i].h == h) {
			H.reqs[i].q = q;
			UNLOCK();
			return;
		}
	}
	if (mf_nreq == H.capreqs) {
		int nc = H.capreqs ? 2 * H.capreqs : 64;
		struct mf_req *r = realloc(H.reqs, sizeof(*r) * (size_t)nc);
		if (!r) {
			UNLOCK();
			return; /* Wait will then read the source as a world rank */
		}
		H.reqs = r;
		H.capreqs = nc;
	}
	H.reqs[mf_nreq++] = (struct mf_req){h, q};
	UNLOCK();
}

mf_reqinfo mf_req_find(uintptr_t h)
{
	mf_reqinfo q = MF_NOREQ;
	LOCK();
	for (int i = mf_nreq - 1; i >= 0; i--) {
		if (H.reqs[i].h == h) {
			q = H.reqs[i].q;
			break;
		}
	}
	UNLOCK();
	return q;
}

void mf_req_done(uintptr_t h)
{
	LOCK();
	for (int i = mf_nreq - 1; i >= 0; i--) {
		if (H.reqs[i].h == h) {
			H.reqs[i] = H.reqs[--mf_nreq];
			break;
		}
	}
	UNLOCK();
}

uintptr_t *mf_reqs_save_big(int n, const MPI_Request *reqs)
{
	uintptr_t *s = malloc(sizeof(uintptr_t) * (size_t)n);
	if (s)
		for (int i = 0; i < n; i++)
			s[i] = MF_H(reqs[i]);
	return s;
}

void mf_reqs_done(int n, uintptr_t *saved, const MPI_Request *reqs)
{
	for (int i = 0; i < n; i++)
		if (reqs[i] == MPI_REQUEST_NULL && saved[i] != MF_H(MPI_REQUEST_NULL))
			mf_req_done(saved[i]);
}

MPI_Status *mf_statuses_big(int n)
{
	return malloc(sizeof(MPI_Status) * (size_t)n);
}

/* The calling thread's receives in flight (mf_mpi.h). Per thread, so no
 * lock: a receive is looked up only by the thread that posted it. */
__thread mf_recvs mf_tls_recvs __attribute__((tls_model("initial-exec")));
int mf_recv_shared;

/* mf_recv_put is mf_recv_track out of line: it puts receive h into the
 * allocated table, made (or made twice as large) if it would be more than
 * half full, or leaves it untracked (it keeps its posted size) if there
 * is no memory. */
void mf_recv_put(mf_recvs *t, mf_recv v)
{
	const uintptr_t h = v.h;
	mf_recv *s = t->slot ? t->slot : t->inline_slot;
	const uint32_t bits = t->slot ? t->bits : MF_RECV_INLINE_BITS, cap = 1u << bits;
	uint32_t i = mf_recv_probe(s, bits, h);
	if (!s[i].h && 2 * (t->n + 1) > cap) {
		mf_recv *ns = calloc(2 * cap, sizeof(mf_recv));
		if (!ns)
			return;
		for (uint32_t k = 0; k < cap; k++)
			if (s[k].h)
				ns[mf_recv_probe(ns, bits + 1, s[k].h)] = s[k];
		if (t->slot)
			free(t->slot);
		else
			memset(t->inline_slot, 0, sizeof t->inline_slot);
		t->slot = s = ns;
		t->bits = bits + 1;
		i = mf_recv_probe(s, t->bits, h);
	}
	t->n += !s[i].h;
	s[i] = v;
}

void mf_recv_source(mf_rec *r, const mf_recv *v, const MPI_Status *st)
{
	int cancelled = 0;
	if (PMPI_Test_cancelled(st, &cancelled) == MPI_SUCCESS && !cancelled)
		mf_node_source(r, v->node, mf_peer(v->any, st->MPI_SOURCE));
}

int mf_recvs_take_big(mf_taken *tk, int n, const MPI_Request *reqs)
{
	const size_t most = n < (int)mf_tls_recvs.n ? (size_t)n : mf_tls_recvs.n;
	int *idx = malloc(sizeof(int) * most);
	mf_recv *v = malloc(sizeof(mf_recv) * most);
	if (idx && v) {
		tk->idx = idx;
		tk->v = v;
		if (mf_recvs_take_each(tk, n, reqs))
			return tk->n;
	} else { /* no memory: they keep their posted sizes */
		for (int i = 0; i < n && mf_tls_recvs.n; i++)
			mf_recv_forget(MF_H(reqs[i]));
	}
	free(idx);
	free(v);
	return 0;
}

void mf_recvs_got_(mf_rec *r, mf_taken *tk, const MPI_Request *reqs, const MPI_Status *st, int rc)
{
	if (st == MPI_STATUSES_IGNORE) /* ours could not be allocated */
		st = NULL;
	for (int k = 0; k < tk->n; k++) {
		const int i = tk->idx[k];
		const mf_recv *v = &tk->v[k];
		if (reqs[i] != MPI_REQUEST_NULL) /* after an error: MPICH's MPI_ERR_PENDING, Open MPI's failed request */
			mf_recv_put(&mf_tls_recvs, *v);
		else if (st && (rc == MPI_SUCCESS || (rc == MPI_ERR_IN_STATUS && st[i].MPI_ERROR == MPI_SUCCESS)))
			mf_recv_got(r, v, &st[i]);
	}
	if (tk->idx != tk->ibuf) {
		free(tk->idx);
		free(tk->v);
	}
}

int mf_recv_take_(mf_recvs *t, uintptr_t h, mf_recv *v)
{
	const uint32_t i = mf_recv_probe(t->slot, t->bits, h);
	if (!t->slot[i].h)
		return 0;
	*v = t->slot[i];
	t->n--;
	mf_recv_close(t->slot, t->bits, i);
	return 1;
}

void mf_recv_close(mf_recv *s, uint32_t bits, uint32_t i)
{
	const uint32_t m = (1u << bits) - 1;
	for (uint32_t j = (i + 1) & m; s[j].h; j = (j + 1) & m) {
		/* an entry may fill the hole if its home slot is not in (i, j] */
		uint32_t home = mf_recv_home(s[j].h, bits);
		if (((j - home) & m) >= ((j - i) & m)) {
			s[i] = s[j];
			i = j;
		}
	}
	s[i].h = 0;
}

void mf_recvs_done(mf_rec *r, int n, const uintptr_t *saved, const MPI_Request *reqs, const MPI_Status *st,
		   const int *idx, int nidx)
{
	nidx = nidx < n ? nidx : n;
	if (st == MPI_STATUSES_IGNORE) /* ours could not be allocated */
		st = NULL;
	for (int k = 0; k < nidx; k++)
		if (idx[k] >= 0 && idx[k] < n && reqs[idx[k]] == MPI_REQUEST_NULL)
			mf_recv_done(r, saved[idx[k]], st ? &st[k] : NULL);
}

int mf_outdeg(mf_ginfo *g, MPI_Comm c)
{
	if (g->outdeg >= 0)
		return g->outdeg;
	int topo = MPI_UNDEFINED, d = 0;
	PMPI_Topo_test(c, &topo);
	if (topo == MPI_CART) {
		PMPI_Cartdim_get(c, &d);
		d *= 2;
	} else if (topo == MPI_GRAPH) {
		PMPI_Graph_neighbors_count(c, g->rank, &d);
	} else if (topo == MPI_DIST_GRAPH) {
		int in = 0, w = 0;
		PMPI_Dist_graph_neighbors_count(c, &in, &d, &w);
	}
	g->outdeg = d;
	return d;
}

void mf_free_caches(void)
{
	for (int i = 0; i < H.ncache; i++) {
		free(H.cache[i]->world);
		free(H.cache[i]->rworld);
		free(H.cache[i]);
	}
	free(H.cache);
	H.cache = NULL;
	H.ncache = H.capcache = 0;
	for (int i = 0; i < H.nretired; i++) {
		free(H.retired[i]->world);
		free(H.retired[i]->rworld);
		free(H.retired[i]);
	}
	free(H.retired);
	H.retired = NULL;
	H.nretired = H.capretired = 0;
	free(H.reqs);
	H.reqs = NULL;
	H.capreqs = mf_nreq = 0;
	/* the finalizing thread's receives; those of other threads stay with
	 * them (a thread's table is its own, and may have ended with it) */
	free(mf_tls_recvs.slot);
	memset(&mf_tls_recvs, 0, sizeof mf_tls_recvs);
	for (int k = 0; k < MF_NKINDS; k++)
		H.last[k] = NULL;
}
