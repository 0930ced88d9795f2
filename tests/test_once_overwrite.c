/*
 * test_once_overwrite - every event once in overwrite mode with a file
 * (docs/FORMAT.md, "Overwrite mode"): two threads write numbered events
 * (tests/numbered.h) flat out for a while into a small pool of 4 KiB
 * buffers, so that the daemon falls behind and producers reuse full
 * buffers.  Three runs: 16 buffers, 64 buffers, and 16 buffers with the
 * daemon stopped (SIGSTOP) for a moment in the middle.  In each:
 *
 *   - no event is in the file twice, none that was not written, no block
 *     is damaged;
 *   - the events written and not in the file are exactly the file's
 *     OVERWRITTEN losses, and no write returned -ENOBUFS (the daemon
 *     holds at most half the pool; two threads own two buffers), nor did
 *     the file count any other loss;
 *   - `ringlog stop`'s events_written and events_lost are the file's, and
 *     events_overwritten its OVERWRITTEN losses.
 */
#include "harness.h"
#include "numbered.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#define THREADS 2
#define CAP (1ull << 26) /* seqs a writer's bitmap holds (lazily backed) */

static struct num_set *set;
static _Atomic int running;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *produce(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg;
	while (atomic_load_explicit(&running, memory_order_relaxed))
		for (int i = 0; i < 256; i++)
			num_write(set, w);
	rlog_flush_thread();
	return NULL;
}

static void run(const char *tag, const char *buffers, int ms, int stop_ms)
{
	const char *name = h_session(tag);
	char path[256];
	snprintf(path, sizeof path, "%s", h_path(tag));
	unlink(path);
	struct h_run r;
	h_ringlog(&r, "start", name, "-o", path, "--mode", "overwrite", "--buffer-size", "4",
		  "--buffers", buffers, NULL);
	if (r.status != 0) {
		printf("Bail out! ringlog start %s: %s\n", name, r.err);
		exit(1);
	}
	pid_t daemon = 0;
	if (stop_ms) {
		h_ringlog(&r, "query", name, NULL);
		daemon = (pid_t)h_kv(r.out, "daemon_pid");
		BAIL_IF(daemon <= 0, "no daemon pid");
	}
	ASSERT_EQ(rlog_attach(name), 0);
	set = num_new(THREADS, CAP);
	atomic_store(&running, 1);
	pthread_t th[THREADS];
	for (unsigned i = 0; i < THREADS; i++)
		BAIL_IF(pthread_create(&th[i], NULL, produce, (void *)(uintptr_t)i) != 0,
			"pthread_create");
	uint64_t t0 = now_ns();
	if (stop_ms) {
		nanosleep(&(struct timespec){ 0, (long)(ms / 3) * 1000000L }, NULL);
		kill(daemon, SIGSTOP);
		nanosleep(&(struct timespec){ 0, (long)stop_ms * 1000000L }, NULL);
		kill(daemon, SIGCONT);
	}
	while (now_ns() - t0 < (uint64_t)ms * 1000000u)
		nanosleep(&(struct timespec){ 0, 10000000L }, NULL);
	atomic_store(&running, 0);
	for (unsigned i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	ASSERT_EQ(rlog_detach(), 0);

	struct h_run stop;
	h_ringlog(&stop, "stop", name, NULL);
	ASSERT_EQ(stop.status, 0);
	for (unsigned i = 0; i < THREADS; i++)
		ASSERT_EQ_U64(set->w[i].returned_other + set->w[i].returned_off, 0);
	uint64_t written = num_written(set), lost = num_lost(set);
	ASSERT_EQ_U64(written + lost, num_attempts(set));

	struct num_check c;
	num_check_file(set, path, &c);
	ASSERT_EQ(c.open_err, 0);
	uint64_t ow = c.loss_by_cause[RLOG_LOSS_OVERWRITTEN];
	uint64_t nobuf = c.loss_by_cause[RLOG_LOSS_NO_BUFFER];
	diag("%s: %" PRIu64 " written (%" PRIu64 " in the file, %" PRIu64
	     " overwritten), %" PRIu64 " -ENOBUFS", tag, written, c.present, ow, lost);
	ok(c.damage == 0, "%s: no damaged block (%zu)", tag, c.damage);
	num_assert_once(set, &c, ow, tag);
	ok(ow > 0, "%s: the daemon fell behind: %" PRIu64 " events overwritten", tag, ow);
	ASSERT_EQ_U64(nobuf, lost);
	/* Two threads own two buffers, the daemon holds at most half the
	 * pool: a producer always finds one to take. */
	ASSERT_EQ_U64(lost, 0);
	ASSERT_EQ_U64(c.loss_events, ow + nobuf);
	ASSERT_EQ_U64(c.other_events, 0);
	ASSERT_EQ_U64(h_kv(stop.out, "events_written"), c.present);
	ASSERT_EQ_U64(h_kv(stop.out, "events_lost"), c.loss_events);
	ASSERT_EQ_U64(h_kv(stop.out, "events_overwritten"), ow);
	ASSERT_EQ_U64(h_kv(stop.out, "corrupt_buffers"), 0);
	unlink(path);
}

int main(void)
{
	run("ow16", "16", 1500, 0);
	run("ow64", "64", 1000, 0);
	run("owstop", "16", 1500, 300);
	return done_testing();
}
