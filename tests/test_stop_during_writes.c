/*
 * test_stop_during_writes - `ringlog stop` while 3 threads write as fast as
 * they can, into a small pool (so that losses happen too).  The stop
 * sequence (mask = 0, membarrier, wait for busy == 0, final drain) must put
 * in the file exactly the events whose writes returned 1, report exactly
 * the writes that returned -ENOBUFS, and make every later write return 0.
 * Five rounds, each with a new session and new threads.
 */
#include "harness.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>

#include "tap.h"

#define THREADS 3
#define ROUNDS 5
#define RECORD 24u

struct worker {
	uint32_t tid;
	struct h_tally t;
	uint64_t off_after_stop;   /* returns 0 seen after stop returned */
	uint64_t nonzero_after;    /* returns other than 0 after stop returned */
};

static _Atomic int stopped, quit;

static void *produce(void *arg)
{
	struct worker *w = arg;
	w->tid = (uint32_t)syscall(SYS_gettid);
	uint64_t seq = 0;
	while (!atomic_load_explicit(&quit, memory_order_relaxed)) {
		int after = atomic_load_explicit(&stopped, memory_order_acquire);
		uint64_t payload[2] = { ++seq, 7 };
		int r = h_tally_add(&w->t, rlog_write(1024, payload, sizeof payload));
		if (after) {
			if (r == 0)
				w->off_after_stop++;
			else
				w->nonzero_after++;
		}
	}
	return NULL;
}

static void round_run(int round)
{
	char tag[32];
	snprintf(tag, sizeof tag, "sdw%d", round);
	char name[64], path[256];
	snprintf(name, sizeof name, "%s", h_session(tag));
	snprintf(path, sizeof path, "%s", h_path(tag));
	/* 16 x 4 KiB buffers: small enough that 3 busy threads lose events. */
	h_start(name, path, "4", "16");
	ASSERT_EQ(rlog_attach(name), 0);
	atomic_store(&stopped, 0);
	atomic_store(&quit, 0);

	pthread_t th[THREADS];
	struct worker w[THREADS];
	memset(w, 0, sizeof w);
	for (int i = 0; i < THREADS; i++)
		BAIL_IF(pthread_create(&th[i], NULL, produce, &w[i]) != 0, "pthread_create");
	proc_sleep_ms(100);
	struct h_run r;
	h_ringlog(&r, "stop", name, NULL);
	atomic_store_explicit(&stopped, 1, memory_order_release);
	proc_sleep_ms(50);
	atomic_store(&quit, 1);
	uint64_t written = 0, lost = 0;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		written += w[i].t.written;
		lost += w[i].t.lost;
		ASSERT_EQ_U64(w[i].t.other, 0);
		ASSERT_EQ_U64(w[i].nonzero_after, 0);
		ok(w[i].off_after_stop > 0, "round %d thread %d: writes after stop return 0 (%" PRIu64 ")",
		   round, i, w[i].off_after_stop);
	}
	diag("round %d: written %" PRIu64 " lost %" PRIu64, round, written, lost);
	ok(written > 0, "round %d: events written before the stop", round);

	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), written);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), lost);
	ASSERT_EQ_U64(h_kv(r.out, "bytes_lost"), lost * RECORD);
	ASSERT_EQ_U64(h_kv(r.out, "bytes_written"), written * RECORD);
	ASSERT_EQ_U64(h_kv(r.out, "corrupt_buffers"), 0);

	struct h_summary s;
	h_summarize(path, &s);
	ASSERT_EQ(s.open_err, 0);
	ASSERT_EQ_U64(s.damage, 0);
	ASSERT_EQ_U64(s.time_errors, 0);
	ASSERT_EQ_U64(s.events, written);
	ASSERT_EQ_U64(s.loss_events, lost);
	ASSERT_EQ_U64(s.loss_bytes, lost * RECORD);
	for (int i = 0; i < THREADS; i++) {
		struct h_thread *t = NULL;
		for (size_t k = 0; k < s.nthreads; k++)
			if (s.th[k].pid == (uint32_t)getpid() && s.th[k].tid == w[i].tid)
				t = &s.th[k];
		if (!ok(t != NULL, "round %d thread %d is in the file", round, i))
			continue;
		ASSERT_EQ_U64(t->events, w[i].t.written);
		ASSERT_EQ_U64(t->loss_events, w[i].t.lost);
		ASSERT_EQ_U64(t->order_errors, 0);
	}
	rlog_detach();
	unlink(path);
}

int main(void)
{
	for (int i = 0; i < ROUNDS; i++)
		round_run(i);
	return done_testing();
}
