/*
 * reader.c - the reader API (include/ringlog/reader.h): open and map the
 * file, hand out events and damage, close.  Parsing is in file.c, the time
 * merge in merge.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static int reader_new(const void *data, size_t size, struct rlog_reader **out)
{
	struct rlog_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->data = data;
	r->size = size;
	r->queue_max = RLOG__QUEUE_MAX;
	r->schema_last = SIZE_MAX;
	*out = r;
	return 0;
}

/* Indexes r (counting if count); closes it on failure. */
static int reader_index(struct rlog_reader *r, rlog_block_fn fn, void *arg, bool count,
			struct rlog_reader **out)
{
	int rc = count ? rlog__count_start(r) : 0;
	r->visit = fn;
	r->visit_arg = arg;
	if (rc == 0)
		rc = rlog__file_index(r);
	r->visit = NULL;
	r->visit_arg = NULL;
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
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto fail_stat;
	}
	if (S_ISDIR(st.st_mode)) {
		rc = -EISDIR;
		goto fail_stat;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
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
	close(fd);
	rc = reader_new(map, (size_t)st.st_size, &r);
	if (rc < 0)
		goto fail_new;
	r->map = map;
	r->map_size = (size_t)st.st_size;
	return reader_index(r, fn, arg, count, out);

fail_new:
	munmap(map, (size_t)st.st_size);
	return rc;
fail_stat:
	close(fd);
	return rc;
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
	out->offset = d->offset;
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
	free(r);
}
