/*
 * test_time_sync - records carry 32-bit timestamps; an event 2^31 ticks or
 * more after the thread's previous one gets a TIME_SYNC record (the full
 * 64-bit time) first, so the reader reconstructs exact times.  A thread
 * writes, sleeps past 2^31 ticks, writes twice more: the file has all
 * three events, the gap in ns as slept, and exactly one TIME_SYNC, between
 * the first two (visible with RLOG_READER_TIME_SYNC only).  Run with the
 * session's default tick source (the TSC here) and with
 * RINGLOG_CLOCK=monotonic (2^31 ns = 2.15 s).
 */
#include "harness.h"

#include <time.h>

#include "tap.h"

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void run(const char *tag, bool monotonic)
{
	const char *name = h_session(tag);
	char path[256];
	snprintf(path, sizeof path, "%s", h_path(tag));
	if (monotonic)
		setenv("RINGLOG_CLOCK", "monotonic", 1);
	h_start(name, path, "4", "4");
	unsetenv("RINGLOG_CLOCK");
	struct h_run r;
	h_ringlog(&r, "query", name, NULL);
	uint64_t freq = h_kv(r.out, "tick_freq_hz");
	BAIL_IF(freq == 0 || freq == UINT64_MAX, "no tick_freq_hz in query");
	if (monotonic)
		ASSERT_CONTAINS(r.out, "tick_source: monotonic\n");
	/* Sleep 0.1 s longer than 2^31 ticks, at least 1.1 s. */
	uint64_t wrap_ns = (uint64_t)((double)(UINT64_C(1) << 31) * 1e9 / (double)freq);
	uint64_t gap_ns = wrap_ns + 100000000u;
	if (gap_ns < 1100000000u)
		gap_ns = 1100000000u;
	diag("%s: tick_freq_hz %" PRIu64 ", 2^31 ticks = %.3f s, sleeping %.3f s", tag, freq,
	     wrap_ns / 1e9, gap_ns / 1e9);

	ASSERT_EQ(rlog_attach(name), 0);
	uint64_t v[2] = { 1, 0 };
	ASSERT_EQ(rlog_write(1024, v, sizeof v), 1);
	sleep_ns(gap_ns);
	v[0] = 2;
	ASSERT_EQ(rlog_write(1024, v, sizeof v), 1);
	v[0] = 3;
	ASSERT_EQ(rlog_write(1024, v, sizeof v), 1);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 3);
	/* The TIME_SYNC is a record but not an event. */
	ASSERT_EQ_U64(h_kv(r.out, "bytes_written"), 3 * 24);

	/* Default: no TIME_SYNC events. */
	struct rlog_reader *rd;
	ASSERT_EQ(rlog_reader_open(path, &rd), 0);
	struct rlog_event ev;
	int64_t t[3] = { 0, 0, 0 };
	int n = 0, syncs = 0;
	while (rlog_reader_next(rd, &ev) == 1) {
		if (ev.from_daemon || h_is_metadata(&ev))
			continue;
		if (ev.id == RLOG_ID_TIME_SYNC) {
			syncs++;
			continue;
		}
		uint64_t seq;
		memcpy(&seq, ev.payload, 8);
		if (n < 3 && seq == (uint64_t)n + 1)
			t[n] = ev.time_ns;
		n++;
	}
	ASSERT_EQ_U64(rlog_reader_damage_count(rd), 0);
	rlog_reader_close(rd);
	ASSERT_EQ(n, 3);
	ASSERT_EQ(syncs, 0);
	int64_t d = t[1] - t[0];
	diag("%s: gap in the file %.6f s", tag, d / 1e9);
	ok(d >= (int64_t)gap_ns && d <= (int64_t)gap_ns + 400000000, "gap %" PRId64 " ns in [%" PRIu64
	   ", +0.4 s]", d, gap_ns);
	ok(t[2] >= t[1] && t[2] - t[1] < 100000000, "the third event follows the second");

	/* With RLOG_READER_TIME_SYNC: exactly one, between events 1 and 2. */
	ASSERT_EQ(rlog_reader_open(path, &rd), 0);
	ASSERT_EQ(rlog_reader_set_flags(rd, RLOG_READER_TIME_SYNC), 0);
	char order[8] = "";
	size_t k = 0;
	while (rlog_reader_next(rd, &ev) == 1 && k < sizeof order - 1) {
		if (ev.from_daemon || h_is_metadata(&ev))
			continue;
		if (ev.id == RLOG_ID_TIME_SYNC && !ev.flagged) {
			order[k++] = 'S';
			uint64_t full;
			ASSERT_EQ(ev.length, 8);
			memcpy(&full, ev.payload, 8);
			ASSERT_EQ_U64(full, ev.ticks);
			ok(ev.time_ns >= t[0] + (int64_t)gap_ns && ev.time_ns <= t[1],
			   "TIME_SYNC time between the events");
		} else {
			order[k++] = 'E';
		}
	}
	order[k] = '\0';
	ASSERT_EQ(rlog_reader_next(rd, &ev), 0);
	rlog_reader_close(rd);
	ASSERT_STREQ(order, "ESEE");
	rlog_detach();
	unlink(path);
}

int main(void)
{
	run("ts", false);
	run("tsmono", true);
	return done_testing();
}
