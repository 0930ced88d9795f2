/*
 * perf.c - perf_event_open(2) for the counter catalogue (perf.h).
 */
#define _GNU_SOURCE
#include "perf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "counter_catalog.h"

/* The catalogue's nine events, in bit order (counter_catalog.c names them). */
static const struct {
	uint32_t type;
	uint64_t config;
	bool kernel_only; /* happens in the kernel only: user-space counting is 0 */
} events[RLOG__PERF_EVENTS] = {
	{ PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_DTLB | PERF_COUNT_HW_CACHE_OP_READ << 8 |
				      PERF_COUNT_HW_CACHE_RESULT_MISS << 16, false },
	{ PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_ITLB | PERF_COUNT_HW_CACHE_OP_READ << 8 |
				      PERF_COUNT_HW_CACHE_RESULT_MISS << 16, false },
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, false },
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, false },
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, false },
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false },
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, false },
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, true },
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, true },
};

static int open_attr(int event, pid_t tid, int cpu, bool exclude_kernel)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = events[event].type;
	a.config = events[event].config;
	a.exclude_hv = 1;
	a.exclude_kernel = exclude_kernel;
	/* A thread's counter also counts the threads it creates later. */
	a.inherit = tid >= 0;
	long fd = syscall(SYS_perf_event_open, &a, tid, tid >= 0 ? -1 : cpu, -1,
			  PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

int rlog__perf_open(int event, pid_t tid, int cpu, bool *user_only)
{
	if (event < 0 || event >= RLOG__PERF_EVENTS)
		return -EINVAL;
	*user_only = false;
	int fd = open_attr(event, tid, cpu, false);
	if ((fd == -EACCES || fd == -EPERM) && tid >= 0 && !events[event].kernel_only) {
		/* perf_event_paranoid 2: one's own processes, user space only. */
		fd = open_attr(event, tid, cpu, true);
		*user_only = fd >= 0;
	}
	return fd;
}

int rlog__perf_read(int fd, uint64_t *value)
{
	ssize_t n = read(fd, value, sizeof *value);
	if (n == (ssize_t)sizeof *value)
		return 0;
	return n < 0 ? -errno : -EIO;
}

bool rlog__perf_hardware(int event)
{
	return event >= 0 && event < RLOG__PERF_EVENTS && events[event].type != PERF_TYPE_SOFTWARE;
}

int rlog__perf_paranoid(void)
{
	int fd = open("/proc/sys/kernel/perf_event_paranoid", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return INT32_MIN;
	char buf[32];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return INT32_MIN;
	buf[n] = '\0';
	char *end;
	long v = strtol(buf, &end, 10);
	return end == buf ? INT32_MIN : (int)v;
}

/* Whether the kernel knows a CPU PMU at all: without one (a virtual
 * machine without a virtual PMU), no hardware event can be counted. */
static bool have_pmu(void)
{
	struct stat st;
	return stat("/sys/bus/event_source/devices/cpu", &st) == 0 ||
	       stat("/sys/bus/event_source/devices/cpu_core", &st) == 0;
}

bool rlog__perf_why(int event, bool system, int err, char *why, size_t n)
{
	if (err == -EACCES || err == -EPERM) {
		int p = rlog__perf_paranoid();
		const char *need = system ? "system-wide counters need 0 or less"
				   : events[event].kernel_only
					   ? "this kernel event needs 1 or less"
					   : "a process's counters need 2 or less";
		if (p == INT32_MIN)
			snprintf(why, n, "refused by the kernel (perf_event_open: %s; %s, or "
					 "CAP_PERFMON)", strerror(-err), need);
		else
			snprintf(why, n, "refused by kernel.perf_event_paranoid = %d (%s, or "
					 "CAP_PERFMON)", p, need);
		return true;
	}
	if (err == -ENOSYS) {
		snprintf(why, n, "this kernel has no perf_event_open");
		return false;
	}
	if ((err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV) && rlog__perf_hardware(event)) {
		if (!have_pmu())
			snprintf(why, n, "this machine has no hardware performance counters (no CPU "
					 "PMU: a virtual machine without a virtual PMU?)");
		else
			snprintf(why, n, "this CPU's performance counters do not count it "
					 "(perf_event_open: %s)", strerror(-err));
		return false;
	}
	snprintf(why, n, "perf_event_open: %s", strerror(-err));
	return false;
}
