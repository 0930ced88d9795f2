/*
 * test_convert_util.h - what the converter tests share besides the fixture:
 * running a program with output of any size, finding babeltrace2, and
 * reading its loss warnings and counter sink.  Include after harness.h.
 */
#ifndef RLOG_TEST_CONVERT_UTIL_H
#define RLOG_TEST_CONVERT_UTIL_H

#include "proc_run.h"
#include <dirent.h>
#include <sys/stat.h>

#include "tap.h"

/*
 * Skips the whole test, saying why.  Not tap.h's skip_all(): meson runs
 * these tests with protocol 'tap', which counts exit status 77 as an
 * error; a "1..0 # SKIP" plan and exit 0 is its skip.
 */
static inline void skip_test(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	fflush(stdout);
	exit(0);
}

/* ------------------------------------------------------------------ */
/* Running a program, output of any size                               */
/* ------------------------------------------------------------------ */

struct cmd {
	int status;
	char *out, *err;
};

/* Runs argv[0] (a path, or a name found in PATH) through proc_run. */
static inline void run(struct cmd *c, const char *const argv[])
{
	struct run r = proc_run(argv);
	c->status = r.status;
	c->out = r.out;
	c->err = r.err;
}

static inline void cmd_free(struct cmd *c)
{
	free(c->out);
	free(c->err);
}

static inline bool have_babeltrace(void)
{
	const char *path = getenv("PATH");
	char buf[4096];
	if (!path)
		return false;
	while (*path) {
		size_t n = strcspn(path, ":");
		snprintf(buf, sizeof buf, "%.*s/babeltrace2", (int)n, path);
		if (access(buf, X_OK) == 0)
			return true;
		path += n + (path[n] == ':');
	}
	return false;
}

/* Sums N over babeltrace2's "WARNING: Tracer discarded N events" lines. */
static inline uint64_t discarded_total(const char *err, int *lines, int *may)
{
	uint64_t total = 0;
	*lines = 0;
	*may = 0;
	for (const char *p = err; (p = strstr(p, "WARNING: Tracer ")) != NULL; p++) {
		unsigned long long n;
		if (sscanf(p, "WARNING: Tracer discarded %llu event", &n) == 1) {
			total += n;
			(*lines)++;
		} else if (strncmp(p, "WARNING: Tracer may have discarded events", 41) == 0) {
			(*may)++;
		}
	}
	return total;
}

/* A count in sink.utils.counter's output ("   30 Event messages"): from
 * its last table, since it prints running totals every so many messages. */
static inline uint64_t counter_value(const char *out, const char *what)
{
	const char *p = NULL;
	for (const char *q = out; (q = strstr(q, what)) != NULL; q++)
		p = q;
	if (!p)
		return UINT64_MAX;
	while (p > out && p[-1] == ' ')
		p--;
	while (p > out && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return strtoull(p, NULL, 10);
}

static inline int count_files(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	closedir(d);
	return n;
}

static inline void rm_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[512];
	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

/* The whole file at path, NUL-terminated, its length in *len; NULL if it
 * cannot be opened. */
static inline char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return NULL;
	fseek(fp, 0, SEEK_END);
	long n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, fp) != (size_t)n)
		abort();
	buf[n] = '\0';
	fclose(fp);
	*len = (size_t)n;
	return buf;
}

#endif
