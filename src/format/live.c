/*
 * live.c - the real-time stream (live.h; docs/FORMAT.md, "The real-time
 * stream"): its socket path, the end account and the passing of its
 * descriptor, the daemon's frames, and framing a stream into log file
 * images for the consumer.
 */
#define _GNU_SOURCE /* MSG_CMSG_CLOEXEC */
#include "format/live.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "format/block.h"
#include "format/loss.h"
#include "record.h"
#include "shm.h"
#include "vec.h"
#include "region_abi.h"

#define BLOCK_HDR RLOG__BLOCK_HDR_SIZE

int rlog__rt_path(const char *name, char *out, size_t n)
{
	char shm[96];
	if (rlog__shm_name(name, shm, sizeof shm) < 0)
		return -EINVAL;
	/* shm is "/ringlog.<lower-case name>" */
	int k = snprintf(out, n, "%s%s", RLOG_RT_PREFIX, shm + strlen(RLOG_SHM_PREFIX));
	return k < 0 || (size_t)k >= n ? -EINVAL : 0;
}

int rlog__live_connect(const char *name, uint32_t *peer_uid)
{
	struct sockaddr_un a;
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	if (rlog__rt_path(name, a.sun_path, sizeof a.sun_path) < 0)
		return -EINVAL;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		int err = errno;
		close(fd);
		return -err;
	}
	struct ucred cr;
	socklen_t len = sizeof cr;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0) {
		int err = errno;
		close(fd);
		return -err;
	}
	if (cr.uid != geteuid()) {
		*peer_uid = (uint32_t)cr.uid;
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* ---------------------------------------------------------------- */
/* The end account and its descriptor                                */
/* ---------------------------------------------------------------- */

void rlog__rt_end_encode(uint8_t *out, const struct rlog_rt_end *e)
{
	memcpy(out + 0, RLOG_RT_END_MAGIC, 8); /* 7 characters and the NUL */
	rlog__put32(out + 8, e->version);
	rlog__put32(out + 12, e->state);
	rlog__put64(out + 16, e->stream_bytes);
	rlog__put64(out + 24, e->blocks_whole);
	rlog__put64(out + 32, e->lost_blocks);
	rlog__put64(out + 40, e->lost_events);
	rlog__put64(out + 48, e->lost_bytes);
	rlog__put64(out + 56, e->last_time);
}

int rlog__rt_end_decode(const uint8_t *p, size_t n, struct rlog_rt_end *e)
{
	if (n < RLOG__RT_END_SIZE)
		return -ENODATA;
	if (memcmp(p, RLOG_RT_END_MAGIC, 8) != 0 || rlog__get32(p + 8) < RLOG_RT_END_VERSION)
		return -EBADMSG;
	memcpy(e->magic, p, 8);
	e->version = rlog__get32(p + 8);
	e->state = rlog__get32(p + 12);
	e->stream_bytes = rlog__get64(p + 16);
	e->blocks_whole = rlog__get64(p + 24);
	e->lost_blocks = rlog__get64(p + 32);
	e->lost_events = rlog__get64(p + 40);
	e->lost_bytes = rlog__get64(p + 48);
	e->last_time = rlog__get64(p + 56);
	return 0;
}

int rlog__rt_end_write(int fd, const struct rlog_rt_end *e)
{
	uint8_t b[RLOG__RT_END_SIZE];
	rlog__rt_end_encode(b, e);
	ssize_t n = pwrite(fd, b, sizeof b, 0);
	if (n < 0)
		return -errno;
	return n == (ssize_t)sizeof b ? 0 : -EIO;
}

int rlog__rt_end_read(int fd, struct rlog_rt_end *e)
{
	uint8_t b[RLOG__RT_END_SIZE];
	ssize_t n = pread(fd, b, sizeof b, 0);
	if (n < 0)
		return -errno;
	return rlog__rt_end_decode(b, (size_t)n, e);
}

/* One buffer (iov) and room for control messages (ctl, n bytes). */
static void msg_init(struct msghdr *m, struct iovec *iov, void *ctl, size_t n)
{
	memset(m, 0, sizeof *m);
	m->msg_iov = iov;
	m->msg_iovlen = 1;
	m->msg_control = ctl;
	m->msg_controllen = n;
}

long rlog__live_send_first(int fd, const void *p, size_t n, int endfd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof u);
	struct iovec iov = { (void *)p, n };
	struct msghdr m;
	msg_init(&m, &iov, u.buf, sizeof u.buf);
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &endfd, sizeof(int));
	ssize_t k;
	do
		k = sendmsg(fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (k < 0 && errno == EINTR);
	if (k < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return k;
}

long rlog__live_recv(int fd, void *buf, size_t n, int *endfd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { buf, n };
	struct msghdr m;
	msg_init(&m, &iov, u.buf, sizeof u.buf);
	ssize_t got = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
	if (got < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (m.msg_controllen == 0)
		return got;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int passed;
			memcpy(&passed, CMSG_DATA(c) + i * sizeof(int), sizeof passed);
			if (*endfd < 0)
				*endfd = passed;
			else
				close(passed);
		}
	}
	return got;
}

/* ---------------------------------------------------------------- */
/* The daemon's frames                                               */
/* ---------------------------------------------------------------- */

/* Lays out at blk a daemon block (pid 0, tid 0) holding one DATA_LOSS of
 * cause REAL_TIME, as docs/FORMAT.md "The real-time stream" says the
 * daemon sends it (BLOCK_HDR + RLOG__LOSS_RECORD_MAX bytes).  Returns the
 * block's data size. */
static uint32_t loss_block(uint8_t *blk, unsigned major, uint64_t seq, uint64_t time,
			   uint64_t blocks, uint64_t events, uint64_t bytes)
{
	return rlog__loss_block(blk, major, seq, time, RLOG_LOSS_REAL_TIME, blocks, events, bytes);
}

void rlog__live_frame_reset(struct rlog__live_frame *f)
{
	f->len = 0;
	f->nblk = 0;
}

void rlog__live_frame_free(struct rlog__live_frame *f)
{
	free(f->buf);
	free(f->blk);
	memset(f, 0, sizeof *f);
}

static int frame_put(struct rlog__live_frame *f, const void *p, size_t n)
{
	if (rlog__bytes_room(&f->buf, &f->cap, f->len + n) < 0)
		return -ENOMEM;
	memcpy(f->buf + f->len, p, n);
	f->len += n;
	return 0;
}

int rlog__live_frame_header(struct rlog__live_frame *f, const struct rlog_file_header *fh)
{
	return frame_put(f, fh, sizeof *fh);
}

/* Counts the block that ends the frame now. */
static int frame_count(struct rlog__live_frame *f, uint16_t flags, uint32_t events,
		       uint32_t event_bytes)
{
	if (rlog__vec_room(&f->blk, f->nblk, &f->blk_cap, sizeof *f->blk, 16) < 0)
		return -ENOMEM;
	bool thread = !(flags & (RLOG_BLOCK_FLAG_DAEMON | RLOG_BLOCK_FLAG_METADATA));
	f->blk[f->nblk++] = (struct rlog__live_fblock){ f->len, events, event_bytes, thread };
	return 0;
}

int rlog__live_frame_block(struct rlog__live_frame *f, uint16_t flags, uint64_t seq, uint32_t pid,
			   uint32_t tid, uint64_t base_time, const void *data, uint32_t size,
			   uint32_t records, uint32_t events, uint32_t event_bytes)
{
	struct rlog_block_header h;
	uint8_t hb[BLOCK_HDR];
	rlog__block_header_make(&h, RLOG_FILE_VERSION_MAJOR, flags, seq, pid, tid, base_time, data,
				size, records);
	rlog__block_encode(hb, &h);
	if (frame_put(f, hb, sizeof hb) < 0 || frame_put(f, data, size) < 0)
		return -ENOMEM;
	return frame_count(f, flags, events, event_bytes);
}

int rlog__live_frame_loss(struct rlog__live_frame *f, uint64_t seq, uint64_t time,
			  uint64_t blocks, uint64_t events, uint64_t bytes)
{
	uint8_t blk[BLOCK_HDR + RLOG__LOSS_RECORD_MAX];
	uint32_t n = loss_block(blk, RLOG_FILE_VERSION_MAJOR, seq, time, blocks, events, bytes);
	if (frame_put(f, blk, BLOCK_HDR + n) < 0)
		return -ENOMEM;
	return frame_count(f, RLOG_BLOCK_FLAG_DAEMON, 0, 0);
}

/* ---------------------------------------------------------------- */
/* The consumer's framing                                            */
/* ---------------------------------------------------------------- */

void rlog__live_init(struct rlog__live *t)
{
	memset(t, 0, sizeof *t);
	rlog__metacache_init(&t->meta, RLOG__META_LIMIT);
}

void rlog__live_free(struct rlog__live *t)
{
	free(t->in);
	free(t->block0);
	free(t->batch);
	free(t->img);
	rlog__metacache_free(&t->meta);
	memset(t, 0, sizeof *t);
}


static int bad(struct rlog__live *t, const char *fmt, uint64_t a)
{
	snprintf(t->error, sizeof t->error, fmt, a);
	return -EBADMSG;
}

/* A whole block at p: where it goes.  Returns 0 or -ENOMEM. */
static int take_block(struct rlog__live *t, const uint8_t *p, uint32_t data_size)
{
	size_t size = BLOCK_HDR + data_size;
	struct rlog_block_header h;
	rlog__block_decode(p, &h);
	bool ok = rlog__block_checksum(t->major, p, data_size) == h.crc32;
	t->blocks++;
	if (t->block0 == NULL) {
		t->block0 = malloc(size);
		if (!t->block0)
			return -ENOMEM;
		memcpy(t->block0, p, size);
		t->block0_size = size;
		return 0;
	}
	if (ok) {
		/* Copy blocks, the metadata of thread blocks and the daemon's
		 * (COUNTER_NAME): the images that follow carry them as copies. */
		int rc = rlog__metacache_block(&t->meta, h.pid, h.tid, h.base_time, p + BLOCK_HDR,
					       data_size);
		if (rc < 0)
			return rc;
	}
	if (ok && (h.flags & RLOG_BLOCK_FLAG_METADATA))
		return 0;
	if (rlog__bytes_room(&t->batch, &t->batch_cap, t->batch_len + size) < 0)
		return -ENOMEM;
	memcpy(t->batch + t->batch_len, p, size);
	t->batch_len += size;
	t->batch_blocks++;
	return 0;
}

int rlog__live_feed(struct rlog__live *t, const void *p, size_t n)
{
	if (t->error[0])
		return -EBADMSG;
	if (rlog__bytes_room(&t->in, &t->in_cap, t->in_len + n) < 0)
		return -ENOMEM;
	memcpy(t->in + t->in_len, p, n);
	t->in_len += n;
	size_t pos = 0;
	int rc = 0;
	while (rc == 0) {
		const uint8_t *q = t->in + pos;
		size_t avail = t->in_len - pos;
		if (t->header_size == 0) {
			if (avail < 64)
				break;
			uint32_t hsize = rlog__get32(q + 12);
			if (memcmp(q, RLOG_FILE_MAGIC, 8) != 0)
				return bad(t, "not a ringlog stream (no file header at offset %" PRIu64 ")",
					   t->offset + pos);
			uint32_t major = rlog__get32(q + 8) & 0xffffu;
			if (major < 1 || major > RLOG_FILE_VERSION_MAJOR)
				return bad(t, "a stream of another format version (major %" PRIu64 ")",
					   major);
			t->major = major;
			if (hsize < 64 || hsize % 4 || hsize > RLOG__LIVE_HEADER_MAX)
				return bad(t, "bad file header size %" PRIu64 " in the stream", hsize);
			if (avail < hsize)
				break;
			memcpy(t->header, q, hsize);
			t->header_size = hsize;
			pos += hsize;
			continue;
		}
		if (avail < BLOCK_HDR)
			break;
		struct rlog_block_header h;
		rlog__block_decode(q, &h);
		uint32_t data_size = h.data_size;
		if (h.magic != RLOG_BLOCK_MAGIC || !rlog__block_sane(&h))
			return bad(t, "bad block header at stream offset %" PRIu64
				      " (the stream cannot be followed past it)", t->offset + pos);
		if (avail < BLOCK_HDR + (size_t)data_size)
			break;
		rc = take_block(t, q, data_size);
		pos += BLOCK_HDR + data_size;
	}
	memmove(t->in, t->in + pos, t->in_len - pos);
	t->in_len -= pos;
	t->offset += pos;
	return rc;
}

struct render {
	struct rlog__live *t;
	size_t len;
	uint64_t seq;
};

/* Writes a block header at p for size bytes of data at p + 48. */
static void header_at(const struct rlog__live *t, uint8_t *p, uint16_t flags, uint64_t seq,
		      uint32_t pid, uint32_t tid, uint64_t base, uint32_t size, uint32_t records)
{
	struct rlog_block_header h;
	rlog__block_header_make(&h, t->major, flags, seq, pid, tid, base, p + BLOCK_HDR, size,
				records);
	rlog__block_encode(p, &h);
}

int rlog__live_end_loss(struct rlog__live *t, uint64_t blocks, uint64_t events, uint64_t bytes,
			 uint64_t time)
{
	/* The block cut short is among the blocks missed (the daemon counts
	 * every thread block it did not send whole). */
	t->offset += t->in_len;
	t->in_len = 0;
	uint8_t blk[BLOCK_HDR + RLOG__LOSS_RECORD_MAX];
	uint32_t n = loss_block(blk, t->major, 0, time, blocks, events, bytes);
	int rc = take_block(t, blk, n);
	t->blocks--; /* not one of the stream's */
	return rc;
}

static int render_copy(void *arg, uint32_t pid, uint32_t tid, uint64_t base_time, const void *data,
		       uint32_t size, uint32_t records)
{
	struct render *rd = arg;
	struct rlog__live *t = rd->t;
	if (rlog__bytes_room(&t->img, &t->img_cap, rd->len + BLOCK_HDR + size) < 0)
		return -ENOMEM;
	uint8_t *p = t->img + rd->len;
	memcpy(p + BLOCK_HDR, data, size);
	header_at(t, p, RLOG_BLOCK_FLAG_METADATA, rd->seq++, pid, tid, base_time, size, records);
	rd->len += BLOCK_HDR + size;
	return 0;
}

/* Appends the block at p (whole) with sequence number seq. */
static int append_renumbered(struct render *rd, const uint8_t *p, uint32_t data_size)
{
	struct rlog__live *t = rd->t;
	size_t size = BLOCK_HDR + data_size;
	if (rlog__bytes_room(&t->img, &t->img_cap, rd->len + size) < 0)
		return -ENOMEM;
	uint8_t *o = t->img + rd->len;
	memcpy(o, p, size);
	rlog__block_renumber(t->major, o, data_size, rd->seq++);
	rd->len += size;
	return 0;
}

int rlog__live_image(struct rlog__live *t, const uint8_t **img, size_t *len)
{
	if (t->header_size == 0 || t->block0 == NULL || (t->batch_blocks == 0 && t->imaged))
		return 0;
	t->imaged = true;
	struct render rd = { t, 0, 0 };
	if (rlog__bytes_room(&t->img, &t->img_cap, t->header_size + t->block0_size) < 0)
		return -ENOMEM;
	memcpy(t->img, t->header, t->header_size);
	rd.len = t->header_size;
	int rc = append_renumbered(&rd, t->block0, (uint32_t)(t->block0_size - BLOCK_HDR));
	if (rc == 0)
		rc = rlog__metacache_render(&t->meta, render_copy, &rd);
	for (size_t off = 0; rc == 0 && off < t->batch_len;) {
		struct rlog_block_header h;
		rlog__block_decode(t->batch + off, &h);
		uint32_t data_size = h.data_size;
		rc = append_renumbered(&rd, t->batch + off, data_size);
		off += BLOCK_HDR + data_size;
	}
	t->batch_len = 0;
	t->batch_blocks = 0;
	if (rc < 0)
		return rc;
	*img = t->img;
	*len = rd.len;
	return 1;
}
