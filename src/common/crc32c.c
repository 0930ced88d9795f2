/*
 * crc32c.c - CRC-32C, by the SSE4.2 crc32 instruction where the CPU has
 * it, else by tables (crc32c.h).
 *
 * The instruction takes 8 bytes per call but has a latency of 3 cycles,
 * so one stream runs at a third of its throughput.  The hardware loop
 * therefore computes three CRCs at once, over three consecutive pieces
 * of LONG (then SHORT) bytes, and joins them: the CRC of A followed by B
 * is the CRC of A shifted over len(B) zero bytes, xor the CRC of B
 * (started from 0).  A shift over a fixed length is a linear map of the
 * 32-bit CRC, applied with four tables of 256 entries (long_shift,
 * short_shift), built once.  The same construction as zlib's
 * crc32_combine (a GF(2) matrix squared up to the length).
 */
#define _GNU_SOURCE
#include "crc32c.h"

#include <pthread.h>
#include <string.h>
#include <zlib.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <nmmintrin.h>
#define HAVE_X86_CRC 1
#else
#define HAVE_X86_CRC 0
#endif

#define POLY 0x82f63b78u /* CRC-32C, reflected */

enum { LONG = 8192, SHORT = 256 };

static uint32_t sw_table[8][256];
static uint32_t long_shift[4][256], short_shift[4][256];
static uint32_t x2n_table[32]; /* x^(2^n) modulo the polynomial (zlib's x2n_table) */
static bool use_hw;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* mat (32 columns) times vec, over GF(2). */
static uint32_t gf2_times(const uint32_t *mat, uint32_t vec)
{
	uint32_t sum = 0;
	for (; vec; vec >>= 1, mat++)
		if (vec & 1)
			sum ^= *mat;
	return sum;
}

static void gf2_square(uint32_t *square, const uint32_t *mat)
{
	for (int n = 0; n < 32; n++)
		square[n] = gf2_times(mat, mat[n]);
}

/* The tables that shift a CRC over len zero bytes (len a power of 2). */
static void shift_tables(uint32_t t[4][256], size_t len)
{
	uint32_t odd[32], even[32], *op = even;
	odd[0] = POLY; /* one zero bit */
	for (int n = 1; n < 32; n++)
		odd[n] = UINT32_C(1) << (n - 1);
	gf2_square(even, odd); /* two zero bits */
	gf2_square(odd, even); /* four */
	/* Each square doubles: the first gives one byte (8 bits), in even. */
	for (;;) {
		gf2_square(even, odd);
		op = even;
		len >>= 1;
		if (len == 0)
			break;
		gf2_square(odd, even);
		op = odd;
		len >>= 1;
		if (len == 0)
			break;
	}
	for (uint32_t n = 0; n < 256; n++)
		for (int k = 0; k < 4; k++)
			t[k][n] = gf2_times(op, n << (8 * k));
}

static uint32_t shift(const uint32_t t[4][256], uint32_t crc)
{
	return t[0][crc & 0xff] ^ t[1][(crc >> 8) & 0xff] ^ t[2][(crc >> 16) & 0xff] ^
	       t[3][crc >> 24];
}

/* a times b modulo the polynomial (reflected: bit 31 is x^0), zlib's
 * multmodp; a is not 0. */
static uint32_t multmodp(uint32_t a, uint32_t b)
{
	uint32_t m = UINT32_C(1) << 31, p = 0;
	for (;;) {
		if (a & m) {
			p ^= b;
			if ((a & (m - 1)) == 0)
				break;
		}
		m >>= 1;
		b = b & 1 ? (b >> 1) ^ POLY : b >> 1;
	}
	return p;
}

/* x^(n * 2^k) modulo the polynomial. */
static uint32_t x2nmodp(uint64_t n, unsigned k)
{
	uint32_t p = UINT32_C(1) << 31; /* x^0 */
	for (; n; n >>= 1, k++)
		if (n & 1)
			p = multmodp(x2n_table[k & 31], p);
	return p;
}

static void init(void)
{
	uint32_t x = UINT32_C(1) << 30; /* x^1 */
	x2n_table[0] = x;
	for (int n = 1; n < 32; n++)
		x2n_table[n] = x = multmodp(x, x);
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
		sw_table[0][n] = c;
	}
	for (uint32_t n = 0; n < 256; n++)
		for (int k = 1; k < 8; k++)
			sw_table[k][n] = (sw_table[k - 1][n] >> 8) ^ sw_table[0][sw_table[k - 1][n] & 0xff];
#if HAVE_X86_CRC
	/* __builtin_cpu_supports (a GCC extension, as is the target
	 * attribute below): the one portable way to ask for SSE4.2 at run
	 * time without parsing cpuid ourselves.  __builtin_cpu_init first,
	 * since we may run before the constructors that call it. */
	__builtin_cpu_init();
	use_hw = __builtin_cpu_supports("sse4.2");
	if (use_hw) {
		shift_tables(long_shift, LONG);
		shift_tables(short_shift, SHORT);
	}
#endif
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static uint32_t sw(uint32_t crc, const uint8_t *p, size_t n)
{
	uint32_t c = ~crc;
	for (; n && ((uintptr_t)p & 7); n--)
		c = (c >> 8) ^ sw_table[0][(c ^ *p++) & 0xff];
	for (; n >= 8; n -= 8, p += 8) {
		uint64_t w = get64(p) ^ c;
		c = sw_table[7][w & 0xff] ^ sw_table[6][(w >> 8) & 0xff] ^
		    sw_table[5][(w >> 16) & 0xff] ^ sw_table[4][(w >> 24) & 0xff] ^
		    sw_table[3][(w >> 32) & 0xff] ^ sw_table[2][(w >> 40) & 0xff] ^
		    sw_table[1][(w >> 48) & 0xff] ^ sw_table[0][w >> 56];
	}
	while (n--)
		c = (c >> 8) ^ sw_table[0][(c ^ *p++) & 0xff];
	return ~c;
}

#if HAVE_X86_CRC
/* Three streams of len bytes each from p, joined into c0. */
__attribute__((target("sse4.2"))) static uint64_t three(uint64_t c0, const uint8_t *p, size_t len,
						       const uint32_t t[4][256])
{
	uint64_t c1 = 0, c2 = 0;
	for (const uint8_t *end = p + len; p < end; p += 8) {
		c0 = _mm_crc32_u64(c0, get64(p));
		c1 = _mm_crc32_u64(c1, get64(p + len));
		c2 = _mm_crc32_u64(c2, get64(p + 2 * len));
	}
	c0 = shift(t, (uint32_t)c0) ^ c1;
	return shift(t, (uint32_t)c0) ^ c2;
}

__attribute__((target("sse4.2"))) static uint32_t hw(uint32_t crc, const uint8_t *p, size_t n)
{
	uint64_t c = (uint32_t)~crc;
	for (; n && ((uintptr_t)p & 7); n--)
		c = _mm_crc32_u8((uint32_t)c, *p++);
	for (; n >= 3 * LONG; n -= 3 * LONG, p += 3 * LONG)
		c = three(c, p, LONG, long_shift);
	for (; n >= 3 * SHORT; n -= 3 * SHORT, p += 3 * SHORT)
		c = three(c, p, SHORT, short_shift);
	for (; n >= 8; n -= 8, p += 8)
		c = _mm_crc32_u64(c, get64(p));
	for (; n; n--)
		c = _mm_crc32_u8((uint32_t)c, *p++);
	return ~(uint32_t)c;
}
#endif

uint32_t rlog__crc32c(uint32_t crc, const void *p, size_t n)
{
	pthread_once(&once, init);
	if (n == 0)
		return crc;
#if HAVE_X86_CRC
	if (use_hw)
		return hw(crc, p, n);
#endif
	return sw(crc, p, n);
}

uint32_t rlog__crc32c_sw(uint32_t crc, const void *p, size_t n)
{
	pthread_once(&once, init);
	return n ? sw(crc, p, n) : crc;
}

uint32_t rlog__crc32c_combine(uint32_t crc1, uint32_t crc2, uint64_t len2)
{
	pthread_once(&once, init);
	/* crc1 shifted over len2 zero bytes (8 * len2 bits: x^(len2 * 2^3)). */
	return multmodp(x2nmodp(len2, 3), crc1) ^ crc2;
}

bool rlog__crc32c_hw(void)
{
	pthread_once(&once, init);
	return use_hw;
}

uint32_t rlog__file_crc(unsigned major, uint32_t crc, const void *p, size_t n)
{
	if (major >= 2)
		return rlog__crc32c(crc, p, n);
	/* zlib's crc32 takes uInt lengths (and returns 0, not crc, for a
	 * NULL pointer): blocks are at most 16 MiB, headers 176 bytes. */
	return n ? (uint32_t)crc32(crc, p, (uInt)n) : crc;
}
