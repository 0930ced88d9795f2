/*
 * stats_multi.h - `ringlog stats` of several files or a directory
 * (stats_multi.c).
 */
#ifndef RLOG_CLI_STATS_MULTI_H
#define RLOG_CLI_STATS_MULTI_H

#include <stdbool.h>

struct rlog__buf;
struct rlog__multi;

/* Prints the per-host and total figures; returns the exit status. */
int stats_multi(const char *const *args, int nargs, bool json);

/* `stats --json`'s object of the files m holds (opened with
 * RLOG__MULTI_COUNT), and a newline; ringlog report embeds it. */
void stats_multi_json(struct rlog__buf *b, const struct rlog__multi *m);

#endif
