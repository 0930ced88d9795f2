/*
 * json.c - JSON values on an output buffer (json.h).
 */
#include "json.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "utf8.h"

static const char hexdig[] = "0123456789abcdef";

void rlog__json_str(struct rlog__buf *b, const void *data, size_t n)
{
	const uint8_t *p = data;
	/* At most 6 bytes out per byte in ("\u00XX", or U+FFFD's 6). */
	if (!rlog__buf_need(b, n * 6 + 2))
		return;
	char *o = b->p + b->len;
	*o++ = '"';
	for (size_t i = 0; i < n;) {
		uint8_t c = p[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			*o++ = (char)c;
			i++;
			continue;
		}
		if (c >= 0x80) {
			uint32_t cp;
			unsigned k = rlog__utf8_len(p + i, n - i, &cp);
			if (k == 0) {
				memcpy(o, "\\ufffd", 6);
				o += 6;
				i++;
			} else if (!rlog__utf8_printable(cp)) {
				/* The same character, escaped: JSON shown on a
				 * terminal must not carry a C1 control. */
				memcpy(o, "\\u", 2);
				o += 2;
				for (int sh = 12; sh >= 0; sh -= 4)
					*o++ = hexdig[cp >> sh & 15];
				i += k;
			} else {
				memcpy(o, p + i, k);
				o += k;
				i += k;
			}
			continue;
		}
		*o++ = '\\';
		switch (c) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '\n': *o++ = 'n'; break;
		case '\t': *o++ = 't'; break;
		case '\r': *o++ = 'r'; break;
		case '\b': *o++ = 'b'; break;
		case '\f': *o++ = 'f'; break;
		default: /* the other control characters, and DEL */
			memcpy(o, "u00", 3);
			o += 3;
			*o++ = hexdig[c >> 4];
			*o++ = hexdig[c & 15];
		}
		i++;
	}
	*o++ = '"';
	b->len = (size_t)(o - b->p);
}

void rlog__json_cstr(struct rlog__buf *b, const char *s)
{
	rlog__json_str(b, s, strlen(s));
}

void rlog__json_cstr_or_null(struct rlog__buf *b, const char *s)
{
	if (s)
		rlog__json_cstr(b, s);
	else
		rlog__buf_lit(b, "null");
}

void rlog__json_double(struct rlog__buf *b, double v)
{
	if (isnan(v))
		rlog__buf_lit(b, "\"NaN\"");
	else if (isinf(v))
		rlog__buf_str(b, v < 0 ? "\"-Infinity\"" : "\"Infinity\"");
	else
		rlog__buf_double(b, v);
}

void rlog__json_hex(struct rlog__buf *b, const void *p, size_t n)
{
	rlog__buf_char(b, '"');
	rlog__buf_hex(b, p, n, false);
	rlog__buf_char(b, '"');
}

bool rlog__value_integer(struct rlog__buf *b, const struct rlog_value *v)
{
	switch (v->field->type) {
	case RLOG_FIELD_U8: case RLOG_FIELD_U16: case RLOG_FIELD_U32: case RLOG_FIELD_U64:
		rlog__buf_u64(b, v->v.u);
		return true;
	case RLOG_FIELD_I8: case RLOG_FIELD_I16: case RLOG_FIELD_I32: case RLOG_FIELD_I64:
		rlog__buf_i64(b, v->v.i);
		return true;
	default:
		return false;
	}
}

void rlog__json_value(struct rlog__buf *b, const struct rlog_value *v)
{
	if (rlog__value_integer(b, v))
		return;
	switch (v->field->type) {
	case RLOG_FIELD_F64:
		rlog__json_double(b, v->v.f);
		break;
	case RLOG_FIELD_BYTES:
		rlog__json_hex(b, v->bytes, v->len);
		break;
	default: /* STRING */
		rlog__json_str(b, v->bytes, v->len);
		break;
	}
}
