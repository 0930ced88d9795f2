/*
 * test_trim - the daemon's trim (src/daemon/trim.c) step by step, on a
 * region of this process, with exact page counts:
 *
 *   - only dirty buffers that are free are trimmed: their pages are gone
 *     from the object, and a buffer a producer holds (its free bit clear)
 *     keeps its pages and its bytes;
 *   - while the daemon removes a buffer's pages it holds its free bit: a
 *     producer's take (the CAS of src/lib/thread.c) fails then, for every
 *     buffer of the chunk (the test hook runs at that moment);
 *   - afterwards the free bits are exactly what they were, the held-back
 *     buffer stays dirty and is trimmed once it is free, and a second trim
 *     with nothing dirty does nothing.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "drain.h"
#include "shm_pages.h"
#include "tap.h"
#include "trim.h"

#define BUFS 16u
#define BUF_SIZE 16384u
#define PAGES_PER_BUF (BUF_SIZE / SHM_PAGE)
#define TAKEN 3u /* the buffer a "producer" holds */

static struct rlog__region r;
static unsigned hook_calls, hook_not_held, takes_won;

/* A producer's take of buffer b, as thread.c does it: clear the bit with a
 * CAS if it is set.  True if it won. */
static bool take(uint32_t b)
{
	_Atomic uint64_t *w = &r.free_bits[b / 64];
	uint64_t bit = UINT64_C(1) << (b % 64), v = atomic_load(w);
	while (v & bit)
		if (atomic_compare_exchange_weak(w, &v, v & ~bit))
			return true;
	return false;
}

static void hook(uint32_t first, uint32_t last)
{
	hook_calls++;
	for (uint32_t b = first; b < last; b++) {
		if (atomic_load(&r.free_bits[b / 64]) >> (b % 64) & 1)
			hook_not_held++;
		if (take(b)) {
			takes_won++;
			/* Give it back, so that the rest of the test runs. */
			atomic_fetch_or(&r.free_bits[b / 64], UINT64_C(1) << (b % 64));
		}
	}
}

static uint64_t buffer_pages(int fd, uint32_t first, uint32_t last)
{
	uint64_t base = (uint64_t)(rlog__region_buffer(&r, 0) - (uint8_t *)r.hdr);
	return shm_pages_allocated(fd, base + (uint64_t)first * BUF_SIZE,
				   base + (uint64_t)last * BUF_SIZE);
}

int main(void)
{
	char name[64];
	snprintf(name, sizeof name, "t-trim-%d", (int)getpid());
	struct rlog__region_params p;
	memset(&p, 0, sizeof p);
	p.buffer_size = BUF_SIZE;
	p.min_buffers = p.max_buffers = BUFS;
	p.capacity = 64;
	p.enable_mask = ~UINT64_C(0);
	ASSERT_EQ(rlog__region_create(name, &p, &r), 0);
	int fd = shm_pages_open(name);
	ok(fd >= 0, "the object opens");
	struct rlog__drain d;
	ASSERT_EQ(rlog__drain_init(&d, &r, NULL, RLOG_TICK_MONOTONIC), 0);

	uint64_t all = (UINT64_C(1) << BUFS) - 1;
	ASSERT_EQ_U64(atomic_load(&r.free_bits[0]), all);
	ASSERT_EQ_U64(buffer_pages(fd, 0, 64), 0);
	ok(!rlog__trim_pending(&d.trim), "nothing to trim in a new pool");

	/* Every buffer written and freed (dirty); then a producer takes one
	 * and writes into it. */
	for (uint32_t b = 0; b < BUFS; b++) {
		memset(rlog__region_buffer(&r, b), 0x40 + (int)b, BUF_SIZE);
		rlog__trim_dirty(&d.trim, b);
	}
	ASSERT_EQ(take(TAKEN), true);
	memset(rlog__region_buffer(&r, TAKEN), 0x7e, BUF_SIZE);
	ASSERT_EQ_U64(buffer_pages(fd, 0, BUFS), BUFS * PAGES_PER_BUF);
	ok(rlog__trim_pending(&d.trim), "written buffers are pending");

	atomic_store(&rlog__trim_test_hook, hook);
	ASSERT_EQ(rlog__trim(&d.trim), BUFS - 1);
	ok(hook_calls >= 2, "the held buffers are removed in runs around the taken one (%u calls)",
	   hook_calls);
	ASSERT_EQ(hook_not_held, 0);
	ASSERT_EQ(takes_won, 0);
	ASSERT_EQ_U64(atomic_load(&r.free_bits[0]), all & ~(UINT64_C(1) << TAKEN));
	ASSERT_EQ_U64(buffer_pages(fd, 0, TAKEN), 0);
	ASSERT_EQ_U64(buffer_pages(fd, TAKEN, TAKEN + 1), PAGES_PER_BUF);
	ASSERT_EQ_U64(buffer_pages(fd, TAKEN + 1, 64), 0);
	const uint8_t *tb = rlog__region_buffer(&r, TAKEN);
	unsigned changed = 0;
	for (uint32_t i = 0; i < BUF_SIZE; i++)
		changed += tb[i] != 0x7e;
	ASSERT_EQ(changed, 0);
	ASSERT_EQ_U64(d.trim.buffers_trimmed, BUFS - 1);

	/* The held-back buffer is still dirty; once freed, it goes too. */
	ok(rlog__trim_pending(&d.trim), "the taken buffer stays pending");
	atomic_fetch_or(&r.free_bits[0], UINT64_C(1) << TAKEN);
	ASSERT_EQ(rlog__trim(&d.trim), 1);
	ASSERT_EQ_U64(buffer_pages(fd, 0, 64), 0);
	ASSERT_EQ_U64(atomic_load(&r.free_bits[0]), all);
	ok(!rlog__trim_pending(&d.trim), "nothing pending");
	ASSERT_EQ(rlog__trim(&d.trim), 0);
	ASSERT_EQ_U64(d.trim.buffers_trimmed, BUFS);
	/* A trimmed buffer reads as zeros: a fresh page (which the read
	 * allocates: shared memory has no shared zero page). */
	ASSERT_EQ(rlog__region_buffer(&r, 0)[100], 0);
	ASSERT_EQ_U64(buffer_pages(fd, 0, 64), 1);

	atomic_store(&rlog__trim_test_hook, NULL);
	rlog__drain_free(&d);
	close(fd);
	rlog__region_close(&r);
	rlog__region_unlink(name);
	return done_testing();
}
