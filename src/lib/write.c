/*
 * write.c - the write path's slow half: binding a thread, changing
 * buffers, time syncs, metadata records, and counting losses.
 *
 * Entered from the inline rlog__write (include/ringlog.h) with the thread's
 * guard held (rlog__write_slow), or at the thread's very first write
 * (rlog__write_first), or from library functions (declared.c, names.c)
 * through rlog__slow_enter.  On every return the guard is free again.
 * thread.c draws the states a thread goes through and what a signal
 * handler's write does in each.
 *
 * Metadata.  Before the event, in the same thread's buffer and with the
 * event's timestamp, the slow path writes what is pending:
 *
 *   PROCESS_NAME   the process's name is not yet in this session (first
 *                  thread to get here after the attach or fork), or changed
 *   THREAD_NAME    the thread bound to the session since its last name
 *   EVENT_SCHEMA   the caller is declared.c, for a type's first event
 *   event
 *
 * Each record gets room of its own (a full buffer is handed over between
 * two of them if need be).  If no buffer is free, what is not yet written
 * stays pending and the event is lost (counted as usual); the next event
 * that finds a buffer writes the pending records first.  So metadata is
 * never lost and never counted: the daemon does not count it as an event
 * (src/daemon/drain.c), and emitted = written + lost holds unchanged.
 *
 * A thread whose metadata is pending while it still has a buffer (a name
 * set while the session was paused) must not write its next event on the
 * fast path: trap() sets end = pos so that the inline path finds no room
 * and comes here, where the end is put back.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "atomics.h"
#include "producer.h"
#include "record.h"
#include "schema.h"

static uint32_t record_bytes(uint32_t hdr)
{
	unsigned id = rlog__hdr_id(hdr);
	return rlog__record_size(id, rlog__hdr_length(hdr), rlog__hdr_has_time(hdr));
}

int rlog__write_nested(uint32_t hdr, size_t len)
{
	(void)len;
	struct rlog__tpriv *pv = &rlog__tpriv;
	if (pv->exiting)
		return 0;
	uint32_t size = record_bytes(hdr);
	if (pv->slot == NULL) {
		/* The guard is the thread's own word: the interrupted write is
		 * binding (or failed to).  Counted in the process's entry. */
		struct rlog__session *s = atomic_load(&rlog__current);
		return s ? rlog__proc_count_loss(s, 1, size) : 0;
	}
	/* The guard is the slot's busy flag, held by the interrupted write:
	 * the daemon waits for it to drop before it reads these counters.  A
	 * handler may itself be interrupted by another: fetch_add. */
	fetch_add_relaxed(&pv->slot->lost_events[1], 1);
	fetch_add_relaxed(&pv->slot->lost_bytes[1], size);
	fetch_add_relaxed(&pv->lost_events, 1);
	fetch_add_relaxed(&pv->lost_bytes, size);
	return -EBUSY;
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

/* Publishes the bytes written so far.  Pairs with the daemon's
 * load_acquire(write_off). */
static void commit(struct rlog__thread *t)
{
	store_release(t->write_off, (uint32_t)(t->pos - t->base));
}

/*
 * Makes room for a record of size bytes at time now: hands the buffer over
 * and takes a free one if it has less room, and writes a TIME_SYNC (the
 * full 64-bit time, so that the reader's 32-bit deltas never wrap
 * ambiguously) if the thread's last record is 2^31 ticks or more ago.
 * Returns false, having written nothing, if no buffer is free.
 */
static bool make_room(struct rlog__thread *t, struct rlog__tpriv *pv, uint32_t size, uint64_t now)
{
	bool sync = t->pos != NULL && now - t->last >= RLOG_TIME_SYNC_TICKS;
	uint32_t need = size + (sync ? 16u : 0u);
	if (t->pos == NULL || (size_t)(t->end - t->pos) < need) {
		rlog__buffer_handover(t, pv);
		if (!rlog__buffer_take(t, pv, now))
			return false;
		sync = false; /* a new buffer's base time is now */
	}
	if (sync) {
		uint64_t full = now;
		put_record(t->pos, rlog__hdr_make(RLOG_ID_TIME_SYNC, 8, true), 0, &full, 8, now);
		t->pos += 16;
		t->last = now;
	}
	return true;
}

/* Writes one time-stamped metadata record.  False if no buffer is free. */
static bool put_meta(struct rlog__thread *t, struct rlog__tpriv *pv, unsigned id,
		     const void *payload, size_t len, uint64_t now)
{
	uint32_t size = rlog__record_size(id, (unsigned)len, true);
	if (!make_room(t, pv, size, now))
		return false;
	put_record(t->pos, rlog__hdr_make(id, (unsigned)len, true), 0, payload, len, now);
	t->pos += size;
	t->last = now;
	commit(t);
	return true;
}

/* EVENT_SCHEMA payload size of a schema that passed rlog__schema_check. */
static size_t schema_payload_size(const struct rlog_schema *s)
{
	size_t n = 6 + strlen(s->name);
	for (unsigned i = 0; i < s->field_count; i++)
		n += 4 + strlen(s->fields[i].name);
	return n;
}

/* Writes the EVENT_SCHEMA record of s, encoded in place in the buffer (a
 * schema can be 8 KiB: no copy on a signal handler's stack). */
static bool put_schema(struct rlog__thread *t, struct rlog__tpriv *pv,
		       const struct rlog_schema *s, size_t len, uint64_t now)
{
	uint32_t size = rlog__record_size(RLOG_ID_EVENT_SCHEMA, (unsigned)len, true);
	if (!make_room(t, pv, size, now))
		return false;
	uint32_t hw[2] = { rlog__hdr_make(RLOG_ID_EVENT_SCHEMA, (unsigned)len, true),
			   (uint32_t)now };
	memcpy(t->pos, hw, 8);
	if (len & 3) {
		uint32_t zero = 0;
		memcpy(t->pos + 8 + (len & ~(size_t)3), &zero, 4);
	}
	rlog__schema_encode(s, t->pos + 8, len);
	t->pos += size;
	t->last = now;
	commit(t);
	return true;
}

/* Writes the pending name records.  False if no buffer is free (what is
 * not written stays pending). */
static bool put_names(struct rlog__thread *t, struct rlog__tpriv *pv, uint64_t now)
{
	uint64_t token[2];
	if (rlog__process_name_claim(pv->gen, token)) {
		char name[RLOG_PROCESS_NAME_MAX];
		size_t n = rlog__process_name_get(name);
		/* n == 0: being renamed right now.  The claim is handed back:
		 * the renamer, or the next thread here, records the new name. */
		bool ok = n > 0 && put_meta(t, pv, RLOG_ID_PROCESS_NAME, name, n, now);
		rlog__process_name_done(token, ok);
		if (n > 0 && !ok)
			return false;
	}
	if (pv->meta_pending & RLOG__META_THREAD_NAME) {
		char name[RLOG_THREAD_NAME_MAX];
		size_t n = rlog__thread_name_get(pv, name);
		if (!put_meta(t, pv, RLOG_ID_THREAD_NAME, name, n, now))
			return false;
		pv->meta_pending &= (uint8_t)~RLOG__META_THREAD_NAME;
	}
	return true;
}

/* Sends the thread's next write to the slow path while metadata is pending
 * (see the top of this file). */
static void trap(struct rlog__thread *t, struct rlog__tpriv *pv)
{
	if (pv->meta_pending && t->pos != NULL)
		t->end = t->pos;
}

/* Counts an event that found no free buffer (discard mode): nothing
 * written is touched.  Single writer: nested writes count elsewhere. */
static int lost_no_buffer(struct rlog__tpriv *pv, uint32_t size)
{
	struct rlog_shm_slot *s = pv->slot;
	store_relaxed(&s->lost_events[0], load_relaxed(&s->lost_events[0]) + 1);
	store_relaxed(&s->lost_bytes[0], load_relaxed(&s->lost_bytes[0]) + size);
	fetch_add_relaxed(&pv->lost_events, 1);
	fetch_add_relaxed(&pv->lost_bytes, size);
	return -ENOBUFS;
}

int rlog__slow(struct rlog__thread *t, struct rlog__tpriv *pv, uint32_t hdr, uint32_t flagword,
	       const void *payload, size_t len, uint64_t now, const struct rlog_schema *schema,
	       bool *schema_written)
{
	bool event = hdr != 0;
	if (pv->exiting)
		return 0;
	if (len > RLOG_MAX_PAYLOAD)
		return -EMSGSIZE;
	uint32_t size = event ? record_bytes(hdr) : 0;
	/* The event's time is when it was written, not after the binding and
	 * the first touch of a fresh buffer below (tens of microseconds). */
	if (now == 0)
		now = rlog__now();

	RLOG__HOOK(RLOG__HOOK_SLOW);
	if (pv->slot == NULL || pv->gen != atomic_load(&rlog__gen)) {
		/* Metadata alone never binds a thread: binding makes it
		 * pending, and the thread's first event writes it. */
		if (!event)
			return 0;
		/* First write of the thread, or the process attached to another
		 * session (or detached) since the thread bound: rebind.  The
		 * guard moves between the slot and the thread's own word with
		 * signals blocked, so a handler sees one or the other, held. */
		sigset_t old;
		rlog__signals_block(&old);
		rlog__thread_unbind(t, pv);
		int r = rlog__thread_bind(t, pv, size);
		rlog__signals_restore(&old);
		if (r <= 0)
			return r;
	}
	/* The guard is held from here.  The decisive check of the thread's
	 * region mask, after the guard was taken (the stop sequence pairs
	 * with it). */
	if (load_relaxed(t->mask) == 0) {
		trap(t, pv);
		return 0;
	}
	struct rlog__region *r = pv->region;
	if (pv->desc != NULL)
		t->end = t->base + r->buffer_size; /* undoes a trap */
	if (event && size > r->buffer_size)
		return -EMSGSIZE; /* could never fit, even in an empty buffer */
	size_t schema_len = schema ? schema_payload_size(schema) : 0;
	if (schema && rlog__record_size(RLOG_ID_EVENT_SCHEMA, (unsigned)schema_len, true) >
			      r->buffer_size)
		return -EMSGSIZE;

	if (!put_names(t, pv, now) || (schema && !put_schema(t, pv, schema, schema_len, now)))
		return event ? lost_no_buffer(pv, size) : -ENOBUFS;
	if (schema)
		*schema_written = true;
	if (!event)
		return 1;
	if (!make_room(t, pv, size, now))
		return lost_no_buffer(pv, size);
	put_record(t->pos, hdr, flagword, payload, len, now);
	t->pos += size;
	t->last = now;
	t->written++;
	commit(t);
	assert(rlog__thread_sane(t, pv));
	return 1;
}

bool rlog__slow_enter(struct rlog__thread *t, struct rlog__tpriv *pv)
{
	if (t->busy == NULL)
		rlog__thread_init(t, pv);
	/* A handler between this load and the store below runs a whole write
	 * of its own and releases the guard before this code resumes. */
	if (load_relaxed(t->busy))
		return false;
	/* As the inline path: the guard is taken before the decisive mask
	 * load in rlog__slow (the daemon's stop sequence pairs with it). */
	store_relaxed(t->busy, 1);
	atomic_signal_fence(memory_order_seq_cst);
	return true;
}

void rlog__slow_leave(struct rlog__thread *t)
{
	atomic_signal_fence(memory_order_seq_cst);
	/* Wherever the guard is now (the slow path may have moved it):
	 * release pairs with the daemon's load_acquire(busy). */
	store_release(t->busy, 0);
	RLOG__HOOK(RLOG__HOOK_LEAVE);
}

int rlog__write_slow(uint32_t hdr, uint32_t flagword, const void *payload, size_t len,
		     uint64_t now)
{
	/* The inline path took the guard. */
	struct rlog__thread *t = &rlog__thread;
	int r = rlog__slow(t, &rlog__tpriv, hdr, flagword, payload, len, now, NULL, NULL);
	rlog__slow_leave(t);
	return r;
}

int rlog__write_first(uint32_t hdr, uint32_t flagword, const void *payload, size_t len)
{
	struct rlog__thread *t = &rlog__thread;
	struct rlog__tpriv *pv = &rlog__tpriv;
	if (!rlog__slow_enter(t, pv))
		return rlog__write_nested(hdr, len);
	int r = rlog__slow(t, pv, hdr, flagword, payload, len, 0, NULL, NULL);
	rlog__slow_leave(t);
	return r;
}
