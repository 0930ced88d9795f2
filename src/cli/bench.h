/*
 * bench.h - the measuring loops of `ringlog bench` (bench_loops.c) and the
 * memory figures, for cmd_bench.c, which runs the session
 * and prints.  Every loop returns ns per event (or per operation) of one
 * run; the caller takes medians.
 */
#ifndef RLOG_CLI_BENCH_H
#define RLOG_CLI_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define BENCH_REF_ARRAY (16u << 20) /* bytes: larger than the caches */
#define BENCH_MAX_THREADS 4
#define BENCH_MAX_PAYLOAD 1024

double bench_median(double *v, int n);
uint64_t bench_now_ns(void);

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
};

/* Runs w's threads at once, each handing its buffer over at
 * the end so that the next run starts clean. */
struct bench_result bench_write_run(const struct bench_write *w);

/* What a session costs in memory at one moment (bench_memory.c). */
struct bench_memory {
	uint64_t daemon_rss_kb, daemon_anon_kb; /* /proc/DAEMON/status */
	uint64_t daemon_shmem_kb;               /* of which the session's object (smaps) */
	uint64_t self_rss_kb, self_shmem_kb;    /* the same for this (attached) process */
	uint64_t object_kb;  /* pages the session's object has allocated */
	uint64_t pool_kb;    /* of which in the buffer space */
};
void bench_memory_sample(const char *session, pid_t daemon, struct bench_memory *m);
void bench_memory_print(const char *when, const struct bench_memory *m);

/* First touch of bytes of fresh shared memory, one write per page: ns per
 * page; *retouch_ns gets the same writes once the pages are resident. */
double bench_page_touch(size_t bytes, double *retouch_ns);

/* One steady run (bench_write_paced). */
struct bench_paced {
	uint64_t events, lost;
	double achieved;      /* the rate the writer really kept (events over the time
	                         from the first write to the end of the flush: below the
	                         rate asked when the writer itself cannot keep up) */
	double daemon_cpu_s;  /* the daemon's CPU time (user and system) from the first
	                         write to 50 ms after the flush; < 0 if unknown */
};

/* Writes 16-byte events at a steady rate (events/s) for ms milliseconds,
 * into a session drained by process daemon. */
struct bench_paced bench_write_paced(double rate, unsigned ms, pid_t daemon);

/* The sustained rate (bench_ladder.c): steady rates of 16-byte events from
 * 5 M to 100 M events/s, 400 ms each, into the attached session, until a
 * rung loses an event or the writer falls 3% short of its rate. */
struct bench_ladder {
	double sustained;      /* events/s of the last rung kept, 0 if none */
	const char *limit;     /* what ended it: "daemon", "writer" or "ladder" */
	double drain_cpu_s;    /* the daemon's CPU time over the rungs kept */
	uint64_t drain_events; /* events of those rungs */
	bool drain_cpu_known;
	uint64_t paced_lost;   /* events lost (by the rung that failed) */
};
void bench_ladder_run(pid_t daemon, struct bench_ladder *l);

/* Prints l's figures as "PREFIXsustained_events_per_s: ..." and so on,
 * against a write(2) reference of ref_mb MB/s and ref_cpu_mb MB per
 * CPU-second, whose CPU figure is printed as REF_KEY_mb_per_cpu_s. */
void bench_ladder_print(const char *prefix, const struct bench_ladder *l, const char *ref_key,
			double ref_mb, double ref_cpu_mb);

/* write(2) of 512 MiB in 1 MiB writes into a new tmpfs file at path (or,
 * rewrite, over the same file written once first, untimed: no page
 * allocation in the timed writes), then unlinked: MB/s, and MB per
 * second of CPU time in *cpu_mb_per_s; 0 if it fails. */
double bench_ref_tmpfs_write(const char *path, bool rewrite, double *cpu_mb_per_s);

#endif
