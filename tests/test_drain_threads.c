/*
 * test_drain_threads - a daemon with several drain threads (`ringlog start
 * --drain-threads N`, src/daemon/drain_workers.h) writes the file one
 * thread writes:
 *
 *   1. With 2 and with 4 drain threads, 4 producer threads write numbered
 *      events into 4 KiB buffers (many full buffers per pass, walked by
 *      the extra threads), each followed now and then by a flagged event
 *      (a record the walk stops at, which the daemon's decode takes on
 *      from there) and a thread name (metadata): `query` says
 *      drain_threads N, every event written is in the file exactly once,
 *      written + lost = emitted in the daemon's counts and in the file,
 *      no damage (block sequence numbers, checksums, records), no corrupt
 *      buffer.
 *      With 4 asked and the 3rd or the 1st extra thread failing to be
 *      created (RINGLOG_TEST_DRAIN_THREAD_FAIL): the session starts,
 *      `start` says "3 of 4" (or "1 of 4") in one line, query says
 *      drain_threads 3 (1), and the same checks hold.
 *   2. `--drain-threads` out of range is refused with its error line, and
 *      a session without it says drain_threads 1 (the default).
 */
#include "harness.h"

#include <pthread.h>

#include "numbered.h"
#include "tap.h"

#define WRITERS 4
#define EVENTS 40000u
#define FLAG_EVERY 61u  /* a flagged event after every 61st numbered one */
#define FLAG_ID 1032

static struct num_set *set;
static _Atomic uint64_t flagged_written, flagged_lost;

static void *writer(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg;
	char name[16];
	snprintf(name, sizeof name, "writer%u", w);
	rlog_thread_name(name);
	for (unsigned i = 1; i <= EVENTS; i++) {
		num_write(set, w);
		if (i % FLAG_EVERY == 0) {
			uint32_t v = i;
			int rc = rlog_write_flagged(FLAG_ID, (uint16_t)w, &v, sizeof v);
			if (rc == 1)
				flagged_written++;
			else if (rc == -ENOBUFS || rc == -EBUSY)
				flagged_lost++;
		}
	}
	return NULL;
}

/* threads asked; fail: RINGLOG_TEST_DRAIN_THREAD_FAIL (the Kth extra
 * thread and those after it cannot be created), or NULL; running: the
 * threads query then shows. */
static void run(const char *threads, const char *fail, unsigned running)
{
	const char *name = h_session("drainmt");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("drainmt"));
	struct h_run r;
	unlink(path);
	if (fail)
		setenv("RINGLOG_TEST_DRAIN_THREAD_FAIL", fail, 1);
	h_ringlog(&r, "start", name, "-o", path, "--buffer-size", "4", "--buffers", "512",
		  "--drain-threads", threads, NULL);
	unsetenv("RINGLOG_TEST_DRAIN_THREAD_FAIL");
	ASSERT_EQ(r.status, 0);
	char line[200] = "";
	if (running < strtoul(threads, NULL, 10))
		snprintf(line, sizeof line, "ringlog: start: %s: %u of %s drain threads running: no "
			 "more could be created\n", name, running, threads);
	ASSERT_STREQ(r.err, line);
	h_ringlog(&r, "query", name, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "drain_threads"), running);
	ASSERT_EQ(rlog_attach(name), 0);
	set = num_new(WRITERS, EVENTS + 2);
	flagged_written = flagged_lost = 0;
	pthread_t t[WRITERS];
	for (unsigned i = 0; i < WRITERS; i++)
		ASSERT_EQ(pthread_create(&t[i], NULL, writer, (void *)(uintptr_t)i), 0);
	for (unsigned i = 0; i < WRITERS; i++)
		pthread_join(t[i], NULL);
	rlog_detach();
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	uint64_t written = num_written(set) + flagged_written;
	uint64_t lost = num_lost(set) + flagged_lost;
	ASSERT_EQ_U64(written + lost, WRITERS * (EVENTS + EVENTS / FLAG_EVERY));
	h_check_identity(&r, path, written, lost);
	const char *paths[1] = { path };
	struct num_check c;
	num_check_files(set, paths, 1, &c);
	ASSERT_EQ(c.open_err, 0);
	char what[64];
	snprintf(what, sizeof what, "--drain-threads %s", threads);
	num_assert_once(set, &c, 0, what);
	ASSERT_EQ_U64(c.loss_events, lost);
	diag("%s: %" PRIu64 " written, %" PRIu64 " lost", what, written, lost);
	unlink(path);
}

static void options(void)
{
	struct h_run r;
	const char *name = h_session("drainmtopt");
	h_ringlog(&r, "start", name, "-o", h_path("drainmtopt"), "--drain-threads", "0", NULL);
	ok(r.status != 0, "--drain-threads 0: exit %d", r.status);
	ok(strstr(r.err, "ringlog: start: --drain-threads '0': expected a number from 1 to 64") != NULL,
	   "--drain-threads 0 refused: %s", r.err);
	h_ringlog(&r, "start", name, "-o", h_path("drainmtopt"), "--drain-threads", "65", NULL);
	ok(r.status != 0 && strstr(r.err, "--drain-threads '65'") != NULL, "--drain-threads 65 refused");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("drainmtopt"));
	h_start(name, path, NULL, NULL);
	h_ringlog(&r, "query", name, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "drain_threads"), 1);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	unlink(path);
}

int main(void)
{
	run("2", NULL, 2);
	run("4", NULL, 4);
#if RLOG_TEST_HOOKS
	/* Threads that cannot be created: the daemon drains with those it
	 * got (its own at least), start says so in one line, query shows
	 * how many run, and the file is the same. */
	run("4", "3", 3);
	run("4", "1", 1);
#endif
	options();
	return done_testing();
}
