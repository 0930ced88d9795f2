/*
 * test_daemon_recovery - the daemon's handling of slots and buffers that
 * producers left in odd states:
 *  1. a slot the daemon reaps (its thread exited after losing events) is
 *     FREE with nothing of its old owner left: pid 0, loss counters 0;
 *  2. a FULL buffer whose predecessor never existed (a skipped sequence
 *     number, as a buggy or hostile writer leaves it) does not make the
 *     daemon spin waiting for it: the gap is counted as a corrupt buffer,
 *     reported, and the buffer is drained.
 */
#include <pthread.h>
#include <time.h>

#include "atomics.h"
#include "harness.h"
#include "record.h"
#include "shm.h"
#include "tap.h"

static void *lossy_thread(void *arg)
{
	(void)arg;
	uint64_t v[2] = { 1, 2 };
	for (int i = 0; i < 20000; i++)
		rlog_write(1024, v, sizeof v); /* 2 x 4 KiB buffers: most are lost */
	return NULL;
}

int main(void)
{
	const char *name = h_session("recov");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("recov"));
	h_start(name, path, "4", "2");
	struct rlog__region r;
	BAIL_IF(rlog__region_open(name, &r) != 0, "open region");
	ASSERT_EQ(rlog_attach(name), 0);

	/* 1. A lossy thread exits; wait until the daemon has reaped its slot. */
	pthread_t th;
	pthread_create(&th, NULL, lossy_thread, NULL);
	pthread_join(th, NULL);
	int reaped = -1;
	for (int tries = 0; tries < 300 && reaped < 0; tries++) {
		proc_sleep_ms(10);
		bool any = false;
		for (uint32_t i = 0; i < r.slot_count; i++)
			any |= load_acquire(&r.slots[i].state) != RLOG_SLOT_FREE;
		if (!any)
			reaped = 0;
	}
	ASSERT_EQ(reaped, 0);
	uint32_t dirty = 0;
	for (uint32_t i = 0; i < r.slot_count; i++) {
		struct rlog_shm_slot *s = &r.slots[i];
		dirty += s->pid != 0 || s->tid != 0 || load_relaxed(&s->lost_events[0]) != 0 ||
			 load_relaxed(&s->lost_bytes[0]) != 0 || load_relaxed(&s->buffers_taken) != 0;
	}
	ASSERT_EQ(dirty, 0);

	/* 2. Forge a claimed slot with a FULL buffer of seq 5 (0..4 never
	 * existed) holding one valid record. */
	uint32_t slot = r.slot_count - 1, idx = UINT32_MAX;
	uint32_t expect = RLOG_SLOT_FREE;
	BAIL_IF(!atomic_compare_exchange_strong(&r.slots[slot].state, &expect, RLOG_SLOT_ACTIVE),
		"claim slot");
	r.slots[slot].pid = (uint32_t)getpid();
	r.slots[slot].tid = 4242;
	for (uint32_t b = 0; b < r.buffer_count && idx == UINT32_MAX; b++) {
		uint64_t bit = UINT64_C(1) << (b % 64);
		if (atomic_fetch_and(&r.free_bits[b / 64], ~bit) & bit)
			idx = b;
	}
	BAIL_IF(idx == UINT32_MAX, "no free buffer to forge");
	struct rlog_shm_desc *d = &r.desc[idx];
	uint64_t now = rlog__now();
	uint8_t *buf = rlog__region_buffer(&r, idx);
	uint32_t hw[2] = { rlog__hdr_make(1024, 8, true), (uint32_t)now };
	uint64_t payload = 77;
	memcpy(buf, hw, 8);
	memcpy(buf + 8, &payload, 8);
	d->pid = (uint32_t)getpid();
	d->tid = 4242;
	d->slot = slot;
	d->seq = 5;
	d->base_time = now;
	memset(d->lost_events, 0, sizeof d->lost_events);
	memset(d->lost_bytes, 0, sizeof d->lost_bytes);
	store_relaxed(&d->write_off, 16);
	store_release(&d->state, RLOG_BUF_FULL);

	uint64_t p0 = load_relaxed(&r.hdr->stats.passes);
	proc_sleep_ms(500);
	uint64_t passes = load_relaxed(&r.hdr->stats.passes) - p0;
	ok(passes < 500, "the daemon does not spin on the held-back buffer (%" PRIu64
	   " passes in 500 ms; it polls every 10 ms)", passes);
	ASSERT_EQ(load_acquire(&d->state), RLOG_BUF_FREE); /* drained after the gap was found */
	ASSERT_EQ_U64(load_relaxed(&r.hdr->stats.corrupt_buffers), 1);
	store_release(&r.slots[slot].state, RLOG_SLOT_EXITED);

	rlog_detach();
	struct h_run run;
	h_ringlog(&run, "stop", name, NULL);
	ASSERT_EQ(run.status, 0);
	ASSERT_EQ_U64(h_kv(run.out, "corrupt_buffers"), 1);
	struct h_summary s;
	h_summarize(path, &s);
	ASSERT_EQ_U64(s.damage, 0);
	ASSERT_EQ_U64(s.loss_records >= 1, 1);
	struct h_thread *forged = h_thread_of(&s, (uint32_t)getpid(), 4242);
	ok(forged && forged->events == 1 && forged->last_seq == 77,
	   "the forged buffer's record is in the file");
	rlog__region_close(&r);
	unlink(path);
	return done_testing();
}
