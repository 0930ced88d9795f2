/*
 * drain.h - what the daemon costs (docs/PERFORMANCE.md, "What the daemon
 * costs"): steady writes at a rate the daemon keeps up with, its CPU time
 * per event from /proc, against the producer's own cost per event
 * (write_1t_ns) measured in the same session, run after run.  Under
 * `ringlog bench --drain`; bench/sustained.c's ladders use the paced
 * writer too.
 */
#ifndef RLOG_BENCH_DRAIN_H
#define RLOG_BENCH_DRAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bench/session.h"

/* Seconds of CPU time of process pid (all its threads), from
 * /proc/PID/task/TID/schedstat in ns, or else /proc/PID/stat in clock
 * ticks; < 0 if it cannot be read. */
double bench_proc_cpu_s(pid_t pid);

/* Seconds of CPU time of the kernel threads that do files' writes for
 * them (writeback, journal, the device's completions), all of them on the
 * machine; < 0 if /proc cannot be read. */
double bench_kthreads_cpu_s(void);

/* write(2) of mb MiB in 1 MiB writes into a new file at path (or,
 * rewrite, over the same file written once first, untimed: no page
 * allocation in the timed writes), then unlinked: MB/s, and MB per
 * second of this thread's CPU time in *cpu_mb_per_s; 0 if it fails.  The
 * kernel's part of the daemon's work, alone: the reference it is
 * measured against. */
double bench_ref_tmpfs_write(const char *path, unsigned mb, bool rewrite, double *cpu_mb_per_s);

/* One steady run (bench_write_paced). */
struct bench_paced {
	uint64_t events, lost;
	double achieved;     /* the rate the writer really kept (events over the time
	                        from the first write to the end of the flush: below the
	                        rate asked when the writer itself cannot keep up) */
	double daemon_cpu_s; /* the daemon's CPU time (user and system) from the first
	                        write to 50 ms after the flush; < 0 if unknown */
};

/* Writes 16-byte events at a steady rate (events/s) for ms milliseconds
 * into the attached session, drained by process daemon: batches of 1000
 * at full speed, then spinning on the clock until the next is due. */
struct bench_paced bench_write_paced(double rate, unsigned ms, pid_t daemon);

/* What bench_drain_session measures: medians of the runs. */
struct bench_drain_figures {
	double rate;               /* events/s asked of the paced runs */
	double drain_cpu_ns;       /* daemon CPU per event, the file growing */
	double kthreads_cpu_ns;    /* the I/O kernel threads' CPU per event of the same runs,
	                              the file's writeback included (bench_kthreads_cpu_s) */
	double circular_cpu_ns;    /* the same into a circular, preallocated file (0: not run) */
	double write_1t;           /* the producer: ns per event, 1 thread, bursts */
	double ref_write_ns;       /* write(2) into a new file: CPU ns per 24 bytes */
	double ref_rewrite_ns;     /* the same over an existing file (0: not run) */
	uint64_t emitted, lost;    /* events the paced and burst runs wrote or tried, refused */
	uint64_t written;          /* events_written of the sessions' final statistics */
	uint64_t session_lost;     /* events_lost of the same */
};

/*
 * Starts a session of properties p, attaches, and for runs runs measures
 * a burst of events events (write_1t), a paced run at rate events/s for
 * ms milliseconds (the daemon's CPU, and the I/O kernel threads') and
 * write(2) of 64 MiB into a new file (the reference), the files in
 * directory dir (/dev/shm: tmpfs); then, if circular_mb > 0, the
 * same paced runs into a second session, its file circular and
 * preallocated (circular_mb MiB, written once first), against write(2)
 * over an existing file.  Returns 0 or
 * -errno (*s: the session that failed).
 */
int bench_drain_session(struct bench_session *s, const struct rlog__region_params *p,
			const char *dir, unsigned runs, uint64_t events, double rate, unsigned ms,
			unsigned circular_mb, struct bench_drain_figures *f);

#endif
