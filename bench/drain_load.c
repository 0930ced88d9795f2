/*
 * drain_load.c - a steady load on a session's daemon, to profile the drain
 * (docs/PERFORMANCE.md, "Drain throughput"): 16-byte time-stamped events
 * (24-byte records) from one thread at RATE events/s for SECONDS, paced
 * as `ringlog bench`'s sustained ladder paces them; prints the events
 * written and lost.
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
	uint64_t total = (uint64_t)(rate * secs), lost = 0, v[2] = { 0, 0 };
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
	double s = (double)(now_ns() - t0) / 1e9;
	printf("events: %llu\nlost: %llu\nseconds: %.3f\n", (unsigned long long)total,
	       (unsigned long long)lost, s);
	return 0;
}
