/*
 * cmd_bench.c - `ringlog bench`: what an event costs on this machine.
 *
 * Runs its own session and daemon (log file on tmpfs, /dev/shm), with the
 * default buffers unless told otherwise, and measures, as medians of
 * --runs runs, in ns per event:
 *   disabled_ns           rlog_enabled(63) + rlog_write with category 63 off
 *   write_1t_ns           16-byte time-stamped event, 1 thread, daemon draining
 *   write_2t_ns           the same per thread, 2 threads at once
 *   write_untimed_ns      16-byte event without a timestamp (rlog_write_untimed)
 *   write_untimed_n_ns    the same event in batches of BATCH_N, each one
 *                         rlog_write_untimed_n call (per event)
 *   ref_rdtsc_store_ns    rdtsc plus a 16-byte store into a large array: the floor
 *   ref_store_ns          a 16-byte store alone: the floor of an untimed event
 *   ref_clock_gettime_ns  clock_gettime(CLOCK_MONOTONIC)
 *   ring_write_ns         the single ring's rlog_ring_write of the same event,
 *                         time-stamped with the same clock read, a flush thread
 *                         draining the ring (bench_ring.c)
 * and the loss during the write runs (events_lost), events/s and MB/s;
 * then the counters' figures (bench_counters.c): an application counter's
 * increment and the daemon's sampling pass per counter.
 * Each write run is a burst of --events events (default 250000, 6 MB),
 * which the default pool (16 MiB) absorbs while the daemon drains.  With
 * --scaling, also the cost against the payload size (0 to 1024 bytes,
 * against memcpy of as many bytes) and against the number of threads (1, 2,
 * 4).  With --memory, what the daemon, this process and the session's
 * object keep resident at the start, after the bursts and once the idle
 * pool is trimmed, and the cost of touching fresh pool pages
 * (bench_memory.c).  Then, unless --quick, the highest steady rate (from a ladder of
 * rates, 400 ms each) at which nothing is lost: sustained_events_per_s,
 * against write(2) of 512 MiB into a new tmpfs file in the same invocation
 * (sustained_vs_tmpfs, issue 9's target: at least 0.5), and what draining
 * costs the daemon per CPU-second against what that write costs
 * (drain_cpu_vs_tmpfs: the ratio a daemon with a core of its own reaches);
 * then the same ladder into a circular file of 512 MiB, preallocated,
 * against write(2) over an existing 512 MiB file (circular_*: neither
 * allocates pages, as with a disk's page cache in its steady state;
 * bench_ladder.c).
 * Everything is printed as "key: value", one per line.  The loops are in
 * bench_loops.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "bench.h"
#include "bench_counters.h"
#include "bench_ring.h"
#include "cli.h"
#include "clock.h"
#include "session_print.h"
#include "ringlog.h"

static const struct cli_opt opts[] = {
	{ "--runs", NULL, true },        { "--events", NULL, true }, { "--buffers", NULL, true },
	{ "--buffer-size", NULL, true }, { "--quick", NULL, false }, { "--scaling", NULL, false },
	{ "--memory", NULL, false },     { NULL, NULL, false },
};
#define RECORD_BYTES 24         /* header + timestamp + 16-byte payload */
#define UNTIMED_RECORD_BYTES 20 /* header + 16-byte payload */
#define CIRCULAR_MB 512          /* the circular file of the second ladder */
#define BATCH_N 32              /* records per rlog_write_untimed_n call (write_untimed_n_ns) */

static const size_t payload_sizes[] = { 0, 16, 64, 256, 1024 };
#define NSIZES (sizeof payload_sizes / sizeof payload_sizes[0])
static const int thread_counts[] = { 1, 2, 4 };
#define NTHREADS (sizeof thread_counts / sizeof thread_counts[0])

/* Lets the daemon drain everything before the next run. */
static void settle(void)
{
	struct timespec ts = { 0, 50 * 1000000L };
	nanosleep(&ts, NULL);
}

/* The scaling figures (--scaling), runs x (sizes + thread counts). */
struct scaling {
	double *size_ns[NSIZES], *memcpy_ns[NSIZES];
	double *thr_ns[NTHREADS], *thr_rate[NTHREADS];
	uint64_t size_events[NSIZES], thr_events[NTHREADS];
	uint64_t lost;
	bool short_threads; /* a thread could not be created */
};

static bool scaling_alloc(struct scaling *sc, uint64_t runs)
{
	bool ok = true;
	for (size_t k = 0; k < NSIZES; k++) {
		ok &= (sc->size_ns[k] = calloc(runs, sizeof(double))) != NULL;
		ok &= (sc->memcpy_ns[k] = calloc(runs, sizeof(double))) != NULL;
	}
	for (size_t k = 0; k < NTHREADS; k++) {
		ok &= (sc->thr_ns[k] = calloc(runs, sizeof(double))) != NULL;
		ok &= (sc->thr_rate[k] = calloc(runs, sizeof(double))) != NULL;
	}
	return ok;
}

static void scaling_free(struct scaling *sc)
{
	for (size_t k = 0; k < NSIZES; k++) {
		free(sc->size_ns[k]);
		free(sc->memcpy_ns[k]);
	}
	for (size_t k = 0; k < NTHREADS; k++) {
		free(sc->thr_ns[k]);
		free(sc->thr_rate[k]);
	}
}

/*
 * One run of each scaling figure.  A burst must fit in half the pool (the
 * daemon drains meanwhile, but not at the producer's speed): at most 8 MiB
 * of records per payload size, and as many events in all for 2 and 4
 * threads as for 2 threads in the default figures.
 */
static void scaling_run(struct scaling *sc, uint64_t r, uint64_t events, uint64_t pool_bytes)
{
	for (size_t k = 0; k < NSIZES; k++) {
		size_t len = payload_sizes[k];
		uint64_t rec = (8 + len + 3) & ~(uint64_t)3, n = pool_bytes / 2 / rec;
		n = n < events ? n : events;
		sc->size_events[k] = n;
		sc->memcpy_ns[k][r] = bench_ref_memcpy(n, len);
		struct bench_write w = { .threads = 1, .events = n, .len = len };
		struct bench_result res = bench_write_run(&w);
		sc->size_ns[k][r] = res.ns;
		sc->lost += res.lost;
		settle();
	}
	for (size_t k = 0; k < NTHREADS; k++) {
		int t = thread_counts[k];
		uint64_t n = t == 1 ? events : events * 2 / (uint64_t)t;
		sc->thr_events[k] = n;
		struct bench_write w = { .threads = t, .events = n, .len = 16 };
		struct bench_result res = bench_write_run(&w);
		sc->thr_ns[k][r] = res.ns;
		sc->thr_rate[k][r] = res.span_ns > 0 ? (double)n * res.threads / res.span_ns * 1e9 : 0;
		sc->short_threads |= res.threads != t;
		sc->lost += res.lost;
		settle();
	}
}

/* One figure of a group: "GROUP_N_KEY: VALUE" with decimals digits. */
struct figure {
	const char *key;
	double value;
	int decimals;
};

static void print_figures(const char *group, long n, const struct figure *f, size_t count)
{
	for (size_t i = 0; i < count; i++)
		printf("%s_%ld_%s: %.*f\n", group, n, f[i].key, f[i].decimals, f[i].value);
}

static void scaling_print(struct scaling *sc, uint64_t runs)
{
	for (size_t k = 0; k < NSIZES; k++) {
		double len = (double)payload_sizes[k];
		double w = bench_median(sc->size_ns[k], (int)runs);
		double m = bench_median(sc->memcpy_ns[k], (int)runs);
		const struct figure f[] = {
			{ "events_per_run", (double)sc->size_events[k], 0 },
			{ "write_ns", w, 2 },
			{ "write_gb_per_s", w > 0 ? len / w : 0, 3 },
			{ "ref_memcpy_ns", m, 2 },
			{ "ref_memcpy_gb_per_s", m > 0 ? len / m : 0, 3 },
			{ "write_vs_memcpy", m > 0 ? w / m : 0, 2 },
		};
		print_figures("payload", (long)payload_sizes[k], f, sizeof f / sizeof f[0]);
	}
	for (size_t k = 0; k < NTHREADS; k++) {
		double rate = bench_median(sc->thr_rate[k], (int)runs);
		const struct figure f[] = {
			{ "events_per_thread", (double)sc->thr_events[k], 0 },
			{ "ns_per_thread", bench_median(sc->thr_ns[k], (int)runs), 2 },
			{ "aggregate_events_per_s", rate, 0 },
			{ "aggregate_mb_per_s", rate * RECORD_BYTES / 1e6, 1 },
		};
		print_figures("threads", thread_counts[k], f, sizeof f / sizeof f[0]);
	}
	if (sc->short_threads)
		printf("threads_note: a thread could not be created in some runs\n");
	printf("scaling_events_lost: %" PRIu64 "\n", sc->lost);
}

static struct bench_result write16(int threads, uint64_t n, bool untimed)
{
	struct bench_write w = { .threads = threads, .events = n, .len = 16, .untimed = untimed };
	return bench_write_run(&w);
}

int cmd_bench(int argc, char **argv)
{
	uint64_t runs = 11, events = 250000;
	bool quick = false, scaling = false, memory = false;
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
		} else if (cli_is(&a, "--scaling")) {
			scaling = true;
		} else if (cli_is(&a, "--memory")) {
			memory = true;
		} else if (cli_is(&a, "--runs") && cli_parse_u64(a.value, 1, 101, &v)) {
			runs = v;
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

	char name[64], path[128];
	snprintf(name, sizeof name, "bench-%d", (int)getpid());
	snprintf(path, sizeof path, "/dev/shm/ringlog-bench-%d.rlog", (int)getpid());
	struct rlog__start st = { .name = name, .path = path, .params = p, .force = true };
	struct rlog__start_result started;
	int err = rlog__session_start(&st, &started);
	if (err < 0)
		return cli_start_error(&st, &started, err);
	pid_t daemon = started.daemon_pid;
	err = rlog_attach(name);
	if (err < 0) {
		struct rlog__stop_result res;
		rlog__session_stop(name, &res, NULL, NULL);
		unlink(path);
		return cli_error("bench: attach %s: %s", name, strerror(-err));
	}

	double *d = calloc(runs, sizeof *d), *w1 = calloc(runs, sizeof *d),
	       *w2 = calloc(runs, sizeof *d), *wu = calloc(runs, sizeof *d),
	       *wn = calloc(runs, sizeof *d),
	       *rs = calloc(runs, sizeof *d), *rst = calloc(runs, sizeof *d),
	       *rc = calloc(runs, sizeof *d), *rw = calloc(runs, sizeof *d);
	struct scaling sc;
	memset(&sc, 0, sizeof sc);
	if (!d || !w1 || !w2 || !wu || !wn || !rs || !rst || !rc || !rw ||
	    (scaling && !scaling_alloc(&sc, runs))) {
		cli_error("bench: out of memory");
		runs = 0; /* stop the session and report nothing */
	}
	/* The single ring, flushed into its own file on tmpfs. */
	char ring_log[160];
	snprintf(ring_log, sizeof ring_log, "/dev/shm/ringlog-bench-ring-%d.rlog", (int)getpid());
	struct bench_ring *br = NULL;
	int ring_err = runs == 0 ? 0 : bench_ring_open(&br, events, rlog__tick_source_pick(), ring_log);
	if (ring_err < 0)
		cli_error("bench: the single ring: %s (no ring_write_ns)", strerror(-ring_err));
	struct bench_memory mem_start, mem_busy, mem_idle;
	if (memory)
		bench_memory_sample(name, daemon, &mem_start);
	uint64_t lost = 0;
	/* Interleave the figures run by run, so that a noisy moment of the
	 * machine spreads over all of them rather than skewing one. */
	for (uint64_t r = 0; r < runs; r++) {
		rs[r] = bench_ref_rdtsc_store(events);
		rst[r] = bench_ref_store(events);
		rw[r] = br ? bench_ring_run(br, events) : 0;
		rc[r] = bench_ref_clock_gettime(events / 4);
		d[r] = bench_disabled(events * 4);
		struct bench_result res = write16(1, events, false);
		w1[r] = res.ns;
		lost += res.lost;
		settle();
		res = write16(1, events, true);
		wu[r] = res.ns;
		lost += res.lost;
		settle();
		struct bench_write wb = { .threads = 1, .events = events, .len = 16, .batch = BATCH_N };
		res = bench_write_run(&wb);
		wn[r] = res.ns;
		lost += res.lost;
		settle();
		res = write16(2, events, false);
		w2[r] = res.ns;
		lost += res.lost;
		settle();
		if (scaling)
			scaling_run(&sc, r, events, (uint64_t)p.buffer_size * p.max_buffers);
	}
	/* Memory: after the bursts, and once the idle pool is trimmed (the
	 * daemon waits RLOG_TRIM_IDLE_MS, 1 s, after its last drained buffer). */
	double trim_wait_ms = 0, touch_ns = 0, retouch_ns = 0;
	if (memory && runs > 0) {
		settle();
		bench_memory_sample(name, daemon, &mem_busy);
		uint64_t t0 = bench_now_ns();
		for (int i = 0; i < 100; i++) {
			struct timespec ts = { 0, 50 * 1000000L };
			nanosleep(&ts, NULL);
			bench_memory_sample(name, daemon, &mem_idle);
			if (mem_idle.pool_kb == 0)
				break;
		}
		trim_wait_ms = (double)(bench_now_ns() - t0) / 1e6;
		touch_ns = bench_page_touch((size_t)p.buffer_size * p.max_buffers, &retouch_ns);
	}
	/* The sustained rate: a ladder of steady rates, 400 ms each
	 * (bench_ladder.c), into this session's sequential file, against
	 * write(2) into a new tmpfs file. */
	char ref[160];
	snprintf(ref, sizeof ref, "/dev/shm/ringlog-bench-ref-%d", (int)getpid());
	bool ladders = !quick && runs > 0;
	double tmpfs_cpu = 0, tmpfs = ladders ? bench_ref_tmpfs_write(ref, false, &tmpfs_cpu) : 0;
	struct bench_ladder lad = { .limit = "ladder" }, circ = { .limit = "ladder" };
	if (ladders)
		bench_ladder_run(daemon, &lad);
	/* Then into a circular file of CIRCULAR_MB on tmpfs, whose pages are
	 * written again lap after lap, against write(2) over an existing
	 * file: both without page allocation, as with a disk's page cache
	 * in its steady state.  A file that keeps growing on tmpfs takes new
	 * memory, which on a virtual machine can cost the host's page faults
	 * (docs/PERFORMANCE.md, "Drain throughput"). */
	double rewrite_cpu = 0, rewrite = 0;
	bool circ_ran = false;
	char namec[64], pathc[128];
	snprintf(namec, sizeof namec, "bench-circ-%d", (int)getpid());
	snprintf(pathc, sizeof pathc, "/dev/shm/ringlog-bench-circ-%d.rlog", (int)getpid());
	struct rlog__region_params pc = p;
	pc.log_file_mode = RLOG_MODE_CIRCULAR | RLOG_MODE_PREALLOCATE;
	pc.max_file_size = (uint64_t)CIRCULAR_MB << 20;
	struct rlog__start stc = { .name = namec, .path = pathc, .params = pc, .force = true };
	struct rlog__start_result startedc = { 0 };
	int circ_err = ladders ? rlog__session_start(&stc, &startedc) : 0;
	if (circ_err < 0)
		cli_error("bench: the circular ladder's session: %s (no circular_* figures)",
			  strerror(-circ_err));
	if (ladders && circ_err == 0) {
		rewrite = bench_ref_tmpfs_write(ref, true, &rewrite_cpu);
		int aerr = rlog_attach(namec);
		if (aerr < 0)
			cli_error("bench: attach %s: %s (no circular_* figures)", namec,
				  strerror(-aerr));
		else {
			/* One lap first (576 MB of records at 12 M/s): a
			 * preallocated page of tmpfs is only reserved, and its
			 * first write can cost what a new one does. */
			bench_write_paced(12e6, 2000, startedc.daemon_pid);
			bench_ladder_run(startedc.daemon_pid, &circ);
			circ_ran = true;
		}
		if (rlog_attach(name) != 0)
			cli_error("bench: attach %s again failed", name);
	}
	if (startedc.daemon_pid > 0) {
		struct rlog__stop_result resc;
		rlog__session_stop(namec, &resc, NULL, NULL);
		waitpid(startedc.daemon_pid, NULL, 0);
		unlink(pathc);
	}
	/* A second session: every write then takes the slow path and goes to
	 * both (docs/PERFORMANCE.md).  Interleaved with the one-session figure
	 * run by run, as above. */
	double *s1 = calloc(runs + 1, sizeof *s1), *s2 = calloc(runs + 1, sizeof *s2);
	char name2[64], path2[128];
	snprintf(name2, sizeof name2, "bench2-%d", (int)getpid());
	snprintf(path2, sizeof path2, "/dev/shm/ringlog-bench2-%d.rlog", (int)getpid());
	struct rlog__start st2 = { .name = name2, .path = path2, .params = p, .force = true };
	struct rlog__start_result started2 = { 0 };
	bool two = s1 && s2 && runs > 0 && rlog__session_start(&st2, &started2) == 0;
	uint64_t lost2 = 0;
	for (uint64_t r = 0; r < runs && two; r++) {
		s1[r] = write16(1, events, false).ns;
		settle();
		if (rlog_attach_add(name2) != 0) {
			two = false;
			break;
		}
		struct bench_result res = write16(1, events, false);
		s2[r] = res.ns;
		lost2 += res.lost;
		rlog_detach_session(name2);
		settle();
	}
	if (two || started2.daemon_pid > 0) {
		struct rlog__stop_result res2;
		rlog__session_stop(name2, &res2, NULL, NULL);
		waitpid(started2.daemon_pid, NULL, 0);
		unlink(path2);
	}
	/* Overwrite mode: a flight recorder of 64 buffers (1 MiB with the
	 * default size), which each run laps several times, against the
	 * main session run by run. */
	double *o1 = calloc(runs + 1, sizeof *o1), *ow = calloc(runs + 1, sizeof *ow);
	char name3[64];
	snprintf(name3, sizeof name3, "bench-ow-%d", (int)getpid());
	struct rlog__region_params p3 = p;
	p3.min_buffers = p3.max_buffers = 64;
	p3.log_file_mode = RLOG_MODE_OVERWRITE;
	struct rlog__start st3 = { .name = name3, .path = NULL, .params = p3 };
	struct rlog__start_result started3 = { 0 };
	bool ovw = o1 && ow && runs > 0 && rlog__session_start(&st3, &started3) == 0;
	uint64_t lost3 = 0;
	for (uint64_t r = 0; r < runs && ovw; r++) {
		o1[r] = write16(1, events, false).ns;
		settle();
		if (rlog_attach(name3) != 0) {
			ovw = false;
			break;
		}
		struct bench_result res3 = write16(1, events, false);
		ow[r] = res3.ns;
		lost3 += res3.lost;
		ovw = rlog_attach(name) == 0;
		settle();
	}
	struct rlog__stop_result ow_stop = { 0 };
	if (ovw || started3.daemon_pid > 0) {
		rlog__session_stop(name3, &ow_stop, NULL, NULL);
		waitpid(started3.daemon_pid, NULL, 0);
	}
	uint64_t ring_written = 0, ring_lost = 0, ring_wakeups = 0;
	if (br)
		bench_ring_close(br, &ring_written, &ring_lost, &ring_wakeups);
	struct bench_counter_figures cf;
	bench_counters_measure((unsigned)runs, &cf);
	rlog_detach();
	struct rlog__stop_result res;
	int stop_err = rlog__session_stop(name, &res, NULL, NULL);
	waitpid(daemon, NULL, 0);
	unlink(path);
	if (runs == 0)
		goto out;

	double md = bench_median(d, (int)runs), m1 = bench_median(w1, (int)runs);
	double m2 = bench_median(w2, (int)runs), mu = bench_median(wu, (int)runs);
	double mn = bench_median(wn, (int)runs);
	double mrs = bench_median(rs, (int)runs), mrst = bench_median(rst, (int)runs);
	double mrc = bench_median(rc, (int)runs);
	printf("runs: %" PRIu64 "\n", runs);
	printf("events_per_run: %" PRIu64 "\n", events);
	printf("buffer_size: %u\nmin_buffers: %u\nmax_buffers: %u\n", p.buffer_size, p.min_buffers,
	       p.max_buffers);
	printf("tick_source: %s\n", rlog__tick_source_pick() == RLOG_TICK_TSC ? "tsc" : "monotonic");
	printf("cpus: %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
	printf("disabled_ns: %.2f\n", md);
	printf("write_1t_ns: %.2f\n", m1);
	printf("write_2t_ns: %.2f\n", m2);
	printf("write_untimed_ns: %.2f\n", mu);
	printf("ref_rdtsc_store_ns: %.2f\n", mrs);
	printf("ref_store_ns: %.2f\n", mrst);
	printf("ref_clock_gettime_ns: %.2f\n", mrc);
	printf("write_1t_vs_rdtsc_store: %.2f\n", m1 / mrs);
	printf("write_untimed_vs_store: %.2f\n", mu / mrst);
	printf("write_untimed_n_batch: %d\n", BATCH_N);
	printf("write_untimed_n_ns: %.2f\n", mn);
	printf("write_untimed_n_vs_store: %.2f\n", mn / mrst);
	if (two) {
		double m1s = bench_median(s1, (int)runs), m2s = bench_median(s2, (int)runs);
		printf("write_2sessions_ns: %.2f\n", m2s);
		printf("write_2sessions_vs_1session: %.2f\n", m2s / m1s);
	}
	if (ovw) {
		double m1o = bench_median(o1, (int)runs), mow = bench_median(ow, (int)runs);
		printf("write_overwrite_ns: %.2f\n", mow);
		printf("write_overwrite_vs_rdtsc_store: %.2f\n", mow / mrs);
		printf("write_overwrite_vs_1t: %.2f\n", mow / m1o);
		printf("overwrite_events_lost: %" PRIu64 "\n", lost3);
		printf("overwrite_events_overwritten: %" PRIu64 "\n",
		       ow_stop.stats.events_overwritten);
	}
	if (br) {
		double mrw = bench_median(rw, (int)runs);
		printf("ring_write_ns: %.2f\n", mrw);
		printf("ring_write_vs_rdtsc_store: %.2f\n", mrw / mrs);
		printf("ring_events_written: %" PRIu64 "\n", ring_written);
		printf("ring_events_lost: %" PRIu64 "\n", ring_lost);
		printf("ring_wakeups: %" PRIu64 "\n", ring_wakeups);
	}
	printf("write_1t_events_per_s: %.0f\n", 1e9 / m1);
	printf("write_1t_mb_per_s: %.1f\n", 1e9 / m1 * RECORD_BYTES / 1e6);
	printf("write_2t_events_per_s: %.0f\n", 2e9 / m2);
	printf("write_2t_mb_per_s: %.1f\n", 2e9 / m2 * RECORD_BYTES / 1e6);
	printf("write_untimed_events_per_s: %.0f\n", 1e9 / mu);
	printf("write_untimed_mb_per_s: %.1f\n", 1e9 / mu * UNTIMED_RECORD_BYTES / 1e6);
	printf("events_emitted: %" PRIu64 "\n", runs * events * 5);
	printf("events_lost: %" PRIu64 "\n", lost);
	if (scaling)
		scaling_print(&sc, runs);
	if (memory) {
		bench_memory_print("start", &mem_start);
		bench_memory_print("busy", &mem_busy);
		bench_memory_print("idle", &mem_idle);
		printf("mem_trim_wait_ms: %.0f\n", trim_wait_ms);
		printf("page_touch_ns: %.0f\n", touch_ns);
		printf("page_retouch_ns: %.1f\n", retouch_ns);
		printf("pool_first_touch_ms: %.2f\n",
		       touch_ns * ((double)p.buffer_size * p.max_buffers / 4096) / 1e6);
		printf("pool_first_touch_ns_per_event: %.2f\n", touch_ns / (4096.0 / RECORD_BYTES));
	}
	if (!quick) {
		printf("ref_tmpfs_write_mb_per_s: %.1f\n", tmpfs);
		bench_ladder_print("", &lad, "ref_tmpfs_write", tmpfs, tmpfs_cpu);
		if (circ_ran) {
			printf("circular_file_mb: %d\n", CIRCULAR_MB);
			printf("ref_tmpfs_rewrite_mb_per_s: %.1f\n", rewrite);
			bench_ladder_print("circular_", &circ, "ref_tmpfs_rewrite", rewrite,
					   rewrite_cpu);
		}
	}
	bench_counters_print(&cf);
	if (stop_err < 0)
		cli_stop_error("bench", name, &res, stop_err);
	else {
		printf("events_written: %" PRIu64 "\n", res.stats.events_written);
		printf("session_events_lost: %" PRIu64 "\n", res.stats.events_lost);
		printf("daemon_wakeups: %" PRIu64 "\n", res.stats.wakeups);
	}
out:
	free(d);
	free(w1);
	free(w2);
	free(wu);
	free(wn);
	free(rs);
	free(rst);
	free(rc);
	free(s1);
	free(o1);
	free(ow);
	free(s2);
	free(rw);
	scaling_free(&sc);
	return stop_err < 0 || runs == 0 ? 1 : 0;
}
