/*
 * test_burst_pool - a burst the pool could hold loses nothing, even into a
 * new session whose pool is still at MinimumBuffers (docs/FORMAT.md,
 * "Growing the pool": a producer that finds no free buffer grows the pool
 * by the buffer it needs, without waiting for the daemon):
 *
 *   1. The daemon stopped (SIGSTOP) right after start, a pool of 4 growing
 *      to 12 buffers of 4 KiB: one thread writes numbered events until
 *      the first -ENOBUFS.  It got there only after the 12 buffers were
 *      full (more events than 11 buffers hold; the old producer lost the
 *      first event past 4), `query` says number_of_buffers 12 while the
 *      daemon is still stopped, and after stop every event written is in
 *      the file exactly once, the lost ones counted: written + lost =
 *      emitted, in the daemon's counts and in the file.
 *   2. Three new sessions with the default pool (32 of 1024 buffers of 16
 *      KiB): one thread writes 250,000 16-byte numbered events flat out,
 *      with the daemon running; none is lost (the old producer lost events
 *      in most runs on a loaded 2-core machine), each is in the file once.
 *   3. A steady stream well below the daemon's ceiling (1 M events/s for
 *      300 ms, paced by the clock) into a new default session: none lost.
 */
#include "harness.h"

#include <signal.h>
#include <time.h>

#include "numbered.h"
#include "tap.h"

#define BURST 250000u
#define BURST_RUNS 3

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Stops the session, then checks the accounting identity and every
 * numbered event of set s in the file once. */
static void stop_and_check(const char *name, const char *path, const struct num_set *s,
			   const char *what)
{
	struct h_run r;
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	h_check_identity(&r, path, num_written(s), num_lost(s));
	const char *paths[1] = { path };
	struct num_check c;
	num_check_files(s, paths, 1, &c);
	ASSERT_EQ(c.open_err, 0);
	ok(c.present == num_written(s) && c.duplicates == 0 && c.extras == 0 && c.missing == 0,
	   "%s: %" PRIu64 " events written, each in the file once (%" PRIu64 " duplicates, %" PRIu64
	   " extras, %" PRIu64 " missing)", what, c.present, c.duplicates, c.extras, c.missing);
	ASSERT_EQ_U64(c.loss_events, num_lost(s));
	unlink(path);
}

/* 1. No daemon to grow the pool: the producer grows it to the maximum. */
static void grown_by_producer(void)
{
	const char *name = h_session("burstgrow");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("burstgrow"));
	struct h_run r;
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--buffer-size", "4", "--min-buffers", "4",
		  "--max-buffers", "12", NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "query", name, NULL);
	pid_t daemon = (pid_t)h_kv(r.out, "daemon_pid");
	ASSERT_EQ(daemon > 0, 1);
	ASSERT_EQ_U64(h_kv(r.out, "number_of_buffers"), 4);
	ASSERT_EQ(rlog_attach(name), 0);
	ASSERT_EQ(kill(daemon, SIGSTOP), 0);
	struct num_set *s = num_new(1, 100000);
	while (num_write(s, 0) == 1 && s->w[0].seq < 90000)
		;
	uint64_t before_loss = num_written(s);
	/* 4 KiB holds 170 24-byte records (fewer with the thread's name
	 * record): 11 buffers hold more than 1,800, 4 fewer than 700. */
	ok(num_lost(s) == 1 && before_loss > 11 * 160,
	   "%" PRIu64 " events before the first loss (12 buffers' worth)", before_loss);
	for (int i = 0; i < 100; i++)
		num_write(s, 0); /* lost too: the pool is at its maximum */
	ASSERT_EQ_U64(num_lost(s), 101);
	h_ringlog(&r, "query", name, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "number_of_buffers"), 12);
	ASSERT_EQ(kill(daemon, SIGCONT), 0);
	rlog_detach();
	stop_and_check(name, path, s, "grown by the producer");
}

/* 2. A burst at full speed into a new default session. */
static void burst_default(int run)
{
	const char *name = h_session("burst");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("burst"));
	h_start(name, path, NULL, NULL);
	ASSERT_EQ(rlog_attach(name), 0);
	struct num_set *s = num_new(1, BURST + 2);
	for (unsigned i = 0; i < BURST; i++)
		num_write(s, 0);
	rlog_detach();
	char what[64];
	snprintf(what, sizeof what, "burst %d", run);
	ok(num_lost(s) == 0 && num_written(s) == BURST, "%s: %" PRIu64 " of %u written, %" PRIu64
	   " lost", what, num_written(s), BURST, num_lost(s));
	stop_and_check(name, path, s, what);
}

/* 3. A steady stream at 1 M events/s, 300 ms, paced by the clock. */
static void steady_default(void)
{
	const char *name = h_session("steady");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("steady"));
	h_start(name, path, NULL, NULL);
	ASSERT_EQ(rlog_attach(name), 0);
	struct num_set *s = num_new(1, 400000);
	uint64_t t0 = now_ns(), due = 0;
	for (uint64_t t = t0; t - t0 < 300000000u; t = now_ns()) {
		uint64_t target = (t - t0) / 1000u; /* 1 per microsecond */
		for (; due < target; due++)
			num_write(s, 0);
	}
	rlog_detach();
	ok(num_lost(s) == 0 && num_written(s) == due, "steady: %" PRIu64 " of %" PRIu64
	   " written at 1 M/s, %" PRIu64 " lost", num_written(s), due, num_lost(s));
	stop_and_check(name, path, s, "steady");
}

int main(void)
{
	grown_by_producer();
	for (int i = 1; i <= BURST_RUNS; i++)
		burst_default(i);
	steady_default();
	return done_testing();
}
