/*
 * test_multi_fast - the write path into several sessions at once
 * (docs/SESSIONS.md, "Several sessions"; src/lib/write.c, write_fast),
 * event by event.  Numbered events {thread, seq} from several threads
 * into two sessions, then into three, one of them overloaded (a pool of
 * four 4 KiB buffers) and the others large; each seq is written as a
 * timed, an untimed or a flagged record in turn.  For every session:
 *   - its file holds each event at most once, no event never written,
 *     every event whose write returned 1, each with the record's layout
 *     (timed, untimed, flagged with its flag) as written;
 *   - every event whose write returned -ENOBUFS or -EBUSY is missing from
 *     at least one file (the write's result: a loss if lost in any);
 *   - its identity: the events in its file are its events_written, and
 *     events_written + events_lost = the writes that returned 1, -ENOBUFS
 *     or -EBUSY; its DATA_LOSS records say events_lost;
 *   - the overloaded session lost events, and no other write result
 *     than 1, -ENOBUFS and -EBUSY came back.
 *
 * Built a second time as test_multi_oldabi (RLOG_TEST_OLDABI): programs
 * built against the header before the several-session inline path
 * (tests/abi/ringlog-ce824cb.h, whose inline path calls the library for
 * every write with two or more sessions) keep working beside the
 * current one (whose inline path writes each ready session itself:
 * rlog__write_several; docs/FORMAT.md, "The inline path's words"):
 * thread 0 writes every event through the old inline path
 * (multi_oldabi_write.c), thread 1 through the current one, thread 2
 * alternates in runs of 7, with the same checks.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>

#include "harness.h"
#include "multi_write.h"
#include "tap.h"

#define ID 1033      /* the test's event ID */
#define THREADS 3
#define PER_THREAD 30000
#define MAX_SESSIONS 3

/* Per thread and seq: what the write returned (0: not yet). */
static int8_t result[THREADS][PER_THREAD + 1];

#ifdef RLOG_TEST_OLDABI
/* multi_oldabi_write.c, built with the old header. */
int old_write_seq(unsigned th, uint64_t seq, unsigned id);
#define TAG "mo"
#else
#define TAG "mf"
#endif

static int write_seq(unsigned th, uint64_t seq)
{
#ifdef RLOG_TEST_OLDABI
	if (th == 0 || (th == 2 && seq / 7 % 2 == 0))
		return old_write_seq(th, seq, ID);
#endif
	return multi_write_seq(ID, th, seq);
}

static void *writer(void *arg)
{
	unsigned th = (unsigned)(uintptr_t)arg;
	for (uint64_t seq = 1; seq <= PER_THREAD; seq++)
		result[th][seq] = (int8_t)write_seq(th, seq);
	return NULL;
}

/* What one session's file holds: seen[th][seq] counts the copies. */
struct file_check {
	uint8_t seen[THREADS][PER_THREAD + 1];
	uint64_t present, duplicates, extras, bad_layout, loss_events;
};

static void check_file(const char *path, struct file_check *c)
{
	memset(c, 0, sizeof *c);
	struct rlog_reader *rd;
	if (rlog_reader_open(path, &rd) < 0) {
		ok(0, "open %s", path);
		return;
	}
	struct rlog_event ev;
	while (rlog_reader_next(rd, &ev) == 1) {
		if (ev.from_daemon && !ev.flagged && ev.id == RLOG_ID_DATA_LOSS &&
		    ev.length >= sizeof(struct rlog_data_loss)) {
			struct rlog_data_loss dl;
			memcpy(&dl, ev.payload, sizeof dl);
			c->loss_events += dl.events;
			continue;
		}
		uint64_t v[2];
		int is = multi_event(&ev, ID, v);
		if (is <= 0) {
			c->bad_layout += is < 0;
			continue;
		}
		uint64_t th = v[0], seq = v[1];
		if (th >= THREADS || seq == 0 || seq > PER_THREAD || result[th][seq] == 0) {
			c->extras++;
			continue;
		}
		if (!multi_layout_ok(&ev, seq))
			c->bad_layout++;
		if (c->seen[th][seq]++ == 0)
			c->present++;
		else
			c->duplicates++;
	}
	rlog_reader_close(rd);
}

static struct file_check checks[MAX_SESSIONS];

/* n sessions, session small[k] with the overloaded pool. */
static void run(unsigned n, unsigned small)
{
	char names[MAX_SESSIONS][64], paths[MAX_SESSIONS][256];
	for (unsigned k = 0; k < n; k++) {
		char tag[16];
		snprintf(tag, sizeof tag, TAG "%u-%u", n, k);
		snprintf(names[k], sizeof names[k], "%s", h_session(tag));
		snprintf(paths[k], sizeof paths[k], "%s", h_path(tag));
		if (k == small)
			h_start(names[k], paths[k], "4", "4");
		else
			h_start(names[k], paths[k], NULL, NULL);
	}
	ASSERT_EQ(rlog_attach(names[0]), 0);
	for (unsigned k = 1; k < n; k++)
		ASSERT_EQ(rlog_attach_add(names[k]), 0);
	memset(result, 0, sizeof result);
	pthread_t t[THREADS];
	for (unsigned i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, writer, (void *)(uintptr_t)i);
	for (unsigned i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	rlog_detach();
	uint64_t ones = 0, losses = 0, others = 0;
	for (unsigned i = 0; i < THREADS; i++)
		for (uint64_t s = 1; s <= PER_THREAD; s++) {
			ones += result[i][s] == 1;
			losses += result[i][s] == -ENOBUFS || result[i][s] == -EBUSY;
			others += result[i][s] != 1 && result[i][s] != -ENOBUFS &&
				  result[i][s] != -EBUSY;
		}
	diag("%u sessions: %" PRIu64 " writes returned 1, %" PRIu64 " a loss", n, ones, losses);
	ASSERT_EQ_U64(others, 0);
	for (unsigned k = 0; k < n; k++) {
		struct h_run stop;
		h_ringlog(&stop, "stop", names[k], NULL);
		ASSERT_EQ(stop.status, 0);
		uint64_t written = h_kv(stop.out, "events_written");
		uint64_t lost = h_kv(stop.out, "events_lost");
		struct file_check *c = &checks[k];
		check_file(paths[k], c);
		diag("session %u%s: written %" PRIu64 " lost %" PRIu64 " in the file %" PRIu64, k,
		     k == small ? " (small pool)" : "", written, lost, c->present);
		ASSERT_EQ_U64(c->duplicates, 0);
		ASSERT_EQ_U64(c->extras, 0);
		ASSERT_EQ_U64(c->bad_layout, 0);
		ASSERT_EQ_U64(c->present, written);
		ASSERT_EQ_U64(written + lost, ones + losses);
		ASSERT_EQ_U64(c->loss_events, lost);
		if (k == small)
			ok(lost > 0, "the small pool's session lost events (%" PRIu64 ")", lost);
		unlink(paths[k]);
	}
	/* Event by event: 1 is in every file, a loss is missing from one. */
	uint64_t one_missing = 0, loss_everywhere = 0;
	for (unsigned i = 0; i < THREADS; i++)
		for (uint64_t s = 1; s <= PER_THREAD; s++) {
			unsigned in = 0;
			for (unsigned k = 0; k < n; k++)
				in += checks[k].seen[i][s] != 0;
			one_missing += result[i][s] == 1 && in != n;
			loss_everywhere += result[i][s] < 0 && in == n;
		}
	ASSERT_EQ_U64(one_missing, 0);
	ASSERT_EQ_U64(loss_everywhere, 0);
}

int main(void)
{
	run(2, 0);
	run(3, 2);
	return done_testing();
}
