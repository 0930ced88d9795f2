/*
 * test_snapshot - `ringlog snapshot` (docs/FORMAT.md
 * "Snapshots").
 *
 *   1. A flight recorder (overwrite mode, no file) and a thread writing
 *      numbered events all along; --since-last snapshots while it writes,
 *      and one after: no event is in two snapshots, each snapshot's events
 *      follow the previous one's exactly after the events its OVERWRITTEN
 *      record counts, and in all, events in snapshots + lost = written; the
 *      session's statistics say the same at stop (nothing discarded).
 *   2. Names and schemas survive 20 laps of the ring: a snapshot decodes
 *      the declared event's fields and names its thread.
 *   3. A full snapshot twice, nothing written between: the same events,
 *      and no loss the second time.
 *   4. --on-event with --after: armed (query says so), fired by the event,
 *      the file holds the event and what came after it; --disarm; a second
 *      trigger is refused while one is armed.
 *   5. --on-loss on a session with a file whose daemon is stopped: the
 *      burst's NO_BUFFER losses fire it; the snapshot counts them exactly.
 *   6. Errors: an existing file, a missing -o, options that need others,
 *      no such session.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "harness.h"
#include "ringlog/event.h"
#include "shm.h"
#include "tap.h"

#define ORDER_FIELDS(F) F(U64, order) F(STRING, item)
RLOG_DEFINE_EVENT(order, 3000, "shop.order", 1, ORDER_FIELDS)

static void start_recorder(const char *name, const char *bufs)
{
	struct h_run r;
	h_ringlog(&r, "start", name, "--mode", "overwrite", "--buffer-size", "4", "--buffers",
		  bufs, NULL);
	BAIL_IF(r.status != 0, "ringlog start %s: %s", name, r.err);
}

/* What a snapshot file holds of the events with ID 1024 (u64 seq first). */
struct snap {
	uint64_t events, first, last, lost_ow, lost_other, gaps, order_errors, damage;
};

static void read_snap(const char *path, struct snap *s)
{
	memset(s, 0, sizeof *s);
	struct rlog_reader *rd;
	if (rlog_reader_open(path, &rd) < 0) {
		ok(0, "open %s", path);
		return;
	}
	struct rlog_event ev;
	while (rlog_reader_next(rd, &ev) == 1) {
		if (ev.from_daemon && !ev.flagged && ev.id == RLOG_ID_DATA_LOSS) {
			struct rlog_loss l;
			rlog_event_loss(&ev, &l);
			if (l.cause == RLOG_LOSS_OVERWRITTEN)
				s->lost_ow += l.events;
			else
				s->lost_other += l.events;
			continue;
		}
		if (ev.from_daemon || ev.id != 1024)
			continue;
		uint64_t seq;
		memcpy(&seq, ev.payload, 8);
		if (s->events == 0)
			s->first = seq;
		else if (seq <= s->last)
			s->order_errors++;
		else if (seq != s->last + 1)
			s->gaps++;
		s->last = seq;
		s->events++;
	}
	s->damage = rlog_reader_damage_count(rd);
	rlog_reader_close(rd);
}

static _Atomic int writing;
static _Atomic uint64_t written;

static void *writer(void *arg)
{
	(void)arg;
	uint64_t n = 0;
	while (atomic_load(&writing)) {
		for (int i = 0; i < 200; i++) {
			uint64_t v[2] = { ++n, 0 };
			if (rlog_write(1024, v, sizeof v) != 1)
				atomic_fetch_add(&written, UINT64_C(1) << 40); /* never: poisons */
		}
		atomic_store(&written, n);
		proc_sleep_ms(1);
	}
	return NULL;
}

static void snap_path(char *out, size_t n, const char *tag, int k)
{
	snprintf(out, n, "/tmp/rlog-test-snap-%s-%d-%d.rlog", tag, (int)getpid(), k);
	unlink(out);
}

/* 1 */
static void since_last(void)
{
	const char *name = h_session("snap1");
	start_recorder(name, "16");
	ASSERT_EQ(rlog_attach(name), 0);
	atomic_store(&writing, 1);
	pthread_t th;
	pthread_create(&th, NULL, writer, NULL);
	enum { K = 8 };
	struct snap s[K];
	char path[K][128];
	for (int k = 0; k < K; k++) {
		proc_sleep_ms(k == 0 ? 20 : 5 + 15 * (k % 3));
		if (k == K - 1) {
			atomic_store(&writing, 0);
			pthread_join(th, NULL);
		}
		snap_path(path[k], sizeof path[k], "sl", k);
		struct h_run r;
		h_ringlog(&r, "snapshot", name, "-o", path[k], "--since-last", NULL);
		ASSERT_EQ(r.status, 0);
		read_snap(path[k], &s[k]);
		ASSERT_EQ_U64(h_kv(r.out, "events_written"), s[k].events);
		ASSERT_EQ_U64(h_kv(r.out, "events_lost"), s[k].lost_ow + s[k].lost_other);
	}
	uint64_t total = atomic_load(&written), in = 0, lost = 0, prev_last = 0;
	for (int k = 0; k < K; k++) {
		diag("snapshot %d: %" PRIu64 " events (%" PRIu64 "..%" PRIu64 "), %" PRIu64
		     " overwritten", k, s[k].events, s[k].first, s[k].last, s[k].lost_ow);
		ASSERT_EQ_U64(s[k].damage, 0);
		ASSERT_EQ_U64(s[k].order_errors, 0);
		ASSERT_EQ_U64(s[k].lost_other, 0);
		if (s[k].events) {
			/* Everything after the previous snapshot's last event,
			 * up to this one's, is in it or in its OVERWRITTEN
			 * records (a buffer a producer was taking over while
			 * the snapshot ran is a gap inside it, counted in it). */
			ASSERT_EQ_U64(s[k].last - prev_last, s[k].events + s[k].lost_ow);
			prev_last = s[k].last;
		} else {
			ASSERT_EQ_U64(s[k].lost_ow, 0);
		}
		in += s[k].events;
		lost += s[k].lost_ow;
		unlink(path[k]);
	}
	ASSERT_EQ_U64(prev_last, total);
	ASSERT_EQ_U64(in + lost, total);
	ok(lost > 0, "the ring wrapped between snapshots (%" PRIu64 " overwritten)", lost);
	rlog_detach();
	struct h_run r;
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), in);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), lost);
	ASSERT_EQ_U64(h_kv(r.out, "events_overwritten"), lost);
	ASSERT_EQ_U64(h_kv(r.out, "events_discarded"), 0);
}

/* 2 and 3 */
static void metadata_and_repeat(void)
{
	const char *name = h_session("snap2");
	start_recorder(name, "8");
	ASSERT_EQ(rlog_attach(name), 0);
	ASSERT_EQ(rlog_thread_name("order-taker"), 0);
	ASSERT_EQ(RLOG_EVENT(order, 42, "espresso"), 1);
	uint64_t ones = 0;
	for (uint64_t i = 1; i <= 20 * 8 * 4096 / 24; i++) {
		uint64_t v[2] = { i, 0 };
		ones += rlog_write(1024, v, sizeof v) == 1;
		if (i % 50000 == 0)
			proc_sleep_ms(20); /* the daemon reads the names while the ring turns */
	}
	ASSERT_EQ_U64(ones, 20 * 8 * 4096 / 24);
	ASSERT_EQ(RLOG_EVENT(order, 43, "latte"), 1);
	char a[128], b[128];
	snap_path(a, sizeof a, "full", 0);
	snap_path(b, sizeof b, "full", 1);
	struct h_run r;
	h_ringlog(&r, "snapshot", name, "-o", a, NULL);
	ASSERT_EQ(r.status, 0);
	ok(h_kv(r.out, "events_lost") > 0, "the first snapshot reports the overwritten events");
	h_ringlog(&r, "snapshot", name, "-o", b, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), 0);
	struct snap sa, sb;
	read_snap(a, &sa);
	read_snap(b, &sb);
	ASSERT_EQ_U64(sa.events, sb.events);
	ASSERT_EQ_U64(sa.first, sb.first);
	ASSERT_EQ_U64(sa.last, sb.last);
	ASSERT_EQ_U64(sa.last, 20 * 8 * 4096 / 24);
	h_ringlog(&r, "dump", b, "--id", "3000", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_CONTAINS(r.out, "shop.order");
	ASSERT_CONTAINS(r.out, "order=43 item=\"latte\"");
	h_ringlog(&r, "stats", b, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_CONTAINS(r.out, "order-taker");
	rlog_detach();
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	unlink(a);
	unlink(b);
}

/* Polls query until "snapshots: want"; false after 10 s. */
static bool wait_snapshots(const char *name, uint64_t want)
{
	for (int i = 0; i < 1000; i++) {
		struct h_run r;
		h_ringlog(&r, "query", name, NULL);
		if (h_kv(r.out, "snapshots") == want)
			return true;
		proc_sleep_ms(10);
	}
	return false;
}

/* 4 */
static void on_event(void)
{
	const char *name = h_session("snap4");
	start_recorder(name, "16");
	char f[128];
	snap_path(f, sizeof f, "ev", 0);
	struct h_run r;
	h_ringlog(&r, "snapshot", name, "-o", f, "--on-event", "2000", "--after", "100", NULL);
	ASSERT_EQ(r.status, 0);
	char want[256];
	snprintf(want, sizeof want, "trigger: armed (on the event), snapshot to %s\n", f);
	ASSERT_STREQ(r.out, want);
	h_ringlog(&r, "snapshot", name, "-o", f, "--on-loss", NULL);
	ASSERT_EQ(r.status, 1);
	snprintf(want, sizeof want, "ringlog: snapshot: %s: a snapshot trigger is armed already "
				    "(disarm it first: ringlog snapshot NAME --disarm)\n", name);
	ASSERT_STREQ(r.err, want);
	h_ringlog(&r, "query", name, NULL);
	ASSERT_CONTAINS(r.out, "snapshot_trigger: armed\n");
	ASSERT_CONTAINS(r.out, "snapshots: 0\n");
	ASSERT_EQ(rlog_attach(name), 0);
	for (uint64_t i = 1; i <= 1000; i++) {
		uint64_t v[2] = { i, 0 };
		rlog_write(1024, v, sizeof v);
	}
	proc_sleep_ms(50);
	h_ringlog(&r, "query", name, NULL);
	ASSERT_CONTAINS(r.out, "snapshots: 0\n"); /* not fired by other events */
	uint64_t mark = 7;
	ASSERT_EQ(rlog_write(2000, &mark, sizeof mark), 1);
	for (uint64_t i = 1001; i <= 1100; i++) {
		uint64_t v[2] = { i, 0 };
		rlog_write(1024, v, sizeof v);
	}
	ok(wait_snapshots(name, 1), "the trigger's snapshot was written");
	h_ringlog(&r, "query", name, NULL);
	ASSERT_CONTAINS(r.out, "snapshot_trigger: none\n");
	h_ringlog(&r, "dump", f, "--id", "2000", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_CONTAINS(r.out, " 2000 ");
	struct snap s;
	read_snap(f, &s);
	ASSERT_EQ_U64(s.last, 1100); /* what came after the event, within --after */
	/* Disarm: one armed, then none. */
	h_ringlog(&r, "snapshot", name, "-o", f, "--force", "--on-loss", NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "snapshot", name, "--disarm", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.out, "trigger: disarmed\n");
	h_ringlog(&r, "snapshot", name, "--disarm", NULL);
	ASSERT_EQ(r.status, 1);
	snprintf(want, sizeof want, "ringlog: snapshot: %s: no snapshot trigger is armed\n", name);
	ASSERT_STREQ(r.err, want);
	rlog_detach();
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	unlink(f);
}

/* 5 */
static void on_loss(void)
{
	const char *name = h_session("snap5");
	char path[256], f[128];
	snprintf(path, sizeof path, "%s", h_path("snap5"));
	snap_path(f, sizeof f, "loss", 0);
	h_start(name, path, "4", "4");
	struct h_run r;
	h_ringlog(&r, "snapshot", name, "-o", f, "--on-loss", NULL);
	ASSERT_EQ(r.status, 0);
	struct rlog__region reg;
	ASSERT_EQ(rlog__region_open(name, &reg), 0);
	pid_t daemon = (pid_t)reg.hdr->daemon_pid;
	rlog__region_close(&reg);
	ASSERT_EQ(rlog_attach(name), 0);
	kill(daemon, SIGSTOP);
	uint64_t lost = 0, ones = 0;
	for (uint64_t i = 1; i <= 2000; i++) {
		uint64_t v[2] = { i, 0 };
		int x = rlog_write(1024, v, sizeof v);
		ones += x == 1;
		lost += x == -ENOBUFS;
	}
	kill(daemon, SIGCONT);
	ok(lost > 0, "the burst lost %" PRIu64 " events", lost);
	ok(wait_snapshots(name, 1), "the loss fired the trigger");
	struct snap s;
	read_snap(f, &s);
	ASSERT_EQ_U64(s.damage, 0);
	ASSERT_EQ_U64(s.lost_other, lost);
	rlog_detach();
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), ones);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), lost);
	unlink(path);
	unlink(f);
}

/* 6 */
static void errors(void)
{
	const char *name = h_session("snap6");
	start_recorder(name, "4");
	char f[128], want[512];
	snap_path(f, sizeof f, "err", 0);
	struct h_run r;
	h_ringlog(&r, "snapshot", name, "-o", f, NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "snapshot", name, "-o", f, NULL);
	ASSERT_EQ(r.status, 1);
	snprintf(want, sizeof want, "ringlog: snapshot: %s: file exists (use --force to overwrite)\n",
		 f);
	ASSERT_STREQ(r.err, want);
	h_ringlog(&r, "snapshot", name, "-o", f, "--force", NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "snapshot", name, NULL);
	ASSERT_EQ(r.status, 2);
	ASSERT_CONTAINS(r.err, "ringlog: snapshot: missing -o FILE\n");
	h_ringlog(&r, "snapshot", name, "-o", f, "--after", "5", NULL);
	ASSERT_EQ(r.status, 2);
	ASSERT_CONTAINS(r.err, "ringlog: snapshot: --after and --wait need --on-loss or --on-event\n");
	h_ringlog(&r, "snapshot", name, "-o", f, "--flag", "3", NULL);
	ASSERT_EQ(r.status, 2);
	ASSERT_CONTAINS(r.err, "ringlog: snapshot: --flag needs --on-event\n");
	h_ringlog(&r, "snapshot", name, "-o", f, "--on-event", "7", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, "ringlog: snapshot: --on-event '7': expected an event ID, 16 to 16383\n");
	h_ringlog(&r, "snapshot", "no-such-session-zz", "-o", f, "--force", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, "ringlog: snapshot: no session named 'no-such-session-zz'\n");
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	unlink(f);
}

int main(void)
{
	since_last();
	metadata_and_repeat();
	on_event();
	on_loss();
	errors();
	return done_testing();
}
