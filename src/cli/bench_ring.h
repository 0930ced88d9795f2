/*
 * bench_ring.h - `ringlog bench`'s figure for the single ring
 * (ring_write_ns): the cost of rlog_ring_write of a 16-byte event,
 * time-stamped by the caller with the session's clock, while a flush thread
 * drains the ring into a log file on tmpfs as `ringlog ring-flush` does
 * (the fill event on the futex, src/ring/flush.c).
 */
#ifndef RLOG_CLI_BENCH_RING_H
#define RLOG_CLI_BENCH_RING_H

#include <stdint.h>

struct bench_ring;

/* A ring large enough for a whole run of `events` 24-byte records (so the
 * flush thread's speed cannot turn writes into cheaper discards), its
 * clock tick_source, and its flush thread writing log_path.  Returns 0 or
 * -errno. */
int bench_ring_open(struct bench_ring **out, uint64_t events, uint32_t tick_source,
		    const char *log_path);

/* Writes n events; returns ns per event.  Then waits until the flush
 * thread has drained them. */
double bench_ring_run(struct bench_ring *b, uint64_t n);

/* Stops the flush thread (a last drain), removes the log file, frees b.
 * *written, *lost: events the file took and the writes that were
 * discarded; *wakeups: fill events the flush thread received. */
void bench_ring_close(struct bench_ring *b, uint64_t *written, uint64_t *lost,
		      uint64_t *wakeups);

#endif
