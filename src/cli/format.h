/*
 * format.h - what `ringlog dump` and `ringlog stats` print besides values:
 * names of tick sources, loss causes, field types and kinds, RFC 3339
 * times, and the time arguments of --since/--until.  Values (numbers,
 * doubles, hex, C-escaped and JSON strings) are src/common's buf.h and
 * json.h.  The formats are specified in docs/DUMP.md.
 */
#ifndef RLOG_CLI_FORMAT_H
#define RLOG_CLI_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* What an option that takes a time expects, in its error message. */
#define CLI_TIME_WANT "a time: 1.5s, 250ms, 10us, 123ns, or 2026-11-22T07:01:31.5Z"

/* A parsed time as ns of a trace whose time 0 is origin_realtime_ns
 * (a session's sync_realtime_ns, or the earliest host's): a wall-clock
 * time counts from that origin. */
int64_t cli_time_ns(const struct cli_time *t, uint64_t origin_realtime_ns);

#endif
