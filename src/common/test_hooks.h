/*
 * test_hooks.h - the switch for ringlog's test hooks (docs/CONTRIBUTING.md,
 * "Test hooks").
 *
 * A few tests need the code to stop, die or report at an exact step of a
 * protocol: the producer's RLOG__HOOK points (src/lib/producer.h), the
 * daemon's trim hook (src/daemon/trim.h), and two environment variables
 * read by the daemon, RINGLOG_TEST_HOLD_STOP (drain.c: stop itself,
 * SIGSTOP, holding a full buffer in overwrite mode),
 * RINGLOG_TEST_DIE_IN_WRITE (logfile.c: die in the middle of a write) and
 * RINGLOG_TEST_SYS_POLL_MS (system_ctl.c: the kernel rings' reader's
 * timeout), RINGLOG_TEST_SINK_NOMEM and RINGLOG_TEST_SINK_DRAIN_MS
 * (sink_chunks.c: a chunk's block 0 without memory, stop's wait) and
 * RINGLOG_TEST_DRAIN_THREAD_FAIL (drain_workers.c: threads not created)
 * and RINGLOG_TEST_GATE_NOMEM (src/lib/gate.c: 1 no new mapping for the
 * enable gate, the spare page alone; 2 not even a spare).
 * They exist only when RLOG_TEST_HOOKS is 1: meson's option test_hooks,
 * on by default except in a release build (b_ndebug=if-release, as the
 * asserts).  Off, every hook compiles to nothing: no load, no getenv, and
 * no "RINGLOG_TEST_" string in the binaries (tests/test_release_hooks.sh).
 * lttng-ust's testpoints are the same idea.
 */
#ifndef RLOG_TEST_HOOKS_H
#define RLOG_TEST_HOOKS_H

#ifndef RLOG_TEST_HOOKS
#define RLOG_TEST_HOOKS 0
#endif

#if RLOG_TEST_HOOKS
#include <stdlib.h>

/* The value of the test variable name (a bare identifier: its text exists
 * only in builds with hooks) as a count, 0 when unset. */
#define RLOG__TEST_ENV(name) rlog__test_env(#name)
static inline unsigned long rlog__test_env(const char *name)
{
	const char *v = getenv(name);
	return v ? strtoul(v, NULL, 10) : 0;
}
#else
#define RLOG__TEST_ENV(name) 0ul
#endif

#endif /* RLOG_TEST_HOOKS_H */
