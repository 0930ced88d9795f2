/*
 * daemon.h - the capture daemon: drains a session's buffers into its log
 * file until the session is stopped.
 */
#ifndef RLOG_DAEMON_DAEMON_H
#define RLOG_DAEMON_DAEMON_H

#include <stdbool.h>

#include "shm.h"

struct rlog__drain;
struct rlog__output;
struct rlog__sink_spec;

/* How long the daemon sleeps on the fill event before it looks anyway. */
#define RLOG_DAEMON_POLL_MS 10

/* The same while producers fill the pool fast (daemon.c, poll_ms): under a
 * sustained load the daemon looks again soon, so that what producers write
 * meanwhile is a small part of the pool, not the 70% that wakes it
 * (docs/PERFORMANCE.md, "Drain throughput"). */
#define RLOG_DAEMON_BUSY_POLL_MS 1

/* What the daemon writes to, besides what the region says. */
struct rlog__daemon_opts {
	int out_fd;              /* the first log file, open and empty; -1: no file */
	const char *pattern;     /* NEWFILE: the absolute file name with %d */
	bool force;              /* NEWFILE: later files may overwrite existing ones */
	const struct rlog__sink_spec *sink; /* --sink (sink_chunks.h), or NULL */
};

/*
 * Runs the daemon on a region created by rlog__region_create (state
 * CREATING).  Takes the session's lock (rlog__region_lock: while it is
 * held the session has a daemon), calibrates the clock, sets up its output
 * (sink.h: the log file in the session's mode, the real-time socket),
 * makes the session ACTIVE, drains until a stop request (or
 * SIGTERM/SIGINT), then runs the stop sequence (rlog__daemon_stop).  On
 * failure before ACTIVE it sets state FAILED with hdr->last_error.
 * Returns 0, or -errno.
 */
int rlog__daemon_run(struct rlog__region *r, const struct rlog__daemon_opts *o);

/* Adds the real-time sink to out if the session is in real-time mode
 * (its socket created for name).  Returns 0 or -errno (last_error says
 * what failed). */
int rlog__daemon_realtime_open(struct rlog__region *r, const char *name, uint32_t tid,
			       struct rlog__output *out);

/* The daemon's signals: SIGTERM and SIGINT stop the session, SIGHUP and
 * SIGPIPE are ignored. */
void rlog__daemon_signals(void);

/*
 * Serves an ACTIVE session with output out and drain d (set up, on the
 * region r): drains, flushes, serves snapshots and flush requests until a
 * stop request (or SIGTERM/SIGINT after rlog__daemon_signals), then runs
 * the stop sequence and frees d and out.  rlog__daemon_run's loop, and
 * `ringlog start --resume`'s (src/daemon/adopt.c) on an orphan.  tid
 * is the daemon thread's, for snapshot files' block 0.  sys: the system
 * events already started (rlog__daemon_run starts them before the session
 * is active, so that they cover its first moment: system_ctl.h), or NULL:
 * serve starts them for the session's selection; serve closes them.
 */
struct rlog__sys_ctl;
void rlog__daemon_serve(struct rlog__region *r, struct rlog__drain *d, struct rlog__output *out,
			const char *name, uint32_t tid, struct rlog__sys_ctl *sys);

/*
 * The stop sequence (docs/FORMAT.md, "Stop"), run by the daemon and by
 * `ringlog stop --force` on a session whose daemon died (adopt.c): state
 * STOPPING, enable mask 0, waits for the producers to leave their writes,
 * drains every buffer, writes the remaining DATA_LOSS records, rewrites
 * the LOG_MARKER with the tick frequency measured over the whole session,
 * closes the output, publishes the final statistics, removes the region
 * (name) and sets state STOPPED.  Errors go to the header's last_error.
 */
void rlog__daemon_stop(struct rlog__region *r, struct rlog__drain *d, struct rlog__output *out,
		       const char *name);

/* The session's LOG_MARKER now: the header's clock, with the tick
 * frequency measured from the start (the header's sync point) to now when
 * that is 100 ms or more (stored in the header too). */
void rlog__daemon_marker(struct rlog__region *r, struct rlog_log_marker *m);

/* The same as a file sink's rlog__marker_fn (sink_file.h), region being
 * the struct rlog__region: each new file's LOG_MARKER. */
void rlog__daemon_marker_fn(void *region, struct rlog_log_marker *m);

#endif
