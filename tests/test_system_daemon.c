/*
 * test_system_daemon - system events through the real daemon into the log
 * file: system blocks (DAEMON | SYSTEM, pid 0, tid the CPU) whose
 * EVENT_SCHEMA records name the events for the reader and `ringlog dump`
 * (docs/FORMAT.md, "System events").  The daemon takes the selection from
 * RINGLOG_TEST_SYSTEM (a test hook) until the session's property carries it.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "ringlog/reader.h"
#include "sysflags.h"
#include "tap.h"

int main(void)
{
	if (geteuid() != 0)
		skip_all("system events need root");
	if (access("/sys/kernel/tracing", F_OK) != 0)
		skip_all("no tracefs mount point");
	char flags[32];
	snprintf(flags, sizeof flags, "%llu", (unsigned long long)(RLOG_SYS_CSWITCH | RLOG_SYS_WAKEUP));
	setenv("RINGLOG_TEST_SYSTEM", flags, 1);
	const char *name = h_session("sysd");
	const char *path = h_path("sysd");
	h_start(name, path, NULL, NULL);
	uint32_t me = (uint32_t)syscall(SYS_gettid);
	for (int i = 0; i < 20; i++) {
		struct timespec ts = { 0, 2 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	struct h_run r;
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	unsetenv("RINGLOG_TEST_SYSTEM");

	struct rlog_reader *rd;
	BAIL_IF(rlog_reader_open(path, &rd) < 0, "cannot open %s", path);
	struct rlog_event ev;
	int rc, mine = 0, other = 0, switches = 0;
	uint64_t last = 0;
	bool order = true;
	while ((rc = rlog_reader_next(rd, &ev)) > 0) {
		if (ev.id != 64 || !ev.from_daemon)
			continue;
		const struct rlog_schema *s = rlog_reader_schema(rd, &ev);
		if (s == NULL || strcmp(s->name, "sched_switch") != 0) {
			other++;
			continue;
		}
		switches++;
		if (ev.ticks < last)
			order = false;
		last = ev.ticks;
		int32_t prev;
		memcpy(&prev, (const uint8_t *)ev.payload + 8, 4); /* pid, tid, prev_tid */
		if ((uint32_t)prev == me)
			mine++;
	}
	ASSERT_EQ(rc, 0);
	ok(other == 0, "every ID 64 record is a sched_switch by its schema");
	ok(order, "in time order");
	diag("sched_switch records %d, of this thread %d", switches, mine);
	ok(mine >= 20, "this thread's 20 sleeps are switches out (%d)", mine);
	rlog_reader_close(rd);

	h_ringlog(&r, "dump", path, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_CONTAINS(r.out, "sched_switch");
	ASSERT_CONTAINS(r.out, "prev_tid=");
	unlink(path);
	return done_testing();
}
