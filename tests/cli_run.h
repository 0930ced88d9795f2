/*
 * cli_run.h - runs the built `ringlog` binary ($RINGLOG_BIN) with
 * arguments and captures its exit status, stdout and stderr (any size;
 * proc_run.h does it), for the tests of dump and stats.
 *
 *   struct run r = RUN("dump", path, "--format", "json");
 *   ASSERT_EQ(r.status, 0);
 *   ... r.out, r.err ...
 *   run_free(&r);
 */
#ifndef RLOG_TESTS_CLI_RUN_H
#define RLOG_TESTS_CLI_RUN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "filegen.h"
#include "proc_run.h"

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
	const char *argv[32];
	int n = 0;
	argv[n++] = run_bin();
	for (int i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	return proc_run(argv);
}

#define RUN(...) run_argv((const char *const[]){ __VA_ARGS__, NULL })

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
