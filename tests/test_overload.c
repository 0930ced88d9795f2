/*
 * test_overload - a pool of two 4 KiB buffers and 3 threads writing as fast
 * as they can: most events are lost, and every one of them is accounted
 * for exactly.  Per thread, the writes that returned 1 are the thread's
 * events in the file, and the writes that returned -ENOBUFS are the
 * thread's DATA_LOSS records; in total, the stop statistics say the same.
 */
#include "harness.h"

#include <pthread.h>
#include <sys/syscall.h>

#include "tap.h"

#define THREADS 3
#define EVENTS 200000u
#define RECORD 24u /* header + timestamp + 16-byte payload */

struct worker {
	uint32_t tid;
	uint64_t written, lost, lost_busy, off, other;
	struct rlog_thread_stats st;
	int st_rc;
};

static void *produce(void *arg)
{
	struct worker *w = arg;
	w->tid = (uint32_t)syscall(SYS_gettid);
	for (uint64_t i = 1; i <= EVENTS; i++) {
		uint64_t payload[2] = { i, ~i };
		int r = rlog_write(1024, payload, sizeof payload);
		if (r == 1)
			w->written++;
		else if (r == -ENOBUFS)
			w->lost++;
		else if (r == -EBUSY)
			w->lost_busy++;
		else if (r == 0)
			w->off++;
		else
			w->other++;
	}
	w->st_rc = rlog_thread_stats(&w->st);
	return NULL;
}

int main(void)
{
	const char *name = h_session("ovl");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("ovl"));
	h_start(name, path, "4", "2");
	ASSERT_EQ(rlog_attach(name), 0);

	pthread_t th[THREADS];
	struct worker w[THREADS];
	memset(w, 0, sizeof w);
	for (int i = 0; i < THREADS; i++)
		BAIL_IF(pthread_create(&th[i], NULL, produce, &w[i]) != 0, "pthread_create");
	uint64_t written = 0, lost = 0;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		written += w[i].written;
		lost += w[i].lost + w[i].lost_busy;
		/* Every write is 1 or -ENOBUFS: no signal handler, session on. */
		ASSERT_EQ_U64(w[i].written + w[i].lost, EVENTS);
		ASSERT_EQ_U64(w[i].lost_busy, 0);
		ASSERT_EQ_U64(w[i].off, 0);
		ASSERT_EQ_U64(w[i].other, 0);
		ASSERT_EQ(w[i].st_rc, 0);
		ASSERT_EQ_U64(w[i].st.events_written, w[i].written);
		ASSERT_EQ_U64(w[i].st.events_lost, w[i].lost);
		ASSERT_EQ_U64(w[i].st.bytes_lost, w[i].lost * RECORD);
	}
	diag("written %" PRIu64 ", lost %" PRIu64, written, lost);
	ok(lost > 0, "the overloaded pool lost events (%" PRIu64 ")", lost);
	ok(written > 0, "some events were written (%" PRIu64 ")", written);

	struct h_run r;
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), written);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), lost);
	ASSERT_EQ_U64(h_kv(r.out, "bytes_lost"), lost * RECORD);
	ASSERT_EQ_U64(h_kv(r.out, "bytes_written"), written * RECORD);
	ASSERT_EQ_U64(h_kv(r.out, "events_written") + h_kv(r.out, "events_lost"),
		      (uint64_t)THREADS * EVENTS);
	ASSERT_EQ_U64(h_kv(r.out, "corrupt_buffers"), 0);
	ASSERT_EQ_U64(h_kv(r.out, "log_buffers_lost"), 0);

	struct h_summary s;
	h_summarize(path, &s);
	ASSERT_EQ(s.open_err, 0);
	ASSERT_EQ_U64(s.damage, 0);
	ASSERT_EQ_U64(s.markers, 1);
	ASSERT_EQ_U64(s.time_errors, 0);
	ASSERT_EQ_U64(s.events, written);
	ASSERT_EQ_U64(s.loss_events, lost);
	ASSERT_EQ_U64(s.loss_bytes, lost * RECORD);
	ASSERT_EQ_U64(s.loss_by_cause[RLOG_LOSS_NO_BUFFER], lost);
	ok(s.loss_records >= 1, "DATA_LOSS records: %" PRIu64, s.loss_records);
	ASSERT_EQ((int)s.nthreads, THREADS);
	for (int i = 0; i < THREADS; i++) {
		struct h_thread *t = NULL;
		for (size_t k = 0; k < s.nthreads; k++)
			if (s.th[k].pid == (uint32_t)getpid() && s.th[k].tid == w[i].tid)
				t = &s.th[k];
		if (!ok(t != NULL, "thread %d (tid %u) is in the file", i, w[i].tid))
			continue;
		ASSERT_EQ_U64(t->events, w[i].written);
		ASSERT_EQ_U64(t->loss_events, w[i].lost);
		ASSERT_EQ_U64(t->loss_bytes, w[i].lost * RECORD);
		ASSERT_EQ_U64(t->order_errors, 0);
	}
	rlog_detach();
	unlink(path);
	return done_testing();
}
