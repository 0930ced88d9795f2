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
 *
 * Several sessions.  With two or more sessions in the set, the inline path
 * of the current header writes each binding that is ready itself
 * (rlog__write_several in include/ringlog.h, with the stores write_multi
 * makes) and sends the others here (rlog__write_rest, with a mask of the
 * bindings still to write); the inline path of an older header sends
 * every write here (its mask pointer is the set's own word, which no
 * binding has).  Either way, with the clock read once, the event goes to
 * each session whose enable mask asks for the event's category, binding 0
 * under the thread's guard, the others under their own slot's busy flag:
 * fast_put() stores the record as the inline path would where the
 * binding has room and nothing else is due (ETW's providers write into
 * each of up to eight sessions the same way): in write_multi() for an
 * event from the inline path, in write_fast() for the library's own
 * writes; write_one() does the rest
 * (binding, a buffer to take, metadata, a schema record, a loss).  What each session's daemon
 * counts is that session's: the identity holds per session.  The write's
 * result sums them: 1 if written in every session it was for, a loss if
 * lost in any (counted there), 0 if it was for none.
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

/* Is an event of category cat for a session whose mask is m? */
static bool wanted(uint64_t m, unsigned cat)
{
	return cat == RLOG__CAT_ANY ? m != 0 : (m >> cat & 1) != 0;
}

/* A nested write's loss in binding k >= 1, bound in the set's session k:
 * under that slot's busy flag, taken here if the interrupted write is not
 * inside that session (the handler runs to its end before the write goes
 * on, so it never sees the flag change under it). */
static int nested_in_slot(struct rlog__bind *b, unsigned k, unsigned cat, uint32_t size)
{
	_Atomic uint32_t *busy = b->h->busy;
	bool took = k != 0 && load_relaxed(busy) == 0;
	if (took) {
		store_relaxed(busy, 1);
		atomic_signal_fence(memory_order_seq_cst);
	}
	/* The decisive load when this handler took the flag (the stop
	 * sequence pairs with it); a filter by category otherwise. */
	int r = 0;
	if (wanted(load_relaxed(b->h->mask), cat) || (!took && cat == RLOG__CAT_ANY)) {
		fetch_add_relaxed(&b->slot->lost_events[1], 1);
		fetch_add_relaxed(&b->slot->lost_bytes[1], size);
		r = -EBUSY;
	}
	if (took) {
		atomic_signal_fence(memory_order_seq_cst);
		store_release(busy, 0); /* pairs with the daemon's load_acquire(busy) */
	}
	return r;
}

int rlog__nested(uint32_t hdr, unsigned cat)
{
	struct rlog__tpriv *pv = &rlog__tpriv;
	if (pv->exiting)
		return 0;
	uint32_t size = record_bytes(hdr);
	struct rlog__set *set = atomic_load(&rlog__set);
	int ret = 0;
	for (unsigned k = 0; k < set->n; k++) {
		struct rlog__bind *b = &pv->bind[k];
		struct rlog__session *s = set->s[k];
		int r;
		if (b->slot != NULL && b->sess == s) {
			/* Binding 0: the guard is the slot's busy flag, held by the
			 * interrupted write; the daemon waits for it to drop before
			 * it reads these counters.  A handler may itself be
			 * interrupted by another: fetch_add. */
			r = nested_in_slot(b, k, set->n > 1 ? cat : RLOG__CAT_ANY, size);
		} else if (set->n == 1 || wanted(load_relaxed(&s->region.hdr->enable_mask), cat)) {
			/* No slot there (the interrupted write is binding, or
			 * failed to): counted in the process's entry. */
			r = rlog__proc_count_loss(s, 1, size);
		} else {
			continue;
		}
		if (r < 0)
			ret = r;
	}
	if (ret < 0) {
		fetch_add_relaxed(&pv->lost_events, 1);
		fetch_add_relaxed(&pv->lost_bytes, size);
	}
	return ret;
}

int rlog__write_nested(uint32_t hdr, size_t len)
{
	(void)len;
	return rlog__nested(hdr, RLOG__CAT_ANY);
}

/* Inlined: write_fast's record is the inline path's, with the same stores
 * (each word from a register: no wider load of stored bytes, which the
 * store buffer would not forward; rlog__put_payload). */
RLOG__INLINE void put_record(uint8_t *p, uint32_t hdr, uint32_t flagword, const void *payload,
			     size_t len, uint64_t now)
{
	if (rlog__hdr_has_time(hdr)) {
		/* One store for both words, as the inline path. */
		uint32_t hw[2] = { hdr, (uint32_t)now };
		memcpy(p, hw, 8);
		p += 8;
	} else {
		memcpy(p, &hdr, 4);
		p += 4;
	}
	if (rlog__hdr_id(hdr) == RLOG_ID_FLAGGED) {
		memcpy(p, &flagword, 4);
		p += 4;
	}
	rlog__put_payload(p, payload, len);
}

/* Publishes the bytes written so far.  Pairs with the daemon's
 * load_acquire(write_off). */
static void commit(struct rlog__thread *h)
{
	store_release(h->write_off, (uint32_t)(h->pos - h->base));
}

/* How long a thread that found the pool exhausted counts its writes as
 * lost without searching the free bitmap again: 10 us in the session's
 * ticks (1 us while the pool can still grow).  The search reads every
 * bitmap word, lines the daemon is writing as it gives buffers back: a
 * thread that searched at every write made each lost event cost five
 * written ones (120 ns against 24.5 with the default pool full;
 * docs/PERFORMANCE.md, "Drain throughput").  The tick rate comes from the
 * region, hostile: clamped at binding (thread.c), it only sets how soon
 * the thread looks again (at most 1 ms).  Not in overwrite mode, where a
 * search can reuse a full buffer (make_room). */
static uint64_t starve_ticks(const struct rlog__bind *b)
{
	struct rlog_shm_header *h = b->region->hdr;
	/* A pool below its maximum is about to grow (the search woke the
	 * daemon): 1 us then, so that the writes find the new buffers at
	 * once; a daemon that does not grow it (stopped, hung) still costs
	 * a search per microsecond at most. */
	bool growing = load_relaxed(&h->number_of_buffers) < load_relaxed(&h->max_buffers);
	return b->starve_hz / (growing ? 1000000u : 100000u);
}

/*
 * Makes room for a record of size bytes at time now: hands the buffer over
 * and takes a free one if it has less room, and writes a TIME_SYNC (the
 * full 64-bit time, so that the reader's 32-bit deltas never wrap
 * ambiguously) if the binding's last record is 2^31 ticks or more ago.
 * Returns false, having written nothing, if no buffer is free.
 */
static bool make_room(struct rlog__tpriv *pv, struct rlog__bind *b, uint32_t size, uint64_t now)
{
	struct rlog__thread *h = b->h;
	bool sync = h->pos != NULL && now - h->last >= RLOG_TIME_SYNC_TICKS;
	uint32_t need = size + (sync ? 16u : 0u);
	if (h->pos == NULL || (size_t)(h->end - h->pos) < need) {
		rlog__buffer_handover(b);
		/* The clock, not now: an untimed event's now is its thread's
		 * previous record's time. */
		if (b->starved_at != 0 && rlog__now() - b->starved_at < starve_ticks(b))
			return false;
		if (!rlog__buffer_take(pv, b, now)) {
			RLOG__HOOK(RLOG__HOOK_STARVED);
			if (!b->region->overwrite) {
				uint64_t tick = rlog__now();
				b->starved_at = tick != 0 ? tick : 1;
			}
			return false;
		}
		b->starved_at = 0;
		sync = false; /* a new buffer's base time is now */
	}
	if (sync) {
		uint64_t full = now;
		put_record(h->pos, rlog__hdr_make(RLOG_ID_TIME_SYNC, 8, true), 0, &full, 8, now);
		h->pos += 16;
		h->last = now;
		b->buf_other += 16;
	}
	return true;
}

/* A metadata record of size bytes has just been committed: it is not an
 * event, and the daemon must see it before a producer may overwrite the
 * buffer (thread.c, take_overwritten). */
static void meta_written(struct rlog__bind *b, uint32_t size)
{
	b->buf_other += size;
	store_release(&b->desc->meta_end, (uint32_t)(b->h->pos - b->h->base));
}

/* Writes one time-stamped metadata record.  False if no buffer is free. */
static bool put_meta(struct rlog__tpriv *pv, struct rlog__bind *b, unsigned id,
		     const void *payload, size_t len, uint64_t now)
{
	uint32_t size = rlog__record_size(id, (unsigned)len, true);
	if (!make_room(pv, b, size, now))
		return false;
	struct rlog__thread *h = b->h;
	put_record(h->pos, rlog__hdr_make(id, (unsigned)len, true), 0, payload, len, now);
	h->pos += size;
	h->last = now;
	commit(h);
	meta_written(b, size);
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
static bool put_schema(struct rlog__tpriv *pv, struct rlog__bind *b, const struct rlog_schema *s,
		       size_t len, uint64_t now)
{
	uint32_t size = rlog__record_size(RLOG_ID_EVENT_SCHEMA, (unsigned)len, true);
	if (!make_room(pv, b, size, now))
		return false;
	struct rlog__thread *h = b->h;
	uint32_t hw[2] = { rlog__hdr_make(RLOG_ID_EVENT_SCHEMA, (unsigned)len, true),
			   (uint32_t)now };
	memcpy(h->pos, hw, 8);
	if (len & 3) {
		uint32_t zero = 0;
		memcpy(h->pos + 8 + (len & ~(size_t)3), &zero, 4);
	}
	rlog__schema_encode(s, h->pos + 8, len);
	h->pos += size;
	h->last = now;
	commit(h);
	meta_written(b, size);
	return true;
}

/* Writes the pending name records.  False if no buffer is free (what is
 * not written stays pending). */
static bool put_names(struct rlog__tpriv *pv, struct rlog__bind *b, uint64_t now)
{
	uint64_t token[2];
	if (rlog__process_name_claim(b->sess, token)) {
		char name[RLOG_PROCESS_NAME_MAX];
		size_t n = rlog__process_name_get(name);
		/* n == 0: being renamed right now.  The claim is handed back:
		 * the renamer, or the next thread here, records the new name. */
		bool ok = n > 0 && put_meta(pv, b, RLOG_ID_PROCESS_NAME, name, n, now);
		rlog__process_name_done(b->sess, token, ok);
		if (n > 0 && !ok)
			return false;
	}
	if (b->meta_pending & RLOG__META_THREAD_NAME) {
		char name[RLOG_THREAD_NAME_MAX];
		size_t n = rlog__thread_name_get(pv, name);
		if (!put_meta(pv, b, RLOG_ID_THREAD_NAME, name, n, now))
			return false;
		b->meta_pending &= (uint8_t)~RLOG__META_THREAD_NAME;
	}
	return true;
}

/* Sends the binding's next write to the slow path while metadata is
 * pending (see the top of this file). */
static void trap(struct rlog__bind *b)
{
	if (b->meta_pending && b->h->pos != NULL)
		b->h->end = b->h->pos;
}

/* Counts an event that found no free buffer (discard mode): nothing
 * written is touched.  Single writer: nested writes count elsewhere. */
static int lost_no_buffer(struct rlog__tpriv *pv, struct rlog__bind *b, uint32_t size)
{
	struct rlog_shm_slot *s = b->slot;
	store_relaxed(&s->lost_events[0], load_relaxed(&s->lost_events[0]) + 1);
	store_relaxed(&s->lost_bytes[0], load_relaxed(&s->lost_bytes[0]) + size);
	fetch_add_relaxed(&pv->lost_events, 1);
	fetch_add_relaxed(&pv->lost_bytes, size);
	return -ENOBUFS;
}

bool rlog__schema_in(struct rlog__session *s, unsigned id)
{
	/* Pairs with the release fetch_or after the schema record. */
	return load_acquire(&s->schemas[id / 64]) >> (id % 64) & 1;
}

/*
 * Writes into binding k, the set's session sess, what rlog__slow writes
 * (the guard held).  multi: the set has two or more sessions, so the
 * binding's slot busy flag is taken around the write (k >= 1), the
 * category is checked against this session's mask, and the schema is
 * tracked per session.
 */
static int write_one(struct rlog__tpriv *pv, unsigned k, struct rlog__session *sess, bool multi,
		     uint32_t hdr, uint32_t flagword, const void *payload, size_t len,
		     uint64_t now, unsigned cat, const struct rlog_schema *schema,
		     bool *schema_written)
{
	bool event = hdr != 0;
	uint32_t size = event ? record_bytes(hdr) : 0;
	struct rlog__bind *b = &pv->bind[k];
	struct rlog__thread *h = b->h;
	b->multi = multi; /* the same for every write of a binding's life (a new set
	                     releases the bindings) */
	if (b->slot == NULL) {
		/* Metadata alone never binds a thread: binding makes it
		 * pending, and the thread's first event writes it. */
		if (!event)
			return 0;
		/* The binding changes with signals blocked, so a handler sees
		 * the binding (and binding 0's guard) before or after, whole. */
		sigset_t old;
		rlog__signals_block(&old);
		int r = rlog__bind_slot(pv, k, sess, size);
		rlog__signals_restore(&old);
		if (r < 0)
			return r;
		if (r == 0) {
			if (k != 0 && b->slot != NULL)
				store_release(h->busy, 0); /* bound, but paused */
			return 0;
		}
		/* k >= 1: the slot's busy flag is 1, left for this write. */
	} else if (k != 0) {
		/* As the inline path does with the guard: busy = 1 before the
		 * decisive mask load (the stop sequence pairs with it). */
		store_relaxed(h->busy, 1);
		atomic_signal_fence(memory_order_seq_cst);
	}
	/* The decisive check of this session's mask, after busy was set. */
	int ret;
	uint64_t m = load_relaxed(h->mask);
	if (m == 0 || (multi && !wanted(m, cat))) {
		trap(b);
		ret = 0;
		goto out;
	}
	struct rlog__region *r = b->region;
	if (b->desc != NULL)
		h->end = h->base + r->buffer_size; /* undoes a trap */
	if (event && size > r->buffer_size) {
		ret = -EMSGSIZE; /* could never fit, even in an empty buffer */
		goto out;
	}
	/* With several sessions the schema is written where it is not yet;
	 * with one, the caller decided (declared.c). */
	const struct rlog_schema *sch = schema;
	if (sch && multi && rlog__schema_in(sess, sch->id))
		sch = NULL;
	size_t schema_len = sch ? schema_payload_size(sch) : 0;
	if (sch && rlog__record_size(RLOG_ID_EVENT_SCHEMA, (unsigned)schema_len, true) >
			   r->buffer_size) {
		ret = -EMSGSIZE;
		goto out;
	}
	if (!put_names(pv, b, now) || (sch && !put_schema(pv, b, sch, schema_len, now))) {
		ret = event ? lost_no_buffer(pv, b, size) : -ENOBUFS;
		goto out;
	}
	if (sch) {
		/* The session has it now (what declared.c asks before it writes
		 * one, whatever the number of sessions). */
		*schema_written = true;
		atomic_fetch_or_explicit(&sess->schemas[sch->id / 64], UINT64_C(1) << (sch->id % 64),
					 memory_order_release);
	}
	if (!event) {
		ret = 1;
		goto out;
	}
	/* An untimed event has the time of the binding's previous record,
	 * which is also the base time of a buffer it has to take, so that
	 * the reader's cursor gives it that time there too (FORMAT.md,
	 * "Time"); with no record yet in this session, now. */
	uint64_t at = rlog__hdr_has_time(hdr) || h->last == 0 ? now : h->last;
	if (!make_room(pv, b, size, at)) {
		ret = lost_no_buffer(pv, b, size);
		goto out;
	}
	put_record(h->pos, hdr, flagword, payload, len, at);
	h->pos += size;
	h->last = at;
	commit(h);
	if (multi)
		(*rlog__bind_events(b))++;
	ret = 1;
out:
	/* Metadata still due (a write refused, a session paused): the next
	 * write comes here, from rlog__write_several too. */
	trap(b);
	if (k != 0 && h->busy != NULL) {
		atomic_signal_fence(memory_order_seq_cst);
		store_release(h->busy, 0); /* pairs with the daemon's load_acquire(busy) */
	}
	return ret;
}

#define NOT_FAST 2 /* write_fast: not applicable, nothing done */

/* write_fast's terms: binding b, bound under this generation with multi,
 * has a buffer with room for size bytes at time at and nothing else due
 * there (no metadata pending, no TIME_SYNC due). */
RLOG__INLINE bool fast_ok(const struct rlog__bind *b, const struct rlog__thread *h, uint32_t size,
			  uint64_t at)
{
	return b->slot != NULL && b->multi && h->pos != NULL && b->meta_pending == 0 &&
	       (size_t)(h->end - h->pos) >= size && at != 0 && at - h->last < RLOG_TIME_SYNC_TICKS;
}

/* The record's stores on write_fast's terms, as the inline path makes
 * them: the daemon drains the buffer in place, so the lines ahead are in
 * its core's cache. */
RLOG__INLINE void fast_put(struct rlog__bind *b, struct rlog__thread *h, uint32_t hdr,
			   uint32_t flagword, const void *payload, size_t len, uint32_t size,
			   uint64_t at)
{
	/* Everything read before the record's stores, which the compiler
	 * must assume may alias it: no reloads after them. */
	uint8_t *p = h->pos, *next = p + size, *base = h->base;
	_Atomic uint32_t *write_off = h->write_off;
	uint64_t *count = rlog__bind_events(b);
	uint64_t events = *count;
	RLOG__PREFETCH_W(p + 256);
	put_record(p, hdr, flagword, payload, len, at);
	h->pos = next;
	h->last = at;
	*count = events + 1;
	/* Pairs with the daemon's load_acquire(write_off). */
	store_release(write_off, (uint32_t)(next - base));
}

/*
 * The fast path of one session of several: binding k (the set's session
 * sess, bound under this generation with multi) writes the event as the
 * inline path writes into a single session, when nothing else is due
 * there (fast_ok), and no schema record has to be written first.  Busy
 * (k >= 1) is taken before the decisive mask load, as in write_one.
 * Returns 1 (written), 0 (not for this session: its mask does not ask for
 * cat), or NOT_FAST with nothing done and busy free again: write_one then
 * does the whole work.  So the results, the buffer's event count and the
 * losses (only write_one counts them) are write_one's.
 */
RLOG__INLINE int write_fast(struct rlog__tpriv *pv, unsigned k, struct rlog__session *sess,
			    uint32_t hdr, uint32_t flagword, const void *payload, size_t len,
			    uint64_t now, unsigned cat, const struct rlog_schema *schema)
{
	struct rlog__bind *b = &pv->bind[k];
	struct rlog__thread *h = b->h;
	uint32_t size = record_bytes(hdr);
	/* An untimed event has the time of the binding's previous record
	 * (write_one): no TIME_SYNC can be due for it. */
	uint64_t at = rlog__hdr_has_time(hdr) ? now : h->last;
	if (!fast_ok(b, h, size, at))
		return NOT_FAST;
	if (k != 0) {
		store_relaxed(h->busy, 1);
		atomic_signal_fence(memory_order_seq_cst);
	}
	int ret = 0;
	/* The decisive check of this session's mask, after busy was set
	 * (binding 0: the thread's guard, taken by the caller). */
	if (wanted(load_relaxed(h->mask), cat)) {
		if (schema != NULL && !rlog__schema_in(sess, schema->id)) {
			ret = NOT_FAST; /* its schema record first: write_one */
		} else {
			fast_put(b, h, hdr, flagword, payload, len, size, at);
			ret = 1;
		}
	}
	if (k != 0) {
		atomic_signal_fence(memory_order_seq_cst);
		store_release(h->busy, 0); /* pairs with the daemon's load_acquire(busy) */
	}
	return ret;
}

/* The write's result from its sessions' (the top of this file): a loss
 * anywhere, else -EMSGSIZE, else 1 if written anywhere, else 0. */
RLOG__INLINE int merge_result(int ret, int r)
{
	if (r < 0 && r != -EMSGSIZE)
		return r;
	if (r == -EMSGSIZE && ret >= 0)
		return r;
	if (r == 1 && ret == 0)
		return 1;
	return ret;
}

/* Binding k of a write that write_fast did not take: write_one, unless the
 * binding has no slot and its session does not ask for cat (a session
 * that does not want the category gets no slot for it; write_one decides,
 * after busy, for a bound one).  Returns 0 for a session skipped. */
static int write_other(struct rlog__tpriv *pv, unsigned k, struct rlog__session *sess,
		       uint32_t hdr, uint32_t flagword, const void *payload, size_t len,
		       uint64_t now, unsigned cat, const struct rlog_schema *schema,
		       bool *schema_written)
{
	if (pv->bind[k].slot == NULL && !wanted(load_relaxed(&sess->region.hdr->enable_mask), cat))
		return 0;
	return write_one(pv, k, sess, true, hdr, flagword, payload, len, now, cat, schema,
			 schema_written);
}

/*
 * Several sessions, an event from the inline path (rlog__write_slow: no
 * schema, no category but each session's mask being on): the whole
 * several-session write, written for this one case so that a binding on
 * write_fast's terms costs little more than the inline path's stores: no
 * call, no dispatch on the kinds of write, the record's length and
 * header computed once (instructions were most of what a second session
 * cost: docs/PERFORMANCE.md, "Several sessions").  Writes the bindings
 * whose bit is set in todo (the others the inline path wrote:
 * rlog__write_several, whose partial result is ret).  Returns NOT_FAST,
 * with nothing done, where rlog__slow must decide (another generation,
 * fewer than two sessions, an exiting thread); else what rlog__slow
 * returns, with the same stores, counts and busy flags.  Arms the inline
 * path's several-session loop for this generation (t->multi_n).
 */
RLOG__INLINE int write_multi(struct rlog__thread *t, struct rlog__tpriv *pv, uint32_t hdr,
			     uint32_t flagword, const void *payload, size_t len, uint64_t now,
			     uint32_t todo, int ret)
{
	/* The generation, then the set, as rlog__slow reads them. */
	if (pv->exiting || len > RLOG_MAX_PAYLOAD || pv->gen != atomic_load(&rlog__gen))
		return NOT_FAST;
	struct rlog__set *set = atomic_load(&rlog__set);
	unsigned n = set->n;
	if (n < 2)
		return NOT_FAST;
	RLOG__HOOK(RLOG__HOOK_SLOW);
	/* Every binding of this generation is bound in the set's session of
	 * its index, or unbound (rlog__slow released the others): the inline
	 * path may write the ready ones (t->multi[k] is binding k's hot part,
	 * thread.c). */
	t->multi_gen = pv->gen;
	t->multi_n = n;
	/* The set's own word, which rlog__mask points at while it is the
	 * set: the inline path's test.  Only for the set of the bindings'
	 * generation (rlog__set may already be the next one, whose
	 * generation is not yet published: attach.c). */
	t->multi_mask = set->gen == pv->gen ? &set->all : NULL;
	uint32_t size = record_bytes(hdr);
	bool timed = rlog__hdr_has_time(hdr);
	for (unsigned k = 0; k < n; k++) {
		if (!(todo >> k & 1))
			continue;
		struct rlog__bind *b = &pv->bind[k];
		struct rlog__thread *h = b->h;
		uint64_t at = timed ? now : h->last;
		if (RLOG__UNLIKELY(!fast_ok(b, h, size, at))) {
			/* rlog__slow's time for what write_one writes first. */
			uint64_t tn = now != 0 ? now : rlog__now();
			ret = merge_result(ret, write_other(pv, k, set->s[k], hdr, flagword, payload,
							    len, tn, RLOG__CAT_ANY, NULL, NULL));
			continue;
		}
		if (k != 0) {
			store_relaxed(h->busy, 1);
			atomic_signal_fence(memory_order_seq_cst);
		}
		/* The decisive check of this session's mask, after busy was set
		 * (binding 0: the inline path took the thread's guard). */
		if (load_relaxed(h->mask) != 0) {
			fast_put(b, h, hdr, flagword, payload, len, size, at);
			ret = ret == 0 ? 1 : ret;
		}
		if (k != 0) {
			atomic_signal_fence(memory_order_seq_cst);
			store_release(h->busy, 0); /* pairs with the daemon's load_acquire(busy) */
		}
	}
	if (ret == 1)
		t->written++;
	return ret;
}

int rlog__slow(struct rlog__thread *t, struct rlog__tpriv *pv, uint32_t hdr, uint32_t flagword,
	       const void *payload, size_t len, uint64_t now, unsigned cat,
	       const struct rlog_schema *schema, bool *schema_written)
{
	bool event = hdr != 0;
	if (pv->exiting)
		return 0;
	if (len > RLOG_MAX_PAYLOAD)
		return -EMSGSIZE;
	/* The event's time is when it was written, not after the binding and
	 * the first touch of a fresh buffer below (tens of microseconds). */
	if (now == 0)
		now = rlog__now();
	bool unused;
	if (schema_written == NULL)
		schema_written = &unused;

	RLOG__HOOK(RLOG__HOOK_SLOW);
	/* The generation first, then the set: the set is at least as new (it
	 * is published before the generation is bumped, attach.c). */
	uint32_t gen = atomic_load(&rlog__gen);
	struct rlog__set *set = atomic_load(&rlog__set);
	if (set->n == 0 && event && rlog__late_attach()) {
		/* A session waited for has started: this write goes into it. */
		gen = atomic_load(&rlog__gen);
		set = atomic_load(&rlog__set);
	}
	if (pv->gen != gen) {
		/* The process attached, detached or forked since the thread
		 * bound: its bindings are stale.  Released with signals
		 * blocked; they bind again below, lazily. */
		sigset_t old;
		rlog__signals_block(&old);
		for (unsigned k = 0; k < RLOG_MAX_SESSIONS; k++)
			rlog__bind_release(pv, k);
		pv->gen = gen;
		rlog__signals_restore(&old);
	}
	if (set->n <= 1) {
		if (set->n == 0)
			return 0;
		int r = write_one(pv, 0, set->s[0], false, hdr, flagword, payload, len, now, cat,
				  schema, schema_written);
		if (r == 1 && event)
			t->written++;
		return r;
	}
	int ret = 0;
	for (unsigned k = 0; k < set->n; k++) {
		int r = event ? write_fast(pv, k, set->s[k], hdr, flagword, payload, len, now, cat,
					   schema)
			      : NOT_FAST;
		if (r == NOT_FAST)
			r = write_other(pv, k, set->s[k], hdr, flagword, payload, len, now, cat,
					schema, schema_written);
		ret = merge_result(ret, r);
	}
	if (ret == 1 && event)
		t->written++;
	return ret;
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

RLOG__INLINE void leave(struct rlog__thread *t)
{
	atomic_signal_fence(memory_order_seq_cst);
	/* Wherever the guard is now (the slow path may have moved it):
	 * release pairs with the daemon's load_acquire(busy). */
	store_release(t->busy, 0);
	RLOG__HOOK(RLOG__HOOK_LEAVE);
}

void rlog__slow_leave(struct rlog__thread *t)
{
	leave(t);
}

int rlog__write_slow(uint32_t hdr, uint32_t flagword, const void *payload, size_t len,
		     uint64_t now)
{
	/* The inline path took the guard. */
	struct rlog__thread *t = &rlog__thread;
	struct rlog__tpriv *pv = &rlog__tpriv;
	int r = write_multi(t, pv, hdr, flagword, payload, len, now, ~UINT32_C(0), 0);
	if (r == NOT_FAST)
		r = rlog__slow(t, pv, hdr, flagword, payload, len, now, RLOG__CAT_ANY, NULL, NULL);
	leave(t);
	return r;
}

int rlog__write_rest(uint32_t hdr, uint32_t flagword, const void *payload, size_t len,
		     uint64_t now, uint32_t todo)
{
	/* The inline path took the guard and wrote the bindings not in todo. */
	struct rlog__thread *t = &rlog__thread;
	struct rlog__tpriv *pv = &rlog__tpriv;
	int wrote = todo >> 8 & 1;
	int r = write_multi(t, pv, hdr, flagword, payload, len, now, todo & 0xff, wrote);
	if (r == NOT_FAST) {
		if (wrote) {
			/* The set changed (another thread attached or detached)
			 * during this write: it was written in the sessions of
			 * the set it started in, and is nowhere lost. */
			t->written++;
			r = 1;
		} else {
			r = rlog__slow(t, pv, hdr, flagword, payload, len, now, RLOG__CAT_ANY,
				       NULL, NULL);
		}
	}
	leave(t);
	return r;
}

int rlog__write_first(uint32_t hdr, uint32_t flagword, const void *payload, size_t len)
{
	struct rlog__thread *t = &rlog__thread;
	struct rlog__tpriv *pv = &rlog__tpriv;
	if (!rlog__slow_enter(t, pv))
		return rlog__write_nested(hdr, len);
	int r = rlog__slow(t, pv, hdr, flagword, payload, len, 0, RLOG__CAT_ANY, NULL, NULL);
	rlog__slow_leave(t);
	return r;
}
