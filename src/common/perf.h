/*
 * perf.h - the kernel's performance counters through perf_event_open(2):
 * the nine events of the counter catalogue (src/common/counter_catalog.h), opened
 * on a thread or on a CPU, and why one cannot be.
 *
 * Counting mode only (no sampling, no ring buffer): a counter is an fd
 * whose read(2) gives a u64, the events since it was opened (with inherit,
 * those of the threads the thread creates afterwards too).
 *
 * perf_event_paranoid (/proc/sys/kernel/perf_event_paranoid) limits an
 * unprivileged user: 2 allows user-space counting of one's own processes
 * only, 1 adds the kernel, 0 or less adds system-wide counting; Debian's
 * 3 allows nothing.  A per-process counter refused with the kernel is
 * opened again for user space only (exclude_kernel), except for the
 * events that happen only in the kernel (context switches, CPU
 * migrations), which would then count nothing.
 */
#ifndef RLOG_COMMON_PERF_H
#define RLOG_COMMON_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Opens performance counter event (0..RLOG__PERF_EVENTS-1) on thread tid
 * (counting the threads it creates from now on too), or with tid -1 on
 * cpu, every process.  *user_only is set when only user space is counted
 * (perf_event_paranoid refused the kernel).  Returns the fd or -errno
 * (-ENOENT, -EOPNOTSUPP, -ENODEV: the machine cannot count the event;
 * -EACCES, -EPERM: refused; -ENOSYS: no perf_event_open).
 */
int rlog__perf_open(int event, pid_t tid, int cpu, bool *user_only);

/* Reads a counter's value.  Returns 0 or -errno. */
int rlog__perf_read(int fd, uint64_t *value);

/* True if the event counts hardware (PERF_TYPE_HARDWARE or HW_CACHE). */
bool rlog__perf_hardware(int event);

/* perf_event_paranoid, or INT32_MIN if it cannot be read. */
int rlog__perf_paranoid(void);

/*
 * Says why open failed with -err for event (system: counting every CPU),
 * in a phrase (n bytes) such as "this machine has no hardware performance
 * counters (a virtual machine without a virtual PMU?)" or "refused by
 * kernel.perf_event_paranoid = 2 (...)".  Returns true if the refusal is
 * perf_event_paranoid's (or a capability's).
 */
bool rlog__perf_why(int event, bool system, int err, char *why, size_t n);

#endif
