/*
 * late.c - late attach: an application started before its session (say
 * with RINGLOG_SESSION naming a session that does not exist yet) records
 * into it once it starts, with no restart and no thread of ringlog's
 * inside the application.
 *
 *   rlog_attach(NAME): no such session
 *     -> rlog__late_wait: preallocate what attaching will need; point
 *        rlog__mask at the wake registry's mask of hash(NAME)
 *        (src/common/wake.h)                 every write: one load, 0: return 0
 *   `ringlog start NAME`: adds 1 to that hash's starts and count, its
 *   mask is ~0
 *                                            every write: the load is not 0:
 *                                            slow path -> rlog__late_attach:
 *                                            at most every 100 ms (at once
 *                                            when a session of the hash
 *                                            started since the last), try
 *                                            attach_lock, map, claim, publish
 *                                            (no allocation: this may be a
 *                                            signal handler's write); then
 *                                            this write goes in
 *
 * So waiting costs what having no session costs, and the session is picked
 * up by the first write after its start.  A mask that another session of
 * the same hash raised costs a slow path per write (and a try every
 * 100 ms) while that session runs.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atomics.h"
#include "producer.h"
#include "wake.h"

#define LATE_TRY_MS 100

static struct {
	int n;                                           /* names waited for; 0: none */
	char names[RLOG_MAX_SESSIONS][RLOG_NAME_MAX + 1];
	struct rlog__session *a[RLOG_MAX_SESSIONS];      /* for the attach, zeroed */
	struct rlog__set *set;
} wait;
static _Atomic int waiting;                      /* wait.n != 0, for the write path */
static _Atomic uint64_t last_try_ms;
static _Atomic uint64_t last_key;                /* wait_hash's count and starts at the last try */
static uint32_t wait_hash;                       /* hash(names[0]) */
static uint64_t try_ms = LATE_TRY_MS;            /* RINGLOG_TEST_LATE_TRY_MS in tests */
static struct rlog_wake_registry *registry;     /* mapped once, kept */

/* What changes at every start of a session of wait_hash: the count of
 * those active and (since a stop and a start between two looks bring the
 * count back) the number started, read after it (src/common/wake.c). */
static uint64_t wake_key(void)
{
	uint64_t count = load_acquire(&registry->count[wait_hash]);
	return count | (uint64_t)load_relaxed(&registry->starts[wait_hash]) << 32;
}

static uint64_t coarse_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void rlog__late_wait(char (*names)[RLOG_NAME_MAX + 1], int n)
{
	rlog__late_cancel();
	if (registry == NULL)
		registry = rlog__wake_open();
	if (registry == NULL)
		return; /* no registry: an attach that fails stays failed */
	for (int i = 0; i < n; i++) {
		wait.a[i] = calloc(1, sizeof *wait.a[i]);
		if (wait.a[i] == NULL)
			goto fail;
		memcpy(wait.names[i], names[i], sizeof wait.names[i]);
	}
	wait.set = calloc(1, sizeof *wait.set);
	if (wait.set == NULL)
		goto fail;
	wait.n = n;
	wait_hash = rlog__wake_hash(names[0]);
	unsigned long test_ms = RLOG__TEST_ENV(RINGLOG_TEST_LATE_TRY_MS);
	try_ms = test_ms ? test_ms : LATE_TRY_MS;
	store_relaxed(&last_key, wake_key());
	store_relaxed(&last_try_ms, 0);
	atomic_store(&waiting, 1);
	/* The last store: writes from here on read the mask. */
	rlog__mask_set(&registry->mask[rlog__wake_hash(names[0])], NULL);
	return;
fail:
	for (int i = 0; i < n; i++) {
		free(wait.a[i]);
		wait.a[i] = NULL;
	}
}

void rlog__late_cancel(void)
{
	if (wait.n == 0)
		return;
	atomic_store(&waiting, 0);
	/* Writes stop reading the mask (publish points rlog__mask on). */
	if (atomic_load(&rlog__set)->n == 0)
		rlog__mask_set(&rlog__zero_mask, NULL);
	/* No write is inside rlog__late_attach's try with them: it holds
	 * attach_lock, which the caller holds now. */
	for (int i = 0; i < wait.n; i++) {
		free(wait.a[i]);
		wait.a[i] = NULL;
	}
	free(wait.set);
	wait.set = NULL;
	wait.n = 0;
}

bool rlog__late_attach(void)
{
	if (!atomic_load(&waiting))
		return false;
	/* A session of another name with the same hash keeps the mask up:
	 * tries are then rate-limited, but a start of a session of the hash
	 * (perhaps ours) is tried at once, so that the first write after the
	 * start still goes in. */
	uint64_t key = wake_key();
	uint64_t seen = load_relaxed(&last_key);
	uint64_t now = coarse_ms(), last = load_relaxed(&last_try_ms);
	if (key != seen && atomic_compare_exchange_strong(&last_key, &seen, key))
		store_relaxed(&last_try_ms, now);
	else if (now - last < try_ms ||
		 !atomic_compare_exchange_strong(&last_try_ms, &last, now))
		return false;
	/* wait.* change only under attach_lock: tried, never waited for (a
	 * handler must not wait for the thread it interrupted). */
	if (!rlog__attach_trylock())
		return false;
	bool ok = wait.n > 0 && rlog__attach_late_locked(wait.names, wait.n, wait.a, wait.set);
	if (ok) {
		/* Published: the structs belong to the set now. */
		atomic_store(&waiting, 0);
		for (int i = 0; i < wait.n; i++)
			wait.a[i] = NULL;
		wait.set = NULL;
		wait.n = 0;
	}
	rlog__attach_unlock();
	return ok;
}
