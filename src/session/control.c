/*
 * control.c - changing a running session: `ringlog flush` (ETW's
 * FlushTrace) and `ringlog update` (ETW's ControlTrace with
 * EVENT_TRACE_CONTROL_UPDATE).
 *
 *   flush                                      daemon (src/daemon/daemon.c)
 *   -----                                      ------
 *   ticket = fetch_add(flush_requested, 1) + 1
 *   wake the daemon (fill event) ------------> load_acquire(flush_requested) != served:
 *                                                drain every buffer, partial ones too;
 *                                                write the blocks to the file
 *   futex_wait(flush_done) until it <--------- store_release(flush_done, request);
 *   reaches ticket (unsigned difference)         futex_wake(flush_done)
 *
 * update writes the live words the producers and the daemon read:
 * enable_mask (every producer loads it on every write: a change is seen by
 * the next write), flush_timer_ms, max_buffers, counter_mask and
 * counter_period_ms (the daemon, every pass),
 * and the names --enable asked for that no process has declared yet
 * (enable_names, a seqlock; the daemon sets their bits when they are
 * declared).
 */
#define _GNU_SOURCE
#include "session.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "atomics.h"
#include "clock.h"
#include "futex.h"
#include "procstat.h"
#include "sysperm.h"

/* How long flush waits for the daemon. */
#define FLUSH_WAIT_NS UINT64_C(30000000000)

static int open_region(const char *name, struct rlog__region *r)
{
	if (rlog__name_validate(name) < 0)
		return -EINVAL;
	return rlog__region_open(name, r);
}

static bool daemon_gone(const struct rlog_shm_header *h)
{
	pid_t d = (pid_t)h->daemon_pid;
	return d <= 0 || rlog__process_dead(d, 0); /* a zombie is dead too */
}

int rlog__session_flush(const char *name)
{
	struct rlog__region r;
	int err = open_region(name, &r);
	if (err < 0)
		return err;
	struct rlog_shm_header *h = r.hdr;
	/* seq_cst (acq_rel would do): the daemon's acquire load of
	 * flush_requested sees every write that returned before this. */
	uint32_t ticket = atomic_fetch_add(&h->flush_requested, 1) + 1;
	atomic_store(&h->fill_waiting, 0);
	rlog__futex_wake(&h->fill_waiting, 1);
	uint64_t deadline = rlog__monotonic_ns() + FLUSH_WAIT_NS;
	err = 0;
	for (;;) {
		/* Pairs with the daemon's store_release(flush_done). */
		uint32_t done = load_acquire(&h->flush_done);
		if ((int32_t)(done - ticket) >= 0)
			break;
		uint32_t st = load_acquire(&h->state);
		if (st == RLOG_STATE_STOPPING || st == RLOG_STATE_STOPPED)
			break; /* stopping drains everything */
		if (daemon_gone(h)) {
			err = -ESRCH;
			break;
		}
		if (rlog__monotonic_ns() > deadline) {
			err = -ETIMEDOUT;
			break;
		}
		rlog__futex_wait(&h->flush_done, done, 100);
	}
	rlog__region_close(&r);
	return err;
}

/* Replaces enable_names (the seqlock writer; writers take turns by CAS
 * on the sequence, which is odd while one writes). */
static void pending_set(struct rlog_shm_header *h, const char *names)
{
	uint32_t seq;
	/* The CAS is seq_cst: the byte stores below cannot move before the
	 * odd sequence (pairs with the reader's fence and re-check, shm.c). */
	do {
		seq = load_relaxed(&h->enable_names_seq) & ~1u;
	} while (!atomic_compare_exchange_weak(&h->enable_names_seq, &seq, seq + 1));
	size_t n = strlen(names);
	if (n >= sizeof h->enable_names)
		n = sizeof h->enable_names - 1;
	memcpy(h->enable_names, names, n);
	memset(h->enable_names + n, 0, sizeof h->enable_names - n);
	store_release(&h->enable_names_seq, seq + 2);
}

int rlog__session_update(const char *name, const struct rlog__update *u, char *why, size_t n)
{
	why[0] = '\0';
	struct rlog__region r;
	int err = open_region(name, &r);
	if (err < 0)
		return err;
	struct rlog_shm_header *h = r.hdr;
	if (u->set_max_buffers) {
		uint32_t pool = load_relaxed(&h->number_of_buffers);
		if (u->max_buffers < pool || u->max_buffers > r.buffer_count) {
			snprintf(why, n, "--max-buffers %u: expected %u (the buffers in the pool now) to "
					 "%u (the session's capacity)", u->max_buffers, pool,
				 r.buffer_count);
			err = -ERANGE;
			goto out;
		}
	}
	/* Privileges first, as at start: a new selection of system events
	 * needs them, a scope or a rate alone changes nothing recorded. */
	if ((u->system_give & RLOG__SYS_GIVE_FLAGS) && u->system.flags &&
	    (err = rlog__sys_priv_check(why, n)) < 0)
		goto out;
	uint64_t mask = u->mask;
	char pending[sizeof h->enable_names] = "";
	if (u->enable) {
		char table[64][28];
		rlog__categories_copy(h, table);
		err = rlog__enable_parse(u->enable, table, &mask, pending, sizeof pending, why, n);
		if (err < 0)
			goto out;
	}
	/* The last check, and the first change: refused, it leaves the
	 * session as it was. */
	if (u->system_give && (err = rlog__sys_props_change(h, &u->system, u->system_give, why,
							      n)) < 0)
		goto out;
	if (u->set_max_buffers)
		store_relaxed(&h->max_buffers, u->max_buffers);
	if (u->set_flush_timer)
		store_relaxed(&h->flush_timer_ms, u->flush_timer_ms);
	if (u->set_counters)
		store_relaxed(&h->counter_mask, u->counter_mask);
	if (u->set_counter_period)
		store_relaxed(&h->counter_period_ms, u->counter_period_ms);
	if (u->enable || u->set_mask) {
		/* The pending names first: the daemon must not set a bit of the
		 * old list after the new mask. */
		pending_set(h, pending);
		/* seq_cst: the producers' next write loads it. */
		atomic_store(&h->enable_mask, mask);
	}
	err = 0;
out:
	rlog__region_close(&r);
	return err;
}

uint64_t rlog__counters_check(uint64_t mask, rlog__counter_refused_fn *fn, void *arg)
{
	size_t n;
	const struct rlog__counter_def *d = rlog__counter_defs(&n);
	for (size_t i = 0; i < n; i++) {
		if (!(mask >> d[i].bit & 1))
			continue;
		char why[256];
		enum rlog__counter_avail a = rlog__counter_probe(d[i].bit, why, sizeof why);
		if (a == RLOG__CTR_OK)
			continue;
		if (a != RLOG__CTR_USER_ONLY)
			mask &= ~(UINT64_C(1) << d[i].bit);
		fn(d[i].name, a, why, arg);
	}
	return mask;
}
