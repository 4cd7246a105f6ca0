/*
 * mpout.c: the partial file's buffered output with its CRC-32, and the
 * msgpack values written to it. See mpout.h.
 */
#include "mpout.h"
#include "partial_keys.h"
#include "record.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

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
uint32_t mf_crc_update(uint32_t crc, const uint8_t *p, size_t n)
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


void mf_out_flush(mf_out *o)
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

void mf_put(mf_out *o, const void *p, size_t n)
{
	const uint8_t *b = p;
	o->crc = mf_crc_update(o->crc, b, n);
	o->off += (int64_t)n;
	while (n > 0) {
		if (o->len == o->cap)
			mf_out_flush(o);
		size_t k = o->cap - o->len;
		if (k > n)
			k = n;
		memcpy(o->buf + o->len, b, k);
		o->len += k;
		b += k;
		n -= k;
	}
}

void mf_put1(mf_out *o, uint8_t c) { mf_put(o, &c, 1); }

void mf_put_be(mf_out *o, uint64_t v, int bytes)
{
	uint8_t b[8];
	for (int i = 0; i < bytes; i++)
		b[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
	mf_put(o, b, (size_t)bytes);
}

/* msgpack */

void mf_mp_uint(mf_out *o, uint64_t v)
{
	if (v < 128) {
		mf_put1(o, (uint8_t)v);
	} else if (v <= 0xff) {
		mf_put1(o, 0xcc);
		mf_put_be(o, v, 1);
	} else if (v <= 0xffff) {
		mf_put1(o, 0xcd);
		mf_put_be(o, v, 2);
	} else if (v <= 0xffffffffu) {
		mf_put1(o, 0xce);
		mf_put_be(o, v, 4);
	} else {
		mf_put1(o, 0xcf);
		mf_put_be(o, v, 8);
	}
}

void mf_mp_int(mf_out *o, int64_t v)
{
	if (v >= 0) {
		mf_mp_uint(o, (uint64_t)v);
	} else if (v >= -32) {
		mf_put1(o, (uint8_t)(int8_t)v);
	} else if (v >= -128) {
		mf_put1(o, 0xd0);
		mf_put_be(o, (uint64_t)v, 1);
	} else if (v >= -32768) {
		mf_put1(o, 0xd1);
		mf_put_be(o, (uint64_t)v, 2);
	} else if (v >= INT32_MIN) {
		mf_put1(o, 0xd2);
		mf_put_be(o, (uint64_t)v, 4);
	} else {
		mf_put1(o, 0xd3);
		mf_put_be(o, (uint64_t)v, 8);
	}
}

void mf_mp_len(mf_out *o, uint64_t n, uint8_t fix, uint64_t fixmax, uint8_t c16)
{
	if (n <= fixmax) {
		mf_put1(o, (uint8_t)(fix | n));
	} else if (n <= 0xffff) {
		mf_put1(o, c16);
		mf_put_be(o, n, 2);
	} else {
		mf_put1(o, (uint8_t)(c16 + 1));
		mf_put_be(o, n, 4);
	}
}

void mf_mp_bin(mf_out *o, uint64_t n)
{
	if (n <= 0xff) {
		mf_put1(o, 0xc4);
		mf_put_be(o, n, 1);
	} else if (n <= 0xffff) {
		mf_put1(o, 0xc5);
		mf_put_be(o, n, 2);
	} else {
		mf_put1(o, 0xc6);
		mf_put_be(o, n, 4);
	}
}

/* mf_put_cb is put for mf_seqv_encode and mf_timing_encode. */
void mf_put_cb(void *o, const uint8_t *b, size_t n) { mf_put(o, b, n); }

void mf_mp_map(mf_out *o, uint64_t n) { mf_mp_len(o, n, 0x80, 15, 0xde); }
void mf_mp_arr(mf_out *o, uint64_t n) { mf_mp_len(o, n, 0x90, 15, 0xdc); }
void mf_mp_nil(mf_out *o) { mf_put1(o, 0xc0); }
void mf_mp_bool(mf_out *o, int b) { mf_put1(o, b ? 0xc3 : 0xc2); }

void mf_mp_strn(mf_out *o, const char *s, size_t n)
{
	if (n < 32) {
		mf_put1(o, (uint8_t)(0xa0 | n));
	} else if (n <= 0xff) {
		mf_put1(o, 0xd9);
		mf_put_be(o, n, 1);
	} else if (n <= 0xffff) {
		mf_put1(o, 0xda);
		mf_put_be(o, n, 2);
	} else {
		mf_put1(o, 0xdb);
		mf_put_be(o, n, 4);
	}
	mf_put(o, s, n);
}

void mf_mp_str(mf_out *o, const char *s) { mf_mp_strn(o, s ? s : "", s ? strlen(s) : 0); }

void mf_mp_stat(mf_out *o, const mf_stat *s)
{
	mf_mp_map(o, 3);
	mf_mp_key(o, MF_PK_STAT_TOTAL);
	mf_mp_int(o, s->total);
	mf_mp_key(o, MF_PK_STAT_MIN);
	mf_mp_int(o, s->min);
	mf_mp_key(o, MF_PK_STAT_MAX);
	mf_mp_int(o, s->max);
}

void mf_put_uv(mf_out *o, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;
	mf_trace_uvarint(b, &n, v);
	mf_put(o, b, n);
}
