/*
 * block.h - the block header of a log file and of a real-time stream,
 * encoded and decoded in one place (docs/FORMAT.md, "struct
 * rlog_block_header" and "Block checksum"):
 *
 *   +0  magic        u32   RLOG_BLOCK_MAGIC
 *   +4  header_size  u16   48
 *   +6  flags        u16   RLOG_BLOCK_FLAG_*
 *   +8  seq          u64   0, 1, 2, ... in file order
 *   +16 pid, +20 tid u32
 *   +24 base_time    u64   ticks before the first record
 *   +32 data_size    u32   record bytes after the header
 *   +36 record_count u32
 *   +40 crc32        u32   over bytes 0..39, then the data
 *   +44 reserved     u32   0
 *
 * The daemon's log file writer and real-time sink encode with it, the
 * reader and `ringlog tail`'s stream framing decode with it.  Fields are
 * read and written at their documented offsets, little-endian, so that no
 * caller depends on the C struct's layout.
 */
#ifndef RLOG_FORMAT_BLOCK_H
#define RLOG_FORMAT_BLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "ringlog/format.h"

/* The size of a block header (its header_size field). */
#define RLOG__BLOCK_HDR_SIZE 48u

/* Writes h's fields at their offsets into the 48 bytes at p (crc32 as it
 * is in h; reserved as 0). */
void rlog__block_encode(uint8_t *p, const struct rlog_block_header *h);

/* Reads the 48 bytes at p as a block header, field by field. */
void rlog__block_decode(const uint8_t *p, struct rlog_block_header *h);

/* True if a decoded header is possible (its magic aside, which callers
 * check on their own): header_size 48, data_size a multiple of 4 and at
 * most RLOG_BLOCK_DATA_MAX, record_count at most data_size / 4. */
bool rlog__block_sane(const struct rlog_block_header *h);

/* Fills h (magic, header_size, the fields given, reserved 0) with its
 * checksum over header bytes 0..39 and the size bytes of data, as a file
 * of format major version major has it (crc32c.h). */
void rlog__block_header_make(struct rlog_block_header *h, unsigned major, uint16_t flags,
			     uint64_t seq, uint32_t pid, uint32_t tid, uint64_t base_time,
			     const void *data, uint32_t size, uint32_t records);

/* rlog__block_header_make, given the CRC-32C (from 0) of data's first
 * pre_len bytes, computed elsewhere (the daemon's drain threads): combined
 * with the header's (rlog__crc32c_combine), then continued over the rest.
 * pre_len 0, or a file of major 1, checksums everything here. */
void rlog__block_header_make_pre(struct rlog_block_header *h, unsigned major, uint16_t flags,
				 uint64_t seq, uint32_t pid, uint32_t tid, uint64_t base_time,
				 const void *data, uint32_t size, uint32_t records,
				 uint32_t pre_crc, uint32_t pre_len);

/* The checksum of the block at p (48 bytes of header, then size bytes of
 * data) as a file of major version major computes it. */
uint32_t rlog__block_checksum(unsigned major, const uint8_t *p, uint32_t size);

/* Stores seq in the block at p and, if its checksum was correct, a new
 * one; a block whose checksum was wrong keeps it (a reader reports it as
 * damaged).  size is its data_size. */
void rlog__block_renumber(unsigned major, uint8_t *p, uint32_t size, uint64_t seq);

#endif
