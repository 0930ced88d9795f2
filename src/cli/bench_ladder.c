/*
 * bench_ladder.c - `ringlog bench`'s sustained rate: a ladder of steady
 * rates (400 ms each, about 10% apart) written into the attached session
 * until a rung loses an event or the writer cannot keep the rate, and the
 * write(2) references it is compared with (docs/PERFORMANCE.md, "Drain
 * throughput").
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define RECORD_BYTES 24 /* header + timestamp + 16-byte payload */
#define REF_CHUNK (1u << 20)
#define REF_CHUNKS 512u  /* 512 MiB */

static void settle(void)
{
	struct timespec ts = { 0, 50 * 1000000L };
	nanosleep(&ts, NULL);
}

void bench_ladder_run(pid_t daemon, struct bench_ladder *l)
{
	static const double ladder[] = { 5e6, 7.5e6, 10e6, 12.5e6, 15e6, 17.5e6, 20e6, 22.5e6,
					 25e6, 27.5e6, 30e6, 33e6, 36e6, 40e6, 44e6, 48e6, 53e6,
					 58e6, 64e6, 70e6, 77e6, 85e6, 93e6, 100e6 };
	memset(l, 0, sizeof *l);
	l->limit = "ladder";
	l->drain_cpu_known = true;
	for (size_t k = 0; k < sizeof ladder / sizeof ladder[0]; k++) {
		settle();
		struct bench_paced pr = bench_write_paced(ladder[k], 400, daemon);
		l->paced_lost += pr.lost;
		if (pr.lost != 0) {
			l->limit = "daemon";
			break;
		}
		if (pr.achieved < ladder[k] * 0.97) {
			l->limit = "writer";
			break;
		}
		l->sustained = ladder[k];
		l->drain_cpu_known &= pr.daemon_cpu_s >= 0;
		l->drain_cpu_s += pr.daemon_cpu_s;
		l->drain_events += pr.events;
	}
}

void bench_ladder_print(const char *prefix, const struct bench_ladder *l, const char *ref_key,
			double ref_mb, double ref_cpu_mb)
{
	double mb = l->sustained * RECORD_BYTES / 1e6;
	printf("%ssustained_events_per_s: %.0f\n", prefix, l->sustained);
	printf("%ssustained_mb_per_s: %.1f\n", prefix, mb);
	printf("%ssustained_vs_tmpfs: %.2f\n", prefix, ref_mb > 0 ? mb / ref_mb : 0);
	if (prefix[0] == '\0') /* the older name of issue 9's figure, for scripts */
		printf("sustained_vs_tmpfs_write: %.2f\n", ref_mb > 0 ? mb / ref_mb : 0);
	printf("%ssustained_limit: %s\n", prefix, l->limit);
	/* Per second of CPU time: the daemon's draining against the
	 * reference's write(2), both on one core's worth of time. */
	double drain_mb = l->drain_cpu_known && l->drain_cpu_s > 0
				  ? (double)l->drain_events * RECORD_BYTES / l->drain_cpu_s / 1e6 : 0;
	printf("%s_mb_per_cpu_s: %.1f\n", ref_key, ref_cpu_mb);
	printf("%sdrain_mb_per_cpu_s: %.1f\n", prefix, drain_mb);
	printf("%sdrain_cpu_ns_per_event: %.2f\n", prefix,
	       l->drain_events ? l->drain_cpu_s * 1e9 / (double)l->drain_events : 0);
	printf("%sdrain_cpu_vs_tmpfs: %.2f\n", prefix, ref_cpu_mb > 0 ? drain_mb / ref_cpu_mb : 0);
	printf("%spaced_events_lost: %" PRIu64 "\n", prefix, l->paced_lost);
}

static double thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* 512 MiB in 1 MiB write(2)s into fd from its offset 0: MB/s, and MB per
 * second of this thread's CPU time in *cpu_mb_per_s (0 if a write fails). */
static double timed_writes(int fd, const char *buf, double *cpu_mb_per_s)
{
	*cpu_mb_per_s = 0;
	if (lseek(fd, 0, SEEK_SET) != 0)
		return 0;
	double c0 = thread_cpu_s();
	uint64_t t0 = bench_now_ns();
	for (unsigned i = 0; i < REF_CHUNKS; i++)
		if (write(fd, buf, REF_CHUNK) != (ssize_t)REF_CHUNK)
			return 0;
	uint64_t t1 = bench_now_ns();
	double c1 = thread_cpu_s(), bytes = (double)REF_CHUNKS * REF_CHUNK;
	if (c1 > c0)
		*cpu_mb_per_s = bytes / (c1 - c0) / 1e6;
	return bytes / ((double)(t1 - t0) / 1e9) / 1e6;
}

double bench_ref_tmpfs_write(const char *path, bool rewrite, double *cpu_mb_per_s)
{
	*cpu_mb_per_s = 0;
	char *buf = malloc(REF_CHUNK);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
	double mb = 0;
	if (buf != NULL && fd >= 0) {
		memset(buf, 0x5a, REF_CHUNK);
		/* rewrite: the file's pages exist first, so the timed writes
		 * only copy (a disk's page cache in its steady state). */
		double unused;
		if (!rewrite || timed_writes(fd, buf, &unused) > 0)
			mb = timed_writes(fd, buf, cpu_mb_per_s);
	}
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	free(buf);
	return mb;
}
