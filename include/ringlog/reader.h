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
 * The file is mapped read-only and indexed once at open: every block header
 * is checked, every block's crc32 is verified and every record of a block is
 * decoded and its 64-bit time reconstructed.  A block that fails any check
 * is skipped whole and recorded as a damaged region; the reader then looks
 * for the next valid block header 4 bytes at a time and goes on.  A last
 * block cut short by the end of the file gives every complete, well-formed
 * record it holds (its checksum cannot be verified; its damage entry says
 * so).  rlog_reader_next() then merges the per-thread streams of events
 * (each thread's blocks are in time order in the file) by time with a binary
 * heap.  Memory is proportional to the number of blocks and threads in the
 * file, never to the number of events, so files larger than RAM stream.
 *
 * Event IDs and payload layouts (LOG_MARKER, DATA_LOSS, RAW_*) are in
 * <ringlog/abi.h> and docs/FORMAT.md.
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
	uint16_t version_major;       /* file format major version (1) */
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

/* A damaged region of the file.  Read-only. */
struct rlog_damage {
	uint64_t offset;         /* file offset where the region starts */
	uint64_t length;         /* bytes of the file skipped or unverifiable */
	int kind;                /* RLOG_DAMAGE_* */
	int64_t records_skipped; /* records lost, -1 if not knowable */
	const char *message;     /* "damaged block at offset N: ..." or
				  * "truncated block at offset N: ...", owned by
				  * the reader, valid until rlog_reader_close() */
};

#define RLOG_DAMAGE_BLOCK     1 /* a damaged block or bytes that are no block: skipped */
#define RLOG_DAMAGE_TRUNCATED 2 /* the last block, cut short by the end of the file */

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
 *   -EBADMSG  not a ringlog log file: too short, bad magic or bad file header
 *   -EPROTO   a ringlog file of another major version
 *   -ENODATA  a ringlog file with no valid LOG_MARKER record (nothing can be
 *             timed: the daemon wrote no block, or the first one is damaged)
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
 * Reads the next event in global time order: by 64-bit ticks, and events of
 * equal ticks in file order.  TIME_SYNC records are skipped unless
 * RLOG_READER_TIME_SYNC is set.
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
 * the event in time order.
 * @r:  the reader
 * @ev: an event returned by rlog_reader_next (its pid and id are used)
 * Returns the schema (valid until rlog_reader_close), or NULL if the event
 * type has none (then its payload is raw bytes).
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

/* Unmaps the file and frees the reader.  NULL is a no-op. */
RLOG__READER_EXPORT void rlog_reader_close(struct rlog_reader *r);

#ifdef __cplusplus
}
#endif

#endif /* RINGLOG_READER_H */
