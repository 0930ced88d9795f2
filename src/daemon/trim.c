/*
 * trim.c - giving the pages of free buffers back to the kernel while the
 * pool is idle, so that an idle session does not keep its pool resident.
 *
 * The session's pages live in a POSIX shared-memory object (tmpfs): once a
 * buffer has been written, its pages stay allocated, in every process that
 * maps it, until the object is unlinked; round-robin allocation (thread.c)
 * soon touches every buffer of the pool.  So after a burst a 1024 x 16 KiB
 * pool holds 16 MiB for as long as the session lives, whether anybody
 * writes or not.  The daemon removes those pages (madvise MADV_REMOVE: a
 * hole punched in the object, for every process that maps it) once nothing
 * has been drained for RLOG_TRIM_IDLE_MS, for the buffers it freed since
 * the last trim ("dirty"), and only while it holds their free bits:
 *
 *   daemon (single-threaded)                               producers
 *   ------                                                 ---------
 *   held = fetch_and(free word, ~chunk) & chunk  (acq_rel)  a CAS on the word
 *     (at most RLOG_TRIM_CHUNK buffers at a time)             fails and retries:
 *   madvise(MADV_REMOVE) the held buffers' bytes               the held buffers
 *   fetch_or(free word, held)  (release) -----------------> can be taken again;
 *                                                            their pages come
 *                                                            back zeroed at the
 *                                                            first write
 *
 * A buffer whose bit is not set (a producer took it in the meantime) is not
 * touched and stays dirty.  While the daemon holds a chunk, a producer
 * sees that many fewer free buffers; only with a pool of at most that many
 * free buffers could it find none (a counted loss), and only in the
 * microseconds of one madvise after a second of silence.  The region stays
 * hostile input: the ranges come from the daemon's validated geometry,
 * never from the region.  A failing madvise (a kernel without MADV_REMOVE
 * for this mapping) stops trimming for the session; nothing else changes.
 *
 * The cost: the first write into a trimmed buffer faults its pages in
 * again (docs/PERFORMANCE.md, "Memory").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "atomics.h"
#include "shm.h"
#include "trim.h"

#if RLOG_TEST_HOOKS
void (*_Atomic rlog__trim_test_hook)(uint32_t first, uint32_t last);
#endif

int rlog__trim_init(struct rlog__trim_state *t, struct rlog__region *r)
{
	memset(t, 0, sizeof *t);
	t->r = r;
	t->dirty = calloc(r->free_words, sizeof *t->dirty);
	return t->dirty ? 0 : -ENOMEM;
}

void rlog__trim_free(struct rlog__trim_state *t)
{
	free(t->dirty);
	t->dirty = NULL;
}

void rlog__trim_dirty(struct rlog__trim_state *t, uint32_t idx)
{
	t->dirty[idx / 64] |= UINT64_C(1) << (idx % 64);
}

/* Removes the pages of buffers first .. last - 1.  False on failure. */
static bool remove_pages(struct rlog__region *r, uint32_t first, uint32_t last)
{
#if RLOG_TEST_HOOKS
	void (*hook)(uint32_t, uint32_t) = atomic_load_explicit(&rlog__trim_test_hook,
								 memory_order_relaxed);
	if (hook)
		hook(first, last);
#endif
	uint8_t *p = rlog__region_buffer(r, first);
	size_t len = (size_t)(last - first) * r->buffer_size;
	return madvise(p, len, MADV_REMOVE) == 0;
}

uint32_t rlog__trim(struct rlog__trim_state *t)
{
	struct rlog__region *r = t->r;
	uint32_t trimmed = 0;
	if (t->failed)
		return 0;
	for (uint32_t w = 0; w < r->free_words; w++) {
		for (unsigned c = 0; c < 64 && t->dirty[w] != 0; c += RLOG_TRIM_CHUNK) {
			uint64_t chunk = t->dirty[w] & (((UINT64_C(1) << RLOG_TRIM_CHUNK) - 1) << c);
			if (chunk == 0)
				continue;
			uint64_t held = atomic_fetch_and_explicit(&r->free_bits[w], ~chunk,
								  memory_order_acq_rel) & chunk;
			bool ok = true;
			/* Runs of consecutive held buffers: one call each. */
			for (unsigned b = c; b < c + RLOG_TRIM_CHUNK && ok;) {
				if (!(held >> b & 1)) {
					b++;
					continue;
				}
				unsigned e = b;
				while (e < c + RLOG_TRIM_CHUNK && (held >> e & 1))
					e++;
				uint32_t first = w * 64 + b, last = w * 64 + e;
				if (last > r->buffer_count)
					last = r->buffer_count; /* bits past the capacity: nothing to trim */
				if (first < last) {
					ok = remove_pages(r, first, last);
					trimmed += ok ? last - first : 0;
				}
				b = e;
			}
			/* Release: pairs with the producer's acquire CAS that takes
			 * one of them; the removal happened before. */
			atomic_fetch_or_explicit(&r->free_bits[w], held, memory_order_release);
			if (!ok) {
				t->failed = true;
				return trimmed;
			}
			t->dirty[w] &= ~held;
		}
	}
	t->buffers_trimmed += trimmed;
	return trimmed;
}

bool rlog__trim_pending(const struct rlog__trim_state *t)
{
	if (t->failed)
		return false;
	for (uint32_t w = 0; w < t->r->free_words; w++)
		if (t->dirty[w])
			return true;
	return false;
}
