/*
 * sysperm.c - the privileges system events need (sysperm.h has the rule).
 */
#define _GNU_SOURCE
#include "sysperm.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf.h"

#define TRACEFS        "/sys/kernel/tracing"
#define TRACEFS_EVENTS TRACEFS "/events"
#define DEBUGFS_EVENTS "/sys/kernel/debug/tracing/events"

/* CapEff of /proc/self/status, 0 if it cannot be read. */
static uint64_t cap_eff(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	if (f == NULL)
		return 0;
	char line[256];
	uint64_t caps = 0;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "CapEff:", 7) == 0) {
			caps = strtoull(line + 7, NULL, 16);
			break;
		}
	fclose(f);
	return caps;
}

/* Opens dir as this process's effective credentials allow: 0 or -errno. */
static int dir_readable(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static bool kernel_has_tracefs(void)
{
	FILE *f = fopen("/proc/filesystems", "re");
	if (f == NULL)
		return false;
	char line[128];
	bool found = false;
	while (!found && fgets(line, sizeof line, f)) {
		char *name = strrchr(line, '\t');
		name = name ? name + 1 : line;
		found = strcmp(name, "tracefs\n") == 0;
	}
	fclose(f);
	return found;
}

void rlog__sys_priv_facts_read(struct rlog__sys_priv_facts *f)
{
	memset(f, 0, sizeof *f);
	f->euid = (uint32_t)geteuid();
	f->cap_eff = cap_eff();
	f->paranoid = rlog__perf_paranoid();
	snprintf(f->tracefs, sizeof f->tracefs, "%s", TRACEFS_EVENTS);
	f->tracefs_err = dir_readable(TRACEFS_EVENTS);
	if (f->tracefs_err == -ENOENT && dir_readable(DEBUGFS_EVENTS) == 0) {
		snprintf(f->tracefs, sizeof f->tracefs, "%s", DEBUGFS_EVENTS);
		f->tracefs_err = 0;
	}
	struct stat st;
	f->tracefs_mountable = f->tracefs_err == -ENOENT && kernel_has_tracefs() &&
			       stat(TRACEFS, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool has_cap(const struct rlog__sys_priv_facts *f, int cap)
{
	return (f->cap_eff >> cap & 1) != 0;
}

int rlog__sys_priv_judge(const struct rlog__sys_priv_facts *f, char *why, size_t n)
{
	char perf[256] = "", trace[192] = "";
	bool admin = has_cap(f, RLOG__CAP_SYS_ADMIN);
	bool privileged = admin || has_cap(f, RLOG__CAP_PERFMON);
	if (f->paranoid == RLOG__PARANOID_NONE)
		snprintf(perf, sizeof perf, "perf events (no /proc/sys/kernel/perf_event_paranoid: "
					    "a kernel without perf_event_open)");
	else if (!privileged && f->paranoid > -1)
		snprintf(perf, sizeof perf, "CAP_PERFMON or CAP_SYS_ADMIN (uid %" PRIu32 ", effective "
					    "capabilities 0x%" PRIx64 "), which "
					    "kernel.perf_event_paranoid %d requires (only -1 lets any "
					    "user trace the kernel)",
			 f->euid, f->cap_eff, f->paranoid);
	if (f->tracefs_err == -ENOENT && f->tracefs_mountable && !admin)
		snprintf(trace, sizeof trace, "tracefs, which is not mounted, and CAP_SYS_ADMIN to "
					      "mount it on " TRACEFS);
	else if (f->tracefs_err == -ENOENT && !f->tracefs_mountable)
		snprintf(trace, sizeof trace, "tracefs (not mounted at " TRACEFS ", and the kernel "
					      "has none to mount)");
	else if (f->tracefs_err < 0 && f->tracefs_err != -ENOENT)
		snprintf(trace, sizeof trace, "read access to tracefs (%s: %s)", f->tracefs,
			 strerror(-f->tracefs_err));
	if (!perf[0] && !trace[0])
		return 0;
	snprintf(why, n, "--system: missing %s%s%s", perf, perf[0] && trace[0] ? "; " : "", trace);
	return -EPERM;
}

int rlog__sys_priv_check(char *why, size_t n)
{
	struct rlog__sys_priv_facts f;
	rlog__sys_priv_facts_read(&f);
	return rlog__sys_priv_judge(&f, why, n);
}
