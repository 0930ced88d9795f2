/*
 * sysperm.h - may this process record system events?  Checked by `ringlog
 * start --system` and `ringlog update --system` before anything is
 * created or changed, so that a user without the privileges gets one line
 * naming what is missing instead of a session that records nothing.
 *
 * The rule (docs/SESSIONS.md, "Privileges"):
 *
 *   perf events   CAP_PERFMON or CAP_SYS_ADMIN in the effective set (root
 *                 has both), or kernel.perf_event_paranoid -1: the
 *                 tracepoints' raw fields and every CPU's events are
 *                 refused to anyone else from paranoid 0 up (perf_event_open(2)),
 *                 so 0, 1, 2 (the default) and Debian's 3 all need a
 *                 capability.  No /proc/sys/kernel/perf_event_paranoid:
 *                 the kernel has no perf events, nobody may.
 *   tracefs       the tracepoints' ids are read from tracefs: its events
 *                 directory (/sys/kernel/tracing/events, or the older
 *                 /sys/kernel/debug/tracing/events) must be readable, or,
 *                 if tracefs is not mounted, mountable: the kernel knows
 *                 it (/proc/filesystems), /sys/kernel/tracing exists, and
 *                 the process has CAP_SYS_ADMIN (mount(2)).
 *
 * The daemon runs with the privileges of the command that started it;
 * `update` checks its own, which are the daemon's when the same user runs
 * both (a session is opened by its owner only).
 */
#ifndef RLOG_COMMON_SYSPERM_H
#define RLOG_COMMON_SYSPERM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RLOG__CAP_SYS_ADMIN 21
#define RLOG__CAP_PERFMON   38
#define RLOG__PARANOID_NONE INT32_MIN /* no perf_event_paranoid: no perf events */

/* What the rule looks at, read from this process and the machine. */
struct rlog__sys_priv_facts {
	uint32_t euid;
	uint64_t cap_eff;          /* CapEff of /proc/self/status (0 if unreadable) */
	int paranoid;              /* kernel.perf_event_paranoid, or RLOG__PARANOID_NONE */
	char tracefs[64];          /* the events directory found, or "/sys/kernel/tracing/events" */
	int tracefs_err;           /* 0: readable; else opening it failed with -errno */
	bool tracefs_mountable;    /* not mounted, but the kernel has tracefs and its directory
	                              exists */
};

/* Reads the facts for this process (never fails: what cannot be read
 * counts as missing). */
void rlog__sys_priv_facts_read(struct rlog__sys_priv_facts *f);

/*
 * Applies the rule to f.  Returns 0, or -EPERM with one line in why (n
 * bytes) naming everything missing, e.g.
 *
 *   --system: missing CAP_PERFMON or CAP_SYS_ADMIN (uid 65534, effective
 *   capabilities 0x0), which kernel.perf_event_paranoid 2 requires (only
 *   -1 lets any user trace the kernel); read access to tracefs
 *   (/sys/kernel/tracing/events: Permission denied)
 *
 * (one line; "ringlog: CMD: " precedes it).
 */
int rlog__sys_priv_judge(const struct rlog__sys_priv_facts *f, char *why, size_t n);

/* Both: the facts of this process, judged.  Returns 0 or -EPERM. */
int rlog__sys_priv_check(char *why, size_t n);

#endif
