/*
 * satmath.h - int64 sums and differences that saturate instead of
 * overflowing.
 *
 * A time read from a file is in [-INT64_MAX, INT64_MAX] (the reader clamps
 * it, rlog__time_ns), so the difference of two times, or a sum of
 * durations, of a damaged or crafted file may not fit in int64, and
 * signed overflow is undefined in C.  These give the nearest int64
 * instead.  Portable C11: the range is checked before the operation (no
 * __builtin_*_overflow, a GCC/Clang extension).
 */
#ifndef RLOG_COMMON_SATMATH_H
#define RLOG_COMMON_SATMATH_H

#include <stdint.h>

/* a - b, saturated. */
static inline int64_t rlog__sat_sub(int64_t a, int64_t b)
{
	if (b < 0 && a > INT64_MAX + b)
		return INT64_MAX;
	if (b > 0 && a < INT64_MIN + b)
		return INT64_MIN;
	return a - b;
}

/* a + b, saturated. */
static inline int64_t rlog__sat_add(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

#endif
