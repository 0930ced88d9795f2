/*
 * utf8.h - the one UTF-8 validator of ringlog's tools (the JSON escaper,
 * json.h, and the terminal escaper, term.h).
 */
#ifndef RLOG_COMMON_UTF8_H
#define RLOG_COMMON_UTF8_H

#include <stdbool.h>
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

/*
 * Whether code point cp (from rlog__utf8_len) may be shown as it is: not a
 * C0 or C1 control nor DEL (a terminal acts on them: U+009B is CSI), nor a
 * character that reorders or breaks what is displayed around it (U+061C,
 * U+200E, U+200F, U+2028..U+202E, U+2066..U+2069: the bidirectional
 * marks, embeddings, overrides and isolates, and the line and paragraph
 * separators), which could make a name look like another.
 */
static inline bool rlog__utf8_printable(uint32_t cp)
{
	if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0))
		return false;
	return !(cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) ||
		 (cp >= 0x2066 && cp <= 0x2069));
}

#endif
