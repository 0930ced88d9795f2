/*
 * flush.h - the single ring's flush application (CeLog's CeLogFlush, for
 * include/ringlog/ring.h): drains the committed records of a ring into a
 * ringlog log file that the reader reads like a daemon's, and turns the
 * producer's lost-byte counters into DATA_LOSS records, which it writes
 * itself (the seed: the flush application makes the data-loss events, so
 * that they are never lost).
 *
 * One drain:
 *
 *   W = load_acquire(write_off)            checked: an offset in the ring
 *   now = the ring's clock (TSC, MONOTONIC) the records before W are older
 *   copy [R, W) out (two pieces if it wraps), then decode the copy: every
 *      record checked; the first bad one ends the good part, the rest of
 *      [R, W) is skipped and counted (DATA_LOSS cause CORRUPT, one message)
 *   L = load_acquire(lost_*, nested_*)     losses counted before the load
 *   64-bit times: each from the previous record's (a 32-bit delta is a step
 *      forward, or back if it is within RLOG_RING_BACKSTEP below a wrap);
 *      the first of a drain from `now` backward when the clock is one this
 *      process reads and the last record is a wrap or more before it
 *      (docs/FORMAT.md, "Times")
 *   blocks of the records, a TIME_SYNC before any record 2^31 ticks or more
 *      after the previous one
 *   store_release(read_off, W)             the producer may reuse [R, W)
 *   DATA_LOSS records for L - reported (NO_BUFFER, NESTED), then the new
 *      reported counts into the ring (so a later flush application does
 *      not report them again)
 *   write the staged blocks to the file
 *
 * The ring is hostile input: the write offset and every record are
 * checked, the bytes are copied out of the ring before they are decoded,
 * and nothing read from the ring is trusted after its check.  A ring is
 * drained by one flush application at a time (the seed).  Single-threaded.
 */
#ifndef RLOG_RING_FLUSH_H
#define RLOG_RING_FLUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "format/logfile.h"
#include "map.h"

/* Largest block of records ring-flush writes, bytes (a drain larger than
 * this becomes several blocks). */
#define RLOG_RING_BLOCK_MAX (1u << 20)

/* A producer's timestamps may go back by less than this many ticks from
 * one record to the next (a signal handler that wrote between its
 * thread's clock read and its write); a 32-bit delta of more than
 * 2^32 - RLOG_RING_BACKSTEP is taken as such a step back. */
#define RLOG_RING_BACKSTEP (UINT32_C(1) << 28)

struct rlog__ring_flush {
	struct rlog__ring_view *v;  /* the ring (geometry checked at map) */
	struct rlog__logfile lf;    /* the log file, once opened */
	int fd;                     /* its descriptor (the caller's) */
	bool lf_open;               /* header and LOG_MARKER written */
	char name[64];              /* LOG_MARKER session_name: the ring's file name */

	/* The clock. */
	bool readable;              /* TSC or MONOTONIC: read here too */
	struct rlog__clock_sync start; /* the clocks when the flush started */
	struct rlog_log_marker marker;

	/* Where the ring stands. */
	uint32_t read_off;          /* private: the next drain starts here */
	bool have_cursor;           /* cursor holds a time */
	uint64_t cursor;            /* 64-bit time of the last record (or the start) */
	uint32_t rep[4];            /* reported: lost events and bytes, nested events and bytes */
	bool write_off_bad;         /* the last write offset read was not one (reported once) */

	uint8_t *copy;              /* the ring's committed bytes, copied out (size bytes) */
	uint8_t *block;             /* the block being built */
	uint32_t block_used, block_records, block_events, block_event_bytes;
	uint64_t block_base;

	/* Statistics (the file's own, events_written, in lf). */
	uint64_t drains;            /* drains done */
	uint64_t lost_events, lost_bytes;     /* reported as NO_BUFFER */
	uint64_t nested_events, nested_bytes; /* reported as NESTED */
	uint64_t corrupt_bytes;     /* bytes skipped as CORRUPT */
	uint64_t corrupt_count;     /* corruptions found (each with a message) */
	uint64_t time_syncs;        /* TIME_SYNC records inserted */
	char error[256];            /* the last corruption, one line, no newline */
};

/*
 * Starts flushing ring v into the log file open for writing on fd
 * (positioned at 0; the file is written at the first drain).  name goes
 * into the LOG_MARKER's session_name.  Measures the TSC's frequency over
 * 20 ms for a TSC ring.  The drain starts at the ring's read_off (where
 * the previous flush application stopped) and reports only the losses it
 * has not reported.
 * Returns 0, -EBADMSG (the ring's read offset is not an offset: the ring
 * cannot be flushed) or -ENOMEM.
 */
int rlog__ring_flush_init(struct rlog__ring_flush *f, struct rlog__ring_view *v, int fd,
			  const char *name);

/*
 * One drain (top of this file).  Returns the bytes taken from the ring
 * (0: it was empty), or -EBADMSG if the write offset is not an offset
 * (nothing was read; a CORRUPT DATA_LOSS and f->error say so the first
 * time), or the -errno of a failed write of the log file (the blocks are
 * counted lost and reported later, as the daemon does).  Corruption found
 * in records is not an error return: corrupt_count grows and f->error has
 * its message.
 */
int rlog__ring_flush_drain(struct rlog__ring_flush *f);

/* Is the ring's free space below its minimum mark (a fill is due)?  A
 * write offset that is not one says no (a drain reports it). */
bool rlog__ring_flush_below_mark(struct rlog__ring_flush *f);

/*
 * Finishes the file: writes anything staged, refines the TSC frequency
 * over the whole flush and rewrites the LOG_MARKER with it (as the daemon
 * does at stop).  Opens the file first if no drain did.  Does not drain.
 * Returns 0 or -errno of the file.
 */
int rlog__ring_flush_finish(struct rlog__ring_flush *f);

void rlog__ring_flush_free(struct rlog__ring_flush *f);

/*
 * The 64-bit time of the first time-stamped record of a drain (exposed for
 * its tests).
 *   have_cursor, cursor  the time of the last record before the drain
 *   readable             the flush application reads the ring's clock: now
 *                        is that clock, read after the write offset
 *   t_first, t_last      the drain's first and last 32-bit timestamps
 *   span                 t_last's time minus t_first's: the sum of the steps
 *                        between the drain's consecutive timestamps (each
 *                        32-bit delta forward, but one within
 *                        RLOG_RING_BACKSTEP below a wrap, a step back)
 * Forward from the cursor (the time one step after it with t_first's low
 * bits) unless the clock is readable and the cursor is 2^32 ticks or more
 * before now: then backward from now (the newest record is the latest time
 * <= now with t_last's low bits, or at most 2^30 ticks after now), if that
 * is not before the cursor.  Without a cursor: backward from now if
 * readable, else t_first itself.
 */
uint64_t rlog__ring_first_time(bool have_cursor, uint64_t cursor, bool readable, uint64_t now,
			       uint32_t t_first, uint32_t t_last, int64_t span);

#endif
