/*
 * pb.h - the protobuf wire format, as much of it as the Perfetto converter
 * writes (convert_perfetto.c): varints, fixed64 doubles and length-delimited
 * fields, appended to a struct rlog__buf.
 *
 * Our own rather than generated code or protobuf-c (docs/CONVERT.md, "Why
 * our own protobuf writer"): a trace is a flat stream of small packets of
 * about ten message types, written once and never parsed back; a few dozen
 * lines of inline functions write them at memcpy speed with no dependency,
 * no per-message allocation and no code generator in the build.
 *
 * A nested message whose length is not known in advance is opened with
 * pb_open() (one byte reserved for its length) and closed with pb_close(),
 * which moves the body up in the rare case the length needs more than one
 * byte: the packets are small, so the common case costs nothing.
 */
#ifndef RLOG_CONVERT_PB_H
#define RLOG_CONVERT_PB_H

#include <stdint.h>
#include <string.h>

#include "buf.h"

#define PB_VARINT 0u
#define PB_FIXED64 1u
#define PB_LEN 2u

static inline unsigned pb_varint_size(uint64_t v)
{
	/* Most are lengths, ids and deltas of a byte or two. */
	if (v < (1u << 7))
		return 1;
	if (v < (1u << 14))
		return 2;
	unsigned n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* v as a varint at p (room for 10 bytes); returns the bytes written. */
static inline unsigned pb_varint_at(char *p, uint64_t v)
{
	if (v < (1u << 7)) {
		p[0] = (char)v;
		return 1;
	}
	if (v < (1u << 14)) {
		p[0] = (char)(v | 0x80);
		p[1] = (char)(v >> 7);
		return 2;
	}
	unsigned n = 0;
	while (v >= 0x80) {
		p[n++] = (char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (char)v;
	return n;
}

static inline void pb_varint(struct rlog__buf *b, uint64_t v)
{
	if (rlog__buf_need(b, 10))
		b->len += pb_varint_at(b->p + b->len, v);
}

static inline void pb_tag(struct rlog__buf *b, unsigned field, unsigned wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

/* A varint field (uint32/uint64/enum/bool, and int64 as two's complement:
 * the encoding of protobuf's int64, ten bytes for a negative value). */
static inline void pb_uint(struct rlog__buf *b, unsigned field, uint64_t v)
{
	pb_tag(b, field, PB_VARINT);
	pb_varint(b, v);
}

static inline void pb_double(struct rlog__buf *b, unsigned field, double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof(u));
	pb_tag(b, field, PB_FIXED64);
	if (rlog__buf_need(b, 8)) {
		for (unsigned i = 0; i < 8; i++) /* little endian on the wire */
			b->p[b->len++] = (char)(u >> (8 * i));
	}
}

/* A length-delimited field of n bytes (string, bytes, or an encoded message). */
static inline void pb_bytes(struct rlog__buf *b, unsigned field, const void *p, size_t n)
{
	pb_tag(b, field, PB_LEN);
	pb_varint(b, n);
	rlog__buf_put(b, p, n);
}

/* Opens a nested message: returns where its length goes. */
static inline size_t pb_open(struct rlog__buf *b, unsigned field)
{
	pb_tag(b, field, PB_LEN);
	size_t at = b->len;
	rlog__buf_char(b, 0);
	return at;
}

/* Closes the message pb_open() opened at `at`. */
static inline void pb_close(struct rlog__buf *b, size_t at)
{
	if (b->oom)
		return;
	size_t n = b->len - at - 1;
	unsigned k = pb_varint_size(n);
	if (k > 1) {
		if (!rlog__buf_need(b, k - 1))
			return;
		memmove(b->p + at + k, b->p + at + 1, n);
		b->len += k - 1;
	}
	pb_varint_at(b->p + at, n);
}

#endif
