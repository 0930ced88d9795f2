/*
 * counter_keep.h - the daemon's latest counter blocks, kept for snapshots
 * (docs/FORMAT.md, "Snapshots").
 *
 * COUNTER records are not in the session's buffers: the daemon writes
 * them straight to its output (counters.c).  A snapshot copies the
 * buffers, so without this it would hold none, and a flight recorder,
 * which has no file, would record its counters nowhere.  So the output
 * keeps a copy of its last counter blocks, up to RLOG__COUNTER_KEEP_BYTES
 * (the oldest go first), and a snapshot writes the ones no earlier
 * snapshot held (--since-last) or all it has:
 *
 *   counters.c ──► rlog__output_counter_block ──► every sink, and a copy here
 *   snapshot.c ──► rlog__output_counters_to(sink, since_last)
 *
 * In the copy, every COUNTER record carries its value (flag VALUE, Length
 * 24): a snapshot starts in the middle of each counter's records, and its
 * reader must not wait for the next record that carries the value.  The
 * value is followed here, record by record, from each counter's first
 * record (which always carries it); a record after a gap in its counter's
 * seq (a block the counters lost to a failed allocation) is kept as it
 * was, until the next that carries the value.
 */
#ifndef RLOG_DAEMON_COUNTER_KEEP_H
#define RLOG_DAEMON_COUNTER_KEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The data bytes of counter blocks kept (not part of the ABI). */
#define RLOG__COUNTER_KEEP_BYTES (1u << 20)

/* The same keep holds the latest system blocks (src/system: their records
 * are not in the buffers either), up to this many bytes: a flight
 * recorder's window of scheduling context (docs/FORMAT.md, "System
 * events").  Their records are copied as they are. */
#define RLOG__SYSTEM_KEEP_BYTES (8u << 20)

struct rlog__kept_block;

/* What the value of counter_id is after its records so far. */
struct rlog__kept_value {
	uint64_t value;
	uint16_t next_seq;          /* the seq its next record should have */
	bool known;
};

struct rlog__counter_keep {
	struct rlog__kept_block **v; /* a ring of cap: n blocks from head, oldest first */
	size_t cap, head, n;
	size_t bytes, limit;         /* data bytes kept; at most limit */
	uint64_t first;              /* the number of v[head] (blocks: 0, 1, 2, ...) */
	uint64_t taken;              /* blocks numbered below it were in a snapshot */
	struct rlog__kept_value *values; /* by counter_id (the daemon's: 1, 2, 3, ...) */
	size_t nvalues;
};

/* Starts an empty keep of at most limit data bytes. */
void rlog__counter_keep_init(struct rlog__counter_keep *k, size_t limit);

/* Frees everything kept. */
void rlog__counter_keep_free(struct rlog__counter_keep *k);

#endif
