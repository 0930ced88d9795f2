/*
 * bits.h - bit counting for the free bitmap.
 */
#ifndef RLOG_COMMON_BITS_H
#define RLOG_COMMON_BITS_H

#include <stdint.h>

/* Index of the lowest set bit of a non-zero word.  __builtin_ctzll is a
 * GCC/Clang extension that compiles to one tzcnt/bsf instruction; C11 has
 * no equivalent. */
static inline unsigned rlog__ctz64(uint64_t v)
{
	return (unsigned)__builtin_ctzll(v);
}

/* Set bits in a word (same extension, same reason: one popcnt). */
static inline unsigned rlog__popcount64(uint64_t v)
{
	return (unsigned)__builtin_popcountll(v);
}

#endif
