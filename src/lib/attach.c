/*
 * attach.c - attaching the process to a session, and the process-wide
 * state the inline write path reads.
 *
 * Attaching maps the session's region and points rlog__mask at its enable
 * mask; from then on every thread's first write binds the thread to the
 * region (thread.c).  Detaching points rlog__mask back at a zero word and
 * bumps the generation, so threads still bound to the old region rebind on
 * their next write.  Regions are never unmapped: another thread may be
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
struct rlog__region *_Atomic rlog__current;
_Atomic uint32_t rlog__gen = 1;

static pthread_mutex_t attach_lock = PTHREAD_MUTEX_INITIALIZER;

/* Every region ever attached, newest first.  They are never unmapped or
 * freed (a thread may still be writing into one); the list keeps them
 * reachable, which is also what a leak checker wants to see. */
struct attached {
	struct rlog__region region;
	struct attached *next;
};
static struct attached *attached_list;
static char attached_name[RLOG_NAME_MAX + 1];

static void detach_locked(void)
{
	/* Writes that already loaded the old mask finish into the old region;
	 * new writes see the zero word (pairs with the relaxed loads of
	 * rlog__mask in rlog__write: only the pointer value matters). */
	atomic_store(&rlog__mask, &rlog__zero_mask);
	atomic_store(&rlog__current, NULL);
	atomic_fetch_add(&rlog__gen, 1);
	attached_name[0] = '\0';
	rlog__thread_unbind();
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
	struct rlog__region *cur = atomic_load(&rlog__current);
	if (cur && strcasecmp(attached_name, name) == 0 &&
	    load_acquire(&cur->hdr->state) == RLOG_STATE_ACTIVE) {
		pthread_mutex_unlock(&attach_lock);
		return 0;
	}
	if (cur)
		detach_locked();

	int err;
	struct attached *a = calloc(1, sizeof *a);
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
	a->next = attached_list;
	attached_list = a;
	atomic_store(&rlog__tick_tsc, r->hdr->tick_source == RLOG_TICK_TSC);
	snprintf(attached_name, sizeof attached_name, "%s", name);
	atomic_store(&rlog__current, r);
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
	out->events_lost = rlog__tpriv.lost_events;
	out->bytes_lost = rlog__tpriv.lost_bytes;
	return 0;
}
