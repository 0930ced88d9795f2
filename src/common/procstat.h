/*
 * procstat.h - what /proc/PID/stat and /proc/PID/status say about a
 * process: its state letter and its start time, its figures, its memory.
 * Producers record their own start time in their process entry; the
 * daemon compares it to tell a live process from a dead one whose pid was
 * reused, and reads the state to see zombies, which kill(pid, 0) reports
 * as alive.
 */
#ifndef RLOG_COMMON_PROCSTAT_H
#define RLOG_COMMON_PROCSTAT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Reads /proc/PID/stat (pid 0: /proc/self/stat).  On success stores the
 * state letter (R, S, D, Z, X, T, ...) in *state and field 22, the start
 * time in clock ticks since boot, in *start_time, and returns 0.  Returns
 * -ENOENT if there is no such process, or another -errno (no /proc, a line
 * it cannot parse: -EBADMSG).  Async-signal-safe: open, read and close
 * only, no allocation, no stdio.
 */
int rlog__procstat_read(pid_t pid, char *state, uint64_t *start_time);

/*
 * True if process pid is gone: no such process, a zombie (Z) or dying (X),
 * or a process whose start time differs from start_time (a reused pid;
 * start_time 0 skips that check).  Without /proc, falls back to
 * kill(pid, 0), which cannot see zombies.  pid <= 0 is never dead (an
 * entry being claimed).
 */
bool rlog__process_dead(pid_t pid, uint64_t start_time);

/*
 * The kernel's largest pid plus one (/proc/sys/kernel/pid_max, read at
 * every call: root may change it); 4194304, the kernel's limit, if it
 * cannot be read.  A pid of 0, above INT32_MAX or not below this names no
 * process that can exist: in a region, that is damage.
 */
uint32_t rlog__pid_max(void);

/* True if pid can name a process under pid_max (rlog__pid_max). */
static inline bool rlog__pid_possible(uint32_t pid, uint32_t pid_max)
{
	return pid != 0 && pid <= INT32_MAX && pid < pid_max;
}

/* A process's figures (the counter catalogue's proc.* sources, indexed by
 * enum rlog__proc_figure of counters.h), as /proc says them now. */
struct rlog__proc_figures {
	uint64_t v[6];        /* minflt, majflt, nvcsw, nivcsw, utime ns, stime ns */
	uint64_t start_time;  /* field 22: tells a reused pid */
	char state;           /* R, S, D, Z, ... */
};

/*
 * Reads process pid's figures: minflt, majflt, utime and stime from
 * /proc/PID/stat (fields 10, 12, 14, 15; the times converted from clock
 * ticks to ns) and, with ctxt, the voluntary and involuntary context
 * switches from /proc/PID/status (else they are 0).  Every figure counts
 * the whole process: its live threads and those that exited.  Returns 0,
 * -ENOENT (no such process) or another -errno (-EBADMSG: a line it cannot
 * parse).  Not async-signal-safe (the daemon's).
 */
int rlog__procstat_figures(pid_t pid, bool ctxt, struct rlog__proc_figures *out);

/*
 * The value of a "Key:   N kB" line of /proc/PID/status (VmRSS, RssAnon,
 * RssShmem, ...), in kB; UINT64_MAX if the process or the line is missing.
 * For the memory figures of `ringlog bench` and the tests (pid 0: this
 * process).
 */
uint64_t rlog__proc_status_kb(pid_t pid, const char *key);

#endif
