/*
 * test_system_daemon - system events through the real daemon into the log
 * file: system blocks (DAEMON | SYSTEM, pid 0, tid the CPU) whose
 * EVENT_SCHEMA records name the events for the reader and `ringlog dump`
 * (docs/FORMAT.md, "System events").  The sessions select them as a user
 * does, `ringlog start NAME --system cswitch,wakeup`; `query` says what the
 * daemon records.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "sys_stats.h"
#include "ringlog/reader.h"
#include "tap.h"

/* The sched_switch records of path: all of them, and those switching
 * thread me out, with the first and last time of these. */
struct tally { int all, mine, other; uint64_t sys, rundown; bool order; uint64_t first, last; };

static void tally(const char *path, uint32_t me, struct tally *t)
{
	memset(t, 0, sizeof *t);
	t->order = true;
	t->first = UINT64_MAX;
	struct rlog_reader *rd;
	BAIL_IF(rlog_reader_open(path, &rd) < 0, "cannot open %s", path);
	struct rlog_event ev;
	int rc;
	uint64_t last = 0;
	while ((rc = rlog_reader_next(rd, &ev)) > 0) {
		/* The rundown's records (their own tid) are not the
		 * kernel's: sys_rundown_written counts them, not sys_written. */
		if (ev.from_daemon && ev.id >= 64 && ev.id <= 127 && ev.tid != 0xffffffffu)
			t->sys++;
		if (ev.from_daemon && (ev.id == 78 || ev.id == 79 || ev.id == 112) &&
		    ev.tid == 0xffffffffu)
			t->rundown++;
		if (ev.id != 64 || !ev.from_daemon)
			continue;
		const struct rlog_schema *s = rlog_reader_schema(rd, &ev);
		if (s == NULL || strcmp(s->name, "sched_switch") != 0) {
			t->other++;
			continue;
		}
		t->all++;
		if (ev.ticks < last)
			t->order = false;
		last = ev.ticks;
		int32_t prev;
		memcpy(&prev, (const uint8_t *)ev.payload + 8, 4); /* pid, tid, prev_tid */
		if ((uint32_t)prev == me) {
			t->mine++;
			if (ev.ticks < t->first)
				t->first = ev.ticks;
			t->last = ev.ticks;
		}
	}
	ASSERT_EQ(rc, 0);
	rlog_reader_close(rd);
}

static void sleeps(int n)
{
	for (int i = 0; i < n; i++) {
		struct timespec ts = { 0, 2 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

int main(void)
{
	h_sys_require();
	uint32_t me = (uint32_t)syscall(SYS_gettid);
	struct h_run r;
	struct tally t;

	/* A session with a file. */
	const char *name = h_session("sysd");
	const char *path = h_path("sysd");
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--system", "cswitch,wakeup", NULL);
	BAIL_IF(r.status != 0, "start --system: %s", r.err);
	/* The daemon opened them before the session was active. */
	h_ringlog(&r, "query", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_CONTAINS(r.out, "system_recording: cswitch,wakeup\n");
	sleeps(20);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	/* No process attached, but it recorded: no hint about attaching. */
	ASSERT_STREQ(r.err, "");
	/* The statistics: what the kernel handed over, all accounted for. */
	uint64_t sw = h_kv(r.out, "sys_written"), sl = h_kv(r.out, "sys_lost"),
		 sf = h_kv(r.out, "sys_filtered"), sh = h_kv(r.out, "sys_handed_over");
	diag("stop: sys_written %llu sys_lost %llu sys_filtered %llu sys_handed_over %llu",
	     (unsigned long long)sw, (unsigned long long)sl, (unsigned long long)sf,
	     (unsigned long long)sh);
	ok(sw != UINT64_MAX && sw > 0, "stop prints sys_written");
	ASSERT_EQ_U64(sh, sw + sl + sf);
	tally(path, me, &t);
	ASSERT_EQ_U64(t.sys, sw); /* every event written is in the file, once */
	/* The rundown's records (of the whole machine: many), counted too. */
	uint64_t rw = h_kv(r.out, "sys_rundown_written"), rl = h_kv(r.out, "sys_rundown_lost");
	diag("rundown records in the file %llu, sys_rundown_written %llu",
	     (unsigned long long)t.rundown, (unsigned long long)rw);
	ok(t.rundown > 0, "the file holds a rundown");
	ASSERT_EQ_U64(rw, t.rundown);
	ASSERT_EQ_U64(rl, 0);
	ok(t.other == 0, "every ID 64 record is a sched_switch by its schema");
	ok(t.order, "in time order");
	diag("sched_switch records %d, of this thread %d", t.all, t.mine);
	ok(t.mine >= 20, "this thread's 20 sleeps are switches out (%d)", t.mine);
	/* (--name: the rundown of the whole machine comes first.) */
	h_ringlog(&r, "dump", path, "--name", "sched_switch", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_CONTAINS(r.out, "sched_switch");
	ASSERT_CONTAINS(r.out, "prev_tid=");
	/* stats spans the system events' times (a file of them alone is not
	 * "no events"). */
	h_ringlog(&r, "stats", path, NULL);
	ASSERT_EQ(r.status, 0);
	ok(strstr(r.out, "(no events)") == NULL && strstr(r.out, "events/s") != NULL,
	   "stats gives the system events' duration and rate");
	unlink(path);

	/* A session that recorded nothing still gets the hint. */
	name = h_session("sysnone");
	h_ringlog(&r, "start", name, "-o", path, NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	char want[256];
	snprintf(want, sizeof want, "ringlog: stop: %s: no process attached to this session (was "
				    "RINGLOG_SESSION set, and did the program find libringlog?)\n", name);
	ASSERT_STREQ(r.err, want);
	unlink(path);

	/* A flight recorder: no file; snapshots take the system blocks the
	 * daemon kept, then, with --since-last, only the later ones. */
	name = h_session("sysfr");
	char snap1[256], snap2[256];
	snprintf(snap1, sizeof snap1, "%s", h_path("sysfr1"));
	snprintf(snap2, sizeof snap2, "%s", h_path("sysfr2"));
	unlink(snap1);
	unlink(snap2);
	h_ringlog(&r, "start", name, "--mode", "overwrite", "--system", "cswitch,wakeup", NULL);
	BAIL_IF(r.status != 0, "start --mode overwrite: %s", r.err);
	sleeps(20);
	h_ringlog(&r, "snapshot", name, "-o", snap1, NULL);
	ASSERT_EQ(r.status, 0);
	sleeps(20);
	h_ringlog(&r, "snapshot", name, "--since-last", "-o", snap2, NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	struct tally t1, t2;
	tally(snap1, me, &t1);
	tally(snap2, me, &t2);
	diag("snapshot 1: %d switches out of this thread, snapshot 2 (--since-last): %d", t1.mine,
	     t2.mine);
	ok(t1.other == 0 && t2.other == 0, "the snapshots' ID 64 records are sched_switch by their schemas");
	ok(t1.mine >= 20, "the first snapshot holds the 20 sleeps before it");
	ok(t2.mine >= 20, "the second holds the 20 after it");
	ok(t1.last < t2.first, "and none of the first's (%llu < %llu)", (unsigned long long)t1.last,
	   (unsigned long long)t2.first);
	unlink(snap1);
	unlink(snap2);
	return done_testing();
}
