/*
 * cli_run.h - runs the built `ringlog` binary ($RINGLOG_BIN) with
 * arguments and captures its exit status, stdout and stderr (any size,
 * through temporary files), for the tests of dump and stats.
 *
 *   struct run r = RUN("dump", path, "--format", "json");
 *   ASSERT_EQ(r.status, 0);
 *   ... r.out, r.err ...
 *   run_free(&r);
 */
#ifndef RLOG_TESTS_CLI_RUN_H
#define RLOG_TESTS_CLI_RUN_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "filegen.h"

struct run {
	int status;    /* exit code, 128 + signal, or -1 if it could not run */
	char *out;     /* stdout, NUL-terminated */
	char *err;     /* stderr, NUL-terminated */
	size_t out_len;
};

/* The whole file at path, NUL-terminated; *len its bytes. */
static inline char *run_slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0, k;
	if (!fp)
		return strdup("(unreadable)");
	do {
		if (cap - n < 65536) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap + 1);
			if (!buf)
				abort();
		}
		k = fread(buf + n, 1, cap - n, fp);
		n += k;
	} while (k > 0);
	fclose(fp);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* The ringlog binary, or a skip of the whole test. */
static inline const char *run_bin(void)
{
	const char *bin = getenv("RINGLOG_BIN");
	if (!bin || access(bin, X_OK) != 0) {
		printf("1..0 # SKIP RINGLOG_BIN does not name the built ringlog binary\n");
		exit(77);
	}
	return bin;
}

/* Runs ringlog with args (NULL-terminated, at most 30). */
static inline struct run run_argv(const char *const *args)
{
	struct run r = { -1, NULL, NULL, 0 };
	char out[64], err[64];
	const char *argv[32];
	int n = 0;

	argv[n++] = run_bin();
	for (int i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	fg_tmpname(out, "out");
	fg_tmpname(err, "err");
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		int fo = open(out, O_WRONLY | O_TRUNC), fe = open(err, O_WRONLY | O_TRUNC);
		if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
			_exit(126);
		/* execv's argv is char *const[]; the strings are not modified. */
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	int st;
	if (pid > 0 && waitpid(pid, &st, 0) == pid)
		r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r.out = run_slurp(out, &r.out_len);
	r.err = run_slurp(err, NULL);
	unlink(out);
	unlink(err);
	return r;
}

#define RUN(...) run_argv((const char *const[]){ __VA_ARGS__, NULL })

static inline void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

/* Line i (0-based) of text, without its newline, in buf; "" past the end. */
static inline const char *run_line(const char *text, size_t i, char *buf, size_t n)
{
	const char *p = text;
	for (size_t k = 0; k < i && p; k++) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p || !*p) {
		buf[0] = '\0';
		return buf;
	}
	const char *e = strchr(p, '\n');
	size_t len = e ? (size_t)(e - p) : strlen(p);
	if (len >= n)
		len = n - 1;
	memcpy(buf, p, len);
	buf[len] = '\0';
	return buf;
}

/* Number of lines (newline-terminated) in text. */
static inline size_t run_lines(const char *text)
{
	size_t n = 0;
	for (const char *p = text; (p = strchr(p, '\n')); p++)
		n++;
	return n;
}

#endif
