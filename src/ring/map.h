/*
 * map.h - a single ring (include/ringlog/ring.h) as its flush application
 * and `ringlog emit --ring` see it: a file or shared-memory object mapped
 * read-write, its header checked, its geometry copied out.
 *
 * The ring's memory is hostile input: another process may write anything
 * into it at any moment.  So the header is checked once, its geometry
 * (size, minimum mark, clock) is copied into struct rlog__ring_view, and
 * only the copy is used afterwards; the words that change (offsets,
 * counters) are read through the mapping each time and checked where they
 * are used (src/ring/flush.c).
 */
#ifndef RLOG_RING_MAP_H
#define RLOG_RING_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ringlog/ring.h"

struct rlog__ring_view {
	struct rlog_ring *hdr;  /* the header, in the mapping */
	unsigned char *ring;    /* the ring's first byte, in the mapping */
	uint32_t size;          /* checked copies of the header's fields */
	uint32_t min_free;
	uint32_t tick_source;
	uint64_t tick_freq_hz;  /* 0 for the TSC (measured by the flush side) */
	void *map;              /* what rlog__ring_unmap unmaps (NULL: not a mapping) */
	size_t map_len;
};

/*
 * Checks the ring header at mem, of which n bytes are mapped, and fills v
 * with its geometry (v->map stays NULL).  On failure writes a reason, one
 * line without a newline, into why.
 * Returns 0, or
 *   -EBADMSG  not a ring: too small, bad magic, a size or minimum mark out
 *             of range, a ring larger than the n bytes
 *   -EPROTO   a ring of another version or header size
 *   -ENOTSUP  a clock this machine cannot read as the ring says (TSC
 *             without a TSC), or an unknown tick source
 */
int rlog__ring_check(void *mem, size_t n, struct rlog__ring_view *v, char *why, size_t whylen);

/*
 * Opens path (a file, or a POSIX shared-memory object by its /dev/shm
 * path), maps it shared and read-write, and checks it (rlog__ring_check).
 * Returns 0 or -errno (open, fstat, mmap, or the check's), with a reason
 * in why.
 */
int rlog__ring_map(const char *path, struct rlog__ring_view *v, char *why, size_t whylen);

void rlog__ring_unmap(struct rlog__ring_view *v);

/*
 * Creates path as a ring of ring_size bytes (a multiple of 4,
 * RLOG_RING_MIN_SIZE .. RLOG_RING_MAX_SIZE) whose clock is tick_source
 * (RLOG_TICK_TSC or RLOG_TICK_MONOTONIC), mode 0600, refusing an existing
 * file.  Returns 0 or -errno (-EEXIST, -EINVAL, open, ftruncate, mmap),
 * with a reason in why.
 */
int rlog__ring_create(const char *path, uint32_t ring_size, uint32_t tick_source, char *why,
		      size_t whylen);

/* "tsc", "monotonic", "counter", or "unknown". */
const char *rlog__ring_clock_name(uint32_t tick_source);

#endif
