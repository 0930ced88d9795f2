/*
 * cmd_bench.c - `ringlog bench`: what tracing costs on this machine.
 *
 * Parses and prints; src/bench/write.c runs the session and measures, as
 * medians of --runs interleaved runs, in ns per event:
 *   disabled_ns           rlog_enabled(63) + rlog_write with category 63 off
 *   write_1t_ns           16-byte time-stamped event, 1 thread, daemon draining
 *   write_2t_ns           the same per thread, 2 threads at once
 *   write_untimed_ns      16-byte event without a timestamp (rlog_write_untimed)
 *   write_untimed_n_ns    the same event in batches of BENCH_BATCH_N, each one
 *                         rlog_write_untimed_n call (per event)
 *   ref_rdtsc_store_ns    rdtsc plus a 16-byte store into a large array: the floor
 *   ref_store_ns          a 16-byte store alone: the floor of an untimed event
 *   ref_clock_gettime_ns  clock_gettime(CLOCK_MONOTONIC)
 * and from them events/s and MB/s, and the loss during the write runs
 * (events_lost).  Each write run is a burst of --events events (default
 * 250000, 6 MB), which the default pool (16 MiB) absorbs while the daemon
 * drains.  The daemon's sustained rate, the single ring, overwrite mode,
 * the counters, memory and the payload and thread scaling are the bench/
 * programs' (docs/PERFORMANCE.md, "How to measure").  Everything is printed
 * as "key: value", one per line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "bench/loops.h"
#include "bench/write.h"
#include "cli.h"
#include "clock.h"
#include "session_print.h"

static const struct cli_opt opts[] = {
	{ "--runs", NULL, true },        { "--events", NULL, true }, { "--buffers", NULL, true },
	{ "--buffer-size", NULL, true }, { "--quick", NULL, false }, { NULL, NULL, false },
};

static void print_figures(const struct rlog__region_params *p, unsigned runs, uint64_t events,
			  const struct bench_write_figures *f, const struct rlog__stop_result *st)
{
	printf("runs: %u\n", runs);
	printf("events_per_run: %" PRIu64 "\n", events);
	printf("buffer_size: %u\nmin_buffers: %u\nmax_buffers: %u\n", p->buffer_size,
	       p->min_buffers, p->max_buffers);
	printf("tick_source: %s\n", rlog__tick_source_pick() == RLOG_TICK_TSC ? "tsc" : "monotonic");
	printf("cpus: %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
	printf("disabled_ns: %.2f\n", f->disabled);
	printf("write_1t_ns: %.2f\n", f->write_1t);
	printf("write_2t_ns: %.2f\n", f->write_2t);
	printf("write_untimed_ns: %.2f\n", f->untimed);
	printf("ref_rdtsc_store_ns: %.2f\n", f->ref_rdtsc_store);
	printf("ref_store_ns: %.2f\n", f->ref_store);
	printf("ref_clock_gettime_ns: %.2f\n", f->ref_clock_gettime);
	printf("write_1t_vs_rdtsc_store: %.2f\n", f->write_1t / f->ref_rdtsc_store);
	printf("write_untimed_vs_store: %.2f\n", f->untimed / f->ref_store);
	printf("write_untimed_n_batch: %d\n", BENCH_BATCH_N);
	printf("write_untimed_n_ns: %.2f\n", f->untimed_n);
	printf("write_untimed_n_vs_store: %.2f\n", f->untimed_n / f->ref_store);
	printf("write_1t_events_per_s: %.0f\n", 1e9 / f->write_1t);
	printf("write_1t_mb_per_s: %.1f\n", 1e9 / f->write_1t * BENCH_RECORD_BYTES / 1e6);
	printf("write_2t_events_per_s: %.0f\n", 2e9 / f->write_2t);
	printf("write_2t_mb_per_s: %.1f\n", 2e9 / f->write_2t * BENCH_RECORD_BYTES / 1e6);
	printf("write_untimed_events_per_s: %.0f\n", 1e9 / f->untimed);
	printf("write_untimed_mb_per_s: %.1f\n", 1e9 / f->untimed * BENCH_UNTIMED_RECORD_BYTES / 1e6);
	printf("events_emitted: %" PRIu64 "\n", f->emitted);
	printf("events_lost: %" PRIu64 "\n", f->lost);
	if (st == NULL) /* the stop failed: no final statistics */
		return;
	printf("events_written: %" PRIu64 "\n", st->stats.events_written);
	printf("session_events_lost: %" PRIu64 "\n", st->stats.events_lost);
	printf("daemon_wakeups: %" PRIu64 "\n", st->stats.wakeups);
}

int cmd_bench(int argc, char **argv)
{
	uint64_t runs = 11, events = 250000;
	bool runs_given = false, quick = false;
	/* The default properties (a pool that grows from MinimumBuffers to
	 * MaximumBuffers), category 63 off: the disabled case. */
	struct rlog__region_params p;
	rlog__props_default(&p);
	p.enable_mask = ~(UINT64_C(1) << 63);
	struct cli_args a;
	cli_args_init(&a, "bench", opts, 0, argc, argv);
	while (cli_args_next(&a)) {
		uint64_t v;
		if (cli_is(&a, "--quick")) {
			quick = true;
		} else if (cli_is(&a, "--runs") && cli_parse_u64(a.value, 1, 101, &v)) {
			runs = v;
			runs_given = true;
		} else if (cli_is(&a, "--events") && cli_parse_u64(a.value, 1000, UINT64_C(1) << 32, &v)) {
			events = v;
		} else if (cli_is(&a, "--buffers") && cli_parse_u64(a.value, 2, 65536, &v)) {
			p.min_buffers = p.max_buffers = (uint32_t)v; /* a fixed pool */
		} else if (cli_is(&a, "--buffer-size") && cli_parse_u64(a.value, 4, 1024, &v) &&
			   (v & (v - 1)) == 0) {
			p.buffer_size = (uint32_t)v * 1024;
		} else {
			return cli_usage_error("bench", "%s '%s': out of range (see 'ringlog help bench')",
					       a.name, a.value);
		}
	}
	if (a.bad)
		return 2;
	if (quick && !runs_given)
		runs = 3;

	struct bench_session s;
	struct bench_write_figures f;
	struct rlog__stop_result st;
	enum bench_write_step step;
	int err = bench_write_session(&s, &p, (unsigned)runs, events, &f, &st, &step);
	switch (err == 0 ? 0 : step) {
	case BENCH_WRITE_START:
		return cli_start_error(&s.start, &s.started, err);
	case BENCH_WRITE_ATTACH:
		return cli_error("bench: attach %s: %s", s.name, strerror(-err));
	case BENCH_WRITE_MEMORY:
		return cli_error("bench: out of memory");
	}
	print_figures(&p, (unsigned)runs, events, &f, err < 0 ? NULL : &st);
	if (err < 0)
		return cli_stop_error("bench", s.name, &st, err);
	return cli_stdout_ok() ? 0 : cli_error("bench: writing to stdout: %s", strerror(errno));
}
