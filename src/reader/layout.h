/*
 * layout.h - where a log file's blocks lie, for a writer that goes on
 * writing it (`ringlog stop --force`, src/daemon/adopt.c): the
 * reader's open pass, with what it learnt about the file's layout, and
 * its counts (count.c: the file's totals, rlog_reader_count, and its
 * DATA_LOSS records per thread and cause), so that the writer counts
 * nothing itself.  Not part of the public API.
 */
#ifndef RLOG_READER_LAYOUT_H
#define RLOG_READER_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "ringlog/reader.h"

struct rlog__layout {
	uint64_t append_at;      /* file offset just past the last block with a verified
	                            header in write order (what follows is a block cut
	                            short, damage, unused space, or a wrap's cut) */
	uint64_t next_seq;       /* one past the highest block sequence number read */
	bool have_block0;        /* block 0 (the LOG_MARKER) was read: */
	uint64_t block0;         /* its offset, */
	uint32_t block0_pid, block0_tid; /* its pid and tid */
	uint64_t ring_start;     /* the end of block 0 (a circular file's ring) */
	bool circular, prealloc; /* the file header's flags */
	bool wrapped;            /* a circular file that has wrapped */
	uint64_t file_size;
	unsigned major;          /* the file's format major version */
};

/* The DATA_LOSS records of one thread and one cause (count.c). */
struct rlog__thread_loss {
	uint32_t pid, tid, cause;
	uint64_t events, bytes;  /* the sums of its records */
	uint64_t blocks;         /* the sum of their blocks, where the payload has them */
	uint64_t first;          /* the base time of the block of its first record */
	uint64_t last;           /* the latest of that and their last_time (a range) */
};

/*
 * rlog_reader_open_visit() that also hands the copy blocks
 * (RLOG_BLOCK_FLAG_METADATA) to fn, fills *lay, and counts as
 * rlog_reader_open_count() does: every valid block, and the truncated
 * last block's readable records only if with_cut (a writer that cuts it
 * off and writes its buffer again counts it then).  Returns as
 * rlog_reader_open_visit().
 */
int rlog__reader_open_layout(const char *path, rlog_block_fn fn, void *arg, bool with_cut,
			     struct rlog_reader **out, struct rlog__layout *lay);

/*
 * The DATA_LOSS records of a reader opened counting, per thread and
 * cause, in the order their first records were found: *rows (valid until
 * rlog_reader_close) and their number *n.  Returns 0 or -ENODATA (not
 * counted).
 */
int rlog__count_thread_losses(const struct rlog_reader *r, const struct rlog__thread_loss **rows,
			      size_t *n);

#endif
