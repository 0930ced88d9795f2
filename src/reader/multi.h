/*
 * multi.h - several log files read as one timeline: one host's session
 * per file (the files `ringlog collect` writes, DIR/HOST_SESSION_HOSTID.rlog,
 * or any log files named on the command line), merged by CLOCK_REALTIME.
 *
 *   struct rlog__multi m;
 *   size_t bad;
 *   int rc = rlog__multi_open(&m, paths, n, 0, &bad);   // paths[bad] failed
 *   while ((rc = rlog__multi_next(&m, &ev, &host)) > 0)
 *       ... m.h[host].name, ev.time_ns (ns since m.base_realtime_ns) ...
 *   rlog__multi_close(&m);
 *
 * Each file's LOG_MARKER ties its ticks to CLOCK_REALTIME (sync_ticks and
 * sync_realtime_ns, docs/FORMAT.md "LOG_MARKER"): an event's real time is
 * sync_realtime_ns + time_ns.  The files are merged on that key with a
 * binary heap of one head event per file (ties: the file given first),
 * each file's own order kept as the reader gives it.  So the merge is as
 * good as the hosts' clocks agree (docs/DUMP.md, "Several hosts").
 *
 * Internal to the CLI (the reader library links it whole); the public
 * reader API reads one file.
 */
#ifndef RLOG_READER_MULTI_H
#define RLOG_READER_MULTI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ringlog/reader.h"

/* One file: a host's session. */
struct rlog__host {
	const char *path;                    /* as given (not copied) */
	struct rlog_reader *r;
	const struct rlog_reader_info *info;
	char name[128];                      /* host name: from the file name, else the file's base name */
	char id[33];                         /* host id, 32 hex digits, from the file name; "" if not there */
	int64_t offset_ns;                   /* info->sync_realtime_ns - base_realtime_ns */
	struct rlog_event head;              /* the next event, while in the heap */
};

struct rlog__multi {
	struct rlog__host *h;
	size_t n;
	uint64_t base_realtime_ns; /* the earliest sync_realtime_ns: merged time 0 */
	size_t *heap;              /* host indices, a min-heap on (real time, index) */
	size_t nheap;
	size_t last;               /* the host of the event handed out last ... */
	bool has_last;             /* ... whose reader is advanced at the next call */
	bool started;
};

/*
 * rlog__multi_paths - the files an argument list names: a file stands for
 * itself, a directory for its *.rlog files (not those starting with '.'),
 * sorted by name.  *out is malloc'ed, its strings too: free with
 * rlog__multi_paths_free.  On error *bad is the argument at fault.
 * Returns the number of files (>= 1), or -ENOENT (a directory without
 * .rlog files, or an argument that does not exist), -ENOMEM, or the
 * errno of opendir/stat.
 */
int rlog__multi_paths(char *const *args, size_t nargs, char ***out, const char **bad);
void rlog__multi_paths_free(char **paths, size_t n);

/* rlog__multi_open flag: open with rlog_reader_open_count (the totals of
 * each file, for ringlog stats) */
#define RLOG__MULTI_COUNT 0x80000000u

/*
 * rlog__multi_open - opens every file with rlog_reader_open (flags other
 * than RLOG__MULTI_COUNT given to rlog_reader_set_flags) and names its
 * host.  On error every reader is
 * closed, *bad is the index of the file that failed, and the return is
 * rlog_reader_open's.  Returns 0 or -errno.
 */
int rlog__multi_open(struct rlog__multi *m, char *const *paths, size_t n, unsigned flags,
		     size_t *bad);

/*
 * rlog__multi_next - the next event on the merged timeline: ev's time_ns
 * is rebased to base_realtime_ns; *host its file.  Returns 1, 0 at the
 * end of every file, or a reader's negative error (*host says whose).
 */
int rlog__multi_next(struct rlog__multi *m, struct rlog_event *ev, size_t *host);

void rlog__multi_close(struct rlog__multi *m);

#endif
