/*
 * stats_multi.h - `ringlog stats` of several files or a directory
 * (stats_multi.c).
 */
#ifndef RLOG_CLI_STATS_MULTI_H
#define RLOG_CLI_STATS_MULTI_H

#include <stdbool.h>

/* Prints the per-host and total figures; returns the exit status. */
int stats_multi(const char *const *args, int nargs, bool json);

#endif
