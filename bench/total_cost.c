/*
 * total_cost.c - the producer side of bench/total_cost.sh: the same
 * 16-byte event (two u64) through one tracer, in chunks, and the CPU a
 * process (a tracer's daemon) has used.  Compiled by the script, not by
 * meson: the LTTng case needs LTTng-UST (-DWITH_LTTNG, GNU C), which is
 * never a build dependency.
 *
 *   total_cost floor|ringlog|lttng|probe CHUNKS EVENTS
 *       CHUNKS runs of EVENTS events, 50 ms apart (so that a consumer
 *       drains between them and nothing is lost).  Prints
 *         producer_ns: the median chunk's wall time per event
 *         producer_cpu_ns: the process's CPU time (user + system, every
 *           thread, the kernel's work for a trap included) over the
 *           chunks, per event
 *         events: CHUNKS x EVENTS
 *         process_cpu_ns: the process's whole CPU time at its end
 *       floor:   rdtsc (clock_gettime without a TSC) and a 16-byte store
 *                into a 16 MiB array, the reference of docs/PERFORMANCE.md
 *       ringlog: rlog_write (the session named by RINGLOG_SESSION); also
 *                ringlog_written and ringlog_lost
 *       lttng:   lttng_ust_tracepoint(ringlog_bench, ev16, ...)
 *       probe:   a call of total_cost_probe(a, b), a function a uprobe is
 *                put on (perf probe -x)
 *   total_cost cpu PID...
 *       prints the CPU time the processes have used so far, ns (their
 *       CPU-time clocks, clock_getcpuclockid: nanoseconds, where
 *       /proc/PID/stat counts 10 ms ticks)
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#ifdef WITH_LTTNG
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "vs_lttng_tp.h"
#endif

#include "ringlog.h"

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	if (clock_gettime(c, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static uint64_t tick(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	return clock_ns(CLOCK_MONOTONIC);
#endif
}

/* The function perf's uprobe goes on: not inlined, not folded away. */
__attribute__((noinline)) void total_cost_probe(uint64_t a, uint64_t b)
{
	__asm__ volatile("" : : "r"(a), "r"(b) : "memory");
}

static volatile uint64_t sink;

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "cpu") == 0) {
		uint64_t sum = 0;
		for (int i = 2; i < argc; i++) {
			clockid_t c;
			pid_t pid = (pid_t)atoi(argv[i]);
			if (clock_getcpuclockid(pid, &c) != 0) {
				fprintf(stderr, "total_cost: no CPU clock for pid %d\n", (int)pid);
				return 1;
			}
			sum += clock_ns(c);
		}
		printf("%llu\n", (unsigned long long)sum);
		return 0;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: total_cost floor|ringlog|lttng|probe CHUNKS EVENTS | cpu PID...\n");
		return 2;
	}
	const char *mode = argv[1];
	int chunks = atoi(argv[2]);
	uint64_t events = strtoull(argv[3], NULL, 10);
	if (chunks < 1 || chunks > 1000 || events < 1) {
		fprintf(stderr, "total_cost: CHUNKS 1-1000, EVENTS >= 1\n");
		return 2;
	}
	enum { FLOOR, RINGLOG, LTTNG, PROBE } m;
	if (strcmp(mode, "floor") == 0)
		m = FLOOR;
	else if (strcmp(mode, "ringlog") == 0)
		m = RINGLOG;
	else if (strcmp(mode, "probe") == 0)
		m = PROBE;
#ifdef WITH_LTTNG
	else if (strcmp(mode, "lttng") == 0)
		m = LTTNG;
#endif
	else {
		fprintf(stderr, "total_cost: unknown or not built: %s\n", mode);
		return 2;
	}
	size_t slots = (16u << 20) / 16;
	uint64_t *a = mmap(NULL, 16u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double *ns = calloc((size_t)chunks, sizeof *ns);
	if (a == MAP_FAILED || ns == NULL)
		return 1;
	memset(a, 0, 16u << 20);
	if (m == RINGLOG) {
		int err = rlog_attach(NULL);
		if (err < 0) {
			fprintf(stderr, "total_cost: rlog_attach: %d\n", err);
			return 1;
		}
	}
#ifdef WITH_LTTNG
	if (m == LTTNG && !lttng_ust_tracepoint_enabled(ringlog_bench, ev16)) {
		fprintf(stderr, "total_cost: ringlog_bench:ev16 is not enabled\n");
		return 1;
	}
#endif
	uint64_t written = 0, lost = 0, cpu = 0;
	for (int c = 0; c < chunks; c++) {
		struct timespec pause = { 0, 50 * 1000000L };
		nanosleep(&pause, NULL);
		uint64_t v[2] = { 0, 7 }, j = 0;
		uint64_t c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID), t0 = clock_ns(CLOCK_MONOTONIC);
		switch (m) {
		case FLOOR:
			for (uint64_t i = 0; i < events; i++) {
				a[2 * j] = tick();
				a[2 * j + 1] = i;
				if (++j == slots)
					j = 0;
			}
			break;
		case RINGLOG:
			for (uint64_t i = 0; i < events; i++) {
				v[0] = i;
				int w = rlog_write(1024, v, sizeof v);
				written += w == 1;
				lost += w < 0;
			}
			break;
		case PROBE:
			for (uint64_t i = 0; i < events; i++)
				total_cost_probe(i, 7);
			break;
		case LTTNG:
#ifdef WITH_LTTNG
			for (uint64_t i = 0; i < events; i++)
				lttng_ust_tracepoint(ringlog_bench, ev16, i, 7);
#endif
			break;
		}
		uint64_t t1 = clock_ns(CLOCK_MONOTONIC);
		cpu += clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
		ns[c] = (double)(t1 - t0) / (double)events;
		if (m == RINGLOG)
			rlog_flush_thread();
	}
	if (m == RINGLOG)
		rlog_detach();
	sink = a[1];
	qsort(ns, (size_t)chunks, sizeof *ns, cmp);
	double med = chunks % 2 ? ns[chunks / 2] : (ns[chunks / 2 - 1] + ns[chunks / 2]) / 2;
	uint64_t total = (uint64_t)chunks * events;
	printf("producer_ns: %.2f\n", med);
	printf("producer_cpu_ns: %.2f\n", (double)cpu / (double)total);
	printf("events: %llu\n", (unsigned long long)total);
	printf("process_cpu_ns: %llu\n",
	       (unsigned long long)clock_ns(CLOCK_PROCESS_CPUTIME_ID));
	if (m == RINGLOG) {
		printf("ringlog_written: %llu\n", (unsigned long long)written);
		printf("ringlog_lost: %llu\n", (unsigned long long)lost);
	}
	free(ns);
	return 0;
}
