/*
 * write.c - the figures of `ringlog bench` (write.h): one run of each
 * after the other, run after run, their medians.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench/loops.h"
#include "bench/write.h"
#include "ringlog.h"

/* One array of runs per figure. */
enum { DISABLED, W1T, W2T, UNTIMED, UNTIMED_N, REF_RDTSC_STORE, REF_STORE, REF_CLOCK, FIGURES };

static void measure(double *v[FIGURES], unsigned runs, uint64_t events,
		    struct bench_write_figures *f)
{
	for (unsigned r = 0; r < runs; r++) {
		v[REF_RDTSC_STORE][r] = bench_ref_rdtsc_store(events);
		v[REF_STORE][r] = bench_ref_store(events);
		v[REF_CLOCK][r] = bench_ref_clock_gettime(events / 4);
		v[DISABLED][r] = bench_disabled(events * 4);
		struct bench_result res = bench_write16(1, events, false);
		v[W1T][r] = res.ns;
		f->lost += res.lost;
		bench_settle();
		res = bench_write16(1, events, true);
		v[UNTIMED][r] = res.ns;
		f->lost += res.lost;
		bench_settle();
		struct bench_write wb = { .threads = 1, .events = events, .len = 16,
					  .batch = BENCH_BATCH_N };
		res = bench_write_run(&wb);
		v[UNTIMED_N][r] = res.ns;
		f->lost += res.lost;
		bench_settle();
		res = bench_write16(2, events, false);
		v[W2T][r] = res.ns;
		f->lost += res.lost;
		bench_settle();
	}
	/* 1 thread timed, untimed, in batches, and 2 threads. */
	f->emitted = (uint64_t)runs * events * 5;
	f->disabled = bench_median(v[DISABLED], (int)runs);
	f->write_1t = bench_median(v[W1T], (int)runs);
	f->write_2t = bench_median(v[W2T], (int)runs);
	f->untimed = bench_median(v[UNTIMED], (int)runs);
	f->untimed_n = bench_median(v[UNTIMED_N], (int)runs);
	f->ref_rdtsc_store = bench_median(v[REF_RDTSC_STORE], (int)runs);
	f->ref_store = bench_median(v[REF_STORE], (int)runs);
	f->ref_clock_gettime = bench_median(v[REF_CLOCK], (int)runs);
}

int bench_write_session(struct bench_session *s, const struct rlog__region_params *p,
			unsigned runs, uint64_t events, struct bench_write_figures *f,
			struct rlog__stop_result *stop, enum bench_write_step *step)
{
	memset(f, 0, sizeof *f);
	memset(stop, 0, sizeof *stop);
	double *v[FIGURES];
	bool ok = runs > 0;
	for (int k = 0; k < FIGURES; k++)
		ok &= (v[k] = calloc(runs, sizeof(double))) != NULL;
	int err = ok ? bench_session_start(s, NULL, p) : -ENOMEM;
	*step = ok ? BENCH_WRITE_START : BENCH_WRITE_MEMORY;
	if (err == 0) {
		err = rlog_attach(s->name);
		*step = BENCH_WRITE_ATTACH;
		if (err == 0) {
			measure(v, runs, events, f);
			rlog_detach();
		}
		int stop_err = bench_session_stop(s, stop);
		if (err == 0 && stop_err < 0) {
			err = stop_err;
			*step = BENCH_WRITE_STOP;
		}
	}
	for (int k = 0; k < FIGURES; k++)
		free(v[k]);
	return err;
}
