/*
 * loops.c - the measuring loops under `ringlog bench` and the bench/
 * programs (loops.h): the write path (timed and untimed, any payload size,
 * 1 to 4 threads at once), the disabled check, and the references the same
 * invocation measures them against (rdtsc + store, a store alone, memcpy,
 * clock_gettime; write(2) into tmpfs is in bench/sustained.c).
 *
 * The references write into a 16 MiB array, as the write path writes into
 * a 16 MiB pool: both pay for the same cache misses.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bench/loops.h"
#include "clock.h"
#include "ringlog.h"

static volatile uint64_t sink; /* keeps reference loops from being optimised away */

uint64_t bench_now_ns(void)
{
	return rlog__monotonic_ns();
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void bench_settle(void)
{
	struct timespec ts = { 0, 50 * 1000000L };
	nanosleep(&ts, NULL);
}

/* The reference arrays are mapped and unmapped, not malloc'd: glibc would
 * keep a freed 16 MiB block in the heap (its mmap threshold grows), and the
 * memory figures (bench/memory.c) would count it as the producer's. */
static uint64_t *ref_array(void)
{
	void *a = mmap(NULL, BENCH_REF_ARRAY, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (a == MAP_FAILED)
		return NULL;
	memset(a, 0, BENCH_REF_ARRAY); /* touched: no page faults in the loop */
	return a;
}

static void ref_array_free(void *a)
{
	munmap(a, BENCH_REF_ARRAY);
}

/* A 16-byte store per iteration into the large array, its first half the
 * tick counter (tsc) or the loop counter: inlined into each caller with tsc
 * a constant, so that each reference is its own tight loop. */
RLOG__INLINE double ref_store_loop(uint64_t n, bool tsc)
{
	uint64_t *a = ref_array();
	if (a == NULL)
		return 0;
	size_t slots = BENCH_REF_ARRAY / 16, j = 0;
	uint64_t t0 = bench_now_ns();
	for (uint64_t i = 0; i < n; i++) {
		a[2 * j] = tsc ? rlog__now() : i ^ 0x5a5a;
		a[2 * j + 1] = i;
		if (++j == slots)
			j = 0;
	}
	uint64_t t1 = bench_now_ns();
	sink = a[2 * (n % slots)];
	ref_array_free(a);
	return (double)(t1 - t0) / (double)n;
}

double bench_ref_rdtsc_store(uint64_t n)
{
	return ref_store_loop(n, true);
}

double bench_ref_store(uint64_t n)
{
	return ref_store_loop(n, false);
}

double bench_ref_memcpy(uint64_t n, size_t len)
{
	uint8_t *a = (uint8_t *)ref_array(), src[BENCH_MAX_PAYLOAD];
	if (a == NULL)
		return 0;
	memset(src, 0x5a, sizeof src);
	/* The next copy starts where the last ended, 4-byte aligned: the
	 * layout of records in a buffer. */
	size_t step = (len + 3) & ~(size_t)3, off = 0;
	/* volatile: a constant length would let the compiler turn the copy
	 * into stores it can see through; the write path copies a length it
	 * learns at run time too. */
	volatile size_t vlen = len;
	size_t l = vlen;
	uint64_t t0 = bench_now_ns();
	for (uint64_t i = 0; i < n; i++) {
		src[0] = (uint8_t)i;
		memcpy(a + off, src, l);
		off += step;
		if (off + BENCH_MAX_PAYLOAD > BENCH_REF_ARRAY)
			off = 0;
	}
	uint64_t t1 = bench_now_ns();
	sink = a[off / 2];
	ref_array_free(a);
	return (double)(t1 - t0) / (double)n;
}

double bench_ref_clock_gettime(uint64_t n)
{
	struct timespec ts;
	uint64_t acc = 0, t0 = bench_now_ns();
	for (uint64_t i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		acc += (uint64_t)ts.tv_nsec;
	}
	uint64_t t1 = bench_now_ns();
	sink = acc;
	return (double)(t1 - t0) / (double)n;
}

double bench_disabled(uint64_t n)
{
	uint64_t v[2] = { 1, 2 }, t0 = bench_now_ns();
	for (uint64_t i = 0; i < n; i++) {
		v[0] = i;
		/* As an application guards an expensive payload: the disabled
		 * case is the expected one, so the loop stays one straight run
		 * (without the hint its timing follows where the linker happens
		 * to place the loop: 0.5 to 2 ns for the same instructions). */
		if (RLOG__UNLIKELY(rlog_enabled(63)))
			rlog_write(1024, v, sizeof v);
	}
	uint64_t t1 = bench_now_ns();
	return (double)(t1 - t0) / (double)n;
}

struct writer {
	const struct bench_write *w;
	_Atomic int *go;  /* set once every thread exists: they start together */
	uint64_t t0, t1, lost;
	uint64_t c0, c1;  /* the thread's CPU time at t0 and t1 */
};

/* Inlined into write_loop with untimed a constant: two loops, each as an
 * application writes a 16-byte event. */
RLOG__INLINE uint64_t loop16(uint64_t n, bool untimed)
{
	uint64_t v[2] = { 0, 0 }, lost = 0;
	for (uint64_t i = 0; i < n; i++) {
		v[0] = i;
		int r = untimed ? rlog_write_untimed(1024, v, sizeof v) : rlog_write(1024, v, sizeof v);
		lost += r < 0;
	}
	return lost;
}

/* Batches of batch untimed 16-byte events (at most 64), each filled as
 * loop16 fills its one event, then written by one rlog_write_untimed_n. */
static uint64_t loop16_batch(uint64_t n, unsigned batch)
{
	uint64_t v[64][2] = { { 0, 0 } }, lost = 0;
	batch = batch > 64 ? 64 : batch;
	for (uint64_t i = 0; i < n; i += batch) {
		unsigned k = n - i < batch ? (unsigned)(n - i) : batch;
		for (unsigned j = 0; j < k; j++)
			v[j][0] = i + j;
		int r = rlog_write_untimed_n(1024, v, 16, k);
		lost += r < 0 ? k : k - (unsigned)r;
	}
	return lost;
}

static uint64_t loop_timed_len(uint64_t n, size_t len)
{
	uint64_t v[BENCH_MAX_PAYLOAD / 8] = { 0 }, lost = 0;
	for (uint64_t i = 0; i < n; i++) {
		v[0] = i;
		lost += rlog_write(1024, v, len) < 0;
	}
	return lost;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *write_loop(void *arg)
{
	struct writer *wr = arg;
	const struct bench_write *w = wr->w;
	while (atomic_load(wr->go) == 0)
		sched_yield();
	wr->c0 = thread_cpu_ns();
	wr->t0 = bench_now_ns();
	if (w->batch > 0)
		wr->lost = loop16_batch(w->events, w->batch);
	else if (w->len == 16)
		wr->lost = w->untimed ? loop16(w->events, true) : loop16(w->events, false);
	else
		wr->lost = loop_timed_len(w->events, w->len);
	wr->t1 = bench_now_ns();
	wr->c1 = thread_cpu_ns();
	/* Hand the partial buffer over so that the next run starts clean. */
	rlog_flush_thread();
	return NULL;
}

struct bench_result bench_write_run(const struct bench_write *w)
{
	pthread_t th[BENCH_MAX_THREADS];
	struct writer wr[BENCH_MAX_THREADS];
	_Atomic int go = 0;
	struct bench_result res = { 0, 0, 0, 0, 0 };
	int n = w->threads < 1 ? 1 : w->threads > BENCH_MAX_THREADS ? BENCH_MAX_THREADS : w->threads;
	int started = 0;
	for (int i = 0; i < n; i++) {
		wr[i] = (struct writer){ .w = w, .go = &go };
		if (pthread_create(&th[i], NULL, write_loop, &wr[i]) != 0)
			break;
		started++;
	}
	atomic_store(&go, 1);
	res.threads = started;
	uint64_t first = UINT64_MAX, last = 0;
	double sum = 0, cpu = 0;
	for (int i = 0; i < started; i++) {
		pthread_join(th[i], NULL);
		sum += (double)(wr[i].t1 - wr[i].t0) / (double)w->events;
		cpu += (double)(wr[i].c1 - wr[i].c0) / (double)w->events;
		res.lost += wr[i].lost;
		first = wr[i].t0 < first ? wr[i].t0 : first;
		last = wr[i].t1 > last ? wr[i].t1 : last;
	}
	if (started > 0) {
		res.ns = sum / started;
		res.cpu_ns = cpu / started;
		res.span_ns = (double)(last - first);
	}
	return res;
}

struct bench_result bench_write16(int threads, uint64_t n, bool untimed)
{
	struct bench_write w = { .threads = threads, .events = n, .len = 16, .untimed = untimed };
	return bench_write_run(&w);
}
