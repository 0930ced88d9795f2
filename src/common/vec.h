/*
 * vec.h - growing the vectors of ringlog's tools (arrays of n used of cap
 * allocated elements): one place for the doubling, instead of a copy at
 * every vector.
 *
 *   if (rlog__vec_room(&v, n, &cap, sizeof(*v), 16) < 0)
 *       return -ENOMEM;
 *   v[n++] = x;
 */
#ifndef RLOG_COMMON_VEC_H
#define RLOG_COMMON_VEC_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * Room for one more element: if n == *cap, the vector whose pointer is at
 * vp (a T **) grows to twice its capacity (first when empty).  Returns 0,
 * or -ENOMEM (the vector unchanged).  The pointer is read and written with
 * memcpy: T * and void * have one representation on every POSIX system.
 */
static inline int rlog__vec_room(void *vp, size_t n, size_t *cap, size_t elem, size_t first)
{
	if (n < *cap)
		return 0;
	void *v;
	memcpy(&v, vp, sizeof(v));
	size_t ncap = *cap ? 2 * *cap : first;
	if (ncap > SIZE_MAX / elem)
		return -ENOMEM;
	void *p = realloc(v, ncap * elem);
	if (!p)
		return -ENOMEM;
	memcpy(vp, &p, sizeof(p));
	*cap = ncap;
	return 0;
}

/*
 * Room for need bytes in the byte buffer at *buf (capacity *cap): it grows
 * by doubling from 64 KiB.  Returns 0, or -ENOMEM (the buffer unchanged).
 */
static inline int rlog__bytes_room(uint8_t **buf, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 65536;
	while (c < need) {
		if (c > SIZE_MAX / 2)
			return -ENOMEM;
		c *= 2;
	}
	uint8_t *p = realloc(*buf, c);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = c;
	return 0;
}

#endif
