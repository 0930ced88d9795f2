/*
 * hosts.h - what dump, stats and convert share when they read several
 * hosts' files (docs/DUMP.md, "Several hosts"): the arguments that call
 * for it, opening the files (src/reader/multi.h) with the one error line,
 * and the damage reports.
 */
#ifndef RLOG_CLI_HOSTS_H
#define RLOG_CLI_HOSTS_H

#include <stdbool.h>
#include <stddef.h>

#include "reader/multi.h"

struct cli_hosts {
	struct rlog__multi m;
	char **paths;
	size_t n;
};

/* True if the positional arguments name several files, or a directory. */
bool cli_hosts_wanted(const char *const *args, int nargs);

/* Opens the files that args name (rlog__multi_paths, rlog__multi_open
 * with flags).  Returns 0, or the exit status after one error line
 * ("ringlog: CMD FILE: why"); then nothing is left open. */
int cli_hosts_open(struct cli_hosts *h, const char *cmd, const char *const *args, int nargs,
		   unsigned flags);

/* One line per damage report of every file; returns 1 if any, else 0. */
int cli_hosts_damage(const struct cli_hosts *h, const char *cmd);

void cli_hosts_close(struct cli_hosts *h);

/* The file's record of its clock's error (docs/FORMAT.md, LOG_MARKER) as
 * text: "±12 us (max 345 us)", "not recorded" or "unknown: not
 * synchronized".  Returns buf. */
const char *cli_host_clock(const struct rlog_reader_info *info, char *buf, size_t n);

/* The same as JSON members, each preceded by a comma:
 * "clock_synchronized", "clock_error_ns", "clock_max_error_ns" (null
 * where the file does not say; never 0 for unknown). */
struct rlog__buf;
void cli_host_clock_json(struct rlog__buf *b, const struct rlog_reader_info *info);

#endif
