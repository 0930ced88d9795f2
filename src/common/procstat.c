/*
 * procstat.c - what /proc/PID/stat and /proc/PID/status say about a
 * process: its state and start time, its figures (page faults, context
 * switches, CPU time) and its memory lines.
 *
 * The line is "PID (COMM) S PPID ...": COMM may hold spaces and
 * parentheses, so fields are counted from the last ')' on; the state is
 * field 3 and the start time field 22.
 */
#define _GNU_SOURCE
#include "procstat.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* "/proc/" + decimal pid (or "self") + "/" + file, without snprintf (not
 * async-signal-safe). */
static void proc_path(pid_t pid, const char *file, char *out)
{
	static const char head[] = "/proc/";
	char digits[16];
	int n = 0;
	char *p = out;
	for (const char *s = head; *s; s++)
		*p++ = *s;
	if (pid <= 0) {
		for (const char *s = "self"; *s; s++)
			*p++ = *s;
	} else {
		for (unsigned long v = (unsigned long)pid; v > 0; v /= 10)
			digits[n++] = (char)('0' + v % 10);
		while (n > 0)
			*p++ = digits[--n];
	}
	*p++ = '/';
	for (const char *s = file; *s; s++)
		*p++ = *s;
	*p = '\0';
}

/* Reads /proc/PID/file into buf (NUL-terminated).  Returns the bytes read
 * or -errno (-ENOENT: no such process). */
static ssize_t proc_read(pid_t pid, const char *file, char *buf, size_t cap)
{
	char path[48];
	proc_path(pid, file, path);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -ENOENT : -errno;
	ssize_t n = read(fd, buf, cap - 1);
	int err = errno;
	close(fd);
	if (n < 0)
		return err == ESRCH ? -ENOENT : -err;
	buf[n] = '\0';
	return n;
}

/* The text after the last ')' of a stat line (field 3 on), or NULL. */
static const char *stat_fields(const char *buf, ssize_t n)
{
	const char *p = NULL;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == ')')
			p = &buf[i];
	if (p == NULL || p[1] != ' ' || p[2] == '\0')
		return NULL;
	return p + 2;
}

/* Field want (>= 3) of the fields text f (which starts at field 3), parsed
 * as a decimal number into *v.  Returns false if it is not one. */
static bool stat_field(const char *f, int want, uint64_t *v)
{
	int field = 3;
	while (*f && field < want) {
		if (*f++ == ' ')
			field++;
	}
	if (field != want || *f < '0' || *f > '9')
		return false;
	uint64_t x = 0;
	while (*f >= '0' && *f <= '9')
		x = x * 10 + (uint64_t)(*f++ - '0');
	*v = x;
	return true;
}

int rlog__procstat_read(pid_t pid, char *state, uint64_t *start_time)
{
	char buf[1024];
	ssize_t n = proc_read(pid, "stat", buf, sizeof buf);
	if (n < 0)
		return (int)n;
	const char *f = stat_fields(buf, n);
	if (f == NULL || !stat_field(f, 22, start_time))
		return -EBADMSG;
	*state = f[0];
	return 0;
}

bool rlog__process_dead(pid_t pid, uint64_t start_time)
{
	if (pid <= 0)
		return false;
	char state;
	uint64_t start;
	int err = rlog__procstat_read(pid, &state, &start);
	if (err == -ENOENT)
		return true;
	if (err < 0) /* no /proc: kill() at least sees processes that are reaped */
		return kill(pid, 0) < 0 && errno == ESRCH;
	if (state == 'Z' || state == 'X')
		return true;
	return start_time != 0 && start != start_time;
}

uint32_t rlog__pid_max(void)
{
	/* PID_MAX_LIMIT on 64-bit kernels: no pid_max is above it. */
	uint32_t limit = UINT32_C(4194304);
	char buf[32];
	int fd = open("/proc/sys/kernel/pid_max", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return limit;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return limit;
	buf[n] = '\0';
	uint64_t v = 0;
	ssize_t i = 0;
	for (; i < n && buf[i] >= '0' && buf[i] <= '9' && v <= limit; i++)
		v = v * 10 + (uint64_t)(buf[i] - '0');
	return i > 0 && v > 0 && v <= limit ? (uint32_t)v : limit;
}

/* The number after "key" in a /proc/PID/status text, or false. */
static bool status_field(const char *buf, const char *key, uint64_t *v)
{
	const char *p = strstr(buf, key);
	if (p == NULL)
		return false;
	p += strlen(key);
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p < '0' || *p > '9')
		return false;
	uint64_t x = 0;
	while (*p >= '0' && *p <= '9')
		x = x * 10 + (uint64_t)(*p++ - '0');
	*v = x;
	return true;
}

int rlog__procstat_figures(pid_t pid, bool ctxt, struct rlog__proc_figures *out)
{
	static long tick_ns;
	if (tick_ns == 0) {
		long hz = sysconf(_SC_CLK_TCK);
		tick_ns = hz > 0 ? 1000000000L / hz : 10000000L;
	}
	char buf[4096];
	memset(out, 0, sizeof *out);
	ssize_t n = proc_read(pid, "stat", buf, sizeof buf);
	if (n < 0)
		return (int)n;
	const char *f = stat_fields(buf, n);
	/* minflt 10, majflt 12, utime 14, stime 15, starttime 22 */
	if (f == NULL || !stat_field(f, 10, &out->v[0]) || !stat_field(f, 12, &out->v[1]) ||
	    !stat_field(f, 14, &out->v[4]) || !stat_field(f, 15, &out->v[5]) ||
	    !stat_field(f, 22, &out->start_time))
		return -EBADMSG;
	out->state = f[0];
	out->v[4] *= (uint64_t)tick_ns;
	out->v[5] *= (uint64_t)tick_ns;
	if (!ctxt)
		return 0;
	n = proc_read(pid, "status", buf, sizeof buf);
	if (n < 0)
		return (int)n;
	if (!status_field(buf, "\nvoluntary_ctxt_switches:", &out->v[2]) ||
	    !status_field(buf, "\nnonvoluntary_ctxt_switches:", &out->v[3]))
		return -EBADMSG;
	return 0;
}

uint64_t rlog__proc_status_kb(pid_t pid, const char *key)
{
	char buf[8192], line_key[64];
	uint64_t v;
	snprintf(line_key, sizeof line_key, "\n%s:", key);
	if (proc_read(pid, "status", buf, sizeof buf) < 0 || !status_field(buf, line_key, &v))
		return UINT64_MAX;
	return v;
}
