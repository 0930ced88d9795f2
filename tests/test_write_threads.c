/*
 * test_write_threads - 1 thread and 4 threads x 1,000,000 events into a
 * live session with enough buffers: every event reaches the file, in order
 * per thread, and the statistics say so exactly.
 */
#include <pthread.h>

#include "harness.h"
#include "tap.h"

#define EVENTS 1000000u

struct worker {
	struct h_tally t;
};

static void *produce(void *arg)
{
	struct worker *w = arg;
	for (uint64_t i = 1; i <= EVENTS; i++) {
		uint64_t payload[2] = { i, i * 3 };
		h_tally_add(&w->t, rlog_write(1024, payload, sizeof payload));
	}
	return NULL;
}

static void run(const char *tag, int nthreads)
{
	const char *name = h_session(tag);
	char path[256];
	snprintf(path, sizeof path, "%s", h_path(tag));
	/* 24-byte records: 4M events need ~6000 buffers of 16 KiB. */
	h_start(name, path, "16", "8192");
	ASSERT_EQ(rlog_attach(name), 0);

	pthread_t th[4];
	struct worker w[4];
	memset(w, 0, sizeof w);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, produce, &w[i]);
	uint64_t written = 0, lost = 0, off = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		written += w[i].t.written;
		lost += w[i].t.lost;
		off += w[i].t.off + w[i].t.other;
	}
	ASSERT_EQ_U64(written, (uint64_t)nthreads * EVENTS);
	ASSERT_EQ_U64(lost, 0);
	ASSERT_EQ_U64(off, 0);

	struct h_run r;
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), (uint64_t)nthreads * EVENTS);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), 0);
	ASSERT_EQ_U64(h_kv(r.out, "bytes_lost"), 0);
	ASSERT_EQ_U64(h_kv(r.out, "bytes_written"), (uint64_t)nthreads * EVENTS * 24);
	ok(h_kv(r.out, "buffers_written") >= (uint64_t)nthreads * EVENTS * 24 / 16384,
	   "buffers_written %" PRIu64 " covers the data", h_kv(r.out, "buffers_written"));
	ASSERT_STREQ(r.err, "");

	struct h_summary s;
	h_summarize(path, &s);
	ASSERT_EQ(s.open_err, 0);
	ASSERT_EQ_U64(s.damage, 0);
	ASSERT_EQ_U64(s.markers, 1);
	ASSERT_EQ_U64(s.events, (uint64_t)nthreads * EVENTS);
	ASSERT_EQ_U64(s.loss_records, 0);
	ASSERT_EQ_U64(s.time_errors, 0);
	ASSERT_EQ((int)s.nthreads, nthreads);
	for (size_t i = 0; i < s.nthreads; i++) {
		ok(s.th[i].pid == (uint32_t)getpid(), "thread %zu is ours", i);
		ASSERT_EQ_U64(s.th[i].events, EVENTS);
		ASSERT_EQ_U64(s.th[i].order_errors, 0);
		ASSERT_EQ_U64(s.th[i].last_seq, EVENTS);
	}
	rlog_detach();
	unlink(path);
}

int main(void)
{
	run("w1", 1);
	run("w4", 4);
	return done_testing();
}
