/*
 * utf8.h - the one UTF-8 validator of ringlog's tools (the JSON escaper,
 * the C-style escaper of `ringlog dump` and `ringlog stats`).
 */
#ifndef RLOG_COMMON_UTF8_H
#define RLOG_COMMON_UTF8_H

#include <stddef.h>
#include <stdint.h>

/*
 * Length of the valid UTF-8 sequence at p (n >= 1 bytes available): 1 to
 * 4, or 0 if the bytes there are not one (RFC 3629: overlong forms,
 * surrogates U+D800..U+DFFF, code points past U+10FFFF, a stray
 * continuation byte and a sequence cut short are not).  *cp receives the
 * code point.
 */
static inline unsigned rlog__utf8_len(const uint8_t *p, size_t n, uint32_t *cp)
{
	uint8_t c = p[0];
	unsigned len;
	uint32_t v, min;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		v = c & 0x1fu;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		v = c & 0x0fu;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		v = c & 0x07u;
		min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (unsigned i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (p[i] & 0x3fu);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

#endif
