/*
 * loops.h - the measuring loops under `ringlog bench` and the bench/
 * programs (docs/PERFORMANCE.md): the write path, the disabled check and
 * the references measured against them in the same invocation.  Every loop
 * returns ns per event (or per operation) of one run; the caller takes
 * medians.
 */
#ifndef RLOG_BENCH_LOOPS_H
#define RLOG_BENCH_LOOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BENCH_REF_ARRAY (16u << 20) /* bytes: larger than the caches */
#define BENCH_MAX_THREADS 4
#define BENCH_MAX_PAYLOAD 1024
#define BENCH_RECORD_BYTES 24         /* header + timestamp + 16-byte payload */
#define BENCH_UNTIMED_RECORD_BYTES 20 /* header + 16-byte payload */

double bench_median(double *v, int n);
uint64_t bench_now_ns(void);

/* Sleeps 50 ms: the daemon drains everything before the next run. */
void bench_settle(void);

/* References: what the hardware does without ringlog. */
double bench_ref_rdtsc_store(uint64_t n); /* rdtsc + a 16-byte store */
double bench_ref_store(uint64_t n);       /* a 16-byte store alone */
double bench_ref_clock_gettime(uint64_t n);
double bench_ref_memcpy(uint64_t n, size_t len); /* memcpy of len bytes into a large array */

/* rlog_enabled(63) + rlog_write with category 63 off. */
double bench_disabled(uint64_t n);

/* What a write run writes. */
struct bench_write {
	int threads;      /* 1 .. BENCH_MAX_THREADS, at once */
	uint64_t events;  /* per thread */
	size_t len;       /* payload bytes, 0 .. BENCH_MAX_PAYLOAD */
	bool untimed;     /* rlog_write_untimed instead of rlog_write */
	unsigned batch;   /* > 0: untimed, batch records per rlog_write_untimed_n call */
};

/* Result of a write run. */
struct bench_result {
	double ns;        /* per event, per thread: the mean of the threads' own figures */
	double span_ns;   /* from the first thread's start to the last one's end */
	uint64_t lost;    /* writes that returned -ENOBUFS or -EBUSY */
	int threads;      /* threads that ran (fewer than asked if one could not be created) */
	double cpu_ns;    /* as ns, in the threads' own CPU time: what a loaded machine's
	                     other processes (a session's daemon) add to ns is not in it */
};

/* Runs w's threads at once, each handing its buffer over at
 * the end so that the next run starts clean. */
struct bench_result bench_write_run(const struct bench_write *w);

/* A run of n 16-byte events from threads threads, timed or not. */
struct bench_result bench_write16(int threads, uint64_t n, bool untimed);

#endif
