/*
 * sink_file.c - the log file sink and its modes (sink_file.h).
 *
 * One struct rlog__logfile (src/format/logfile.c) is the file being written: it
 * stages blocks and writes them in large pieces, counting what the disk
 * refused.  This file decides where each block goes:
 *
 *   sequential, no maximum   append
 *   sequential, maximum L    append while pos + block <= L - reserve;
 *                            then refuse every block (full), but one
 *                            LOG_WRITE DATA_LOSS, which may use the reserve
 *   circular, maximum L      append while pos + block <= L; else wrap:
 *
 *        0        H          A                         W          L
 *        | header | block 0  | lap k+1 ...| cut | lap k ...|       |
 *                            ^ pos restarts here  (the file is cut back to
 *                              after the copies     W, or zeroed from W on
 *                                                   if preallocated)
 *
 *   newfile, maximum L       append while pos + block <= L; else close the
 *                            file (its LOG_MARKER refined) and open the
 *                            next name, with its own header, block 0 and
 *                            metadata copies
 *
 * A wrap or a new file never happens right after the copies (fresh_end):
 * a block that does not fit in an empty lap or file cannot exist
 * (props.c: the maximum holds two buffers and the file header; the copies
 * take at most a quarter of it).
 */
#define _GNU_SOURCE
#include "sink_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/logfile.h"
#include "io.h"

struct fsink {
	struct rlog__sink base;
	struct rlog__logfile lf;   /* the file being written */
	bool open;                 /* lf holds an open file */
	uint32_t mode;
	uint64_t max;              /* L, or 0 */
	char pattern[RLOG_PATH_MAX];
	bool force;
	size_t max_block;
	uint32_t pid, tid;
	rlog__marker_fn *marker;
	void *marker_arg;
	uint32_t file_flags;       /* RLOG_FILE_FLAG_* of the files written */
	bool full;                 /* sequential: the maximum is reached */
	uint64_t fresh_end;        /* where the current file or lap's copies end */
	uint64_t ring_start;       /* circular: just after block 0 */
	uint64_t lap_end;          /* circular: where the previous lap ended (0: none) */
	uint64_t high;             /* the highest byte written in the file */
	uint64_t index;            /* newfile: the file's number (1, 2, ...) */
	uint64_t closed_bytes;     /* newfile: bytes of the files closed */
	bool reopen;               /* newfile: opening the next file failed; try at flush */
};

static void set_err(struct fsink *fs, int err, const char *what)
{
	fs->base.st.last_errno = err;
	snprintf(fs->base.st.what, sizeof fs->base.st.what, "%s", what);
}

/* Moves what the file counted into the sink's statistics. */
static void absorb(struct fsink *fs)
{
	struct rlog__logfile *lf = &fs->lf;
	struct rlog__sink_stats *st = &fs->base.st;
	st->events_written += lf->events_written;
	st->bytes_written += lf->bytes_written;
	st->buffers_written += lf->buffers_written;
	st->lost_events += lf->lost_events;
	st->lost_bytes += lf->lost_bytes;
	st->lost_blocks += lf->lost_blocks;
	st->unreported_events += lf->unreported_events;
	st->unreported_bytes += lf->unreported_bytes;
	lf->events_written = lf->bytes_written = lf->buffers_written = 0;
	lf->lost_events = lf->lost_bytes = lf->lost_blocks = 0;
	lf->unreported_events = lf->unreported_bytes = 0;
	if (lf->last_errno && lf->last_errno != st->last_errno)
		set_err(fs, lf->last_errno, "writing the log file");
	if (fs->open && lf->file_bytes > fs->high)
		fs->high = lf->file_bytes;
	uint64_t data = fs->open ? lf->file_bytes : 0;
	if (fs->lap_end > data)
		data = fs->lap_end;
	st->file_bytes = fs->closed_bytes + data;
	st->full = fs->full;
}

static void refuse(struct fsink *fs, const struct rlog__out_block *b)
{
	struct rlog__sink_stats *st = &fs->base.st;
	st->lost_events += b->events;
	st->lost_bytes += b->event_bytes;
	st->unreported_events += b->events;
	st->unreported_bytes += b->event_bytes;
	st->lost_blocks++;
}

/* Stages a copy block (rlog__meta_emit_fn). */
static int emit_copy(void *arg, uint32_t pid, uint32_t tid, uint64_t base_time, const void *data,
		     uint32_t size, uint32_t records)
{
	struct fsink *fs = arg;
	rlog__logfile_block(&fs->lf, RLOG_BLOCK_FLAG_METADATA, pid, tid, base_time, data, size,
			    records, 0, 0);
	return 0;
}

/* The metadata copies, then fresh_end after them. */
static void copies(struct fsink *fs)
{
	/* The first file is started before the sink joins an output: the
	 * cache is empty then. */
	if (fs->base.out && rlog__output_copies(fs->base.out, emit_copy, fs) < 0)
		set_err(fs, ENOMEM, "writing the metadata copies");
	fs->fresh_end = fs->lf.file_bytes + fs->lf.used;
}

void rlog__sink_file_copies(struct rlog__sink *s, struct rlog__output *from)
{
	struct fsink *fs = (struct fsink *)s;
	if (rlog__output_copies(from, emit_copy, fs) < 0)
		set_err(fs, ENOMEM, "writing the metadata copies");
	fs->fresh_end = fs->lf.file_bytes + fs->lf.used;
}

/* Allocates the file to the maximum size.  Returns 0 or -errno. */
static int preallocate(struct fsink *fs, int fd)
{
	if (!(fs->mode & RLOG_MODE_PREALLOCATE) || fs->max == 0)
		return 0;
	int err = posix_fallocate(fd, 0, (off_t)fs->max);
	return -err;
}

/* Starts a file on fd: allocation, header, block 0, copies.  Returns 0 or
 * -errno (fd is then not the sink's). */
static int start_file(struct fsink *fs, int fd)
{
	struct rlog_log_marker m;
	fs->marker(fs->marker_arg, &m);
	int err = preallocate(fs, fd);
	if (err < 0) {
		set_err(fs, -err, "allocating the log file (preallocate)");
		return err;
	}
	err = rlog__logfile_open_flags(&fs->lf, fd, fs->max_block, &m, fs->pid, fs->tid,
				       fs->file_flags);
	if (err < 0) {
		rlog__logfile_close(&fs->lf);
		set_err(fs, -err, "writing the log file header");
		return err;
	}
	fs->lf.keep_size = (fs->mode & RLOG_MODE_PREALLOCATE) != 0;
	fs->open = true;
	fs->high = fs->lf.file_bytes;
	fs->ring_start = fs->lf.file_bytes; /* after the header and block 0 */
	fs->lap_end = 0;
	fs->full = false;
	copies(fs);
	return 0;
}

/* newfile: opens file number index.  Returns 0 or -errno. */
static int open_next(struct fsink *fs)
{
	char name[RLOG_PATH_MAX + 24];
	if (rlog__file_name(fs->pattern, fs->index, name, sizeof name) < 0) {
		set_err(fs, ENAMETOOLONG, "naming the next log file");
		return -ENAMETOOLONG;
	}
	/* A link planted for a later file is never written through. */
	int fd = rlog__create_output(name, fs->force ? RLOG_OUT_FORCE : 0, NULL);
	if (fd < 0) {
		int err = -fd;
		char what[96];
		snprintf(what, sizeof what, "creating log file %d%s", (int)fs->index,
			 err == EEXIST ? " (it exists; start with --force to overwrite)" : "");
		set_err(fs, err, what);
		return -err;
	}
	int err = start_file(fs, fd);
	if (err < 0) {
		close(fd);
		return err;
	}
	fs->base.st.file_index = fs->index;
	fs->reopen = false;
	return 0;
}

/* Writes what is staged, refines block 0 and closes the current file. */
static void close_file(struct fsink *fs, const struct rlog_log_marker *refined)
{
	if (!fs->open)
		return;
	rlog__logfile_flush(&fs->lf);
	absorb(fs);
	/* A write that failed part way (a full disk) after a wrap leaves
	 * its part past the position, where the older lap's bytes are
	 * kept (keep_size): past every whole block it is cut off, so that
	 * the file ends on a block (docs/FORMAT.md, "Circular files"). */
	uint64_t end = fs->lf.file_bytes > fs->high ? fs->lf.file_bytes : fs->high;
	struct stat st;
	if (!(fs->mode & RLOG_MODE_PREALLOCATE) && fstat(fs->lf.fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (uint64_t)st.st_size > end && ftruncate(fs->lf.fd, (off_t)end) < 0)
		set_err(fs, errno, "cutting the log file's last, partly written block");
	if (refined && rlog__logfile_rewrite_marker(&fs->lf, refined) < 0)
		set_err(fs, errno ? errno : EIO, "rewriting the LOG_MARKER");
	if (fsync(fs->lf.fd) < 0 && errno != EINVAL && errno != EROFS)
		set_err(fs, errno, "syncing the log file");
	close(fs->lf.fd);
	fs->closed_bytes += fs->lf.file_bytes > fs->lap_end ? fs->lf.file_bytes : fs->lap_end;
	rlog__logfile_close(&fs->lf);
	fs->open = false;
	fs->lap_end = 0;
	absorb(fs);
}

/* newfile: the current file is at its maximum size. */
static void rotate(struct fsink *fs)
{
	struct rlog_log_marker m;
	fs->marker(fs->marker_arg, &m); /* the frequency measured so far */
	close_file(fs, &m);
	fs->index++;
	if (open_next(fs) < 0)
		fs->reopen = true;
}

/* circular: the next block does not fit before the maximum: restart the
 * ring after block 0. */
static void wrap(struct fsink *fs)
{
	struct rlog__logfile *lf = &fs->lf;
	rlog__logfile_flush(lf);
	absorb(fs);
	uint64_t w = lf->file_bytes;
	if (fs->mode & RLOG_MODE_PREALLOCATE) {
		/* The bytes past the lap's end belong to older laps: zeros mark
		 * the end of the data (docs/FORMAT.md). */
		static const uint8_t zeros[65536];
		for (uint64_t at = w; at < fs->high;) {
			size_t n = fs->high - at < sizeof zeros ? (size_t)(fs->high - at) : sizeof zeros;
			ssize_t k = pwrite(lf->fd, zeros, n, (off_t)at);
			if (k <= 0) {
				set_err(fs, k < 0 ? errno : EIO, "clearing the end of the circular file");
				break;
			}
			at += (uint64_t)k;
		}
	} else if (ftruncate(lf->fd, (off_t)w) < 0) {
		set_err(fs, errno, "cutting the circular file at its wrap");
	}
	fs->high = w;
	fs->lap_end = w;
	if (lseek(lf->fd, (off_t)fs->ring_start, SEEK_SET) < 0) {
		set_err(fs, errno, "wrapping the circular file");
		return;
	}
	lf->file_bytes = fs->ring_start;
	lf->keep_size = true; /* the older lap lies past the position */
	copies(fs);
}

static void fs_block(struct rlog__sink *s, const struct rlog__out_block *b)
{
	struct fsink *fs = (struct fsink *)s;
	if (!fs->open) {
		refuse(fs, b);
		return;
	}
	uint64_t need = sizeof(struct rlog_block_header) + b->size;
	uint64_t pos = fs->lf.file_bytes + fs->lf.used;
	bool log_write = (b->flags & RLOG_BLOCK_FLAG_DAEMON) && b->cause == RLOG_LOSS_LOG_WRITE;
	if (fs->max) {
		if (fs->mode & RLOG_MODE_CIRCULAR) {
			if (pos + need > fs->max && pos > fs->fresh_end)
				wrap(fs);
		} else if (fs->mode & RLOG_MODE_NEWFILE) {
			if (pos + need > fs->max && pos > fs->fresh_end)
				rotate(fs);
			if (!fs->open) {
				refuse(fs, b);
				return;
			}
		} else {
			uint64_t limit = log_write ? fs->max : fs->max - RLOG__FILE_RESERVE;
			if ((fs->full && !log_write) || pos + need > limit) {
				if (!log_write && !fs->full) {
					fs->full = true;
					set_err(fs, EFBIG, "the log file reached --max-file-size; later "
						"blocks were not written (log_buffers_lost)");
				}
				refuse(fs, b);
				absorb(fs);
				return;
			}
		}
	}
	/* A producer's bytes are written from the region: copied once, by
	 * the kernel (docs/DECISIONS.md, "Validating in place"). */
	rlog__logfile_pre_crc(&fs->lf, b->pre_crc, b->pre_len);
	if (b->stable)
		rlog__logfile_block_ref(&fs->lf, b->flags, b->pid, b->tid, b->base_time, b->data,
					b->size, b->records, b->events, b->event_bytes);
	else
		rlog__logfile_block(&fs->lf, b->flags, b->pid, b->tid, b->base_time, b->data,
				    b->size, b->records, b->events, b->event_bytes);
	absorb(fs);
}

static int fs_flush(struct rlog__sink *s)
{
	struct fsink *fs = (struct fsink *)s;
	if (fs->reopen)
		(void)open_next(fs);
	if (!fs->open)
		return fs->base.st.last_errno ? -fs->base.st.last_errno : 0;
	int err = rlog__logfile_flush(&fs->lf);
	absorb(fs);
	return err;
}

static int fs_finish(struct rlog__sink *s, const struct rlog_log_marker *refined)
{
	struct fsink *fs = (struct fsink *)s;
	close_file(fs, refined);
	return fs->base.st.last_errno ? -fs->base.st.last_errno : 0;
}

static void fs_free(struct rlog__sink *s)
{
	struct fsink *fs = (struct fsink *)s;
	if (fs->open) {
		close(fs->lf.fd);
		rlog__logfile_close(&fs->lf);
	}
	free(fs);
}

static const struct rlog__sink_ops file_ops = {
	.name = "file",
	.block = fs_block,
	.flush = fs_flush,
	.poll = NULL,
	.finish = fs_finish,
	.free = fs_free,
};

static struct fsink *fs_new(const struct rlog__file_opts *o)
{
	struct fsink *fs = calloc(1, sizeof *fs);
	if (!fs)
		return NULL;
	fs->base.ops = &file_ops;
	fs->mode = o->mode;
	fs->max = o->max_size;
	if (o->pattern)
		snprintf(fs->pattern, sizeof fs->pattern, "%s", o->pattern);
	fs->force = o->force;
	fs->max_block = o->max_block;
	fs->pid = o->pid;
	fs->tid = o->tid;
	fs->marker = o->marker;
	fs->marker_arg = o->marker_arg;
	if (o->mode & RLOG_MODE_CIRCULAR)
		fs->file_flags |= RLOG_FILE_FLAG_CIRCULAR;
	if ((o->mode & RLOG_MODE_PREALLOCATE) && o->max_size)
		fs->file_flags |= RLOG_FILE_FLAG_PREALLOCATED;
	fs->index = (o->mode & RLOG_MODE_NEWFILE) ? (o->index ? o->index : 1) : 0;
	fs->base.st.file_index = fs->index;
	return fs;
}

int rlog__sink_file_open(const struct rlog__file_opts *o, struct rlog__sink **out)
{
	struct fsink *fs = fs_new(o);
	if (!fs)
		return -ENOMEM;
	int err = start_file(fs, o->fd);
	if (err < 0) {
		free(fs);
		return err;
	}
	absorb(fs);
	*out = &fs->base;
	return 0;
}

int rlog__sink_file_resume(const struct rlog__file_opts *o, const struct rlog__file_resume *rs,
			   struct rlog__sink **out)
{
	struct fsink *fs = fs_new(o);
	if (!fs)
		return -ENOMEM;
	int err = rlog__logfile_resume(&fs->lf, o->fd, o->max_block, rs->major, rs->pos, rs->next_seq,
				       rs->marker_offset, rs->marker_pid, rs->marker_tid);
	if (err < 0) {
		free(fs);
		return err;
	}
	if (lseek(o->fd, (off_t)rs->pos, SEEK_SET) < 0) {
		err = -errno;
		rlog__logfile_close(&fs->lf);
		free(fs);
		return err;
	}
	fs->open = true;
	fs->ring_start = rs->ring_start;
	fs->lap_end = rs->wrapped ? rs->data_end : 0;
	fs->high = rs->data_end > rs->pos ? rs->data_end : rs->pos;
	fs->lf.keep_size = rs->wrapped || (o->mode & RLOG_MODE_PREALLOCATE);
	fs->fresh_end = rs->pos;
	if (o->mode & RLOG_MODE_NEWFILE) {
		fs->index = rs->index;
		fs->base.st.file_index = rs->index;
	}
	absorb(fs);
	*out = &fs->base;
	return 0;
}
