/*
 * direct.c - the log file's direct writes (direct.h).
 */
#define _GNU_SOURCE
#include "direct.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int rlog__direct_open(struct rlog__direct *d, int fd, size_t cap)
{
	memset(d, 0, sizeof *d);
	d->end = UINT64_MAX;
	struct statx sx;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_DIOALIGN, &sx) != 0 ||
	    !(sx.stx_mask & STATX_DIOALIGN) || !S_ISREG(sx.stx_mode) ||
	    sx.stx_dio_mem_align == 0 || sx.stx_dio_offset_align == 0)
		return -EOPNOTSUPP;
	/* A page at least: the partial page kept is then whole pages'
	 * worth of nothing, and the buffer's start suits any device. */
	size_t a = sx.stx_dio_offset_align;
	if (a < sx.stx_dio_mem_align)
		a = sx.stx_dio_mem_align;
	if (a < 4096)
		a = 4096;
	if (a > (1u << 20) || (a & (a - 1)) != 0)
		return -EOPNOTSUPP;
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return -errno;
	d->fl = fl & ~O_DIRECT;
	d->align = a;
	d->cap = cap + a;
	d->cap += a - d->cap % a;
	d->buf = aligned_alloc(a, d->cap);
	return d->buf ? 0 : -ENOMEM;
}

/* pwrite(2) of n bytes at off until all are written, an error, or (direct)
 * a count that is not a multiple of the alignment.  Returns the bytes
 * written; *err: 0 or -errno. */
static size_t write_at(int fd, const uint8_t *p, size_t n, uint64_t off, size_t align, int *err)
{
	size_t w = 0;
	*err = 0;
	while (w < n) {
		ssize_t k = pwrite(fd, p + w, n - w, (off_t)(off + w));
		if (k < 0) {
			if (errno == EINTR)
				continue;
			*err = -errno;
			break;
		}
		if (k == 0) {
			*err = -EIO;
			break;
		}
		w += (size_t)k;
		if (align && (size_t)k % align != 0)
			break;
	}
	return w;
}

uint8_t *rlog__direct_stage(const struct rlog__direct *d)
{
	return d->buf + (d->end != UINT64_MAX ? d->kept : 0);
}

int rlog__direct_write(struct rlog__direct *d, int fd, uint64_t pos, const uint8_t *staged,
		       size_t len, size_t *done)
{
	*done = 0;
	/* buf[0] is the file's byte at, the alignment boundary at or before
	 * pos.  The bytes before pos are the copy kept from the last flush,
	 * or unknown (this is the first, or something else wrote since): the
	 * first partial page then goes through the page cache, and the
	 * direct writes start at the next boundary. */
	uint64_t at = pos - pos % d->align;
	size_t head = (size_t)(pos - at);
	if (head + len > d->cap || staged < d->buf || staged + len > d->buf + d->cap)
		return -EMSGSIZE;
	size_t w = head; /* buf[0, w) is in the file */
	if (head > 0 && !(d->end == pos && d->kept == head))
		w = d->align; /* up to there buffered, below */
	d->end = UINT64_MAX;
	if (staged != d->buf + head)
		memmove(d->buf + head, staged, len); /* the position moved (a wrap) */
	size_t t = head + len;
	int err = 0;
	if (w > t)
		w = t;
	if (w > head) {
		size_t b = write_at(fd, d->buf + head, w - head, pos, 0, &err);
		d->buffered_bytes += b;
		w = head + b;
	} else {
		w = 0; /* the kept bytes are written again, directly */
	}
	/* The whole pages directly, then the rest (and whatever a short
	 * direct write left) through the page cache. */
	size_t whole = d->failed ? 0 : t - t % d->align;
	if (err == 0 && whole > w) {
		if (fcntl(fd, F_SETFL, d->fl | O_DIRECT) == 0) {
			size_t k = write_at(fd, d->buf + w, whole - w, at + w, d->align, &err);
			fcntl(fd, F_SETFL, d->fl);
			if (err == -EINVAL) {
				/* The file system took the flag but not this
				 * write: buffered from now on. */
				d->failed = EINVAL;
				err = 0;
			}
			d->direct_bytes += k;
			w += k;
		} else {
			d->failed = errno;
		}
	}
	if (err == 0 && w < t) {
		size_t b = write_at(fd, d->buf + w, t - w, at + w, 0, &err);
		d->buffered_bytes += b;
		w += b;
	}
	*done = w > head ? w - head : 0;
	if (lseek(fd, (off_t)(pos + *done), SEEK_SET) < 0 && err == 0)
		err = -errno;
	if (err == 0) {
		/* The partial page, for the next flush. */
		d->kept = t % d->align;
		memmove(d->buf, d->buf + (t - d->kept), d->kept);
		d->end = pos + len;
	}
	return err;
}

void rlog__direct_close(struct rlog__direct *d)
{
	free(d->buf);
	d->buf = NULL;
}
