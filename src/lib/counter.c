/*
 * counter.c - rlog_counter_register: an application counter in the
 * session's counter table (docs/FORMAT.md, "struct rlog_shm_counter").
 *
 *   application                                  daemon (src/daemon/counters.c)
 *   -----------                                  ------
 *   CAS state FREE -> WRITING                    every counter period:
 *   start_time, pid (release), name, value = 0     state SET (acquire)? owner?
 *   store_release state SET  ───────────────────►  v = load value (relaxed)
 *   ++*counter (plain or atomic add) ───────────►  v != last? COUNTER record
 *                                                owner dead: last sample, then
 *                                                  zero the entry, state FREE (release)
 *
 * No thread of ringlog's runs in the application and nothing is called on
 * an increment: the daemon samples.  The value is one naturally aligned
 * 64-bit word, alone on its cache line, which a 64-bit CPU loads and
 * stores whole, so the daemon never sees half an update.
 *
 * Registration takes a lock of this file's own (two threads registering
 * one name get one counter); it never waits for a write or the attach
 * lock: the session it reads, rlog__current, is never unmapped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomics.h"
#include "counter_catalog.h"
#include "procstat.h"
#include "producer.h"

/* A counter kept in the process's memory: no session, or no room in it. */
struct local_counter {
	uint64_t value;
	struct local_counter *next;
	char name[RLOG_COUNTER_NAME_MAX + 1];
};

static pthread_mutex_t register_lock = PTHREAD_MUTEX_INITIALIZER;
static struct local_counter *locals; /* never freed: the application holds pointers */
static uint64_t last_resort;         /* for when even a local counter cannot be had */

/* The local counter of name (lock held), created if new; NULL: no memory. */
static uint64_t *local_get(const char *name)
{
	for (struct local_counter *l = locals; l; l = l->next)
		if (strcmp(l->name, name) == 0)
			return &l->value;
	struct local_counter *l = calloc(1, sizeof *l);
	if (l == NULL)
		return NULL;
	strcpy(l->name, name); /* checked: at most RLOG_COUNTER_NAME_MAX bytes */
	l->next = locals;
	locals = l;
	return &l->value;
}

/*
 * The value word of an entry, as the application's plain uint64_t.  The
 * field is _Atomic for the daemon's loads; an _Atomic uint64_t has the
 * size, alignment and representation of a uint64_t on every target ringlog
 * builds for (x86-64, aarch64: lock-free), which is what lets the
 * application add to it without atomics.
 */
static uint64_t *entry_value(struct rlog_shm_counter *e)
{
	return (uint64_t *)(void *)&e->value;
}

/* This process's entry of name in session s, claimed if it has none
 * (lock held).  NULL: the table is full. */
static struct rlog_shm_counter *entry_get(struct rlog__session *s, const char *name, size_t len)
{
	struct rlog__region *r = &s->region;
	uint32_t pid = (uint32_t)getpid();
	char state;
	uint64_t start = 0;
	if (rlog__procstat_read(0, &state, &start) < 0)
		start = 0;
	for (uint32_t i = 0; i < RLOG_SHM_COUNTERS; i++) {
		struct rlog_shm_counter *e = &r->counters[i];
		/* Acquire pairs with the claimer's store_release(SET). */
		if (load_acquire(&e->state) == RLOG_COUNTER_SET && load_relaxed(&e->pid) == pid &&
		    load_relaxed(&e->start_time) == start && strncmp(e->name, name, sizeof e->name) == 0)
			return e;
	}
	for (uint32_t i = 0; i < RLOG_SHM_COUNTERS; i++) {
		struct rlog_shm_counter *e = &r->counters[i];
		uint32_t expect = RLOG_COUNTER_FREE;
		if (load_relaxed(&e->state) != RLOG_COUNTER_FREE ||
		    !atomic_compare_exchange_strong(&e->state, &expect, RLOG_COUNTER_WRITING))
			continue;
		store_relaxed(&e->start_time, start);
		/* The daemon reads pid 0 as "being claimed" (never dead). */
		store_release(&e->pid, pid);
		memset(e->name, 0, sizeof e->name);
		memcpy(e->name, name, len);
		store_relaxed(&e->value, 0);
		/* Release: the daemon that sees SET sees the owner and name. */
		store_release(&e->state, RLOG_COUNTER_SET);
		return e;
	}
	return NULL;
}

int rlog_counter_register(const char *name, uint64_t **out)
{
	if (out == NULL)
		return -EINVAL;
	size_t len = name ? strnlen(name, RLOG_COUNTER_NAME_MAX + 1) : 0;
	bool ok = len <= RLOG_COUNTER_NAME_MAX && rlog__counter_name_ok(name, len);
	pthread_mutex_lock(&register_lock);
	int ret;
	uint64_t *p = NULL;
	struct rlog__session *s = atomic_load(&rlog__current);
	if (!ok) {
		ret = -EINVAL;
	} else if (s == NULL || load_acquire(&s->region.hdr->state) != RLOG_STATE_ACTIVE) {
		ret = 0;
	} else {
		struct rlog_shm_counter *e = entry_get(s, name, len);
		if (e != NULL)
			p = entry_value(e);
		ret = e != NULL ? 1 : -ENOSPC;
	}
	if (p == NULL && ok)
		p = local_get(name);
	if (p == NULL) {
		p = &last_resort;
		if (ok)
			ret = -ENOMEM;
	}
	pthread_mutex_unlock(&register_lock);
	*out = p;
	return ret;
}

void rlog__counters_fork_child(void)
{
	pthread_mutex_init(&register_lock, NULL);
}
