/*
 * pool.c - growing the buffer pool from MinimumBuffers toward
 * MaximumBuffers (ETW's NumberOfBuffers), while producers keep writing.
 *
 * The region is laid out for its capacity from the start: descriptors, free
 * bits and buffer space for every buffer it may ever have (pages are
 * committed only when touched), so growing maps nothing and moves nothing:
 *
 *   daemon (single-threaded, so growth never races with itself)   producers
 *   ------                                                        ---------
 *   in use >= high-water mark of the pool, pool < MaximumBuffers?
 *   store_release number_of_buffers = new size  ---------------> (high-water
 *                                                                 mark of the
 *   fetch_or free bits of the new buffers (release) ------------> take them as
 *                                                                 any free buffer
 *
 * number_of_buffers is stored first: a producer that counts free bits
 * never finds more than the pool holds.  Producers wake the daemon when
 * they pass the high-water mark of the pool as it is, or find no free
 * buffer; the daemon grows it at the start of that pass, before the drain
 * frees what woke it.  The pool never shrinks (ETW does not free unused
 * buffers either; AgeLimit is not used).
 */
#define _GNU_SOURCE
#include "pool.h"

#include "atomics.h"

uint32_t rlog__pool_grow(struct rlog__region *r, uint32_t *pool)
{
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
	 * 22,000, this none, as a fixed pool of 1024 (docs/SESSIONS.md). */
	uint32_t grown = max;
	store_release(&r->hdr->number_of_buffers, grown);
	for (uint32_t i = n; i < grown; i++)
		atomic_fetch_or_explicit(&r->free_bits[i / 64], UINT64_C(1) << (i % 64),
					 memory_order_release);
	*pool = grown;
	return grown - n;
}
