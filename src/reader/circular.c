/*
 * circular.c - a circular file read in time order (docs/FORMAT.md,
 * "Circular files").
 *
 * The daemon writes a circular file as block 0 (the LOG_MARKER, never
 * overwritten) and a ring after it: each lap restarts just after block 0
 * (ring_start) and overwrites the oldest blocks; at a wrap the file is cut
 * back (or, preallocated, zeroed) to the end of the lap.  Block sequence
 * numbers go on across wraps, so the file reads:
 *
 *   header | block 0 | newest lap: seq j+1 .. m | cut | older lap: seq k .. j
 *          H         A                          b1    a0                   size
 *
 * where "cut" is what is left of the block the newest lap's last block
 * overwrote in part (nothing if it ended on a block boundary).  The wrap is
 * where the sequence goes down: the first verified block (checksum
 * correct) after A whose number is below the one before it is the oldest
 * (a0); the newest lap ends with the last verified block before it (b1).
 * A file without such a place has not wrapped and reads as it is.
 *
 * A wrapped file is read through a view: the file mapped twice, base2
 * bytes apart, so that [a0, size) and then [base2 + A, base2 + b1) follow
 * each other in the view's address order; the open pass reads those parts
 * and steps over the rest (internal.h, struct rlog__wrap).  Nothing is
 * copied for a file (a memory image is copied once).
 */
#include <errno.h>

#include "internal.h"

/* The next verified block at or after pos (its checksum correct), or
 * r->seg_end; *c describes it. */
static size_t next_verified(const struct rlog_reader *r, size_t pos, struct rlog__check *c)
{
	while (pos < r->seg_end) {
		if (r->prealloc && r->seg_end - pos >= 4 && rlog__get32(r->data + pos) == 0)
			return r->seg_end; /* the unused space of a preallocated file */
		rlog__block_check(r, pos, c);
		switch (c->v) {
		case BLK_OK:
		case BLK_RECORD:
		case BLK_TIME:
		case BLK_WRAP:
		case BLK_COUNT:
			return pos;
		default: {
			bool verified;
			size_t next = rlog__resync(r, pos + 4, &verified);
			if (!verified)
				return r->seg_end;
			pos = next;
		}
		}
	}
	return r->seg_end;
}

int rlog__circular_prepare(struct rlog_reader *r)
{
	struct rlog__check c;
	size_t h = r->first_block;
	/* Block 0, then the ring. */
	size_t pos = next_verified(r, h, &c);
	if (pos != h || c.h.seq != 0)
		return 0; /* no block 0 to find the ring by: read the file as it is */
	size_t ring = h + RLOG__BLOCK_HDR_SIZE + c.h.data_size;
	size_t end = ring;
	uint64_t prev = 0;
	bool any = false;
	for (pos = ring; (pos = next_verified(r, pos, &c)) < r->seg_end;) {
		if (any && c.h.seq < prev) {
			r->wrap.ring_start = ring;
			r->wrap.newest_end = end;
			r->wrap.oldest = pos;
			size_t base2;
			int rc = rlog__reader_double(r, &base2);
			if (rc < 0)
				return rc;
			r->wrap.base2 = base2;
			r->wrap.on = true;
			r->size = base2 + end;
			r->seg_end = r->size;
			return 0;
		}
		any = true;
		prev = c.h.seq;
		pos += RLOG__BLOCK_HDR_SIZE + c.h.data_size;
		end = pos;
	}
	return 0;
}
