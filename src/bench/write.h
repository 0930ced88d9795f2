/*
 * write.h - what `ringlog bench` measures (docs/PERFORMANCE.md, "How to
 * measure"): the write path's cost in its own session, against references
 * measured in the same invocation.  The CLI parses and prints; the
 * benchmarks of the daemon, the single ring, the counters and memory are
 * the bench/ programs.
 */
#ifndef RLOG_BENCH_WRITE_H
#define RLOG_BENCH_WRITE_H

#include <stdint.h>

#include "bench/session.h"

#define BENCH_BATCH_N 32 /* records per rlog_write_untimed_n call (write_untimed_n_ns) */

/* Medians of the runs, ns per event (or per operation for the references). */
struct bench_write_figures {
	double disabled, write_1t, write_2t, untimed, untimed_n;
	double ref_rdtsc_store, ref_store, ref_clock_gettime;
	uint64_t emitted; /* events the write runs wrote or tried to */
	uint64_t lost;    /* of which refused (-ENOBUFS or -EBUSY) */
};

/* Where bench_write_session failed. */
enum bench_write_step {
	BENCH_WRITE_START = 1, /* the session's start (s->started.step says more) */
	BENCH_WRITE_ATTACH,    /* rlog_attach to it */
	BENCH_WRITE_MEMORY,    /* the arrays of the runs */
	BENCH_WRITE_STOP,      /* its stop (the figures are measured; *stop says more) */
};

/*
 * Starts session s with properties p (the disabled case needs category 63
 * off in p's enable mask), attaches, and measures runs interleaved runs of
 * each figure, each write run events events (per thread), so that a noisy
 * moment of the machine spreads over all of them rather than skewing one;
 * then detaches and stops the session (*stop: its final statistics).
 * Returns 0, or -errno with *step set.
 */
int bench_write_session(struct bench_session *s, const struct rlog__region_params *p,
			unsigned runs, uint64_t events, struct bench_write_figures *f,
			struct rlog__stop_result *stop, enum bench_write_step *step);

#endif
