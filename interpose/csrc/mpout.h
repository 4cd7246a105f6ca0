/*
 * mpout.h: the partial file's output: a buffered stream that keeps the
 * offset and a CRC-32 of each section (mf_out), and the msgpack values
 * written to it in their shortest forms (mpout.c). Async-signal-safe.
 */
#ifndef MPIFLOW_MPOUT_H
#define MPIFLOW_MPOUT_H

#include <stddef.h>
#include <stdint.h>

#include "recorder.h"

/* mf_out is a buffered output stream that tracks the file offset and the CRC
 * of the current section. */
typedef struct {
	int fd;
	uint8_t *buf;
	size_t len, cap;
	int64_t off; /* bytes written so far, buffered included */
	uint32_t crc;
	int err; /* first errno, 0 if fine */
} mf_out;

/* mf_crc_update continues a CRC-32 (IEEE, as hash/crc32) over p; start
 * with 0. */
uint32_t mf_crc_update(uint32_t crc, const uint8_t *p, size_t n);
/* mf_out_flush writes the buffered bytes out (the first errno in o->err). */
void mf_out_flush(mf_out *o);
/* mf_put appends n bytes of p; mf_put1 one byte; mf_put_be v as bytes
 * big-endian bytes; mf_put_uv the uvarint of v; mf_put_cb is mf_put for
 * mf_seqv_encode and mf_timing_encode. */
void mf_put(mf_out *o, const void *p, size_t n);
void mf_put1(mf_out *o, uint8_t c);
void mf_put_be(mf_out *o, uint64_t v, int bytes);
void mf_put_uv(mf_out *o, uint64_t v);
void mf_put_cb(void *o, const uint8_t *b, size_t n);

/* msgpack values: integers, the headers of bins, maps and arrays of n,
 * nil, booleans, strings, and an mf_stat as flowgraph.Stat's map. */
void mf_mp_uint(mf_out *o, uint64_t v);
void mf_mp_int(mf_out *o, int64_t v);
void mf_mp_len(mf_out *o, uint64_t n, uint8_t fix, uint64_t fixmax, uint8_t c16);
void mf_mp_bin(mf_out *o, uint64_t n);
void mf_mp_map(mf_out *o, uint64_t n);
void mf_mp_arr(mf_out *o, uint64_t n);
void mf_mp_nil(mf_out *o);
void mf_mp_bool(mf_out *o, int b);
void mf_mp_strn(mf_out *o, const char *s, size_t n);
void mf_mp_str(mf_out *o, const char *s);
void mf_mp_stat(mf_out *o, const mf_stat *s);
/* mf_mp_key writes a map key (a string literal). */
#define mf_mp_key(o, k) mf_mp_strn((o), (k), sizeof(k) - 1)

#endif
