/*
 * sys_stats.h - the system events' statistics that `ringlog stop` prints
 * for a session that recorded them (docs/SESSIONS.md, "Statistics"), read
 * back and their identity checked: sys_handed_over = sys_written +
 * sys_lost + sys_filtered.
 */
#ifndef RLOG_TEST_SYS_STATS_H
#define RLOG_TEST_SYS_STATS_H

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

#endif
