/*
 * attach.c - the sessions the process records into, and the process-wide
 * state the inline write path reads.
 *
 * The process records into a set of at most RLOG_MAX_SESSIONS sessions
 * (ETW lets a provider feed up to 8).  A set is published whole and never
 * changed (struct rlog__set), then the generation is bumped, then
 * rlog__mask is pointed at (and rlog__mask_or_null, the same pointer but
 * NULL for no session: the inline paths of this header version load it,
 * rlog__mask stays for programs built with an older one)
 *
 *   no session      rlog__zero_mask: every write returns at its first load
 *   one session     that session's enable mask: the fast path as it was
 *   two or more     the set's own word (~0): every write leaves the
 *                   single-session path with the time read once; the
 *                   inline path of this header version writes each ready
 *                   binding itself (rlog__write_several, armed by write.c
 *                   for the set whose word it is) and calls rlog__write_rest for the
 *                   others; older ones call rlog__write_slow for all: the
 *                   library's loop (write.c, write_multi), which stores
 *                   into each session on a fast path of its own and falls
 *                   back to write_one otherwise
 *
 * A thread bound under an older generation is sent to the slow path by the
 * inline path (its binding's mask pointer is not rlog__mask) or by the
 * generation check there, and binds again.  Sessions are never unmapped: a
 * thread may still be inside a write into one, and a write must never
 * fault; a session that leaves the set gives its process entry back
 * (proc.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "atomics.h"
#include "producer.h"

_Atomic uint64_t rlog__zero_mask;
_Atomic uint64_t *_Atomic rlog__mask = &rlog__zero_mask;
_Atomic uint64_t *_Atomic rlog__mask_or_null;

void rlog__mask_set(_Atomic uint64_t *m, struct rlog_shm_header *hdr)
{
	/* Both stores seq_cst, as every store of rlog__mask was: the new
	 * pointer first, so that no write sees the old one after the old
	 * header's pointer moved on. */
	atomic_store(&rlog__mask_or_null, m == &rlog__zero_mask ? NULL : m);
	atomic_store(&rlog__mask, m);
	/* Then the gate, the first thing the inline checks read: while it
	 * is behind the pointers a write stops at one or the other, as it
	 * stopped at a NULL pointer before (gate.c). */
	rlog__gate_set(hdr, m == &rlog__zero_mask ? 0 : ~UINT64_C(0));
}

_Atomic int rlog__tick_tsc;
_Thread_local struct rlog__thread rlog__thread;
_Thread_local struct rlog__tpriv rlog__tpriv;
static struct rlog__set empty_set;
struct rlog__set *_Atomic rlog__set = &empty_set;
struct rlog__session *_Atomic rlog__current;
_Atomic uint32_t rlog__gen = 1;

static pthread_mutex_t attach_lock = PTHREAD_MUTEX_INITIALIZER;

/* What rlog__mask points at for set. */
static _Atomic uint64_t *set_mask(struct rlog__set *set)
{
	return set->n == 0   ? &rlog__zero_mask
	       : set->n == 1 ? &set->s[0]->region.hdr->enable_mask
			     : &set->all;
}

void rlog__mask_publish(struct rlog__set *set)
{
	rlog__mask_set(set_mask(set), set->n == 1 ? set->s[0]->region.hdr : NULL);
}

/* Every session ever mapped and every set ever published, newest first.
 * Never freed (a thread may still use one); the lists keep them
 * reachable, which is also what a leak checker wants to see. */
static struct rlog__session *_Atomic sessions;
static struct rlog__set *sets;

/* The session names of the set, as given (case kept), for rlog_attach's
 * "already attached" test. */
static char set_names[RLOG_MAX_SESSIONS][RLOG_NAME_MAX + 1];

/* Publishes the set {s[0], ..., s[n-1]} (attach_lock held), into the set
 * struct given (late.c: no allocation inside a write) or a new one; then,
 * with release, the calling thread lets go of its bindings.  Returns 0 or
 * -ENOMEM (the set is then unchanged). */
static int publish_into(struct rlog__set *set, struct rlog__session *const *s,
			char (*names)[RLOG_NAME_MAX + 1], uint32_t n, bool release)
{
	if (n == 0) {
		set = &empty_set;
	} else {
		if (set == NULL && (set = calloc(1, sizeof *set)) == NULL)
			return -ENOMEM;
		set->n = n;
		memcpy(set->s, s, n * sizeof *s);
		atomic_init(&set->all, ~UINT64_C(0));
		set->next = sets;
		sets = set;
	}
	/* The old set's sessions that leave it give their entries back. */
	struct rlog__set *old = atomic_load(&rlog__set);
	for (uint32_t i = 0; i < old->n; i++) {
		bool stays = false;
		for (uint32_t j = 0; j < n && !stays; j++)
			stays = old->s[i] == s[j];
		if (!stays)
			rlog__proc_release(old->s[i]);
	}
	for (uint32_t i = 0; i < RLOG_MAX_SESSIONS; i++)
		snprintf(set_names[i], sizeof set_names[i], "%s", i < n ? names[i] : "");
	if (n > 0)
		atomic_store(&rlog__tick_tsc, s[0]->region.hdr->tick_source == RLOG_TICK_TSC);
	/* Set, then generation, then mask (all seq_cst): a write that sees
	 * the new mask sees the new generation, and the slow path that sees
	 * the new generation sees this set (write.c). */
	set->gen = atomic_load(&rlog__gen) + 1;
	atomic_store(&rlog__set, set);
	atomic_store(&rlog__current, n > 0 ? s[0] : NULL);
	atomic_fetch_add(&rlog__gen, 1);
	rlog__mask_publish(set);
	/* The calling thread lets go of its bindings now; the others do at
	 * their next write. */
	if (release)
		rlog__thread_release(false);
	return 0;
}

static int publish(struct rlog__session *const *s, char (*names)[RLOG_NAME_MAX + 1], uint32_t n)
{
	rlog__late_cancel();
	return publish_into(NULL, s, names, n, true);
}

/*
 * Maps session name into a (zeroed) and claims this process's entry in it.
 * Async-signal-safe (late.c calls it inside a write).  Returns 0 or -errno
 * (as rlog_attach); on failure a is zeroed again.
 */
static int session_open_into(struct rlog__session *a, const char *name)
{
	struct rlog__region *r = &a->region;
	int err = rlog__region_open(name, r);
	if (err < 0)
		return err;
	snprintf(a->name, sizeof a->name, "%s", name);
	/* Pairs with the daemon's store_release(state, ACTIVE). */
	if (load_acquire(&r->hdr->state) != RLOG_STATE_ACTIVE) {
		err = -ENOENT;
		goto fail_close;
	}
	if (rlog__proc_get(a) == NULL) {
		err = -ENOSPC;
		goto fail_close;
	}
	return 0;

fail_close:
	rlog__region_close(r);
	memset(a, 0, sizeof *a);
	return err;
}

/* Gives up a session opened by session_open_into but not published: its
 * entry back, its mapping gone, a zeroed for reuse. */
static void session_unopen(struct rlog__session *a)
{
	rlog__proc_release(a);
	rlog__region_close(&a->region);
	memset(a, 0, sizeof *a);
}

/* A session opened for good: in the list of every session mapped, and
 * with the process's category names (tried, not waited for, inside a
 * write). */
static void session_keep(struct rlog__session *a, bool names_try)
{
	a->next = atomic_load(&sessions);
	atomic_store(&sessions, a);
	rlog__categories_attach(a, names_try);
}

static int session_open(const char *name, struct rlog__session **out)
{
	/* A session this process mapped before (attached, then detached) and
	 * that still runs: its mapping serves again.  Mappings are never
	 * undone (a thread may still be writing into one), so mapping anew at
	 * every attach would grow the address space by a region for every
	 * attach and detach. */
	for (struct rlog__session *s = atomic_load(&sessions); s; s = s->next) {
		if (strcasecmp(s->name, name) != 0 ||
		    load_acquire(&s->region.hdr->state) != RLOG_STATE_ACTIVE)
			continue;
		if (rlog__proc_get(s) == NULL)
			return -ENOSPC;
		*out = s;
		return 0;
	}
	struct rlog__session *a = calloc(1, sizeof *a);
	if (a == NULL)
		return -ENOMEM;
	int err = session_open_into(a, name);
	if (err < 0) {
		free(a);
		return err;
	}
	session_keep(a, false);
	*out = a;
	return 0;
}

/* The set's session named name (any case), if it is still active. */
static int set_find(const struct rlog__set *set, const char *name)
{
	for (uint32_t i = 0; i < set->n; i++)
		if (strcasecmp(set_names[i], name) == 0 &&
		    load_acquire(&set->s[i]->region.hdr->state) == RLOG_STATE_ACTIVE)
			return (int)i;
	return -1;
}

/* Splits a comma-separated list of session names into names[]; returns
 * their number, or -EINVAL (a bad name, more than RLOG_MAX_SESSIONS). */
static int split_names(const char *list, char (*names)[RLOG_NAME_MAX + 1])
{
	int n = 0;
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");
		if (n == RLOG_MAX_SESSIONS || len == 0 || len > RLOG_NAME_MAX)
			return -EINVAL;
		memcpy(names[n], p, len);
		names[n][len] = '\0';
		if (rlog__name_validate(names[n]) < 0)
			return -EINVAL;
		for (int i = 0; i < n; i++)
			if (strcasecmp(names[i], names[n]) == 0)
				return -EINVAL;
		n++;
		p += len + (p[len] == ',');
	}
	return n > 0 ? n : -EINVAL;
}

/* Opens what of names[] the set has not (attach_lock held).  On failure,
 * the sessions it opened give their process entries back. */
static int open_all(char (*names)[RLOG_NAME_MAX + 1], int n, struct rlog__session **s)
{
	struct rlog__set *cur = atomic_load(&rlog__set);
	bool opened[RLOG_MAX_SESSIONS] = { false };
	int err = 0, i;
	for (i = 0; i < n && err == 0; i++) {
		int j = set_find(cur, names[i]);
		if (j >= 0) {
			s[i] = cur->s[j];
			continue;
		}
		err = session_open(names[i], &s[i]);
		opened[i] = err == 0;
		/* One clock for all: a write takes one timestamp for every
		 * session it goes to. */
		if (err == 0 && s[i]->region.hdr->tick_source != s[0]->region.hdr->tick_source)
			err = -EXDEV;
	}
	if (err < 0)
		for (int k = 0; k < i; k++)
			if (opened[k])
				rlog__proc_release(s[k]);
	return err;
}

int rlog_attach(const char *name)
{
	if (name == NULL) {
		name = getenv("RINGLOG_SESSION");
		if (name == NULL || name[0] == '\0')
			name = "default";
	}
	char names[RLOG_MAX_SESSIONS][RLOG_NAME_MAX + 1];
	int n = split_names(name, names);
	if (n < 0)
		return n;
	rlog__hooks_init();

	pthread_mutex_lock(&attach_lock);
	struct rlog__set *cur = atomic_load(&rlog__set);
	bool same = cur->n == (uint32_t)n;
	for (int i = 0; i < n && same; i++)
		same = set_find(cur, names[i]) == i;
	/* The gate's spare page first: without it a change could leave the
	 * gate on a session this one replaces (gate.c). */
	int err = same ? 0 : rlog__gate_spare();
	if (!same && err == 0) {
		struct rlog__session *s[RLOG_MAX_SESSIONS];
		err = open_all(names, n, s);
		/* On failure the process is left detached, as a replacement
		 * that could not be made (writes return 0); if a session does
		 * not exist yet, it waits for them (late.c). */
		if (err < 0) {
			publish(NULL, names, 0);
			if (err == -ENOENT)
				rlog__late_wait(names, n);
		} else {
			err = publish(s, names, (uint32_t)n);
		}
	}
	pthread_mutex_unlock(&attach_lock);
	return err;
}

int rlog_attach_add(const char *name)
{
	if (name == NULL || rlog__name_validate(name) < 0)
		return -EINVAL;
	rlog__hooks_init();
	pthread_mutex_lock(&attach_lock);
	struct rlog__set *cur = atomic_load(&rlog__set);
	int err = 0;
	/* Not attached to it yet, and a spare page for the gate (gate.c). */
	if (set_find(cur, name) < 0 && (err = rlog__gate_spare()) == 0) {
		struct rlog__session *s[RLOG_MAX_SESSIONS];
		char names[RLOG_MAX_SESSIONS][RLOG_NAME_MAX + 1];
		uint32_t n = 0;
		for (uint32_t i = 0; i < cur->n; i++) {
			/* Sessions that stopped meanwhile leave the set. */
			if (load_acquire(&cur->s[i]->region.hdr->state) != RLOG_STATE_ACTIVE)
				continue;
			s[n] = cur->s[i];
			memcpy(names[n], set_names[i], sizeof names[n]);
			n++;
		}
		if (n == RLOG_MAX_SESSIONS) {
			err = -E2BIG;
		} else if ((err = session_open(name, &s[n])) == 0) {
			if (n > 0 && s[n]->region.hdr->tick_source != s[0]->region.hdr->tick_source) {
				rlog__proc_release(s[n]);
				err = -EXDEV;
			} else {
				snprintf(names[n], sizeof names[n], "%s", name);
				err = publish(s, names, n + 1);
			}
		}
	}
	pthread_mutex_unlock(&attach_lock);
	return err;
}

int rlog_detach_session(const char *name)
{
	if (name == NULL || rlog__name_validate(name) < 0)
		return -EINVAL;
	pthread_mutex_lock(&attach_lock);
	struct rlog__set *cur = atomic_load(&rlog__set);
	int err = -ENOENT;
	struct rlog__session *s[RLOG_MAX_SESSIONS];
	char names[RLOG_MAX_SESSIONS][RLOG_NAME_MAX + 1];
	uint32_t n = 0;
	for (uint32_t i = 0; i < cur->n; i++) {
		if (strcasecmp(set_names[i], name) == 0) {
			err = 0;
			continue;
		}
		s[n] = cur->s[i];
		memcpy(names[n], set_names[i], sizeof names[n]);
		n++;
	}
	/* The sessions left need the gate's spare page (gate.c). */
	if (err == 0 && n > 0 && rlog__gate_spare() < 0)
		err = -ENOMEM;
	if (err == 0)
		err = publish(s, names, n);
	pthread_mutex_unlock(&attach_lock);
	return err;
}

int rlog_detach(void)
{
	pthread_mutex_lock(&attach_lock);
	rlog__late_cancel();
	int err = atomic_load(&rlog__set)->n == 0 ? -ENOENT : publish(NULL, NULL, 0);
	pthread_mutex_unlock(&attach_lock);
	return err;
}

void rlog__attach_fork_child(void)
{
	/* The child's only thread: an attach that another thread of the
	 * parent was making is gone, maybe holding the lock (docs/FORMAT.md,
	 * "Attaching").  The entries, and the name and schema records in the sessions,
	 * are the parent's: the child claims and writes its own. */
	pthread_mutex_init(&attach_lock, NULL);
	rlog__categories_fork_child();
	for (struct rlog__session *s = atomic_load(&sessions); s; s = s->next) {
		store_relaxed(&s->proc, 0);
		store_relaxed(&s->pname_done, 0);
		for (size_t w = 0; w < sizeof s->schemas / sizeof s->schemas[0]; w++)
			store_relaxed(&s->schemas[w], 0);
	}
	/* That attach may have stopped between its stores: settle the mask
	 * on the set it published (so that an rlog_attach of the same
	 * session in the child, which finds the set unchanged, does not
	 * return with writes disabled). */
	struct rlog__set *set = atomic_load(&rlog__set);
	atomic_store(&rlog__current, set->n > 0 ? set->s[0] : NULL);
	rlog__gate_fork_child();
	rlog__mask_publish(set);
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

bool rlog__attach_trylock(void)
{
	return pthread_mutex_trylock(&attach_lock) == 0;
}

void rlog__attach_unlock(void)
{
	pthread_mutex_unlock(&attach_lock);
}

/*
 * late.c's attach, from inside a write (attach_lock held, by a try): the
 * sessions of names[] into the preallocated structs a[] and set, without
 * allocating.  Returns true if the process is now attached to all of them.
 */
bool rlog__attach_late_locked(char (*names)[RLOG_NAME_MAX + 1], int n, struct rlog__session **a,
			      struct rlog__set *set)
{
	bool ok = false;
	if (atomic_load(&rlog__set)->n == 0) {
		int err = 0, opened = 0;
		for (int i = 0; i < n && err == 0; i++) {
			err = session_open_into(a[i], names[i]);
			if (err == 0) {
				opened++;
				if (a[i]->region.hdr->tick_source != a[0]->region.hdr->tick_source)
					err = -EXDEV;
			}
		}
		if (err == 0) {
			for (int i = 0; i < n; i++)
				session_keep(a[i], true);
			ok = publish_into(set, a, names, (uint32_t)n, false) == 0;
		} else {
			/* Not all there yet: what was opened is given up, and the
			 * structs wait for the next try. */
			for (int k = 0; k < opened; k++)
				session_unopen(a[k]);
		}
	}
	return ok;
}
