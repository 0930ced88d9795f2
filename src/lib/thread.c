/*
 * thread.c - a producer thread's slot and buffers, and the states a thread
 * goes through.
 *
 * The guard.  Every thread has exactly one in-write guard word, and
 * rlog__thread.busy always points at it: its slot's busy flag while the
 * thread is bound (binding 0: its slot in the first session of the set), a
 * word of its own (rlog__tpriv.guard) otherwise.  A
 * write takes the guard (0 -> 1) before it looks at anything else and
 * releases it when it returns; a write that finds it taken is a signal
 * handler that interrupted a write of the same thread (a nested write),
 * and is counted lost.  The guard moves between the two words only while
 * it is held and signals are blocked, so a handler never sees a half-moved
 * guard, and there is never a second flag to forget (docs/FORMAT.md,
 * "A thread's states and its guard").
 *
 *   thread states                       what a signal handler's write does there
 *   -------------                       ----------------------------------------
 *   NEW       busy == NULL              first touch: guard := own word (signals
 *     | first write                       blocked), then as UNBOUND
 *     v
 *   UNBOUND   guard = own word          guard free: binds (below) and writes;
 *     | bind: signals blocked; stamp    guard held (the thread is binding, or
 *     |   claimer, slot FREE->ACTIVE,     failed to): counted lost in the process
 *     |   slot.busy = 1, guard := slot    entry under its gate (proc.c), -EBUSY
 *     v
 *   BOUND     guard = slot.busy         guard free: writes; guard held: counted in
 *     | unbind (exit, detach, rebind):    slot.lost_*[1] (the daemon waits for
 *     |   signals blocked; hand over,     busy == 0 before it reads them), -EBUSY
 *     |   guard := own word (held),
 *     |   slot.busy = 0, slot EXITED
 *     v
 *   EXITING   (thread-exit hook ran)    returns 0: not recorded, not counted
 *
 *   slot:    FREE --CAS by a thread--> ACTIVE --unbind--> EXITED --daemon reaps--> FREE
 *            (ACTIVE slot of a dead process: drained and freed by the daemon)
 *   buffer:  FREE, bit set --taking = i+1; CAS bit--> claimed --OWNED, taking = 0-->
 *            OWNED --handover--> FULL --daemon drains: state FREE, then bit--> FREE
 *            overwrite mode, no free buffer: FULL --CAS--> TAKING, then load reader:
 *              0: the rest counted as overwritten in the owner's slot --> OWNED (ours)
 *              1: the daemon holds it (reading) --> FULL again, try the next
 *
 * The region side, each step and its pairing:
 *
 *   thread                          region                         daemon
 *   ------                          ------                         ------
 *   bind:  CAS slot FREE->ACTIVE    slot {busy, pid, tid, lost}
 *          busy = 1, load mask                                     (stop: mask = 0; wait busy)
 *   take:  taking = i + 1 (seq_cst)
 *          CAS-clear bit i          free bitmap ---------------->  fetch_or bit (release)
 *          fill descriptor          desc {pid,tid,seq,base,lost}
 *          state = OWNED (release)  ------------------------------> load_acquire(state)
 *          taking = 0
 *   write: record, write_off (rel)  buffer bytes ----------------->  copy [read_off, write_off)
 *   full:  state = FULL (seq_cst)   ------------------------------> drains, state = FREE
 *   take over (overwrite mode, no free buffer):
 *          taking = i + 1
 *          CAS FULL->TAKING         desc.state <----------------> hold: reader = 1 (seq_cst),
 *            (seq_cst), load reader desc {reader, delivered_*,     then load state (seq_cst)
 *            (seq_cst), meta_seen         meta_seen} <---------    TAKING: reader = 0, skip it
 *          reader 0: ow_* += the    slot {ow_*} ---------------->  OWNED/FULL: read, publish
 *            rest, as take (gen+1)                                 delivered_*, meta_seen, then
 *          reader 1: state = FULL                                  reader = 0 (release), or FREE
 *            (steps back)                                          by CAS after the write
 *   exit:  handover, busy = 0, slot EXITED -------------------->  reports losses, slot FREE
 *
 * taking is stored before the CAS, so a process killed between the CAS and
 * OWNED leaves a mark the daemon finds (docs/FORMAT.md,
 * "Dead processes"); the daemon gives
 * the buffer back only if no live slot is taking it and it is still FREE
 * (src/daemon/drain.c).
 *
 * Several sessions.  A thread has one binding per session of the set it
 * writes into: binding 0 as above, bindings 1.. each with a slot of its
 * own in its session.  The guard stays binding 0's; a write into binding
 * k >= 1 also sets that slot's busy flag around its part (busy = 1, the
 * decisive load of that session's mask, the record, busy = 0), so that
 * each session's stop sequence sees it as it sees binding 0.  A signal
 * handler that finds the guard held counts its write lost in every session
 * it was for: in the slot there (under that slot's busy flag, which it
 * takes itself if the interrupted write is not inside that session), or in
 * the process entry if the thread has no slot there (write.c).
 *
 * Everything here runs on the rare path: once per thread, once per buffer
 * (~1000 events at 16 KiB), or once per lost event.  Nothing here blocks.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "atomics.h"
#include "bits.h"
#include "futex.h"
#include "producer.h"

#if RLOG_TEST_HOOKS
void (*_Atomic rlog__test_hook)(int point);
#endif

static pthread_key_t exit_key;
static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;

/* The inline path's fields are an ABI (docs/FORMAT.md, "The inline path's
 * words"): those of 0.1 never move, later ones follow them. */
_Static_assert(offsetof(struct rlog__thread, written) == 7 * sizeof(void *) &&
		       offsetof(struct rlog__thread, multi_n) == 7 * sizeof(void *) + 8,
	       "struct rlog__thread: a released field moved");
_Static_assert(sizeof(void *) != 8 || offsetof(struct rlog__thread, multi_mask) == 144,
	       "struct rlog__thread: multi_mask is not where docs/FORMAT.md says");

/* A write_off target for a binding without a buffer: never read. */
static _Thread_local _Atomic uint32_t no_write_off;

void rlog__signals_block(sigset_t *old)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, old);
}

void rlog__signals_restore(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* Binding k's state with nothing bound (hot part too, but for binding 0's
 * guard, which the caller sets). */
static void bind_clear(struct rlog__tpriv *pv, unsigned k)
{
	struct rlog__bind *b = &pv->bind[k];
	struct rlog__thread *h = k == 0 ? &rlog__thread : &b->hot;
	b->h = h;
	b->sess = NULL;
	b->region = NULL;
	b->slot = NULL;
	b->desc = NULL;
	b->meta_pending = 0;
	b->starved_at = 0;
	h->pos = h->end = h->base = NULL;
	h->write_off = &no_write_off;
	h->mask = &rlog__zero_mask;
	if (k != 0)
		h->busy = NULL;
}

void rlog__thread_init(struct rlog__thread *t, struct rlog__tpriv *pv)
{
	sigset_t old;
	rlog__signals_block(&old);
	/* A handler may have done it between the caller's check and here. */
	if (t->busy == NULL) {
		for (unsigned k = 0; k < RLOG_MAX_SESSIONS; k++) {
			bind_clear(pv, k);
			t->multi[k] = pv->bind[k].h; /* for rlog__write_several */
		}
		t->busy = &pv->guard;
	}
	rlog__signals_restore(&old);
}

static void wake_daemon_if_waiting(struct rlog__region *r)
{
	/* CeLog's fSetEvent: the daemon sets fill_waiting before it sleeps;
	 * the first producer to see it clears it and signals, the others see
	 * 0 and do nothing: one syscall per wake-up.  seq_cst pairs with the
	 * daemon's store_seq_cst(fill_waiting, 1) and its scan of the
	 * descriptor states after it (src/daemon/daemon.c). */
	if (load_seq_cst(&r->hdr->fill_waiting) &&
	    atomic_exchange(&r->hdr->fill_waiting, 0) == 1)
		rlog__futex_wake(&r->hdr->fill_waiting, 1);
}

bool rlog__thread_sane(const struct rlog__thread *t, const struct rlog__tpriv *pv)
{
	if (t->busy == NULL)
		return pv->bind[0].slot == NULL && pv->bind[0].desc == NULL && t->pos == NULL;
	for (unsigned k = 0; k < RLOG_MAX_SESSIONS; k++) {
		const struct rlog__bind *b = &pv->bind[k];
		const struct rlog__thread *h = b->h;
		if (h != (k == 0 ? t : &b->hot))
			return false;
		if (b->slot == NULL) {
			/* Unbound: binding 0's guard is the thread's own word. */
			if ((k == 0 ? h->busy != &pv->guard : h->busy != NULL) || b->desc != NULL ||
			    h->pos != NULL || h->mask != &rlog__zero_mask)
				return false;
			continue;
		}
		const struct rlog__region *r = b->region;
		if (h->busy != &b->slot->busy || h->mask != &r->hdr->enable_mask)
			return false;
		if (b->desc == NULL) {
			if (h->pos != NULL || h->base != NULL || h->end != NULL)
				return false;
			continue;
		}
		uint32_t idx = (uint32_t)(b->desc - r->desc);
		/* end == pos while metadata is pending (write.c's trap). */
		if (!(idx < r->buffer_count && h->base == rlog__region_buffer(r, idx) &&
		      h->write_off == &b->desc->write_off && h->base <= h->pos && h->pos <= h->end &&
		      (h->end == h->base + r->buffer_size || h->end == h->pos)))
			return false;
	}
	return true;
}

void rlog__buffer_handover(struct rlog__bind *b)
{
	struct rlog_shm_desc *d = b->desc;
	if (d == NULL)
		return;
	struct rlog__thread *h = b->h;
	/* What it holds, for a producer that overwrites it (overwrite mode)
	 * and the daemon; published by the FULL store below. */
	uint32_t off = (uint32_t)(h->pos - h->base);
	d->events = (uint32_t)(*rlog__bind_events(b) - b->written_mark);
	d->event_bytes = off > b->buf_other ? off - b->buf_other : 0;
	d->last_time = h->last;
	/* The thread lets go of the buffer before the daemon may see it FULL:
	 * nothing on this thread can write into it after that. */
	b->desc = NULL;
	h->pos = h->end = h->base = NULL;
	h->write_off = &no_write_off;
	atomic_signal_fence(memory_order_seq_cst);
	/* Release: the daemon's load_acquire(state) == FULL sees the final
	 * write_off and bytes.  seq_cst: see wake_daemon_if_waiting. */
	rlog__tsan_release(d);
	store_seq_cst(&d->state, RLOG_BUF_FULL);
	/* The high-water mark of the pool as it is now (the daemon grows it
	 * the rest of the way; a hostile value is only a wake-up more or
	 * less). */
	struct rlog__region *r = b->region;
	if (rlog__region_past_high_water(r, load_relaxed(&r->hdr->number_of_buffers)))
		wake_daemon_if_waiting(r);
}

/* Takes a free buffer from bitmap word w, among the bits in mask.  The
 * slot's taking mark names the candidate before the CAS that claims it. */
static bool try_take_word(struct rlog__region *r, struct rlog_shm_slot *s, uint32_t w,
			  uint64_t mask, uint32_t *idx)
{
	uint64_t v = load_relaxed(&r->free_bits[w]);
	while ((v & mask) != 0) {
		unsigned bit = rlog__ctz64(v & mask);
		/* seq_cst: the daemon, reaping a dead slot, reads the free bit
		 * and then every live slot's taking (src/daemon/drain.c). */
		store_seq_cst(&s->taking, w * 64 + bit + 1);
		/* Acquire pairs with the daemon's release fetch_or that freed
		 * the buffer after it stopped reading it. */
		if (atomic_compare_exchange_weak_explicit(&r->free_bits[w], &v,
							  v & ~(UINT64_C(1) << bit),
							  memory_order_seq_cst, memory_order_relaxed)) {
			*idx = w * 64 + bit;
			return true;
		}
	}
	return false;
}

/*
 * No free buffer, and the pool below MaximumBuffers: the producer grows it
 * by the buffer it needs and takes that buffer, without waiting for the
 * daemon to wake up and grow it (pool.c; docs/FORMAT.md, "Growing the
 * pool").  The taking mark names buffer n before the CAS that adds it to
 * the pool, as for a free bit: a process killed between the CAS and OWNED
 * leaves a buffer in the pool, FREE with its bit clear, that the daemon
 * gives back (src/daemon/procs.c).  A buffer past number_of_buffers has
 * never been used (the pool never shrinks) and has no free bit, so the CAS
 * alone makes it this thread's.  False when the pool is at its maximum.
 */
static bool take_grown(struct rlog__region *r, struct rlog_shm_slot *s, uint32_t *idx)
{
	uint32_t max = load_relaxed(&r->hdr->max_buffers);
	if (max > r->buffer_count)
		max = r->buffer_count; /* a hostile header */
	uint32_t n = load_relaxed(&r->hdr->number_of_buffers);
	while (n < max) {
		store_seq_cst(&s->taking, n + 1);
		/* seq_cst: after the mark (the daemon's reclaim reads the pool,
		 * then the marks); a failed CAS reloads n: another producer or
		 * the daemon grew it first. */
		if (atomic_compare_exchange_weak(&r->hdr->number_of_buffers, &n, n + 1)) {
			RLOG__HOOK(RLOG__HOOK_GROWN);
			*idx = n;
			return true;
		}
	}
	return false;
}

/*
 * Overwrite mode, no free buffer: takes a FULL buffer in the order of the
 * pool's circular list (the region's ow_cursor), as QNX's instrumented
 * kernel does, skipping one the daemon is reading (reader) and one whose
 * metadata records the daemon has not seen yet (the names and schemas
 * would be gone for good).  The producer and the daemon pair like
 * Dekker's: the producer CASes FULL -> TAKING, then loads reader; the
 * daemon stores reader = 1, then loads state; all seq_cst, so one of them
 * sees the other and steps back.  What the buffer held and the daemon had
 * not delivered is counted, exactly, as overwritten in its owner's slot
 * (docs/FORMAT.md, "Overwrite mode").  Returns the buffer in state
 * TAKING, or false if every buffer is in use, read or pinned.
 */
static bool take_overwritten(struct rlog__region *r, struct rlog_shm_slot *s, uint32_t *idx)
{
	uint32_t n = load_relaxed(&r->hdr->number_of_buffers);
	if (n > r->buffer_count)
		n = r->buffer_count; /* a hostile header */
	if (n == 0)
		return false;
	/* One step of the cursor, then every buffer from there: steps of
	 * the shared cursor per try would, with other takers stepping it
	 * too, look at only some of the buffers. */
	uint32_t start = fetch_add_relaxed(&r->hdr->ow_cursor, 1);
	for (uint32_t tries = 0; tries < n; tries++) {
		uint32_t i = (start + tries) % n;
		struct rlog_shm_desc *d = &r->desc[i];
		if (load_relaxed(&d->state) != RLOG_BUF_FULL)
			continue;
		store_seq_cst(&s->taking, i + 1);
		uint32_t expect = RLOG_BUF_FULL;
		if (!atomic_compare_exchange_strong(&d->state, &expect, RLOG_BUF_TAKING))
			continue;
		/* Acquire (seq_cst): the daemon's delivered_* and meta_seen,
		 * stored before it released reader, and the owner's fields,
		 * stored before its FULL store. */
		if (load_seq_cst(&d->reader) != 0 ||
		    load_acquire(&d->meta_seen) < load_acquire(&d->meta_end)) {
			store_release(&d->state, RLOG_BUF_FULL);
			continue;
		}
		RLOG__HOOK(RLOG__HOOK_OVERWRITE);
		uint32_t v = d->slot;
		if (v < r->slot_count) {
			uint32_t de = load_relaxed(&d->delivered_events);
			uint32_t db = load_relaxed(&d->delivered_bytes);
			struct rlog_shm_slot *owner = &r->slots[v];
			/* Relaxed: the daemon reads them after the stop
			 * sequence has seen this thread's busy flag at 0, or,
			 * while it runs, as cumulative counters. */
			fetch_add_relaxed(&owner->ow_events, d->events > de ? d->events - de : 0);
			fetch_add_relaxed(&owner->ow_bytes, d->event_bytes > db ? d->event_bytes - db : 0);
			uint64_t t = load_relaxed(&owner->ow_last_time);
			while (t < d->last_time &&
			       !atomic_compare_exchange_weak_explicit(&owner->ow_last_time, &t,
								      d->last_time,
								      memory_order_relaxed,
								      memory_order_relaxed))
				;
			fetch_add_relaxed(&owner->ow_buffers, 1);
		}
		/* The next taker starts after this one: oldest first. */
		if (tries > 0)
			fetch_add_relaxed(&r->hdr->ow_cursor, tries);
		*idx = i;
		return true;
	}
	return false;
}

/* Takes the next free buffer after the one this binding took last (round
 * robin).  A buffer the daemon has just read still sits in the daemon's
 * core's cache; by the time the rotation comes back to it, it has aged out
 * and the producer's writes do not have to take the lines back from the
 * other core (measured in docs/PERFORMANCE.md). */
bool rlog__buffer_take(struct rlog__tpriv *pv, struct rlog__bind *b, uint64_t now)
{
	struct rlog__region *r = b->region;
	struct rlog_shm_slot *s = b->slot;
	struct rlog__thread *h = b->h;
	uint32_t start = b->next_buffer < r->buffer_count ? b->next_buffer : 0;
	uint32_t w0 = start / 64, idx = 0;
	bool got = try_take_word(r, s, w0, ~UINT64_C(0) << (start % 64), &idx);
	for (uint32_t k = 1; !got && k <= r->free_words; k++)
		got = try_take_word(r, s, (w0 + k) % r->free_words, ~UINT64_C(0), &idx);
	if (!got) {
		got = take_grown(r, s, &idx);
		/* The daemon may have grown it to the maximum meanwhile: its free
		 * bits follow its CAS at once (pool.c). */
		for (uint32_t k = 0; !got && k < r->free_words; k++)
			got = try_take_word(r, s, k, ~UINT64_C(0), &idx);
	}
	if (!got && r->overwrite) {
		got = take_overwritten(r, s, &idx);
		/* The daemon gives a buffer back FREE first, then its free
		 * bit (drain.c): one the sweep found FREE, not FULL, was given
		 * back after the bitmap was looked at. */
		for (uint32_t k = 0; !got && k < r->free_words; k++)
			got = try_take_word(r, s, k, ~UINT64_C(0), &idx);
	}
	if (!got || idx >= r->buffer_count) {
		/* The pool is exhausted (or a hostile bitmap had a bit past the
		 * pool, which is then left clear): make sure the daemon drains. */
		store_release(&s->taking, 0);
		wake_daemon_if_waiting(r);
		return false;
	}
	RLOG__HOOK(RLOG__HOOK_TAKE_CLAIMED);
	b->next_buffer = idx + 1;
	b->buf_other = 0;
	b->written_mark = *rlog__bind_events(b);
	struct rlog_shm_desc *d = &r->desc[idx];
	rlog__tsan_acquire(d); /* the previous owner's handover, via the daemon */
	d->pid = pv->pid;
	d->tid = pv->tid;
	d->slot = b->slot_idx;
	d->seq = load_relaxed(&s->buffers_taken);
	store_relaxed(&s->buffers_taken, d->seq + 1);
	d->base_time = now;
	for (int i = 0; i < 2; i++) {
		d->lost_events[i] = load_relaxed(&s->lost_events[i]);
		d->lost_bytes[i] = load_relaxed(&s->lost_bytes[i]);
	}
	d->events = d->event_bytes = 0;
	d->last_time = now;
	/* The daemon's words too: it is not reading (a FREE buffer was given
	 * back; a TAKING one saw reader at 0, and the daemon, seeing TAKING,
	 * does not write them). */
	store_relaxed(&d->meta_end, 0);
	store_relaxed(&d->meta_seen, 0);
	store_relaxed(&d->delivered_events, 0);
	store_relaxed(&d->delivered_bytes, 0);
	store_relaxed(&d->gen, load_relaxed(&d->gen) + 1);
	store_relaxed(&d->write_off, 0);
	/* Pairs with the daemon's load_acquire(state): it reads the fields
	 * above only after seeing OWNED. */
	store_release(&d->state, RLOG_BUF_OWNED);
	RLOG__HOOK(RLOG__HOOK_TAKE_OWNED);
	store_release(&s->taking, 0);
	b->desc = d;
	h->base = h->pos = rlog__region_buffer(r, idx);
	h->end = h->base + r->buffer_size;
	h->write_off = &d->write_off;
	h->last = now;
	assert(rlog__thread_sane(&rlog__thread, pv));
	return true;
}

int rlog__bind_slot(struct rlog__tpriv *pv, unsigned k, struct rlog__session *sess, uint32_t size)
{
	RLOG__HOOK(RLOG__HOOK_BIND);
	struct rlog__region *r = &sess->region;
	if (load_seq_cst(&r->hdr->state) != RLOG_STATE_ACTIVE ||
	    load_seq_cst(&r->hdr->enable_mask) == 0)
		return 0;
	/* A process without an entry records nothing (it could not count a
	 * loss either); rlog__proc_get counted it in procs_refused. */
	if (rlog__proc_get(sess) == NULL)
		return 0;
	struct rlog__bind *b = &pv->bind[k];
	struct rlog__thread *h = b->h;
	/* Known before the CAS: the slot carries its owner's pid as soon as
	 * possible (the daemon reads pid 0 as "being claimed"). */
	uint32_t pid = (uint32_t)getpid(), tid = (uint32_t)syscall(SYS_gettid);
	for (uint32_t i = 0; i < r->slot_count; i++) {
		struct rlog_shm_slot *s = &r->slots[i];
		uint32_t expect = RLOG_SLOT_FREE, none = 0;
		/* The claim is stamped with this process's pid before the slot
		 * becomes ACTIVE (CAS claimer 0 -> pid, then state FREE ->
		 * ACTIVE; only the stamp's holder moves the state): a daemon
		 * that finds the slot ACTIVE with pid 0 knows whose claim it is
		 * and frees it once that process is dead (src/daemon/procs.c,
		 * docs/FORMAT.md "A thread's first write"). */
		if (load_relaxed(&s->state) != RLOG_SLOT_FREE || load_relaxed(&s->claimer) != 0 ||
		    !atomic_compare_exchange_strong(&s->claimer, &none, pid))
			continue;
		RLOG__HOOK(RLOG__HOOK_SLOT_STAMPED);
		if (!atomic_compare_exchange_strong(&s->state, &expect, RLOG_SLOT_ACTIVE)) {
			store_release(&s->claimer, 0); /* not FREE: a hostile region */
			continue;
		}
		RLOG__HOOK(RLOG__HOOK_SLOT_CLAIMED);
		rlog__tsan_acquire(s); /* the previous owner's unbind, via the daemon */
		pv->pid = pid;
		pv->tid = tid;
		s->pid = pid;
		s->tid = tid;
		for (int c = 0; c < 2; c++) {
			store_relaxed(&s->lost_events[c], 0);
			store_relaxed(&s->lost_bytes[c], 0);
		}
		store_relaxed(&s->buffers_taken, 0);
		/* busy = 1 before the decisive mask load below.  The stop
		 * sequence (mask = 0, membarrier, then per slot: state, busy)
		 * either sees this slot ACTIVE and busy, and waits, or this
		 * thread sees the mask at 0.  seq_cst, cheap here. */
		store_seq_cst(&s->busy, 1);
		h->busy = &s->busy;
		if (k == 0) {
			/* The guard moves to the slot: it was the thread's own
			 * word, held by the caller; it stays held. */
			store_relaxed(&pv->guard, 0);
		}
		b->sess = sess;
		b->region = r;
		b->slot = s;
		b->slot_idx = i;
		b->desc = NULL;
		/* A new binding starts unstarved; the session's tick rate,
		 * read once here (the daemon refines it later on; the window
		 * needs no precision), sets the back-off's window (write.c). */
		b->starved_at = 0;
		uint64_t hz = r->hdr->tick_freq_hz;
		b->starve_hz = hz < 1000000u ? 1000000u
			       : hz > UINT64_C(100000000000) ? UINT64_C(100000000000) : hz;
		h->mask = &r->hdr->enable_mask;
		h->pos = h->end = h->base = NULL;
		h->write_off = &no_write_off;
		h->last = 0; /* no record in this session yet (write.c: untimed events) */
		/* Every binding names the thread in its session (write.c). */
		b->meta_pending |= RLOG__META_THREAD_NAME;
		if (!pv->key_set) {
			pv->key_set = true;
			pthread_setspecific(exit_key, (void *)1);
		}
		RLOG__HOOK(RLOG__HOOK_BOUND);
		return load_seq_cst(h->mask) != 0 ? 1 : 0;
	}
	return rlog__proc_count_loss(sess, 0, size);
}

void rlog__bind_release(struct rlog__tpriv *pv, unsigned k)
{
	struct rlog__bind *b = &pv->bind[k];
	struct rlog_shm_slot *s = b->slot;
	if (s == NULL)
		return;
	rlog__buffer_handover(b);
	RLOG__HOOK(RLOG__HOOK_UNBIND);
	struct rlog__thread *h = b->h;
	if (k == 0) {
		/* The guard moves to the thread's own word, still held. */
		store_relaxed(&pv->guard, 1);
		h->busy = &pv->guard;
	} else {
		h->busy = NULL;
	}
	h->mask = &rlog__zero_mask;
	/* busy = 0 before EXITED: once EXITED the daemon may free the slot
	 * and another thread claim it. */
	store_release(&s->busy, 0);
	rlog__tsan_release(s);
	store_release(&s->state, RLOG_SLOT_EXITED);
	b->slot = NULL;
	b->sess = NULL;
	b->region = NULL;
	b->meta_pending = 0;
}

int rlog_flush_thread(void)
{
	if (atomic_load(&rlog__set)->n == 0)
		return -ENOENT;
	struct rlog__thread *t = &rlog__thread;
	struct rlog__tpriv *pv = &rlog__tpriv;
	if (!rlog__slow_enter(t, pv))
		return -EBUSY; /* called from a signal handler that interrupted a write */
	for (unsigned k = 0; k < RLOG_MAX_SESSIONS; k++) {
		struct rlog__bind *b = &pv->bind[k];
		if (b->desc != NULL) {
			rlog__buffer_handover(b);
			wake_daemon_if_waiting(b->region);
		}
	}
	rlog__slow_leave(t);
	return 0;
}

void rlog__thread_release(bool exiting)
{
	struct rlog__thread *t = &rlog__thread;
	struct rlog__tpriv *pv = &rlog__tpriv;
	sigset_t old;
	rlog__signals_block(&old);
	if (exiting)
		pv->exiting = true;
	t->multi_n = 0; /* every write through the library again (write.c arms it) */
	t->multi_mask = NULL;
	if (t->busy != NULL) {
		/* Not inside a write (exit hooks and detaching run outside
		 * one), so the guard is free: take it for the unbind. */
		store_relaxed(t->busy, 1);
		for (unsigned k = 0; k < RLOG_MAX_SESSIONS; k++)
			rlog__bind_release(pv, k);
		store_release(t->busy, 0);
	}
	rlog__signals_restore(&old);
}

static void thread_exit(void *arg)
{
	(void)arg;
	rlog__thread_release(true);
}

static void process_exit(void)
{
	/* exit() runs no thread-exit destructor for the calling thread. */
	rlog__thread_release(true);
	struct rlog__set *set = atomic_load(&rlog__set);
	for (uint32_t i = 0; i < set->n; i++)
		rlog__proc_release(set->s[i]);
}

static void fork_child(void)
{
	/* The child's only thread forgets the parent thread's slots and
	 * buffers (the parent goes on using them) and binds anew on its next
	 * write. */
	struct rlog__thread *t = &rlog__thread;
	struct rlog__tpriv *pv = &rlog__tpriv;
	sigset_t old;
	rlog__signals_block(&old);
	if (t->busy != NULL) {
		for (unsigned k = 0; k < RLOG_MAX_SESSIONS; k++)
			bind_clear(pv, k);
		/* fork() from a handler inside a write is not supported: the
		 * child must not return from that handler (docs/DECISIONS.md). */
		store_relaxed(&pv->guard, 0);
		t->busy = &pv->guard;
	}
	t->written = 0;
	t->multi_n = 0;
	t->multi_mask = NULL;
	store_relaxed(&pv->lost_events, 0);
	store_relaxed(&pv->lost_bytes, 0);
	rlog__names_fork_child();
	rlog__counters_fork_child();
	rlog__attach_fork_child();
	/* A new process: its own process name, thread name and schema records
	 * (a schema applies to the records of the process that wrote it), so
	 * everything registered under the parent's generation is stale. */
	atomic_fetch_add(&rlog__gen, 1);
	/* The set stays the parent's, now of the child's generation, for
	 * which write.c arms the inline path (the only thread; its
	 * bindings are clear). */
	atomic_load(&rlog__set)->gen = atomic_load(&rlog__gen);
	rlog__signals_restore(&old);
}

static void hooks_register(void)
{
	pthread_key_create(&exit_key, thread_exit);
	pthread_atfork(NULL, NULL, fork_child);
	atexit(process_exit);
}

void rlog__hooks_init(void)
{
	pthread_once(&hooks_once, hooks_register);
}
