/*
 * drain_load.c - a steady load on a session's daemon, to profile the drain
 * (docs/PERFORMANCE.md, "Drain throughput"): 16-byte time-stamped events
 * (24-byte records) from one thread at RATE events/s for SECONDS, in
 * batches written at full speed: 10,000 events, then sleeping until the
 * next batch is due (the thread leaves its core to the daemon), or with
 * "spin", 1,000 events, then spinning on the clock (a thread busy between
 * its events, as `ringlog bench`'s ladder); prints the events written and
 * lost and the seconds it took.
 *
 *   cc -O2 -std=c11 -I include bench/drain_load.c -L build/src/lib \
 *      -Wl,-rpath,$PWD/build/src/lib -lringlog -o /tmp/drain_load
 *   build/src/cli/ringlog start dl -o /dev/shm/dl.rlog --buffers 1024 --force   # prints the daemon's pid
 *   RINGLOG_SESSION=dl /tmp/drain_load 30000000 5 &
 *   perf record -F 10000 -e cpu-clock -g -p DAEMON_PID -- sleep 4
 *   build/src/cli/ringlog stop dl
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, used by ringlog.h, under -std=c11 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "spin") != 0)) {
		fprintf(stderr, "usage: drain_load RATE SECONDS [spin] (RINGLOG_SESSION names the "
				"session)\n");
		return 2;
	}
	double rate = atof(argv[1]), secs = atof(argv[2]);
	if (rate <= 0 || secs <= 0 || rlog_attach(NULL) < 0) {
		fprintf(stderr, "drain_load: bad rate or seconds, or no session (RINGLOG_SESSION)\n");
		return 1;
	}
	bool spin = argc == 4;
	uint64_t batch = spin ? 1000 : 10000;
	uint64_t total = (uint64_t)(rate * secs), lost = 0, v[2] = { 0, 0 };
	uint64_t start = now_ns();
	for (uint64_t i = 0; i < total; i++) {
		v[0] = i;
		lost += rlog_write(1024, v, sizeof v) < 0;
		if ((i + 1) % batch != 0)
			continue;
		/* The next batch is due when the rate says. */
		uint64_t due = start + (uint64_t)((double)(i + 1) / rate * 1e9);
		if (spin) {
			while (now_ns() < due)
				;
		} else {
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
