/*
 * drain_load.c - a steady load on a session's daemon, to profile the drain
 * (docs/PERFORMANCE.md, "Drain throughput"): 16-byte time-stamped events
 * (24-byte records) from one thread at RATE events/s for SECONDS, in
 * batches of 10,000 written at full speed, sleeping until each next one is
 * due; prints the events written and lost.
 *
 *   cc -O2 -std=c11 -I include bench/drain_load.c -L build/src/lib \
 *      -Wl,-rpath,$PWD/build/src/lib -lringlog -o /tmp/drain_load
 *   build/src/cli/ringlog start dl -o /dev/shm/dl.rlog --force   # prints the daemon's pid
 *   RINGLOG_SESSION=dl /tmp/drain_load 30000000 5 &
 *   perf record -e cpu-clock -g -p DAEMON_PID -- sleep 4
 *   build/src/cli/ringlog stop dl
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, used by ringlog.h, under -std=c11 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ringlog.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: drain_load RATE SECONDS (RINGLOG_SESSION names the session)\n");
		return 2;
	}
	double rate = atof(argv[1]), secs = atof(argv[2]);
	if (rate <= 0 || secs <= 0 || rlog_attach(NULL) < 0) {
		fprintf(stderr, "drain_load: bad rate or seconds, or no session (RINGLOG_SESSION)\n");
		return 1;
	}
	/* Batches of 10,000 events, each due at its time: the thread sleeps
	 * in between (clock_nanosleep to an absolute time), so that it leaves
	 * the CPU to the daemon instead of spinning as the bench's writer does. */
	uint64_t total = (uint64_t)(rate * secs), lost = 0, v[2] = { 0, 0 };
	uint64_t start = now_ns();
	for (uint64_t i = 0; i < total; i++) {
		v[0] = i;
		lost += rlog_write(1024, v, sizeof v) < 0;
		if (i % 10000 == 9999) {
			uint64_t due = start + (uint64_t)((double)(i + 1) / rate * 1e9);
			struct timespec ts = { (time_t)(due / 1000000000u), (long)(due % 1000000000u) };
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		}
	}
	rlog_flush_thread();
	double s = (double)(now_ns() - start) / 1e9;
	printf("events: %llu\nlost: %llu\nseconds: %.3f\n", (unsigned long long)total,
	       (unsigned long long)lost, s);
	return 0;
}
