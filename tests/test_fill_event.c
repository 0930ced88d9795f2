/*
 * test_fill_event - the fill event (CeLog's fSetEvent handshake): producers
 * that pass the high-water mark wake the sleeping daemon, at most once per
 * sleep, never once per event.
 *
 * A pool of 64 x 4 KiB buffers (high water 45) gets 20 bursts of 300 KiB
 * (75 buffers each, faster than the daemon's 10 ms poll), with 50 ms of quiet
 * between bursts in which the daemon goes back to sleep.  Each burst must
 * wake it through the futex at least once in all (the `wakeups` statistic
 * counts wake-ups a producer caused), and there can be no more wake-ups than
 * buffers (one syscall per buffer at most, against 12,800 events per burst).
 */
#include <time.h>

#include "harness.h"
#include "tap.h"

#define BURSTS 20
#define PER_BURST (300 * 1024 / 24)

int main(void)
{
	const char *name = h_session("fill");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("fill"));
	h_start(name, path, "4", "64");
	ASSERT_EQ(rlog_attach(name), 0);
	uint64_t ones = 0, lost = 0;
	for (int b = 0; b < BURSTS; b++) {
		for (uint64_t i = 0; i < PER_BURST; i++) {
			uint64_t v[2] = { (uint64_t)b * PER_BURST + i + 1, 0 };
			int r = rlog_write(1024, v, sizeof v);
			ones += r == 1;
			lost += r < 0;
		}
		struct timespec quiet = { 0, 50 * 1000000L };
		nanosleep(&quiet, NULL);
	}
	rlog_detach();
	struct h_run r;
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	uint64_t wakeups = h_kv(r.out, "wakeups"), buffers = h_kv(r.out, "buffers_written");
	diag("written %" PRIu64 " lost %" PRIu64 " buffers %" PRIu64 " wakeups %" PRIu64, ones, lost,
	     buffers, wakeups);
	ASSERT_EQ_U64(ones + lost, (uint64_t)BURSTS * PER_BURST);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), ones);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), lost);
	ok(wakeups >= 1, "producers woke the daemon (%" PRIu64 " wake-ups)", wakeups);
	ok(wakeups <= buffers, "at most one wake-up per buffer (%" PRIu64 " <= %" PRIu64 ")", wakeups,
	   buffers);
	ok(wakeups < (uint64_t)BURSTS * PER_BURST / 100, "far fewer wake-ups than events");
	unlink(path);
	return done_testing();
}
