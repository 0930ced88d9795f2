/*
 * pcounters.h - per-process counters, ETW's process counters
 * (EVENT_TRACE_FLAG_PROCESS_COUNTERS): faults, CPU times, context
 * switches, memory and I/O bytes of a process, as the `process_counters`
 * system event (docs/FORMAT.md, "System events").  Two sources:
 *
 *   /proc/PID/stat, status and io   at the rundown (system events start,
 *                                   each snapshot): the process now
 *   the kernel's taskstats          at each process's exit: the kernel
 *   (generic netlink, exits of      sends every exiting thread's
 *   registered CPUs)                accounting as it exits, before the
 *                                   parent can reap it; the engine sums a
 *                                   process's threads and writes the
 *                                   record when its last thread exits
 *                                   (the AGROUP flag).
 */
#ifndef RLOG_SYSTEM_PCOUNTERS_H
#define RLOG_SYSTEM_PCOUNTERS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RLOG_SYS_ID_PROCESS_COUNTERS 76

/* The tid of the system blocks of the exit records: no CPU's (the
 * listener's time line, as the rundown has its own). */
#define RLOG_SYS_COUNTERS_TID 0xfffffffeu

enum { RLOG_PCOUNTERS_RUNDOWN = 0, RLOG_PCOUNTERS_EXIT = 1 };

struct rlog__pcounters {
	uint32_t pid;
	uint32_t kind;          /* RLOG_PCOUNTERS_* */
	uint32_t threads;       /* rundown: live threads; exit: the thread exits summed */
	uint64_t minflt, majflt;
	uint64_t utime_ns, stime_ns;
	uint64_t nvcsw, nivcsw;
	uint64_t rss_kb, rss_peak_kb; /* exit: rss 0 (the memory is gone), the peak kept */
	uint64_t vm_kb, vm_peak_kb;
	uint64_t read_bytes, write_bytes; /* storage I/O (/proc/PID/io, taskstats) */
};

/* The record's payload (pid, tid = pid, then the fields of events.c's
 * entry 76): returns its length (at most RLOG_PCOUNTERS_PAYLOAD). */
#define RLOG_PCOUNTERS_PAYLOAD 112u
uint32_t rlog__pcounters_payload(const struct rlog__pcounters *c, uint8_t *pl);

/* Reads process pid's counters from /proc now (kind RUNDOWN).  Returns 0
 * or -errno (-ENOENT: gone).  /proc/PID/io unreadable: its bytes 0. */
int rlog__pcounters_read(pid_t pid, struct rlog__pcounters *c);

/* The taskstats listener. */
struct rlog__tstats;

/* Registers for the exits of every possible CPU.  Returns 0 or -errno
 * (-ENOENT: no taskstats in this kernel; -EPERM: no CAP_NET_ADMIN). */
int rlog__tstats_open(struct rlog__tstats **out);

typedef void rlog__tstats_fn(void *arg, const struct rlog__pcounters *c);

/* Reads what the kernel sent, without waiting; fn for each process
 * whose last thread exited.  Returns the processes, or -errno. */
int rlog__tstats_read(struct rlog__tstats *t, rlog__tstats_fn *fn, void *arg);

/* Exits lost: each time the socket overflowed (ENOBUFS: exits the
 * kernel could not queue, at least one), and each thread exit whose
 * share the table of partial sums (65536 processes) could not hold. */
uint64_t rlog__tstats_overruns(const struct rlog__tstats *t);

void rlog__tstats_close(struct rlog__tstats *t);

#endif
