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

#include "sink.h"

/* The directory and prefix of the sockets: the session's lower-case name
 * follows. */
#define RLOG_RT_PREFIX "/dev/shm/ringlog-rt."

/* The socket path of session name (any case) into out (n bytes, at least
 * 108).  Returns 0 or -EINVAL (not a session name). */
int rlog__rt_path(const char *name, char *out, size_t n);

/* The socket send buffer the daemon asks for, per consumer. */
#define RLOG_RT_SNDBUF (1 << 20)

/*
 * The end account (docs/FORMAT.md, "The real-time stream"): a small file
 * (memfd) the daemon passes to each consumer with the first bytes of its
 * stream (SCM_RIGHTS) and writes whole (pwrite) just before it closes the
 * stream.  It says what the stream itself may not have been able to: a
 * consumer that was not reading at the end (its socket full) learns from
 * it what it missed after the last DATA_LOSS it got, and that the bytes it
 * read are all the daemon sent.  Little-endian, 64 bytes.
 */
#define RLOG_RT_END_MAGIC "RLOGRTE"  /* 8 bytes with its NUL */
#define RLOG_RT_END_VERSION 1
#define RLOG_RT_END_OPEN 0           /* state: the stream is still open */
#define RLOG_RT_END_FINAL 1          /* state: the daemon closed the stream */

struct rlog_rt_end {
	char magic[8];          /* RLOG_RT_END_MAGIC */
	uint32_t version;       /* RLOG_RT_END_VERSION */
	uint32_t state;         /* RLOG_RT_END_OPEN or RLOG_RT_END_FINAL */
	uint64_t stream_bytes;  /* bytes of the stream the socket took, in all */
	uint64_t blocks_whole;  /* blocks among them sent whole (seq 0 .. this - 1) */
	uint64_t lost_blocks;   /* thread blocks this consumer missed since its stream began,
	                           told in the stream or not */
	uint64_t lost_events;   /* the application events of those blocks */
	uint64_t lost_bytes;    /* and their record bytes */
	uint64_t last_time;     /* base time (ticks) of the last block the daemon drained */
};
_Static_assert(sizeof(struct rlog_rt_end) == 64, "the end account is 64 bytes");

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
