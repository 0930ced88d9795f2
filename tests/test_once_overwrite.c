/*
 * test_once_overwrite - every event once in overwrite mode with a file
 * (docs/FORMAT.md, "Overwrite mode"): two threads write numbered events
 * (tests/numbered.h) flat out for a while into a small pool of 4 KiB
 * buffers, so that the daemon falls behind and producers reuse full
 * buffers.  Four runs: 16 buffers, 64 buffers, 16 buffers with the
 * daemon stopped (SIGSTOP) for a moment in the middle, and 16 buffers
 * with no flush timer (the daemon reads no buffer in part).  In each:
 *
 *   - no event is in the file twice, none that was not written, no block
 *     is damaged;
 *   - the events written and not in the file are exactly the file's
 *     OVERWRITTEN losses, and no write returned -ENOBUFS (the daemon
 *     holds at most half the pool; two threads own two buffers), nor did
 *     the file count any other loss;
 *   - `ringlog stop`'s events_written and events_lost are the file's, and
 *     events_overwritten its OVERWRITTEN losses;
 *   - the OVERWRITTEN records are where they lost events (check_placement).
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

/*
 * The placement of the OVERWRITTEN records (docs/FORMAT.md, "struct
 * rlog_data_loss_range"): per writer, walking the file in the reader's
 * merge order,
 *   - a record sits only where a gap in the writer's numbers follows it
 *     (the next event of the thread is not the one after the previous),
 *     when the daemon read no buffer in part (no flush timer): the
 *     unread rest of one it did may turn out to hold no event;
 *   - a record is never later than the losses it counts: the records'
 *     events so far are never fewer than the events missing so far, and
 *     at the end they are equal (the last events' losses included), so
 *     every gap has records before it that count it;
 *   - each record's time is its first_time, the time of the thread's
 *     event before it, and the thread's time never goes back.
 * A gap with no record of its own just before it is allowed (the record
 * before an earlier gap counted it, the slot's counters not saying on
 * which side of a block a loss was); how many are diagnosed.
 */
static void check_placement(const char *path, const char *tag, bool partial)
{
	/* Which thread each writer is (a record may come before its first
	 * event in the file). */
	uint32_t tids[THREADS] = { 0 };
	struct rlog_reader *rd;
	struct rlog_event ev;
	BAIL_IF(rlog_reader_open(path, &rd) < 0, "reader open");
	while (rlog_reader_next(rd, &ev) == 1) {
		uint64_t v[2];
		if (ev.from_daemon || ev.id != NUM_ID || ev.length != 16)
			continue;
		memcpy(v, ev.payload, sizeof v);
		if (v[0] < THREADS)
			tids[v[0]] = ev.tid;
	}
	rlog_reader_close(rd);
	BAIL_IF(rlog_reader_open(path, &rd) < 0, "reader open");
	struct {
		uint64_t seq, last, pending, credit, missing, recorded;
	} th[THREADS] = { 0 };
	uint64_t stray = 0, uncovered = 0, late = 0, wrong_time = 0, back = 0, exact = 0, gaps = 0;
	while (rlog_reader_next(rd, &ev) == 1) {
		if (ev.tid == 0)
			continue;
		unsigned k = 0;
		if (!ev.from_daemon && ev.id == NUM_ID && ev.length == 16) {
			uint64_t v[2];
			memcpy(v, ev.payload, sizeof v);
			BAIL_IF(v[0] >= THREADS, "writer out of range");
			k = (unsigned)v[0];
			BAIL_IF(tids[k] != ev.tid, "a writer in two threads");
			uint64_t gap = v[1] - th[k].seq - 1;
			if (gap > 0) {
				gaps++;
				uncovered += th[k].pending == 0;
				exact += th[k].pending == gap;
			} else if (th[k].pending > 0 && stray++ < 4) {
				diag("%s: writer %u: an OVERWRITTEN record of %" PRIu64
				     " events between seq %" PRIu64 " and %" PRIu64, tag, k,
				     th[k].pending, th[k].seq, v[1]);
			}
			th[k].credit += th[k].pending;
			if (th[k].credit < gap && late++ < 4)
				diag("%s: writer %u: %" PRIu64 " events missing before seq %" PRIu64
				     " were not counted before it", tag, k, gap, v[1]);
			th[k].credit -= th[k].credit < gap ? th[k].credit : gap;
			th[k].missing += gap;
			th[k].pending = 0;
			th[k].seq = v[1];
		} else if (ev.from_daemon && !ev.flagged && ev.id == RLOG_ID_DATA_LOSS &&
			   ev.length >= sizeof(struct rlog_data_loss_range)) {
			struct rlog_data_loss_range dl;
			memcpy(&dl, ev.payload, sizeof dl);
			if (dl.loss.cause != RLOG_LOSS_OVERWRITTEN)
				continue;
			while (k < THREADS && tids[k] != ev.tid)
				k++;
			BAIL_IF(k == THREADS, "an OVERWRITTEN record of no writer");
			th[k].pending += dl.loss.events;
			th[k].recorded += dl.loss.events;
			if ((!ev.has_time || ev.ticks != dl.first_time ||
			     (th[k].last && ev.ticks != th[k].last)) && wrong_time++ < 4)
				diag("%s: writer %u: OVERWRITTEN at %" PRIu64 ", first_time %" PRIu64
				     ", the thread's time %" PRIu64, tag, k, ev.ticks, dl.first_time,
				     th[k].last);
		} else {
			continue;
		}
		if (ev.ticks < th[k].last && back++ < 4)
			diag("%s: writer %u: time goes back from %" PRIu64 " to %" PRIu64, tag, k,
			     th[k].last, ev.ticks);
		if (ev.ticks > th[k].last)
			th[k].last = ev.ticks;
	}
	ASSERT_EQ_U64(rlog_reader_damage_count(rd), 0);
	rlog_reader_close(rd);
	uint64_t unequal = 0;
	for (unsigned k = 0; k < THREADS; k++) {
		/* The events after the last one in the file. */
		uint64_t tail = set->w[k].seq - th[k].seq;
		th[k].missing += tail;
		if (th[k].credit + th[k].pending != tail || th[k].recorded != th[k].missing) {
			unequal++;
			diag("%s: writer %u: %" PRIu64 " events missing, OVERWRITTEN records count %"
			     PRIu64 " (%" PRIu64 " after the last event, %" PRIu64 " missing there)",
			     tag, k, th[k].missing, th[k].recorded, th[k].credit + th[k].pending, tail);
		}
	}
	diag("%s: %" PRIu64 " gaps: %" PRIu64 " with a record of exactly their events just "
	     "before, %" PRIu64 " counted by the record before an earlier gap", tag, gaps, exact,
	     uncovered);
	if (partial)
		diag("%s: %" PRIu64 " records where no gap follows", tag, stray);
	else
		ok(stray == 0, "%s: no OVERWRITTEN record where no gap follows (%" PRIu64 ")", tag,
		   stray);
	ok(late == 0, "%s: no record after a loss it counts (%" PRIu64 ")", tag, late);
	ok(unequal == 0, "%s: per writer, OVERWRITTEN events = events missing (%" PRIu64
	   " writers not)", tag, unequal);
	ok(wrong_time == 0, "%s: each record at its first_time, the thread's time before it (%"
	   PRIu64 " not)", tag, wrong_time);
	ok(back == 0, "%s: no writer's time goes back (%" PRIu64 ")", tag, back);
}

static void run(const char *tag, const char *buffers, const char *timer, int ms, int stop_ms)
{
	const char *name = h_session(tag);
	char path[256];
	snprintf(path, sizeof path, "%s", h_path(tag));
	unlink(path);
	struct h_run r;
	h_ringlog(&r, "start", name, "-o", path, "--mode", "overwrite", "--buffer-size", "4",
		  "--buffers", buffers, "--flush-timer", timer, NULL);
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
	/* A pool of 64 may keep up with writers slowed by a sanitizer. */
	if (strcmp(buffers, "16") == 0)
		ok(ow > 0, "%s: the daemon fell behind: %" PRIu64 " events overwritten", tag, ow);
	else
		diag("%s: %" PRIu64 " events overwritten", tag, ow);
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
	check_placement(path, tag, strcmp(timer, "0") != 0);
	unlink(path);
}

/*
 * A buffer the daemon read in part (`ringlog flush`) and a producer then
 * reused is other contents: the drain must not take it for the one it had
 * started and write it ahead of the thread's older buffers.  One thread
 * writes into a pool of 4 buffers, the daemon reads its first in part,
 * then, the daemon stopped, the thread goes round the pool a few times;
 * a second flush drains what is left (a pass in order, not the final one).
 * Several lengths, so that the reused buffer is not always the oldest.
 */
static void run_reused(const char *tag, unsigned laps)
{
	const char *name = h_session(tag);
	char path[256];
	snprintf(path, sizeof path, "%s", h_path(tag));
	unlink(path);
	struct h_run r;
	h_ringlog(&r, "start", name, "-o", path, "--mode", "overwrite", "--buffer-size", "4",
		  "--buffers", "4", "--flush-timer", "0", NULL);
	BAIL_IF(r.status != 0, "ringlog start");
	h_ringlog(&r, "query", name, NULL);
	pid_t daemon = (pid_t)h_kv(r.out, "daemon_pid");
	BAIL_IF(daemon <= 0, "no daemon pid");
	ASSERT_EQ(rlog_attach(name), 0);
	set = num_new(THREADS, CAP);
	for (int i = 0; i < 50; i++)
		num_write(set, 0);
	h_ringlog(&r, "flush", name, NULL);
	ASSERT_EQ(r.status, 0);
	kill(daemon, SIGSTOP);
	/* About 170 events a 4 KiB buffer: laps buffers and a part. */
	for (unsigned i = 0; i < laps * 170 + 60; i++)
		num_write(set, 0);
	kill(daemon, SIGCONT);
	h_ringlog(&r, "flush", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ(rlog_detach(), 0);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(num_lost(set), 0);
	struct num_check c;
	num_check_file(set, path, &c);
	ASSERT_EQ(c.open_err, 0);
	num_assert_once(set, &c, c.loss_by_cause[RLOG_LOSS_OVERWRITTEN], tag);
	check_placement(path, tag, false);
	unlink(path);
}

int main(void)
{
	run("ow16", "16", "1000", 1500, 0);
	run("ow64", "64", "1000", 1000, 0);
	run("owstop", "16", "1000", 1500, 300);
	run("ownotimer", "16", "0", 700, 0);
	for (unsigned laps = 9; laps < 13; laps++) {
		char tag[32];
		snprintf(tag, sizeof tag, "owreused%u", laps);
		run_reused(tag, laps);
	}
	return done_testing();
}
