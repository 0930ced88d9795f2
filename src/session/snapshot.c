/*
 * snapshot.c - `ringlog snapshot`: asks the session's daemon, through the
 * region's request page (struct rlog_shm_ctl), to write its buffers to a
 * file now, or to arm a trigger that does it later.
 *
 *   requester                                  daemon (src/daemon/snapshot.c)
 *   ---------                                  ------
 *   CAS lock 0 -> pid (a dead holder's lock
 *     is taken over)
 *   write kind, flags, path, ...
 *   store_release(req_seq, seq)
 *   wake the daemon (fill event) ------------> load_acquire(req_seq) != served:
 *                                                copy the request, check it, serve it
 *   futex_wait(done_seq) until seq <---------- status, message; last_* for a snapshot;
 *                                                store_release(done_seq, seq)
 *   read the answer; lock = 0
 *   --wait on a trigger: futex_wait(snapshots) until it changes, then last_*
 */
#define _GNU_SOURCE
#include "session.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "atomics.h"
#include "clock.h"
#include "futex.h"
#include "procstat.h"

/* How long a requester waits for another one to finish. */
#define LOCK_WAIT_NS UINT64_C(10000000000)

/* Takes the request page's lock.  Returns 0 or -EBUSY. */
static int lock_take(struct rlog_shm_ctl *ctl)
{
	uint32_t me = (uint32_t)getpid();
	uint64_t deadline = rlog__monotonic_ns() + LOCK_WAIT_NS;
	for (;;) {
		uint32_t holder = 0;
		if (atomic_compare_exchange_strong(&ctl->lock, &holder, me))
			return 0;
		/* A requester that died holding it: take it over. */
		if (rlog__process_dead((pid_t)holder, 0) &&
		    atomic_compare_exchange_strong(&ctl->lock, &holder, me))
			return 0;
		if (rlog__monotonic_ns() > deadline)
			return -EBUSY;
		rlog__futex_wait(&ctl->lock, holder, 10);
	}
}

static void lock_give(struct rlog_shm_ctl *ctl)
{
	store_release(&ctl->lock, 0);
	rlog__futex_wake(&ctl->lock, 1);
}

/* Waits for *word to leave value old (futex), while the session runs.
 * Returns 0, -ECANCELED (the session is stopping) or -ESRCH (its daemon
 * is gone). */
static int wait_change(const struct rlog_shm_header *h, _Atomic uint32_t *word, uint32_t old)
{
	for (;;) {
		/* Pairs with the daemon's store_release of the word. */
		if (load_acquire(word) != old)
			return 0;
		uint32_t st = load_acquire(&h->state);
		if (st == RLOG_STATE_STOPPING || st == RLOG_STATE_STOPPED)
			return load_acquire(word) != old ? 0 : -ECANCELED;
		pid_t d = (pid_t)h->daemon_pid;
		if (d <= 0 || rlog__process_dead(d, 0))
			return -ESRCH;
		rlog__futex_wait(word, old, 100);
	}
}

/* The last snapshot's figures. */
static void last_copy(const struct rlog_shm_ctl *ctl, struct rlog__snapshot_result *out)
{
	out->status = ctl->last_status;
	out->events = ctl->last_events;
	out->lost = ctl->last_lost;
	out->bytes = ctl->last_bytes;
	snprintf(out->path, sizeof out->path, "%.*s", (int)sizeof ctl->last_path - 1,
		 ctl->last_path);
	if (out->status < 0)
		snprintf(out->message, sizeof out->message, "%.*s", (int)sizeof ctl->message - 1,
			 ctl->message);
}

/* Posts the request written in ctl (its lock held), wakes the daemon and
 * waits for the answer.  Returns its status (message, n bytes, says why
 * it failed), -ECANCELED or -ESRCH (wait_change). */
static int call(struct rlog_shm_header *h, struct rlog_shm_ctl *ctl, char *message, size_t n)
{
	int err = 0;
	uint32_t seq = load_relaxed(&ctl->req_seq) + 1;
	/* Release: the daemon's acquire load of req_seq sees the request. */
	store_release(&ctl->req_seq, seq);
	atomic_store(&h->fill_waiting, 0);
	rlog__futex_wake(&h->fill_waiting, 1);
	uint32_t done = load_acquire(&ctl->done_seq);
	while (err == 0 && done != seq) {
		err = wait_change(h, &ctl->done_seq, done);
		done = load_acquire(&ctl->done_seq);
	}
	if (err == 0) {
		err = ctl->status;
		if (err < 0)
			snprintf(message, n, "%.*s", (int)sizeof ctl->message - 1, ctl->message);
	}
	return err;
}

int rlog__session_sink_add(const char *name, const char *request, char *message, size_t n)
{
	message[0] = '\0';
	if (rlog__name_validate(name) < 0 || strlen(request) >= RLOG_PATH_MAX)
		return -EINVAL;
	struct rlog__region r;
	int err = rlog__region_open(name, &r);
	if (err < 0)
		return err;
	if (load_acquire(&r.hdr->state) != RLOG_STATE_ACTIVE) {
		rlog__region_close(&r);
		return -ECANCELED;
	}
	err = lock_take(r.ctl);
	if (err == 0) {
		r.ctl->kind = RLOG_CTL_SINK;
		r.ctl->flags = 0;
		memset(r.ctl->path, 0, sizeof r.ctl->path);
		memcpy(r.ctl->path, request, strlen(request));
		err = call(r.hdr, r.ctl, message, n);
		lock_give(r.ctl);
	}
	rlog__region_close(&r);
	return err;
}

int rlog__session_snapshot(const char *name, const struct rlog__snapshot *q,
			   struct rlog__snapshot_result *out)
{
	memset(out, 0, sizeof *out);
	if (rlog__name_validate(name) < 0)
		return -EINVAL;
	if (!(q->flags & RLOG_SNAP_DISARM) && (q->path == NULL || q->path[0] != '/' ||
					       strlen(q->path) >= RLOG_PATH_MAX))
		return -EINVAL;
	struct rlog__region r;
	int err = rlog__region_open(name, &r);
	if (err < 0)
		return err;
	struct rlog_shm_header *h = r.hdr;
	struct rlog_shm_ctl *ctl = r.ctl;
	if (load_acquire(&h->state) != RLOG_STATE_ACTIVE) {
		rlog__region_close(&r);
		return -ECANCELED;
	}
	err = lock_take(ctl);
	if (err < 0) {
		rlog__region_close(&r);
		return err;
	}
	ctl->kind = RLOG_CTL_SNAPSHOT;
	ctl->flags = q->flags;
	ctl->event_id = q->event_id;
	ctl->event_flag = q->event_flag;
	ctl->after_ms = q->after_ms;
	memset(ctl->path, 0, sizeof ctl->path);
	if (q->path)
		memcpy(ctl->path, q->path, strlen(q->path));
	uint32_t taken = load_acquire(&ctl->snapshots);
	err = call(h, ctl, out->message, sizeof out->message);
	if (err == 0 && !(q->flags & (RLOG_SNAP_ON_LOSS | RLOG_SNAP_ON_EVENT | RLOG_SNAP_DISARM)))
		last_copy(ctl, out);
	out->trigger = load_acquire(&ctl->trigger);
	lock_give(ctl);
	if (err == 0 && q->wait && (q->flags & (RLOG_SNAP_ON_LOSS | RLOG_SNAP_ON_EVENT))) {
		/* The trigger's snapshot is the next one written. */
		err = wait_change(h, &ctl->snapshots, taken);
		if (err == 0) {
			last_copy(ctl, out);
			err = out->status;
		}
		out->trigger = load_acquire(&ctl->trigger);
	}
	rlog__region_close(&r);
	return err;
}
