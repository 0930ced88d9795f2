/*
 * test_crc32c - the block checksum of file format 2.0 (src/common/crc32c.c,
 * docs/FORMAT.md "Block checksum"):
 *
 *   - CRC-32C's check value, crc32c("123456789") = 0xE3069283, and the
 *     checksums of FORMAT.md's examples, byte for byte;
 *   - the CPU's crc32 instruction (three streams, joined by the shift
 *     tables) and the table-driven loop agree for every length from 0 to
 *     70,000 bytes around the stream sizes, at every alignment, and when
 *     a CRC is continued piece by piece;
 *   - rlog__file_crc chooses the CRC by major version: zlib's crc32 for
 *     1.x, CRC-32C for 2.x.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "crc32c.h"
#include "tap.h"

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint32_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

/* Hex bytes ("52 4c ...") into out; returns the count. */
static size_t hex(const char *s, uint8_t *out)
{
	size_t n = 0;
	unsigned v;
	int k;
	while (sscanf(s, " %2x%n", &v, &k) == 1) {
		out[n++] = (uint8_t)v;
		s += k;
	}
	return n;
}

/* The bit-at-a-time definition: nothing shared with crc32c.c. */
static uint32_t reference(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
	}
	return ~c;
}

static void check_values(void)
{
	ASSERT_EQ(rlog__crc32c(0, "123456789", 9), 0xe3069283u);
	ASSERT_EQ(rlog__crc32c_sw(0, "123456789", 9), 0xe3069283u);
	ASSERT_EQ(rlog__crc32c(0, NULL, 0), 0);
	ASSERT_EQ(rlog__crc32c(0x12345678u, NULL, 0), 0x12345678u);
	ASSERT_EQ(rlog__file_crc(1, 0, "123456789", 9), 0xcbf43926u);
	ASSERT_EQ(rlog__file_crc(2, 0, "123456789", 9), 0xe3069283u);
	ASSERT_EQ(rlog__file_crc(1, 0x1234u, NULL, 0), 0x1234u);
	diag("the CPU's crc32 instruction is %s", rlog__crc32c_hw() ? "used" : "not available");

	/* FORMAT.md's examples: block 1 of thread 4243, the copy block, and
	 * the file header's marker. */
	uint8_t h[64], d[64], m[112];
	hex("52 4c 42 4b 30 00 00 00 01 00 00 00 00 00 00 00 92 10 00 00 93 10 00 00"
	    " 00 00 00 00 10 00 00 00 10 00 00 00 01 00 00 00", h);
	size_t nd = hex("08 00 00 84 78 56 34 12 2a 00 00 00 00 00 00 00", d);
	ASSERT_EQ(rlog__block_crc(2, h, d, (uint32_t)nd), 0xadd6595fu);
	ASSERT_EQ(rlog__block_crc(1, h, d, (uint32_t)nd), 0xc4883176u);
	hex("52 4c 42 4b 30 00 02 00 05 00 00 00 00 00 00 00 92 10 00 00 93 10 00 00"
	    " 00 10 00 00 10 00 00 00 10 00 00 00 01 00 00 00", h);
	nd = hex("08 00 22 80 00 10 00 00 77 6f 72 6b 65 72 2d 30", d);
	ASSERT_EQ(rlog__block_crc(2, h, d, (uint32_t)nd), 0x7d8edc7cu);
	ASSERT_EQ(rlog__block_crc(1, h, d, (uint32_t)nd), 0x5aaf6184u);
	memset(m, 0, sizeof m);
	hex("00 5e d0 b2 00 00 00 00 00 00 00 00 10 00 00 00 15 cd 85 3d fe 9c 97 17"
	    " 00 f2 05 2a 01 00 00 00 01 00 00 00 00 40 00 00 00 04 00 00 00 00 00 00"
	    " 64 65 6d 6f", m);
	ASSERT_EQ(rlog__file_crc(2, 0, m, sizeof m), 0x53ce8f73u);
	ASSERT_EQ(rlog__file_crc(1, 0, m, sizeof m), 0x51ee738du);
}

/* Every length in [from, to], at alignments 0..7 (the hardware path's
 * byte-wise start, its 3 x 8192 and 3 x 256 stream sizes, its tail). */
static void check_lengths(const uint8_t *buf, size_t from, size_t to, unsigned *bad)
{
	for (size_t n = from; n <= to; n++)
		for (size_t a = 0; a < 8; a++) {
			uint32_t want = reference(buf + a, n);
			if (rlog__crc32c(0, buf + a, n) != want || rlog__crc32c_sw(0, buf + a, n) != want)
				(*bad)++;
		}
}

static void check_paths(void)
{
	enum { MAX = 70000 };
	uint8_t *buf = malloc(MAX + 16);
	BAIL_IF(!buf, "malloc");
	for (size_t i = 0; i < MAX + 16; i++)
		buf[i] = (uint8_t)next();
	unsigned bad = 0;
	check_lengths(buf, 0, 800, &bad);
	check_lengths(buf, 3 * 256 * 2 - 9, 3 * 256 * 2 + 9, &bad);
	check_lengths(buf, 3 * 8192 - 9, 3 * 8192 + 9, &bad);
	check_lengths(buf, 2 * 3 * 8192 + 3 * 256 - 9, 2 * 3 * 8192 + 3 * 256 + 9, &bad);
	check_lengths(buf, MAX - 9, MAX, &bad);
	ASSERT_EQ(bad, 0);

	/* Continued in random pieces: the same as in one call. */
	unsigned split_bad = 0;
	for (int round = 0; round < 200; round++) {
		size_t n = next() % MAX, at = 0;
		uint32_t c = 0, s = 0;
		while (at < n) {
			size_t k = next() % 30000 + 1;
			if (k > n - at)
				k = n - at;
			c = rlog__crc32c(c, buf + at, k);
			s = rlog__crc32c_sw(s, buf + at, k);
			at += k;
		}
		uint32_t want = rlog__crc32c(0, buf, n);
		split_bad += c != want || s != want || want != reference(buf, n);
	}
	ASSERT_EQ(split_bad, 0);
	free(buf);
}

/* rlog__crc32c_combine: the CRC of A then B from the two CRCs, for every
 * split of a buffer at lengths around the hardware loop's pieces. */
static void check_combine(void)
{
	size_t n = 3 * 8192 + 1000;
	uint8_t *buf = malloc(n);
	for (size_t i = 0; i < n; i++)
		buf[i] = (uint8_t)(i * 131 + 7);
	uint32_t whole = rlog__crc32c(0, buf, n);
	static const size_t cuts[] = { 0, 1, 7, 8, 40, 48, 255, 256, 4096, 8192, 16384, 24576 };
	unsigned bad = 0;
	for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
		size_t a = cuts[k];
		uint32_t c = rlog__crc32c_combine(rlog__crc32c(0, buf, a),
						  rlog__crc32c(0, buf + a, n - a), n - a);
		bad += c != whole;
		/* and a short tail: a block's header, then its data */
		uint32_t h = rlog__crc32c(0, buf, 40);
		bad += rlog__crc32c_combine(h, rlog__crc32c(0, buf + 40, a), a) !=
		       rlog__crc32c(0, buf, 40 + a);
	}
	ASSERT_EQ(bad, 0);
	ASSERT_EQ(rlog__crc32c_combine(0xE3069283u, 0, 0), 0xE3069283u);
	free(buf);
}

int main(void)
{
	check_values();
	check_paths();
	check_combine();
	return done_testing();
}
