/*
 * procs.c - the daemon's view of the attached processes: which are dead,
 * the losses counted in their process entries, and freeing the entries.
 *
 * A process entry (src/common/region_abi.h, struct rlog_shm_proc) holds the
 * losses of the process's threads that had no slot, counted under the
 * entry's gate (src/lib/proc.c).  The daemon reports them as DATA_LOSS
 * records (the entry's pid, tid 0; causes NO_SLOT and NESTED) when it
 * frees the entry, and at stop.  It frees an entry that is EXITED, or
 * whose process is dead, once its gate is 0 (a dead process's gate is
 * void: nobody can lower it).
 *
 * Liveness: once a second, every entry's process is checked through
 * /proc/PID/stat (src/common/procstat.c): gone, a zombie, or a reused pid
 * (another start time) is dead.  A slot is dead when its pid's entry is;
 * a slot whose pid has no entry (hostile, or a process that was refused
 * one) is checked by itself.  kill(pid, 0) alone sees zombies as alive
 * (issue 12, item 9).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "atomics.h"
#include "drain.h"
#include "procstat.h"

static const uint32_t proc_cause[2] = { RLOG_LOSS_NO_SLOT, RLOG_LOSS_NESTED };

static int by_pid(const void *a, const void *b)
{
	uint32_t x = ((const struct pid_verdict *)a)->pid, y = ((const struct pid_verdict *)b)->pid;
	return x < y ? -1 : x > y;
}

void rlog__drain_check_dead(struct rlog__drain *d)
{
	struct rlog__region *r = d->r;
	struct pid_verdict *v = d->verdicts;
	size_t n = 0;
	for (uint32_t i = 0; i < r->slot_count; i++) {
		struct rlog_shm_proc *p = &r->procs[i];
		uint32_t st = load_acquire(&p->state);
		if (st != RLOG_PROC_ACTIVE && st != RLOG_PROC_EXITED)
			continue;
		uint32_t pid = load_acquire(&p->pid);
		if (pid == 0 || pid > INT32_MAX)
			continue; /* being claimed, or nonsense */
		if (!d->procs[i].dead)
			d->procs[i].dead = rlog__process_dead((pid_t)pid, load_relaxed(&p->start_time));
		v[n].pid = pid;
		v[n].dead = d->procs[i].dead;
		n++;
	}
	qsort(v, n, sizeof *v, by_pid);
	bool any_live = false;
	for (size_t k = 0; k < n; k++)
		any_live |= !v[k].dead;
	for (uint32_t i = 0; i < r->slot_count; i++) {
		bool was_unclaimed = d->unclaimed[i];
		d->unclaimed[i] = 0;
		if (load_acquire(&r->slots[i].state) != RLOG_SLOT_ACTIVE || d->dead[i])
			continue;
		uint32_t pid = r->slots[i].pid;
		if (pid == 0) {
			/* Being claimed: its claimer stores its pid right after
			 * the CAS.  Still 0 a check later, with no live process
			 * entry (the claimer had one: rlog__proc_get comes
			 * first), the claimer died in between: the slot is dead. */
			d->unclaimed[i] = 1;
			if (was_unclaimed && !any_live)
				d->dead[i] = 1;
			continue;
		}
		if (pid > INT32_MAX)
			continue; /* nonsense: never kill(0, 0) */
		struct pid_verdict key = { pid, false };
		const struct pid_verdict *hit = bsearch(&key, v, n, sizeof *v, by_pid);
		d->dead[i] = hit ? hit->dead : rlog__process_dead((pid_t)pid, 0);
	}
}

/* Reports what entry i counted and the daemon has not reported yet. */
static void report(struct rlog__drain *d, uint32_t i)
{
	struct rlog_shm_proc *p = &d->r->procs[i];
	uint64_t ev[2], by[2];
	for (int c = 0; c < 2; c++) {
		ev[c] = load_acquire(&p->lost_events[c]);
		by[c] = load_acquire(&p->lost_bytes[c]);
	}
	rlog__drain_report_increase(d, load_relaxed(&p->pid), 0, rlog__drain_now(d), ev, by,
				    &d->procs[i].rep, proc_cause);
}

void rlog__drain_reap_procs(struct rlog__drain *d)
{
	struct rlog__region *r = d->r;
	for (uint32_t i = 0; i < r->slot_count; i++) {
		struct rlog_shm_proc *p = &r->procs[i];
		uint32_t st = load_seq_cst(&p->state);
		bool dead = d->procs[i].dead;
		if (!(st == RLOG_PROC_EXITED || (st == RLOG_PROC_ACTIVE && dead)))
			continue;
		/* seq_cst pairs with the producer's fetch_sub(gate) after its
		 * counts (src/lib/proc.c): 0 means every count is visible, and
		 * a producer that raises the gate from now on sees EXITED (or
		 * FREE) and counts nothing. */
		if (!dead && load_seq_cst(&p->gate) != 0)
			continue;
		/* Ours now: a process that attaches again can no longer take
		 * its EXITED entry back (src/lib/proc.c), nor count in it. */
		if (!atomic_compare_exchange_strong(&p->state, &st, RLOG_PROC_REAPING))
			continue;
		report(d, i);
		memset(&d->procs[i], 0, sizeof d->procs[i]);
		d->procs[i].dead = dead;
		/* Freed once the loss records are written (commit): until then
		 * it stays REAPING, which nobody takes. */
		d->reap_procs[d->nreap_procs++] = i;
	}
}

void rlog__drain_free_procs(struct rlog__drain *d)
{
	struct rlog__region *r = d->r;
	for (uint32_t k = 0; k < d->nreap_procs; k++) {
		uint32_t i = d->reap_procs[k];
		struct rlog_shm_proc *p = &r->procs[i];
		bool dead = d->procs[i].dead;
		d->procs[i].dead = false;
		for (int c = 0; c < 2; c++) {
			store_relaxed(&p->lost_events[c], 0);
			store_relaxed(&p->lost_bytes[c], 0);
		}
		store_relaxed(&p->start_time, 0);
		store_relaxed(&p->pid, 0);
		if (dead)
			store_relaxed(&p->gate, 0); /* a dead process's gate is void */
		/* Release: the next claimer (CAS FREE -> ACTIVE) sees the
		 * entry reset. */
		store_release(&p->state, RLOG_PROC_FREE);
	}
	d->nreap_procs = 0;
}

void rlog__drain_final_proc_losses(struct rlog__drain *d)
{
	struct rlog__region *r = d->r;
	for (uint32_t i = 0; i < r->slot_count; i++) {
		uint32_t st = load_acquire(&r->procs[i].state);
		if (st == RLOG_PROC_ACTIVE || st == RLOG_PROC_EXITED)
			report(d, i);
	}
}

void rlog__drain_unreported_proc_losses(struct rlog__drain *d, uint64_t *events, uint64_t *bytes)
{
	struct rlog__region *r = d->r;
	for (uint32_t i = 0; i < r->slot_count; i++) {
		struct rlog_shm_proc *p = &r->procs[i];
		uint32_t st = load_relaxed(&p->state);
		if (st == RLOG_PROC_ACTIVE || st == RLOG_PROC_EXITED)
			rlog__drain_add_increase(p->lost_events, p->lost_bytes, &d->procs[i].rep, events,
						 bytes);
	}
}
