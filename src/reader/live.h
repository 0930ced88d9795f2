/*
 * live.h - the reader on a live stream: a session's real-time stream
 * (docs/FORMAT.md, "The real-time stream") read through the same reader
 * API as a log file.  What arrives on the socket is framed by
 * format/live.c into log file images, one per delivery (what reached the
 * socket since the last read that found it empty); each is opened as a
 * reader whose counters follow from the previous delivery's, so records,
 * schemas, names, losses and damage come through rlog_reader_next() and
 * the other rlog_reader_* functions.  At the end of the stream the
 * daemon's end account (struct rlog_rt_end) is read: what it counts
 * beyond the REAL_TIME DATA_LOSS records the stream held comes as one
 * more delivery holding one more such DATA_LOSS, as the daemon would
 * have sent it, and what does not add up is reported as problems.
 *
 *   fd ──► rlog__live_recv ──► rlog__live_feed ──► rlog__live_image
 *      ──► rlog_reader_open_mem_visit (REAL_TIME losses told, summed)
 *      ──► the caller: rlog_reader_next() ...
 *
 * The API is include/ringlog/reader.h's rlog_live_*; this header shows
 * the reader's state to the library's own tests.
 */
#ifndef RLOG_READER_LIVE_H
#define RLOG_READER_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/live.h"
#include "ringlog/reader.h"

/* Problems the end of a stream may report (each one line). */
#define RLOG__LIVE_PROBLEMS 4

/* struct rlog_live (opaque in ringlog/reader.h). */
struct rlog_live {
	int fd;                    /* the connected socket (non-blocking) */
	int endfd;                 /* the daemon's end account, or -1 */
	struct rlog__live s;       /* the framing */
	uint8_t *buf;              /* one read */
	struct rlog_reader *cur;   /* the last delivery's reader, or NULL */
	uint64_t deliveries;       /* readers handed out */
	bool eof;                  /* the stream's end was read */
	bool ended;                /* and its end account was taken into account */
	/* The REAL_TIME DATA_LOSS records of the deliveries (the last one
	 * made from the end account included): what the consumer was told
	 * it missed. */
	uint64_t told_blocks, told_events, told_bytes;
	/* What the end of the stream found wrong, one line each (without a
	 * trailing newline). */
	char problem[RLOG__LIVE_PROBLEMS][200];
	unsigned nproblems;
};

#endif
