/*
 * test_starve - a thread that finds the pool exhausted (discard mode) looks
 * for a free buffer at most once per 10 us (src/lib/write.c, starve_ticks),
 * not at every write, and no longer once buffers are free again:
 *
 *   1. The daemon stopped (SIGSTOP), a thread fills the 4 x 4 KiB pool and
 *      writes 200,000 events more, timed and untimed: each returns
 *      -ENOBUFS, and the searches of the free bitmap (counted by a test
 *      hook) are at most one per 8 us of the time the writes took, plus
 *      two (10 us by the session's tick rate, with room for its
 *      calibration): far fewer than the writes.
 *   2. The daemon continued and the pool drained (`ringlog flush`), then 2
 *      ms later: the next untimed write and the next timed write each
 *      return 1 (a back-off that outlived its window would lose them).
 *   3. Stop: emitted = written + lost exactly, in the daemon's counts and
 *      in the file.
 */
#include "harness.h"

#include <signal.h>
#include <time.h>

#include "lib/producer.h"
#include "tap.h"

#define LOST_WRITES 200000u

static _Atomic uint64_t searches;

static void count_hook(int point)
{
	if (point == RLOG__HOOK_STARVED)
		atomic_fetch_add(&searches, 1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Waits until process pid is stopped (state T in /proc/PID/stat), 2 s
 * at most. */
static bool stopped(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	for (int i = 0; i < 2000; i++) {
		char line[256] = "";
		FILE *f = fopen(path, "r");
		bool got = f && fgets(line, sizeof line, f) != NULL;
		if (f)
			fclose(f);
		const char *rp = got ? strrchr(line, ')') : NULL;
		if (rp && (rp[2] == 'T' || rp[2] == 't'))
			return true;
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	return false;
}

int main(void)
{
	const char *name = h_session("starve");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("starve"));
	h_start(name, path, "4", "4");
	struct h_run q;
	h_ringlog(&q, "query", name, NULL);
	pid_t daemon = (pid_t)h_kv(q.out, "daemon_pid");
	ASSERT_EQ(daemon > 0, 1);
	ASSERT_EQ(rlog_attach(name), 0);

	/* 1. The daemon stopped: fill the pool, then starve. */
	ASSERT_EQ(kill(daemon, SIGSTOP), 0);
	ok(stopped(daemon), "the daemon is stopped");
	struct h_tally t = { 0 };
	uint64_t v[2] = { 0, 0 }, filled = 0;
	while (h_tally_add(&t, rlog_write(1024, v, 16)) == 1 && filled < 100000)
		v[0] = ++filled;
	ok(t.lost == 1 && filled > 0, "the pool is full after %llu events",
	   (unsigned long long)filled);
	atomic_store(&rlog__test_hook, count_hook);
	uint64_t t0 = now_ns();
	for (unsigned i = 0; i < LOST_WRITES; i++) {
		v[0] = i;
		h_tally_add(&t, i % 2 ? rlog_write_untimed(1025, v, 16) : rlog_write(1024, v, 16));
	}
	uint64_t elapsed_us = (now_ns() - t0) / 1000;
	atomic_store(&rlog__test_hook, NULL);
	ASSERT_EQ_U64(t.lost, LOST_WRITES + 1);
	uint64_t n = atomic_load(&searches);
	/* One per 10 us at most, by the session's tick rate: a bound of one
	 * per 8 us leaves room for that rate's calibration, and is still
	 * hundreds of times fewer than the writes. */
	ok(n >= 1 && n <= elapsed_us / 8 + 2,
	   "%llu searches of the free bitmap for %u lost writes in %llu us (at most one per 10 us)",
	   (unsigned long long)n, LOST_WRITES, (unsigned long long)elapsed_us);

	/* 2. Drained, then past the window: the next writes go in. */
	ASSERT_EQ(kill(daemon, SIGCONT), 0);
	struct h_run r;
	h_ringlog(&r, "flush", name, NULL);
	ASSERT_EQ(r.status, 0);
	struct timespec ms2 = { 0, 2000000 };
	nanosleep(&ms2, NULL);
	ASSERT_EQ(h_tally_add(&t, rlog_write_untimed(1025, v, 16)), 1);
	ASSERT_EQ(h_tally_add(&t, rlog_write(1024, v, 16)), 1);
	rlog_detach();

	/* 3. The accounting identity. */
	ASSERT_EQ_U64(t.off + t.other, 0);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	h_check_identity(&r, path, t.written, t.lost);
	unlink(path);
	return done_testing();
}
