/*
 * proc.c - this process's entry in a session's process table.
 *
 * A thread that has a slot counts its lost events in the slot, under the
 * slot's busy flag, which the stop sequence waits on.  A thread without a
 * slot (none was free, or its write was interrupted while it was binding)
 * counts them in its process's entry, under the entry's gate:
 *
 *   thread (no slot)                            daemon, stop sequence
 *   ----------------                            ---------------------
 *   fetch_add(gate, 1)          seq_cst         enable_mask = 0      seq_cst
 *   entry ACTIVE and ours? mask != 0? seq_cst   membarrier
 *     yes: lost_events[c]++, lost_bytes[c] +=   per entry: wait until gate == 0
 *          return -ENOBUFS / -EBUSY                (seq_cst), or its process is dead
 *     no:  return 0 (not counted, not emitted)  read the counters: final
 *   fetch_sub(gate, 1)          seq_cst
 *
 * Either the daemon sees the gate raised and waits, or the thread sees the
 * mask at 0: no loss is counted after the final statistics.  A process
 * that dies with its gate raised cannot stall the stop: the daemon knows
 * the entry's pid and start time and skips dead processes (docs/FORMAT.md,
 * "Stop"; a single global counter, as before, could not tell whose it was).
 *
 * Entries are claimed by CAS FREE -> ACTIVE: by rlog_attach, or, in a fork
 * child (which forgets its parent's), by its first write; a process that
 * attaches again takes its own EXITED entry back (CAS EXITED -> ACTIVE).
 * Released as EXITED at detach and at exit; the daemon claims an entry it
 * frees (CAS to REAPING), reports its losses and frees it once its gate is
 * 0.  Producers never store FREE.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <unistd.h>

#include "atomics.h"
#include "procstat.h"
#include "producer.h"

struct rlog_shm_proc *rlog__proc_get(struct rlog__session *s)
{
	struct rlog__region *r = &s->region;
	/* Acquire pairs with the claimer's CAS below: its pid is stored. */
	uint32_t cur = load_acquire(&s->proc);
	if (cur != 0)
		return &r->procs[cur - 1];
	uint32_t pid = (uint32_t)getpid();
	char state;
	uint64_t start = 0;
	if (rlog__procstat_read(0, &state, &start) < 0)
		start = 0;
	/* This process's own entry, released at a detach and not yet freed
	 * by the daemon: take it back.  A process that attaches and detaches
	 * in a loop then holds one entry, not one per attach until the
	 * daemon's next pass.  CAS EXITED -> ACTIVE fails once the daemon has
	 * begun freeing it (REAPING). */
	for (uint32_t i = 0; i < r->slot_count; i++) {
		struct rlog_shm_proc *p = &r->procs[i];
		uint32_t expect = RLOG_PROC_EXITED;
		if (load_relaxed(&p->state) != RLOG_PROC_EXITED || load_acquire(&p->pid) != pid ||
		    load_relaxed(&p->start_time) != start ||
		    !atomic_compare_exchange_strong(&p->state, &expect, RLOG_PROC_ACTIVE))
			continue;
		uint32_t none = 0;
		if (atomic_compare_exchange_strong(&s->proc, &none, i + 1))
			return p;
		store_release(&p->state, RLOG_PROC_EXITED);
		return &r->procs[none - 1];
	}
	for (uint32_t i = 0; i < r->slot_count; i++) {
		struct rlog_shm_proc *p = &r->procs[i];
		uint32_t expect = RLOG_PROC_FREE, unstamped = 0;
		/* Stamped with this process's pid before it becomes ACTIVE, as
		 * a slot is (src/lib/thread.c): a process killed before its pid
		 * store leaves an entry the daemon can tell is a dead one's. */
		if (load_relaxed(&p->state) != RLOG_PROC_FREE || load_relaxed(&p->claimer) != 0 ||
		    !atomic_compare_exchange_strong(&p->claimer, &unstamped, pid))
			continue;
		if (!atomic_compare_exchange_strong(&p->state, &expect, RLOG_PROC_ACTIVE)) {
			store_release(&p->claimer, 0); /* not FREE: a hostile region */
			continue;
		}
		RLOG__HOOK(RLOG__HOOK_PROC_CLAIMED);
		store_relaxed(&p->start_time, start);
		/* The daemon reads pid 0 as "being claimed" (never dead). */
		store_release(&p->pid, pid);
		/* Another thread of this process may have claimed one meanwhile
		 * (a fork child's threads, all at their first write): one wins. */
		uint32_t none = 0;
		if (atomic_compare_exchange_strong(&s->proc, &none, i + 1)) {
			fetch_add_relaxed(&r->hdr->procs_attached, 1);
			return p;
		}
		/* Lost: hand ours back (nothing was counted in it). */
		store_release(&p->state, RLOG_PROC_EXITED);
		return &r->procs[none - 1];
	}
	fetch_add_relaxed(&r->hdr->procs_refused, 1);
	return NULL;
}

void rlog__proc_release(struct rlog__session *s)
{
	uint32_t cur = atomic_exchange(&s->proc, 0);
	if (cur != 0)
		store_seq_cst(&s->region.procs[cur - 1].state, RLOG_PROC_EXITED);
}

int rlog__proc_count_loss(struct rlog__session *s, int c, uint32_t size)
{
	struct rlog_shm_proc *p = rlog__proc_get(s);
	if (p == NULL)
		return 0; /* the process has no entry: as if it had no session */
	struct rlog_shm_header *h = s->region.hdr;
	int ret = 0;
	atomic_fetch_add(&p->gate, 1);
	RLOG__HOOK(RLOG__HOOK_GATE);
	/* seq_cst: the daemon stores mask 0 before it reads the gate. */
	if (load_seq_cst(&p->state) == RLOG_PROC_ACTIVE &&
	    load_seq_cst(&p->pid) == (uint32_t)getpid() &&
	    load_seq_cst(&h->state) == RLOG_STATE_ACTIVE && load_seq_cst(&h->enable_mask) != 0) {
		fetch_add_relaxed(&p->lost_events[c], 1);
		fetch_add_relaxed(&p->lost_bytes[c], size);
		ret = c == 0 ? -ENOBUFS : -EBUSY;
	}
	/* seq_cst (so release): the counts are visible once the gate is 0. */
	atomic_fetch_sub(&p->gate, 1);
	if (ret != 0) {
		struct rlog__tpriv *pv = &rlog__tpriv;
		fetch_add_relaxed(&pv->lost_events, 1);
		fetch_add_relaxed(&pv->lost_bytes, size);
	}
	return ret;
}
