/*
 * daemon.h - the capture daemon: drains a session's buffers into its log
 * file until the session is stopped.
 */
#ifndef RLOG_DAEMON_DAEMON_H
#define RLOG_DAEMON_DAEMON_H

#include "shm.h"

/* How long the daemon sleeps on the fill event before it looks anyway. */
#define RLOG_DAEMON_POLL_MS 10

/*
 * Runs the daemon on a region created by rlog__region_create (state
 * CREATING) and an open, empty log file.  Calibrates the clock, writes the
 * file header and LOG_MARKER, makes the session ACTIVE, drains until a stop
 * request (or SIGTERM/SIGINT), then runs the stop sequence, unlinks the
 * region and sets state STOPPED.  On failure before ACTIVE it sets state
 * FAILED with hdr->last_error.  Returns 0, or -errno.
 */
int rlog__daemon_run(struct rlog__region *r, int out_fd);

#endif
