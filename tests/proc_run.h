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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
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
		/* The test's working directory (the build directory, in a
		 * checkout anywhere) need not be reachable by that user. */
		if (id >= 0 && chdir("/") < 0)
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

/* Copies file src to dst, mode 0755; false if it cannot. */
static inline bool proc_copy_file(const char *src, const char *dst)
{
	int in = open(src, O_RDONLY | O_CLOEXEC), out = -1;
	bool ok = in >= 0 &&
		  (out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755)) >= 0;
	char b[65536];
	ssize_t n;
	while (ok && (n = read(in, b, sizeof b)) != 0)
		ok = n > 0 && write(out, b, (size_t)n) == n;
	ok = ok && fchmod(out, 0755) == 0; /* whatever the umask */
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) < 0)
		ok = false;
	return ok;
}

/* A program another user can run, wherever the checkout lives: the build
 * directory may sit in a directory only its owner can enter (root's home,
 * mode 0700), where that user's exec fails with 127.  Copies bin into a
 * new directory dir (a mkdtemp name under /tmp, mode 0755; cap bytes),
 * with the libraries it loads from outside the system's directories (a
 * build that links its own shared library by rpath), and returns the
 * copy's path (malloc'd).  The libraries are found by LD_LIBRARY_PATH,
 * set to dir for the programs this process runs.  NULL, with *why, if it
 * cannot be done.  Either way proc_reachable_remove(dir) removes what it
 * made (dir is "" if nothing). */
static inline char *proc_reachable_copy(const char *bin, char *dir, size_t cap, const char **why)
{
	if (cap < 32 || snprintf(dir, cap, "/tmp/rlog-bin-XXXXXX") < 0 || !mkdtemp(dir) ||
	    chmod(dir, 0755) < 0) {
		if (cap > 0)
			dir[0] = '\0';
		*why = "cannot make a directory under /tmp";
		return NULL;
	}
	const char *base = strrchr(bin, '/') ? strrchr(bin, '/') + 1 : bin;
	size_t n = strlen(dir) + strlen(base) + 2;
	char *copy = malloc(n);
	if (!copy)
		abort();
	snprintf(copy, n, "%s/%s", dir, base);
	if (!proc_copy_file(bin, copy)) {
		*why = "cannot copy the program under /tmp";
		free(copy);
		return NULL;
	}
	/* "libx.so.0 => /path/libx.so.0 (0x...)": a library outside the
	 * system's directories comes along. */
	struct run l = proc_run((const char *const[]){ "ldd", bin, NULL });
	bool libs = false;
	for (char *p = l.out; l.status == 0 && (p = strstr(p, "=> /")) != NULL; p++) {
		char path[4096];
		size_t k = strcspn(p + 3, " \n");
		if (k >= sizeof path)
			continue;
		memcpy(path, p + 3, k);
		path[k] = '\0';
		if (strncmp(path, "/lib", 4) == 0 || strncmp(path, "/usr/", 5) == 0)
			continue;
		char dst[4096];
		const char *lb = strrchr(path, '/') + 1;
		if ((size_t)snprintf(dst, sizeof dst, "%s/%s", dir, lb) >= sizeof dst ||
		    !proc_copy_file(path, dst)) {
			*why = "cannot copy a library the program loads";
			run_free(&l);
			free(copy);
			return NULL;
		}
		libs = true;
	}
	run_free(&l);
	if (libs)
		setenv("LD_LIBRARY_PATH", dir, 1);
	*why = NULL;
	return copy;
}

/* Removes dir and everything proc_reachable_copy put in it. */
static inline void proc_reachable_remove(const char *dir)
{
	char cmd[4200];
	if (strncmp(dir, "/tmp/rlog-bin-", 14) == 0 && strchr(dir, '\'') == NULL &&
	    (size_t)snprintf(cmd, sizeof cmd, "rm -rf -- '%s'", dir) < sizeof cmd)
		(void)!system(cmd);
}

#endif
