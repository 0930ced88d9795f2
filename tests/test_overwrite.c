/*
 * test_overwrite - overwrite mode (docs/FORMAT.md
 * "Overwrite mode").
 *
 *   1. The daemon stops (SIGSTOP, through its test hook) while it holds a
 *      full buffer (and the one it read before, which it gives back only
 *      once written); a producer writes 40 times what the pool holds.
 *      Every write returns 1; every other buffer is reused many times, the
 *      held ones never (their gen, state and bytes do not move); once the
 *      daemon goes on, the file holds the held buffers whole, the newest
 *      events, and one OVERWRITTEN record per gap whose counts, with the
 *      events in the file, make up exactly what was written.
 *   2. The same with two threads and a daemon stopped from outside: the
 *      identity holds per thread, each thread's sequence numbers rise, and
 *      the newest events survive.
 *   3. A flight recorder (no file) that nobody snapshots: at stop every
 *      event is lost, exactly split into overwritten and discarded.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "atomics.h"
#include "harness.h"
#include "procstat.h"
#include "shm.h"
#include "tap.h"

#define BUFS 8
#define PER_BUF (4096 / 24) /* 16-byte payloads: 24-byte records */

/* Waits until process pid is stopped (T); false after 10 s. */
static bool wait_stopped(pid_t pid)
{
	for (int i = 0; i < 1000; i++) {
		char st = 0;
		uint64_t start;
		if (rlog__procstat_read(pid, &st, &start) == 0 && (st == 'T' || st == 't'))
			return true;
		proc_sleep_ms(10);
	}
	return false;
}

static void start_ow(const char *name, const char *path)
{
	struct h_run r;
	if (path) {
		unlink(path);
		h_ringlog(&r, "start", name, "-o", path, "--mode", "overwrite", "--buffer-size", "4",
			  "--buffers", "8", NULL);
	} else {
		h_ringlog(&r, "start", name, "--mode", "overwrite", "--buffer-size", "4",
			  "--buffers", "8", NULL);
	}
	if (r.status != 0) {
		printf("Bail out! ringlog start %s: %s\n", name, r.err);
		exit(1);
	}
}

/* Writes events n0+1 .. n0+count (seq in the payload); returns the returns
 * of 1. */
static uint64_t write_seq(uint64_t n0, uint64_t count)
{
	uint64_t ones = 0;
	for (uint64_t i = 1; i <= count; i++) {
		uint64_t v[2] = { n0 + i, 0 };
		ones += rlog_write(1024, v, sizeof v) == 1;
	}
	return ones;
}

/* Per thread of a file: its events' seq range and gaps. */
struct run_check {
	uint64_t events, first, last, gaps, missing, loss_ow, loss_records, other_loss;
	uint64_t order_errors;
	uint64_t first_gap;      /* the seq before the first gap */
};

static void check_file(const char *path, uint32_t tid, struct run_check *c)
{
	memset(c, 0, sizeof *c);
	struct rlog_reader *rd;
	if (rlog_reader_open(path, &rd) < 0) {
		ok(0, "open %s", path);
		return;
	}
	struct rlog_event ev;
	uint64_t prev = 0;
	while (rlog_reader_next(rd, &ev) == 1) {
		if (ev.tid != tid)
			continue;
		if (ev.from_daemon && !ev.flagged && ev.id == RLOG_ID_DATA_LOSS) {
			struct rlog_loss l;
			rlog_event_loss(&ev, &l);
			if (l.cause == RLOG_LOSS_OVERWRITTEN) {
				c->loss_ow += l.events;
				c->loss_records++;
			} else {
				c->other_loss += l.events;
			}
			continue;
		}
		if (ev.from_daemon || h_is_metadata(&ev) || ev.id != 1024)
			continue;
		uint64_t seq;
		memcpy(&seq, ev.payload, 8);
		if (c->events == 0)
			c->first = seq;
		else if (seq <= prev)
			c->order_errors++;
		else if (seq != prev + 1) {
			if (c->gaps == 0)
				c->first_gap = prev;
			c->gaps++;
			c->missing += seq - prev - 1;
		}
		prev = seq;
		c->last = seq;
		c->events++;
	}
	ok(rlog_reader_damage_count(rd) == 0, "%s: no damage", path);
	rlog_reader_close(rd);
}

/* 1: the daemon stops itself holding a full buffer. */
static void held_buffer(void)
{
	const char *name = h_session("ow1");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("ow1"));
	/* The second full buffer: the first, with the thread's names, is
	 * read (a buffer with unread metadata is never reused either). */
	setenv("RINGLOG_TEST_HOLD_STOP", "2", 1);
	start_ow(name, path);
	unsetenv("RINGLOG_TEST_HOLD_STOP");
	struct rlog__region r;
	ASSERT_EQ(rlog__region_open(name, &r), 0);
	pid_t daemon = (pid_t)r.hdr->daemon_pid;
	ASSERT_EQ(rlog_attach(name), 0);
	/* The first buffer is drained; the second, once handed over, is
	 * held by the daemon, which stops. */
	uint64_t ones = write_seq(0, PER_BUF);
	ASSERT_EQ(rlog_flush_thread(), 0);
	ones += write_seq(PER_BUF, PER_BUF);
	ASSERT_EQ(rlog_flush_thread(), 0);
	ok(wait_stopped(daemon), "the daemon stopped itself holding a buffer");
	/* Held: the buffer it stopped on, and the one drained before it in
	 * the same pass (given back at the pass's commit). */
	uint32_t gen[BUFS];
	bool held[BUFS];
	int nheld = 0;
	static uint8_t before[BUFS][4096];
	uint64_t hlast = 0;
	for (int i = 0; i < BUFS; i++) {
		gen[i] = load_relaxed(&r.desc[i].gen);
		held[i] = load_relaxed(&r.desc[i].reader) != 0;
		memcpy(before[i], rlog__region_buffer(&r, (uint32_t)i), 4096);
		if (!held[i])
			continue;
		nheld++;
		uint32_t wo = load_relaxed(&r.desc[i].write_off);
		uint64_t last;
		memcpy(&last, before[i] + wo - 16, 8);
		hlast = last > hlast ? last : hlast;
	}
	ok(nheld >= 1 && nheld <= 2, "the daemon holds %d buffers (reader = 1)", nheld);
	const uint64_t total = 40 * BUFS * PER_BUF;
	ones += write_seq(2 * PER_BUF, total - 2 * PER_BUF);
	ASSERT_EQ_U64(ones, total); /* overwrite mode never refuses a write */
	int reused = 0;
	for (int i = 0; i < BUFS; i++) {
		uint32_t g = load_relaxed(&r.desc[i].gen);
		if (held[i]) {
			ASSERT_EQ(g, gen[i]);
			ASSERT_EQ(load_relaxed(&r.desc[i].state), RLOG_BUF_FULL);
			ASSERT_EQ(load_relaxed(&r.desc[i].reader), 1);
			ok(memcmp(before[i], rlog__region_buffer(&r, (uint32_t)i), 4096) == 0,
			   "held buffer %d: its bytes did not change", i);
		} else {
			reused += g - gen[i] >= 10;
		}
	}
	ASSERT_EQ(reused, BUFS - nheld);
	rlog_detach();
	kill(daemon, SIGCONT);
	rlog__region_close(&r);
	struct h_run s;
	h_ringlog(&s, "stop", name, NULL);
	ASSERT_EQ(s.status, 0);
	uint64_t w = h_kv(s.out, "events_written"), l = h_kv(s.out, "events_lost");
	diag("written %" PRIu64 ", lost (overwritten) %" PRIu64, w, l);
	ASSERT_EQ_U64(w + l, total);
	ASSERT_EQ_U64(h_kv(s.out, "events_overwritten"), l);
	ok(l > total / 2, "most events were overwritten");
	struct run_check c;
	check_file(path, (uint32_t)gettid(), &c);
	ASSERT_EQ_U64(c.events, w);
	ASSERT_EQ_U64(c.loss_ow, l);
	ASSERT_EQ_U64(c.missing, l);
	ASSERT_EQ_U64(c.order_errors, 0);
	ASSERT_EQ_U64(c.other_loss, 0);
	ASSERT_EQ_U64(c.first, 1);
	ok(c.first_gap >= hlast, "the held buffers are in the file whole (no gap before %" PRIu64
	   ", the first is after %" PRIu64 ")", hlast, c.first_gap);
	ASSERT_EQ_U64(c.last, total); /* the newest survive */
	ok(c.loss_records >= 1 && c.loss_records == c.gaps,
	   "one OVERWRITTEN record per gap (%" PRIu64 " records, %" PRIu64 " gaps)",
	   c.loss_records, c.gaps);
	unlink(path);
}

/* 2: two threads, the daemon stopped from outside. */
#define THREADS 2
#define PER_THREAD (30 * BUFS * PER_BUF)

struct worker {
	pthread_t th;
	uint32_t tid;
	uint64_t ones;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	w->tid = (uint32_t)gettid();
	w->ones = write_seq(0, PER_THREAD);
	rlog_flush_thread();
	return NULL;
}

static void two_threads(void)
{
	const char *name = h_session("ow2");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("ow2"));
	start_ow(name, path);
	struct rlog__region r;
	ASSERT_EQ(rlog__region_open(name, &r), 0);
	pid_t daemon = (pid_t)r.hdr->daemon_pid;
	rlog__region_close(&r);
	ASSERT_EQ(rlog_attach(name), 0);
	kill(daemon, SIGSTOP);
	ok(wait_stopped(daemon), "the daemon is stopped");
	struct worker w[THREADS];
	for (int i = 0; i < THREADS; i++)
		pthread_create(&w[i].th, NULL, worker_main, &w[i]);
	for (int i = 0; i < THREADS; i++)
		pthread_join(w[i].th, NULL);
	kill(daemon, SIGCONT);
	rlog_detach();
	struct h_run s;
	h_ringlog(&s, "stop", name, NULL);
	ASSERT_EQ(s.status, 0);
	uint64_t w_all = h_kv(s.out, "events_written"), l_all = h_kv(s.out, "events_lost");
	ASSERT_EQ_U64(w_all + l_all, (uint64_t)THREADS * PER_THREAD);
	ASSERT_EQ_U64(h_kv(s.out, "events_overwritten"), l_all);
	uint64_t sum_w = 0, sum_l = 0, newest = 0;
	for (int i = 0; i < THREADS; i++) {
		ASSERT_EQ_U64(w[i].ones, PER_THREAD);
		struct run_check c;
		check_file(path, w[i].tid, &c);
		diag("thread %d: %" PRIu64 " in the file, %" PRIu64 " overwritten in %" PRIu64
		     " records", i, c.events, c.loss_ow, c.loss_records);
		ASSERT_EQ_U64(c.events + c.loss_ow, PER_THREAD);
		ASSERT_EQ_U64(c.missing + (c.first - 1) + (PER_THREAD - c.last), c.loss_ow);
		ASSERT_EQ_U64(c.order_errors, 0);
		newest = c.last > newest ? c.last : newest;
		sum_w += c.events;
		sum_l += c.loss_ow;
	}
	ASSERT_EQ_U64(sum_w, w_all);
	ASSERT_EQ_U64(sum_l, l_all);
	ASSERT_EQ_U64(newest, PER_THREAD); /* the last thread's last events survive */
	unlink(path);
}

/* 3: a flight recorder nobody snapshots. */
static void unread_recorder(void)
{
	const char *name = h_session("ow3");
	start_ow(name, NULL);
	ASSERT_EQ(rlog_attach(name), 0);
	const uint64_t total = 5 * BUFS * PER_BUF;
	ASSERT_EQ_U64(write_seq(0, total), total);
	rlog_detach();
	struct h_run s;
	h_ringlog(&s, "stop", name, NULL);
	ASSERT_EQ(s.status, 0);
	ASSERT_STREQ(s.err, "");
	ASSERT_EQ_U64(h_kv(s.out, "events_written"), 0);
	ASSERT_EQ_U64(h_kv(s.out, "events_lost"), total);
	uint64_t ow = h_kv(s.out, "events_overwritten"), ds = h_kv(s.out, "events_discarded");
	diag("overwritten %" PRIu64 ", discarded %" PRIu64, ow, ds);
	ASSERT_EQ_U64(ow + ds, total);
	ok(ds > 0 && ds <= (uint64_t)BUFS * PER_BUF, "the ring's contents were discarded");
}

int main(void)
{
	held_buffer();
	two_threads();
	unread_recorder();
	return done_testing();
}
