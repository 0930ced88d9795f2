/*
 * dump.h - `ringlog dump`, shared by its files (docs/DUMP.md):
 *
 *   cmd_dump.c     the command: arguments, the loop over the events, errors
 *   dump_filter.c  the filters (--id, --name, --pid, --tid)
 *   dump_text.c    the text format, and the wall-clock column
 *   dump_json.c    JSON Lines
 *
 * Both formats append to one output buffer (src/common/buf.h), written to
 * stdout a MiB at a time.
 */
#ifndef RLOG_CLI_DUMP_H
#define RLOG_CLI_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "buf.h"
#include "format.h"
#include "ringlog/reader.h"

/* A list of numbers given to --id, --pid or --tid. */
struct numlist {
	uint32_t *v;
	size_t n, cap;
};

struct dump {
	const char *what;       /* "dump" or "tail": the command, in messages and the header */
	const char *path;       /* dump: the file; tail: the session */
	struct rlog_reader *r;
	const struct rlog_reader_info *info;
	bool all, json, wall;
	struct rlog__buf out;

	/* dump of several files (dump_multi.c): every positional argument,
	 * and while merging the host of the event printed (NULL for one
	 * file) and its time offset from the merged time 0. */
	const char **args;      /* malloc'ed; the strings are argv's */
	int nargs;
	const char *host;
	int64_t time_offset;

	/* Filters; an empty list passes everything. */
	struct numlist ids, pids, tids;
	const char **names;
	size_t nnames;
	bool has_since, has_until;
	struct cli_time since, until;

	/* The wall-clock column's cache of the date and time of the last
	 * second printed. */
	uint64_t wall_sec;
	char wall_prefix[24];
};

/* Parses a command's arguments into d (cmd names the command; what, its
 * one positional argument, in "missing WHAT"), through the parser of
 * every command (args.h): the positional argument goes to d->path.
 * Returns 0, or the exit status of a usage error (its lines printed). */
int dump_parse_args(struct dump *d, int argc, char **argv, const char *cmd, const char *what);

/* Frees what dump_parse_args allocated. */
void dump_free_args(struct dump *d);

/* dump of several files, or of a directory of them, merged on one
 * timeline (dump_multi.c, docs/DUMP.md "Several hosts"): true if the
 * arguments call for it. */
bool dump_is_multi(const struct dump *d);

/* Runs that dump; returns the exit status. */
int dump_multi(struct dump *d);

/* A --since or --until time as ns since the start of the trace. */
int64_t dump_resolve_time(const struct dump *d, const struct cli_time *t);

/* Prints ev if it passes the filters and the time window [since, until).
 * Returns 1 (printed), 0 (filtered out) or -1 (at or past until). */
int dump_event(struct dump *d, const struct rlog_event *ev, int64_t since, int64_t until);

/* A DATA_LOSS with a time range (cause overwritten, struct
 * rlog_data_loss_range): its first and last times, in the trace's ns
 * (rlog_reader_time_ns).  False if ev has none. */
static inline bool dump_loss_range(const struct dump *d, const struct rlog_event *ev,
				   int64_t *first, int64_t *last)
{
	struct rlog_loss l;
	if (d->r == NULL || rlog_event_loss(ev, &l) < 0 || !(l.fields & RLOG_LOSS_HAS_RANGE))
		return false;
	*first = rlog_reader_time_ns(d->r, l.first_time) + d->time_offset;
	*last = rlog_reader_time_ns(d->r, l.last_time) + d->time_offset;
	return true;
}

/* Adds "N[,N..]" to l; false if any is not a number in [0, max] or the
 * list is malformed ("1,,2", a trailing comma). */
bool dump_numlist_add(struct numlist *l, const char *s, uint64_t max);

/* True if ev (whose schema is s, or NULL) passes the --id, --pid, --tid
 * and --name filters. */
bool dump_filter_passes(const struct dump *d, const struct rlog_event *ev,
			const struct rlog_schema *s);

/* The name an event goes by: its schema's, a reserved ID's ("DATA_LOSS"),
 * or NULL (then its decimal ID). */
const char *dump_event_name(const struct rlog_event *ev, const struct rlog_schema *s);

/* The two header lines of the text format. */
void dump_text_header(struct dump *d);

/* One event as a text line. */
void dump_text_event(struct dump *d, const struct rlog_event *ev, const struct rlog_schema *s);

/* One event as a JSON line. */
void dump_json_event(struct dump *d, const struct rlog_event *ev, const struct rlog_schema *s);

/* An event's wall-clock time, RFC 3339 with nanoseconds, into buf[32]. */
void dump_wall(struct dump *d, const struct rlog_event *ev, char *buf);

#endif
