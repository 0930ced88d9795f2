/*
 * ringlog/reader.h - the reader API: read a ringlog log file in time order.
 *
 *   #include <ringlog/reader.h>
 *
 *   struct rlog_reader *r;
 *   struct rlog_event ev;
 *   int rc = rlog_reader_open("trace.rlog", &r);
 *   if (rc < 0)
 *       return rc;                        // -ENOENT, -EBADMSG, -EPROTO, ...
 *   while ((rc = rlog_reader_next(r, &ev)) > 0)
 *       printf("%lld %u %u\n", (long long)ev.time_ns, ev.tid, ev.id);
 *   for (size_t i = 0; i < rlog_reader_damage_count(r); i++) {
 *       struct rlog_damage d;
 *       rlog_reader_damage(r, i, &d);
 *       fprintf(stderr, "%s\n", d.message);
 *   }
 *   rlog_reader_close(r);
 *
 * The file is mapped read-only and walked once at open: every block header
 * is checked, every block's crc32 is verified and every record of a block is
 * decoded and its 64-bit time reconstructed.  A block that fails any check
 * is skipped whole and recorded as a damaged region; the reader then looks
 * for the next valid block header 4 bytes at a time and goes on.  A last
 * block cut short by the end of the file gives every complete, well-formed
 * record it holds (its checksum cannot be verified; its damage entry says
 * so).  Block sequence numbers are checked as they go: blocks missing from
 * the file, a block read twice (dropped) and blocks out of order are
 * reported like damage.  The same pass collects the metadata records:
 * event schemas, thread and process names, from the file's own records and
 * from its copy blocks (format 1.2), which are read for that only: their
 * records are not returned, counted or shown to a visitor.  A circular
 * file (1.2) is read in time order, its older lap first (the file is mapped
 * a second time for that); the zeros at the end of a preallocated file
 * are not damage.  The rules are docs/FORMAT.md's.  rlog_reader_next() then merges the per-thread streams
 * of events (each thread's blocks are in time order in the file) by time
 * with a binary heap, finding the threads' blocks again with a forward
 * scan of block headers that keeps a bounded queue of block offsets per
 * thread.  Memory is proportional to the number of threads, damaged
 * regions and schema changes in the file (plus that bound, 2 MiB), never
 * to the number of blocks or events, so files larger than RAM stream; pages
 * of the mapping behind the read position are given back to the kernel as
 * reading goes on.
 *
 * Event IDs and payload layouts (LOG_MARKER, DATA_LOSS, RAW_*) are in
 * <ringlog/format.h> and docs/FORMAT.md.
 *
 * The reader never prints.  A reader is not thread-safe: use one per thread.
 */
#ifndef RINGLOG_READER_H
#define RINGLOG_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ringlog/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
/* Symbol visibility is a GCC/Clang attribute; the library is built with
 * -fvisibility=hidden and exports only what is marked. */
#define RLOG__READER_EXPORT __attribute__((visibility("default")))
#else
#define RLOG__READER_EXPORT
#endif

struct rlog_reader; /* opaque */

/* What the file header and the LOG_MARKER say.  Read-only. */
struct rlog_reader_info {
	uint16_t version_major;       /* file format major version (1 or 2) */
	uint16_t version_minor;       /* file format minor version (may exceed ours) */
	uint32_t tick_source;         /* RLOG_TICK_TSC or RLOG_TICK_MONOTONIC */
	uint64_t tick_freq_hz;        /* ticks per second (never 0) */
	uint64_t start_ticks;         /* LOG_MARKER sync_ticks: time_ns 0 */
	uint64_t sync_realtime_ns;    /* CLOCK_REALTIME at start_ticks, ns since 1970 */
	uint64_t sync_monotonic_ns;   /* CLOCK_MONOTONIC_RAW at start_ticks */
	uint64_t created_realtime_ns; /* when the daemon created the file */
	uint32_t buffer_size;         /* session buffer size in bytes */
	uint32_t buffer_count;        /* session buffers in the pool */
	char session_name[65];        /* NUL-terminated */
	uint64_t file_size;           /* bytes in the file (or memory image) */
	uint64_t block_count;         /* blocks indexed (a truncated last block included) */
	uint64_t thread_count;        /* distinct (pid, tid) streams */
	bool marker_copy;             /* the clock is the file header's copy of the
				       * LOG_MARKER: block 0 could not be read */
	/* The LOG_MARKER's record of CLOCK_REALTIME's error, adjtimex(2)'s
	 * (docs/FORMAT.md, LOG_MARKER).  clock_maxerror_us is
	 * RLOG_CLOCK_ERROR_NOT_RECORDED (0: an older file), _UNSYNC (the
	 * kernel said the clock was not synchronized), or the maximum error
	 * in us (RLOG_CLOCK_ERROR_MAX: that or more); clock_esterror_us is
	 * the estimated error in us (65535: that or more), 0 unless
	 * clock_maxerror_us is a maximum error.  Appended in 0.2 (the reader
	 * allocates this struct: older callers read the same prefix). */
	uint16_t clock_esterror_us;
	uint16_t clock_maxerror_us;
};

/* One event.  Read-only; payload is valid until the next rlog_reader_next()
 * or rlog_reader_close() on the same reader. */
struct rlog_event {
	uint64_t ticks;        /* 64-bit tick time */
	int64_t time_ns;       /* ns since the start (LOG_MARKER), negative if before */
	uint32_t pid;          /* process of the thread */
	uint32_t tid;          /* thread */
	uint16_t id;           /* real event ID (FLAGGED resolved) */
	uint16_t flag;         /* flag value if flagged, else 0 */
	uint16_t length;       /* payload bytes */
	bool flagged;          /* written as a FLAGGED record */
	bool has_time;         /* the record carried a timestamp (else: the time of
				* the previous record of the thread) */
	bool from_daemon;      /* in a block the daemon synthesised (LOG_MARKER,
				* DATA_LOSS, ...) */
	const void *payload;   /* length bytes (not NUL-terminated) */
	uint64_t offset;       /* file offset of the record's header word */
	uint32_t size;         /* bytes the record takes in the file, fill included */
	uint64_t block_offset; /* file offset of the block holding the record */
};

/* A damaged region of the file, or a break in its block sequence.
 * Read-only. */
struct rlog_damage {
	uint64_t offset;         /* file offset where the region starts (MISSING:
				  * of the block after the missing ones) */
	uint64_t length;         /* bytes of the file skipped or unverifiable
				  * (0 for MISSING and ORDER) */
	int kind;                /* RLOG_DAMAGE_* */
	int64_t records_skipped; /* records not read, -1 if not knowable (ORDER: 0;
				  * DUPLICATE: records read once already) */
	const char *message;     /* "damaged block at offset N: ...", owned by
				  * the reader, valid until rlog_reader_close() */
	uint64_t seq_first;      /* MISSING, DUPLICATE, ORDER: the block sequence */
	uint64_t seq_last;       /* numbers concerned, seq_first..seq_last; else 0 */
};

#define RLOG_DAMAGE_BLOCK     1 /* a damaged block or bytes that are no block: skipped */
#define RLOG_DAMAGE_TRUNCATED 2 /* the last block, cut short by the end of the file */
#define RLOG_DAMAGE_MISSING   3 /* blocks whose sequence numbers are not in the file */
#define RLOG_DAMAGE_DUPLICATE 4 /* blocks whose sequence numbers were read before: skipped */
#define RLOG_DAMAGE_ORDER     5 /* blocks after a later one: read where they are */

/* rlog_reader_set_flags() flags. */
#define RLOG_READER_TIME_SYNC 0x1u /* also return TIME_SYNC records as events */

/*
 * Opens the log file at path and indexes it (see the top of this file).
 * Damage past the file header does not fail the open: it is recorded and
 * reported through rlog_reader_damage().
 *   path  the file; it must not shrink while the reader is open (the mapping
 *         would fault)
 *   out   receives the reader, to be closed with rlog_reader_close()
 * Returns 0, or
 *   -EINVAL   path or out is NULL
 *   -ENOENT, -EACCES, -EISDIR, ...  the file cannot be opened or mapped
 *   -ESPIPE   not a regular file (a FIFO, a socket, a device): refused
 *             without waiting for a FIFO's writer
 *   -EBADMSG  not a ringlog log file: too short, bad magic or bad file header
 *   -EPROTO   a ringlog file of another major version
 *   -ENODATA  a ringlog file with no LOG_MARKER to time it by (the daemon
 *             wrote no block, or block 0 is damaged and the file header
 *             holds no valid copy of its LOG_MARKER)
 *   -EFBIG    the file does not fit in the address space
 *   -ENOMEM   out of memory
 */
RLOG__READER_EXPORT int rlog_reader_open(const char *path, struct rlog_reader **out);

/*
 * Same as rlog_reader_open() on size bytes at data, which the caller keeps
 * valid and unchanged until rlog_reader_close() (nothing is copied).  Any
 * bytes are safe to pass: this is the fuzzing entry point.
 * Returns 0, -EINVAL (data NULL with size > 0, or out NULL), -EBADMSG,
 * -EPROTO, -ENODATA or -ENOMEM, as rlog_reader_open().
 */
RLOG__READER_EXPORT int rlog_reader_open_mem(const void *data, size_t size,
					     struct rlog_reader **out);

/*
 * Sets reading options, before the first rlog_reader_next().
 *   flags  RLOG_READER_* or'ed; 0 restores the defaults
 * Returns 0, -EINVAL (unknown flag, r NULL) or -EBUSY (events already read).
 */
RLOG__READER_EXPORT int rlog_reader_set_flags(struct rlog_reader *r, unsigned flags);

/* The file's header and LOG_MARKER information; valid until close.
 * Never NULL for an open reader. */
RLOG__READER_EXPORT const struct rlog_reader_info *rlog_reader_info(const struct rlog_reader *r);

/*
 * Reads the next event in global time order: the threads' records merged
 * by 64-bit ticks, events of equal ticks in file order.  Each thread's
 * records come in their own record order, never reordered: a thread whose
 * time goes back (a TIME_SYNC to an earlier time, a block out of order)
 * keeps its order, so the output is sorted by time only where no thread's
 * time goes back (docs/FORMAT.md, "Time").  TIME_SYNC records are skipped
 * unless RLOG_READER_TIME_SYNC is set.
 *   ev  receives the event; its payload stays valid until the next call
 * Returns 1 (an event), 0 (end of the file), or
 *   -EINVAL  r or ev is NULL
 *   -ENOMEM  out of memory (building the merge on the first call, or
 *            recording a region found damaged while reading)
 * A block that no longer matches what was indexed at open (the file changed
 * under the reader) is abandoned and added to the damage list.
 */
RLOG__READER_EXPORT int rlog_reader_next(struct rlog_reader *r, struct rlog_event *ev);

/* Damaged regions found so far, in file order (all of them once open has
 * returned, unless the file changes under the reader). */
RLOG__READER_EXPORT size_t rlog_reader_damage_count(const struct rlog_reader *r);

/*
 * Describes damaged region i (0 .. rlog_reader_damage_count() - 1).
 * Returns 0, -EINVAL (r or out NULL) or -ERANGE (no region i).
 */
RLOG__READER_EXPORT int rlog_reader_damage(const struct rlog_reader *r, size_t i,
					   struct rlog_damage *out);

/*
 * A short English description of a negative return of this API, for the
 * open errors that strerror() words badly (-EBADMSG: "not a ringlog log
 * file", -EPROTO, -ENODATA); other values give strerror()'s text.  Never
 * NULL; the string is static.
 */
RLOG__READER_EXPORT const char *rlog_reader_strerror(int err);

/*
 * rlog_reader_schema - the schema of an event's type: the latest
 * EVENT_SCHEMA record of the event's process (pid) for its ID at or before
 * the event in time order (the order of rlog_reader_next: by ticks, then
 * file offset).  The schemas of the whole file are known from the open, so
 * this holds for any event of the file, asked in any order.  Schemas for
 * the metadata IDs (EVENT_SCHEMA, THREAD_NAME, PROCESS_NAME) are ignored.
 * @r:  the reader
 * @ev: an event returned by rlog_reader_next (its pid, id, ticks and offset
 *      are used)
 * Returns the schema (valid until rlog_reader_close), or NULL if the event
 * type has none (then its payload is raw bytes).  Whether the payload
 * matches the schema is rlog_event_field_count()'s answer.
 */
RLOG__READER_EXPORT const struct rlog_schema *rlog_reader_schema(struct rlog_reader *r,
								 const struct rlog_event *ev);

/*
 * rlog_reader_thread_name / rlog_reader_process_name - the latest name
 * recorded (THREAD_NAME / PROCESS_NAME records) for a thread or process
 * anywhere in the file.  Returns a NUL-terminated string valid until
 * rlog_reader_close, or NULL if none was recorded.
 */
RLOG__READER_EXPORT const char *rlog_reader_thread_name(struct rlog_reader *r, uint32_t pid,
							uint32_t tid);
RLOG__READER_EXPORT const char *rlog_reader_process_name(struct rlog_reader *r, uint32_t pid);

/*
 * rlog_event_field - decode field idx of an event with schema s.  Call for
 * idx = 0, 1, ... in order with *off = 0 before the first field; *off is
 * advanced past each field.
 * Returns 1 with *v filled, or -EBADMSG if the payload does not hold the
 * field (the event does not match its schema), -EINVAL for a bad idx.
 */
RLOG__READER_EXPORT int rlog_event_field(const struct rlog_schema *s, const struct rlog_event *ev,
					 unsigned idx, size_t *off, struct rlog_value *v);

/*
 * rlog_event_field_count - how many fields an event carries under its
 * schema: field_count, but 0 for the END record of a span (flag
 * RLOG_SPAN_END), which carries none.
 * Returns that count (decode them with rlog_event_field()), or -EBADMSG if
 * the payload does not hold exactly those fields, or if a span event is not
 * a FLAGGED record with flag RLOG_SPAN_BEGIN or RLOG_SPAN_END (then print
 * it raw, marked as not matching), or -EINVAL if s or ev is NULL.
 */
RLOG__READER_EXPORT int rlog_event_field_count(const struct rlog_schema *s,
					       const struct rlog_event *ev);

/*
 * rlog_reader_schema_latest - the latest EVENT_SCHEMA record of process pid
 * for event ID id anywhere in the file (by time), for callers that count
 * events without reading them in time order (ringlog stats).
 * Returns the schema (valid until rlog_reader_close), or NULL.
 */
RLOG__READER_EXPORT const struct rlog_schema *rlog_reader_schema_latest(struct rlog_reader *r,
									uint32_t pid, uint16_t id);

/*
 * rlog_reader_bad_schemas - EVENT_SCHEMA records that could not be decoded
 * (malformed, or describing one of ringlog's metadata IDs) and were
 * ignored; the events they meant to describe read as raw payloads.  They
 * are not damaged regions: the blocks holding them are sound.
 *   first_offset  if not NULL, receives the file offset of the first such
 *                 record (0 if none)
 * Returns the count.
 */
RLOG__READER_EXPORT uint64_t rlog_reader_bad_schemas(const struct rlog_reader *r,
						     uint64_t *first_offset);

/*
 * rlog_reader_thread - thread i of the file (0 .. info->thread_count - 1),
 * in (pid, tid) order: every thread with at least one valid block.
 * Returns 0 with *pid and *tid set, -EINVAL (NULL argument) or -ERANGE.
 */
RLOG__READER_EXPORT int rlog_reader_thread(const struct rlog_reader *r, size_t i, uint32_t *pid,
					   uint32_t *tid);

/*
 * rlog_reader_time_ns - a 64-bit tick time as nanoseconds since the start
 * of the trace (the LOG_MARKER), negative before it: what rlog_event's
 * time_ns holds, for the tick times of struct rlog_block.
 */
RLOG__READER_EXPORT int64_t rlog_reader_time_ns(const struct rlog_reader *r, uint64_t ticks);

/* One valid block, as the open pass hands it to a visitor.  Read-only. */
struct rlog_block {
	uint64_t offset;        /* file offset of the block header */
	uint32_t pid;           /* producer process */
	uint32_t tid;           /* producer thread */
	uint16_t flags;         /* RLOG_BLOCK_FLAG_* */
	bool truncated;         /* the last block, cut short: data holds its
				 * complete records only */
	uint32_t record_count;  /* records in data, TIME_SYNC included */
	uint32_t size;          /* bytes of records at data */
	const void *data;       /* the records (layout in <ringlog/format.h>), valid
				 * during the call only */
	uint64_t base_time;     /* 64-bit ticks before the first record */
	uint64_t first_ticks;   /* time of its first record (base_time if none) */
	uint64_t last_ticks;    /* time of its last record (base_time if none) */
};

/* A block visitor: returns 0 to go on, or a negative value to stop the open,
 * which then returns that value. */
typedef int (*rlog_block_fn)(void *arg, const struct rlog_block *b);

/*
 * rlog_reader_open_visit / rlog_reader_open_mem_visit - rlog_reader_open()
 * and rlog_reader_open_mem() that also call fn(arg, block) for every valid
 * block that is read (not a duplicate: docs/FORMAT.md, "Block sequence"),
 * and for the readable part of a truncated last block, in file order,
 * during the open pass, while the block is hot in the cache: a caller that
 * only needs totals reads the file once (rlog_reader_open_count() is such
 * a caller).  The LOG_MARKER's information (rlog_reader_info()) is
 * complete from the first call on when block 0 is read or the file header
 * holds its copy; names and schemas are complete only once open has
 * returned.
 * Returns what rlog_reader_open() / rlog_reader_open_mem() return, or fn's
 * negative value (the reader is then closed).
 */
RLOG__READER_EXPORT int rlog_reader_open_visit(const char *path, rlog_block_fn fn, void *arg,
					       struct rlog_reader **out);
RLOG__READER_EXPORT int rlog_reader_open_mem_visit(const void *data, size_t size, rlog_block_fn fn,
						   void *arg, struct rlog_reader **out);

/* ------------------------------------------------------------------ */
/* ringlog's own records                                               */
/* ------------------------------------------------------------------ */

/*
 * rlog_record_kind - what a record of real ID id is (RLOG_RECORD_* of
 * <ringlog/format.h>): an application event, TIME_SYNC, metadata, LOG_MARKER,
 * DATA_LOSS or COUNTER.  Every FLAGGED record is an application event.
 * This is the definition behind the accounting identity (emitted =
 * written + lost), which counts events only.
 */
RLOG__READER_EXPORT int rlog_record_kind(uint16_t id, bool flagged);

/* A decoded LOG_MARKER payload (layout: struct rlog_log_marker). */
struct rlog_marker {
	uint64_t tick_freq_hz;      /* ticks per second (never 0) */
	uint64_t sync_ticks;        /* the trace's time origin (time_ns 0) ... */
	uint64_t sync_realtime_ns;  /* ... CLOCK_REALTIME then, ns since 1970 */
	uint64_t sync_monotonic_ns; /* ... CLOCK_MONOTONIC_RAW then */
	uint32_t tick_source;       /* RLOG_TICK_*, or a value a later version defines */
	uint32_t buffer_size;       /* session buffer size in bytes */
	uint32_t buffer_count;      /* session buffers in the pool */
	char session_name[65];      /* NUL-terminated */
};

/*
 * rlog_event_marker - decodes the LOG_MARKER event ev into out.
 * Returns 0, -EINVAL (NULL argument, or ev is not an unflagged LOG_MARKER)
 * or -EBADMSG (payload shorter than 112 bytes, or tick_freq_hz 0: never
 * for an event the reader returned).
 */
RLOG__READER_EXPORT int rlog_event_marker(const struct rlog_event *ev, struct rlog_marker *out);

/*
 * A decoded DATA_LOSS payload, every field of the three lengths
 * <ringlog/format.h> and docs/FORMAT.md ("DATA_LOSS") define: struct
 * rlog_data_loss (24 bytes), rlog_data_loss_blocks (32: a block count,
 * the REAL_TIME cause), rlog_data_loss_range (48: blocks and a time
 * range, the OVERWRITTEN cause).  `fields` says which the payload had;
 * the others are 0.  Fields are added at the end only.
 */
struct rlog_loss {
	uint64_t events;  /* events lost */
	uint64_t bytes;   /* the record bytes they would have taken */
	uint32_t cause;   /* RLOG_LOSS_*, or a value a later version defines */
	uint32_t fields;  /* RLOG_LOSS_HAS_*: what the payload carried beyond the first 24 bytes */
	uint64_t blocks;  /* RLOG_LOSS_HAS_BLOCKS: thread blocks missed (REAL_TIME) or buffers
	                     overwritten (OVERWRITTEN) */
	uint64_t first_time; /* RLOG_LOSS_HAS_RANGE: 64-bit ticks; the events lost lie after
	                        first_time and at or before last_time (rlog_reader_time_ns
	                        gives their ns) */
	uint64_t last_time;
};

#define RLOG_LOSS_HAS_BLOCKS 0x1u /* Length >= 32: blocks */
#define RLOG_LOSS_HAS_RANGE  0x2u /* Length >= 48: first_time, last_time */

/*
 * rlog_event_loss - decodes the DATA_LOSS event ev into out (all of
 * struct rlog_loss: a payload longer than the longest known is read for
 * what is known).
 * Returns 0, -EINVAL (NULL argument, or ev is not an unflagged DATA_LOSS)
 * or -EBADMSG (payload shorter than 24 bytes: never for an event the
 * reader returned).
 */
RLOG__READER_EXPORT int rlog_event_loss(const struct rlog_event *ev, struct rlog_loss *out);

/*
 * rlog_event_time_sync - the 64-bit tick time a TIME_SYNC event carries
 * (returned with RLOG_READER_TIME_SYNC).
 * Returns 0 with *ticks set, -EINVAL (NULL argument, not an unflagged
 * TIME_SYNC) or -EBADMSG (Length not 8).
 */
RLOG__READER_EXPORT int rlog_event_time_sync(const struct rlog_event *ev, uint64_t *ticks);

/*
 * rlog_raw_field - the element type of the RAW_* array ID id (RAW_U8 ..
 * RAW_DOUBLE, flagged or not): a static field whose type is RLOG_FIELD_U8
 * .. RLOG_FIELD_F64 and whose name is "value".  NULL for any other ID
 * (RAW_STRING included: its payload is UTF-8 bytes, no array).
 */
RLOG__READER_EXPORT const struct rlog_field *rlog_raw_field(uint16_t id);

/*
 * rlog_event_raw_count - how many elements the RAW_* array event ev holds.
 * Returns the count, -EINVAL (NULL, or not RAW_U8 .. RAW_DOUBLE) or
 * -EBADMSG (Length is not a multiple of the element size: not damage, show
 * the payload as bytes).
 */
RLOG__READER_EXPORT int rlog_event_raw_count(const struct rlog_event *ev);

/*
 * rlog_event_raw_value - element i of the RAW_* array event ev, decoded
 * into *v (v->field is rlog_raw_field(ev->id); v.v.u, v.v.i or v.v.f by
 * its type).  Returns 1, or -EINVAL (NULL argument, not a RAW array, i out
 * of range).
 */
RLOG__READER_EXPORT int rlog_event_raw_value(const struct rlog_event *ev, unsigned i,
					     struct rlog_value *v);

/* A decoded COUNTER record (layout: struct rlog_counter_delta), with what
 * the reader knows of its counter.  Read-only. */
struct rlog_counter {
	uint32_t counter_id;  /* the counter, with the event's pid */
	uint16_t flags;       /* RLOG_COUNTER_FLAG_* */
	uint16_t seq;         /* the counter's record number, modulo 2^16 */
	uint64_t delta;       /* increase since the counter's previous record; after a
			       * reset (flags RESET), the value since 0 */
	uint64_t value;       /* the counter's absolute value, if value_known */
	bool value_known;     /* the record carries the value, or the reader followed
			       * every record of the counter since one that did */
	bool gap;             /* records of the counter are missing just before this
			       * one (its seq is not the previous one's + 1) */
	const char *name;     /* the counter's name (COUNTER_NAME), NULL if none;
			       * valid until rlog_reader_close */
	uint8_t source;       /* RLOG_COUNTER_SRC_*, 0 without a name */
	uint8_t unit;         /* RLOG_COUNTER_UNIT_* */
	uint8_t info;         /* RLOG_COUNTER_INFO_* */
};

/*
 * rlog_event_counter - decodes the COUNTER event ev into out.  The value
 * is known when the record carries it (every RLOG_COUNTER_KEY_EVERY-th
 * record of a counter, a reset, the first after a new baseline), or, for
 * the event rlog_reader_next() returned last, when the reader has
 * returned every record of the counter since one that carried it (it
 * follows each counter as it returns its records: the value is the
 * previous one plus the delta).  docs/FORMAT.md, "COUNTER".
 * Returns 0, -EINVAL (NULL argument, or ev is not an unflagged COUNTER) or
 * -EBADMSG (payload too short: never for an event the reader returned).
 */
RLOG__READER_EXPORT int rlog_event_counter(struct rlog_reader *r, const struct rlog_event *ev,
					   struct rlog_counter *out);

/*
 * rlog_reader_counters_from - carries over what reader prev knew of each
 * counter (its last seq and value) into r, which reads the part of the
 * same stream that follows prev's (ringlog tail reads each delivery of a
 * real-time stream as a file of its own): the first record of a counter in
 * r then follows from prev's last, as within one file.  Call it before the
 * first rlog_reader_next() on r; prev may be closed afterwards.
 * Returns 0, -EINVAL (NULL, or r has read events) or -ENOMEM.
 */
RLOG__READER_EXPORT int rlog_reader_counters_from(struct rlog_reader *r,
						  const struct rlog_reader *prev);

/* A decoded COUNTER_NAME payload (layout: struct rlog_counter_name, then
 * the name).  Read-only; name points into the event's payload. */
struct rlog_counter_desc {
	uint32_t counter_id;  /* the counter named, with the event's pid */
	uint8_t source;       /* RLOG_COUNTER_SRC_*, or a value a later version defines */
	uint8_t unit;         /* RLOG_COUNTER_UNIT_* */
	uint8_t info;         /* RLOG_COUNTER_INFO_* */
	const char *name;     /* name_len bytes, not NUL-terminated */
	size_t name_len;      /* 1..255 */
};

/*
 * rlog_event_counter_name - decodes the COUNTER_NAME event ev into out.
 * Returns 0, -EINVAL (NULL argument, or ev is not an unflagged
 * COUNTER_NAME) or -EBADMSG (shorter than its name, or name_len 0: such a
 * record names nothing, and readers ignore it).
 */
RLOG__READER_EXPORT int rlog_event_counter_name(const struct rlog_event *ev,
						struct rlog_counter_desc *out);

/*
 * rlog_reader_counter_name - the latest name recorded (COUNTER_NAME) for
 * counter counter_id of process pid (0: the system's counters), and, if
 * not NULL, its source, unit and info (RLOG_COUNTER_SRC_*, _UNIT_*,
 * _INFO_*).  Returns a NUL-terminated string valid until
 * rlog_reader_close, or NULL if none was recorded.
 */
RLOG__READER_EXPORT const char *rlog_reader_counter_name(const struct rlog_reader *r,
							 uint32_t pid, uint32_t counter_id,
							 uint8_t *source, uint8_t *unit,
							 uint8_t *info);

/* ------------------------------------------------------------------ */
/* Totals (ringlog stats)                                              */
/* ------------------------------------------------------------------ */

/* A file's totals, counted during the open pass.  Read-only. */
struct rlog_count {
	uint64_t events;          /* application events (RLOG_RECORD_EVENT) */
	uint64_t bytes;           /* the bytes their records take, fill included */
	uint64_t metadata;        /* metadata records */
	uint64_t loss_records;    /* DATA_LOSS records ... */
	uint64_t lost_events;     /* ... the sum of their events ... */
	uint64_t lost_bytes;      /* ... and of their bytes */
	bool timed;               /* first_ticks and last_ticks hold: */
	uint64_t first_ticks;     /* the first and last record times of the */
	uint64_t last_ticks;      /* thread blocks (not the daemon's) */
	uint64_t damage;          /* damage reports (rlog_reader_damage_count) */
	uint64_t skipped_records; /* records they say were skipped (where known) */
	uint64_t damaged;         /* reports of damaged, truncated and missing
				   * blocks that cost records, or an unknown
				   * number (cause "damaged") ... */
	uint64_t damaged_records; /* ... the records they are known to cost ... */
	uint64_t damaged_bytes;   /* ... and the file bytes they cover */
	size_t ids, threads, causes; /* rows of the tables below */
};

/* Events of one event ID in one process. */
struct rlog_count_id {
	uint32_t pid;
	uint16_t id;              /* real ID */
	uint64_t events, bytes;
};

/* One thread's totals (its own blocks and the daemon's blocks about it). */
struct rlog_count_thread {
	uint32_t pid, tid;
	uint64_t events, bytes, metadata;
	uint64_t lost_events, lost_bytes; /* its DATA_LOSS records */
	bool timed;               /* first_ticks and last_ticks hold (a thread */
	uint64_t first_ticks;     /* block with records) */
	uint64_t last_ticks;
};

/* The DATA_LOSS records of one cause. */
struct rlog_count_loss {
	uint32_t cause;
	uint64_t records, events, bytes;
};

/* The COUNTER records of one counter (pid, counter_id). */
struct rlog_count_counter {
	uint32_t pid;             /* 0: a counter of the whole system */
	uint32_t counter_id;
	const char *name;         /* as rlog_reader_counter_name(), or NULL */
	uint8_t source, unit;     /* RLOG_COUNTER_SRC_*, RLOG_COUNTER_UNIT_* (0 without a name) */
	uint64_t records;         /* its COUNTER records */
	uint64_t resets;          /* of which resets */
	uint64_t total;           /* the sum of their deltas (modulo 2^64) */
	uint64_t first_delta;     /* the delta of its first record by time ... */
	uint64_t first_ticks;     /* ... and the times of its first and last */
	uint64_t last_ticks;      /* records: (total - first_delta) / (last - first) is
				   * its rate over the time the records span */
};

/*
 * rlog_reader_open_count / rlog_reader_open_mem_count - rlog_reader_open()
 * and rlog_reader_open_mem() that also count every record of every valid
 * block (the file is read once), for rlog_reader_count() and the
 * rlog_reader_count_*() tables.  Returns as rlog_reader_open().
 */
RLOG__READER_EXPORT int rlog_reader_open_count(const char *path, struct rlog_reader **out);
RLOG__READER_EXPORT int rlog_reader_open_mem_count(const void *data, size_t size,
						   struct rlog_reader **out);

/*
 * rlog_reader_count - the totals of a reader opened with
 * rlog_reader_open_count().  Returns 0, -EINVAL (NULL) or -ENODATA (the
 * reader was opened without counting).
 */
RLOG__READER_EXPORT int rlog_reader_count(const struct rlog_reader *r, struct rlog_count *out);

/*
 * rlog_reader_count_id / _thread / _loss - row i of the tables: events per
 * (pid, ID) in (pid, ID) order; threads with records in (pid, tid) order;
 * DATA_LOSS records per cause in cause order.
 * Returns 0, -EINVAL (NULL), -ENODATA (not counted) or -ERANGE (no row i).
 */
RLOG__READER_EXPORT int rlog_reader_count_id(const struct rlog_reader *r, size_t i,
					     struct rlog_count_id *out);
RLOG__READER_EXPORT int rlog_reader_count_thread(const struct rlog_reader *r, size_t i,
						 struct rlog_count_thread *out);
RLOG__READER_EXPORT int rlog_reader_count_loss(const struct rlog_reader *r, size_t i,
					       struct rlog_count_loss *out);

/*
 * rlog_reader_count_counter - row i of the table of counters (COUNTER
 * records), in (pid, counter_id) order.  Returns 0, -EINVAL (NULL),
 * -ENODATA (not counted) or -ERANGE (no row i: i is the number of rows).
 */
RLOG__READER_EXPORT int rlog_reader_count_counter(const struct rlog_reader *r, size_t i,
						  struct rlog_count_counter *out);

/*
 * The reader on a live stream: a running session's real-time stream
 * (sessions started with RLOG_MODE_REAL_TIME, `ringlog start --mode
 * real-time`; docs/FORMAT.md, "The real-time stream"), read through the
 * same API as a file.  What the daemon drains arrives on a socket; each
 * rlog_live_next() hands out the blocks that arrived since the last one
 * as a reader (a "delivery": events in time order within it, not across
 * deliveries), with the session's schemas and names, its DATA_LOSS
 * records (cause RLOG_LOSS_REAL_TIME: blocks this consumer missed because
 * it did not keep up) and its damage, and counters that go on from the
 * delivery before.  At the end of the stream (the session stopped), what
 * the daemon's end account says this consumer missed without being told
 * comes as one more delivery holding one more such DATA_LOSS, so that the
 * events read plus the events told lost are what the session wrote.
 *
 *   struct rlog_live *l;
 *   int rc = rlog_live_open("web", &l);
 *   struct rlog_reader *r;
 *   while ((rc = rlog_live_next(l, &r)) != 0) {
 *       if (rc == -EAGAIN) { poll rlog_live_fd(l) for POLLIN; continue; }
 *       if (rc < 0) break;
 *       while (rlog_reader_next(r, &ev) > 0) ...
 *   }
 *   rlog_live_close(l);
 *
 * A consumer gets what the daemon drains from the moment it takes the
 * connection (its next pass): the first delivery (the LOG_MARKER) says it
 * has.  A live reader is not thread-safe: use one per thread.
 */
struct rlog_live;

/*
 * rlog_live_open - connects to the real-time stream of session name (any
 * case) and opens a live reader on it.  The socket must be served by this
 * process's user.  Returns 0, -EINVAL (not a session name, or NULL),
 * -ENOENT (no socket: no such session in real-time mode), -ECONNREFUSED
 * (its daemon is gone), -EPERM (the socket is served by another user),
 * -ENOMEM, or another -errno of connecting.
 */
RLOG__READER_EXPORT int rlog_live_open(const char *name, struct rlog_live **out);

/*
 * rlog_live_open_fd - opens a live reader on fd, a socket connected to a
 * session's real-time stream.  The reader owns fd from then on (it makes
 * it non-blocking and closes it in rlog_live_close(), or here on failure).
 * Returns 0, -EINVAL (fd < 0 or out NULL) or -ENOMEM.
 */
RLOG__READER_EXPORT int rlog_live_open_fd(int fd, struct rlog_live **out);

/* rlog_live_fd - the socket to poll (POLLIN) after rlog_live_next()
 * returned -EAGAIN. */
RLOG__READER_EXPORT int rlog_live_fd(const struct rlog_live *l);

/*
 * rlog_live_next - reads what the socket has and returns 1 with *r, a
 * reader of the next delivery (owned by l, valid until the next call or
 * rlog_live_close(); do not close it).  Every delivery begins with the
 * stream's LOG_MARKER.  Returns 0 at the end of the stream (after the
 * delivery the end account adds, if any: rlog_live_status() then says
 * what did not add up), -EAGAIN if nothing new has arrived, -EBADMSG if
 * the stream cannot be framed (rlog_live_error() says why; what came
 * before was delivered), -EINVAL (NULL), -ENOMEM, another -errno of
 * reading the socket, or what rlog_reader_open_mem() returns for a
 * delivery that cannot be read.
 */
RLOG__READER_EXPORT int rlog_live_next(struct rlog_live *l, struct rlog_reader **r);

/* rlog_live_error - why the stream could not be framed, after -EBADMSG
 * ("" before). */
RLOG__READER_EXPORT const char *rlog_live_error(const struct rlog_live *l);

struct rlog_live_status {
	uint64_t deliveries;      /* readers handed out */
	uint64_t missed_blocks;   /* the RLOG_LOSS_REAL_TIME DATA_LOSS records of the */
	uint64_t missed_events;   /* deliveries (the end account's one included): */
	uint64_t missed_bytes;    /* blocks, events and bytes this consumer missed */
	bool ended;               /* the end of the stream was read */
	unsigned problems;        /* what did not add up at the end: rlog_live_problem() */
};

/* rlog_live_status - fills *out.  Returns 0 or -EINVAL (NULL). */
RLOG__READER_EXPORT int rlog_live_status(const struct rlog_live *l, struct rlog_live_status *out);

/*
 * rlog_live_problem - problem i (0 .. problems - 1) the end of the stream
 * found, as one line of text: the stream ended without the daemon's end
 * account (what was missed at the end is not known), before its
 * LOG_MARKER, inside a block, or with fewer bytes or blocks than the
 * daemon says it sent.  NULL if there is no problem i.
 */
RLOG__READER_EXPORT const char *rlog_live_problem(const struct rlog_live *l, unsigned i);

/* rlog_live_close - closes the socket, frees the reader and its last
 * delivery.  NULL is a no-op. */
RLOG__READER_EXPORT void rlog_live_close(struct rlog_live *l);

/* Unmaps the file and frees the reader.  NULL is a no-op. */
RLOG__READER_EXPORT void rlog_reader_close(struct rlog_reader *r);

#ifdef __cplusplus
}
#endif

#endif /* RINGLOG_READER_H */
