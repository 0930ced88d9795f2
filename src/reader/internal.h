/*
 * internal.h - the reader's state, shared by its files:
 *
 *   file.c    file header, LOG_MARKER, block index, validation, resync, damage list
 *   merge.c   per-thread streams and the k-way time merge
 *   reader.c  the public API (open, map, next, close)
 *
 * The whole file (or memory image) is visible as data[0..size); nothing is
 * ever read outside it.  Memory grows with the number of blocks, threads and
 * damaged regions, never with the number of events.
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

/* One block that passed validation at open (or the readable prefix of a
 * truncated last block). */
struct rlog__block {
	size_t offset;         /* file offset of the block header */
	size_t next;           /* next block of the same thread, or RLOG__NO_BLOCK */
	uint64_t base_time;    /* 64-bit ticks before the first record */
	uint32_t pid;
	uint32_t tid;
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

/* A thread's events: its blocks in file order, one record at a time. */
struct rlog__stream {
	size_t block;          /* current block, RLOG__NO_BLOCK when done */
	uint32_t pos;          /* offset in the block's data of the next record */
	uint64_t cursor;       /* the thread's 64-bit time cursor */
	/* the head event, valid while the stream is in the heap */
	struct rlog__record rec;
	uint64_t ticks;
	size_t rec_offset;     /* file offset of rec */
};

struct rlog_reader {
	const uint8_t *data;   /* the file's bytes */
	size_t size;
	void *map;             /* mmap()ed region to unmap at close, or NULL */
	size_t map_size;

	unsigned flags;        /* RLOG_READER_* */
	bool started;          /* rlog_reader_next() was called: streams built */
	struct rlog_reader_info info;
	bool have_marker;

	struct rlog__block *blocks;
	size_t nblocks, blocks_cap;

	struct rlog__damage **damage;
	size_t ndamage, damage_cap;

	struct rlog__stream *streams;
	size_t nstreams;
	size_t *heap;          /* stream indices, a binary min-heap on (ticks, rec_offset) */
	size_t nheap;
};

/*
 * Parses the file header and indexes every block of r->data (file.c).
 * Fills r->info, r->blocks and r->damage.
 * Returns 0, -EBADMSG (not a ringlog file), -EPROTO (other major version),
 * -ENODATA (no valid LOG_MARKER) or -ENOMEM.
 */
int rlog__file_index(struct rlog_reader *r);

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
 * Sorts the blocks into per-thread streams, linking each block to the next
 * of its thread (merge.c).  Returns 0 or -ENOMEM.
 */
int rlog__merge_build(struct rlog_reader *r);

/*
 * Loads each stream's first event into the heap, honouring r->flags
 * (merge.c).  Returns 0 or -ENOMEM.
 */
int rlog__merge_start(struct rlog_reader *r);

/*
 * Pops the earliest event into ev (merge.c).  Returns 1, 0 at the end, or
 * -ENOMEM (a damaged region could not be recorded).
 */
int rlog__merge_next(struct rlog_reader *r, struct rlog_event *ev);

#endif
