/*
 * shm.h - the session region: a POSIX shared-memory object named after the
 * session, holding the header, buffer descriptors, producer slots, process
 * entries, the free bitmap and the buffer pool (layout in include/ringlog/abi.h and
 * docs/FORMAT.md).
 *
 * Every size and offset is validated when a region is opened, and the
 * validated copies below are what code uses afterwards: a value is never
 * re-read from the (possibly hostile) region to index it.
 */
#ifndef RLOG_COMMON_SHM_H
#define RLOG_COMMON_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ringlog/abi.h"

#define RLOG_DEFAULT_BUFFER_SIZE  16384u
#define RLOG_DEFAULT_BUFFER_COUNT 1024u
#define RLOG_MIN_BUFFER_SIZE      4096u
#define RLOG_MAX_BUFFER_SIZE      (16u << 20)
#define RLOG_MIN_BUFFER_COUNT     2u
#define RLOG_MAX_BUFFER_COUNT     65536u
#define RLOG_MAX_REGION_SIZE      (UINT64_C(4) << 30)

struct rlog__region {
	struct rlog_shm_header *hdr;
	struct rlog_shm_desc *desc;
	struct rlog_shm_slot *slots;
	struct rlog_shm_proc *procs;  /* slot_count of them */
	_Atomic uint64_t *free_bits;
	uint8_t *buffers;
	size_t size;             /* mapped bytes */
	uint32_t buffer_size;    /* validated copies of the header's geometry */
	uint32_t buffer_count;
	uint32_t slot_count;
	uint32_t free_words;
	uint32_t high_water;
};

struct rlog__region_params {
	uint32_t buffer_size;    /* bytes, multiple of 4096 */
	uint32_t buffer_count;
	uint32_t flush_timer_ms;
	uint64_t enable_mask;
};

/* Checks a session name: 1..64 of [A-Za-z0-9._-], not "." or "..".
 * Returns 0 or -EINVAL. */
int rlog__name_validate(const char *name);

/* Writes the shm_open name (RLOG_SHM_PREFIX + lower-case name) into out,
 * which holds at least 80 bytes.  Returns 0 or -EINVAL. */
int rlog__shm_name(const char *name, char *out, size_t cap);

/*
 * Creates the region for a new session (mode 0600, exclusive), lays it out
 * and leaves it in state CREATING; the daemon makes it ACTIVE.
 * Returns 0, -EEXIST if a session of that name (in any case) exists,
 * -EINVAL for a bad name or parameters, or another -errno.
 */
int rlog__region_create(const char *name, const struct rlog__region_params *p,
			struct rlog__region *out);

/*
 * Opens and validates an existing session region.
 * Returns 0, -ENOENT, -EPROTO (bad magic, version or geometry), -EACCES,
 * or another -errno.
 */
int rlog__region_open(const char *name, struct rlog__region *out);

/*
 * Maps the first page of a session's object as it is, without validating
 * anything: for `ringlog stop` on a session whose header was scribbled,
 * which still needs to reach the words its daemon reads.  Returns 0,
 * -ENOENT, -EPROTO (smaller than a header), or another -errno.
 */
int rlog__region_map_header(const char *name, struct rlog_shm_header **out);
void rlog__region_unmap_header(struct rlog_shm_header *h);

/* Unmaps the region (does not remove it). */
void rlog__region_close(struct rlog__region *r);

/* Removes the session's shared-memory object.  Returns 0 or -errno. */
int rlog__region_unlink(const char *name);

static inline uint8_t *rlog__region_buffer(const struct rlog__region *r, uint32_t idx)
{
	return r->buffers + (size_t)idx * r->buffer_size;
}

/*
 * Invariant checkers (STYLE.md).  The daemon calls them on what it reads
 * from the region, which is hostile input, as validation; the producer
 * calls them inside assert() on its own buffer, so test builds check every
 * take and handover.
 *
 * rlog__header_check: the header's identity and geometry are valid for the
 * mapped size and are still the ones r was opened with (a scribbled header
 * fails).  Returns 0 or -EPROTO.
 *
 * rlog__desc_sane: a descriptor's state is known and, unless FREE, its slot
 * and write offset are in range (write_off <= buffer_size, a multiple of 4).
 */
int rlog__header_check(const struct rlog__region *r);
bool rlog__desc_sane(const struct rlog__region *r, const struct rlog_shm_desc *d);

/* Number of free buffers in the bitmap (a snapshot). */
uint32_t rlog__region_free_count(const struct rlog__region *r);

/* Lists the names of existing sessions (lower-case, as stored).  Calls fn
 * for each; returns the count or -errno. */
int rlog__region_list(void (*fn)(const char *name, void *arg), void *arg);

#endif
