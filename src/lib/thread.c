/*
 * thread.c - a producer thread's slot and buffers, and the states a thread
 * goes through.
 *
 * The guard.  Every thread has exactly one in-write guard word, and
 * rlog__thread.busy always points at it: its slot's busy flag while the
 * thread is bound, a word of its own (rlog__tpriv.guard) otherwise.  A
 * write takes the guard (0 -> 1) before it looks at anything else and
 * releases it when it returns; a write that finds it taken is a signal
 * handler that interrupted a write of the same thread (a nested write),
 * and is counted lost.  The guard moves between the two words only while
 * it is held and signals are blocked, so a handler never sees a half-moved
 * guard, and there is never a second flag to forget (issue 12, item 1).
 *
 *   thread states                       what a signal handler's write does there
 *   -------------                       ----------------------------------------
 *   NEW       busy == NULL              first touch: guard := own word (signals
 *     | first write                       blocked), then as UNBOUND
 *     v
 *   UNBOUND   guard = own word          guard free: binds (below) and writes;
 *     | bind: signals blocked;            guard held (the thread is binding, or
 *     |   claim slot FREE->ACTIVE,        failed to): counted lost in the process
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
 *          in use >= high water and fill_waiting == 1:
 *          exchange(fill_waiting, 0) == 1 -> futex_wake        <-  fill_waiting = 1; futex_wait
 *   exit:  handover, busy = 0, slot EXITED -------------------->  reports losses, slot FREE
 *
 * taking is stored before the CAS, so a process killed between the CAS and
 * OWNED leaves a mark the daemon finds (issue 12, item 6); the daemon gives
 * the buffer back only if no live slot is taking it and it is still FREE
 * (src/daemon/drain.c).
 *
 * Everything here runs on the rare path: once per thread, once per buffer
 * (~1000 events at 16 KiB), or once per lost event.  Nothing here blocks.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "atomics.h"
#include "bits.h"
#include "futex.h"
#include "producer.h"

void (*_Atomic rlog__test_hook)(int point);

static pthread_key_t exit_key;
static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;

/* A write_off target for a thread without a buffer: never read. */
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

void rlog__thread_init(struct rlog__thread *t, struct rlog__tpriv *pv)
{
	sigset_t old;
	rlog__signals_block(&old);
	/* A handler may have done it between the caller's check and here. */
	if (t->busy == NULL) {
		t->write_off = &no_write_off;
		t->mask = &rlog__zero_mask;
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
		return pv->slot == NULL && pv->desc == NULL && t->pos == NULL;
	if (pv->slot == NULL) /* unbound: the guard is the thread's own word */
		return t->busy == &pv->guard && pv->desc == NULL && t->pos == NULL &&
		       t->mask == &rlog__zero_mask;
	const struct rlog__region *r = pv->region;
	if (t->busy != &pv->slot->busy || t->mask != &r->hdr->enable_mask)
		return false;
	if (pv->desc == NULL)
		return t->pos == NULL && t->base == NULL && t->end == NULL;
	uint32_t idx = (uint32_t)(pv->desc - r->desc);
	/* end == pos while metadata is pending (write.c's trap). */
	return idx < r->buffer_count && t->base == rlog__region_buffer(r, idx) &&
	       t->write_off == &pv->desc->write_off && t->base <= t->pos && t->pos <= t->end &&
	       (t->end == t->base + r->buffer_size || t->end == t->pos);
}

void rlog__buffer_handover(struct rlog__thread *t, struct rlog__tpriv *pv)
{
	assert(rlog__thread_sane(t, pv));
	struct rlog_shm_desc *d = pv->desc;
	if (d == NULL)
		return;
	/* The thread lets go of the buffer before the daemon may see it FULL:
	 * nothing on this thread can write into it after that. */
	pv->desc = NULL;
	t->pos = t->end = t->base = NULL;
	t->write_off = &no_write_off;
	atomic_signal_fence(memory_order_seq_cst);
	/* Release: the daemon's load_acquire(state) == FULL sees the final
	 * write_off and bytes.  seq_cst: see wake_daemon_if_waiting. */
	rlog__tsan_release(d);
	store_seq_cst(&d->state, RLOG_BUF_FULL);
	/* The high-water mark of the pool as it is now (the daemon grows it;
	 * a hostile value is only a wake-up more or less). */
	struct rlog__region *r = pv->region;
	uint32_t n = load_relaxed(&r->hdr->number_of_buffers), free = rlog__region_free_count(r);
	if (free < n && n - free >= rlog__region_high_water(r->high_water_pct, n))
		wake_daemon_if_waiting(r);
}

/* Takes a free buffer from bitmap word w, among the bits in mask.  The
 * slot's taking mark names the candidate before the CAS that claims it. */
static bool try_take_word(struct rlog__region *r, struct rlog_shm_slot *s, uint32_t w,
			  uint64_t mask, uint32_t *idx)
{
	uint64_t v = load_relaxed(&r->free_bits[w]);
	while ((v & mask) != 0) {
		unsigned b = rlog__ctz64(v & mask);
		/* seq_cst: the daemon, reaping a dead slot, reads the free bit
		 * and then every live slot's taking (src/daemon/drain.c). */
		store_seq_cst(&s->taking, w * 64 + b + 1);
		/* Acquire pairs with the daemon's release fetch_or that freed
		 * the buffer after it stopped reading it. */
		if (atomic_compare_exchange_weak_explicit(&r->free_bits[w], &v,
							  v & ~(UINT64_C(1) << b),
							  memory_order_seq_cst, memory_order_relaxed)) {
			*idx = w * 64 + b;
			return true;
		}
	}
	return false;
}

/* Takes the next free buffer after the one this thread took last (round
 * robin).  A buffer the daemon has just read still sits in the daemon's
 * core's cache; by the time the rotation comes back to it, it has aged out
 * and the producer's writes do not have to take the lines back from the
 * other core (measured in docs/PERFORMANCE.md). */
bool rlog__buffer_take(struct rlog__thread *t, struct rlog__tpriv *pv, uint64_t now)
{
	struct rlog__region *r = pv->region;
	struct rlog_shm_slot *s = pv->slot;
	uint32_t start = pv->next_buffer < r->buffer_count ? pv->next_buffer : 0;
	uint32_t w0 = start / 64, idx = 0;
	bool got = try_take_word(r, s, w0, ~UINT64_C(0) << (start % 64), &idx);
	for (uint32_t k = 1; !got && k <= r->free_words; k++)
		got = try_take_word(r, s, (w0 + k) % r->free_words, ~UINT64_C(0), &idx);
	if (!got || idx >= r->buffer_count) {
		/* The pool is exhausted (or a hostile bitmap had a bit past the
		 * pool, which is then left clear): make sure the daemon drains. */
		store_release(&s->taking, 0);
		wake_daemon_if_waiting(r);
		return false;
	}
	RLOG__HOOK(RLOG__HOOK_TAKE_CLAIMED);
	pv->next_buffer = idx + 1;
	struct rlog_shm_desc *d = &r->desc[idx];
	rlog__tsan_acquire(d); /* the previous owner's handover, via the daemon */
	d->pid = pv->pid;
	d->tid = pv->tid;
	d->slot = pv->slot_idx;
	d->seq = load_relaxed(&s->buffers_taken);
	store_relaxed(&s->buffers_taken, d->seq + 1);
	d->base_time = now;
	for (int i = 0; i < 2; i++) {
		d->lost_events[i] = load_relaxed(&s->lost_events[i]);
		d->lost_bytes[i] = load_relaxed(&s->lost_bytes[i]);
	}
	store_relaxed(&d->write_off, 0);
	/* Pairs with the daemon's load_acquire(state): it reads the fields
	 * above only after seeing OWNED. */
	store_release(&d->state, RLOG_BUF_OWNED);
	RLOG__HOOK(RLOG__HOOK_TAKE_OWNED);
	store_release(&s->taking, 0);
	pv->desc = d;
	t->base = t->pos = rlog__region_buffer(r, idx);
	t->end = t->base + r->buffer_size;
	t->write_off = &d->write_off;
	t->last = now;
	assert(rlog__thread_sane(t, pv));
	return true;
}

int rlog__thread_bind(struct rlog__thread *t, struct rlog__tpriv *pv, uint32_t size)
{
	RLOG__HOOK(RLOG__HOOK_BIND);
	uint32_t gen = atomic_load(&rlog__gen);
	struct rlog__session *sess = atomic_load(&rlog__current);
	if (sess == NULL)
		return 0;
	struct rlog__region *r = &sess->region;
	if (load_seq_cst(&r->hdr->state) != RLOG_STATE_ACTIVE ||
	    load_seq_cst(&r->hdr->enable_mask) == 0)
		return 0;
	/* A process without an entry records nothing (it could not count a
	 * loss either); rlog__proc_get counted it in procs_refused. */
	if (rlog__proc_get(sess) == NULL)
		return 0;
	/* Known before the CAS: the slot carries its owner's pid as soon as
	 * possible (the daemon reads pid 0 as "being claimed"). */
	uint32_t pid = (uint32_t)getpid(), tid = (uint32_t)syscall(SYS_gettid);
	for (uint32_t i = 0; i < r->slot_count; i++) {
		struct rlog_shm_slot *s = &r->slots[i];
		uint32_t expect = RLOG_SLOT_FREE;
		if (load_relaxed(&s->state) != RLOG_SLOT_FREE ||
		    !atomic_compare_exchange_strong(&s->state, &expect, RLOG_SLOT_ACTIVE))
			continue;
		rlog__tsan_acquire(s); /* the previous owner's unbind, via the daemon */
		pv->pid = pid;
		pv->tid = tid;
		s->pid = pid;
		s->tid = tid;
		for (int k = 0; k < 2; k++) {
			store_relaxed(&s->lost_events[k], 0);
			store_relaxed(&s->lost_bytes[k], 0);
		}
		store_relaxed(&s->buffers_taken, 0);
		/* busy = 1 before the decisive mask load below.  The stop
		 * sequence (mask = 0, membarrier, then per slot: state, busy)
		 * either sees this slot ACTIVE and busy, and waits, or this
		 * thread sees the mask at 0.  seq_cst, cheap here. */
		store_seq_cst(&s->busy, 1);
		/* The guard moves to the slot: it was the thread's own word,
		 * held by the caller; it stays held. */
		t->busy = &s->busy;
		store_relaxed(&pv->guard, 0);
		pv->sess = sess;
		pv->region = r;
		pv->slot = s;
		pv->slot_idx = i;
		pv->gen = gen;
		pv->desc = NULL;
		t->mask = &r->hdr->enable_mask;
		t->pos = t->end = t->base = NULL;
		t->write_off = &no_write_off;
		/* Every binding names the thread in its session (write.c). */
		pv->meta_pending |= RLOG__META_THREAD_NAME;
		if (!pv->key_set) {
			pv->key_set = true;
			pthread_setspecific(exit_key, (void *)1);
		}
		RLOG__HOOK(RLOG__HOOK_BOUND);
		return load_seq_cst(t->mask) != 0 ? 1 : 0;
	}
	return rlog__proc_count_loss(sess, 0, size);
}

void rlog__thread_unbind(struct rlog__thread *t, struct rlog__tpriv *pv)
{
	struct rlog_shm_slot *s = pv->slot;
	if (s == NULL)
		return;
	rlog__buffer_handover(t, pv);
	RLOG__HOOK(RLOG__HOOK_UNBIND);
	/* The guard moves to the thread's own word, still held; then the
	 * slot's busy = 0 before EXITED: once EXITED the daemon may free the
	 * slot and another thread claim it. */
	store_relaxed(&pv->guard, 1);
	t->busy = &pv->guard;
	t->mask = &rlog__zero_mask;
	store_release(&s->busy, 0);
	rlog__tsan_release(s);
	store_release(&s->state, RLOG_SLOT_EXITED);
	pv->slot = NULL;
	pv->sess = NULL;
	pv->region = NULL;
}

int rlog_flush_thread(void)
{
	if (atomic_load(&rlog__current) == NULL)
		return -ENOENT;
	struct rlog__thread *t = &rlog__thread;
	struct rlog__tpriv *pv = &rlog__tpriv;
	if (!rlog__slow_enter(t, pv))
		return -EBUSY; /* called from a signal handler that interrupted a write */
	if (pv->desc != NULL) {
		rlog__buffer_handover(t, pv);
		wake_daemon_if_waiting(pv->region);
	}
	rlog__slow_leave(t);
	return 0;
}

/* Ends the calling thread's recording: its buffer goes to the daemon, its
 * slot is released, and with exiting set its later writes (a handler, a
 * later TLS destructor) return 0. */
void rlog__thread_release(bool exiting)
{
	struct rlog__thread *t = &rlog__thread;
	struct rlog__tpriv *pv = &rlog__tpriv;
	sigset_t old;
	rlog__signals_block(&old);
	if (exiting)
		pv->exiting = true;
	if (t->busy != NULL) {
		/* Not inside a write (exit hooks and rlog_detach run outside
		 * one), so the guard is free: take it for the unbind. */
		store_relaxed(t->busy, 1);
		rlog__thread_unbind(t, pv);
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
	struct rlog__session *s = atomic_load(&rlog__current);
	if (s)
		rlog__proc_release(s);
}

static void fork_child(void)
{
	/* The child's only thread forgets the parent thread's slot and buffer
	 * (the parent goes on using them) and binds anew on its next write. */
	struct rlog__thread *t = &rlog__thread;
	struct rlog__tpriv *pv = &rlog__tpriv;
	sigset_t old;
	rlog__signals_block(&old);
	t->pos = t->end = t->base = NULL;
	t->write_off = &no_write_off;
	t->mask = &rlog__zero_mask;
	t->written = 0;
	/* fork() from a handler inside a write is not supported: the child
	 * must not return from that handler (see docs/DECISIONS.md). */
	store_relaxed(&pv->guard, 0);
	t->busy = &pv->guard;
	pv->slot = NULL;
	pv->desc = NULL;
	pv->sess = NULL;
	pv->region = NULL;
	store_relaxed(&pv->lost_events, 0);
	store_relaxed(&pv->lost_bytes, 0);
	pv->meta_pending = 0;
	rlog__names_fork_child();
	rlog__proc_fork_child();
	/* A new process: its own process name, thread name and schema records
	 * (a schema applies to the records of the process that wrote it), so
	 * everything registered under the parent's generation is stale. */
	atomic_fetch_add(&rlog__gen, 1);
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
