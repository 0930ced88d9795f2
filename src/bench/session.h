/*
 * session.h - the sessions a benchmark runs of its own (docs/PERFORMANCE.md):
 * named after the benchmark's process, their log file on tmpfs
 * (/dev/shm), stopped and removed at the end.
 */
#ifndef RLOG_BENCH_SESSION_H
#define RLOG_BENCH_SESSION_H

#include <stdbool.h>
#include <sys/types.h>

#include "session/session.h"

struct bench_session {
	char name[64], path[4200];
	struct rlog__start start;          /* what was asked: for the caller's error message */
	struct rlog__start_result started; /* its daemon, or the step that failed */
	bool running;
};

/*
 * Starts session "bench-PID" (tag NULL) or "bench-TAG-PID" with
 * properties p, its log file /dev/shm/ringlog-NAME.rlog (none in
 * overwrite mode: a flight recorder).  s must not move while it runs (s->start
 * points into it).  Returns 0 or -errno; s->started.step says where it
 * failed.
 */
int bench_session_start(struct bench_session *s, const char *tag,
			const struct rlog__region_params *p);

/* bench_session_start, the log file in directory dir instead of /dev/shm.
 * Returns 0, -ENAMETOOLONG or -errno of the start. */
int bench_session_start_in(struct bench_session *s, const char *tag,
			   const struct rlog__region_params *p, const char *dir);

/* Stops it, waits for its daemon and removes its file; *res gets the
 * final statistics.  Returns 0 or -errno of rlog__session_stop; does
 * nothing (returns 0) if it is not running. */
int bench_session_stop(struct bench_session *s, struct rlog__stop_result *res);

#endif
