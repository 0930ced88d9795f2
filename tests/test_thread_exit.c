/*
 * test_thread_exit - a thread's buffer reaches the daemon when the thread
 * exits (no flush, no stop needed), and its slot is reaped; a thread that
 * calls rlog_flush_thread() has its events in the file while it still
 * runs.  Checked live with `ringlog query` and the region's slot states.
 */
#include "harness.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>

#include "atomics.h"
#include "shm.h"
#include "tap.h"

#define THREADS 4
#define EVENTS 1000u   /* 24 KB each: one full buffer and a partial one */
#define FLUSHED 300u

static void *produce(void *arg)
{
	uint64_t *ones = arg;
	for (uint64_t i = 1; i <= EVENTS; i++) {
		uint64_t v[2] = { i, 0 };
		*ones += rlog_write(1024, v, sizeof v) == 1;
	}
	return NULL; /* no flush: the thread-exit hook hands the buffer over */
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int phase; /* 1: flushed, 2: may exit */

static void *flush_then_wait(void *arg)
{
	uint64_t *ones = arg;
	for (uint64_t i = 1; i <= FLUSHED; i++) {
		uint64_t v[2] = { i, 0 };
		*ones += rlog_write(1024, v, sizeof v) == 1;
	}
	int rc = rlog_flush_thread();
	pthread_mutex_lock(&mu);
	phase = rc == 0 ? 1 : -1;
	pthread_cond_broadcast(&cv);
	while (phase != 2)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return NULL;
}

/* Polls `ringlog query` for up to 2 s until key == want; returns the last value. */
static uint64_t poll_query(const char *name, const char *key, uint64_t want)
{
	struct h_run r;
	uint64_t v = UINT64_MAX;
	for (int i = 0; i < 100; i++) {
		h_ringlog(&r, "query", name, NULL);
		v = h_kv(r.out, key);
		if (v == want)
			break;
		proc_sleep_ms(20);
	}
	return v;
}

/* Slots not FREE: active, or exited and not yet reaped. */
static uint32_t slots_in_use(struct rlog__region *reg)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < reg->slot_count; i++)
		n += load_acquire(&reg->slots[i].state) != RLOG_SLOT_FREE;
	return n;
}

static uint32_t poll_slots(struct rlog__region *reg, uint32_t want)
{
	uint32_t n = 0;
	for (int i = 0; i < 100; i++) {
		if ((n = slots_in_use(reg)) == want)
			break;
		proc_sleep_ms(20);
	}
	return n;
}

int main(void)
{
	const char *name = h_session("tx");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("tx"));
	h_start(name, path, "16", "64");
	ASSERT_EQ(rlog_attach(name), 0);
	struct rlog__region reg;
	BAIL_IF(rlog__region_open(name, &reg) != 0, "region_open");

	struct h_run r;
	h_ringlog(&r, "query", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "producer_threads"), 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 0);

	pthread_t th[THREADS];
	uint64_t ones[THREADS] = { 0 };
	for (int i = 0; i < THREADS; i++)
		BAIL_IF(pthread_create(&th[i], NULL, produce, &ones[i]) != 0, "pthread_create");
	uint64_t total = 0;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		total += ones[i];
	}
	ASSERT_EQ_U64(total, THREADS * EVENTS);
	/* Without any flush or stop, the exits handed everything over. */
	ASSERT_EQ_U64(poll_query(name, "events_written", total), total);
	ASSERT_EQ_U64(poll_query(name, "producer_threads", 0), 0);
	ASSERT_EQ(poll_slots(&reg, 0), 0);
	ASSERT_EQ_U64(poll_query(name, "free_buffers", 64), 64);

	/* A thread that flushes and then idles. */
	uint64_t fones = 0;
	pthread_t ft;
	BAIL_IF(pthread_create(&ft, NULL, flush_then_wait, &fones) != 0, "pthread_create");
	pthread_mutex_lock(&mu);
	while (phase == 0)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	ASSERT_EQ(phase, 1);
	ASSERT_EQ_U64(fones, FLUSHED);
	ASSERT_EQ_U64(poll_query(name, "events_written", total + FLUSHED), total + FLUSHED);
	h_ringlog(&r, "query", name, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "producer_threads"), 1); /* it is still there */
	ASSERT_EQ(slots_in_use(&reg), 1);
	pthread_mutex_lock(&mu);
	phase = 2;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(ft, NULL);
	ASSERT_EQ_U64(poll_query(name, "producer_threads", 0), 0);
	ASSERT_EQ(poll_slots(&reg, 0), 0);
	rlog__region_close(&reg);

	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), total + FLUSHED);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), 0);

	struct h_summary s;
	h_summarize(path, &s);
	ASSERT_EQ(s.open_err, 0);
	ASSERT_EQ_U64(s.damage, 0);
	ASSERT_EQ_U64(s.events, total + FLUSHED);
	ASSERT_EQ_U64(s.loss_records, 0);
	ASSERT_EQ((int)s.nthreads, THREADS + 1);
	uint64_t per[2] = { 0, 0 };
	for (size_t i = 0; i < s.nthreads; i++) {
		ASSERT_EQ_U64(s.th[i].order_errors, 0);
		per[s.th[i].events == EVENTS ? 0 : s.th[i].events == FLUSHED ? 1 : 0] +=
			s.th[i].events == EVENTS || s.th[i].events == FLUSHED;
	}
	ASSERT_EQ_U64(per[0], THREADS);
	ASSERT_EQ_U64(per[1], 1);
	rlog_detach();
	unlink(path);
	return done_testing();
}
