/*
 * test_live_reader - the reader on a live stream (ringlog/reader.h's
 * rlog_live_*, src/reader/live.c) on a real session: this process opens
 * a real-time session's stream (rlog_live_open) and reads its deliveries
 * through the reader API
 * from its first delivery on (the daemon has taken it as a consumer) while
 * it writes numbered events (tests/numbered.h) from two threads,
 * then stops the session and reads the stream to its end.  Every event
 * written is in the stream exactly once, none extra, no loss told (the
 * consumer keeps up: it reads between writes, and the socket takes 1 MiB),
 * the end account adds up (no problem), and the session's file holds the
 * same events once too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "harness.h"
#include "numbered.h"
#include "tap.h"

#define WRITERS 2
#define PER_WRITER 3000

static struct num_set *set;
static struct h_run r;

static void *writer(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg;
	for (int i = 0; i < PER_WRITER; i++) {
		num_write(set, w);
		if (i % 256 == 255)
			proc_sleep_ms(2); /* the daemon's flush timer drains as it goes */
	}
	rlog_flush_thread();
	return NULL;
}

/* Reads the deliveries there are now (or, with until_end, to the end of
 * the stream; with until, until there are that many deliveries; for at
 * most 30 s).  Returns what the live reader returned last. */
static int read_stream(struct rlog_live *lr, struct num_seen *sn, struct num_check *c,
		       uint64_t *deliveries, bool until_end, uint64_t until)
{
	for (int waits = 0; waits < 3000;) {
		if (until > 0 && *deliveries >= until)
			return 1;
		struct rlog_reader *rd;
		int rc = rlog_live_next(lr, &rd);
		if (rc == 1) {
			(*deliveries)++;
			num_check_reader(set, sn, rd, "the live stream", c);
			continue;
		}
		if (rc != -EAGAIN || (!until_end && until == 0))
			return rc;
		struct pollfd p = { rlog_live_fd(lr), POLLIN, 0 };
		(void)poll(&p, 1, 10);
		waits++;
	}
	return -ETIMEDOUT;
}

int main(void)
{
	const char *name = h_session("live");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("live"));
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--mode", "real-time", "--flush-timer", "20ms",
		  "--buffer-size", "4", "--buffers", "2048", NULL);
	ASSERT_EQ(r.status, 0);
	struct rlog_live *lr;
	ASSERT_EQ(rlog_live_open(name, &lr), 0);
	struct rlog_live *none;
	ASSERT_EQ(rlog_live_open("no-such-session-here", &none), -ENOENT);
	ASSERT_EQ(rlog_live_open("../x", &none), -EINVAL);
	ASSERT_EQ(rlog_attach(name), 0);

	set = num_new(WRITERS, PER_WRITER + 8);
	struct num_seen sn;
	struct num_check c;
	num_check_begin(set, &sn, &c);
	uint64_t deliveries = 0;
	/* The daemon accepts a consumer on its next pass, and sends it what it
	 * drains from then on: its first delivery (block 0) says it is in. */
	ASSERT_EQ(read_stream(lr, &sn, &c, &deliveries, false, 1), 1);
	pthread_t th[WRITERS];
	for (unsigned w = 0; w < WRITERS; w++)
		ASSERT_EQ(pthread_create(&th[w], NULL, writer, (void *)(uintptr_t)w), 0);
	/* Read while they write: the consumer keeps up. */
	for (int i = 0; i < 200; i++) {
		int rc = read_stream(lr, &sn, &c, &deliveries, false, 0);
		if (rc != -EAGAIN)
			ok(0, "while writing: %d", rc);
		proc_sleep_ms(5);
	}
	for (unsigned w = 0; w < WRITERS; w++)
		pthread_join(th[w], NULL);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "realtime_buffers_lost"), 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), num_written(set));
	int rc = read_stream(lr, &sn, &c, &deliveries, true, 0);
	ASSERT_EQ(rc, 0);
	num_check_end(set, &sn, &c);
	ok(num_written(set) == (uint64_t)WRITERS * PER_WRITER,
	   "every write returned 1 (%" PRIu64 ")", num_written(set));
	num_assert_once(set, &c, 0, "the live stream");
	ok(deliveries >= 1, "%" PRIu64 " deliveries", deliveries);
	ASSERT_EQ_U64(c.loss_events, 0);
	ASSERT_EQ_U64(c.damage, 0);
	struct rlog_live_status st;
	ASSERT_EQ(rlog_live_status(lr, &st), 0);
	ok(st.ended && st.deliveries == deliveries, "ended after %" PRIu64 " deliveries",
	   st.deliveries);
	ok(st.missed_blocks == 0 && st.missed_events == 0, "no loss told");
	ASSERT_EQ(st.problems, 0);
	for (unsigned i = 0; rlog_live_problem(lr, i); i++)
		diag("problem: %s", rlog_live_problem(lr, i));
	rlog_live_close(lr);

	struct num_check fc;
	num_check_file(set, path, &fc);
	num_assert_once(set, &fc, 0, "the file");
	unlink(path);
	return done_testing();
}
