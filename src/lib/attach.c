/*
 * attach.c - attaching the process to a session, and the process-wide
 * state the inline write path reads.
 *
 * Attaching maps the session's region, claims the process's entry in it
 * (proc.c) and points rlog__mask at its enable mask; from then on every
 * thread's next write binds the thread to the region (thread.c): the
 * inline write path sends a thread whose binding's mask is not the one
 * rlog__mask points at to the slow path, which rebinds it.  Detaching
 * points rlog__mask back at a zero word, releases the process entry and
 * bumps the generation.  Regions are never unmapped: another thread may be
 * inside a write into one, and a write must never fault.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "atomics.h"
#include "producer.h"

_Atomic uint64_t rlog__zero_mask;
_Atomic uint64_t *_Atomic rlog__mask = &rlog__zero_mask;
_Atomic int rlog__tick_tsc;
_Thread_local struct rlog__thread rlog__thread;
_Thread_local struct rlog__tpriv rlog__tpriv;
struct rlog__session *_Atomic rlog__current;
_Atomic uint32_t rlog__gen = 1;

static pthread_mutex_t attach_lock = PTHREAD_MUTEX_INITIALIZER;

/* Every session ever attached, newest first.  They are never unmapped or
 * freed (a thread may still be writing into one); the list keeps them
 * reachable, which is also what a leak checker wants to see. */
static struct rlog__session *_Atomic sessions;
static char attached_name[RLOG_NAME_MAX + 1];

static void detach_locked(void)
{
	/* Writes that already loaded the old mask finish into the old region;
	 * new writes see the zero word (pairs with the relaxed loads of
	 * rlog__mask in rlog__write: only the pointer value matters). */
	struct rlog__session *old = atomic_load(&rlog__current);
	atomic_store(&rlog__mask, &rlog__zero_mask);
	atomic_store(&rlog__current, NULL);
	atomic_fetch_add(&rlog__gen, 1);
	attached_name[0] = '\0';
	rlog__thread_release(false);
	if (old)
		rlog__proc_release(old);
}

void rlog__proc_fork_child(void)
{
	/* The child's only thread: an attach that another thread of the
	 * parent was making is gone, maybe holding the lock (issue 12, item
	 * 7).  The entries belong to the parent; the child claims its own. */
	pthread_mutex_init(&attach_lock, NULL);
	rlog__categories_fork_child();
	for (struct rlog__session *s = atomic_load(&sessions); s; s = s->next)
		store_relaxed(&s->proc, 0);
	/* That attach or detach may have stopped between its stores: settle
	 * on what rlog__current says, so that an rlog_attach of the same
	 * session in the child does not return early with writes disabled. */
	struct rlog__session *cur = atomic_load(&rlog__current);
	atomic_store(&rlog__mask, cur ? &cur->region.hdr->enable_mask : &rlog__zero_mask);
	if (cur == NULL)
		attached_name[0] = '\0';
}

int rlog_attach(const char *name)
{
	if (name == NULL) {
		name = getenv("RINGLOG_SESSION");
		if (name == NULL || name[0] == '\0')
			name = "default";
	}
	if (rlog__name_validate(name) < 0)
		return -EINVAL;
	rlog__hooks_init();

	pthread_mutex_lock(&attach_lock);
	struct rlog__session *cur = atomic_load(&rlog__current);
	if (cur && strcasecmp(attached_name, name) == 0 &&
	    load_acquire(&cur->region.hdr->state) == RLOG_STATE_ACTIVE) {
		pthread_mutex_unlock(&attach_lock);
		return 0;
	}
	if (cur)
		detach_locked();

	int err;
	struct rlog__session *a = calloc(1, sizeof *a);
	if (a == NULL) {
		err = -ENOMEM;
		goto out;
	}
	struct rlog__region *r = &a->region;
	err = rlog__region_open(name, r);
	if (err < 0)
		goto fail_free;
	/* Pairs with the daemon's store_release(state, ACTIVE). */
	if (load_acquire(&r->hdr->state) != RLOG_STATE_ACTIVE) {
		err = -ENOENT;
		goto fail_close;
	}
	if (rlog__proc_get(a) == NULL) {
		err = -ENOSPC;
		goto fail_close;
	}
	a->next = atomic_load(&sessions);
	atomic_store(&sessions, a);
	rlog__categories_attach(a);
	atomic_store(&rlog__tick_tsc, r->hdr->tick_source == RLOG_TICK_TSC);
	snprintf(attached_name, sizeof attached_name, "%s", name);
	atomic_store(&rlog__current, a);
	atomic_fetch_add(&rlog__gen, 1);
	atomic_store(&rlog__mask, &r->hdr->enable_mask);
	pthread_mutex_unlock(&attach_lock);
	return 0;

fail_close:
	rlog__region_close(r);
fail_free:
	free(a);
out:
	pthread_mutex_unlock(&attach_lock);
	return err;
}

int rlog_detach(void)
{
	pthread_mutex_lock(&attach_lock);
	if (atomic_load(&rlog__current) == NULL) {
		pthread_mutex_unlock(&attach_lock);
		return -ENOENT;
	}
	detach_locked();
	pthread_mutex_unlock(&attach_lock);
	return 0;
}

int rlog_thread_stats(struct rlog_thread_stats *out)
{
	if (out == NULL)
		return -EINVAL;
	out->events_written = rlog__thread.written;
	out->events_lost = load_relaxed(&rlog__tpriv.lost_events);
	out->bytes_lost = load_relaxed(&rlog__tpriv.lost_bytes);
	return 0;
}
