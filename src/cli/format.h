/*
 * format.h - how `ringlog dump` and `ringlog stats` write values and read
 * times: numbers, doubles that read back the same, C-escaped and JSON
 * strings, hex, RFC 3339 times, and the time arguments of --since/--until.
 * The formats are specified in docs/DUMP.md.
 *
 * Writers go through a FILE with a large buffer and take no locks
 * (putc_unlocked): the dump of a big trace is mostly these calls.
 */
#ifndef RLOG_CLI_FORMAT_H
#define RLOG_CLI_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* RFC 3339 UTC with nanoseconds, "2026-11-22T10:00:00.123456789Z" (30
 * characters); "@<ns>ns" if the time cannot be broken down.  n >= 32. */
void fmt_rfc3339(char *buf, size_t n, uint64_t ns);

/* "tsc", "monotonic", or "unknown(N)" written into buf. */
const char *fmt_tick_source(uint32_t source, char *buf, size_t n);

/* "no_buffer", "nested", "corrupt", "log_write", "no_slot", or "unknown(N)". */
const char *fmt_loss_cause(uint32_t cause, char *buf, size_t n);

/* The type name of a schema field: "u8" .. "i64", "f64", "bytes", "string". */
const char *fmt_field_type(uint8_t type);

/* The name of a schema kind: "event", "span", "counter" or "unknown". */
const char *fmt_kind(uint8_t kind);

/* v in decimal. */
void fmt_u64(FILE *f, uint64_t v);
void fmt_i64(FILE *f, int64_t v);

/*
 * A double in the fewest of 15, 16 or 17 significant digits that reads
 * back as the same double (%g style: "1.5", "1e+300", "-0"); "nan", "inf"
 * or "-inf" for those.  Returns the length; n >= 32.
 */
int fmt_double(char *buf, size_t n, double v);

/* Bytes as lower-case hex, a space every 4 bytes if grouped. */
void fmt_hex(FILE *f, const void *p, size_t n, bool grouped);

/*
 * Bytes as the body of a C string: printable ASCII as is, \\ \" \n \t \r,
 * valid UTF-8 sequences of U+00A0 and above as is, every other byte \xHH.
 */
void fmt_cstr(FILE *f, const void *p, size_t n);

/*
 * Bytes as a JSON string, quotes included: valid UTF-8 as is, " and \
 * escaped, control characters as \n \t \r \b \f or \u00XX, DEL as \u007f,
 * each byte that is not part of valid UTF-8 as \ufffd.
 */
void fmt_json_str(FILE *f, const void *p, size_t n);

/* A NUL-terminated string as a JSON string (fmt_json_str). */
void fmt_json_cstr(FILE *f, const char *s);

/* A double as a JSON value: a number (fmt_double), or the string "NaN",
 * "Infinity" or "-Infinity". */
void fmt_json_double(FILE *f, double v);

/*
 * Length of the valid UTF-8 sequence at p (n bytes available): 1 to 4, or
 * 0 if the bytes there are not valid UTF-8 (overlong forms, surrogates and
 * code points past U+10FFFF are not).  *cp receives the code point.
 */
unsigned fmt_utf8_len(const uint8_t *p, size_t n, uint32_t *cp);

/* A time argument: relative to the start of the trace, or wall clock. */
struct cli_time {
	bool wall;    /* ns is ns since 1970 (UTC); else ns since the start */
	int64_t ns;
};

/*
 * Parses a time argument:
 *   relative  [-]N[.F][unit], unit ns (the default), us, ms or s:
 *             "1.5s", "250ms", "10us", "123ns", "123"; digits past the
 *             nanosecond are dropped
 *   absolute  RFC 3339: YYYY-MM-DDTHH:MM:SS[.F](Z|+HH:MM|-HH:MM), "T" or
 *             "t" or a space between date and time, "Z" or "z"
 * Returns 0, or -EINVAL (not a time) or -ERANGE (out of range).
 */
int cli_parse_time(const char *s, struct cli_time *t);

#endif
