/*
 * bench_counters.h - `ringlog bench`'s counter figures (bench_counters.c):
 * what an application counter's increment costs, and the daemon's sampling
 * pass per counter.
 */
#ifndef RLOG_CLI_BENCH_COUNTERS_H
#define RLOG_CLI_BENCH_COUNTERS_H

#include <stdbool.h>

/* Medians, ns; < 0: not measured. */
struct bench_counter_figures {
	bool measured;        /* false: out of memory */
	bool in_session;      /* the counter was registered in the session */
	double add, atomic_add, local_add;
	double sample_app, sample_app_unchanged, sample_proc, sample_perf;
	double stat_read;     /* reference: one read of /proc/PID/stat */
};

/* Measures, as medians of runs runs; the process is attached to the
 * bench's session. */
void bench_counters_measure(unsigned runs, struct bench_counter_figures *out);

/* Prints the figures as "key: value" lines. */
void bench_counters_print(const struct bench_counter_figures *f);

#endif
