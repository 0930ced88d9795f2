/*
 * shm.h - the session region: a POSIX shared-memory object named after the
 * session, holding the header, buffer descriptors, producer slots, process
 * entries, the counter table, the free bitmap and the buffer pool (layout in src/common/region_abi.h and
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

#include "region_abi.h"

#define RLOG_DEFAULT_BUFFER_SIZE  16384u
#define RLOG_DEFAULT_BUFFER_COUNT 1024u   /* MaximumBuffers */
#define RLOG_MIN_BUFFER_SIZE      4096u   /* buffer sizes are powers of two, 4 KiB .. 1 MiB */
#define RLOG_MAX_BUFFER_SIZE      (1u << 20)
#define RLOG_MIN_BUFFER_COUNT     2u
#define RLOG_MAX_BUFFER_COUNT     65536u  /* the largest capacity */
#define RLOG_MAX_REGION_SIZE      (UINT64_C(4) << 30)
#define RLOG_SLOTS_EXTRA          64u     /* slots beyond MaximumBuffers at start */
#define RLOG_DEFAULT_HIGH_WATER   70u     /* % (QNX) */

struct rlog__region {
	struct rlog_shm_header *hdr;
	struct rlog_shm_ctl *ctl;     /* requests to the daemon */
	struct rlog_shm_desc *desc;
	struct rlog_shm_slot *slots;
	struct rlog_shm_proc *procs;  /* slot_count of them */
	struct rlog_shm_counter *counters; /* RLOG_SHM_COUNTERS of them */
	_Atomic uint64_t *free_bits;
	uint8_t *buffers;
	size_t size;             /* mapped bytes */
	uint32_t buffer_size;    /* validated copies of the header's geometry */
	uint32_t buffer_count;   /* capacity */
	uint32_t slot_count;
	uint32_t free_words;
	uint32_t min_buffers;
	uint32_t high_water_pct;
	bool overwrite;          /* RLOG_MODE_OVERWRITE: a full pool reuses full buffers */
};

/* A session's properties at creation (ETW's EVENT_TRACE_PROPERTIES). */
struct rlog__region_params {
	uint32_t buffer_size;    /* bytes: a power of two, 4 KiB .. 1 MiB */
	uint32_t min_buffers;    /* MinimumBuffers: the pool at start, >= 2 */
	uint32_t max_buffers;    /* MaximumBuffers: the pool grows up to it */
	uint32_t capacity;       /* the most MaximumBuffers can be raised to (descriptors and
	                            buffer space reserved); 0: rlog__region_capacity's default */
	uint32_t flush_timer_ms; /* FlushTimer; 0: only full buffers */
	uint32_t high_water_pct; /* 1..100; 0: 70 */
	uint32_t log_file_mode;  /* RLOG_MODE_* */
	uint32_t age_limit;      /* AgeLimit, minutes (accepted, not used) */
	uint64_t max_file_size;  /* MaximumFileSize, bytes; 0: none */
	uint64_t enable_mask;    /* EnableFlags */
	uint64_t counter_mask;   /* the counters sampled (RLOG_CTR_BIT_* bits) */
	uint32_t counter_period_ms; /* their sampling period; 0: RLOG_COUNTER_PERIOD_MS */
	uint32_t drain_threads;  /* the daemon's drain threads; 0: RLOG__DRAIN_THREADS_DEFAULT */
};

/* Drain threads of a session that names none (docs/PERFORMANCE.md,
 * "Several drain threads": on a small machine a second one did not pay). */
#define RLOG__DRAIN_THREADS_DEFAULT 1
/* The most drain threads a daemon runs (its own included). */
#define RLOG__DRAIN_THREADS_MAX 64

/* The default capacity for MaximumBuffers max_buffers: four times as many
 * (room for `ringlog update` to raise it), within RLOG_MAX_BUFFER_COUNT and
 * the largest region. */
uint32_t rlog__region_capacity(uint32_t buffer_size, uint32_t max_buffers);

/* Buffers in use at which a producer wakes the daemon, for a pool of n
 * buffers: ceil(high_water_pct * n / 100). */
static inline uint32_t rlog__region_high_water(uint32_t high_water_pct, uint32_t n)
{
	return (uint32_t)(((uint64_t)high_water_pct * n + 99) / 100);
}

/* Checks a session name: 1..64 of [A-Za-z0-9._-], not "." or "..".
 * Returns 0 or -EINVAL. */
int rlog__name_validate(const char *name);

/* Checks a category name (struct rlog_shm_category): 1..27 of
 * [a-z0-9_.-] in the first n bytes of s.  Returns true if it is one. */
bool rlog__category_name_ok(const char *s, size_t n);

/* Writes the shm_open name (RLOG_SHM_PREFIX + lower-case name) into out,
 * which holds at least 80 bytes.  Returns 0 or -EINVAL. */
int rlog__shm_name(const char *name, char *out, size_t cap);

/*
 * Creates the region for a new session (mode 0600, exclusive), lays it out
 * with min_buffers buffers in the pool and room for capacity, and leaves it
 * in state CREATING; the daemon makes it ACTIVE.
 * Returns 0, -EEXIST if a session of that name (in any case) exists,
 * -EINVAL for a bad name or parameters (2 <= min <= max <= capacity <=
 * 65536, a buffer size that is a power of two from 4 KiB to 1 MiB, a region
 * of at most 4 GiB), or another -errno.
 */
int rlog__region_create(const char *name, const struct rlog__region_params *p,
			struct rlog__region *out);

/*
 * Opens and validates an existing session region.
 * Returns 0, -ENOENT, -EPROTO (bad magic, version or geometry), -EACCES
 * (not owned by this process's effective uid, or open to group or others:
 * rlog__shm_owner_check), or another -errno.
 */
int rlog__region_open(const char *name, struct rlog__region *out);

/*
 * Whether a shared-memory object whose owner is uid and whose mode is mode
 * is this process's own: owned by the effective uid (root included) and
 * with no group or other permission bits.  Returns 0 or -EACCES.
 */
int rlog__shm_owner_check(uint32_t uid, uint32_t mode);

/*
 * The owner and permission bits of session name's object (for the error
 * line of a region rlog__region_open refused with -EACCES).  Returns 0,
 * -EINVAL for a bad name, or -errno of lstat (-ENOENT).
 */
int rlog__region_owner(const char *name, uint32_t *uid, uint32_t *mode);

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
 * Invariant checkers (docs/CONTRIBUTING.md).  The daemon calls them on what it reads
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

/* Copies the names of the enable mask's bits (rlog_category_name) out of a
 * mapped header; "" where a bit has none. */
void rlog__categories_copy(const struct rlog_shm_header *h, char out[64][28]);

/* Copies the names of --enable that no process has declared yet (a
 * seqlock read).  Returns the sequence number read (>= 0), or -EAGAIN if a
 * writer kept it changing (out is then ""). */
int rlog__enable_pending_copy(const struct rlog_shm_header *h, char *out, size_t n);

/* Number of free buffers in the bitmap (a snapshot). */
uint32_t rlog__region_free_count(const struct rlog__region *r);

/* True when a pool of n buffers has its high-water mark in use or more
 * (the free bits counted now): the test on which a producer wakes the
 * daemon at a handover (thread.c), the daemon goes round again rather
 * than sleep (daemon.c), and grows the pool (pool.c). */
bool rlog__region_past_high_water(const struct rlog__region *r, uint32_t n);

/* Lists the names of existing sessions (lower-case, as stored).  Calls fn
 * for each; returns the count or -errno. */
int rlog__region_list(void (*fn)(const char *name, void *arg), void *arg);

/*
 * Bytes of [from, to) that the shared-memory object fd has allocated
 * (pages, found with SEEK_DATA and SEEK_HOLE): what the session holds in
 * memory, whoever maps it.  For the memory figures of `ringlog bench` and
 * the tests of the daemon's trim (src/daemon/trim.c).
 */
uint64_t rlog__shm_allocated(int fd, uint64_t from, uint64_t to);

#endif
