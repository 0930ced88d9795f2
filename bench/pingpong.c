/*
 * pingpong.c - two threads passing one byte back and forth through two
 * pipes: every round trip blocks each thread once, so the kernel switches
 * context at least twice per round trip on one CPU (A to B, B to A) and
 * four times on two (each thread to idle and back).  The workload of
 * bench/vs_perf.sh (docs/PERFORMANCE.md, "System events"), which runs it
 * untraced and under each tracer; it only times itself.
 *
 *   build/bench/bench_pingpong CPUS ROUND_TRIPS
 *   build/bench/bench_pingpong CPUS --seconds S
 *
 * CPUS: "0" pins both threads to CPU 0, "0,1" the first to CPU 0 and the
 * second to CPU 1.  Prints "key: value" lines: round_trips, round_trip_ns
 * (wall time per round trip) and thread_switches (the two threads'
 * context switches, voluntary and not, from getrusage(RUSAGE_THREAD)).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];
static int cpu_b;
static volatile int stop_b;
static long switches_b;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static long thread_switches(void)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "bench_pingpong: %s: %s\n", what, strerror(err));
	exit(1);
}

/* B: echo each byte until A sends 0. */
static void *echo(void *arg)
{
	(void)arg;
	int err = pin(cpu_b);
	if (err)
		die("pin", err);
	long s0 = thread_switches();
	char c;
	for (;;) {
		if (read(ping[0], &c, 1) != 1)
			die("read", errno);
		if (write(pong[1], &c, 1) != 1)
			die("write", errno);
		if (c == 0)
			break;
	}
	switches_b = thread_switches() - s0;
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = 0;
	long n = 0;
	if (argc == 4 && strcmp(argv[2], "--seconds") == 0)
		seconds = atof(argv[3]);
	else if (argc == 3)
		n = atol(argv[2]);
	int cpu_a = argc > 1 ? atoi(argv[1]) : -1;
	const char *comma = argc > 1 ? strchr(argv[1], ',') : NULL;
	cpu_b = comma ? atoi(comma + 1) : cpu_a;
	if (cpu_a < 0 || cpu_b < 0 || (n <= 0 && seconds <= 0)) {
		fprintf(stderr, "usage: bench_pingpong CPUS ROUND_TRIPS | CPUS --seconds S\n");
		return 2;
	}
	if (pipe(ping) || pipe(pong))
		die("pipe", errno);
	int err = pin(cpu_a);
	if (err)
		die("pin", err);
	pthread_t t;
	if ((err = pthread_create(&t, NULL, echo, NULL)))
		die("pthread_create", err);
	char c = 1;
	/* A few round trips first: both threads running and pinned. */
	for (int i = 0; i < 100; i++)
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			die("warm-up", errno);
	long s0 = thread_switches(), done = 0;
	uint64_t t0 = now_ns(), end = t0 + (uint64_t)(seconds * 1e9), t1;
	for (;;) {
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			die("round trip", errno);
		done++;
		if (n ? done == n : ((done & 255) == 0 && now_ns() >= end))
			break;
	}
	t1 = now_ns();
	long sa = thread_switches() - s0;
	c = 0;
	if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
		die("stop", errno);
	pthread_join(t, NULL);
	printf("round_trips: %ld\n", done);
	printf("round_trip_ns: %.1f\n", (double)(t1 - t0) / (double)done);
	printf("seconds: %.3f\n", (double)(t1 - t0) / 1e9);
	printf("thread_switches: %ld\n", sa + switches_b);
	return 0;
}
