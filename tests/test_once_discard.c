/*
 * test_once_discard - every event once in discard mode (docs/DESIGN.md,
 * "Rules that hold everywhere"): two threads write numbered events
 * (tests/numbered.h) flat out into a small pool, so that many are lost; the
 * file holds each event whose write returned 1 exactly once, no other, and
 * its DATA_LOSS records count exactly the writes that returned -ENOBUFS or
 * -EBUSY.  Also the checker itself: a file read twice shows every event as
 * a duplicate, and a write it was not told of is an extra.
 */
#include "harness.h"
#include "numbered.h"

#include <pthread.h>

#define THREADS 2
#define EVENTS 150000u

static struct num_set *set;

static void *produce(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg;
	for (uint64_t i = 0; i < EVENTS; i++)
		num_write(set, w);
	return NULL;
}

int main(void)
{
	const char *name = h_session("once");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("once"));
	h_start(name, path, "4", "4");
	ASSERT_EQ(rlog_attach(name), 0);

	set = num_new(THREADS, EVENTS + 2);
	pthread_t th[THREADS];
	for (unsigned i = 0; i < THREADS; i++)
		BAIL_IF(pthread_create(&th[i], NULL, produce, (void *)(uintptr_t)i) != 0,
			"pthread_create");
	for (unsigned i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	ASSERT_EQ(rlog_detach(), 0);

	struct h_run stop;
	h_ringlog(&stop, "stop", name, NULL);
	ASSERT_EQ(stop.status, 0);
	ASSERT_EQ_U64(num_attempts(set), (uint64_t)THREADS * EVENTS);
	ASSERT_EQ_U64(num_written(set) + num_lost(set), (uint64_t)THREADS * EVENTS);
	ok(num_lost(set) > 0, "the pool overflowed: %" PRIu64 " writes lost", num_lost(set));
	h_check_identity(&stop, path, num_written(set), num_lost(set));

	struct num_check c;
	num_check_file(set, path, &c);
	ASSERT_EQ(c.open_err, 0);
	ASSERT_EQ_U64(c.damage, 0);
	num_assert_once(set, &c, 0, "discard mode");
	ASSERT_EQ_U64(c.loss_events, num_lost(set));
	ASSERT_EQ_U64(c.other_events, 0);

	/* The checker sees a file counted twice, and a write it never saw. */
	const char *twice[2] = { path, path };
	num_check_files(set, twice, 2, &c);
	ASSERT_EQ_U64(c.duplicates, num_written(set));
	uint64_t bit = 1ull << 1; /* seq 1 of writer 0: returned 1 in any run */
	uint64_t old = atomic_fetch_and(&set->w[0].ok[0], ~bit);
	num_check_file(set, path, &c);
	ASSERT_EQ_U64(c.extras, (old & bit) ? 1 : 0);
	atomic_fetch_or(&set->w[0].ok[0], old & bit);
	num_check_file(set, path, &c);
	ASSERT_EQ_U64(c.extras, 0);

	unlink(path);
	return done_testing();
}
