/*
 * write.c - the write path's slow half: binding a thread, changing
 * buffers, time syncs, and counting losses.
 *
 * Entered from the inline rlog__write (include/ringlog.h) in one of two
 * states: the thread has no slot (t->busy == NULL; busy is not set), or it
 * has one and has set busy = 1.  On every return, busy is 0 again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "atomics.h"
#include "producer.h"
#include "record.h"

bool rlog__buffer_take(struct rlog__thread *t, struct rlog__tpriv *pv, uint64_t now);
int rlog__thread_bind(struct rlog__thread *t, struct rlog__tpriv *pv, uint32_t size);

static uint32_t record_bytes(uint32_t hdr)
{
	unsigned id = rlog__hdr_id(hdr);
	return rlog__record_size(id, rlog__hdr_length(hdr), rlog__hdr_has_time(hdr));
}

int rlog__write_nested(uint32_t hdr, size_t len)
{
	(void)len;
	struct rlog__tpriv *pv = &rlog__tpriv;
	uint32_t size = record_bytes(hdr);
	/* A handler may itself be interrupted by another handler that writes:
	 * fetch_add keeps these counters exact. */
	if (pv->slot) {
		fetch_add_relaxed(&pv->slot->lost_events[1], 1);
		fetch_add_relaxed(&pv->slot->lost_bytes[1], size);
	} else {
		/* The thread is binding (its first write, or a rebind): park
		 * the count; the interrupted slow path moves it to the slot. */
		if (atomic_load(&rlog__current) == NULL)
			return 0;
		fetch_add_relaxed(&pv->parked_nested_events, 1);
		fetch_add_relaxed(&pv->parked_nested_bytes, size);
	}
	pv->lost_events++;
	pv->lost_bytes += size;
	return -EBUSY;
}

/* Moves nested-write losses parked during binding to the thread's slot
 * (or, if binding failed, to the region's orphan counters). */
static void unpark_nested(struct rlog__tpriv *pv)
{
	if (load_relaxed(&pv->parked_nested_events) == 0)
		return;
	uint64_t e = atomic_exchange(&pv->parked_nested_events, 0);
	uint64_t b = atomic_exchange(&pv->parked_nested_bytes, 0);
	if (pv->slot) {
		fetch_add_relaxed(&pv->slot->lost_events[1], e);
		fetch_add_relaxed(&pv->slot->lost_bytes[1], b);
		return;
	}
	struct rlog__region *r = atomic_load(&rlog__current);
	if (r) {
		fetch_add_relaxed(&r->hdr->orphan_lost_events, e);
		fetch_add_relaxed(&r->hdr->orphan_lost_bytes, b);
	}
}

static void put_record(uint8_t *p, uint32_t hdr, uint32_t flagword, const void *payload,
		       size_t len, uint64_t now)
{
	uint32_t hw[2] = { hdr, (uint32_t)now };
	memcpy(p, hw, 8);
	p += 8;
	if (rlog__hdr_id(hdr) == RLOG_ID_FLAGGED) {
		memcpy(p, &flagword, 4);
		p += 4;
	}
	if (len & 3) {
		uint32_t zero = 0;
		memcpy(p + (len & ~(size_t)3), &zero, 4);
	}
	if (len)
		memcpy(p, payload, len);
}

static int slow(struct rlog__thread *t, struct rlog__tpriv *pv, uint32_t hdr, uint32_t flagword,
		const void *payload, size_t len, uint64_t now)
{
	if (len > RLOG_MAX_PAYLOAD)
		return -EMSGSIZE;
	uint32_t size = record_bytes(hdr);
	/* The event's time is when it was written, not after the binding and
	 * the first touch of a fresh buffer below (tens of microseconds). */
	if (now == 0)
		now = rlog__now();

	if (t->busy == NULL || pv->gen != atomic_load(&rlog__gen)) {
		/* First write of the thread, or the process attached to another
		 * session since the thread bound: rebind. */
		rlog__thread_unbind();
		if (pv->exiting)
			return 0;
		int r = rlog__thread_bind(t, pv, size);
		unpark_nested(pv);
		if (r <= 0)
			return r;
	}
	/* busy == 1 from here.  The decisive check of the thread's region
	 * mask, after busy was set (the stop sequence pairs with it). */
	if (load_relaxed(t->mask) == 0)
		return 0;
	struct rlog__region *r = pv->region;
	if (size + 16 > r->buffer_size)
		return -EMSGSIZE; /* could never fit, even in an empty buffer */

	bool sync = t->pos != NULL && now - t->last >= RLOG_TIME_SYNC_TICKS;
	uint32_t need = size + (sync ? 16u : 0u);
	if (t->pos == NULL || (size_t)(t->end - t->pos) < need) {
		rlog__buffer_handover(t, pv);
		if (!rlog__buffer_take(t, pv, now)) {
			/* Discard mode: nothing written is touched, the event is
			 * counted (single writer: nested writes count elsewhere). */
			struct rlog_shm_slot *s = pv->slot;
			store_relaxed(&s->lost_events[0], load_relaxed(&s->lost_events[0]) + 1);
			store_relaxed(&s->lost_bytes[0], load_relaxed(&s->lost_bytes[0]) + size);
			pv->lost_events++;
			pv->lost_bytes += size;
			return -ENOBUFS;
		}
		sync = false; /* a new buffer's base time is now */
	}
	if (sync) {
		/* TIME_SYNC: the full 64-bit time, so that the reader's 32-bit
		 * deltas never wrap ambiguously. */
		uint64_t full = now;
		put_record(t->pos, rlog__hdr_make(RLOG_ID_TIME_SYNC, 8, true), 0, &full, 8, now);
		t->pos += 16;
	}
	put_record(t->pos, hdr, flagword, payload, len, now);
	t->pos += size;
	t->last = now;
	t->written++;
	/* Pairs with the daemon's load_acquire(write_off). */
	store_release(t->write_off, (uint32_t)(t->pos - t->base));
	return 1;
}

int rlog__write_slow(uint32_t hdr, uint32_t flagword, const void *payload, size_t len,
		     uint64_t now)
{
	struct rlog__thread *t = &rlog__thread;
	struct rlog__tpriv *pv = &rlog__tpriv;
	if (pv->in_slow) {
		/* A signal handler's write landed inside this thread's slow
		 * path before the thread had a slot to set busy in. */
		return rlog__write_nested(hdr, len);
	}
	pv->in_slow = 1;
	atomic_signal_fence(memory_order_seq_cst);
	int r = slow(t, pv, hdr, flagword, payload, len, now);
	atomic_signal_fence(memory_order_seq_cst);
	if (t->busy)
		store_release(t->busy, 0); /* pairs with the daemon's load_acquire(busy) */
	atomic_signal_fence(memory_order_seq_cst);
	pv->in_slow = 0;
	return r;
}
