/*
 * sink_realtime.h - the real-time sink: blocks delivered, as they are
 * drained, to the consumers connected to the session's socket (ringlog
 * tail).  docs/FORMAT.md, "The real-time stream".
 *
 *   daemon                                     consumer (ringlog tail)
 *   ------                                     -----------------------
 *   listen on /dev/shm/ringlog-rt.NAME  <----  connect (same user: mode 0600,
 *                                              and the peer's uid checked)
 *   file header, block 0 (LOG_MARKER),  ---->  the start of a log file
 *   metadata copies
 *   each block drained, renumbered      ---->  blocks, seq 1, 2, ... of its own
 *   for this consumer, sent without
 *   blocking; one it cannot take now
 *   is missed and counted; before the
 *   next one it gets: a DATA_LOSS       ---->  "you missed N blocks (E events)"
 *   (REAL_TIME) and the copies again
 *   (with the first bytes: the end      ---->  kept (SCM_RIGHTS)
 *   account's fd)
 *   stop: the end account written, then ---->  end of the stream; the account
 *   close                                      says what it missed at the end
 */
#ifndef RLOG_DAEMON_SINK_REALTIME_H
#define RLOG_DAEMON_SINK_REALTIME_H

#include <stddef.h>
#include <stdint.h>

#include "format/live.h"
#include "sink.h"

/* The socket send buffer the daemon asks for, per consumer. */
#define RLOG_RT_SNDBUF (1 << 20)


/*
 * Starts the real-time sink of session name: creates its socket (a stale
 * one, left by a daemon that died, is replaced) and listens.  marker is
 * the LOG_MARKER every stream starts with; pid and tid name block 0's
 * thread.  Returns 0, or -errno of creating the socket (-EADDRINUSE: one
 * exists that is not ours to replace).
 */
int rlog__sink_realtime_open(const char *name, const struct rlog_log_marker *marker, uint32_t pid,
			     uint32_t tid, struct rlog__sink **out);

#endif
