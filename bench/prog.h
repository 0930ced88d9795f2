/*
 * prog.h - the command line of the bench/ programs (docs/PERFORMANCE.md,
 * "How to measure"):
 *
 *   PROGRAM [--runs N] [--events N] [--quick]
 *
 * --runs: medians of N interleaved runs (1 to 101); --events: events per
 * write run (1000 to 2^32); --quick: each program's short setting (a few
 * hundred milliseconds, the test suite's: tests/test_bench.c).  Every
 * figure is printed as "key: value", one per line.
 */
#ifndef RLOG_BENCH_PROG_H
#define RLOG_BENCH_PROG_H

#include <stdbool.h>
#include <stdint.h>

#include "bench/session.h"

struct prog_opts {
	unsigned runs;   /* the program's default unless given */
	uint64_t events;
	bool quick;
	bool runs_given, events_given;
};

/* Parses argv into o (its defaults set by the caller); on a bad argument
 * prints "PROGRAM: ..." and the usage line on stderr and exits 2. */
void prog_args(int argc, char **argv, struct prog_opts *o);

/* Under --quick, what runs and events become unless given. */
void prog_quick(struct prog_opts *o, unsigned runs, uint64_t events);

/* Starts session s (bench_session_start: tag, properties p) and attaches
 * this process to it.  Returns 0, or -errno, printed on stderr as
 * "PROGRAM: session NAME: why" (s is then stopped). */
int prog_session_open(struct bench_session *s, const char *tag,
		      const struct rlog__region_params *p);

/* Detaches this process and stops s; *res (if not NULL) gets its final
 * statistics. */
void prog_session_close(struct bench_session *s, struct rlog__stop_result *res);

#endif
