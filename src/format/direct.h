/*
 * direct.h - a log file written around the page cache (O_DIRECT): the
 * session mode `direct` (docs/SESSIONS.md, "Direct I/O"; docs/DESIGN.md,
 * "The log file's writes").
 *
 * A buffered write(2) copies every byte into the page cache and, for a
 * growing file, allocates and accounts a page per 4 KiB: on this project's
 * machines most of the daemon's CPU per event (docs/PERFORMANCE.md, "What
 * the daemon costs").  A direct write hands the device the daemon's own
 * memory.  The file's bytes stay exactly those of a buffered write (the
 * format knows nothing of this): the blocks of a flush are staged, each
 * as it is checked (its lines still in this core's cache), in one buffer
 * aligned to the file system's direct-I/O alignment, the
 * aligned part is written directly, and the last partial page (less than
 * the alignment) with a buffered pwrite(2), so that the file's size is
 * always the end of its last whole block.  The next flush writes that
 * page again, directly, from the copy kept here (the kernel first writes
 * back and drops the cached page).
 */
#ifndef RLOG_FORMAT_DIRECT_H
#define RLOG_FORMAT_DIRECT_H

#include <stddef.h>
#include <stdint.h>

struct rlog__direct {
	uint8_t *buf;          /* the flush's bytes, from the alignment boundary at or
	                          before its position; aligned */
	size_t cap;            /* bytes buf holds */
	size_t align;          /* offsets and lengths written directly are multiples */
	int fl;                /* the descriptor's status flags without O_DIRECT */
	uint64_t end;          /* the file offset just past the last flush's bytes, when
	                          buf[0, kept) are the bytes before it from the
	                          alignment boundary; UINT64_MAX: read them again */
	size_t kept;
	uint64_t direct_bytes; /* written around the page cache */
	uint64_t buffered_bytes; /* written through it (the partial pages) */
	int failed;            /* 0, or the errno that turned direct writes off */
};

/*
 * Readies direct writes of fd, flushes of up to cap bytes.  Returns 0,
 * -EOPNOTSUPP (fd is not a regular file on a file system that does direct
 * I/O: statx(2) reports no alignment), or -ENOMEM.
 */
int rlog__direct_open(struct rlog__direct *d, int fd, size_t cap);

/*
 * Where the next flush's bytes are to be staged (they may be staged
 * anywhere in buf, at the cost of a move): just after the partial page
 * kept, so that they need no copy when the position is where the last
 * flush ended.
 */
uint8_t *rlog__direct_stage(const struct rlog__direct *d);

/*
 * Writes the len bytes staged (inside buf; len <= the cap given to
 * rlog__direct_open) at file offset pos, as write(2) at pos would, and
 * leaves fd's offset just past what was written.  *done: the bytes
 * written (all, or fewer on error).  A direct write the file refuses
 * (EINVAL) turns direct writes off for good (failed) and is done
 * buffered.  Returns 0 or -errno.
 */
int rlog__direct_write(struct rlog__direct *d, int fd, uint64_t pos, const uint8_t *staged,
		       size_t len, size_t *done);

/* Something other than rlog__direct_write wrote the file: the partial
 * page is read again before the next direct write. */
static inline void rlog__direct_forget(struct rlog__direct *d)
{
	d->end = UINT64_MAX;
}

void rlog__direct_close(struct rlog__direct *d);

#endif
