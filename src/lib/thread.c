/*
 * thread.c - a producer thread's slot and buffers.
 *
 *   thread                          region                         daemon
 *   ------                          ------                         ------
 *   bind:  CAS slot FREE->ACTIVE    slot {busy, pid, tid, lost}
 *          busy = 1, load mask
 *   take:  CAS-clear lowest bit     free bitmap ---------------->  fetch_or bit (release)
 *          fill descriptor          desc {pid,tid,seq,base,lost}
 *          state = OWNED (release)  ------------------------------> load_acquire(state)
 *   write: record, write_off (rel)  buffer bytes ----------------->  copy [read_off, write_off)
 *   full:  state = FULL (seq_cst)   ------------------------------> drains, state = FREE
 *          in use >= high water and fill_waiting == 1:
 *          exchange(fill_waiting, 0) == 1 -> futex_wake        <-  fill_waiting = 1; futex_wait
 *   exit:  handover, busy = 0, slot EXITED -------------------->  reports losses, slot FREE
 *
 * Everything here runs on the rare path: once per thread, once per buffer
 * (~1000 events at 16 KiB), or once per lost event.  Nothing here blocks.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "atomics.h"
#include "bits.h"
#include "futex.h"
#include "producer.h"

static pthread_key_t exit_key;
static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;

/* A write_off target for a thread without a buffer: never read. */
static _Thread_local _Atomic uint32_t no_write_off;

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

void rlog__buffer_handover(struct rlog__thread *t, struct rlog__tpriv *pv)
{
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
	struct rlog__region *r = pv->region;
	if (r->buffer_count - rlog__region_free_count(r) >= r->high_water)
		wake_daemon_if_waiting(r);
}

/* Takes the next free buffer after the one this thread took last (round
 * robin).  A buffer the daemon has just read still sits in the daemon's
 * core's cache; by the time the rotation comes back to it, it has aged out
 * and the producer's writes do not have to take the lines back from the
 * other core (measured in docs/PERFORMANCE.md). */
static bool try_take_word(struct rlog__region *r, uint32_t w, uint64_t mask, uint32_t *idx)
{
	uint64_t v = load_relaxed(&r->free_bits[w]);
	while ((v & mask) != 0) {
		unsigned b = rlog__ctz64(v & mask);
		/* Acquire pairs with the daemon's release fetch_or that freed
		 * the buffer after it stopped reading it. */
		if (atomic_compare_exchange_weak_explicit(&r->free_bits[w], &v,
							  v & ~(UINT64_C(1) << b),
							  memory_order_acquire, memory_order_relaxed)) {
			*idx = w * 64 + b;
			return true;
		}
	}
	return false;
}

bool rlog__buffer_take(struct rlog__thread *t, struct rlog__tpriv *pv, uint64_t now);
bool rlog__buffer_take(struct rlog__thread *t, struct rlog__tpriv *pv, uint64_t now)
{
	struct rlog__region *r = pv->region;
	uint32_t start = pv->next_buffer < r->buffer_count ? pv->next_buffer : 0;
	uint32_t w0 = start / 64, idx = 0;
	bool got = try_take_word(r, w0, ~UINT64_C(0) << (start % 64), &idx);
	for (uint32_t k = 1; !got && k <= r->free_words; k++)
		got = try_take_word(r, (w0 + k) % r->free_words, ~UINT64_C(0), &idx);
	if (!got || idx >= r->buffer_count) {
		/* The pool is exhausted (or a hostile bitmap had a bit past the
		 * pool): make sure the daemon is draining. */
		wake_daemon_if_waiting(r);
		return false;
	}
	pv->next_buffer = idx + 1;
	struct rlog_shm_desc *d = &r->desc[idx];
	rlog__tsan_acquire(d); /* the previous owner's handover, via the daemon */
	struct rlog_shm_slot *s = pv->slot;
	/* If this process dies before OWNED below, the buffer would be FREE
	 * with its bit clear for good; the daemon finds it through this mark
	 * when it reaps the dead slot (src/daemon/drain.c). */
	store_relaxed(&s->taking, idx + 1);
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
	store_release(&s->taking, 0);
	pv->desc = d;
	t->base = t->pos = rlog__region_buffer(r, idx);
	t->end = t->base + r->buffer_size;
	t->write_off = &d->write_off;
	t->last = now;
	return true;
}

/* Binds the thread to the current region: claims a slot and sets busy.
 * Returns 1 (bound, busy = 1, session enabled), 0 (no active session, or
 * paused: not bound or busy cleared by the caller), or -ENOBUFS (no slot;
 * the event was counted as an orphan loss). */
static int bind_slot(struct rlog__thread *t, struct rlog__tpriv *pv, struct rlog__region *r,
		     uint32_t gen, uint32_t size);
int rlog__thread_bind(struct rlog__thread *t, struct rlog__tpriv *pv, uint32_t size);
int rlog__thread_bind(struct rlog__thread *t, struct rlog__tpriv *pv, uint32_t size)
{
	uint32_t gen = atomic_load(&rlog__gen);
	struct rlog__region *r = atomic_load(&rlog__current);
	if (r == NULL)
		return 0;
	/* binders counts this thread in before it looks at the session: the
	 * stop sequence (mask = 0, then wait for binders == 0; all seq_cst)
	 * either sees it here, or this thread sees the mask at 0.  So a loss
	 * counted below never arrives after the daemon's final count. */
	atomic_fetch_add(&r->hdr->binders, 1);
	int ret = bind_slot(t, pv, r, gen, size);
	rlog__unpark_nested(pv);
	atomic_fetch_sub(&r->hdr->binders, 1);
	return ret;
}

static int bind_slot(struct rlog__thread *t, struct rlog__tpriv *pv, struct rlog__region *r,
		     uint32_t gen, uint32_t size)
{
	if (load_seq_cst(&r->hdr->state) != RLOG_STATE_ACTIVE ||
	    load_seq_cst(&r->hdr->enable_mask) == 0)
		return 0;
	/* Known before the CAS: the slot carries its owner's pid as soon as
	 * possible (the daemon reads pid 0 as "being claimed"). */
	uint32_t pid = (uint32_t)getpid(), tid = (uint32_t)syscall(SYS_gettid);
	uint32_t n = r->slot_count;
	for (uint32_t i = 0; i < n; i++) {
		struct rlog_shm_slot *s = &r->slots[i];
		uint32_t expect = RLOG_SLOT_FREE;
		if (load_relaxed(&s->state) != RLOG_SLOT_FREE ||
		    !atomic_compare_exchange_strong(&s->state, &expect, RLOG_SLOT_ACTIVE))
			continue;
		rlog__tsan_acquire(s); /* the previous owner's unbind, via the daemon */
		pv->pid = pid;
		pv->tid = tid;
		s->pid = pv->pid;
		s->tid = pv->tid;
		for (int k = 0; k < 2; k++) {
			store_relaxed(&s->lost_events[k], 0);
			store_relaxed(&s->lost_bytes[k], 0);
		}
		store_relaxed(&s->buffers_taken, 0);
		/* busy = 1 before the decisive mask load: the daemon's stop
		 * sequence (mask = 0, membarrier, wait for busy == 0) relies on
		 * it; seq_cst orders the two here, where it is cheap. */
		store_seq_cst(&s->busy, 1);
		pv->region = r;
		pv->slot = s;
		pv->slot_idx = i;
		pv->gen = gen;
		pv->desc = NULL;
		t->busy = &s->busy;
		t->mask = &r->hdr->enable_mask;
		t->pos = t->end = t->base = NULL;
		t->write_off = &no_write_off;
		/* Every binding names the thread in its session (write.c). */
		pv->meta_pending |= RLOG__META_THREAD_NAME;
		if (!pv->key_set) {
			pv->key_set = true;
			pthread_setspecific(exit_key, (void *)1);
		}
		return load_seq_cst(t->mask) != 0 ? 1 : 0;
	}
	fetch_add_relaxed(&r->hdr->orphan_lost_events, 1);
	fetch_add_relaxed(&r->hdr->orphan_lost_bytes, size);
	pv->lost_events++;
	pv->lost_bytes += size;
	return -ENOBUFS;
}

void rlog__thread_unbind(void)
{
	struct rlog__thread *t = &rlog__thread;
	struct rlog__tpriv *pv = &rlog__tpriv;
	if (pv->slot == NULL)
		return;
	/* Thread exit, atexit and detach run this outside any write, with busy
	 * at 0: a signal handler's write in the middle would find the slot or
	 * the buffer half released.  Block signals for these few stores
	 * (pthread_sigmask is async-signal-safe; this is the rare path). */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rlog__buffer_handover(t, pv);
	/* busy = 0 before EXITED: once EXITED the daemon may free the slot
	 * and another thread claim it. */
	store_release(&pv->slot->busy, 0);
	rlog__tsan_release(pv->slot);
	store_release(&pv->slot->state, RLOG_SLOT_EXITED);
	pv->slot = NULL;
	pv->region = NULL;
	t->busy = NULL;
	t->mask = NULL;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int rlog_flush_thread(void)
{
	if (atomic_load(&rlog__current) == NULL)
		return -ENOENT;
	struct rlog__thread *t = &rlog__thread;
	struct rlog__tpriv *pv = &rlog__tpriv;
	if (t->busy == NULL || pv->desc == NULL)
		return 0;
	if (pv->in_slow || load_relaxed(t->busy))
		return -EBUSY; /* called from a signal handler that interrupted a write */
	/* busy keeps a signal handler's write out of the buffer meanwhile. */
	store_relaxed(t->busy, 1);
	atomic_signal_fence(memory_order_seq_cst);
	rlog__buffer_handover(t, pv);
	wake_daemon_if_waiting(pv->region);
	store_release(t->busy, 0);
	return 0;
}

static void thread_exit(void *arg)
{
	(void)arg;
	rlog__thread_unbind();
	rlog__tpriv.exiting = true;
}

static void process_exit(void)
{
	/* exit() runs no thread-exit destructor for the calling thread. */
	thread_exit(NULL);
}

static void fork_child(void)
{
	/* The child's only thread forgets the parent thread's slot and buffer
	 * (the parent goes on using them) and binds anew on its next write. */
	struct rlog__thread *t = &rlog__thread;
	struct rlog__tpriv *pv = &rlog__tpriv;
	t->pos = t->end = t->base = NULL;
	t->write_off = &no_write_off;
	t->busy = NULL;
	t->mask = NULL;
	t->written = 0;
	pv->slot = NULL;
	pv->desc = NULL;
	pv->region = NULL;
	pv->lost_events = pv->lost_bytes = 0;
	pv->meta_pending = 0;
	rlog__names_fork_child();
	/* A new process: its own process name, thread name and schema records
	 * (a schema applies to the records of the process that wrote it), so
	 * everything registered under the parent's generation is stale. */
	atomic_fetch_add(&rlog__gen, 1);
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
