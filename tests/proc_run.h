/*
 * proc_run.h - the tests' one way to run a program: fork, exec, wait, and
 * its exit status, stdout and stderr (any size, through unlinked temporary
 * files, so that a program that writes much cannot block on a full pipe).
 *
 *   struct run r = proc_run((const char *const[]){ "babeltrace2", dir, NULL });
 *   ... r.status, r.out, r.err ...
 *   run_free(&r);
 *
 * harness.h (h_ringlog) and cli_run.h (RUN) run the built `ringlog` through
 * it; test_convert_util.h runs babeltrace2 and the like.
 */
#ifndef RLOG_TESTS_PROC_RUN_H
#define RLOG_TESTS_PROC_RUN_H

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct run {
	int status;    /* exit code, 128 + signal, 127 if it could not be run, -1 if not forked */
	char *out;     /* stdout, NUL-terminated */
	char *err;     /* stderr, NUL-terminated */
	size_t out_len;
};

/* The contents of fd from its start, NUL-terminated; *len its bytes. */
static inline char *proc_slurp_fd(int fd, size_t *len)
{
	size_t n = 0, cap = 65536;
	char *b = malloc(cap + 1);
	if (b == NULL)
		abort();
	lseek(fd, 0, SEEK_SET);
	for (;;) {
		if (cap - n < 4096) {
			cap *= 2;
			if ((b = realloc(b, cap + 1)) == NULL)
				abort();
		}
		ssize_t k = read(fd, b + n, cap - n);
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	b[n] = '\0';
	if (len)
		*len = n;
	return b;
}

/* Runs argv[0] (a path, or a name looked up in PATH) with argv
 * (NULL-terminated), as user and group id if id >= 0 (the child drops to
 * them before the exec; status 126 if it cannot). */
static inline struct run proc_run_as(const char *const *argv, long id)
{
	struct run r = { -1, NULL, NULL, 0 };
	char op[] = "/tmp/rlog-run-out-XXXXXX", ep[] = "/tmp/rlog-run-err-XXXXXX";
	int ofd = mkstemp(op), efd = mkstemp(ep);
	if (ofd < 0 || efd < 0) {
		fprintf(stderr, "proc_run: mkstemp failed\n");
		exit(99);
	}
	unlink(op);
	unlink(ep);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		if (dup2(ofd, 1) < 0 || dup2(efd, 2) < 0)
			_exit(126);
		/* (The supplementary groups stay: setgroups needs a feature macro
		 * the includers may have settled without; the tests need the ids.) */
		if (id >= 0 && (setgid((gid_t)id) < 0 || setuid((uid_t)id) < 0))
			_exit(126);
		/* execvp's argv is char *const[]; the strings are not modified. */
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	int st;
	if (pid > 0 && waitpid(pid, &st, 0) == pid)
		r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r.out = proc_slurp_fd(ofd, &r.out_len);
	r.err = proc_slurp_fd(efd, NULL);
	close(ofd);
	close(efd);
	return r;
}

static inline struct run proc_run(const char *const *argv)
{
	return proc_run_as(argv, -1);
}

static inline void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

#endif
