/*
 * crc32c.h - CRC-32C (Castagnoli), the checksum of log file blocks since
 * file format 2.0 (docs/FORMAT.md, "Block checksum"), and the one place
 * that knows which checksum a file of a given major version uses.
 *
 * CRC-32C is the CRC of iSCSI, ext4 and SCTP: reflected polynomial
 * 0x82F63B78, initial value 0xFFFFFFFF, final XOR 0xFFFFFFFF;
 * crc32c("123456789") = 0xE3069283.  x86-64 computes it with the SSE4.2
 * `crc32` instruction (three streams at once, combined), chosen at run
 * time from what the CPU says it has; elsewhere a table-driven loop
 * (slicing by 8) gives the same values.
 */
#ifndef RLOG_COMMON_CRC32C_H
#define RLOG_COMMON_CRC32C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Continues a CRC-32C over n bytes at p: crc is the value returned for
 * the bytes before (0 to start), as zlib's crc32() does for its CRC.
 * Any alignment; p may be NULL when n is 0.
 */
uint32_t rlog__crc32c(uint32_t crc, const void *p, size_t n);

/* The same, always by the table-driven loop (tests compare the two). */
uint32_t rlog__crc32c_sw(uint32_t crc, const void *p, size_t n);

/* The CRC-32C of A followed by B, from crc1 = rlog__crc32c(0, A, ...) and
 * crc2 = rlog__crc32c(0, B, len2): zlib's crc32_combine, in about a
 * hundred steps whatever len2 is (the daemon's drain threads checksum a
 * block's data apart from its header: drain_workers.h). */
uint32_t rlog__crc32c_combine(uint32_t crc1, uint32_t crc2, uint64_t len2);

/* True if rlog__crc32c uses the CPU's crc32 instruction. */
bool rlog__crc32c_hw(void);

/*
 * The checksum of a file of format major version major (1: zlib's crc32;
 * 2: CRC-32C), continued over n bytes at p from crc (0 to start).
 */
uint32_t rlog__file_crc(unsigned major, uint32_t crc, const void *p, size_t n);

/*
 * A block's checksum in a file of major version major: over bytes 0..39 of
 * its header hdr, then its size bytes of data (docs/FORMAT.md).
 */
static inline uint32_t rlog__block_crc(unsigned major, const void *hdr, const void *data,
				       uint32_t size)
{
	return rlog__file_crc(major, rlog__file_crc(major, 0, hdr, 40), data, size);
}

#endif
