/*
 * procstat.c - state and start time of a process, from /proc/PID/stat.
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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* "/proc/" + decimal pid (or "self") + "/stat", without snprintf (not
 * async-signal-safe). */
static void stat_path(pid_t pid, char *out)
{
	static const char head[] = "/proc/", tail[] = "/stat";
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
	for (const char *s = tail; *s; s++)
		*p++ = *s;
	*p = '\0';
}

int rlog__procstat_read(pid_t pid, char *state, uint64_t *start_time)
{
	char path[40], buf[1024];
	stat_path(pid, path);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -ENOENT : -errno;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	int err = errno;
	close(fd);
	if (n < 0)
		return err == ESRCH ? -ENOENT : -err;
	buf[n] = '\0';
	const char *p = NULL;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == ')')
			p = &buf[i];
	if (p == NULL || p[1] != ' ' || p[2] == '\0')
		return -EBADMSG;
	*state = p[2];
	/* p + 2 starts field 3; field 22 is 19 fields further on. */
	int field = 3;
	const char *q = p + 2;
	while (*q && field < 22) {
		if (*q++ == ' ')
			field++;
	}
	if (field != 22 || *q < '0' || *q > '9')
		return -EBADMSG;
	uint64_t v = 0;
	while (*q >= '0' && *q <= '9')
		v = v * 10 + (uint64_t)(*q++ - '0');
	*start_time = v;
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

uint64_t rlog__proc_status_kb(pid_t pid, const char *key)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	uint64_t v = UINT64_MAX;
	size_t kl = strlen(key);
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, key, kl) == 0 && line[kl] == ':')
			v = strtoull(line + kl + 1, NULL, 10);
	if (f)
		fclose(f);
	return v;
}
