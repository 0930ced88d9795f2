/*
 * sys_stats.h - the system events' statistics that `ringlog stop` prints
 * for a session that recorded them (docs/SESSIONS.md, "Statistics"), read
 * back and their identity checked: sys_handed_over = sys_written +
 * sys_lost + sys_filtered.
 */
#ifndef RLOG_TEST_SYS_STATS_H
#define RLOG_TEST_SYS_STATS_H

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

struct h_sys {
	uint64_t written, lost, filtered, handed_over;
};

/* The sys_* keys of stop's output r (printed), the identity asserted. */
static inline struct h_sys h_sys_stats(const struct h_run *r)
{
	struct h_sys s = { h_kv(r->out, "sys_written"), h_kv(r->out, "sys_lost"),
			   h_kv(r->out, "sys_filtered"), h_kv(r->out, "sys_handed_over") };
	diag("stop: sys_written %llu sys_lost %llu sys_filtered %llu sys_handed_over %llu",
	     (unsigned long long)s.written, (unsigned long long)s.lost,
	     (unsigned long long)s.filtered, (unsigned long long)s.handed_over);
	ok(s.written != UINT64_MAX && s.handed_over != UINT64_MAX,
	   "stop prints the sys_* statistics");
	ASSERT_EQ_U64(s.handed_over, s.written + s.lost + s.filtered);
	return s;
}

/* Skips the whole test unless system events can be recorded here: root,
 * and a tracefs mount point (the daemon mounts tracefs there itself,
 * src/system/tracefs.c). */
static inline void h_sys_require(void)
{
	if (geteuid() != 0)
		skip_all("system events need root");
	if (access("/sys/kernel/tracing", F_OK) != 0 && access("/sys/kernel/debug/tracing", F_OK) != 0)
		skip_all("no tracefs mount point");
}

/* A session name for tag, and its log file's path (n bytes) removed. */
static inline const char *h_sys_session(const char *tag, char *path, size_t n)
{
	snprintf(path, n, "%s", h_path(tag));
	unlink(path);
	return h_session(tag);
}

static inline void h_msleep(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* `ringlog update NAME --system sys`, then `query` until the daemon
 * records exactly sys (system_recording, in query's order). */
static inline void h_sys_update(const char *name, const char *sys)
{
	struct h_run r;
	h_ringlog(&r, "update", name, "--system", sys, NULL);
	BAIL_IF(r.status != 0, "update --system %s: %s", sys, r.err);
	char want[128];
	snprintf(want, sizeof want, "system_recording: %s\n", sys);
	for (int i = 0; i < 500; i++) {
		h_ringlog(&r, "query", name, NULL);
		if (strstr(r.out, want) != NULL)
			return;
		h_msleep(10);
	}
	BAIL_IF(true, "the daemon never recorded %s", sys);
}

#endif
