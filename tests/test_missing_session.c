/*
 * test_missing_session - tracing without a session is a quiet no-op: every
 * write returns 0, nothing is enabled, attach says why.  `ringlog emit`
 * fails with one exact line.  After a session stops, writes return 0 and
 * do not crash; attaching again to a new session of the same name sends
 * the writes there, and only there.
 */
#include "harness.h"
#include "atomics.h"
#include "wake.h"

#include "tap.h"

static int write_seq(uint64_t seq)
{
	uint64_t v[2] = { seq, 0 };
	return rlog_write(1024, v, sizeof v);
}

static void no_session(void)
{
	char name[64], line[256];
	/* A name whose wake-registry hash no running session holds now (a
	 * process waiting for a session is woken by any of that hash, and
	 * other tests run sessions meanwhile: docs/FORMAT.md). */
	struct rlog_wake_registry *reg = rlog__wake_open();
	for (int k = 0;; k++) {
		snprintf(name, sizeof name, "nope-%d-%d", (int)getpid(), k);
		if (reg == NULL || load_relaxed(&reg->count[rlog__wake_hash(name)]) == 0)
			break;
	}
	uint64_t v = 1;

	/* Never attached. */
	ASSERT_EQ(rlog_write(1024, &v, sizeof v), 0);
	ASSERT_EQ(rlog_write_flagged(1024, 5, &v, sizeof v), 0);
	ASSERT_EQ(rlog_write(RLOG_ID_RAW_U8, NULL, 0), 0);
	ok(!rlog_enabled(0), "category 0 is off without a session");
	ok(!rlog_enabled(63), "category 63 is off without a session");
	ok(!rlog_enabled(64), "category 64 does not exist");
	ASSERT_EQ(rlog_flush_thread(), -ENOENT);
	ASSERT_EQ(rlog_detach(), -ENOENT);
	/* Reserved and out-of-range IDs are refused before anything else. */
	ASSERT_EQ(rlog_write(RLOG_ID_FLAGGED, &v, sizeof v), -EINVAL);
	ASSERT_EQ(rlog_write(0, &v, sizeof v), -EINVAL);
	ASSERT_EQ(rlog_write(15, &v, sizeof v), -EINVAL);
	ASSERT_EQ(rlog_write(RLOG_ID_MAX + 1, &v, sizeof v), -EINVAL);
	ASSERT_EQ(rlog_write_flagged(3, 1, &v, sizeof v), -EINVAL);

	/* Attach to nothing. */
	ASSERT_EQ(rlog_attach(name), -ENOENT);
	ASSERT_EQ(rlog_write(1024, &v, sizeof v), 0);
	ok(!rlog_enabled(0), "still off after a failed attach");
	ASSERT_EQ(rlog_detach(), -ENOENT);
	ASSERT_EQ(rlog_attach("bad/name"), -EINVAL);
	ASSERT_EQ(rlog_attach(""), -EINVAL);
	ASSERT_EQ(rlog_attach(".."), -EINVAL);
	setenv("RINGLOG_SESSION", name, 1);
	ASSERT_EQ(rlog_attach(NULL), -ENOENT);
	setenv("RINGLOG_SESSION", "bad name", 1);
	ASSERT_EQ(rlog_attach(NULL), -EINVAL);
	unsetenv("RINGLOG_SESSION");
	ASSERT_EQ(rlog_write(1024, &v, sizeof v), 0);

	struct rlog_thread_stats st;
	ASSERT_EQ(rlog_thread_stats(&st), 0);
	ASSERT_EQ_U64(st.events_written + st.events_lost + st.bytes_lost, 0);
	ASSERT_EQ(rlog_thread_stats(NULL), -EINVAL);

	/* ringlog emit. */
	struct h_run r;
	h_ringlog(&r, "emit", name, "1024", NULL);
	ASSERT_EQ(r.status, 1);
	snprintf(line, sizeof line, "ringlog: emit: no session named '%s'\n", name);
	ASSERT_STREQ(r.err, line);
	ASSERT_STREQ(r.out, "");
	h_ringlog(&r, "emit", "bad/name", "1024", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, "ringlog: emit: invalid session name 'bad/name'\n");
	h_ringlog(&r, "emit", name, "3", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, "ringlog: emit: ID '3': expected 16 to 16383 (IDs below 16 are reserved)\n");
	h_ringlog(&r, "emit", name, "16384", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err,
		     "ringlog: emit: ID '16384': expected 16 to 16383 (IDs below 16 are reserved)\n");
	h_ringlog(&r, "emit", name, "1024", "--payload", "0g", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, "ringlog: emit: --payload: '0g' is not a hex byte\n");
	h_ringlog(&r, "emit", name, "1024", "--payload", "abc", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, "ringlog: emit: --payload: expected an even number of hex digits, at "
			    "most 65535 bytes\n");
	h_ringlog(&r, "emit", name, NULL);
	ASSERT_EQ(r.status, 2);
	ASSERT_STREQ(r.err, "ringlog: emit: missing event ID\n"
			    "usage: ringlog emit (NAME | --ring PATH) ID [--count N] [--payload HEX] "
			    "[--flag F]\n");
	h_ringlog(&r, "emit", name, "1024", "--flag", "65536", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, "ringlog: emit: --flag '65536': expected 0 to 65535\n");
}

static void after_stop(void)
{
	const char *name = h_session("ms");
	char path1[256], path2[256];
	snprintf(path1, sizeof path1, "%s", h_path("ms1"));
	snprintf(path2, sizeof path2, "%s", h_path("ms2"));
	struct h_run r;

	h_start(name, path1, "4", "4");
	ASSERT_EQ(rlog_attach(name), 0);
	ok(rlog_enabled(0) && rlog_enabled(63), "all categories on by default");
	uint64_t ones = 0;
	for (uint64_t i = 1; i <= 10; i++)
		ones += write_seq(i) == 1;
	ASSERT_EQ_U64(ones, 10);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 10);

	/* Stopped: writes are no-ops, from this thread and a new one. */
	uint64_t zeros = 0;
	for (uint64_t i = 11; i <= 1000; i++)
		zeros += write_seq(i) == 0;
	ASSERT_EQ_U64(zeros, 990);
	ok(!rlog_enabled(0), "nothing enabled after the stop");
	ASSERT_EQ(rlog_flush_thread(), 0);

	/* A new session of the same name: the old attachment does not write
	 * into it; a new attach does. */
	h_start(name, path2, "4", "4");
	ASSERT_EQ(write_seq(5000), 0);
	ASSERT_EQ(rlog_attach(name), 0);
	ones = 0;
	for (uint64_t i = 1; i <= 50; i++)
		ones += write_seq(i) == 1;
	ASSERT_EQ_U64(ones, 50);
	struct rlog_thread_stats st;
	ASSERT_EQ(rlog_thread_stats(&st), 0);
	/* Since the thread first wrote: both sessions. */
	ASSERT_EQ_U64(st.events_written, 60);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 50);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), 0);
	ASSERT_EQ(write_seq(51), 0);

	struct h_summary s;
	h_summarize(path1, &s);
	ASSERT_EQ(s.open_err, 0);
	ASSERT_EQ_U64(s.damage, 0);
	ASSERT_EQ_U64(s.events, 10);
	ASSERT_EQ((int)s.nthreads, 1);
	ASSERT_EQ_U64(s.th[0].last_seq, 10);
	ASSERT_EQ_U64(s.th[0].order_errors, 0);
	h_summarize(path2, &s);
	ASSERT_EQ(s.open_err, 0);
	ASSERT_EQ_U64(s.damage, 0);
	ASSERT_EQ_U64(s.events, 50);
	ASSERT_EQ_U64(s.loss_records, 0);
	ASSERT_EQ((int)s.nthreads, 1);
	ASSERT_EQ_U64(s.th[0].last_seq, 50);
	ASSERT_EQ_U64(s.th[0].order_errors, 0);
	rlog_detach();
	unlink(path1);
	unlink(path2);
}

int main(void)
{
	no_session();
	after_stop();
	return done_testing();
}
