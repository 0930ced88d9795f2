/*
 * term.c - text made safe for a terminal (term.h).
 */
#include "term.h"

#include <stdint.h>
#include <string.h>

#include "utf8.h"

static const char hexdig[] = "0123456789abcdef";

/* Escapes q[0..n) into o, up to end; returns the bytes written.  An escape
 * that would pass end is not begun.  backslash: '\' is escaped too. */
static size_t escape(char *o, const char *end, const uint8_t *q, size_t n, bool quote,
		     bool backslash)
{
	char *start = o;
	for (size_t i = 0; i < n;) {
		uint8_t c = q[i];
		char e = 0;
		switch (c) {
		case '\\': e = backslash ? '\\' : 0; break;
		case '"': e = quote ? '"' : 0; break;
		case '\n': e = 'n'; break;
		case '\t': e = 't'; break;
		case '\r': e = 'r'; break;
		default: break;
		}
		if (e) {
			if (end - o < 2)
				break;
			*o++ = '\\';
			*o++ = e;
			i++;
			continue;
		}
		if (c >= 0x20 && c < 0x7f) {
			if (end - o < 1)
				break;
			*o++ = (char)c;
			i++;
			continue;
		}
		uint32_t cp;
		unsigned len = c >= 0x80 ? rlog__utf8_len(q + i, n - i, &cp) : 0;
		if (len > 1 && rlog__utf8_printable(cp)) {
			if ((size_t)(end - o) < len)
				break;
			memcpy(o, q + i, len);
			o += len;
			i += len;
			continue;
		}
		if (end - o < 4)
			break;
		*o++ = '\\';
		*o++ = 'x';
		*o++ = hexdig[c >> 4];
		*o++ = hexdig[c & 15];
		i++;
	}
	return (size_t)(o - start);
}

void rlog__term_escape(struct rlog__buf *b, const void *p, size_t n, bool quote)
{
	/* At most 4 bytes out per byte in. */
	if (!rlog__buf_need(b, n * 4))
		return;
	b->len += escape(b->p + b->len, b->p + b->len + n * 4, p, n, quote, true);
}

const char *rlog__term_cstr(const char *s, char *out, size_t cap)
{
	size_t k = escape(out, out + cap - 1, (const uint8_t *)s, strlen(s), false, true);
	out[k] = '\0';
	return out;
}

const char *rlog__term_line(const char *s, char *out, size_t cap)
{
	size_t k = escape(out, out + cap - 1, (const uint8_t *)s, strlen(s), false, false);
	out[k] = '\0';
	return out;
}
