/*
 * counters.c - the counters' figures (docs/PERFORMANCE.md, "Counters"):
 *
 *   counter_add_ns              ++*c on an application counter (a plain add to the
 *                               session's shared memory), the daemon sampling it
 *   counter_atomic_add_ns       __atomic_fetch_add(c, 1, relaxed) on it
 *   ref_local_add_ns            ++*c on a counter in the process's own memory: the floor
 *   counter_add_vs_local        the ratio of the first to the last
 *   sample_app_ns_per_counter   the daemon's sampling pass over 256 application
 *                               counters that all changed (a COUNTER record each),
 *                               per counter
 *   sample_app_unchanged_ns_per_counter  the same when none changed (no record)
 *   sample_proc_ns_per_counter  a pass over the 6 /proc figures of one process
 *   sample_perf_ns_per_counter  a pass over this process's software performance
 *                               counters (one fd per thread), per counter
 *   ref_proc_stat_read_ns       reference: open, read and close /proc/PID/stat once
 *                               (a proc.* pass reads it and /proc/PID/status)
 *
 * The increments run in a live session of its own (its daemon samples at
 * the default period, 100 ms).  The sampling passes run the daemon's own
 * code (src/daemon/counters.c) in this process, over a region laid out in
 * ordinary memory whose process table holds this process, into the
 * daemon's output without a sink (its metadata cache and its copy of the
 * counter blocks for snapshots, counter_keep.c): what is measured is the
 * reading, the records and the daemon's own copies, not the file.
 * Medians of --runs runs.
 *
 *   build/bench/bench_counters [--runs N] [--quick]
 *
 * --quick: 1 run of 1 M increments and 10 passes (the test suite's).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/loops.h"
#include "bench/session.h"
#include "clock.h"
#include "counter_catalog.h"
#include "daemon/counters.h"
#include "daemon/sink.h"
#include "procstat.h"
#include "prog.h"
#include "ringlog.h"

#define SLOTS 65u        /* process entries of the fake region */

static uint32_t adds_per_run = 20000000u; /* increments per run */
static unsigned passes_per_run = 200u;    /* sampling passes per run */

/* Medians, ns; < 0: not measured. */
struct bench_counter_figures {
	bool measured;        /* false: out of memory */
	bool in_session;      /* the counter was registered in the session */
	double add, atomic_add, local_add;
	double sample_app, sample_app_unchanged, sample_proc, sample_perf;
	double stat_read;     /* reference: one read of /proc/PID/stat */
};

static double median(double *v, unsigned n)
{
	return bench_median(v, (int)n);
}

/* ns per increment of c: volatile, so that each is a load, an add and a
 * store, as an increment in an application's code path is. */
static double adds(volatile uint64_t *c)
{
	uint64_t t0 = rlog__monotonic_ns();
	for (uint32_t i = 0; i < adds_per_run; i++)
		++*c;
	return (double)(rlog__monotonic_ns() - t0) / adds_per_run;
}

static double atomic_adds(uint64_t *c)
{
	uint64_t t0 = rlog__monotonic_ns();
	for (uint32_t i = 0; i < adds_per_run; i++)
		__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
	return (double)(rlog__monotonic_ns() - t0) / adds_per_run;
}

/* ns per read of this process's /proc/PID/stat (open, read, close). */
static double stat_reads(void)
{
	enum { N = 2000 };
	char st;
	uint64_t start, t0 = rlog__monotonic_ns();
	for (int i = 0; i < N; i++)
		rlog__procstat_read(getpid(), &st, &start);
	return (double)(rlog__monotonic_ns() - t0) / N;
}

/* The fake region the sampling passes read. */
struct fake {
	struct rlog_shm_header *hdr;
	struct rlog_shm_counter *counters;
	struct rlog_shm_proc *procs;
	struct rlog__region r;
};

static bool fake_init(struct fake *f)
{
	memset(f, 0, sizeof *f);
	f->hdr = aligned_alloc(4096, sizeof *f->hdr);
	f->counters = aligned_alloc(64, RLOG_SHM_COUNTERS * sizeof *f->counters);
	f->procs = aligned_alloc(64, SLOTS * sizeof *f->procs);
	if (!f->hdr || !f->counters || !f->procs)
		return false;
	memset(f->hdr, 0, sizeof *f->hdr);
	memset(f->counters, 0, RLOG_SHM_COUNTERS * sizeof *f->counters);
	memset(f->procs, 0, SLOTS * sizeof *f->procs);
	char st;
	uint64_t start = 0;
	rlog__procstat_read(0, &st, &start);
	uint32_t pid = (uint32_t)getpid();
	f->procs[0].start_time = start;
	f->procs[0].pid = pid;
	f->procs[0].state = RLOG_PROC_ACTIVE;
	for (uint32_t i = 0; i < RLOG_SHM_COUNTERS; i++) {
		struct rlog_shm_counter *e = &f->counters[i];
		e->pid = pid;
		e->start_time = start;
		snprintf(e->name, sizeof e->name, "bench.%u", i);
		e->state = RLOG_COUNTER_SET;
	}
	f->r.hdr = f->hdr;
	f->r.counters = f->counters;
	f->r.procs = f->procs;
	f->r.slot_count = SLOTS;
	return true;
}

static void fake_free(struct fake *f)
{
	free(f->hdr);
	free(f->counters);
	free(f->procs);
}

/*
 * ns per counter of a sampling pass with sources mask over n counters (a
 * warm-up pass first: it takes the baselines and opens the performance
 * counters); with change, every application counter changes before each
 * pass.
 */
static double passes(struct fake *f, uint64_t mask, unsigned n, bool change)
{
	struct rlog__counters *c;
	/* Application counters only in their own passes (the others would
	 * scan the table too). */
	uint32_t app = mask >> RLOG_CTR_BIT_APP & 1 ? RLOG_COUNTER_SET : RLOG_COUNTER_FREE;
	for (uint32_t i = 0; i < RLOG_SHM_COUNTERS; i++) {
		atomic_store_explicit(&f->counters[i].state, app, memory_order_relaxed);
		atomic_store_explicit(&f->counters[i].value, 0, memory_order_relaxed);
	}
	/* A fresh session each time (not one a daemon served before). */
	f->hdr->counter_next_id = 0;
	f->hdr->stats.counter_records = 0;
	f->hdr->stats.counter_samples = 0;
	f->hdr->counter_mask = mask;
	struct rlog__output out;
	rlog__output_init(&out, RLOG__META_LIMIT);
	if (n == 0 ||
	    rlog__counters_open(&f->r, RLOG_TICK_MONOTONIC, rlog__counters_to_output, &out, &c) < 0) {
		rlog__output_free(&out);
		return -1;
	}
	rlog__counters_pass(c);
	uint64_t ns = 0;
	for (unsigned p = 0; p < passes_per_run; p++) {
		for (uint32_t i = 0; change && i < RLOG_SHM_COUNTERS; i++)
			atomic_store_explicit(&f->counters[i].value, (uint64_t)(p + 1) * (i + 1),
					      memory_order_relaxed);
		uint64_t t0 = rlog__monotonic_ns();
		rlog__counters_pass(c);
		ns += rlog__monotonic_ns() - t0;
	}
	rlog__counters_close(c);
	rlog__output_free(&out);
	return (double)ns / passes_per_run / n;
}

/* The software performance counters (per process) this machine has. */
static uint64_t perf_available(unsigned *n)
{
	uint64_t mask = 0;
	*n = 0;
	for (int k = 0; k < RLOG__PERF_EVENTS; k++) {
		char why[256];
		unsigned bit = RLOG_CTR_BIT_PERF + (unsigned)k;
		if (rlog__counter_probe(bit, why, sizeof why) == RLOG__CTR_OK) {
			mask |= UINT64_C(1) << bit;
			(*n)++;
		}
	}
	return mask;
}

/* Measures, as medians of runs runs; the process is attached to a session. */
static void bench_counters_measure(unsigned runs, struct bench_counter_figures *out)
{
	double *add = calloc(runs, sizeof *add), *atom = calloc(runs, sizeof *atom),
	       *local = calloc(runs, sizeof *local), *app = calloc(runs, sizeof *app),
	       *same = calloc(runs, sizeof *same), *proc = calloc(runs, sizeof *proc),
	       *perf = calloc(runs, sizeof *perf), *stat = calloc(runs, sizeof *stat);
	uint64_t *c, *mine = calloc(1, sizeof *mine);
	struct fake f;
	memset(&f, 0, sizeof f);
	memset(out, 0, sizeof *out);
	out->in_session = rlog_counter_register("bench.counter", &c) == 1;
	unsigned nperf;
	uint64_t perf_mask = perf_available(&nperf);
	out->measured = add && atom && local && app && same && proc && perf && stat && mine &&
			fake_init(&f);
	for (unsigned r = 0; r < runs && out->measured; r++) {
		local[r] = adds(mine);
		add[r] = adds(c);
		atom[r] = atomic_adds(c);
		app[r] = passes(&f, UINT64_C(1) << RLOG_CTR_BIT_APP, RLOG_SHM_COUNTERS, true);
		same[r] = passes(&f, UINT64_C(1) << RLOG_CTR_BIT_APP, RLOG_SHM_COUNTERS, false);
		proc[r] = passes(&f, ((UINT64_C(1) << RLOG__FIGURES) - 1) << RLOG_CTR_BIT_PROC,
				 RLOG__FIGURES, false);
		perf[r] = passes(&f, perf_mask, nperf, false);
		stat[r] = stat_reads();
	}
	if (out->measured) {
		out->add = median(add, runs);
		out->atomic_add = median(atom, runs);
		out->local_add = median(local, runs);
		out->sample_app = median(app, runs);
		out->sample_app_unchanged = median(same, runs);
		out->sample_proc = median(proc, runs);
		out->sample_perf = nperf > 0 ? median(perf, runs) : -1;
		out->stat_read = median(stat, runs);
	}
	fake_free(&f);
	free(add);
	free(atom);
	free(local);
	free(app);
	free(same);
	free(proc);
	free(perf);
	free(stat);
	free(mine);
}

static void bench_counters_print(const struct bench_counter_figures *f)
{
	if (!f->measured) {
		printf("counters: not measured (out of memory)\n");
		return;
	}
	printf("counter_in_session: %s\n", f->in_session ? "yes" : "no");
	printf("counter_add_ns: %.2f\n", f->add);
	printf("counter_atomic_add_ns: %.2f\n", f->atomic_add);
	printf("ref_local_add_ns: %.2f\n", f->local_add);
	printf("counter_add_vs_local: %.2f\n", f->local_add > 0 ? f->add / f->local_add : 0);
	printf("sample_app_ns_per_counter: %.1f\n", f->sample_app);
	printf("sample_app_unchanged_ns_per_counter: %.1f\n", f->sample_app_unchanged);
	printf("sample_proc_ns_per_counter: %.1f\n", f->sample_proc);
	printf("ref_proc_stat_read_ns: %.1f\n", f->stat_read);
	if (f->sample_perf >= 0)
		printf("sample_perf_ns_per_counter: %.1f\n", f->sample_perf);
	else
		printf("sample_perf_ns_per_counter: not available (no performance counter on this "
		       "machine)\n");
}

int main(int argc, char **argv)
{
	struct prog_opts o = { .runs = 11, .events = 0 };
	prog_args(argc, argv, &o);
	if (o.quick) {
		o.runs = o.runs_given ? o.runs : 1;
		adds_per_run = 1000000u;
		passes_per_run = 10u;
	}
	struct rlog__region_params p;
	rlog__props_default(&p);
	struct bench_session s;
	struct bench_counter_figures cf;
	if (prog_session_open(&s, NULL, &p) < 0)
		return 1;
	bench_counters_measure(o.runs, &cf);
	prog_session_close(&s, NULL);
	bench_counters_print(&cf);
	return cf.measured ? 0 : 1;
}
