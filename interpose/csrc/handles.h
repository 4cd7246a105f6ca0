/*
 * handles.h: the facts about communicators, windows and files cached by
 * handle, the requests tracked until they complete, each thread's
 * nonblocking receives in flight, and the datatype-size cache (handles.c).
 * Built against one MPI's mpi.h.
 */
#ifndef MPIFLOW_HANDLES_H
#define MPIFLOW_HANDLES_H

#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>

#include "visibility.h"
#include "record.h"

/* Facts about a communicator, window or file, cached by handle. */
typedef struct mf_ginfo {
	uintptr_t handle;
	int kind;     /* MF_KIND_* */
	int id;       /* per-process number by first use; world is 0 */
	int size;     /* local group size */
	int rank;     /* own rank in the local group */
	int inter;    /* intercommunicator: peers are in the remote group */
	int rsize;    /* remote group size (intercommunicators) */
	int identity; /* local ranks are world ranks */
	int outdeg;   /* out-degree of a topology, -1 until asked */
	int *world;   /* world rank of each local rank (NULL if identity) */
	int *rworld;  /* world rank of each remote rank */
} mf_ginfo;

enum { MF_KIND_COMM = 0, MF_KIND_WIN = 1, MF_KIND_FILE = 2, MF_NKINDS = 3 };

extern mf_ginfo mf_world_info MF_HIDDEN;
extern mf_ginfo mf_null_info MF_HIDDEN;

MF_HIDDEN mf_ginfo *mf_lookup(int kind, uintptr_t handle, void *h);
MF_HIDDEN void mf_forget(int kind, uintptr_t handle);
MF_HIDDEN int mf_outdeg(mf_ginfo *g, MPI_Comm c);


/* Requests tracked until they complete (mf_nreq: how many): those on
 * communicators whose ranks are not world ranks, so that Wait/Test can
 * translate the status's source, and those whose partner is not to be
 * taken from the status: known when posted, or not known at all (MPICH
 * 4.0 leaves the status of an MPI_Isendrecv unset: mf_isr_from). */
typedef struct {
	mf_ginfo *g;  /* the request's communicator; NULL: not tracked */
	int32_t peer; /* the world rank it receives from, -1: the status's source, MF_PEER_NONE: none */
} mf_reqinfo;
#define MF_PEER_NONE (-2)
#define MF_NOREQ ((mf_reqinfo){NULL, -1})
extern int mf_nreq MF_HIDDEN;
MF_HIDDEN void mf_req_track(uintptr_t req, mf_ginfo *g, int32_t peer);
MF_HIDDEN mf_reqinfo mf_req_find(uintptr_t req);
MF_HIDDEN void mf_req_done(uintptr_t req);
/* mf_reqs_save copies the handles of reqs[0..n) before a completion call
 * nulls them, into buf when n <= MF_SAVE_N (else a malloc'ed array, freed
 * with MF_SAVE_FREE); mf_reqs_done forgets the tracked ones completed. */
#define MF_SAVE_N 16
MF_HIDDEN uintptr_t *mf_reqs_save_big(int n, const MPI_Request *reqs);
MF_HIDDEN void mf_reqs_done(int n, uintptr_t *saved, const MPI_Request *reqs);
static inline uintptr_t *mf_reqs_save(int n, const MPI_Request *reqs, uintptr_t *buf)
{
	if (n <= 0 || !reqs)
		return NULL;
	if (n > MF_SAVE_N)
		return mf_reqs_save_big(n, reqs);
	for (int i = 0; i < n; i++) /* a poll of a few requests: inline */
		buf[i] = (uintptr_t)reqs[i];
	return buf;
}
#define MF_SAVE_FREE(p, buf) \
	do {                 \
		if ((p) != (buf)) \
			free(p);  \
	} while (0)
#define MF_SAVED_G(i) (mf_saved && mf_nreq ? mf_req_find(mf_saved[i]) : MF_NOREQ)
#define MF_SAVED_H(i) (mf_saved ? mf_saved[i] : 0)

/* The calling thread's nonblocking receives in flight, for their size
 * received (handles.c): MPI_Irecv and MPI_Imrecv record the posted size
 * and mf_recv_track remembers the request; the call that completes it
 * corrects the receive's node to what arrived (mf_recv_done, with the
 * status: mf_statuses gives the completion calls an array of them when
 * the program passes MPI_STATUSES_IGNORE, in buf up to MF_SAVE_N). n == 0
 * is all the completion calls look at while none are in flight. A receive
 * completed by another thread keeps its posted size; when more than one
 * thread may call MPI (mf_recv_shared: MPI_THREAD_SERIALIZED or
 * MPI_THREAD_MULTIPLE), the calls that make other requests forget theirs
 * (mf_recv_forget), so that a handle reused after such a completion is not
 * taken for the receive (about 20 instructions an MPI_Isend, saved where
 * one thread calls MPI).
 *
 * They are in an open-addressing table on the handle (linear probing, at
 * most half full). While MF_RECV_INLINE / 2 or fewer are in flight at
 * once, as in a halo exchange, the table is part of the thread's state
 * and searched inline, at or next to the home slot whatever else is in
 * flight (a version whose inline path needed a receive to be alone at
 * its slot of a direct-mapped table took the slow path for every receive
 * once one had spilled: 4 receives left pending made an
 * Irecv+Isend+Waitall 250 instructions dearer). A thread that once had
 * more moves to an allocated table, twice as large each time it would be
 * more than half full, searched out of line (mf_recv_put, mf_recv_take_).
 * Deletion moves back the entries of the cluster that follows
 * (mf_recv_close) when there is one. */
typedef struct {
	uintptr_t h; /* 0: empty slot */
	int32_t node;
	int64_t posted; /* -1: its node keeps the posted size (keyed by it) */
	/* the communicator of a receive posted from MPI_ANY_SOURCE, whose
	 * source is counted at its node when it completes; NULL: not one */
	const mf_ginfo *any;
} mf_recv;
#define MF_RECV_INLINE_BITS 5
#define MF_RECV_INLINE (1 << MF_RECV_INLINE_BITS)
typedef struct {
	uint32_t n;    /* receives in flight */
	uint32_t bits; /* slot has 1 << bits entries */
	mf_recv *slot; /* NULL: inline_slot is the table */
	mf_recv inline_slot[MF_RECV_INLINE];
} mf_recvs;
extern __thread mf_recvs mf_tls_recvs __attribute__((tls_model("initial-exec"))) MF_HIDDEN;
extern int mf_recv_shared MF_HIDDEN;
MF_HIDDEN void mf_recv_put(mf_recvs *t, mf_recv v);
MF_HIDDEN int mf_recv_take_(mf_recvs *t, uintptr_t h, mf_recv *v);
MF_HIDDEN void mf_recv_close(mf_recv *s, uint32_t bits, uint32_t i);

/* mf_recv_home is the slot of a table of 1 << bits where the search for h
 * starts. */
static inline uint32_t mf_recv_home(uintptr_t h, uint32_t bits)
{
	return (uint32_t)(((uint64_t)h * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

/* mf_recv_probe is the slot of table s (1 << bits slots) that holds h, or
 * the empty one where its search ends (h 0 too). */
static inline __attribute__((always_inline)) uint32_t mf_recv_probe(const mf_recv *s, uint32_t bits, uintptr_t h)
{
	uint32_t i = mf_recv_home(h, bits);
	while (s[i].h && s[i].h != h)
		i = (i + 1) & ((1u << bits) - 1);
	return i;
}

/* mf_recv_take removes h from the receives in flight into *v, if there. */
static inline __attribute__((always_inline)) int mf_recv_take(uintptr_t h, mf_recv *v)
{
	mf_recvs *t = &mf_tls_recvs;
	if (__builtin_expect(t->slot != NULL, 0))
		return mf_recv_take_(t, h, v);
	mf_recv *s = t->inline_slot;
	const uint32_t i = mf_recv_probe(s, MF_RECV_INLINE_BITS, h);
	if (!s[i].h)
		return 0;
	*v = s[i];
	t->n--;
	if (s[(i + 1) % MF_RECV_INLINE].h)
		mf_recv_close(s, MF_RECV_INLINE_BITS, i);
	else
		s[i].h = 0;
	return 1;
}

/* mf_recv_track remembers receive request h of the node just recorded
 * (none if recording failed: mf_node_got ignores it), which posted posted
 * bytes, from MPI_ANY_SOURCE of communicator any (NULL: from a known
 * source); it replaces a receive of the same handle that another thread
 * completed. Every receive is tracked, so that the calls that complete
 * requests know which are receives (mf_rpeer). */
static inline __attribute__((always_inline)) void mf_recv_track(mf_rec *r, uintptr_t h, int64_t posted, const mf_ginfo *any)
{
	if (h == (uintptr_t)MPI_REQUEST_NULL || !h)
		return;
	/* a node keyed by its bytes keeps the posted size it was found by */
	const mf_recv v = {h, r->prev, (r->cfg.keyflags & MF_KEY_BYTES) ? -1 : posted, any};
	mf_recvs *t = &mf_tls_recvs;
	if (__builtin_expect(t->slot == NULL, 1)) {
		mf_recv *s = t->inline_slot;
		const uint32_t i = mf_recv_probe(s, MF_RECV_INLINE_BITS, h);
		if (__builtin_expect(s[i].h || t->n < MF_RECV_INLINE / 2, 1)) {
			t->n += !s[i].h;
			s[i] = v;
			return;
		}
	}
	mf_recv_put(t, v);
}

/* mf_recv_has says whether h is one of the calling thread's receives in
 * flight. */
static inline __attribute__((always_inline)) int mf_recv_has(uintptr_t h)
{
	const mf_recvs *t = &mf_tls_recvs;
	if (!t->n)
		return 0;
	if (__builtin_expect(t->slot != NULL, 0))
		return t->slot[mf_recv_probe(t->slot, t->bits, h)].h != 0;
	return t->inline_slot[mf_recv_probe(t->inline_slot, MF_RECV_INLINE_BITS, h)].h != 0;
}

static inline __attribute__((always_inline)) void mf_recv_forget(uintptr_t h)
{
	mf_recv v;
	if (mf_tls_recvs.n)
		mf_recv_take(h, &v);
}

/* mf_status_bytes is the bytes a completed receive's status says it got, 0
 * if it was cancelled (MPICH leaves the count as it was then), -1 if
 * unknown: read from the fields of the MPIs whose layout is known, as
 * their MPI_Get_count with MPI_BYTE and MPI_Test_cancelled do (the two
 * calls cost as much as the rest of a completion), else by those calls
 * (MPI_BYTE: whatever the receive's datatype, which the program may have
 * freed since). */
static inline int64_t mf_status_bytes(const MPI_Status *st)
{
#if defined(OPEN_MPI)
	return st->_cancelled ? 0 : (int64_t)st->_ucount;
#elif defined(MPICH_NUMVERSION)
	if (st->count_hi_and_cancelled & 1)
		return 0;
	return (int64_t)((uint64_t)(unsigned)st->count_lo | (uint64_t)(unsigned)st->count_hi_and_cancelled >> 1 << 32);
#else
	int got = MPI_UNDEFINED, cancelled = 0;
	if (PMPI_Test_cancelled(st, &cancelled) == MPI_SUCCESS && cancelled)
		return 0;
	if (PMPI_Get_count(st, MPI_BYTE, &got) != MPI_SUCCESS || got == MPI_UNDEFINED)
		return -1;
	return got;
#endif
}

/* mf_recv_got corrects the node of receive v, completed with status st, to
 * the size received, and counts the source of one posted from
 * MPI_ANY_SOURCE there (mf_recv_source, out of line: rare). */
MF_HIDDEN void mf_recv_source(mf_rec *r, const mf_recv *v, const MPI_Status *st);
static inline __attribute__((always_inline)) void mf_recv_got(mf_rec *r, const mf_recv *v, const MPI_Status *st)
{
	mf_node_got(r, v->node, v->posted, mf_status_bytes(st));
	if (__builtin_expect(v->any != NULL, 0))
		mf_recv_source(r, v, st);
}

/* mf_recv_done corrects the receive of request h, if it is one in flight,
 * to what status st says it got (st NULL: the call failed; forgotten). */
static inline __attribute__((always_inline)) void mf_recv_done(mf_rec *r, uintptr_t h, const MPI_Status *st)
{
	mf_recv v;
	if (mf_tls_recvs.n && mf_recv_take(h, &v) && st)
		mf_recv_got(r, &v, st);
}

/* mf_recvs_all is mf_recv_done for the completed requests of an array
 * (reqs, as saved before the call), whose statuses are st[i] (st may be
 * NULL): Testall. Inline, and done once no receive is left in flight (at
 * once if none was): an Irecv, Isend and Waitall of 2 cost twice as much
 * with a call that looked at every request. */
static inline __attribute__((always_inline)) void mf_recvs_all(mf_rec *r, int n, const uintptr_t *saved,
								const MPI_Request *reqs, const MPI_Status *st)
{
	if (st == MPI_STATUSES_IGNORE) /* ours could not be allocated */
		st = NULL;
	for (int i = 0; i < n && mf_tls_recvs.n; i++)
		if (reqs[i] == MPI_REQUEST_NULL && saved[i] != (uintptr_t)MPI_REQUEST_NULL)
			mf_recv_done(r, saved[i], st ? &st[i] : NULL);
}

/* mf_recvs_done is mf_recv_done for the completed requests idx[0..nidx)
 * of an array (reqs, as saved before the call), whose statuses are st[k]
 * (st may be NULL): Waitany, Testany, Waitsome, Testsome. */
MF_HIDDEN void mf_recvs_done(mf_rec *r, int n, const uintptr_t *saved, const MPI_Request *reqs,
			     const MPI_Status *st, const int *idx, int nidx);
/* mf_taken holds the receives in flight of a MPI_Waitall's array, taken
 * out of the table before the call: n of them, at positions idx[k] of the
 * array (in ibuf and vbuf unless more than MF_SAVE_N may be; idx and v are
 * set only when n > 0). Taken
 * before, the array's handles need no copy and a call whose array holds
 * no receive in flight is given no statuses (under MPICH, asking for them
 * takes MPI_Waitall off its fast path: about 125 instructions). */
typedef struct {
	int n;
	int *idx;
	mf_recv *v;
	int ibuf[MF_SAVE_N];
	mf_recv vbuf[MF_SAVE_N];
} mf_taken;
MF_HIDDEN int mf_recvs_take_big(mf_taken *tk, int n, const MPI_Request *reqs);
MF_HIDDEN void mf_recvs_got_(mf_rec *r, mf_taken *tk, const MPI_Request *reqs, const MPI_Status *st, int rc);

/* mf_recvs_take takes the receives in flight among reqs[0..n) into tk and
 * returns how many; mf_recvs_take_each does, into tk's arrays. */
static inline __attribute__((always_inline)) int mf_recvs_take_each(mf_taken *tk, int n, const MPI_Request *reqs)
{
	for (int i = 0; i < n && mf_tls_recvs.n; i++)
		if (mf_recv_take((uintptr_t)reqs[i], &tk->v[tk->n]))
			tk->idx[tk->n++] = i;
	return tk->n;
}

static inline __attribute__((always_inline)) int mf_recvs_take(mf_taken *tk, int n, const MPI_Request *reqs)
{
	tk->n = 0;
	if (!mf_tls_recvs.n || n <= 0 || !reqs)
		return 0;
	if (n > MF_SAVE_N && mf_tls_recvs.n > MF_SAVE_N)
		return mf_recvs_take_big(tk, n, reqs);
	tk->idx = tk->ibuf;
	tk->v = tk->vbuf;
	return mf_recvs_take_each(tk, n, reqs);
}

/* mf_recvs_got corrects the receives tk took before a MPI_Waitall that
 * returned rc, with statuses st, to what they got; mf_recvs_got_ puts
 * back those still in flight after an error. */
static inline __attribute__((always_inline)) void mf_recvs_got(mf_rec *r, mf_taken *tk, const MPI_Request *reqs,
								const MPI_Status *st, int rc)
{
	if (__builtin_expect(rc != MPI_SUCCESS || st == MPI_STATUSES_IGNORE || tk->idx != tk->ibuf, 0)) {
		mf_recvs_got_(r, tk, reqs, st, rc);
		return;
	}
	for (int k = 0; k < tk->n; k++)
		mf_recv_got(r, &tk->v[k], &st[tk->idx[k]]);
}
MF_HIDDEN MPI_Status *mf_statuses_big(int n);
static inline MPI_Status *mf_statuses(int n, MPI_Status *buf)
{
	return n <= MF_SAVE_N ? buf : mf_statuses_big(n);
}

#define MF_H(x) ((uintptr_t)(x))

static inline mf_ginfo *mf_comm(MPI_Comm c)
{
	if (c == MPI_COMM_WORLD)
		return &mf_world_info;
	if (c == MPI_COMM_NULL)
		return &mf_null_info;
	MPI_Comm h = c;
	return mf_lookup(MF_KIND_COMM, MF_H(c), &h);
}

static inline mf_ginfo *mf_win(MPI_Win w)
{
	if (w == MPI_WIN_NULL)
		return &mf_null_info;
	MPI_Win h = w;
	return mf_lookup(MF_KIND_WIN, MF_H(w), &h);
}

static inline mf_ginfo *mf_file(MPI_File f)
{
	if (f == MPI_FILE_NULL)
		return &mf_null_info;
	MPI_File h = f;
	return mf_lookup(MF_KIND_FILE, MF_H(f), &h);
}

/* mf_peer maps a rank of g to a world rank; MPI_PROC_NULL, MPI_ANY_SOURCE,
 * MPI_ROOT (all negative) and out-of-range ranks give -1. */
static inline int mf_peer(const mf_ginfo *g, int r)
{
	if (r < 0)
		return -1;
	if (g->inter)
		return r < g->rsize && g->rworld ? g->rworld[r] : -1;
	if (r >= g->size)
		return -1;
	return g->identity ? r : g->world[r];
}

/* mf_status_peer is the world rank of a status's source, for calls whose
 * communicator is not known (Wait, Test): it assumes MPI_COMM_WORLD. */
static inline int mf_status_peer(const MPI_Status *st)
{
	return mf_peer(&mf_world_info, st->MPI_SOURCE);
}

/* mf_speer is the world rank a completed request q received from: the one
 * known when it was posted (none for MF_PEER_NONE), else the status's source, through the
 * request's communicator when it was tracked, else as a rank of
 * MPI_COMM_WORLD. */
static inline int mf_speer(mf_reqinfo q, const MPI_Status *st)
{
	if (q.peer != -1)
		return q.peer < 0 ? -1 : q.peer;
	return q.g ? mf_peer(q.g, st->MPI_SOURCE) : mf_status_peer(st);
}

/* MF_ISENDRECV_STATUS says whether the status of a completed MPI_Isendrecv
 * is its receive's. Not MPICH's: 4.0.2 runs it as a schedule whose
 * request's status is never set (source, tag and count are those of an
 * earlier request, or 0); Open MPI 5 copies the receive's. */
#if defined(MPICH_NUMVERSION)
#define MF_ISENDRECV_STATUS 0
#else
#define MF_ISENDRECV_STATUS 1
#endif

/* mf_isr_from is the partner for the completion of an MPI_Isendrecv from
 * rank source of g: its world rank when named, the status's source (-1)
 * for MPI_ANY_SOURCE where the status is set, else none (MPI_PROC_NULL
 * too: MPICH makes that an MPI_Isend, whose status is not a receive's). */
static inline int32_t mf_isr_from(const mf_ginfo *g, int source)
{
	const int32_t p = mf_peer(g, source);
	if (p >= 0)
		return p;
	return source == MPI_ANY_SOURCE && MF_ISENDRECV_STATUS ? -1 : MF_PEER_NONE;
}

/* mf_rpeer is the partner of completed request h (q: its entry in the
 * table of tracked requests) with status st: mf_speer for a receive, -1
 * for any other request. The MPIs fill the status of other requests with
 * anything (MPICH leaves a send's as the program set it, Open MPI gives a
 * persistent send's the own rank and leaves a file request's
 * uninitialized), so a receive must be known as one: tracked (persistent,
 * on other communicators, MPI_Isendrecv) or in flight in this thread. */
static inline int mf_rpeer(mf_reqinfo q, uintptr_t h, const MPI_Status *st)
{
	if (q.g)
		return mf_speer(q, st);
	return mf_recv_has(h) ? mf_status_peer(st) : -1;
}

/* mf_tsize is the size of datatype t. PMPI_Type_size costs about as much
 * as the rest of a record: the common types are compared with, the other
 * predefined ones looked up in a table (mf_tsizes: handle << 16 | size,
 * direct-mapped on mf_tsize_slot, 0: empty; mf_tsize_slow fills it).
 * mf_tsize_known looks without a call (for mf_rep_quick's path, which has
 * none): -1 for a type neither common nor in the table. */
#define MF_TSIZES 64
extern uint64_t mf_tsizes[MF_TSIZES] MF_HIDDEN;
MF_HIDDEN int64_t mf_tsize_slow(MPI_Datatype t);

static inline unsigned mf_tsize_slot(uintptr_t h)
{
	return (unsigned)(h ^ h >> 6 ^ h >> 12) & (MF_TSIZES - 1);
}

/* mf_tsize_common is the size of a common type t, else 0. */
static inline __attribute__((always_inline)) int64_t mf_tsize_common(MPI_Datatype t)
{
	if (t == MPI_BYTE || t == MPI_CHAR)
		return 1;
	if (t == MPI_DOUBLE)
		return sizeof(double);
	if (t == MPI_INT)
		return sizeof(int);
	return 0;
}

static inline __attribute__((always_inline)) int64_t mf_tsize(MPI_Datatype t)
{
	const int64_t s = mf_tsize_common(t);
	return s ? s : mf_tsize_slow(t);
}

static inline __attribute__((always_inline)) int64_t mf_tsize_known(MPI_Datatype t)
{
	const int64_t s = mf_tsize_common(t);
	if (s)
		return s;
	const uintptr_t h = MF_H(t);
	const uint64_t e = __atomic_load_n(&mf_tsizes[mf_tsize_slot(h)], __ATOMIC_RELAXED);
	return e != 0 && e >> 16 == h ? (int64_t)(e & 0xffff) : -1;
}

/* Bytes of count elements of type t; t is not looked at when count is 0. */
#define MF_CB(count, t) ((count) > 0 ? (int64_t)(count) * mf_tsize(t) : (int64_t)0)
/* MF_CB with mf_tsize_known's sizes, where *miss is set if one is unknown. */
#define MF_CBK(miss, count, t) ((count) > 0 ? (int64_t)(count) * mf_tsize_k(miss, t) : (int64_t)0)
static inline __attribute__((always_inline)) int64_t mf_tsize_k(int *miss, MPI_Datatype t)
{
	const int64_t s = mf_tsize_known(t);
	*miss |= s < 0;
	return s;
}
#define MF_IP(buf) ((const void *)(buf) == (const void *)MPI_IN_PLACE)
/* Number of peers of a collective: the remote group for intercommunicators. */
#define MF_N(g) ((g)->inter ? (g)->rsize : (g)->size)

/* mf_got is the bytes a completed receive got, from its status; the
 * posted count's when the MPI cannot tell (a count that is no whole number
 * of elements, or beyond int). */
static inline int64_t mf_got(const MPI_Status *st, MPI_Datatype t, int64_t posted)
{
	int n = MPI_UNDEFINED;
	if (PMPI_Get_count(st, t, &n) == MPI_SUCCESS && n != MPI_UNDEFINED)
		return MF_CB(n, t);
	return MF_CB(posted, t);
}

/* mf_vsum, mf_wsum and mf_at sum or pick the counts of vector calls;
 * mf_vsum_c, mf_wsum_c and mf_at_c do the same for the MPI-4.0 large-count
 * (_c) calls, whose counts are MPI_Count. */
#define MF_COUNT_HELPERS(sfx, T)                                                        \
	static inline int64_t mf_vsum##sfx(const T *counts, int n, MPI_Datatype t)        \
	{                                                                                 \
		if (!counts || n <= 0)                                                    \
			return 0;                                                         \
		int64_t s = 0;                                                            \
		for (int i = 0; i < n; i++)                                               \
			s += counts[i] > 0 ? (int64_t)counts[i] : 0;                      \
		return s > 0 ? s * mf_tsize(t) : 0;                                       \
	}                                                                                 \
	static inline int64_t mf_wsum##sfx(const T *counts, const MPI_Datatype *types, int n) \
	{                                                                                 \
		if (!counts || !types || n <= 0)                                          \
			return 0;                                                         \
		int64_t s = 0;                                                            \
		for (int i = 0; i < n; i++)                                               \
			s += MF_CB(counts[i], types[i]);                                  \
		return s;                                                                 \
	}                                                                                 \
	static inline int64_t mf_at##sfx(const T *counts, int i)                          \
	{                                                                                 \
		return counts && i >= 0 ? (int64_t)counts[i] : 0;                         \
	}
MF_COUNT_HELPERS(, int)
MF_COUNT_HELPERS(_c, MPI_Count)


/* mf_free_caches frees the handle caches and the request table at
 * MPI_Finalize. */
MF_HIDDEN void mf_free_caches(void);

#endif
