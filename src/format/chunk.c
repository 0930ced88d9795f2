/*
 * chunk.c - the chunk codec (chunk.h; docs/FORMAT.md, "Chunks").
 */
#include "format/chunk.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "format/block.h"
#include "record.h"
#include "vec.h"

#define BLOCK_HDR RLOG__BLOCK_HDR_SIZE

static size_t round8(size_t n)
{
	return (n + 7u) & ~(size_t)7u;
}

int rlog__chunk_begin(struct rlog__chunk_writer *w, const uint8_t host_id[16],
		      const char *host_name, const char *session_name, uint64_t seq,
		      uint32_t flags)
{
	size_t hn = strlen(host_name), sn = strlen(session_name);
	if (hn == 0 || hn > 255 || sn == 0 || sn > 255)
		return -EINVAL;
	w->len = 0;
	memset(&w->h, 0, sizeof w->h);
	w->timed = false;
	w->header_size = round8(RLOG_CHUNK_HEADER_MIN + hn + sn);
	if (rlog__bytes_room(&w->buf, &w->cap, w->header_size) < 0)
		return -ENOMEM;
	memcpy(w->h.magic, RLOG_CHUNK_MAGIC, 8);
	w->h.version_major = RLOG_CHUNK_VERSION_MAJOR;
	w->h.version_minor = RLOG_CHUNK_VERSION_MINOR;
	w->h.header_size = (uint32_t)w->header_size;
	w->h.seq = seq;
	w->h.flags = flags;
	memcpy(w->h.host_id, host_id, 16);
	w->h.host_name_len = (uint8_t)hn;
	w->h.session_name_len = (uint8_t)sn;
	memset(w->buf, 0, w->header_size);
	memcpy(w->buf + RLOG_CHUNK_HEADER_MIN, host_name, hn);
	memcpy(w->buf + RLOG_CHUNK_HEADER_MIN + hn, session_name, sn);
	w->len = w->header_size;
	return 0;
}

/* What a record adds to the chunk's counts. */
struct count_walk {
	struct rlog__chunk_writer *w;
	bool thread;
};

static int count_record(void *arg, const struct rlog__record *r, uint64_t ticks, uint32_t off)
{
	struct count_walk *cw = arg;
	struct rlog_chunk_header *h = &cw->w->h;
	(void)off;
	int kind = rlog__record_kind(r->id, r->flagged);
	if (kind == RLOG_RECORD_LOSS && r->length >= sizeof(struct rlog_data_loss))
		h->lost_events += rlog__get64(r->payload);
	if (!cw->thread)
		return 0;
	if (kind == RLOG_RECORD_EVENT) {
		h->events++;
		h->event_bytes += r->size;
	}
	if (!cw->w->timed || ticks < h->first_time)
		h->first_time = ticks;
	if (!cw->w->timed || ticks > h->last_time)
		h->last_time = ticks;
	cw->w->timed = true;
	return 0;
}

int rlog__chunk_add_block(struct rlog__chunk_writer *w, const uint8_t *p, size_t size)
{
	struct rlog_block_header bh;
	if (size < BLOCK_HDR)
		return -EBADMSG;
	rlog__block_decode(p, &bh);
	if (bh.magic != RLOG_BLOCK_MAGIC || !rlog__block_sane(&bh) ||
	    size != BLOCK_HDR + (size_t)bh.data_size)
		return -EBADMSG;
	if (rlog__bytes_room(&w->buf, &w->cap, w->len + size) < 0)
		return -ENOMEM;
	memcpy(w->buf + w->len, p, size);
	w->len += size;
	w->h.block_count++;
	w->h.data_size += size;
	bool thread = !(bh.flags & (RLOG_BLOCK_FLAG_DAEMON | RLOG_BLOCK_FLAG_METADATA));
	if (!(bh.flags & RLOG_BLOCK_FLAG_METADATA))
		rlog__records_walk(p + BLOCK_HDR, bh.data_size, bh.base_time, count_record,
				   &(struct count_walk){ w, thread });
	return 0;
}

/* The fixed header's fields at their offsets (crc32 as in h). */
static void header_encode(uint8_t *o, const struct rlog_chunk_header *h)
{
	memcpy(o + 0, h->magic, 8);
	uint32_t version = (uint32_t)h->version_major | (uint32_t)h->version_minor << 16;
	rlog__put32(o + 8, version);
	rlog__put32(o + 12, h->header_size);
	rlog__put64(o + 16, h->seq);
	rlog__put64(o + 24, h->first_time);
	rlog__put64(o + 32, h->last_time);
	rlog__put64(o + 40, h->events);
	rlog__put64(o + 48, h->event_bytes);
	rlog__put64(o + 56, h->lost_events);
	rlog__put64(o + 64, h->data_size);
	rlog__put32(o + 72, h->block_count);
	rlog__put32(o + 76, h->flags);
	memcpy(o + 80, h->host_id, 16);
	o[96] = h->host_name_len;
	o[97] = h->session_name_len;
	o[98] = o[99] = 0;
	rlog__put32(o + 100, h->crc32);
	rlog__put64(o + 104, h->run_id);
	rlog__put64(o + 112, h->events_before);
	rlog__put64(o + 120, h->event_bytes_before);
	rlog__put64(o + 128, h->blocks_before);
}

const uint8_t *rlog__chunk_finish(struct rlog__chunk_writer *w, size_t *len)
{
	w->h.crc32 = 0;
	header_encode(w->buf, &w->h);
	w->h.crc32 = rlog__crc32c(0, w->buf, w->header_size);
	rlog__put32(w->buf + 100, w->h.crc32);
	*len = w->len;
	return w->buf;
}

void rlog__chunk_writer_free(struct rlog__chunk_writer *w)
{
	free(w->buf);
	memset(w, 0, sizeof *w);
}

static int bad(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int bad(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}

int rlog__chunk_decode(const uint8_t *p, size_t n, struct rlog__chunk *out, char *err,
		       size_t errlen)
{
	struct rlog_chunk_header *h = &out->h;
	memset(out, 0, sizeof *out);
	if (n < 16)
		return bad(err, errlen, -EBADMSG, "a chunk of %zu bytes: shorter than its %d-byte "
			   "header", n, RLOG_CHUNK_HEADER_MIN);
	if (memcmp(p, RLOG_CHUNK_MAGIC, 8) != 0)
		return bad(err, errlen, -EBADMSG, "not a ringlog chunk (no \"RLOGCHNK\" at +0)");
	memcpy(h->magic, p, 8);
	h->version_major = (uint16_t)(rlog__get32(p + 8) & 0xffffu);
	h->version_minor = (uint16_t)(rlog__get32(p + 8) >> 16);
	if (h->version_major != RLOG_CHUNK_VERSION_MAJOR)
		return bad(err, errlen, -EPROTO, "a chunk of version %u.%u: this reader reads "
			   "version %d", h->version_major, h->version_minor,
			   RLOG_CHUNK_VERSION_MAJOR);
	if (n < RLOG_CHUNK_HEADER_MIN)
		return bad(err, errlen, -EBADMSG, "a chunk of %zu bytes: shorter than its %d-byte "
			   "header", n, RLOG_CHUNK_HEADER_MIN);
	h->header_size = rlog__get32(p + 12);
	h->seq = rlog__get64(p + 16);
	h->first_time = rlog__get64(p + 24);
	h->last_time = rlog__get64(p + 32);
	h->events = rlog__get64(p + 40);
	h->event_bytes = rlog__get64(p + 48);
	h->lost_events = rlog__get64(p + 56);
	h->data_size = rlog__get64(p + 64);
	h->block_count = rlog__get32(p + 72);
	h->flags = rlog__get32(p + 76);
	memcpy(h->host_id, p + 80, 16);
	h->host_name_len = p[96];
	h->session_name_len = p[97];
	h->reserved = (uint16_t)(p[98] | p[99] << 8);
	h->crc32 = rlog__get32(p + 100);
	h->run_id = rlog__get64(p + 104);
	h->events_before = rlog__get64(p + 112);
	h->event_bytes_before = rlog__get64(p + 120);
	h->blocks_before = rlog__get64(p + 128);
	size_t names = RLOG_CHUNK_HEADER_MIN + (size_t)h->host_name_len + h->session_name_len;
	if (h->header_size % 8 || h->header_size < names || h->header_size > n)
		return bad(err, errlen, -EBADMSG, "bad header_size %" PRIu32 " (a multiple of 8, "
			   "at least %zu for its names, at most the chunk's %zu bytes)",
			   h->header_size, names, n);
	if (h->host_name_len == 0 || h->session_name_len == 0)
		return bad(err, errlen, -EBADMSG, "a chunk without a host name or a session name");
	uint8_t zero[4] = { 0, 0, 0, 0 };
	uint32_t crc = rlog__crc32c(0, p, 100);
	crc = rlog__crc32c(crc, zero, 4);
	crc = rlog__crc32c(crc, p + 104, h->header_size - 104);
	if (crc != h->crc32)
		return bad(err, errlen, -EBADMSG, "bad header checksum (crc32 0x%08" PRIx32
			   ", computed 0x%08" PRIx32 ")", h->crc32, crc);
	if (h->data_size != n - h->header_size)
		return bad(err, errlen, -EBADMSG, "data_size %" PRIu64 " but %zu bytes follow the "
			   "header", h->data_size, n - h->header_size);
	memcpy(out->host_name, p + RLOG_CHUNK_HEADER_MIN, h->host_name_len);
	memcpy(out->session_name, p + RLOG_CHUNK_HEADER_MIN + h->host_name_len,
	       h->session_name_len);
	out->blocks = p + h->header_size;
	uint64_t blocks = 0;
	for (size_t off = 0; off < h->data_size; blocks++) {
		size_t left = (size_t)h->data_size - off;
		struct rlog_block_header bh;
		if (left < BLOCK_HDR)
			return bad(err, errlen, -EBADMSG, "a block header cut short at chunk offset "
				   "%zu (%zu of 48 bytes)", h->header_size + off, left);
		rlog__block_decode(out->blocks + off, &bh);
		if (bh.magic != RLOG_BLOCK_MAGIC || !rlog__block_sane(&bh))
			return bad(err, errlen, -EBADMSG, "bad block header at chunk offset %zu",
				   h->header_size + off);
		if (left - BLOCK_HDR < bh.data_size)
			return bad(err, errlen, -EBADMSG, "a block cut short at chunk offset %zu "
				   "(%zu of %" PRIu32 " data bytes)", h->header_size + off,
				   left - BLOCK_HDR, bh.data_size);
		off += BLOCK_HDR + (size_t)bh.data_size;
	}
	if (blocks != h->block_count)
		return bad(err, errlen, -EBADMSG, "block_count %" PRIu32 " but %" PRIu64
			   " blocks follow the header", h->block_count, blocks);
	return 0;
}

int rlog__chunk_next_block(const struct rlog__chunk *c, size_t *off, const uint8_t **blk,
			   size_t *size)
{
	if (*off >= c->h.data_size)
		return 0;
	const uint8_t *p = c->blocks + *off;
	*blk = p;
	*size = BLOCK_HDR + (size_t)rlog__get32(p + 32);
	*off += *size;
	return 1;
}
