/*
 * cmd_bench.c - `ringlog bench`: what an event costs on this machine.
 *
 * Runs its own session and daemon (log file on tmpfs, /dev/shm), with the
 * default buffers unless told otherwise, and measures, as medians of
 * --runs runs, in ns per event:
 *   disabled_ns           rlog_enabled(63) + rlog_write with category 63 off
 *   write_1t_ns           16-byte time-stamped event, 1 thread, daemon draining
 *   write_2t_ns           the same per thread, 2 threads at once
 *   ref_rdtsc_store_ns    rdtsc plus a 16-byte store into a large array: the floor
 *   ref_clock_gettime_ns  clock_gettime(CLOCK_MONOTONIC)
 *   ring_write_ns         the single ring's rlog_ring_write of the same event,
 *                         time-stamped with the same clock read, a flush thread
 *                         draining the ring (bench_ring.c)
 * and the loss during the write runs (events_lost), events/s and MB/s;
 * then the counters' figures (bench_counters.c): an application counter's
 * increment and the daemon's sampling pass per counter.
 * Each write run is a burst of --events events (default 250000, 6 MB),
 * which the default pool (16 MiB) absorbs while the daemon drains.  Then,
 * unless --quick, the highest steady rate (from a ladder of rates, 400 ms
 * each) at which nothing is lost: sustained_events_per_s.
 * Everything is printed as "key: value", one per line.
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
#include "bench_counters.h"
#include "bench_ring.h"
#include "cli.h"
#include "clock.h"
#include "session_print.h"
#include "ringlog.h"

#define USAGE "usage: ringlog bench [--runs N] [--events N] [--buffers N] [--buffer-size KB] " \
	      "[--quick]"
#define REF_ARRAY (16u << 20) /* bytes: larger than the caches */
#define RECORD_BYTES 24       /* header + timestamp + 16-byte payload */

static uint64_t now_ns(void)
{
	return rlog__monotonic_ns();
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static volatile uint64_t sink; /* keeps reference loops from being optimised away */

static double ref_rdtsc_store(uint64_t n)
{
	uint64_t *a = malloc(REF_ARRAY);
	if (a == NULL)
		return 0;
	memset(a, 0, REF_ARRAY);
	size_t slots = REF_ARRAY / 16, j = 0;
	uint64_t t0 = now_ns();
	for (uint64_t i = 0; i < n; i++) {
		a[2 * j] = rlog__now();
		a[2 * j + 1] = i;
		if (++j == slots)
			j = 0;
	}
	uint64_t t1 = now_ns();
	sink = a[2 * (n % slots)];
	free(a);
	return (double)(t1 - t0) / (double)n;
}

static double ref_clock_gettime(uint64_t n)
{
	struct timespec ts;
	uint64_t acc = 0, t0 = now_ns();
	for (uint64_t i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		acc += (uint64_t)ts.tv_nsec;
	}
	uint64_t t1 = now_ns();
	sink = acc;
	return (double)(t1 - t0) / (double)n;
}

static double disabled(uint64_t n)
{
	uint64_t v[2] = { 1, 2 }, t0 = now_ns();
	for (uint64_t i = 0; i < n; i++) {
		v[0] = i;
		/* As an application guards an expensive payload: the disabled
		 * case is the expected one, so the loop stays one straight run
		 * (without the hint its timing follows where the linker happens
		 * to place the loop: 0.5 to 2 ns for the same instructions). */
		if (RLOG__UNLIKELY(rlog_enabled(63)))
			rlog_write(1024, v, sizeof v);
	}
	uint64_t t1 = now_ns();
	return (double)(t1 - t0) / (double)n;
}

struct writer {
	uint64_t n, written, lost;
	double ns;
	pthread_barrier_t *go;
};

static void *write_loop(void *arg)
{
	struct writer *w = arg;
	uint64_t v[2] = { 0, 0 }, n = w->n, written = 0, lost = 0;
	if (w->go)
		pthread_barrier_wait(w->go);
	uint64_t t0 = now_ns();
	for (uint64_t i = 0; i < n; i++) {
		v[0] = i;
		int r = rlog_write(1024, v, sizeof v);
		written += r == 1;
		lost += r < 0;
	}
	uint64_t t1 = now_ns();
	w->written = written;
	w->lost = lost;
	w->ns = (double)(t1 - t0) / (double)w->n;
	/* Hand the partial buffer over so that the next run starts clean. */
	rlog_flush_thread();
	return NULL;
}

static double write_threads(int nthreads, uint64_t n, uint64_t *lost)
{
	pthread_t th[2];
	struct writer w[2];
	pthread_barrier_t go;
	pthread_barrier_init(&go, NULL, (unsigned)nthreads);
	for (int i = 0; i < nthreads; i++) {
		w[i] = (struct writer){ .n = n, .go = &go };
		pthread_create(&th[i], NULL, write_loop, &w[i]);
	}
	double sum = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		sum += w[i].ns;
		*lost += w[i].lost;
	}
	pthread_barrier_destroy(&go);
	return sum / nthreads;
}

/*
 * Writes at a steady rate (events per second) for ms milliseconds, in
 * batches of 1000 with a spin to the schedule between them.  Returns the
 * events lost.  The highest rate with no loss is what the daemon sustains
 * for as long as the application keeps it up: the pool only absorbs bursts.
 */
static uint64_t write_paced(double rate, unsigned ms)
{
	uint64_t total = (uint64_t)(rate * ms / 1000.0), lost = 0, v[2] = { 0, 0 };
	uint64_t t0 = now_ns();
	for (uint64_t i = 0; i < total;) {
		for (uint64_t k = 0; k < 1000 && i < total; k++, i++) {
			v[0] = i;
			lost += rlog_write(1024, v, sizeof v) < 0;
		}
		uint64_t due = t0 + (uint64_t)((double)i / rate * 1e9);
		while (now_ns() < due)
			;
	}
	rlog_flush_thread();
	return lost;
}

/* write(2) bandwidth into a new 512 MiB tmpfs file, 1 MiB at a time: the
 * ceiling for the daemon, which must put every byte into a growing file.
 * (On a virtual machine the first touch of guest memory is slow, so this is
 * far below a rewrite of pages the kernel already has.) */
static double ref_tmpfs_write(const char *path)
{
	enum { CHUNK = 1 << 20, TOTAL = 512 };
	char *buf = malloc(CHUNK);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (buf == NULL || fd < 0) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return 0;
	}
	memset(buf, 0x5a, CHUNK);
	uint64_t t0 = now_ns();
	for (int i = 0; i < TOTAL; i++)
		if (write(fd, buf, CHUNK) != CHUNK)
			break;
	uint64_t t1 = now_ns();
	close(fd);
	unlink(path);
	free(buf);
	return (double)TOTAL * CHUNK / ((double)(t1 - t0) / 1e9) / 1e6;
}

/* Lets the daemon drain everything before the next run. */
static void settle(void)
{
	struct timespec ts = { 0, 50 * 1000000L };
	nanosleep(&ts, NULL);
}

int cmd_bench(int argc, char **argv)
{
	uint64_t runs = 11, events = 250000;
	bool quick = false;
	/* The default properties (a pool that grows from MinimumBuffers to
	 * MaximumBuffers), category 63 off: the disabled case. */
	struct rlog__region_params p;
	rlog__props_default(&p);
	p.enable_mask = ~(UINT64_C(1) << 63);
	for (int i = 1; i < argc; i++) {
		uint64_t v;
		bool has = i + 1 < argc;
		if (strcmp(argv[i], "--quick") == 0) {
			quick = true;
			continue;
		}
		if (strcmp(argv[i], "--runs") == 0 && has && cli_parse_u64(argv[i + 1], 1, 101, &v)) {
			runs = v;
		} else if (strcmp(argv[i], "--events") == 0 && has &&
			   cli_parse_u64(argv[i + 1], 1000, UINT64_C(1) << 32, &v)) {
			events = v;
		} else if (strcmp(argv[i], "--buffers") == 0 && has &&
			   cli_parse_u64(argv[i + 1], 2, 65536, &v)) {
			p.min_buffers = p.max_buffers = (uint32_t)v; /* a fixed pool */
		} else if (strcmp(argv[i], "--buffer-size") == 0 && has &&
			   cli_parse_u64(argv[i + 1], 4, 1024, &v) && (v & (v - 1)) == 0) {
			p.buffer_size = (uint32_t)v * 1024;
		} else {
			cli_error("bench: bad or incomplete option '%s'", argv[i]);
			fprintf(stderr, "%s\n", USAGE);
			return 2;
		}
		i++;
	}

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
	       *w2 = calloc(runs, sizeof *d), *rs = calloc(runs, sizeof *d),
	       *rc = calloc(runs, sizeof *d), *rw = calloc(runs, sizeof *d);
	/* The single ring, flushed into its own file on tmpfs. */
	char ring_log[160];
	snprintf(ring_log, sizeof ring_log, "/dev/shm/ringlog-bench-ring-%d.rlog", (int)getpid());
	struct bench_ring *br = NULL;
	int ring_err = bench_ring_open(&br, events, rlog__tick_source_pick(), ring_log);
	if (ring_err < 0)
		cli_error("bench: the single ring: %s (no ring_write_ns)", strerror(-ring_err));
	uint64_t lost = 0;
	/* Interleave the figures run by run, so that a noisy moment of the
	 * machine spreads over all of them rather than skewing one. */
	for (uint64_t r = 0; r < runs; r++) {
		rs[r] = ref_rdtsc_store(events);
		rw[r] = br ? bench_ring_run(br, events) : 0;
		rc[r] = ref_clock_gettime(events / 4);
		d[r] = disabled(events * 4);
		w1[r] = write_threads(1, events, &lost);
		settle();
		w2[r] = write_threads(2, events, &lost);
		settle();
	}
	/* The sustained rate: a ladder of steady rates, 400 ms each. */
	char ref[160];
	snprintf(ref, sizeof ref, "/dev/shm/ringlog-bench-ref-%d", (int)getpid());
	double tmpfs = quick ? 0 : ref_tmpfs_write(ref);
	static const double ladder[] = { 5e6, 7.5e6, 10e6, 12.5e6, 15e6, 17.5e6, 20e6, 25e6,
					 30e6, 40e6, 60e6, 80e6 };
	double sustained = 0;
	uint64_t paced_lost = 0;
	for (size_t k = 0; k < sizeof ladder / sizeof ladder[0] && !quick; k++) {
		settle();
		uint64_t l = write_paced(ladder[k], 400);
		paced_lost += l;
		if (l != 0)
			break;
		sustained = ladder[k];
	}
	/* A second session: every write then takes the slow path and goes to
	 * both (docs/PERFORMANCE.md).  Interleaved with the one-session figure
	 * run by run, as above. */
	double *s1 = calloc(runs, sizeof *s1), *s2 = calloc(runs, sizeof *s2);
	char name2[64], path2[128];
	snprintf(name2, sizeof name2, "bench2-%d", (int)getpid());
	snprintf(path2, sizeof path2, "/dev/shm/ringlog-bench2-%d.rlog", (int)getpid());
	struct rlog__start st2 = { .name = name2, .path = path2, .params = p, .force = true };
	struct rlog__start_result started2;
	bool two = s1 && s2 && rlog__session_start(&st2, &started2) == 0;
	uint64_t lost2 = 0;
	for (uint64_t r = 0; r < runs && two; r++) {
		s1[r] = write_threads(1, events, &lost2);
		settle();
		if (rlog_attach_add(name2) != 0) {
			two = false;
			break;
		}
		s2[r] = write_threads(1, events, &lost2);
		rlog_detach_session(name2);
		settle();
	}
	if (two || started2.daemon_pid > 0) {
		struct rlog__stop_result res2;
		rlog__session_stop(name2, &res2, NULL, NULL);
		waitpid(started2.daemon_pid, NULL, 0);
		unlink(path2);
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

	double md = median(d, (int)runs), m1 = median(w1, (int)runs), m2 = median(w2, (int)runs);
	double mrs = median(rs, (int)runs), mrc = median(rc, (int)runs);
	printf("runs: %" PRIu64 "\n", runs);
	printf("events_per_run: %" PRIu64 "\n", events);
	printf("buffer_size: %u\nmin_buffers: %u\nmax_buffers: %u\n", p.buffer_size, p.min_buffers,
	       p.max_buffers);
	printf("tick_source: %s\n", rlog__tick_source_pick() == RLOG_TICK_TSC ? "tsc" : "monotonic");
	printf("cpus: %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
	printf("disabled_ns: %.2f\n", md);
	printf("write_1t_ns: %.2f\n", m1);
	printf("write_2t_ns: %.2f\n", m2);
	printf("ref_rdtsc_store_ns: %.2f\n", mrs);
	printf("ref_clock_gettime_ns: %.2f\n", mrc);
	printf("write_1t_vs_rdtsc_store: %.2f\n", m1 / mrs);
	if (two) {
		double m1s = median(s1, (int)runs), m2s = median(s2, (int)runs);
		printf("write_2sessions_ns: %.2f\n", m2s);
		printf("write_2sessions_vs_1session: %.2f\n", m2s / m1s);
	}
	if (br) {
		double mrw = median(rw, (int)runs);
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
	printf("events_emitted: %" PRIu64 "\n", runs * events * 3);
	printf("events_lost: %" PRIu64 "\n", lost);
	if (!quick) {
		printf("ref_tmpfs_write_mb_per_s: %.1f\n", tmpfs);
		printf("sustained_events_per_s: %.0f\n", sustained);
		printf("sustained_mb_per_s: %.1f\n", sustained * RECORD_BYTES / 1e6);
		printf("sustained_vs_tmpfs_write: %.2f\n",
		       tmpfs > 0 ? sustained * RECORD_BYTES / 1e6 / tmpfs : 0);
		printf("paced_events_lost: %" PRIu64 "\n", paced_lost);
	}
	bench_counters_print(&cf);
	if (stop_err < 0)
		cli_stop_error("bench", name, &res, stop_err);
	else {
		printf("events_written: %" PRIu64 "\n", res.stats.events_written);
		printf("session_events_lost: %" PRIu64 "\n", res.stats.events_lost);
		printf("daemon_wakeups: %" PRIu64 "\n", res.stats.wakeups);
	}
	free(d);
	free(w1);
	free(w2);
	free(rs);
	free(rc);
	free(s1);
	free(s2);
	free(rw);
	return stop_err < 0 ? 1 : 0;
}
