/*
 * buf.c - the output buffer (buf.h).
 */
#include "buf.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "io.h"

static const char hexdig[] = "0123456789abcdef";

bool rlog__buf_grow(struct rlog__buf *b, size_t n)
{
	if (b->oom)
		return false;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void rlog__buf_str(struct rlog__buf *b, const char *s)
{
	rlog__buf_put(b, s, strlen(s));
}

void rlog__buf_num(struct rlog__buf *b, uint64_t v, bool neg, int width)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	int pad = width - n - (neg ? 1 : 0);
	if (!rlog__buf_need(b, (size_t)(pad > 0 ? pad : 0) + (size_t)n + 1))
		return;
	char *o = b->p + b->len;
	for (; pad > 0; pad--)
		*o++ = ' ';
	if (neg)
		*o++ = '-';
	while (n > 0)
		*o++ = tmp[--n];
	b->len = (size_t)(o - b->p);
}

void rlog__buf_u64(struct rlog__buf *b, uint64_t v)
{
	rlog__buf_num(b, v, false, 0);
}

void rlog__buf_i64(struct rlog__buf *b, int64_t v)
{
	rlog__buf_num(b, v < 0 ? 0u - (uint64_t)v : (uint64_t)v, v < 0, 0);
}

void rlog__buf_pad(struct rlog__buf *b, size_t start, size_t width)
{
	while (b->len - start < width && !b->oom)
		rlog__buf_char(b, ' ');
}

void rlog__buf_hex(struct rlog__buf *b, const void *p, size_t n, bool grouped)
{
	const uint8_t *q = p;
	if (!rlog__buf_need(b, n * 2 + (grouped ? n / 4 : 0)))
		return;
	char *o = b->p + b->len;
	for (size_t i = 0; i < n; i++) {
		if (grouped && i > 0 && i % 4 == 0)
			*o++ = ' ';
		*o++ = hexdig[q[i] >> 4];
		*o++ = hexdig[q[i] & 15];
	}
	b->len = (size_t)(o - b->p);
}

void rlog__buf_printf(struct rlog__buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !rlog__buf_need(b, (size_t)n + 1))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

int rlog__double_text(char *buf, size_t n, double v)
{
	if (isnan(v))
		return snprintf(buf, n, "nan");
	if (isinf(v))
		return snprintf(buf, n, v < 0 ? "-inf" : "inf");
	int len = 0;
	for (int prec = 15; prec <= 17; prec++) {
		len = snprintf(buf, n, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return len;
}

void rlog__buf_double(struct rlog__buf *b, double v)
{
	char tmp[40];
	int n = rlog__double_text(tmp, sizeof(tmp), v);
	rlog__buf_put(b, tmp, (size_t)n);
}

int rlog__buf_write(struct rlog__buf *b, int fd)
{
	if (b->oom)
		return -ENOMEM;
	int rc = rlog__write_all(fd, b->p, b->len, NULL);
	b->len = 0;
	return rc;
}

void rlog__buf_free(struct rlog__buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}
