/*
 * test_multi_pause - several sessions at once while some of them are
 * paused (`ringlog update NAME --mask 0`), through the inline path's
 * several-session write (include/ringlog.h, rlog__write_several), which
 * skips a session whose mask is 0 and hands the bindings whose buffer is
 * full to the library (rlog__write_rest): its count of the bindings not
 * written decides what a write returns (docs/FORMAT.md, "The inline
 * path's words").
 *
 * One thread writes numbered events {0, seq} (timed, untimed and flagged
 * in turn) into two, then three sessions, in phases of 3,000 events (over
 * four buffers of each session: the full-buffer path with a session
 * paused beside it), each phase with another set of sessions paused:
 * every one paused in one phase.  Then:
 *   - each write returned 1 where a session of its phase was active, 0
 *     where all were paused; rlog_thread_stats counts the 1s;
 *   - each session's file holds exactly the events of the phases it was
 *     active in, each once, none of the others;
 *   - its identity: events_written is that count, events_lost 0.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "multi_write.h"
#include "tap.h"

#define ID 1034 /* the test's event ID */
#define PHASES 5
#define PER_PHASE 3000
#define EVENTS (PHASES * PER_PHASE)
#define MAX_SESSIONS 3

/* paused[n - 2][phase]: bit k set: session k paused in that phase. */
static const unsigned paused[2][PHASES] = {
	{ 0x0, 0x2, 0x3, 0x1, 0x0 },
	{ 0x0, 0x4, 0x5, 0x7, 0x2 },
};

static int8_t result[EVENTS + 1];
static uint8_t seen[MAX_SESSIONS][EVENTS + 1];

static void set_mask(const char *name, bool pause)
{
	struct h_run r;
	h_ringlog(&r, "update", name, "--mask", pause ? "0" : "0xffffffffffffffff", NULL);
	if (r.status != 0)
		ok(0, "update %s: %s", name, r.err);
}

/* Session k's file: seen[k][seq] counts the copies; returns the events
 * found that were never written, or have another layout. */
static uint64_t read_file(unsigned k, const char *path)
{
	uint64_t bad = 0;
	struct rlog_reader *rd;
	if (rlog_reader_open(path, &rd) < 0) {
		ok(0, "open %s", path);
		return 1;
	}
	struct rlog_event ev;
	while (rlog_reader_next(rd, &ev) == 1) {
		uint64_t v[2];
		int is = multi_event(&ev, ID, v);
		if (is <= 0) {
			bad += is < 0;
			continue;
		}
		uint64_t seq = v[1];
		if (v[0] != 0 || seq == 0 || seq > EVENTS || !multi_layout_ok(&ev, seq)) {
			bad++;
			continue;
		}
		if (seen[k][seq] < 255)
			seen[k][seq]++;
	}
	rlog_reader_close(rd);
	return bad;
}

static void run(unsigned n)
{
	const unsigned *plan = paused[n - 2];
	char names[MAX_SESSIONS][64], paths[MAX_SESSIONS][256];
	for (unsigned k = 0; k < n; k++) {
		char tag[16];
		snprintf(tag, sizeof tag, "mp%u-%u", n, k);
		snprintf(names[k], sizeof names[k], "%s", h_session(tag));
		snprintf(paths[k], sizeof paths[k], "%s", h_path(tag));
		h_start(names[k], paths[k], NULL, NULL);
	}
	ASSERT_EQ(rlog_attach(names[0]), 0);
	for (unsigned k = 1; k < n; k++)
		ASSERT_EQ(rlog_attach_add(names[k]), 0);
	struct rlog_thread_stats st0, st1;
	rlog_thread_stats(&st0);
	memset(result, 0, sizeof result);
	unsigned now_paused = 0;
	for (unsigned ph = 0; ph < PHASES; ph++) {
		for (unsigned k = 0; k < n; k++)
			if ((plan[ph] >> k & 1) != (now_paused >> k & 1))
				set_mask(names[k], plan[ph] >> k & 1);
		now_paused = plan[ph];
		for (uint64_t seq = ph * PER_PHASE + 1; seq <= (ph + 1) * PER_PHASE; seq++)
			result[seq] = (int8_t)multi_write_seq(ID, 0, seq);
	}
	rlog_thread_stats(&st1);
	rlog_detach();
	/* What each write returned: 1 where any session was active. */
	uint64_t wrong = 0, ones = 0;
	for (uint64_t seq = 1; seq <= EVENTS; seq++) {
		unsigned ph = (unsigned)((seq - 1) / PER_PHASE);
		bool any = plan[ph] != (1u << n) - 1;
		wrong += result[seq] != (any ? 1 : 0);
		ones += result[seq] == 1;
	}
	ok(wrong == 0, "%u sessions: each write returned 1 while a session was active, 0 "
		       "while all were paused (%" PRIu64 " did not)", n, wrong);
	ASSERT_EQ_U64(st1.events_written - st0.events_written, ones);
	memset(seen, 0, sizeof seen);
	for (unsigned k = 0; k < n; k++) {
		struct h_run stop;
		h_ringlog(&stop, "stop", names[k], NULL);
		ASSERT_EQ(stop.status, 0);
		ASSERT_EQ_U64(read_file(k, paths[k]), 0);
		/* Exactly the events of its active phases, each once. */
		uint64_t expected = 0, present = 0, missing = 0, duplicates = 0, extras = 0;
		for (uint64_t seq = 1; seq <= EVENTS; seq++) {
			unsigned ph = (unsigned)((seq - 1) / PER_PHASE);
			bool active = !(plan[ph] >> k & 1);
			expected += active;
			present += seen[k][seq] == 1;
			missing += active && seen[k][seq] == 0;
			duplicates += seen[k][seq] > 1;
			extras += !active && seen[k][seq] != 0;
		}
		diag("%u sessions, session %u: %" PRIu64 " events expected, %" PRIu64 " in the file",
		     n, k, expected, present);
		ASSERT_EQ_U64(missing, 0);
		ASSERT_EQ_U64(duplicates, 0);
		ASSERT_EQ_U64(extras, 0);
		ASSERT_EQ_U64(present, expected);
		ASSERT_EQ_U64(h_kv(stop.out, "events_written"), expected);
		ASSERT_EQ_U64(h_kv(stop.out, "events_lost"), 0);
		unlink(paths[k]);
	}
}

int main(void)
{
	run(2);
	run(3);
	return done_testing();
}
