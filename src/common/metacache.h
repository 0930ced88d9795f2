/*
 * metacache.h - the latest metadata records of a session (EVENT_SCHEMA,
 * THREAD_NAME, PROCESS_NAME, and the daemon's COUNTER_NAME), kept so that
 * they can be written again where a reader needs them: at the start of every new file (newfile), after
 * every wrap of a circular file, at the start of a real-time consumer's
 * stream, and in a snapshot.  docs/FORMAT.md, "Metadata copies".
 *
 *   thread blocks ──► rlog__metacache_add (one record at a time, with its
 *                     64-bit time and its block's pid/tid)
 *                          │
 *       key               ▼              kept
 *       (pid, event_id)   EVENT_SCHEMA   the latest by time
 *       (pid, tid)        THREAD_NAME    the latest by time
 *       pid               PROCESS_NAME   the latest by time
 *       (pid, counter_id) COUNTER_NAME   the latest by time (a daemon block's: tid 0)
 *                          │
 *   rlog__metacache_render ──► one copy block per (pid, tid), records in
 *                              time order (TIME_SYNC where needed), flags
 *                              RLOG_BLOCK_FLAG_METADATA, handed to emit()
 *
 * Bounded: each entry costs its record's bytes plus RLOG__META_OVERHEAD;
 * when the total passes the limit given at init, the entries with the
 * oldest times are dropped (and counted in evicted): a reader then shows
 * the events that needed them raw, or without a name.  The daemon's limit
 * is 1 MiB, and a quarter of MaximumFileSize for a circular or newfile
 * session, so that the copies always leave room for events.
 *
 * Not thread-safe: one owner (the daemon's loop, or one tail).
 */
#ifndef RLOG_COMMON_METACACHE_H
#define RLOG_COMMON_METACACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "map.h"

/* What an entry costs besides its record: its share of a copy block's
 * header (48 bytes) and of a TIME_SYNC record (16). */
#define RLOG__META_OVERHEAD 64u

/* The daemon's default limit, bytes. */
#define RLOG__META_LIMIT (1u << 20)

/* Data bytes of one copy block at most (a group larger than this is split; the largest record, 65548 bytes, fits). */
#define RLOG__META_BLOCK_MAX 131072u

struct rlog__meta_entry {
	uint64_t ticks;    /* the record's 64-bit time */
	uint32_t pid, tid; /* of the block the record was in */
	uint16_t id;       /* RLOG_ID_EVENT_SCHEMA, _THREAD_NAME, _PROCESS_NAME or _COUNTER_NAME */
	uint32_t size;     /* bytes of rec: the whole record, fill included */
	uint8_t *rec;      /* the record as written; NULL once evicted */
};

struct rlog__metacache {
	struct rlog__meta_entry *v; /* one per key ever seen (live or evicted) */
	size_t n, cap;
	struct rlog__map schemas;   /* pid << 16 | event_id -> index in v */
	struct rlog__map threads;   /* pid << 32 | tid -> index */
	struct rlog__map procs;     /* pid -> index */
	struct rlog__map counters;  /* pid << 32 | counter_id -> index */
	size_t live;                /* entries with a record */
	size_t bytes;               /* their cost: an upper bound on the bytes (block
	                               headers included) that render hands out */
	size_t limit;               /* the bound on bytes */
	uint64_t evicted;           /* entries dropped to stay within limit */
	uint64_t version;           /* changes with every change of the content */
};

/* Starts an empty cache bounded to limit bytes (at least one entry of the
 * largest record is always kept). */
void rlog__metacache_init(struct rlog__metacache *c, size_t limit);

/*
 * Takes note of one record of a thread block (pid, tid) at 64-bit time
 * ticks (or a COUNTER_NAME of a daemon block, tid 0): rec holds size
 * bytes, the whole record (header to fill).  Records that are not
 * unflagged metadata, EVENT_SCHEMA records shorter than their event_id and
 * COUNTER_NAME records shorter than their counter_id are ignored.  A record replaces the entry of its key if
 * it is not older.  Returns 0, or -ENOMEM (the cache is unchanged).
 */
int rlog__metacache_add(struct rlog__metacache *c, uint32_t pid, uint32_t tid, uint64_t ticks,
			const void *rec, uint32_t size);

/*
 * Takes note of every metadata record of a valid thread block (base_time,
 * size bytes of records at data): the records are decoded and timed; the
 * walk stops at the first that is malformed.  Returns 0 or -ENOMEM.
 */
int rlog__metacache_block(struct rlog__metacache *c, uint32_t pid, uint32_t tid,
			  uint64_t base_time, const void *data, uint32_t size);

/* Called by rlog__metacache_render for each copy block; returns 0 to go on
 * or a negative errno to stop the rendering with it. */
typedef int rlog__meta_emit_fn(void *arg, uint32_t pid, uint32_t tid, uint64_t base_time,
			       const void *data, uint32_t size, uint32_t records);

/*
 * Renders the cache as copy blocks: one per (pid, tid) in (pid, tid)
 * order (split past RLOG__META_BLOCK_MAX data bytes), its records in time
 * order, a TIME_SYNC before a record 2^31 ticks or more after the one
 * before it; base_time is the first record's time.  Returns 0, -ENOMEM or
 * emit's error.
 */
int rlog__metacache_render(struct rlog__metacache *c, rlog__meta_emit_fn *emit, void *arg);

void rlog__metacache_free(struct rlog__metacache *c);

#endif
