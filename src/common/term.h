/*
 * term.h - the one escaper of text that reaches a terminal: names and
 * strings read from a session region or a log file (a hostile producer
 * writes them), in `ringlog dump`, `stats`, `tail`, `list`, `query` and
 * `stop`.  Beside the JSON escaper (json.h), with the same UTF-8
 * validator (utf8.h).
 */
#ifndef RLOG_COMMON_TERM_H
#define RLOG_COMMON_TERM_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

/*
 * Bytes as printable text (no quotes around): printable ASCII as is
 * except '\' (\\) and, if quote, '"' (\"); \n \t \r as those two
 * characters; valid UTF-8 of a printable code point (rlog__utf8_printable)
 * as is; every other byte (the other C0 controls such as ESC and BEL, DEL,
 * C1 controls alone or UTF-8 encoded, bidirectional overrides, invalid
 * UTF-8) as \xHH.  The output holds no byte below 0x20, no 0x7f and no C1
 * control: nothing a terminal acts on.
 */
void rlog__term_escape(struct rlog__buf *b, const void *p, size_t n, bool quote);

/* A NUL-terminated string escaped as above (quote false) into out (cap
 * bytes, cap >= 1), cut before an escape that does not fit; for
 * printf-style lines.  Returns out. */
const char *rlog__term_cstr(const char *s, char *out, size_t cap);

/* rlog__term_cstr with '\' left as it is: for a line that may already
 * hold text escaped here (an error line built around an escaped name),
 * which then passes unchanged; nothing a terminal acts on gets through
 * either way. */
const char *rlog__term_line(const char *s, char *out, size_t cap);

#endif
