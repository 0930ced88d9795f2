/*
 * internal.h - the reader's state, shared by its files:
 *
 *   file.c    file header, LOG_MARKER, the open pass (the thread table,
 *             what each block holds)
 *   block.c   one block: its header, checks and records; resync after
 *             damage; the walk over the valid blocks (rlog__block_at)
 *   seq.c     block sequence numbers: missing, repeated, out-of-order blocks
 *   damage.c  the damage reports and the regions the walk steps over
 *   merge.c   per-thread streams and the k-way time merge
 *   schema.c  EVENT_SCHEMA, THREAD_NAME and PROCESS_NAME records: the
 *             schema table, names, field decoding
 *   records.c the decoders of ringlog's own records, the record kinds
 *   counter.c COUNTER_NAME and COUNTER records: counter names, values
 *   count.c   the totals of `ringlog stats`, counted during the open pass
 *   circular.c  where a circular file wrapped, and the view that reads it
 *             in time order
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

#include "format/block.h"
#include "layout.h"
#include "map.h"
#include "record.h"
#include "region_abi.h"
#include "ringlog/reader.h"

#define RLOG__FILE_HDR_MIN 64u    /* a version 1.0 file header */
#define RLOG__FILE_HDR_MARKER 176u /* a file header with the LOG_MARKER copy */
#define RLOG__NO_BLOCK SIZE_MAX
/* Entries of the schema lookup cache (schema.c). */
#define RLOG__SCHEMA_CACHE 64u
/* Block offsets the merge's thread queues hold at most, in all (8 bytes
 * each: 2 MiB; merge.c). */
#define RLOG__QUEUE_MAX ((size_t)1 << 18)
/* A region the walk steps over that is no damage (not a report): a copy
 * block (RLOG_BLOCK_FLAG_METADATA), the unused end of a preallocated
 * file, the parts of a wrapped circular file read elsewhere. */
#define RLOG__REGION_SKIP 100

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

/* One damage report; message is the text rlog_reader_damage() returns. */
struct rlog__damage {
	uint64_t offset;
	uint64_t length;
	int kind;
	int64_t records_skipped;
	uint64_t seq_first, seq_last;
	uint64_t seq_after;    /* ORDER: the highest sequence number read before */
	size_t order;          /* the order it was found in (sorting is stable) */
	char message[224];
};

/*
 * A region of the file the walk over valid blocks steps over: a damaged
 * block or bytes that are no block (RLOG_DAMAGE_BLOCK), a block read before
 * (RLOG_DAMAGE_DUPLICATE), or the truncated last block
 * (RLOG_DAMAGE_TRUNCATED, read up to trunc_walk).  Valid blocks and
 * regions tile the file from the end of its header to its end.
 */
struct rlog__region {
	uint64_t offset;
	uint64_t length;
	int kind;
};

/* A run of block sequence numbers not seen yet (seq.c). */
struct rlog__gap {
	uint64_t lo, hi;       /* the numbers lo..hi */
	size_t offset;         /* the block after which they were found missing */
	bool explained;        /* a damaged region lies where they would be */
};

/* The block sequence check of the open pass (seq.c). */
struct rlog__seq {
	bool ring;             /* a circular file: the numbers between block 0 and
				* the next block read were overwritten by a wrap,
				* not lost (once) */
	bool any;              /* a block with a verified header was seen ... */
	uint64_t high;         /* ... and this is the highest number read so far */
	bool unverified;       /* damage without a trustworthy header since the
				* last block with a verified one */
	struct rlog__gap *gaps; /* in seq order */
	size_t ngaps, cap;
	/* The last DUPLICATE or ORDER report, extended by a block that
	 * follows it directly (file offset run_end, sequence run_next). */
	struct rlog__damage *run;
	size_t run_end;
	uint64_t run_next;
};

/* A thread's place in the time merge: its current block, one record at a
 * time, and its head event while it is in the heap. */
struct rlog__stream {
	struct rlog__block blk; /* current block; blk.offset RLOG__NO_BLOCK when done */
	uint32_t pos;          /* offset in the block's data of the next record */
	uint64_t cursor;       /* the thread's 64-bit time cursor */
	size_t region;         /* first region not yet known to be behind blk */
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

/* One counter (pid, counter_id): its name (latest COUNTER_NAME) and what
 * rlog_reader_next() has returned of it so far (counter.c). */
struct rlog__counter_entry {
	uint32_t pid, counter_id;
	char *name;            /* NUL-terminated, or NULL */
	uint64_t name_ticks;   /* its time and offset: "latest" is by (ticks, offset) */
	size_t name_offset;
	uint8_t source, unit, info;
	bool seen;             /* a record of it was returned ... */
	uint16_t last_seq;     /* ... the last one's seq, */
	bool value_known;      /* its value if known, */
	uint64_t value;
	bool last_gap;         /* whether records were missing before it, */
	size_t last_offset;    /* and its file offset */
};

/*
 * A circular file that has wrapped (circular.c), as found in the file:
 *
 *   header | block 0 | newest lap ... | cut | older lap ............. | end
 *          H         A                b1    a0                        size
 *
 * and read through a view that maps the file twice (base2 bytes apart), so
 * that its blocks lie in time order:
 *
 *   view  [H, A) block 0 | skip [A, a0) | [a0, size) older lap |
 *         skip [size, base2 + A) | [base2 + A, base2 + b1) newest lap
 *
 * Offsets handed out (damage, events) are file offsets (rlog__foff).
 */
struct rlog__wrap {
	bool on;
	size_t ring_start;     /* A */
	size_t newest_end;     /* b1 */
	size_t oldest;         /* a0 */
	size_t base2;          /* where the second copy of the file starts in the view */
};

/* A THREAD_NAME of a copy block, applied once the thread table is known
 * (schema.c). */
struct rlog__copy_name {
	uint32_t pid, tid;
	uint64_t ticks;
	size_t offset;         /* of the record */
};

struct rlog_reader {
	const uint8_t *data;   /* the file's bytes (a wrapped circular file: the view) */
	size_t size;
	size_t seg_end;        /* the end of the part of data the open pass reads
				* now (size, but for a wrapped circular file) */
	int fd;                /* the file while the open pass runs, or -1 */
	uint8_t *owned;        /* a view the reader allocated (a memory image of a
				* wrapped circular file), or NULL */
	bool circular;         /* RLOG_FILE_FLAG_CIRCULAR (1.2) */
	bool prealloc;         /* RLOG_FILE_FLAG_PREALLOCATED (1.2) */
	struct rlog__wrap wrap;
	struct rlog__copy_name *copy_names;
	size_t ncopy_names, copy_names_cap;
	bool visit_copies;     /* the visitor sees copy blocks too (layout.h) */
	size_t last_end;       /* the end of the last block read with a verified
				* header, in the view (layout.h) */
	size_t block0;         /* block 0's offset, if read (else 0) */
	uint32_t block0_pid, block0_tid;
	void *map;             /* mmap()ed region to unmap at close, or NULL */
	size_t map_size;
	size_t dropped;        /* bytes of the mapping at its start given back
				* with MADV_DONTNEED (see rlog__drop_behind) */
	size_t drop_lo, drop_hi; /* a range of the mapping to give back, gathered
				  * (rlog__drop_range); empty if drop_lo >= drop_hi */
	uint64_t give_backs;   /* madvise() calls made (for tests) */

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

	struct rlog__damage **damage; /* reports, in file order once open returned */
	size_t ndamage, damage_cap;
	struct rlog__region *regions; /* the tiling, in file order */
	size_t nregions, regions_cap;
	struct rlog__seq seq;

	/* The clock: the file header's copy of the LOG_MARKER (version 1.1),
	 * and whether block 0's LOG_MARKER has been read. */
	struct rlog_marker header_marker;
	uint32_t header_clock; /* its clock error word (+44) */
	bool have_header_marker;

	/* The totals of rlog_reader_open_count(), or NULL. */
	struct rlog__count *count;
	bool count_no_cut;     /* not the truncated last block (rlog__reader_open_layout) */

	/* Threads, sorted by (pid, tid) once open has returned; thread_map
	 * maps pid << 32 | tid to an index in threads. */
	struct rlog__thread *threads;
	size_t nthreads, threads_cap;
	struct rlog__map thread_map;

	struct rlog__process *procs;
	size_t nprocs, procs_cap;

	struct rlog__schema_entry *schemas; /* one per (pid, id) ... */
	size_t nschemas, schemas_cap;
	struct rlog__map schema_map; /* ... found by pid << 16 | id */
	uint32_t schema_cache[RLOG__SCHEMA_CACHE]; /* lookup cache: an index + 1, or 0 */
	uint64_t bad_schemas;
	uint64_t bad_schema_offset;

	struct rlog__counter_entry *counters; /* one per (pid, counter_id) ... */
	size_t ncounters, counters_cap;
	struct rlog__map counter_map; /* ... found by pid << 32 | counter_id */

	size_t *heap;          /* thread indices, a binary min-heap on (ticks, rec_offset) */
	size_t nheap;
	size_t first_block;    /* offset of the first block (the file header's size) */
	size_t frontier;       /* the merge's scan of block headers: every block
				* before it was filed in its thread's queue (merge.c) */
	size_t frontier_region; /* its index in the region list */
	size_t frontier_kept;  /* header pages from here to the frontier are mapped */
	size_t queued;         /* offsets in all the queues */
	size_t queue_max;      /* the bound on queued: RLOG__QUEUE_MAX (tests lower it) */
	uint64_t next_calls;   /* rlog_reader_next() calls, to pace rlog__drop_behind */
	/* The run of the thread on top of the heap: its events come next while
	 * they are before (bound_ticks, bound_off), the least head of the
	 * others; bound_top the thread it was taken for, SIZE_MAX for none. */
	size_t bound_top;
	uint64_t bound_ticks;
	size_t bound_off;
	int batch_err;         /* an error met after a batch's events (reader.c) */
};

/*
 * Parses the file header and walks every block of r->data (file.c):
 * fills r->info, the thread table, the damage reports and regions, the
 * names and the schema table, counts (r->count), and calls r->visit for
 * each valid block.
 * Returns 0, -EBADMSG (not a ringlog file), -EPROTO (other major version),
 * -ENODATA (no LOG_MARKER), -ENOMEM, or what r->visit returned.
 */
int rlog__file_index(struct rlog_reader *r);

/* ---- block.c ---- */

/* What rlog__block_check() found at a file offset. */
enum rlog__verdict {
	BLK_OK,       /* a valid block */
	BLK_SHORT,    /* fewer than 48 bytes left in the file */
	BLK_MAGIC,    /* no block magic */
	BLK_HEADER,   /* magic, but an impossible header */
	BLK_PAST_EOF, /* a sane header whose data runs past the end of the file */
	BLK_CRC,      /* checksum mismatch */
	BLK_RECORD,   /* checksum correct, a malformed record */
	BLK_TIME,     /* checksum correct, a time jump of 2^31 ticks or more */
	BLK_WRAP,     /* checksum correct, a time past 2^64 - 1 */
	BLK_COUNT,    /* checksum correct, record_count disagrees with the data */
};

/* What walking a block's records found. */
struct rlog__walk {
	uint32_t count;       /* well-formed records */
	uint32_t bytes;       /* the bytes they take */
	enum rlog__verdict why; /* BLK_OK: all bytes walked; else BLK_RECORD, BLK_TIME
				 * or BLK_WRAP */
	uint64_t first_ticks; /* time of the first and last record walked */
	uint64_t last_ticks;
	bool meta;            /* an EVENT_SCHEMA, THREAD_NAME or PROCESS_NAME seen */
	bool marker_first;    /* the first record is a LOG_MARKER */
};

/* Everything rlog__block_check() learnt about a block. */
struct rlog__check {
	enum rlog__verdict v;
	struct rlog_block_header h; /* from BLK_MAGIC on: the header as it reads
				     * (src/format/block.h decodes it) */
	uint32_t walked;      /* records walked (BLK_COUNT) */
	size_t bad_offset;    /* file offset of the bad record (BLK_RECORD, BLK_TIME,
			       * BLK_WRAP) */
	struct rlog__walk w;  /* BLK_OK: the walk */
};

/* Checks the block at file offset pos (see enum rlog__verdict). */
void rlog__block_check(const struct rlog_reader *r, size_t pos, struct rlog__check *c);

/* Walks the records in d[0..len) of a block with flags (RLOG_BLOCK_FLAG_*)
 * from time base; stops at the first malformed, incomplete or time-jumping
 * record (a copy block holds metadata and TIME_SYNC records only). */
void rlog__block_walk(const uint8_t *d, uint32_t len, uint64_t base, uint16_t flags,
		      struct rlog__walk *w);

/* The first offset at or after from, in 4-byte steps, where a block could
 * start (docs/FORMAT.md "Resynchronising"); r->size if none.  *verified
 * tells whether its checksum is correct. */
size_t rlog__resync(const struct rlog_reader *r, size_t from, bool *verified);

/*
 * The first valid block at or after file offset pos in the tiling the open
 * pass found.  *region is an index into the region list no larger than
 * that of the first region at or after pos (0 is always right; the walk
 * moves it on).  Returns 1 with *b filled, 0 if there is none, or -EBADMSG
 * if the bytes at a block's place no longer form a block header (the file
 * changed since it was opened; b->offset is that place).
 */
int rlog__block_at(const struct rlog_reader *r, size_t pos, size_t *region,
		   struct rlog__block *b);

/* ---- damage.c ---- */

/*
 * Appends a damage report with a printf-style message.  Returns the report
 * (its seq fields 0), or NULL (out of memory).
 */
struct rlog__damage *rlog__damage_add(struct rlog_reader *r, uint64_t offset, uint64_t length,
				      int kind, int64_t records_skipped, const char *fmt, ...)
#if defined(__GNUC__)
	/* printf format checking: a GCC/Clang attribute, no semantic effect */
	__attribute__((format(printf, 6, 7)))
#endif
	;

/* Rewrites the message of a MISSING, DUPLICATE or ORDER report from its
 * fields. */
void rlog__damage_message(const struct rlog_reader *r, struct rlog__damage *d);

/* Puts the reports in file order (the open pass finds some late). */
void rlog__damage_sort(struct rlog_reader *r);

/* Appends a region the walk steps over.  Returns 0 or -ENOMEM. */
int rlog__region_add(struct rlog_reader *r, uint64_t offset, uint64_t length, int kind);

/* Invariant checker (docs/CONTRIBUTING.md), for assert(): the regions from
 * index from on are not empty, lie inside the file's bytes, and each
 * starts at or after the end of the one before (the list is the tiling in
 * file order that the walk, the damage reports and the count rely on).
 * Asserted for the new region by rlog__region_add and for the whole list
 * at the end of the open pass. */
bool rlog__regions_sane(const struct rlog_reader *r, size_t from);

/* ---- seq.c ---- */

/* What rlog__seq_block() says about a block. */
enum rlog__seq_verdict {
	SEQ_NEXT,      /* in sequence (maybe after missing blocks): read it */
	SEQ_LATE,      /* fills an earlier gap: read it, reported out of order */
	SEQ_DUPLICATE, /* read before: skip it, reported */
};

/*
 * Takes note of a block with a verified header (checksum correct) at file
 * offset pos, of sequence number seq and size bytes holding records
 * records; valid tells whether it is read (its damage, if any, is
 * reported already: it gets no report of its own here).
 * Returns the verdict, or -ENOMEM.
 */
int rlog__seq_block(struct rlog_reader *r, size_t pos, uint64_t seq, uint64_t size,
		    uint32_t records, bool valid);

/* Takes note of a damaged region without a trustworthy header: it may
 * hold the blocks of the next gap. */
void rlog__seq_unverified(struct rlog_reader *r);

/* Reports the gaps left at the end of the open pass.  Returns 0 or
 * -ENOMEM. */
int rlog__seq_finish(struct rlog_reader *r);

void rlog__seq_free(struct rlog_reader *r);

/* ---- file.c ---- */

/*
 * Gives back to the kernel the pages of a file mapping below file offset
 * upto (rounded down to a page), 16 MiB at a time, so that the resident set
 * does not grow with the file; the pages stay in the page cache and fault
 * back in if read again.  A no-op for memory images (file.c).
 */
void rlog__drop_behind(struct rlog_reader *r, size_t upto);

/* Gives back the whole pages of a file mapping within [from, to), with the
 * ranges next to it, gathered up to 2 MiB (file.c). */
void rlog__drop_range(struct rlog_reader *r, size_t from, size_t to);

/* The thread (pid, tid), or NULL (file.c). */
struct rlog__thread *rlog__thread_find(const struct rlog_reader *r, uint32_t pid, uint32_t tid);

/* ---- circular.c ---- */

/*
 * A circular file (r->circular): finds where it wrapped, and if it did,
 * replaces r->data with the view of struct rlog__wrap (r->wrap.on).
 * Returns 0, or -ENOMEM / -EFBIG (the view cannot be made).
 */
int rlog__circular_prepare(struct rlog_reader *r);

/* The file offset of view offset v. */
static inline uint64_t rlog__foff(const struct rlog_reader *r, uint64_t v)
{
	return r->wrap.on && v >= r->wrap.base2 ? v - r->wrap.base2 : v;
}

/* The view offset of file offset f (the inverse of rlog__foff). */
static inline uint64_t rlog__voff(const struct rlog_reader *r, uint64_t f)
{
	return r->wrap.on && f >= r->wrap.ring_start && f < r->wrap.newest_end ? f + r->wrap.base2
										: f;
}

/* reader.c: maps the file twice, base2 bytes apart, as r->data (for a
 * memory image: a copy).  Returns 0, -ENOMEM or -EFBIG. */
int rlog__reader_double(struct rlog_reader *r, size_t *base2);

/* ---- records.c ---- */

/* Decodes a LOG_MARKER payload of len bytes (>= 112, tick_freq_hz > 0).
 * Returns 0 or -EBADMSG. */
int rlog__marker_decode(const uint8_t *p, size_t len, struct rlog_marker *out);

/* Decodes a DATA_LOSS payload of len bytes (>= 24).  Returns 0 or
 * -EBADMSG. */
int rlog__loss_decode(const uint8_t *p, size_t len, struct rlog_loss *out);

/* ---- count.c ---- */

struct rlog__count; /* the totals of rlog_reader_open_count() */

/* Starts counting (before the open pass).  Returns 0 or -ENOMEM. */
int rlog__count_start(struct rlog_reader *r);

/* Counts a valid block the open pass found.  Returns 0 or -ENOMEM. */
int rlog__count_block(struct rlog_reader *r, const struct rlog_block *b);

/* Sorts the tables and adds the damage, once the open pass is done.
 * Returns 0 or -ENOMEM. */
int rlog__count_finish(struct rlog_reader *r);

void rlog__count_free(struct rlog_reader *r);

/* ---- merge.c ---- */

/*
 * Loads each thread's first event into the heap, honouring r->flags
 * (merge.c).  Returns 0 or -ENOMEM.
 */
int rlog__merge_start(struct rlog_reader *r);

/*
 * Pops the next event into ev (merge.c).  Returns 1, 0 at the end, or
 * -ENOMEM (a damaged region could not be recorded).
 */
int rlog__merge_next(struct rlog_reader *r, struct rlog_event *ev);

/*
 * Up to max events into ev[], what as many rlog__merge_next() calls give,
 * up to and including a COUNTER record (whose value the reader follows
 * before the next event: reader/batch.h).  Returns the events given, or
 * -ENOMEM with none; *err receives an error met after some were given.
 */
int rlog__merge_batch(struct rlog_reader *r, struct rlog_event *ev, size_t max, int *err);

struct rlog__run;

/* rlog__reader_run and rlog__reader_run_take (reader/batch.h), once the
 * merge has started. */
int rlog__merge_run(struct rlog_reader *r, struct rlog__run *run);
int rlog__merge_run_take(struct rlog_reader *r, uint32_t used, uint64_t cursor, uint32_t events);

/* Sets the bound on the offsets the merge queues (RLOG__QUEUE_MAX by default);
 * for tests, before the first rlog_reader_next() (merge.c). */
void rlog__merge_queue_max(struct rlog_reader *r, size_t max);

/* Nanoseconds since the start of the trace for a tick time (merge.c). */
int64_t rlog__time_ns(const struct rlog_reader *r, uint64_t ticks);

/*
 * Takes note of a metadata record (EVENT_SCHEMA, THREAD_NAME,
 * PROCESS_NAME, COUNTER_NAME, unflagged) of thread (pid, tid) at ticks and
 * file offset off (schema.c).  A malformed EVENT_SCHEMA is counted and
 * ignored.
 * Returns 0 or -ENOMEM.
 */
int rlog__meta_record(struct rlog_reader *r, struct rlog__thread *th,
		      const struct rlog__record *rec, uint64_t ticks, size_t off);

/* The metadata records of a copy block (RLOG_BLOCK_FLAG_METADATA) of
 * (pid, tid), walked before: schemas and process names at once, thread
 * names once the threads are known (schema.c).  Returns 0 or -ENOMEM. */
int rlog__meta_copy_block(struct rlog_reader *r, uint32_t pid, uint32_t tid, size_t offset,
			  uint64_t base_time, uint32_t size);

/* Applies the thread names of copy blocks to the threads of the file
 * (schema.c).  Returns 0 or -ENOMEM. */
int rlog__meta_copy_finish(struct rlog_reader *r);

/* Frees the schema table and the names (schema.c). */
void rlog__meta_free(struct rlog_reader *r);

/* ---- counter.c ---- */

/* Takes note of a COUNTER_NAME record of process pid at ticks and file
 * offset off (a malformed one is ignored).  Returns 0 or -ENOMEM. */
int rlog__counter_name_record(struct rlog_reader *r, uint32_t pid, const struct rlog__record *rec,
			      uint64_t ticks, size_t off);

/* Follows a COUNTER event rlog_reader_next() is returning: its counter's
 * seq and value (out of memory: not followed). */
void rlog__counter_follow(struct rlog_reader *r, const struct rlog_event *ev);

/* Frees the counter table. */
void rlog__counter_free(struct rlog_reader *r);

#endif
