/*
 * args.h - strict number parsing for the CLI: the whole string must be a
 * number in range, or the command fails with one clear line.
 */
#ifndef RLOG_CLI_ARGS_H
#define RLOG_CLI_ARGS_H

#include <stdbool.h>
#include <stdint.h>

/* Parses a decimal (or 0x-prefixed hex) unsigned number in [min, max].
 * Returns true and sets *out, or false. */
bool cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* A duration: milliseconds, or a number with the unit "ms" or "s", at
 * most max_ms.  False if it is not one. */
bool cli_parse_duration_ms(const char *s, uint32_t max_ms, uint32_t *ms);

/* Prints a statistic line "key: value". */
void cli_kv_u64(const char *key, uint64_t v);

#endif
