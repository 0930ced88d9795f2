/*
 * stats_multi.h - `ringlog stats` of several files or a directory
 * (stats_multi.c).
 */
#ifndef RLOG_CLI_STATS_MULTI_H
#define RLOG_CLI_STATS_MULTI_H

#include <stdbool.h>

/* True if stats' arguments call for the several-host form: more than
 * one, or a directory. */
bool stats_is_multi(const char *const *args, int nargs);

/* Prints the per-host and total figures; returns the exit status. */
int stats_multi(const char *const *args, int nargs, bool json);

#endif
