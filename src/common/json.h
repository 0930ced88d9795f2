/*
 * json.h - the one JSON writer of ringlog's tools (`ringlog dump --format
 * json`, `ringlog stats --json`, `ringlog convert --to chrome`): JSON
 * values appended to an output buffer (buf.h).  Numbers are
 * rlog__buf_u64() / rlog__buf_i64(); the rest is here.
 */
#ifndef RLOG_COMMON_JSON_H
#define RLOG_COMMON_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "ringlog/schema.h"

/*
 * Bytes as a JSON string, quotes included (RFC 8259): '"' and '\'
 * escaped, \b \f \n \r \t, the other control characters and DEL as
 * \u00XX, valid UTF-8 as is (but as \uXXXX a code point that
 * rlog__utf8_printable refuses: C1 controls, bidirectional overrides), and
 * each byte that is not part of valid UTF-8
 * (utf8.h) as \ufffd, the replacement character: the output is always
 * valid JSON.
 */
void rlog__json_str(struct rlog__buf *b, const void *p, size_t n);

/* A NUL-terminated string as a JSON string. */
void rlog__json_cstr(struct rlog__buf *b, const char *s);

/* A NUL-terminated string as a JSON string, or null if s is NULL. */
void rlog__json_cstr_or_null(struct rlog__buf *b, const char *s);

/* A double as a JSON value: the number of rlog__double_text(), or the
 * string "NaN", "Infinity" or "-Infinity" (JSON has no such numbers). */
void rlog__json_double(struct rlog__buf *b, double v);

/* Bytes as a JSON string of lower-case hex digits, two per byte. */
void rlog__json_hex(struct rlog__buf *b, const void *p, size_t n);

/* An integer field's value (U8 .. I64) in decimal, which text and JSON
 * write alike: true, or false for another type (nothing written). */
bool rlog__value_integer(struct rlog__buf *b, const struct rlog_value *v);

/* A field's value by its type (v->field->type): integers as numbers with
 * every digit, F64 by rlog__json_double(), BYTES as a hex string, STRING
 * as a string. */
void rlog__json_value(struct rlog__buf *b, const struct rlog_value *v);

#endif
