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
 *
 * --drain measures the daemon instead (src/bench/drain.c): its CPU per
 * event at a steady rate it keeps up with, against write_1t_ns in the
 * same session (docs/PERFORMANCE.md, "What the daemon costs").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "args.h"
#include "bench/drain.h"
#include "bench/loops.h"
#include "bench/write.h"
#include "cli.h"
#include "clock.h"
#include "session_print.h"

static const struct cli_opt opts[] = {
	{ "--runs", NULL, true },        { "--events", NULL, true }, { "--buffers", NULL, true },
	{ "--buffer-size", NULL, true }, { "--quick", NULL, false }, { "--drain", NULL, false },
	{ "--rate", NULL, true },        { "--dir", NULL, true },
	{ NULL, NULL, false },
};

/* One figure: "KEY: VALUE" with decimals digits. */
struct figure {
	const char *key;
	double value;
	int decimals;
};

static void print_figures(const struct rlog__region_params *p, unsigned runs, uint64_t events,
			  const struct bench_write_figures *f, const struct rlog__stop_result *st)
{
	cli_kv_u64("runs", runs);
	cli_kv_u64("events_per_run", events);
	cli_kv_u64("buffer_size", p->buffer_size);
	cli_kv_u64("min_buffers", p->min_buffers);
	cli_kv_u64("max_buffers", p->max_buffers);
	printf("tick_source: %s\n", rlog__tick_source_pick() == RLOG_TICK_TSC ? "tsc" : "monotonic");
	cli_kv_u64("cpus", (uint64_t)sysconf(_SC_NPROCESSORS_ONLN));
	double e1 = 1e9 / f->write_1t, e2 = 2e9 / f->write_2t, eu = 1e9 / f->untimed;
	const struct figure fig[] = {
		{ "disabled_ns", f->disabled, 2 },
		{ "write_1t_ns", f->write_1t, 2 },
		{ "write_2t_ns", f->write_2t, 2 },
		{ "write_untimed_ns", f->untimed, 2 },
		{ "ref_rdtsc_store_ns", f->ref_rdtsc_store, 2 },
		{ "ref_store_ns", f->ref_store, 2 },
		{ "ref_clock_gettime_ns", f->ref_clock_gettime, 2 },
		{ "write_1t_vs_rdtsc_store", f->write_1t / f->ref_rdtsc_store, 2 },
		{ "write_untimed_vs_store", f->untimed / f->ref_store, 2 },
		{ "write_untimed_n_batch", BENCH_BATCH_N, 0 },
		{ "write_untimed_n_ns", f->untimed_n, 2 },
		{ "write_untimed_n_vs_store", f->untimed_n / f->ref_store, 2 },
		{ "write_1t_events_per_s", e1, 0 },
		{ "write_1t_mb_per_s", e1 * BENCH_RECORD_BYTES / 1e6, 1 },
		{ "write_2t_events_per_s", e2, 0 },
		{ "write_2t_mb_per_s", e2 * BENCH_RECORD_BYTES / 1e6, 1 },
		{ "write_untimed_events_per_s", eu, 0 },
		{ "write_untimed_mb_per_s", eu * BENCH_UNTIMED_RECORD_BYTES / 1e6, 1 },
	};
	for (size_t i = 0; i < sizeof fig / sizeof fig[0]; i++)
		printf("%s: %.*f\n", fig[i].key, fig[i].decimals, fig[i].value);
	cli_kv_u64("events_emitted", f->emitted);
	cli_kv_u64("events_lost", f->lost);
	if (st == NULL) /* the stop failed: no final statistics */
		return;
	cli_kv_u64("events_written", st->stats.events_written);
	cli_kv_u64("session_events_lost", st->stats.events_lost);
	cli_kv_u64("daemon_wakeups", st->stats.wakeups);
}

/* The name of the file system dir is on, for the figures' reader. */
static const char *fs_name(const char *dir)
{
	static const struct { unsigned long magic; const char *name; } fs[] = {
		{ 0x01021994, "tmpfs" }, { 0xef53, "ext4" },	   { 0x58465342, "xfs" },
		{ 0x9123683e, "btrfs" }, { 0x2fc12fc1, "zfs" },	   { 0x794c7630, "overlay" },
		{ 0x6969, "nfs" },	 { 0xf2f52010, "f2fs" },
	};
	struct statfs sf;
	if (statfs(dir, &sf) != 0)
		return "unknown";
	for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
		if ((unsigned long)sf.f_type == fs[i].magic)
			return fs[i].name;
	return "other";
}

/* --drain: the daemon's figures, and the producer's in the same runs. */
static int bench_drain(const struct rlog__region_params *p, const char *dir, unsigned runs,
		       uint64_t events, double rate, unsigned ms, unsigned circular_mb)
{
	struct stat st;
	if (stat(dir, &st) != 0)
		return cli_error("bench: --dir %s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return cli_error("bench: --dir %s: not a directory", dir);
	if (strlen(dir) > 4000)
		return cli_error("bench: --dir: the name is too long");
	const char *fs = fs_name(dir);
	bool tmpfs = strcmp(fs, "tmpfs") == 0;
	struct bench_session s;
	struct bench_drain_figures f;
	int err = bench_drain_session(&s, p, dir, runs, events, rate, ms, circular_mb, &f);
	if (err == -ENOMEM)
		return cli_error("bench: out of memory");
	if (err < 0 && !s.started.daemon_pid)
		return cli_start_error(&s.start, &s.started, err);
	if (err < 0)
		return cli_error("bench: session %s: %s", s.name, strerror(-err));
	cli_kv_u64("runs", runs);
	cli_kv_u64("events_per_run", events);
	cli_kv_u64("drain_ms_per_run", ms);
	double per_cpu_s = f.drain_cpu_ns > 0 ? 1e9 / f.drain_cpu_ns : 0;
	double total = f.drain_cpu_ns + (f.kthreads_cpu_ns > 0 ? f.kthreads_cpu_ns : 0);
	const struct figure fig[] = {
		{ "drain_rate_events_per_s", f.rate, 0 },
		{ "drain_rate_mb_per_s", f.rate * BENCH_RECORD_BYTES / 1e6, 1 },
		{ "write_1t_ns", f.write_1t, 2 },
		{ "drain_cpu_ns_per_event", f.drain_cpu_ns, 2 },
		{ "drain_cpu_vs_write_1t", f.write_1t > 0 ? f.drain_cpu_ns / f.write_1t : 0, 2 },
		{ "drain_events_per_cpu_s", per_cpu_s, 0 },
		{ "drain_mb_per_cpu_s", per_cpu_s * BENCH_RECORD_BYTES / 1e6, 1 },
		{ "kernel_threads_cpu_ns_per_event", f.kthreads_cpu_ns, 2 },
		{ "drain_total_cpu_ns_per_event", total, 2 },
		{ "drain_total_vs_write_1t", f.write_1t > 0 ? total / f.write_1t : 0, 2 },
		{ "ref_write_cpu_ns_per_event", f.ref_write_ns, 2 },
		{ "drain_cpu_vs_ref_write", f.ref_write_ns > 0 ? f.drain_cpu_ns / f.ref_write_ns : 0, 2 },
		{ "circular_file_mb", circular_mb, 0 },
		{ "circular_drain_cpu_ns_per_event", f.circular_cpu_ns, 2 },
		{ "circular_drain_cpu_vs_write_1t",
		  f.write_1t > 0 ? f.circular_cpu_ns / f.write_1t : 0, 2 },
		{ "ref_rewrite_cpu_ns_per_event", f.ref_rewrite_ns, 2 },
		{ "circular_drain_cpu_vs_ref_rewrite",
		  f.ref_rewrite_ns > 0 ? f.circular_cpu_ns / f.ref_rewrite_ns : 0, 2 },
	};
	/* The names these had when the files were always on tmpfs, kept
	 * for the scripts that read them, where they still say the truth. */
	static const char *const tmpfs_keys[][2] = {
		{ "ref_write_cpu_ns_per_event", "ref_tmpfs_write_cpu_ns_per_event" },
		{ "drain_cpu_vs_ref_write", "drain_cpu_vs_tmpfs_write" },
		{ "ref_rewrite_cpu_ns_per_event", "ref_tmpfs_rewrite_cpu_ns_per_event" },
		{ "circular_drain_cpu_vs_ref_rewrite", "circular_drain_cpu_vs_tmpfs_rewrite" },
	};
	printf("drain_fs: %s\n", fs);
	for (size_t i = 0; i < sizeof fig / sizeof fig[0]; i++) {
		printf("%s: %.*f\n", fig[i].key, fig[i].decimals, fig[i].value);
		for (size_t k = 0; tmpfs && k < sizeof tmpfs_keys / sizeof tmpfs_keys[0]; k++)
			if (strcmp(fig[i].key, tmpfs_keys[k][0]) == 0)
				printf("%s: %.*f\n", tmpfs_keys[k][1], fig[i].decimals, fig[i].value);
	}
	cli_kv_u64("events_emitted", f.emitted);
	cli_kv_u64("events_lost", f.lost);
	cli_kv_u64("events_written", f.written);
	cli_kv_u64("session_events_lost", f.session_lost);
	return cli_stdout_ok() ? 0 : cli_error("bench: writing to stdout: %s", strerror(errno));
}

int cmd_bench(int argc, char **argv)
{
	uint64_t runs = 11, events = 250000;
	bool runs_given = false, quick = false, drain = false, rate_given = false;
	const char *dir = NULL;
	uint64_t rate = 8000000;
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
		} else if (cli_is(&a, "--drain")) {
			drain = true;
		} else if (cli_is(&a, "--rate") &&
			   cli_parse_u64(a.value, 100000, 1000000000, &v)) {
			rate = v;
			rate_given = true;
		} else if (cli_is(&a, "--dir")) {
			dir = a.value;
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
	if (rate_given && !drain)
		return cli_usage_error("bench", "--rate: only with --drain (see 'ringlog help bench')");
	if (dir && !drain)
		return cli_usage_error("bench", "--dir: only with --drain (see 'ringlog help bench')");
	if (quick && !runs_given)
		runs = 3;
	if (drain) /* 5 runs of 500 ms each way, a circular file of 128 MiB */
		return bench_drain(&p, dir ? dir : "/dev/shm",
				   (unsigned)(runs_given ? runs : quick ? 1 : 5), events, (double)rate,
				   quick ? 100 : 500, quick ? 4 : 128);

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
