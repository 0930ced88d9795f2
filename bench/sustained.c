/*
 * sustained.c - the daemon's sustained rate (docs/PERFORMANCE.md, "Drain
 * throughput"): a ladder of steady rates of 16-byte events (5 M to 100 M
 * events/s, about 10% apart, 400 ms each) written into a session of its
 * own until a rung loses an event or the writer cannot keep the rate,
 * against write(2) of 512 MiB into a new tmpfs file in the same invocation
 * (sustained_vs_tmpfs), and what draining costs the daemon per CPU-second
 * against what that write costs (drain_cpu_vs_tmpfs: the ratio a daemon
 * with a core of its own reaches); then the same ladder into a circular
 * file of 512 MiB, preallocated, against write(2) over an existing 512 MiB
 * file (circular_*: neither allocates pages, as with a disk's page cache
 * in its steady state).
 *
 *   build/bench/bench_sustained [--quick]
 *
 * --quick: rungs of 20 ms, the first 3 only, files of 16 MiB, no first lap,
 * short bursts before (the test suite's: the figures then say little).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/drain.h"
#include "bench/loops.h"
#include "bench/session.h"
#include "prog.h"
#include "ringlog.h"

#define RECORD_BYTES BENCH_RECORD_BYTES

/* How long a rung lasts, how many the ladder has at most, the size of the
 * reference files and of the circular file (MiB), the circular file's
 * first lap, and the events of each burst before the first ladder. */
struct setting {
	unsigned rung_ms, rungs, file_mb, lap_ms;
	uint64_t burst;
};

/* The ladder's outcome. */
struct ladder {
	double sustained;      /* events/s of the last rung kept, 0 if none */
	const char *limit;     /* what ended it: "daemon", "writer" or "ladder" */
	double drain_cpu_s;    /* the daemon's CPU time over the rungs kept */
	uint64_t drain_events; /* events of those rungs */
	bool drain_cpu_known;
	uint64_t paced_lost;   /* events lost (by the rung that failed) */
};

static void ladder_run(const struct setting *set, pid_t daemon, struct ladder *l)
{
	static const double ladder[] = { 5e6, 7.5e6, 10e6, 12.5e6, 15e6, 17.5e6, 20e6, 22.5e6,
					 25e6, 27.5e6, 30e6, 33e6, 36e6, 40e6, 44e6, 48e6, 53e6,
					 58e6, 64e6, 70e6, 77e6, 85e6, 93e6, 100e6 };
	memset(l, 0, sizeof *l);
	l->limit = "ladder";
	l->drain_cpu_known = true;
	for (size_t k = 0; k < sizeof ladder / sizeof ladder[0] && k < set->rungs; k++) {
		bench_settle();
		struct bench_paced pr = bench_write_paced(ladder[k], set->rung_ms, daemon);
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

/* Prints l's figures as "PREFIXsustained_events_per_s: ..." and so on,
 * against a write(2) reference of ref_mb MB/s and ref_cpu_mb MB per
 * CPU-second, whose CPU figure is printed as REF_KEY_mb_per_cpu_s. */
static void ladder_print(const char *prefix, const struct ladder *l, const char *ref_key,
			 double ref_mb, double ref_cpu_mb)
{
	double mb = l->sustained * RECORD_BYTES / 1e6;
	printf("%ssustained_events_per_s: %.0f\n", prefix, l->sustained);
	printf("%ssustained_mb_per_s: %.1f\n", prefix, mb);
	printf("%ssustained_vs_tmpfs: %.2f\n", prefix, ref_mb > 0 ? mb / ref_mb : 0);
	if (prefix[0] == '\0') /* the figure's older name, for scripts */
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

int main(int argc, char **argv)
{
	struct prog_opts o = { .runs = 1, .events = 0 };
	prog_args(argc, argv, &o);
	struct setting set = { 400, 100, 512, 2000, 250000 };
	if (o.quick)
		set = (struct setting){ 20, 3, 16, 0, 20000 };
	struct rlog__region_params p;
	rlog__props_default(&p);
	char ref[160];
	snprintf(ref, sizeof ref, "/dev/shm/ringlog-bench-ref-%d", (int)getpid());

	/* Into a sequential file that grows, against write(2) into a new
	 * tmpfs file. */
	double tmpfs_cpu = 0, tmpfs = bench_ref_tmpfs_write(ref, set.file_mb, false, &tmpfs_cpu);
	struct ladder lad = { .limit = "ladder" }, circ = { .limit = "ladder" };
	struct bench_session s;
	if (prog_session_open(&s, NULL, &p) < 0)
		return 1;
	/* Bursts first, as `ringlog bench`'s write runs: the pool grows from
	 * MinimumBuffers to MaximumBuffers (docs/SESSIONS.md), which a rung of
	 * steady writes into a new session would otherwise pay for in
	 * losses. */
	for (int i = 0; i < 3; i++) {
		bench_write16(1, set.burst, false);
		bench_settle();
		bench_write16(2, set.burst, false);
		bench_settle();
	}
	ladder_run(&set, s.started.daemon_pid, &lad);
	prog_session_close(&s, NULL);

	/* Then into a circular file on tmpfs, whose pages are written again
	 * lap after lap, against write(2) over an existing file: both
	 * without page allocation, as with a disk's page cache in its steady
	 * state.  A file that keeps growing on tmpfs takes new memory, which
	 * on a virtual machine can cost the host's page faults
	 * (docs/PERFORMANCE.md, "Drain throughput"). */
	struct rlog__region_params pc = p;
	pc.log_file_mode = RLOG_MODE_CIRCULAR | RLOG_MODE_PREALLOCATE;
	pc.max_file_size = (uint64_t)set.file_mb << 20;
	double rewrite_cpu = 0, rewrite = 0;
	struct bench_session sc;
	int circ_err = prog_session_open(&sc, "circ", &pc);
	if (circ_err == 0) {
		rewrite = bench_ref_tmpfs_write(ref, set.file_mb, true, &rewrite_cpu);
		/* One lap first (576 MB of records at 12 M/s into 512 MiB): a
		 * preallocated page of tmpfs is only reserved, and its first
		 * write can cost what a new one does. */
		bench_write_paced(12e6, set.lap_ms, sc.started.daemon_pid);
		ladder_run(&set, sc.started.daemon_pid, &circ);
		prog_session_close(&sc, NULL);
	}

	printf("ref_tmpfs_write_mb_per_s: %.1f\n", tmpfs);
	ladder_print("", &lad, "ref_tmpfs_write", tmpfs, tmpfs_cpu);
	if (circ_err < 0)
		return 1; /* no circular_* figures */
	printf("circular_file_mb: %u\n", set.file_mb);
	printf("ref_tmpfs_rewrite_mb_per_s: %.1f\n", rewrite);
	ladder_print("circular_", &circ, "ref_tmpfs_rewrite", rewrite, rewrite_cpu);
	return 0;
}
