/*
 * internal.h - the reader's state, shared by its files:
 *
 *   file.c    file header, LOG_MARKER, the open pass (validation, resync,
 *             damage list, thread table), and the walk over valid blocks
 *   merge.c   per-thread streams and the k-way time merge
 *   schema.c  EVENT_SCHEMA, THREAD_NAME and PROCESS_NAME records: the
 *             schema table, names, field decoding
 *   reader.c  the public API (open, map, next, close)
 *
 * The whole file (or memory image) is visible as data[0..size); nothing is
 * ever read outside it.
 *
 * Memory.  Nothing is kept per block or per event: the open pass keeps one
 * entry per thread, per damaged region and per schema change, and the merge
 * one pending event per thread and a bounded queue of block offsets.  The
 * valid blocks are not listed anywhere: they tile the file between the
 * damaged regions (the open pass went from each valid block to the byte
 * after it, and from each damaged region to the byte after it), so they are
 * found again by hopping block headers forward, stepping over the damaged
 * regions by their recorded lengths (rlog__block_at).
 */
#ifndef RLOG_READER_INTERNAL_H
#define RLOG_READER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ringlog/abi.h"
#include "ringlog/reader.h"
#include "record.h"

#define RLOG__BLOCK_HDR_SIZE 48u
#define RLOG__NO_BLOCK SIZE_MAX
/* Block offsets the merge's thread queues hold at most, in all (8 bytes
 * each: 2 MiB; merge.c). */
#define RLOG__QUEUE_MAX ((size_t)1 << 18)

/* A valid block (or the readable prefix of a truncated last block), as the
 * walk over the tiling finds it. */
struct rlog__block {
	size_t offset;         /* file offset of the block header */
	uint64_t base_time;    /* 64-bit ticks before the first record */
	uint32_t pid;
	uint32_t tid;
	uint32_t data_size;    /* data bytes in the file (the extent) */
	uint32_t walk_size;    /* record bytes to read: data_size, or the complete
				* well-formed prefix of a truncated block */
	uint32_t record_count; /* records in walk_size bytes, TIME_SYNC included */
	uint16_t flags;        /* RLOG_BLOCK_FLAG_* */
};

/* One damaged region; message is the text rlog_reader_damage() returns. */
struct rlog__damage {
	uint64_t offset;
	uint64_t length;
	int kind;
	int64_t records_skipped;
	char message[224];
};

/* A thread's place in the time merge: its current block, one record at a
 * time, and its head event while it is in the heap. */
struct rlog__stream {
	struct rlog__block blk; /* current block; blk.offset RLOG__NO_BLOCK when done */
	uint32_t pos;          /* offset in the block's data of the next record */
	uint64_t cursor;       /* the thread's 64-bit time cursor */
	size_t damage;         /* first damaged region (open-time list) not yet
				* known to be behind blk */
	size_t run;            /* start of the run of adjacent blocks of the
				* thread that ends with blk: read, to be given back */
	size_t *q;             /* the thread's next blocks found by the frontier: */
	uint32_t qhead, qlen, qcap; /* a ring of offsets, in file order */
	bool synced;           /* q holds every block of the thread between blk
				* and r->frontier */
	size_t known_end;      /* if not synced: [end of blk, known_end) holds no
				* block of the thread; its own hop starts there */
	struct rlog__record rec;
	uint64_t ticks;
	size_t rec_offset;     /* file offset of rec */
};

/* One (pid, tid): what the open pass learnt about it, and its stream. */
struct rlog__thread {
	uint32_t pid;
	uint32_t tid;
	size_t first_block;    /* offset of its first valid block */
	size_t last_block;     /* offset of its last valid block */
	char *name;            /* latest THREAD_NAME, NUL-terminated, or NULL */
	uint64_t name_ticks;   /* its time and offset: "latest" is by (ticks, offset) */
	size_t name_offset;
	struct rlog__stream s;
};

/* A process's name (latest PROCESS_NAME). */
struct rlog__process {
	uint32_t pid;
	char *name;
	uint64_t name_ticks;
	size_t name_offset;
};

/* One version of the schema of (pid, id), in force from (ticks, offset). */
struct rlog__schema_version {
	uint64_t ticks;
	size_t offset;
	struct rlog_schema *schema; /* one allocation: struct, fields, names */
	uint8_t *raw;               /* the EVENT_SCHEMA payload, to spot repeats */
	uint16_t raw_len;
};

/* The schema history of one (pid, id), in time order. */
struct rlog__schema_entry {
	uint32_t pid;
	uint16_t id;
	uint32_t nversions, cap;
	struct rlog__schema_version *v;
};

struct rlog_reader {
	const uint8_t *data;   /* the file's bytes */
	size_t size;
	void *map;             /* mmap()ed region to unmap at close, or NULL */
	size_t map_size;
	size_t dropped;        /* bytes of the mapping at its start given back
				* with MADV_DONTNEED (see rlog__drop_behind) */

	unsigned flags;        /* RLOG_READER_* */
	bool started;          /* rlog_reader_next() was called: streams built */
	struct rlog_reader_info info;
	bool have_marker;

	/* The open pass's visitor (rlog_reader_open_visit), or NULL. */
	rlog_block_fn visit;
	void *visit_arg;

	/* The truncated last block, if it holds records (else trunc_walk 0). */
	size_t trunc_offset;
	uint32_t trunc_walk, trunc_count;

	struct rlog__damage **damage;
	size_t ndamage, damage_cap;
	size_t ndamage_open;   /* regions found by the open pass: the tiling */

	/* Threads, sorted by (pid, tid) once open has returned; the hash maps
	 * (pid, tid) to an index in threads. */
	struct rlog__thread *threads;
	size_t nthreads, threads_cap;
	uint32_t *thread_hash; /* index + 1, 0 empty; thread_hash_cap slots */
	size_t thread_hash_cap;

	struct rlog__process *procs;
	size_t nprocs, procs_cap;

	struct rlog__schema_entry *schemas; /* open addressing on (pid, id) */
	size_t nschemas, schemas_cap;
	struct rlog__schema_entry *schema_last; /* lookup cache */
	uint64_t bad_schemas;
	uint64_t bad_schema_offset;

	size_t *heap;          /* thread indices, a binary min-heap on (ticks, rec_offset) */
	size_t nheap;
	size_t first_block;    /* offset of the first block (the file header's size) */
	size_t frontier;       /* the merge's scan of block headers: every block
				* before it was filed in its thread's queue (merge.c) */
	size_t frontier_damage; /* its index in the damage list */
	size_t frontier_kept;  /* header pages from here to the frontier are mapped */
	size_t queued;         /* offsets in all the queues */
	size_t queue_max;      /* the bound on queued: RLOG__QUEUE_MAX (tests lower it) */
	uint64_t next_calls;   /* rlog_reader_next() calls, to pace rlog__drop_behind */
};

/*
 * Parses the file header and walks every block of r->data (file.c):
 * fills r->info, the thread table, the damage list, the names and the
 * schema table, and calls r->visit for each valid block.
 * Returns 0, -EBADMSG (not a ringlog file), -EPROTO (other major version),
 * -ENODATA (no valid LOG_MARKER), -ENOMEM, or what r->visit returned.
 */
int rlog__file_index(struct rlog_reader *r);

/*
 * The first valid block at or after file offset pos in the tiling the open
 * pass found (file.c).  *damage is an index into the damage list no larger
 * than that of the first region at or after pos (0 is always right; the
 * walk moves it on).  Returns 1 with *b filled, 0 if there is none, or
 * -EBADMSG if the bytes at a block's place no longer form a block header
 * (the file changed since it was opened; b->offset is that place).
 */
int rlog__block_at(const struct rlog_reader *r, size_t pos, size_t *damage,
		   struct rlog__block *b);

/*
 * Appends a damaged region with a printf-style message (file.c).
 * Returns 0 or -ENOMEM.
 */
int rlog__damage_add(struct rlog_reader *r, uint64_t offset, uint64_t length, int kind,
		     int64_t records_skipped, const char *fmt, ...)
#if defined(__GNUC__)
	/* printf format checking: a GCC/Clang attribute, no semantic effect */
	__attribute__((format(printf, 6, 7)))
#endif
	;

/*
 * Gives back to the kernel the pages of a file mapping below file offset
 * upto (rounded down to a page), 16 MiB at a time, so that the resident set
 * does not grow with the file; the pages stay in the page cache and fault
 * back in if read again.  A no-op for memory images (file.c).
 */
void rlog__drop_behind(struct rlog_reader *r, size_t upto);

/* Gives back the whole pages of a file mapping within [from, to) (file.c). */
void rlog__drop_range(struct rlog_reader *r, size_t from, size_t to);

/* The thread (pid, tid), or NULL (file.c). */
struct rlog__thread *rlog__thread_find(const struct rlog_reader *r, uint32_t pid, uint32_t tid);

/*
 * Loads each thread's first event into the heap, honouring r->flags
 * (merge.c).  Returns 0 or -ENOMEM.
 */
int rlog__merge_start(struct rlog_reader *r);

/*
 * Pops the earliest event into ev (merge.c).  Returns 1, 0 at the end, or
 * -ENOMEM (a damaged region could not be recorded).
 */
int rlog__merge_next(struct rlog_reader *r, struct rlog_event *ev);

/* Sets the bound on the offsets the merge queues (RLOG__QUEUE_MAX by default);
 * for tests, before the first rlog_reader_next() (merge.c). */
void rlog__merge_queue_max(struct rlog_reader *r, size_t max);

/* Nanoseconds since the start of the trace for a tick time (merge.c). */
int64_t rlog__time_ns(const struct rlog_reader *r, uint64_t ticks);

/*
 * Takes note of a metadata record (EVENT_SCHEMA, THREAD_NAME,
 * PROCESS_NAME, unflagged) of thread (pid, tid) at ticks and file offset
 * off (schema.c).  A malformed EVENT_SCHEMA is counted and ignored.
 * Returns 0 or -ENOMEM.
 */
int rlog__meta_record(struct rlog_reader *r, struct rlog__thread *th,
		      const struct rlog__record *rec, uint64_t ticks, size_t off);

/* Frees the schema table and the names (schema.c). */
void rlog__meta_free(struct rlog_reader *r);

#endif
