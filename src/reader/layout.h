/*
 * layout.h - where a log file's blocks lie, for a writer that goes on
 * writing it (`ringlog stop --force`, src/daemon/adopt.c): the
 * reader's open pass, with what it learnt about the file's layout.  Not
 * part of the public API.
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

/*
 * rlog_reader_open_visit() that also hands the copy blocks
 * (RLOG_BLOCK_FLAG_METADATA) to fn, and fills *lay.  Returns as
 * rlog_reader_open_visit().
 */
int rlog__reader_open_layout(const char *path, rlog_block_fn fn, void *arg,
			     struct rlog_reader **out, struct rlog__layout *lay);

#endif
