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
 * (docs/FORMAT.md, "Dead processes").
 *
 * A slot or entry ACTIVE without its pid yet is its claimer's (the pid
 * stamped in `claimer` before the claim), dead when the claimer is.  A
 * pid no process can have (0 where one is required, above INT32_MAX or at
 * or above the kernel's pid_max) is region damage: counted at once as a
 * corrupt buffer (a CORRUPT DATA_LOSS record, last_error), and its slot
 * or entry treated as dead, never waited for.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomics.h"
#include "drain.h"
#include "pool.h"
#include "procstat.h"

static const uint32_t proc_cause[2] = { RLOG_LOSS_NO_SLOT, RLOG_LOSS_NESTED };
static const uint32_t slot_cause[2] = { RLOG_LOSS_NO_BUFFER, RLOG_LOSS_NESTED };

int rlog__reaping_init(struct rlog__reaping *p, const struct rlog__region *r)
{
	memset(p, 0, sizeof *p);
	p->slot_dead = calloc(r->slot_count, 1);
	p->procs = calloc(r->slot_count, sizeof *p->procs);
	p->verdicts = calloc(r->slot_count, sizeof *p->verdicts);
	p->slots_to_free = malloc(r->slot_count * sizeof *p->slots_to_free);
	p->procs_to_free = malloc(r->slot_count * sizeof *p->procs_to_free);
	if (!p->slot_dead || !p->procs || !p->verdicts || !p->slots_to_free || !p->procs_to_free)
		return -ENOMEM;
	return 0;
}

void rlog__reaping_free(struct rlog__reaping *p)
{
	free(p->slot_dead);
	free(p->procs);
	free(p->verdicts);
	free(p->slots_to_free);
	free(p->procs_to_free);
	memset(p, 0, sizeof *p);
}

bool rlog__procs_slot_dead(const struct rlog__drain *d, uint32_t i)
{
	return d->reaping.slot_dead[i] != 0;
}

bool rlog__procs_entry_dead(const struct rlog__drain *d, uint32_t i)
{
	return d->reaping.procs[i].dead;
}

void rlog__procs_slot_damaged(struct rlog__drain *d, uint32_t i, uint32_t pid, uint32_t tid)
{
	d->reaping.slot_dead[i] = 1;
	rlog__procs_damaged_pid(d, "thread slot", i, pid, tid);
}

void rlog__procs_entry_damaged(struct rlog__drain *d, uint32_t i, uint32_t pid)
{
	d->reaping.procs[i].dead = true;
	rlog__procs_damaged_pid(d, "process entry", i, pid, 0);
}

static int by_pid(const void *a, const void *b)
{
	uint32_t x = ((const struct pid_verdict *)a)->pid, y = ((const struct pid_verdict *)b)->pid;
	return x < y ? -1 : x > y;
}

void rlog__procs_damaged_pid(struct rlog__drain *d, const char *what, uint32_t i, uint32_t pid,
			     uint32_t tid)
{
	struct rlog_shm_header *h = d->r->hdr;
	d->corrupt_buffers++;
	rlog__drain_loss_block(d, pid, tid, rlog__drain_now(d), 0, 0, RLOG_LOSS_CORRUPT);
	if (h->last_error[0] == '\0')
		snprintf(h->last_error, sizeof h->last_error,
			 "the region is damaged: %s %u names pid %u, which no process can have "
			 "(pid_max %u); counted in corrupt_buffers, not waited for",
			 what, i, pid, rlog__pid_max());
}

/* Whether the process that stamped a claim (src/lib/thread.c,
 * src/lib/proc.c) is dead: as its entry says, or as /proc says without
 * one. */
static bool claimer_dead(uint32_t claimer, const struct pid_verdict *v, size_t n)
{
	struct pid_verdict key = { claimer, false };
	const struct pid_verdict *hit = bsearch(&key, v, n, sizeof *v, by_pid);
	return hit ? hit->dead : rlog__process_dead((pid_t)claimer, 0);
}

/*
 * A slot or process entry whose state word reads free_state: a stamp on it
 * is a claimer's that has not made it ACTIVE yet, or one that died before
 * it could, and nobody else may claim it until the stamp is gone.  Only
 * the daemon clears a stamp it did not make, and only a dead process's:
 * found dead before the state is read FREE again, it cannot have made it
 * ACTIVE since.  Returns true if the state was free_state.
 */
static bool clear_dead_stamp(_Atomic uint32_t *state, _Atomic uint32_t *claimer,
			     uint32_t free_state, uint32_t pid_max, const struct pid_verdict *v,
			     size_t n)
{
	if (load_seq_cst(state) != free_state)
		return false;
	uint32_t c = load_acquire(claimer);
	if (c != 0 && (!rlog__pid_possible(c, pid_max) || claimer_dead(c, v, n)) &&
	    load_seq_cst(state) == free_state)
		atomic_compare_exchange_strong(claimer, &c, 0);
	return true;
}

/*
 * Slot or entry what i, ACTIVE with pid 0: being claimed by the process
 * that stamped it before it made it ACTIVE (acquire: the stamp came first),
 * which stores its pid right after.  Dead if that process is (killed
 * between its CAS and its pid store); one ACTIVE without a stamp was not
 * claimed by the protocol: damage.
 */
static bool claim_dead(struct rlog__drain *d, const char *what, uint32_t i,
		       _Atomic uint32_t *claimer, uint32_t tid, uint32_t pid_max,
		       const struct pid_verdict *v, size_t n)
{
	uint32_t c = load_acquire(claimer);
	if (rlog__pid_possible(c, pid_max))
		return claimer_dead(c, v, n);
	rlog__procs_damaged_pid(d, what, i, c, tid);
	return true;
}

void rlog__procs_check_dead(struct rlog__drain *d)
{
	struct rlog__region *r = d->r;
	struct pid_verdict *v = d->reaping.verdicts;
	uint32_t pid_max = rlog__pid_max();
	size_t n = 0;
	for (uint32_t i = 0; i < r->slot_count; i++) {
		struct rlog_shm_proc *p = &r->procs[i];
		uint32_t st = load_acquire(&p->state);
		if (st != RLOG_PROC_ACTIVE && st != RLOG_PROC_EXITED)
			continue;
		uint32_t pid = load_acquire(&p->pid);
		if (pid == 0)
			continue; /* being claimed: below */
		if (!d->reaping.procs[i].dead && !rlog__pid_possible(pid, pid_max)) {
			/* No process has it: damage, dead at once (never
			 * kill(0, 0), never a wait on it at stop). */
			d->reaping.procs[i].dead = true;
			rlog__procs_damaged_pid(d, "process entry", i, pid, 0);
		}
		if (!d->reaping.procs[i].dead)
			d->reaping.procs[i].dead = rlog__process_dead((pid_t)pid, load_relaxed(&p->start_time));
		v[n].pid = pid;
		v[n].dead = d->reaping.procs[i].dead;
		n++;
	}
	qsort(v, n, sizeof *v, by_pid);
	for (uint32_t i = 0; i < r->slot_count; i++) {
		struct rlog_shm_proc *p = &r->procs[i];
		if (clear_dead_stamp(&p->state, &p->claimer, RLOG_PROC_FREE, pid_max, v, n) ||
		    d->reaping.procs[i].dead || load_acquire(&p->state) != RLOG_PROC_ACTIVE ||
		    load_acquire(&p->pid) != 0)
			continue;
		d->reaping.procs[i].dead = claim_dead(d, "process entry", i, &p->claimer, 0, pid_max, v, n);
	}
	for (uint32_t i = 0; i < r->slot_count; i++) {
		struct rlog_shm_slot *s = &r->slots[i];
		if (clear_dead_stamp(&s->state, &s->claimer, RLOG_SLOT_FREE, pid_max, v, n) ||
		    d->reaping.slot_dead[i] || load_acquire(&s->state) != RLOG_SLOT_ACTIVE)
			continue;
		uint32_t pid = s->pid;
		if (pid == 0) {
			d->reaping.slot_dead[i] = claim_dead(d, "thread slot", i, &s->claimer, s->tid, pid_max, v, n);
			continue;
		}
		if (!rlog__pid_possible(pid, pid_max)) {
			d->reaping.slot_dead[i] = 1;
			rlog__procs_damaged_pid(d, "thread slot", i, pid, s->tid);
			continue;
		}
		struct pid_verdict key = { pid, false };
		const struct pid_verdict *hit = bsearch(&key, v, n, sizeof *v, by_pid);
		d->reaping.slot_dead[i] = hit ? hit->dead : rlog__process_dead((pid_t)pid, 0);
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
				    &d->reaping.procs[i].reported, proc_cause);
}

void rlog__procs_reap(struct rlog__drain *d)
{
	struct rlog__region *r = d->r;
	for (uint32_t i = 0; i < r->slot_count; i++) {
		struct rlog_shm_proc *p = &r->procs[i];
		uint32_t st = load_seq_cst(&p->state);
		bool dead = d->reaping.procs[i].dead;
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
		memset(&d->reaping.procs[i], 0, sizeof d->reaping.procs[i]);
		d->reaping.procs[i].dead = dead;
		/* Freed once the loss records are written (commit): until then
		 * it stays REAPING, which nobody takes. */
		d->reaping.procs_to_free[d->reaping.nprocs_to_free++] = i;
	}
}

static void free_procs(struct rlog__drain *d)
{
	struct rlog__region *r = d->r;
	for (uint32_t k = 0; k < d->reaping.nprocs_to_free; k++) {
		uint32_t i = d->reaping.procs_to_free[k];
		struct rlog_shm_proc *p = &r->procs[i];
		bool dead = d->reaping.procs[i].dead;
		d->reaping.procs[i].dead = false;
		for (int c = 0; c < 2; c++) {
			store_relaxed(&p->lost_events[c], 0);
			store_relaxed(&p->lost_bytes[c], 0);
		}
		store_relaxed(&p->start_time, 0);
		store_relaxed(&p->pid, 0);
		store_relaxed(&p->claimer, 0);
		if (dead)
			store_relaxed(&p->gate, 0); /* a dead process's gate is void */
		/* Release: the next claimer (CAS FREE -> ACTIVE) sees the
		 * entry reset. */
		store_release(&p->state, RLOG_PROC_FREE);
	}
	d->reaping.nprocs_to_free = 0;
}

void rlog__procs_final_losses(struct rlog__drain *d)
{
	struct rlog__region *r = d->r;
	for (uint32_t i = 0; i < r->slot_count; i++) {
		uint32_t st = load_acquire(&r->procs[i].state);
		if (st == RLOG_PROC_ACTIVE || st == RLOG_PROC_EXITED)
			report(d, i);
	}
}

void rlog__procs_unreported_losses(struct rlog__drain *d, uint64_t *events, uint64_t *bytes)
{
	struct rlog__region *r = d->r;
	for (uint32_t i = 0; i < r->slot_count; i++) {
		struct rlog_shm_proc *p = &r->procs[i];
		uint32_t st = load_relaxed(&p->state);
		if (st == RLOG_PROC_ACTIVE || st == RLOG_PROC_EXITED)
			rlog__drain_add_increase(p->lost_events, p->lost_bytes, &d->reaping.procs[i].reported, events,
						 bytes);
	}
}

/*
 * Slot i's process died while taking a buffer: its taking mark names the
 * buffer (index + 1), stored before the CAS that cleared the free bit
 * (src/lib/thread.c).  The CAS may have succeeded (the buffer is claimed
 * by the dead: FREE state, bit clear, leaked unless given back), or failed
 * (another thread claimed it, or nobody did), or the buffer may have gone
 * OWNED since (the drain handled it).  Give it back only if it is FREE with
 * its bit clear and no live slot is taking it, and it is still FREE after
 * that scan: a live taker's mark is stored before its CAS and cleared only
 * after its OWNED store, so a taker that won the bit is seen either by its
 * mark or by the second look at the state (docs/FORMAT.md, "Dead processes",
 * and the suspected two-owner case).  All seq_cst, pairing with the taker's.
 */
static void reclaim_taking(struct rlog__drain *d, uint32_t i)
{
	struct rlog__region *r = d->r;
	uint32_t taking = load_seq_cst(&r->slots[i].taking);
	if (taking == 0 || taking > r->buffer_count)
		return;
	uint32_t b = taking - 1;
	uint64_t bit = UINT64_C(1) << (b % 64);
	/* A producer growing the pool marks the buffer past it before its CAS
	 * on number_of_buffers (thread.c): one still outside the pool was
	 * not added, and gets no free bit. */
	rlog__pool_sync(r, &d->pool);
	if (b >= d->pool)
		return;
	if (load_seq_cst(&r->desc[b].state) != RLOG_BUF_FREE ||
	    (load_seq_cst(&r->free_bits[b / 64]) & bit) != 0)
		return;
	for (uint32_t j = 0; j < r->slot_count; j++)
		if (j != i && !d->reaping.slot_dead[j] && load_seq_cst(&r->slots[j].taking) == taking)
			return;
	if (load_seq_cst(&r->desc[b].state) != RLOG_BUF_FREE)
		return;
	atomic_fetch_or_explicit(&r->free_bits[b / 64], bit, memory_order_release);
}

void rlog__procs_reap_slot(struct rlog__drain *d, uint32_t i, const bool *pending)
{
	struct rlog__region *r = d->r;
	struct rlog_shm_slot *sl = &r->slots[i];
	uint32_t st = load_acquire(&sl->state);
	struct rlog__slot_view *s = &d->slots[i];
	if (!(st == RLOG_SLOT_EXITED || (st == RLOG_SLOT_ACTIVE && d->reaping.slot_dead[i])) || pending[i] ||
	    s->reaped)
		return;
	uint64_t ev[2], by[2];
	for (int c = 0; c < 2; c++) {
		ev[c] = load_acquire(&sl->lost_events[c]);
		by[c] = load_acquire(&sl->lost_bytes[c]);
	}
	uint64_t t = s->last_time ? s->last_time : rlog__drain_now(d);
	rlog__drain_report_increase(d, sl->pid, sl->tid, t, ev, by, &s->reported, slot_cause);
	rlog__overwrite_slot_gone(d, i, s->last_time ? s->last_time : d->start_ticks);
	rlog__snap_slot_gone(d, i);
	memset(s, 0, sizeof *s);
	/* Freed once the loss records are written (commit). */
	s->reaped = true;
	d->reaping.slots_to_free[d->reaping.nslots_to_free++] = i;
}

/* Frees reaped slot i: nothing of its owner stays. */
static void free_slot(struct rlog__drain *d, uint32_t i)
{
	struct rlog__region *r = d->r;
	struct rlog_shm_slot *sl = &r->slots[i];
	if (d->reaping.slot_dead[i])
		reclaim_taking(d, i);
	store_relaxed(&sl->taking, 0);
	d->reaping.slot_dead[i] = 0;
	d->slots[i].reaped = false;
	/* A FREE slot holds nothing of its last owner: its next owner is
	 * ACTIVE (CAS) a moment before it stores its pid and resets the
	 * counters, and in that moment the daemon must see pid 0 (claiming,
	 * not dead) and no losses, not the old owner's. */
	sl->pid = 0;
	sl->tid = 0;
	for (int c = 0; c < 2; c++) {
		store_relaxed(&sl->lost_events[c], 0);
		store_relaxed(&sl->lost_bytes[c], 0);
	}
	store_relaxed(&sl->buffers_taken, 0);
	store_relaxed(&sl->ow_events, 0);
	store_relaxed(&sl->ow_bytes, 0);
	store_relaxed(&sl->ow_buffers, 0);
	store_relaxed(&sl->ow_last_time, 0);
	store_relaxed(&sl->claimer, 0);
	/* The producer that claims it next CASes FREE -> ACTIVE (release:
	 * the resets above come first). */
	store_release(&sl->state, RLOG_SLOT_FREE);
}

void rlog__procs_free_reaped(struct rlog__drain *d)
{
	for (uint32_t k = 0; k < d->reaping.nslots_to_free; k++)
		free_slot(d, d->reaping.slots_to_free[k]);
	d->reaping.nslots_to_free = 0;
	free_procs(d);
}

void rlog__procs_resume_entry(struct rlog__drain *d, uint32_t i, const uint64_t events[2],
			      const uint64_t bytes[2])
{
	for (int c = 0; c < 2; c++) {
		d->reaping.procs[i].reported.events[c] = events[c];
		d->reaping.procs[i].reported.bytes[c] = bytes[c];
	}
}
