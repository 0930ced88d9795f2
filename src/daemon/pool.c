/*
 * pool.c - growing the buffer pool from MinimumBuffers toward
 * MaximumBuffers (ETW's NumberOfBuffers), while producers keep writing.
 *
 * The region is laid out for its capacity from the start: descriptors, free
 * bits and buffer space for every buffer it may ever have (pages are
 * committed only when touched), so growing maps nothing and moves nothing.
 * Two parties grow it, each with a CAS on number_of_buffers, so that every
 * buffer joins the pool exactly once (docs/FORMAT.md, "Growing the pool"):
 *
 *   producer (thread.c), no free buffer        daemon, at the start of a pass
 *   -----------------------------------        ------------------------------
 *   taking = n + 1 (seq_cst)                   in use >= high-water mark of n?
 *   CAS number_of_buffers n -> n + 1           CAS number_of_buffers n -> max
 *   takes buffer n itself (no free bit)        fetch_or free bits n .. max - 1
 *
 * A producer grows by the one buffer it needs, at the moment it needs it,
 * so a burst into a new session's small pool loses nothing while the
 * daemon is still waking up; the daemon, once awake, grows the rest of the
 * way at once.  The daemon learns of a producer's growth by reading
 * number_of_buffers back at every pass (rlog__pool_sync), never lower than
 * its own count and never past the capacity.  The pool never shrinks (ETW
 * does not free unused buffers either; AgeLimit is not used): an idle
 * pool's pages go back to the kernel instead (trim.c).
 */
#define _GNU_SOURCE
#include "pool.h"

#include "atomics.h"

void rlog__pool_sync(struct rlog__region *r, uint32_t *pool)
{
	/* Acquire: a producer's CAS that grew it (its buffer's descriptor is
	 * published by its own OWNED store, as for any buffer). */
	uint32_t n = load_acquire(&r->hdr->number_of_buffers);
	if (n > r->buffer_count)
		n = r->buffer_count; /* a hostile value: the capacity is the bound */
	if (n > *pool)
		*pool = n;
}

uint32_t rlog__pool_grow(struct rlog__region *r, uint32_t *pool)
{
	rlog__pool_sync(r, pool);
	uint32_t n = *pool, max = load_relaxed(&r->hdr->max_buffers);
	if (max > r->buffer_count)
		max = r->buffer_count; /* a hostile value: the capacity is the bound */
	if (n >= max)
		return 0;
	if (!rlog__region_past_high_water(r, n))
		return 0;
	/* Straight to the maximum: a burst that passed the high-water mark of
	 * the small pool is the one the maximum is there for.  Growing by
	 * steps waits a daemon wake-up per step while producers lose events:
	 * in `ringlog bench` (8.25 M events in bursts, 32 -> 1024 buffers),
	 * doubling lost 0 to 48,000 events per run and quadrupling 0 to
	 * 22,000, this none, as a fixed pool of 1024 (docs/SESSIONS.md).
	 * The CAS fails if a producer grew the pool since the sync (or a
	 * hostile one scribbled it): the next pass tries again from there. */
	uint32_t expect = n, grown = max;
	if (!atomic_compare_exchange_strong(&r->hdr->number_of_buffers, &expect, grown))
		return 0;
	/* A word at a time: producers that found none free take them at once. */
	for (uint32_t i = n; i < grown;) {
		uint32_t e = (i / 64 + 1) * 64 < grown ? (i / 64 + 1) * 64 : grown;
		uint64_t bits = (e - i == 64 ? ~UINT64_C(0) : ((UINT64_C(1) << (e - i)) - 1)) << (i % 64);
		atomic_fetch_or_explicit(&r->free_bits[i / 64], bits, memory_order_release);
		i = e;
	}
	*pool = grown;
	return grown - n;
}
