/*
 * ring_write.c - the single ring's figure (docs/PERFORMANCE.md, "The
 * single ring: ring_write_ns"): the cost of rlog_ring_write of a 16-byte
 * event, time-stamped by the caller with the session's clock, while a
 * flush thread drains the ring into a log file on tmpfs as `ringlog
 * ring-flush` does (the fill event on the futex, src/ring/flush.c), against
 * rdtsc and a 16-byte store measured run by run in the same invocation.
 *
 *   build/bench/bench_ring_write [--runs N] [--events N] [--quick]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "atomics.h"
#include "bench/loops.h"
#include "clock.h"
#include "futex.h"
#include "ring/flush.h"
#include "ring/map.h"
#include "ringlog.h"
#include "ringlog/ring.h"
#include "prog.h"

struct bench_ring {
	void *mem;
	size_t len;
	struct rlog_ring *r;
	struct rlog__ring_view v;
	struct rlog__ring_flush f;
	int fd;
	char path[256];
	pthread_t th;
	_Atomic int stop;
	_Atomic int stop_took; /* the stop turned set_event's 1 into 0 */
	uint64_t wakeups;
	uint64_t written, lost; /* by the writer */
};

/* The flush loop of `ringlog ring-flush`, with a stop flag for a signal. */
static void *flusher(void *arg)
{
	struct bench_ring *b = arg;
	struct rlog_ring *h = b->r;
	rlog__ring_flush_drain(&b->f);
	while (!atomic_load(&b->stop)) {
		store_seq_cst(&h->set_event, 1);
		atomic_thread_fence(memory_order_seq_cst);
		if (atomic_load(&b->stop))
			break;
		if (!rlog__ring_flush_below_mark(&b->f)) {
			/* A 10 ms timer as well: bench_ring_run waits for the
			 * ring to be empty after each run. */
			rlog__futex_wait(&h->set_event, 1, 10);
			if (atomic_load(&b->stop))
				break;
		}
		if (exchange_acq_rel(&h->set_event, 0) == 0 && !atomic_load(&b->stop_took))
			b->wakeups++;
		rlog__ring_flush_drain(&b->f);
	}
	store_seq_cst(&h->set_event, 0);
	rlog__ring_flush_drain(&b->f);
	rlog__ring_flush_finish(&b->f);
	return NULL;
}

/* A ring large enough for a whole run of `events` 24-byte records (so the
 * flush thread's speed cannot turn writes into cheaper discards), its
 * clock tick_source, and its flush thread writing log_path.  Returns 0 or
 * -errno. */
static int bench_ring_open(struct bench_ring **out, uint64_t events, uint32_t tick_source,
			   const char *log_path)
{
	struct bench_ring *b = calloc(1, sizeof *b);
	if (b == NULL)
		return -ENOMEM;
	/* Twice a run: a run stays below the minimum mark (70% full), so the
	 * flush thread drains it after the run, as the session's daemon drains
	 * write_1t's bursts (docs/PERFORMANCE.md). */
	uint64_t ring = 2 * events * 24;
	if (ring < (8u << 20))
		ring = 8u << 20;
	if (ring > RLOG_RING_MAX_SIZE)
		ring = RLOG_RING_MAX_SIZE;
	b->len = RLOG_RING_HEADER_SIZE + (size_t)ring;
	b->mem = mmap(NULL, b->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int err = -errno;
	if (b->mem == MAP_FAILED)
		goto fail_free;
	/* Touch the ring once: the runs measure writes, not page faults. */
	memset(b->mem, 0, b->len);
	err = rlog_ring_init_clock(b->mem, b->len, tick_source, 0);
	if (err < 0)
		goto fail_unmap;
	b->r = b->mem;
	char why[256];
	err = rlog__ring_check(b->mem, b->len, &b->v, why, sizeof why);
	if (err < 0)
		goto fail_unmap;
	snprintf(b->path, sizeof b->path, "%s", log_path);
	b->fd = open(b->path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	err = -errno;
	if (b->fd < 0)
		goto fail_unmap;
	err = rlog__ring_flush_init(&b->f, &b->v, b->fd, "bench-ring");
	if (err < 0)
		goto fail_close;
	err = -pthread_create(&b->th, NULL, flusher, b);
	if (err < 0)
		goto fail_flush;
	*out = b;
	return 0;

fail_flush:
	rlog__ring_flush_free(&b->f);
fail_close:
	close(b->fd);
	unlink(b->path);
fail_unmap:
	munmap(b->mem, b->len);
fail_free:
	free(b);
	return err;
}

/* Writes n events; returns ns per event.  Then waits until the flush
 * thread has drained them. */
static double bench_ring_run(struct bench_ring *b, uint64_t n)
{
	struct rlog_ring *r = b->r;
	uint64_t v[2] = { 0, 0 }, ones = 0;
	uint64_t t0 = rlog__monotonic_ns();
	for (uint64_t i = 0; i < n; i++) {
		v[0] = i;
		/* The same clock read as the reference loop's (the session's
		 * tick source), then the write. */
		ones += rlog_ring_write(r, 1024, v, sizeof v, (uint32_t)rlog__now()) == 1;
	}
	uint64_t t1 = rlog__monotonic_ns();
	b->written += ones;
	b->lost += n - ones;
	/* Wait for the flush thread to empty the ring (its 10 ms timer at
	 * worst), so that every run starts alike. */
	struct timespec ts = { 0, 1000000 };
	while (load_acquire(&r->read_off) != load_relaxed(&r->write_off))
		nanosleep(&ts, NULL);
	return (double)(t1 - t0) / (double)n;
}

/* Stops the flush thread (a last drain), removes the log file, frees b.
 * *written, *lost: events the file took and the writes that were
 * discarded; *wakeups: fill events the flush thread received. */
static void bench_ring_close(struct bench_ring *b, uint64_t *written, uint64_t *lost,
			     uint64_t *wakeups)
{
	atomic_store(&b->stop, 1);
	if (exchange_acq_rel(&b->r->set_event, 0) == 1)
		atomic_store(&b->stop_took, 1);
	rlog__futex_wake(&b->r->set_event, 1);
	pthread_join(b->th, NULL);
	*written = b->f.lf.events_written;
	*lost = b->lost;
	*wakeups = b->wakeups;
	rlog__ring_flush_free(&b->f);
	close(b->fd);
	unlink(b->path);
	munmap(b->mem, b->len);
	free(b);
}

int main(int argc, char **argv)
{
	/* Many short runs: a run of 50,000 events (under a millisecond) is
	 * seldom descheduled on a shared machine, so the median is a run that
	 * was not (docs/PERFORMANCE.md, "The single ring"). */
	struct prog_opts o = { .runs = 31, .events = 50000 };
	prog_args(argc, argv, &o);
	prog_quick(&o, 1, 20000);
	char log[160];
	snprintf(log, sizeof log, "/dev/shm/ringlog-bench-ring-%d.rlog", (int)getpid());
	struct bench_ring *br = NULL;
	/* rlog__now() reads the TSC only once a session set rlog__tick_tsc,
	 * and this program attaches to none: set it as an attach would, so
	 * that both loops read the session's clock (the TSC where it is
	 * usable), not clock_gettime. */
	uint32_t tick = rlog__tick_source_pick();
	atomic_store(&rlog__tick_tsc, tick == RLOG_TICK_TSC);
	double *rs = calloc(o.runs, sizeof *rs), *rw = calloc(o.runs, sizeof *rw);
	int err = rs && rw ? bench_ring_open(&br, o.events, tick, log) : -ENOMEM;
	if (err < 0) {
		fprintf(stderr, "bench_ring_write: the single ring: %s\n", strerror(-err));
		free(rs);
		free(rw);
		return 1;
	}
	/* Run by run with the reference, so that a noisy moment of the
	 * machine spreads over both. */
	for (unsigned r = 0; r < o.runs; r++) {
		rs[r] = bench_ref_rdtsc_store(o.events);
		rw[r] = bench_ring_run(br, o.events);
	}
	uint64_t written = 0, lost = 0, wakeups = 0;
	bench_ring_close(br, &written, &lost, &wakeups);
	double mrs = bench_median(rs, (int)o.runs), mrw = bench_median(rw, (int)o.runs);
	printf("runs: %u\n", o.runs);
	printf("events_per_run: %" PRIu64 "\n", o.events);
	printf("ref_rdtsc_store_ns: %.2f\n", mrs);
	printf("ring_write_ns: %.2f\n", mrw);
	printf("ring_write_vs_rdtsc_store: %.2f\n", mrw / mrs);
	printf("ring_events_written: %" PRIu64 "\n", written);
	printf("ring_events_lost: %" PRIu64 "\n", lost);
	printf("ring_wakeups: %" PRIu64 "\n", wakeups);
	free(rs);
	free(rw);
	return 0;
}
