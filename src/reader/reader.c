/*
 * reader.c - the reader API (include/ringlog/reader.h): open and map the
 * file, hand out events and damage, close.  Parsing is in file.c, the time
 * merge in merge.c.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch.h"
#include "internal.h"
#include "layout.h"

/* rlog__reader_open_layout passes this as the visitor, with its own. */
struct layout_arg {
	rlog_block_fn fn;
	void *arg;
	bool with_cut;         /* the truncated last block counted too */
	struct rlog_reader *r;
};

static int layout_visit(void *arg, const struct rlog_block *b)
{
	(void)arg;
	(void)b;
	return 0; /* never called: reader_index replaces it */
}

static int reader_new(const void *data, size_t size, struct rlog_reader **out)
{
	struct rlog_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->data = data;
	r->size = size;
	r->seg_end = size;
	r->fd = -1;
	r->queue_max = RLOG__QUEUE_MAX;
	*out = r;
	return 0;
}

/* Indexes r (counting if count); closes it on failure. */
static int reader_index(struct rlog_reader *r, rlog_block_fn fn, void *arg, bool count,
			struct rlog_reader **out)
{
	int rc = count ? rlog__count_start(r) : 0;
	if (fn == layout_visit) {
		/* rlog__reader_open_layout: the caller's visitor, and the copies */
		struct layout_arg *la = arg;
		r->visit_copies = true;
		r->count_no_cut = !la->with_cut;
		fn = la->fn;
		arg = la->arg;
		la->r = r;
	}
	r->visit = fn;
	r->visit_arg = arg;
	if (rc == 0)
		rc = rlog__file_index(r);
	r->visit = NULL;
	r->visit_arg = NULL;
	if (r->fd >= 0) {
		close(r->fd); /* kept for rlog__reader_double only */
		r->fd = -1;
	}
	if (rc < 0) {
		rlog_reader_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

static int open_mem(const void *data, size_t size, rlog_block_fn fn, void *arg, bool count,
		    struct rlog_reader **out)
{
	struct rlog_reader *r;
	static const uint8_t empty[1];

	if (!out || (!data && size > 0))
		return -EINVAL;
	*out = NULL;
	int rc = reader_new(data ? data : empty, size, &r);
	if (rc < 0)
		return rc;
	return reader_index(r, fn, arg, count, out);
}

int rlog_reader_open_mem_visit(const void *data, size_t size, rlog_block_fn fn, void *arg,
			       struct rlog_reader **out)
{
	return open_mem(data, size, fn, arg, false, out);
}

int rlog_reader_open_mem(const void *data, size_t size, struct rlog_reader **out)
{
	return open_mem(data, size, NULL, NULL, false, out);
}

int rlog_reader_open_mem_count(const void *data, size_t size, struct rlog_reader **out)
{
	return open_mem(data, size, NULL, NULL, true, out);
}

static int open_path(const char *path, rlog_block_fn fn, void *arg, bool count,
		     struct rlog_reader **out);

int rlog_reader_open(const char *path, struct rlog_reader **out)
{
	return open_path(path, NULL, NULL, false, out);
}

int rlog_reader_open_visit(const char *path, rlog_block_fn fn, void *arg,
			   struct rlog_reader **out)
{
	return open_path(path, fn, arg, false, out);
}

int rlog_reader_open_count(const char *path, struct rlog_reader **out)
{
	return open_path(path, NULL, NULL, true, out);
}

static int open_path(const char *path, rlog_block_fn fn, void *arg, bool count,
		     struct rlog_reader **out)
{
	struct rlog_reader *r = NULL;
	struct stat st;
	void *map = NULL;
	int rc, fd;

	if (!path || !out)
		return -EINVAL;
	*out = NULL;
	/* O_NONBLOCK: a FIFO (named *.rlog in a directory read whole, say)
	 * opens at once, to be refused below, instead of waiting for a
	 * writer; a socket's open fails (ENXIO): refused the same way. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		rc = -errno;
		if (rc == -ENXIO && stat(path, &st) == 0 && !S_ISREG(st.st_mode))
			rc = -ESPIPE;
		return rc;
	}
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto fail_stat;
	}
	if (S_ISDIR(st.st_mode)) {
		rc = -EISDIR;
		goto fail_stat;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -ESPIPE;
		goto fail_stat;
	}
	/* A regular file: reads of it block as usual from here on (the fd is
	 * kept for the live and double-mapped readers). */
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		rc = -errno;
		goto fail_stat;
	}
	if ((uintmax_t)st.st_size > SIZE_MAX) {
		rc = -EFBIG;
		goto fail_stat;
	}
	if (st.st_size < 64) {
		/* Too short for a file header (mmap cannot map 0 bytes). */
		rc = -EBADMSG;
		goto fail_stat;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		rc = -errno;
		goto fail_stat;
	}
	/* The open pass reads the file front to back, and so, roughly, does
	 * the merge. */
	(void)posix_madvise(map, (size_t)st.st_size, POSIX_MADV_SEQUENTIAL);
	rc = reader_new(map, (size_t)st.st_size, &r);
	if (rc < 0)
		goto fail_new;
	r->map = map;
	r->map_size = (size_t)st.st_size;
	r->fd = fd; /* a wrapped circular file maps it again (rlog__reader_double) */
	return reader_index(r, fn, arg, count, out);

fail_new:
	munmap(map, (size_t)st.st_size);
	close(fd);
	return rc;
fail_stat:
	close(fd);
	return rc;
}

int rlog__reader_open_layout(const char *path, rlog_block_fn fn, void *arg, bool with_cut,
			     struct rlog_reader **out, struct rlog__layout *lay)
{
	struct layout_arg la = { fn, arg, with_cut, NULL };
	int rc = open_path(path, layout_visit, &la, true, out);
	if (rc < 0)
		return rc;
	const struct rlog_reader *r = *out;
	memset(lay, 0, sizeof *lay);
	lay->append_at = rlog__foff(r, r->last_end ? r->last_end : r->first_block);
	lay->next_seq = r->seq.any ? r->seq.high + 1 : 0;
	lay->have_block0 = r->block0 != 0;
	lay->block0 = r->block0;
	lay->block0_pid = r->block0_pid;
	lay->block0_tid = r->block0_tid;
	if (r->block0) {
		uint32_t size = rlog__get32(r->data + r->block0 + 32);
		lay->ring_start = r->block0 + RLOG__BLOCK_HDR_SIZE + size;
	}
	lay->major = r->info.version_major;
	lay->circular = r->circular;
	lay->prealloc = r->prealloc;
	lay->wrapped = r->wrap.on;
	lay->file_size = r->info.file_size;
	return 0;
}

int rlog_reader_set_flags(struct rlog_reader *r, unsigned flags)
{
	if (!r || (flags & ~RLOG_READER_TIME_SYNC))
		return -EINVAL;
	if (r->started)
		return -EBUSY;
	r->flags = flags;
	return 0;
}

const struct rlog_reader_info *rlog_reader_info(const struct rlog_reader *r)
{
	return &r->info;
}

int rlog_reader_next(struct rlog_reader *r, struct rlog_event *ev)
{
	if (!r || !ev)
		return -EINVAL;
	if (!r->started) {
		int rc = rlog__merge_start(r);
		if (rc < 0)
			return rc;
		r->started = true;
	}
	int rc = rlog__merge_next(r, ev);
	if (rc > 0 && !ev->flagged && ev->id == RLOG_ID_COUNTER)
		rlog__counter_follow(r, ev);
	return rc;
}

/* What a batch or a run starts with (batch.h): the error met after the
 * last batch's events, if any, else the merge, started if it is not.
 * Returns 0 or -errno. */
static int batch_ready(struct rlog_reader *r)
{
	if (r->batch_err) {
		int rc = r->batch_err;
		r->batch_err = 0;
		return rc;
	}
	if (!r->started) {
		int rc = rlog__merge_start(r);
		if (rc < 0)
			return rc;
		r->started = true;
	}
	return 0;
}

int rlog__reader_next_batch(struct rlog_reader *r, struct rlog_event *ev, size_t max)
{
	if (!r || !ev || max == 0)
		return -EINVAL;
	int rc = batch_ready(r);
	return rc < 0 ? rc : rlog__merge_batch(r, ev, max, &r->batch_err);
}

int rlog__reader_run(struct rlog_reader *r, struct rlog__run *run)
{
	if (!r || !run)
		return -EINVAL;
	int rc = batch_ready(r);
	return rc < 0 ? rc : rlog__merge_run(r, run);
}

int rlog__reader_run_take(struct rlog_reader *r, const struct rlog__run *run, uint32_t used,
			  uint64_t cursor, uint32_t events)
{
	if (!r || !run || !r->started || r->nheap == 0 || used > run->avail)
		return -EINVAL;
	return rlog__merge_run_take(r, used, cursor, events);
}

int64_t rlog_reader_time_ns(const struct rlog_reader *r, uint64_t ticks)
{
	return r ? rlog__time_ns(r, ticks) : 0;
}

int rlog_reader_thread(const struct rlog_reader *r, size_t i, uint32_t *pid, uint32_t *tid)
{
	if (!r || !pid || !tid)
		return -EINVAL;
	if (i >= r->nthreads)
		return -ERANGE;
	*pid = r->threads[i].pid;
	*tid = r->threads[i].tid;
	return 0;
}

size_t rlog_reader_damage_count(const struct rlog_reader *r)
{
	return r ? r->ndamage : 0;
}

int rlog_reader_damage(const struct rlog_reader *r, size_t i, struct rlog_damage *out)
{
	if (!r || !out)
		return -EINVAL;
	if (i >= r->ndamage)
		return -ERANGE;
	const struct rlog__damage *d = r->damage[i];
	out->offset = rlog__foff(r, d->offset);
	out->length = d->length;
	out->kind = d->kind;
	out->records_skipped = d->records_skipped;
	out->message = d->message;
	out->seq_first = d->seq_first;
	out->seq_last = d->seq_last;
	return 0;
}

const char *rlog_reader_strerror(int err)
{
	switch (err) {
	case -EBADMSG:
		return "not a ringlog log file (bad file header)";
	case -EPROTO:
		return "unsupported log file format version";
	case -ENODATA:
		return "no LOG_MARKER to time it by (block 0 damaged, no copy in the file "
		       "header): the file holds no readable trace";
	case -EFBIG:
		return "file too large to map";
	case -ESPIPE:
		return "not a regular file";
	default:
		return strerror(err < 0 ? -err : err);
	}
}

void rlog_reader_close(struct rlog_reader *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ndamage; i++)
		free(r->damage[i]);
	free(r->damage);
	free(r->regions);
	rlog__seq_free(r);
	rlog__count_free(r);
	rlog__meta_free(r);
	rlog__counter_free(r);
	for (size_t i = 0; i < r->nthreads; i++)
		free(r->threads[i].s.q);
	free(r->threads);
	rlog__map_free(&r->thread_map);
	free(r->heap);
	if (r->map)
		munmap(r->map, r->map_size);
	if (r->fd >= 0)
		close(r->fd);
	free(r->owned);
	free(r);
}

int rlog__reader_double(struct rlog_reader *r, size_t *base2)
{
	size_t size = r->size;
	if (r->map == NULL) {
		/* A memory image: a copy, twice. */
		size_t b = (size + 7) & ~(size_t)7;
		if (b > SIZE_MAX / 2)
			return -EFBIG;
		uint8_t *v = calloc(1, 2 * b);
		if (!v)
			return -ENOMEM;
		memcpy(v, r->data, size);
		memcpy(v + b, r->data, size);
		free(r->owned);
		r->owned = v;
		r->data = v;
		*base2 = b;
		return 0;
	}
	long pg = sysconf(_SC_PAGESIZE);
	size_t page = pg > 0 ? (size_t)pg : 4096;
	size_t b = (size + page - 1) / page * page;
	if (r->fd < 0 || b > SIZE_MAX / 2)
		return -EFBIG;
	/* Reserve the range, then map the file at both halves.  The bytes
	 * between the end of the file and the end of its last page read as
	 * zeros; the reader never reads past the file's end in either half. */
	uint8_t *v = mmap(NULL, 2 * b, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (v == MAP_FAILED)
		return -ENOMEM;
	if (mmap(v, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, r->fd, 0) == MAP_FAILED ||
	    mmap(v + b, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, r->fd, 0) == MAP_FAILED) {
		munmap(v, 2 * b);
		return -ENOMEM;
	}
	munmap(r->map, r->map_size);
	r->map = v;
	r->map_size = 2 * b;
	r->data = v;
	r->dropped = 0;
	r->drop_lo = r->drop_hi = 0; /* ranges of the old mapping */
	*base2 = b;
	return 0;
}
