/*
 * sink.h - the daemon's output: a small set of sinks behind one interface.
 *
 *   drain.c ──► rlog__output_block ──► every sink's block()    file (sink_file.c: the
 *   (every drained                     (the metadata records      modes), real-time
 *    block, loss                        of thread blocks also     (sink_realtime.c), ...
 *    records)                           go to the output's
 *                                       metadata cache)
 *   end of a pass ──► rlog__output_flush ──► every sink's flush()
 *   each loop     ──► rlog__output_poll  ──► poll() (accepting consumers)
 *   stop          ──► rlog__output_finish ─► finish() (LOG_MARKER refined, close)
 *
 * A new sink (a network stream, say) is a new file implementing struct
 * rlog__sink_ops and one rlog__output_add() in daemon.c; the drain loop
 * does not change.
 *
 * Accounting (docs/SESSIONS.md, "Statistics").  Each sink counts, in its
 * struct rlog__sink_stats, what it took and what it refused.  One sink is
 * the session's primary: the file sink if the session has a file, else the
 * real-time sink.  The session's events_written, buffers_written,
 * bytes_written, log_buffers_lost and file_bytes are the primary's, and
 * the events it refused are in events_lost (a LOG_WRITE DATA_LOSS says so
 * in the file), so emitted = written + lost holds in every mode.  Blocks a
 * real-time consumer misses are counted in realtime_buffers_lost only:
 * the events are in the file, or, for a session without one, were written
 * to the real-time sink (delivered to the consumers that kept up).
 */
#ifndef RLOG_DAEMON_SINK_H
#define RLOG_DAEMON_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "counter_keep.h"
#include "metacache.h"
#include "region_abi.h"

/* One block, as the drain hands it to the output. */
struct rlog__out_block {
	uint16_t flags;          /* RLOG_BLOCK_FLAG_* */
	uint32_t pid, tid;       /* the thread the records are of, or about */
	uint64_t base_time;      /* the time cursor before the first record */
	const void *data;        /* size bytes of records */
	uint32_t size, records;
	uint32_t events;         /* application events in it (0 for daemon blocks) */
	uint32_t event_bytes;    /* their record bytes */
	uint32_t cause;          /* a daemon block of one DATA_LOSS: its RLOG_LOSS_*; else 0 */
	uint32_t pre_crc;        /* the CRC-32C (crc32c.h, from 0) of data's first pre_len */
	uint32_t pre_len;        /* bytes, computed by a drain thread; pre_len 0: none */
	bool stable;             /* data stays as it is until the output's next flush (a
	                            producer's buffer, given back only after it): a sink
	                            may write it from there instead of copying it */
};

/* What a sink took and refused.  Counters only grow, except the
 * unreported pair, which the drain resets when it writes the LOG_WRITE
 * DATA_LOSS record that reports them. */
struct rlog__sink_stats {
	uint64_t events_written, bytes_written; /* application events in blocks taken */
	uint64_t buffers_written;               /* thread blocks taken */
	uint64_t lost_events, lost_bytes;       /* events in blocks refused */
	uint64_t lost_blocks;                   /* blocks refused (LogBuffersLost) */
	uint64_t unreported_events, unreported_bytes; /* refused, not yet in a DATA_LOSS */
	uint64_t file_bytes;                    /* bytes of blocks in the file(s) */
	uint64_t file_index;                    /* NEWFILE: the file being written */
	uint64_t realtime_buffers_lost;         /* thread blocks consumers missed */
	bool full;                              /* a sequential file at its maximum: its
	                                           LOG_WRITE DATA_LOSS waits for stop */
	int last_errno;                         /* the last error, 0 if none ... */
	char what[96];                          /* ... and what it was doing */
};

struct rlog__sink;
struct rlog__output;

struct rlog__sink_ops {
	const char *name;
	/* Takes one block (stages it: nothing needs to reach the disk or a
	 * consumer before flush). */
	void (*block)(struct rlog__sink *s, const struct rlog__out_block *b);
	/* The end of a drain pass: writes out what is staged.  Returns 0 or
	 * -errno (counted in the stats). */
	int (*flush)(struct rlog__sink *s);
	/* Called once per loop of the daemon, blocks or not (NULL: nothing
	 * to do): accepting consumers, sending what they could not take. */
	void (*poll)(struct rlog__sink *s);
	/* The session ends, after the last flush: refined (or NULL) is the
	 * LOG_MARKER with the tick frequency measured over the whole session,
	 * for the file's block 0; then everything is closed.  Returns 0 or
	 * -errno. */
	int (*finish)(struct rlog__sink *s, const struct rlog_log_marker *refined);
	void (*free)(struct rlog__sink *s);
};

struct rlog__sink {
	const struct rlog__sink_ops *ops;
	struct rlog__output *out;    /* set by rlog__output_add: its metadata cache */
	struct rlog__sink_stats st;
	bool primary;                /* counts the session's events written */
};

#define RLOG__SINKS_MAX 4

struct rlog__output {
	struct rlog__sink *sinks[RLOG__SINKS_MAX];
	unsigned n;
	struct rlog__sink *file;     /* the file sink, or NULL */
	struct rlog__sink *primary;  /* the file sink, else the first sink added */
	struct rlog__metacache meta; /* the session's latest metadata records */
	struct rlog__counter_keep counters; /* its latest counter blocks, for snapshots */
	struct rlog__counter_keep system;   /* its latest system blocks, for snapshots */
};

/* Starts an empty output whose metadata cache holds meta_limit bytes. */
void rlog__output_init(struct rlog__output *o, size_t meta_limit);

/* The metadata cache's limit for a session of file mode mode and maximum
 * file size max (0: none): RLOG__META_LIMIT, and at most a quarter of the
 * maximum in circular and newfile modes, so that the metadata copies leave
 * room for events in a lap or a file (sink_file.c). */
size_t rlog__output_meta_limit(uint32_t mode, uint64_t max);

/* Adds sink s (file says it is the file sink).  Returns 0, or -ENOSPC
 * (RLOG__SINKS_MAX sinks already). */
int rlog__output_add(struct rlog__output *o, struct rlog__sink *s, bool file);

/* Hands block b to every sink. */
void rlog__output_block(struct rlog__output *o, const struct rlog__out_block *b);

/* Hands a daemon block of counter records to every sink, and keeps a copy
 * for snapshots (counter_keep.h).  A copy that finds no memory is not
 * kept (a snapshot then lacks it: a gap in its counters' seq). */
void rlog__output_counter_block(struct rlog__output *o, const struct rlog__out_block *b);

/* Hands sink s the counter blocks kept: those no snapshot took before
 * (since_last), or all; from then on, all are taken. */
void rlog__output_counters_to(struct rlog__output *o, struct rlog__sink *s, bool since_last);

/* Hands a system block (src/system) to every sink, and keeps a copy for
 * snapshots, as rlog__output_counter_block does. */
void rlog__output_system_block(struct rlog__output *o, const struct rlog__out_block *b);

/* Hands sink s the system blocks kept, as rlog__output_counters_to. */
void rlog__output_system_to(struct rlog__output *o, struct rlog__sink *s, bool since_last);

/* Hands block b to the file sink only (the LOG_WRITE DATA_LOSS records,
 * which are about the file).  Nothing if there is none. */
void rlog__output_file_block(struct rlog__output *o, const struct rlog__out_block *b);

/* A metadata record of a drained thread block, for the cache (see
 * rlog__metacache_add).  A cache that runs out of memory keeps what it
 * has: the copies then miss the record, which is counted. */
void rlog__output_meta(struct rlog__output *o, uint32_t pid, uint32_t tid, uint64_t ticks,
		       const void *rec, uint32_t size);

/* Adds the unflagged records of ID id of a daemon block (pid, tid, its
 * size bytes of records from base_time) to the metadata cache: the
 * daemon's own metadata (COUNTER_NAME, the system events' EVENT_SCHEMA). */
void rlog__output_meta_block(struct rlog__output *o, uint32_t pid, uint32_t tid, uint64_t base_time,
			     const void *data, uint32_t size, unsigned id);

/* Every sink's flush.  Returns 0 or the first -errno. */
int rlog__output_flush(struct rlog__output *o);

/* Every sink's poll. */
void rlog__output_poll(struct rlog__output *o);

/* Every sink's finish.  Returns 0 or the first -errno. */
int rlog__output_finish(struct rlog__output *o, const struct rlog_log_marker *refined);

/* Frees every sink and the cache. */
void rlog__output_free(struct rlog__output *o);

/* The primary's statistics (zeros if there is no sink). */
const struct rlog__sink_stats *rlog__output_stats(const struct rlog__output *o);

/* Blocks consumers missed, over every sink. */
uint64_t rlog__output_realtime_lost(const struct rlog__output *o);

/* The first sink error (*what, -errno), or 0. */
int rlog__output_error(const struct rlog__output *o, const char **what);

/* Renders the metadata cache as copy blocks through fn (a sink writing a
 * new file, a wrap, a consumer's stream).  Returns 0 or -errno. */
int rlog__output_copies(struct rlog__output *o, rlog__meta_emit_fn *fn, void *arg);

#endif
