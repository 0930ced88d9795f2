/*
 * block.c - the block header codec (block.h; docs/FORMAT.md, "struct
 * rlog_block_header").
 */
#include "format/block.h"

#include <string.h>

#include "crc32c.h"
#include "record.h"

static void put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2); /* the formats are little-endian; so is every target (record.h) */
}

void rlog__block_encode(uint8_t *p, const struct rlog_block_header *h)
{
	rlog__put32(p + 0, h->magic);
	put16(p + 4, h->header_size);
	put16(p + 6, h->flags);
	rlog__put64(p + 8, h->seq);
	rlog__put32(p + 16, h->pid);
	rlog__put32(p + 20, h->tid);
	rlog__put64(p + 24, h->base_time);
	rlog__put32(p + 32, h->data_size);
	rlog__put32(p + 36, h->record_count);
	rlog__put32(p + 40, h->crc32);
	rlog__put32(p + 44, 0);
}

void rlog__block_decode(const uint8_t *p, struct rlog_block_header *h)
{
	h->magic = rlog__get32(p + 0);
	h->header_size = (uint16_t)(rlog__get32(p + 4) & 0xffffu);
	h->flags = (uint16_t)(rlog__get32(p + 4) >> 16);
	h->seq = rlog__get64(p + 8);
	h->pid = rlog__get32(p + 16);
	h->tid = rlog__get32(p + 20);
	h->base_time = rlog__get64(p + 24);
	h->data_size = rlog__get32(p + 32);
	h->record_count = rlog__get32(p + 36);
	h->crc32 = rlog__get32(p + 40);
	h->reserved = rlog__get32(p + 44);
}

bool rlog__block_sane(const struct rlog_block_header *h)
{
	return h->header_size == RLOG__BLOCK_HDR_SIZE && h->data_size % 4 == 0 &&
	       h->data_size <= RLOG_BLOCK_DATA_MAX && h->record_count <= h->data_size / 4;
}

uint32_t rlog__block_checksum(unsigned major, const uint8_t *p, uint32_t size)
{
	return rlog__block_crc(major, p, p + RLOG__BLOCK_HDR_SIZE, size);
}

void rlog__block_header_make(struct rlog_block_header *h, unsigned major, uint16_t flags,
			     uint64_t seq, uint32_t pid, uint32_t tid, uint64_t base_time,
			     const void *data, uint32_t size, uint32_t records)
{
	rlog__block_header_make_pre(h, major, flags, seq, pid, tid, base_time, data, size, records,
				    0, 0);
}

void rlog__block_header_make_pre(struct rlog_block_header *h, unsigned major, uint16_t flags,
				 uint64_t seq, uint32_t pid, uint32_t tid, uint64_t base_time,
				 const void *data, uint32_t size, uint32_t records,
				 uint32_t pre_crc, uint32_t pre_len)
{
	memset(h, 0, sizeof *h);
	h->magic = RLOG_BLOCK_MAGIC;
	h->header_size = RLOG__BLOCK_HDR_SIZE;
	h->flags = flags;
	h->seq = seq;
	h->pid = pid;
	h->tid = tid;
	h->base_time = base_time;
	h->data_size = size;
	h->record_count = records;
	/* Over the encoded bytes 0..39, as a reader checks it. */
	uint8_t b[RLOG__BLOCK_HDR_SIZE];
	rlog__block_encode(b, h);
	if (pre_len == 0 || pre_len > size || major < 2) {
		h->crc32 = rlog__block_crc(major, b, data, size);
		return;
	}
	uint32_t crc = rlog__crc32c_combine(rlog__crc32c(0, b, 40), pre_crc, pre_len);
	h->crc32 = rlog__crc32c(crc, (const uint8_t *)data + pre_len, size - pre_len);
}

void rlog__block_renumber(unsigned major, uint8_t *p, uint32_t size, uint64_t seq)
{
	bool ok = rlog__block_checksum(major, p, size) == rlog__get32(p + 40);
	rlog__put64(p + 8, seq);
	if (ok)
		rlog__put32(p + 40, rlog__block_checksum(major, p, size));
}
