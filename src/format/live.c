/*
 * live.c - the real-time stream's socket path, and framing a stream into
 * log file images (live.h).
 */
#include "format/live.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	struct rlog_data_loss_blocks dl = {
		.loss = { .events = events, .bytes = bytes, .cause = RLOG_LOSS_REAL_TIME },
		.blocks = blocks,
	};
	uint32_t n = rlog__loss_record(blk + BLOCK_HDR, time, &dl, sizeof dl);
	header_at(t, blk, RLOG_BLOCK_FLAG_DAEMON, 0, 0, 0, time, n, 1);
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
