/*
 * drain_timeline.c - the daemon around the first lost event: writes
 * 16-byte events at RATE events/s for SECONDS (batches of 1,000, spinning on
 * the clock between them), and every 5 ms notes the events lost so far and
 * the daemon's run and wait time (/proc/DAEMON_PID/schedstat); prints the
 * rate kept and the loss, and, from 30 ms before the first loss, what each
 * 5 ms brought (docs/PERFORMANCE.md, "Drain throughput").
 *
 *   cc -O2 -std=c11 -I include bench/drain_timeline.c -L build/src/lib \
 *      -Wl,-rpath,$PWD/build/src/lib -lringlog -o /tmp/drain_timeline
 *   build/src/cli/ringlog start tl -o /dev/shm/tl.rlog --force   # prints daemon_pid
 *   RINGLOG_SESSION=tl /tmp/drain_timeline 36000000 2 DAEMON_PID
 *   build/src/cli/ringlog stop tl
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, used by ringlog.h, under -std=c11 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ringlog.h"

#define MAX_SAMPLES 4000

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The daemon's time on a CPU and waiting for one, in ns (0 if unknown). */
static void schedstat(int pid, uint64_t *run, uint64_t *wait)
{
	char path[64];
	unsigned long long r = 0, w = 0;
	snprintf(path, sizeof path, "/proc/%d/schedstat", pid);
	FILE *f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%llu %llu", &r, &w) != 2)
			r = w = 0;
		fclose(f);
	}
	*run = r;
	*wait = w;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: drain_timeline RATE SECONDS DAEMON_PID (RINGLOG_SESSION "
				"names the session)\n");
		return 2;
	}
	double rate = atof(argv[1]), secs = atof(argv[2]);
	int daemon = atoi(argv[3]);
	if (rate <= 0 || secs <= 0 || daemon <= 0 || rlog_attach(NULL) < 0) {
		fprintf(stderr, "drain_timeline: bad arguments, or no session\n");
		return 1;
	}
	static uint64_t at[MAX_SAMPLES], lost_at[MAX_SAMPLES], run[MAX_SAMPLES], wait[MAX_SAMPLES];
	int n = 0;
	uint64_t v[2] = { 0, 0 }, total = (uint64_t)(rate * secs), lost = 0;
	uint64_t t0 = now_ns(), next = t0;
	for (uint64_t i = 0; i < total;) {
		for (int k = 0; k < 1000 && i < total; k++, i++) {
			v[0] = i;
			lost += rlog_write(1024, v, sizeof v) < 0;
		}
		uint64_t due = t0 + (uint64_t)((double)i / rate * 1e9), t;
		while ((t = now_ns()) < due)
			;
		if (t >= next && n < MAX_SAMPLES) {
			at[n] = t - t0;
			lost_at[n] = lost;
			schedstat(daemon, &run[n], &wait[n]);
			n++;
			next = t + 5000000;
		}
	}
	uint64_t t1 = now_ns();
	printf("rate: %.1f M/s asked, %.1f M/s kept; lost: %llu of %llu\n", rate / 1e6,
	       (double)total / ((double)(t1 - t0) / 1e9) / 1e6, (unsigned long long)lost,
	       (unsigned long long)total);
	int first = -1;
	for (int k = 1; k < n && first < 0; k++)
		if (lost_at[k] > lost_at[k - 1])
			first = k;
	if (first < 0) {
		double r = n > 1 ? (double)(run[n - 1] - run[0]) / (double)(at[n - 1] - at[0]) : 0;
		printf("no loss; the daemon ran %.1f%% of the time\n", 100 * r);
		return 0;
	}
	for (int k = first > 6 ? first - 6 : 1; k < n && k < first + 14; k++)
		printf("%8.1f ms: lost %8llu, daemon ran %5.2f ms, waited %5.2f ms\n", at[k] / 1e6,
		       (unsigned long long)(lost_at[k] - lost_at[k - 1]),
		       (double)(run[k] - run[k - 1]) / 1e6, (double)(wait[k] - wait[k - 1]) / 1e6);
	return 0;
}
