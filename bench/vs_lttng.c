/*
 * vs_lttng.c - the same 16-byte event through ringlog (rlog_write) and
 * through an LTTng-UST tracepoint (two u64 fields), in one process, runs
 * interleaved: bench/vs_lttng.sh builds it, sets up both sessions and runs
 * it.  Not part of the meson build: it needs LTTng-UST's headers and
 * library (scripts/deps.sh --lttng), and LTTng's macros need GNU C
 * (the script compiles it with -std=gnu11).
 *
 *   vs_lttng RUNS EVENTS
 *
 * Prints "key: value" lines: the medians of RUNS runs of EVENTS events
 * each, in ns per event, for both, and their ratio; the ringlog writes
 * that were lost (LTTng's own losses are counted by the script, from the
 * trace).  Each ringlog run ends with rlog_flush_thread; both sleep 50 ms
 * after a run so that their consumers drain.
 *
 * Then the disabled event, 40 x EVENTS per run, runs interleaved again:
 *   disabled_ns           RLOG_EVENT of a declared event (two u64 fields,
 *                         category 63; <ringlog/event.h>), what a
 *                         tracepoint is in LTTng, in a process that is in
 *                         no session (before rlog_attach): what an
 *                         instrumented program pays when nothing traces it
 *   disabled_write_ns     rlog_write of a 16-byte payload the loop fills
 *                         before the call, in no session
 *   disabled_category_ns  the same RLOG_EVENT in the attached process,
 *                         category 63 off in the session
 *   disabled_guard_ns     `if (rlog_enabled(63)) rlog_write(...)` there
 *   lttng_disabled_ns     lttng_ust_tracepoint of ringlog_bench:ev16_off,
 *                         which no session enables
 * Each loop is written as an application writes it, with no branch hint
 * of its own: the hints are the tracers'.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "vs_lttng_tp.h"

#include "ringlog.h"
#include "ringlog/event.h"

/* The declared event of the disabled loops: category 63, off. */
#define EV16_FIELDS(F) F(U64, seq) F(U64, val)
RLOG_DEFINE_EVENT(ev16_off, 1025, "ev16_off", 63, EV16_FIELDS)

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void settle(void)
{
	struct timespec ts = { 0, 50 * 1000000L };
	nanosleep(&ts, NULL);
}

/* The disabled loops, each its own function so that one's layout does not
 * follow another's.  noinline: a GCC extension; elsewhere the compiler
 * may inline them, which measures the same instructions. */
#if defined(__GNUC__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif

NOINLINE static double rlog_event_loop(uint64_t n)
{
	uint64_t t0 = now_ns();
	for (uint64_t i = 0; i < n; i++)
		RLOG_EVENT(ev16_off, i, 7);
	return (double)(now_ns() - t0) / (double)n;
}

NOINLINE static double rlog_write_loop(uint64_t n)
{
	uint64_t v[2] = { 0, 7 }, t0 = now_ns();
	for (uint64_t i = 0; i < n; i++) {
		v[0] = i;
		rlog_write(1024, v, sizeof v);
	}
	return (double)(now_ns() - t0) / (double)n;
}

NOINLINE static double rlog_guard_loop(uint64_t n)
{
	uint64_t t0 = now_ns();
	for (uint64_t i = 0; i < n; i++) {
		if (rlog_enabled(63)) {
			uint64_t v[2] = { i, 7 };
			rlog_write(1024, v, sizeof v);
		}
	}
	return (double)(now_ns() - t0) / (double)n;
}

NOINLINE static double lttng_disabled_loop(uint64_t n)
{
	uint64_t t0 = now_ns();
	for (uint64_t i = 0; i < n; i++)
		lttng_ust_tracepoint(ringlog_bench, ev16_off, i, 7);
	return (double)(now_ns() - t0) / (double)n;
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 11;
	uint64_t events = argc > 2 ? strtoull(argv[2], NULL, 10) : 250000;
	if (runs < 1 || runs > 101 || events < 1000) {
		fprintf(stderr, "vs_lttng: usage: vs_lttng RUNS(1-101) EVENTS(>=1000)\n");
		return 2;
	}
	/* rd, rw: no session; rc, rg: attached, category 63 off. */
	double *rd = calloc((size_t)runs, sizeof *rd), *rc = calloc((size_t)runs, sizeof *rc),
	       *rw = calloc((size_t)runs, sizeof *rw), *rg = calloc((size_t)runs, sizeof *rg),
	       *ld = calloc(2 * (size_t)runs, sizeof *ld);
	if (rd == NULL || rc == NULL || rw == NULL || rg == NULL || ld == NULL)
		return 1;
	if (lttng_ust_tracepoint_enabled(ringlog_bench, ev16_off)) {
		fprintf(stderr, "vs_lttng: ringlog_bench:ev16_off is enabled (it must not be)\n");
		return 1;
	}
	/* Disabled, detached: before the process joins the session. */
	for (int r = 0; r < runs; r++) {
		rd[r] = rlog_event_loop(40 * events);
		ld[r] = lttng_disabled_loop(40 * events);
		rw[r] = rlog_write_loop(40 * events);
	}
	int err = rlog_attach(NULL);
	if (err < 0) {
		fprintf(stderr, "vs_lttng: rlog_attach: %d\n", err);
		return 1;
	}
	if (rlog_enabled(63)) {
		fprintf(stderr, "vs_lttng: category 63 is on in the session (it must be off)\n");
		return 1;
	}
	if (!lttng_ust_tracepoint_enabled(ringlog_bench, ev16)) {
		fprintf(stderr, "vs_lttng: the LTTng tracepoint ringlog_bench:ev16 is not enabled\n");
		return 1;
	}
	double *rl = calloc((size_t)runs, sizeof *rl), *lt = calloc((size_t)runs, sizeof *lt);
	uint64_t rl_lost = 0, rl_written = 0;
	if (rl == NULL || lt == NULL)
		return 1;
	for (int r = 0; r < runs; r++) {
		uint64_t v[2] = { 0, 7 };
		uint64_t t0 = now_ns();
		for (uint64_t i = 0; i < events; i++) {
			v[0] = i;
			int w = rlog_write(1024, v, sizeof v);
			rl_written += w == 1;
			rl_lost += w < 0;
		}
		uint64_t t1 = now_ns();
		rlog_flush_thread();
		rl[r] = (double)(t1 - t0) / (double)events;
		settle();
		t0 = now_ns();
		for (uint64_t i = 0; i < events; i++)
			lttng_ust_tracepoint(ringlog_bench, ev16, i, 7);
		t1 = now_ns();
		lt[r] = (double)(t1 - t0) / (double)events;
		settle();
	}
	/* Disabled by category, attached; the LTTng loop again beside it. */
	for (int r = 0; r < runs; r++) {
		rc[r] = rlog_event_loop(40 * events);
		ld[runs + r] = lttng_disabled_loop(40 * events);
		rg[r] = rlog_guard_loop(40 * events);
	}
	rlog_detach();
	double mr = median(rl, runs), ml = median(lt, runs);
	printf("runs: %d\nevents_per_run: %llu\n", runs, (unsigned long long)events);
	printf("ringlog_write_ns: %.2f\n", mr);
	printf("lttng_tracepoint_ns: %.2f\n", ml);
	printf("lttng_vs_ringlog: %.2f\n", ml / mr);
	/* LTTng's disabled figure: the median of its runs in both phases. */
	double md = median(rd, runs), mc = median(rc, runs), mw = median(rw, runs),
	       mg = median(rg, runs), mld = median(ld, 2 * runs);
	printf("disabled_ns: %.3f\n", md);
	printf("disabled_write_ns: %.3f\n", mw);
	printf("disabled_category_ns: %.3f\n", mc);
	printf("disabled_guard_ns: %.3f\n", mg);
	printf("lttng_disabled_ns: %.3f\n", mld);
	printf("disabled_vs_lttng: %.2f\n", md / mld);
	printf("disabled_write_vs_lttng: %.2f\n", mw / mld);
	printf("disabled_category_vs_lttng: %.2f\n", mc / mld);
	printf("disabled_guard_vs_lttng: %.2f\n", mg / mld);
	/* The fastest run of each (median() sorted them): the same
	 * instructions' cost with the least of the machine's noise. */
	printf("disabled_vs_lttng_min: %.2f\n", rd[0] / ld[0]);
	printf("disabled_category_vs_lttng_min: %.2f\n", rc[0] / ld[0]);
	printf("ringlog_events_written: %llu\n", (unsigned long long)rl_written);
	printf("ringlog_events_lost: %llu\n", (unsigned long long)rl_lost);
	printf("lttng_events_emitted: %llu\n", (unsigned long long)events * (uint64_t)runs);
	free(rl);
	free(lt);
	free(rd);
	free(rc);
	free(rw);
	free(rg);
	free(ld);
	return 0;
}
