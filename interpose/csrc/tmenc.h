/*
 * tmenc.h: the timing encoder: flowgraph.Timing's nibble streams, the
 * rounding of an interval's sums with their carries (timingRec.put), and
 * the encoding of the intervals for a file. The codec's inline helpers are
 * shared with timing.c, whose passes read and rewrite closed intervals.
 */
#ifndef MPIFLOW_TMENC_H
#define MPIFLOW_TMENC_H

#include "record.h"

#include <stdlib.h>

/* mf_timing_prefix returns the nibbles of the closed intervals of p that
 * end at or before event maxev. Pure: safe in a signal handler. */
int64_t mf_timing_prefix(const mf_timing_pub *p, int64_t maxev);

/* mf_timing_encode writes through put (NULL: only counts) the intervals
 * of flowgraph.Timing's encoding: the first nibs nibbles of p's closed
 * intervals and, with open > 0, r's open interval of open events as the
 * last, uncapped and rounded with the carries as flowgraph's
 * timingRec.finish closes it. It returns the number of bytes. Pure: safe
 * in a signal handler. */
uint64_t mf_timing_encode(const mf_rec *r, const mf_timing_pub *p, int64_t nibs, int64_t open,
			  void (*put)(void *ctx, const uint8_t *b, size_t n), void *ctx);

/* mf_tm_put (timingRec.put) rounds an interval of events events, the ids
 * of lists (nodes, edges, each in first touch order) with the raw sums of
 * src and raw remainders mr, cr, with the carries of carry, caps it to keep
 * entries when capped, and writes it at spacing sp at nibble *len of out
 * and its ids at byte *nids of r->tm.ids[ib] if that keeps *len within
 * limit, then updates the carries and adds its time as encoded to *time.
 * It returns 0, or -1 (nothing written) if the interval does not fit or
 * memory runs out (r->failed). */
int mf_tm_put(mf_rec *r, uint8_t *out, int64_t *len, int64_t limit, int ib, int64_t *nids, uint32_t *const lists[2],
	      const int64_t counts[2], int src, int carry, int32_t keep, int capped, int64_t mr, int64_t cr,
	      uint64_t *time, int64_t events, int64_t sp, mf_tm_last last);


/* tm_grow reallocs *p to n elements of size elem; it returns -1 (and
 * leaves *p) when out of memory. */
static inline int tm_grow(void **p, int64_t n, size_t elem)
{
	void *q = realloc(*p, (size_t)n * elem);
	if (!q)
		return -1;
	*p = q;
	return 0;
}



/* Nibble streams (flowgraph.Timing): nibble i is the high half of byte i/2
 * when i is even. A nibble varint holds 3 bits a nibble, least significant
 * first, the high bit set when more follow. */
static inline int nib_len(uint64_t v)
{
	return (64 - __builtin_clzll(v | 1) + 2) / 3;
}

static inline void put_nib(uint8_t *b, int64_t *n, uint64_t v)
{
	int64_t i = *n;
	if (v < 8) { /* the common cases: one nibble, two */
		if (i & 1)
			b[i >> 1] |= (uint8_t)v;
		else
			b[i >> 1] = (uint8_t)(v << 4);
		*n = i + 1;
		return;
	}
	if (v < 64) {
		uint8_t x0 = (uint8_t)((v & 7) | 8), x1 = (uint8_t)(v >> 3);
		if (i & 1) {
			b[i >> 1] |= x0;
			b[(i >> 1) + 1] = (uint8_t)(x1 << 4);
		} else {
			b[i >> 1] = (uint8_t)(x0 << 4 | x1);
		}
		*n = i + 2;
		return;
	}
	for (;;) {
		uint8_t x = (uint8_t)(v & 7);
		v >>= 3;
		if (v)
			x |= 8;
		if (i & 1)
			b[i >> 1] |= x;
		else
			b[i >> 1] = (uint8_t)(x << 4);
		i++;
		if (!v)
			break;
	}
	*n = i;
}

/* put_last writes the last gap and the last duration of an interval that
 * ends early at quantum 2^shift. */
static inline void put_last(uint8_t *b, int64_t *n, mf_tm_last last, int32_t shift)
{
	put_nib(b, n, (uint64_t)(last.gap > 0 ? last.gap : 0) >> shift);
	put_nib(b, n, (uint64_t)(last.dur > 0 ? last.dur : 0) >> shift);
}

/* get_nib reads a nibble varint of our own encoding at nibble *pos. */
static inline uint64_t get_nib(const uint8_t *b, int64_t *pos)
{
	int64_t i = *pos;
	unsigned x0 = (unsigned)(b[i >> 1] >> (4 - 4 * (i & 1))) & 15;
	if (x0 < 8) { /* the common cases: one nibble, two */
		*pos = i + 1;
		return x0;
	}
	unsigned x1 = (unsigned)(b[(i + 1) >> 1] >> (4 - 4 * ((i + 1) & 1))) & 15;
	if (x1 < 8) {
		*pos = i + 2;
		return (x0 & 7) | x1 << 3;
	}
	uint64_t v = 0;
	for (int s = 0;; s += 3) {
		unsigned x = (unsigned)(b[i >> 1] >> (4 - 4 * (i & 1))) & 15;
		i++;
		v |= (uint64_t)(x & 7) << s;
		if (x < 8)
			break;
	}
	*pos = i;
	return v;
}

/* put_id and get_id write and read the uvarints of the id buffers. */
static inline int64_t put_id(uint8_t *b, int64_t n, uint32_t id)
{
	if (id < 0x80) {
		b[n] = (uint8_t)id;
		return n + 1;
	}
	size_t k = (size_t)n;
	mf_trace_uvarint(b, &k, id);
	return (int64_t)k;
}

static inline uint32_t get_id(const uint8_t *b, int64_t *pos)
{
	if (b[*pos] < 0x80)
		return b[(*pos)++];
	uint32_t v = 0;
	int shift = 0;
	for (;;) {
		uint8_t c = b[(*pos)++];
		v |= (uint32_t)(c & 0x7f) << shift;
		if (c < 0x80)
			return v;
		shift += 7;
	}
}

/* quantize is flowgraph's quantize: the code of v at quantum 2^shift,
 * rounded half up (at most INT64_MAX >> shift), with the rounding left in
 * *rest; v <= 0 gives code 0 and rest v. */
static inline uint64_t quantize(int64_t v, int32_t shift, int64_t *rest)
{
	if (v <= 0) {
		*rest = v;
		return 0;
	}
	int64_t c = v >> shift;
	if (shift > 0)
		c += (v >> (shift - 1)) & 1;
	if (c > INT64_MAX >> shift)
		c = INT64_MAX >> shift;
	*rest = v - (int64_t)((uint64_t)c << shift);
	return (uint64_t)c;
}

/* quantum_shift is flowgraph's quantumShift. */
static inline int32_t quantum_shift(int64_t total)
{
	int b = total > 0 ? 64 - __builtin_clzll((uint64_t)total) : 0;
	return b > MF_TM_QUANTUM_BITS ? b - MF_TM_QUANTUM_BITS : 0;
}

/* TM_F is field f of the node or edge of id. */
#define TM_F(r, id, f) (*((id) & 1 ? &(r)->tab.edges[(id) >> 1].f : &(r)->tab.nodes[(id) >> 1].f))

/* The sums of an interval to put, and the carries to round it with. */
enum { TM_OPEN, TM_MERGED };
enum { TM_RECORDING, TM_PASS };

static inline int64_t tm_sum(const mf_rec *r, uint32_t id, int src)
{
	return src == TM_OPEN ? TM_F(r, id, tsum) : r->tm.m[id].v;
}

static inline int64_t tm_carry_of(const mf_rec *r, uint32_t id, int carry)
{
	if (carry == TM_RECORDING)
		return r->tm.carry[id];
	return r->tm.p[id].stamp == r->tm.pgen ? r->tm.p[id].v : 0;
}

static inline void tm_set_carry(mf_rec *r, uint32_t id, int carry, int64_t v)
{
	if (carry == TM_RECORDING) {
		r->tm.carry[id] = v;
		return;
	}
	mf_tm_slot *s = &r->tm.p[id];
	if (s->stamp == r->tm.pgen) {
		s->v = v;
	} else if (v != 0) { /* an untouched pass carry is 0 */
		s->stamp = r->tm.pgen;
		s->v = v;
		r->tm.plist[r->tm.nplist++] = id;
	}
}

/* tm_events_code is flowgraph's eventsCode: the code of an interval of
 * events events at spacing sp, 0 when it is full. */
static inline uint64_t tm_events_code(int64_t events, int64_t sp)
{
	return events == sp ? 0 : (uint64_t)events;
}

#endif
