/*
 * buf.h - the output buffer of ringlog's tools: a growable byte buffer
 * that `ringlog dump`, `ringlog stats` and the converters append their
 * text to, and write out in large pieces.  JSON values go through json.h,
 * on the same buffer.
 *
 *   struct rlog__buf b = { 0 };
 *   rlog__buf_lit(&b, "events ");
 *   rlog__buf_u64(&b, n);
 *   rlog__buf_char(&b, '\n');
 *   if (b.len >= 1 << 20) rc = rlog__buf_write(&b, fd);
 *   ...
 *   rc = rlog__buf_write(&b, fd);
 *   rlog__buf_free(&b);
 *
 * An allocation failure sticks in oom and later appends are dropped, so
 * that a caller checks once, at rlog__buf_write() (-ENOMEM).  The appends
 * that run once or more per event are inline: a call was a third of the
 * time of a conversion.
 */
#ifndef RLOG_COMMON_BUF_H
#define RLOG_COMMON_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct rlog__buf {
	char *p;
	size_t len, cap;
	bool oom;        /* an allocation failed: the contents are incomplete */
};

/* Makes room for n more bytes (the slow path of rlog__buf_need). */
bool rlog__buf_grow(struct rlog__buf *b, size_t n);

/* Room for n more bytes at b->p + b->len; false if out of memory. */
static inline bool rlog__buf_need(struct rlog__buf *b, size_t n)
{
	return b->len + n <= b->cap || rlog__buf_grow(b, n);
}

static inline void rlog__buf_put(struct rlog__buf *b, const void *p, size_t n)
{
	if (rlog__buf_need(b, n)) {
		memcpy(b->p + b->len, p, n);
		b->len += n;
	}
}

static inline void rlog__buf_char(struct rlog__buf *b, char c)
{
	if (rlog__buf_need(b, 1))
		b->p[b->len++] = c;
}

/* A string literal. */
#define rlog__buf_lit(b, s) rlog__buf_put((b), (s), sizeof(s) - 1)

/* A NUL-terminated string, as it is. */
void rlog__buf_str(struct rlog__buf *b, const char *s);

/* Decimal integers. */
void rlog__buf_u64(struct rlog__buf *b, uint64_t v);
void rlog__buf_i64(struct rlog__buf *b, int64_t v);

/* The magnitude v in decimal, after a '-' if neg, right-aligned in width
 * columns (no padding if it is wider). */
void rlog__buf_num(struct rlog__buf *b, uint64_t v, bool neg, int width);

/* Spaces up to column width of the text appended since start (b->len at
 * its start); nothing if it is wider. */
void rlog__buf_pad(struct rlog__buf *b, size_t start, size_t width);

/* Bytes as lower-case hex, a space every 4 bytes if grouped. */
void rlog__buf_hex(struct rlog__buf *b, const void *p, size_t n, bool grouped);

/* printf-style text, for what runs rarely (headers, tables). */
void rlog__buf_printf(struct rlog__buf *b, const char *fmt, ...)
#if defined(__GNUC__)
	/* printf format checking: a GCC/Clang attribute, no semantic effect */
	__attribute__((format(printf, 2, 3)))
#endif
	;

/*
 * A double in the fewest of 15, 16 or 17 significant digits that reads
 * back as the same double, %g style ("0.1", "1e+300", "-0"); "nan", "inf",
 * "-inf" for those.  buf has n >= 32 bytes; returns the length.
 */
int rlog__double_text(char *buf, size_t n, double v);

/* rlog__double_text() appended. */
void rlog__buf_double(struct rlog__buf *b, double v);

/* Writes the contents to fd and empties the buffer.  Returns 0, -ENOMEM
 * (an append was dropped: nothing is written) or the -errno of write(2). */
int rlog__buf_write(struct rlog__buf *b, int fd);

void rlog__buf_free(struct rlog__buf *b);

#endif
