#define _GNU_SOURCE
#include "logfile.h"

#include <assert.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crc32c.h"
#include "io.h"
#include "record.h"
#include "test_hooks.h"

void rlog__file_header_make(struct rlog_file_header *fh, uint32_t file_flags,
			    const struct rlog_log_marker *marker)
{
	memset(fh, 0, sizeof *fh);
	memcpy(fh->magic, RLOG_FILE_MAGIC, 8);
	fh->version_major = RLOG_FILE_VERSION_MAJOR;
	fh->version_minor = RLOG_FILE_VERSION_MINOR;
	fh->header_size = sizeof *fh;
	/* A copy of the LOG_MARKER, so that the file can be timed even if
	 * block 0 is damaged (docs/FORMAT.md, "File header"). */
	fh->flags = RLOG_FILE_FLAG_MARKER | file_flags;
	fh->marker = *marker;
	fh->marker_crc32 = rlog__file_crc(RLOG_FILE_VERSION_MAJOR, 0, &fh->marker,
					  sizeof fh->marker);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	fh->created_realtime_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint32_t rlog__marker_record(uint8_t *out, const struct rlog_log_marker *m)
{
	uint32_t hw[2] = { rlog__hdr_make(RLOG_ID_LOG_MARKER, sizeof *m, true), (uint32_t)m->sync_ticks };
	memcpy(out, hw, 8);
	memcpy(out + 8, m, sizeof *m);
	return 8 + sizeof *m;
}


/* The staging memory.  Returns 0 or -ENOMEM. */
static int stage_alloc(struct rlog__logfile *lf, int fd, size_t max_block)
{
	memset(lf, 0, sizeof *lf);
	lf->fd = fd;
	lf->major = RLOG_FILE_VERSION_MAJOR;
	lf->cap = max_block + sizeof(struct rlog_block_header);
	if (lf->cap < RLOG__LOGFILE_STAGE_MIN)
		lf->cap = RLOG__LOGFILE_STAGE_MIN;
	lf->stage = malloc(lf->cap);
	lf->staged_cap = 256;
	lf->staged = malloc(lf->staged_cap * sizeof *lf->staged);
	/* A block adds at most two pieces: its header (which may extend the
	 * stage's last piece) and referenced data. */
	lf->iov_cap = 2 * lf->staged_cap;
	lf->iov = malloc(lf->iov_cap * sizeof *lf->iov);
	if (lf->stage == NULL || lf->staged == NULL || lf->iov == NULL) {
		rlog__logfile_close(lf);
		return -ENOMEM;
	}
	return 0;
}

int rlog__logfile_resume(struct rlog__logfile *lf, int fd, size_t max_block, unsigned major,
			 uint64_t pos, uint64_t seq, uint64_t marker_offset, uint32_t marker_pid,
			 uint32_t marker_tid)
{
	int err = stage_alloc(lf, fd, max_block);
	if (err < 0)
		return err;
	lf->major = major; /* a file written before 2.0 goes on with its checksum */
	lf->file_bytes = pos;
	lf->seq = seq;
	lf->marker_offset = marker_offset;
	lf->marker_pid = marker_pid;
	lf->marker_tid = marker_tid;
	return 0;
}

int rlog__logfile_open(struct rlog__logfile *lf, int fd, size_t max_block,
		       const struct rlog_log_marker *marker, uint32_t pid, uint32_t tid)
{
	return rlog__logfile_open_flags(lf, fd, max_block, marker, pid, tid, 0);
}

int rlog__logfile_open_flags(struct rlog__logfile *lf, int fd, size_t max_block,
			     const struct rlog_log_marker *marker, uint32_t pid, uint32_t tid,
			     uint32_t file_flags)
{
	int err = stage_alloc(lf, fd, max_block);
	if (err < 0)
		return err;
	struct rlog_file_header fh;
	rlog__file_header_make(&fh, file_flags, marker);
	size_t done;
	err = rlog__write_all(fd, &fh, sizeof fh, &done);
	if (err < 0)
		return err;
	lf->file_bytes = sizeof fh;
	lf->marker_offset = lf->file_bytes;
	lf->marker_pid = pid;
	lf->marker_tid = tid;
	uint8_t rec[8 + sizeof(struct rlog_log_marker)];
	uint32_t n = rlog__marker_record(rec, marker);
	err = rlog__logfile_block(lf, RLOG_BLOCK_FLAG_DAEMON, pid, tid, marker->sync_ticks, rec, n, 1, 0, 0);
	if (err < 0)
		return err;
	return rlog__logfile_flush(lf);
}

/* Copies n bytes into the stage, as the next piece to write. */
static void add_stage(struct rlog__logfile *lf, const void *p, size_t n)
{
	uint8_t *at = lf->stage + lf->stage_used;
	memcpy(at, p, n);
	lf->stage_used += n;
	struct iovec *last = lf->niov ? &lf->iov[lf->niov - 1] : NULL;
	if (last && (uint8_t *)last->iov_base + last->iov_len == at)
		last->iov_len += n;
	else
		lf->iov[lf->niov++] = (struct iovec){ .iov_base = at, .iov_len = n };
}

static int stage_block(struct rlog__logfile *lf, uint16_t flags, uint32_t pid, uint32_t tid,
		       uint64_t base_time, const void *data, uint32_t size, uint32_t records,
		       uint32_t events, uint32_t event_bytes, bool ref)
{
	size_t need = sizeof(struct rlog_block_header) + size;
	uint32_t pre_crc = lf->pre_crc, pre_len = lf->pre_len; /* this block's only */
	lf->pre_len = 0;
	if (lf->used + need > lf->cap || lf->nstaged == lf->staged_cap) {
		int err = rlog__logfile_flush(lf);
		(void)err; /* a failed flush is counted; this block is tried anew */
	}
	if (need > lf->cap) {
		lf->lost_events += events;
		lf->lost_bytes += event_bytes;
		lf->unreported_events += events;
		lf->unreported_bytes += event_bytes;
		lf->lost_blocks++;
		return -EMSGSIZE;
	}
	struct rlog_block_header h;
	uint8_t hb[RLOG__BLOCK_HDR_SIZE];
	rlog__block_header_make_pre(&h, lf->major, flags, lf->seq++, pid, tid, base_time, data, size,
				    records, pre_crc, pre_len);
	rlog__block_encode(hb, &h);
	add_stage(lf, hb, sizeof hb);
	if (ref && size)
		lf->iov[lf->niov++] = (struct iovec){ .iov_base = (void *)data, .iov_len = size };
	else
		add_stage(lf, data, size);
	lf->used += need;
	lf->staged[lf->nstaged++] = (struct rlog__staged){
		.end = (uint32_t)lf->used, .events = events, .bytes = event_bytes,
		.thread = !(flags & RLOG_BLOCK_FLAG_DAEMON),
	};
	return 0;
}

int rlog__logfile_block(struct rlog__logfile *lf, uint16_t flags, uint32_t pid, uint32_t tid,
			uint64_t base_time, const void *data, uint32_t size, uint32_t records,
			uint32_t events, uint32_t event_bytes)
{
	return stage_block(lf, flags, pid, tid, base_time, data, size, records, events, event_bytes,
			   false);
}

int rlog__logfile_block_ref(struct rlog__logfile *lf, uint16_t flags, uint32_t pid, uint32_t tid,
			    uint64_t base_time, const void *data, uint32_t size, uint32_t records,
			    uint32_t events, uint32_t event_bytes)
{
	return stage_block(lf, flags, pid, tid, base_time, data, size, records, events, event_bytes,
			   true);
}

/* tests/test_recover_once.c: RINGLOG_TEST_DIE_IN_WRITE=N kills the
 * process (SIGKILL) in its Nth write that holds a block of application
 * events, once half of the last such block's data reached the file: what
 * a daemon killed in writev(2) leaves behind (the kernel ends a write to
 * a file early, between pages, when a fatal signal is pending). */
static void test_die_in_write(struct rlog__logfile *lf)
{
	static long left = -1;
	if (!RLOG_TEST_HOOKS)
		return;
	if (left < 0)
		left = (long)RLOG__TEST_ENV(RINGLOG_TEST_DIE_IN_WRITE);
	if (left <= 0)
		return;
	size_t k = lf->nstaged;
	while (k > 0 && !(lf->staged[k - 1].thread && lf->staged[k - 1].events > 0))
		k--;
	if (k == 0 || --left > 0)
		return;
	size_t hdr = sizeof(struct rlog_block_header);
	size_t start = k > 1 ? lf->staged[k - 2].end : 0;
	size_t cut = start + hdr + (lf->staged[k - 1].end - start - hdr) / 2;
	for (size_t i = 0; i < lf->niov && cut > 0; i++) {
		size_t n = lf->iov[i].iov_len < cut ? lf->iov[i].iov_len : cut;
		if (write(lf->fd, lf->iov[i].iov_base, n) != (ssize_t)n)
			break;
		cut -= n;
	}
	raise(SIGKILL);
}

bool rlog__logfile_sane(const struct rlog__logfile *lf)
{
	if (lf->nstaged > lf->staged_cap || lf->niov > lf->iov_cap || lf->used > lf->cap ||
	    lf->stage_used > lf->used)
		return false;
	size_t prev = 0;
	for (size_t i = 0; i < lf->nstaged; i++) {
		if (lf->staged[i].end < prev + sizeof(struct rlog_block_header))
			return false;
		prev = lf->staged[i].end;
	}
	if (prev != lf->used)
		return false;
	size_t sum = 0;
	for (size_t i = 0; i < lf->niov; i++)
		sum += lf->iov[i].iov_len;
	return sum == lf->used;
}

int rlog__logfile_flush(struct rlog__logfile *lf)
{
	assert(rlog__logfile_sane(lf));
	if (lf->used == 0)
		return 0;
	test_die_in_write(lf);
	size_t done;
	int err = rlog__writev_all(lf->fd, lf->iov, lf->niov, &done);
	size_t whole = 0; /* bytes of the blocks written entirely */
	for (size_t i = 0; i < lf->nstaged; i++) {
		struct rlog__staged *s = &lf->staged[i];
		if (s->end <= done) {
			whole = s->end;
			lf->events_written += s->events;
			lf->bytes_written += s->bytes;
			lf->buffers_written += s->thread;
		} else {
			lf->lost_events += s->events;
			lf->lost_bytes += s->bytes;
			lf->unreported_events += s->events;
			lf->unreported_bytes += s->bytes;
			lf->lost_blocks++;
			/* Its sequence number goes to the next block written: the
			 * blocks in the file are numbered without gaps
			 * (docs/FORMAT.md, "Block sequence"); the loss is the
			 * LOG_WRITE DATA_LOSS record's to report. */
			lf->seq--;
		}
	}
	if (err < 0) {
		lf->last_errno = -err;
		/* Cut a partly written block off, so the file ends on a block
		 * boundary and every block in it is whole.  A file whose bytes
		 * past the position are in use (preallocated, or circular and
		 * wrapped) keeps its size: the next block overwrites the part
		 * (docs/FORMAT.md says what a reader makes of one left behind). */
		if (done != whole) {
			if (lf->keep_size || ftruncate(lf->fd, (off_t)(lf->file_bytes + whole)) == 0)
				lseek(lf->fd, (off_t)(lf->file_bytes + whole), SEEK_SET);
		}
	}
	lf->file_bytes += whole;
	lf->used = 0;
	lf->stage_used = 0;
	lf->niov = 0;
	lf->nstaged = 0;
	assert(rlog__logfile_sane(lf));
	return err;
}

int rlog__logfile_rewrite_marker(struct rlog__logfile *lf, const struct rlog_log_marker *m)
{
	uint8_t buf[sizeof(struct rlog_block_header) + 8 + sizeof *m];
	uint32_t n = rlog__marker_record(buf + sizeof(struct rlog_block_header), m);
	struct rlog_block_header h;
	rlog__block_header_make(&h, lf->major, RLOG_BLOCK_FLAG_DAEMON, 0, lf->marker_pid,
				lf->marker_tid, m->sync_ticks, buf + sizeof h, n, 1);
	rlog__block_encode(buf, &h);
	ssize_t w = pwrite(lf->fd, buf, sizeof h + n, (off_t)lf->marker_offset);
	if (w < 0)
		return -errno;
	if (w != (ssize_t)(sizeof h + n))
		return -EIO;
	/* Then the file header's copy: marker_crc32, reserved, marker.  A
	 * reader prefers block 0, so a daemon that dies between the two
	 * writes leaves a file timed by the refined figure. */
	struct rlog_file_header fh;
	memset(&fh, 0, sizeof fh);
	fh.marker = *m;
	fh.marker_crc32 = rlog__file_crc(lf->major, 0, &fh.marker, sizeof fh.marker);
	size_t from = offsetof(struct rlog_file_header, marker_crc32);
	w = pwrite(lf->fd, (const uint8_t *)&fh + from, sizeof fh - from, (off_t)from);
	if (w < 0)
		return -errno;
	return w == (ssize_t)(sizeof fh - from) ? 0 : -EIO;
}

void rlog__logfile_close(struct rlog__logfile *lf)
{
	free(lf->stage);
	free(lf->staged);
	free(lf->iov);
	lf->stage = NULL;
	lf->staged = NULL;
	lf->iov = NULL;
}
