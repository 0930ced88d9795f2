/*
 * counters.h - the daemon's sampling of counters (docs/FORMAT.md,
 * "COUNTER and COUNTER_NAME"): every counter period it reads the counters
 * that the session's counter_mask asks for and writes a COUNTER record for
 * each one that changed.
 *
 *   daemon loop ──► rlog__counters_tick (due every counter_period_ms)
 *                     app counters   the region's counter table
 *                     proc.*         /proc/PID/stat, status of the attached processes
 *                     perf.*         perf_event_open on their threads
 *                     system.*       perf_event_open on every CPU
 *                   ──► one daemon block per pid (0: the system) through emit()
 *                       (the daemon's: rlog__counters_to_output, into sink.h's output)
 *   stop ──────────► rlog__counters_pass (the last values)
 *
 * The region is hostile input here too: an entry of the counter table is
 * read field by field, its name copied and made printable, its pid and
 * state checked; nothing read from it is used to index anything.
 */
#ifndef RLOG_DAEMON_COUNTERS_H
#define RLOG_DAEMON_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>

#include "shm.h"

struct rlog__counters;

/* Where the blocks of counter records go: one daemon block of records
 * (COUNTER_NAME and COUNTER) about process pid (0: the system), tid 0,
 * whose records are all time-stamped base_time. */
typedef void rlog__counter_emit_fn(void *arg, uint32_t pid, uint64_t base_time, const void *data,
				   uint32_t size, uint32_t records);

/*
 * The daemon's emit: the block goes to the output arg (a struct
 * rlog__output: the log file in the session's mode, the real-time
 * consumers), and its COUNTER_NAME records to the output's metadata cache,
 * so that a new file, a wrap or a new consumer gets them again.
 */
void rlog__counters_to_output(void *arg, uint32_t pid, uint64_t base_time, const void *data,
			      uint32_t size, uint32_t records);

/*
 * Starts sampling region r, with the session's tick source; blocks go to
 * emit(arg, ...).  On a region an earlier daemon served (its
 * counter_next_id is not 0: `ringlog start --resume`), counter ids and
 * the counter statistics go on from the header's, and the application
 * counters found at the first pass start from their first reading.  Raises the daemon's open-file limit to its maximum (a
 * performance counter is an fd per thread or CPU).  Returns 0 or -ENOMEM.
 */
int rlog__counters_open(struct rlog__region *r, uint32_t tick_source, rlog__counter_emit_fn *emit,
			void *arg, struct rlog__counters **out);

/* Runs a pass if a counter period has passed since the last one (now:
 * CLOCK_MONOTONIC ns).  Returns true if it did (c NULL: nothing). */
bool rlog__counters_tick(struct rlog__counters *c, uint64_t now);

/* Runs a pass now: the session stops (the last values), or a benchmark
 * (c NULL: nothing). */
void rlog__counters_pass(struct rlog__counters *c);

/* Closes every performance counter and frees c (NULL: nothing). */
void rlog__counters_close(struct rlog__counters *c);

/* What a pass did (for the benchmark and the tests): counters read and
 * records written in all. */
void rlog__counters_totals(const struct rlog__counters *c, uint64_t *reads, uint64_t *records);

#endif
