/*
 * proc_run.h - the tests' one way to run a program, in the foreground or
 * in the background: fork, exec, its exit status, stdout and stderr (any
 * size, through unlinked temporary files, so that a program that writes
 * much cannot block on a full pipe).
 *
 * In the foreground:
 *   struct run r = proc_run((const char *const[]){ "babeltrace2", dir, NULL });
 *   ... r.status, r.out, r.err ...
 *   run_free(&r);
 *
 * In the background (a `ringlog tail`, a `ringlog ring-flush`):
 *   struct proc_bg p;
 *   proc_start(&p, (const char *const[]){ h_bin(), "tail", name, NULL });
 *   ok(proc_wait(&p, "LOG_MARKER", PROC_WAIT_MS), "connected");
 *   proc_signal(&p, SIGSTOP); ...
 *   struct run r = proc_reap(&p);      (or proc_stop(&p, SIGINT))
 *   ... r.status, r.out (all of it), r.err ...
 *   run_free(&r);
 *
 * RUN("dump", path) runs the built `ringlog` ($RINGLOG_BIN) in the
 * foreground; harness.h's h_ringlog does too, into fixed buffers.  Below
 * them: finding babeltrace2 and reading its output, and small helpers for
 * the files and directories the programs write (slurp, count_files,
 * rm_dir).
 */
#ifndef RLOG_TESTS_PROC_RUN_H
#define RLOG_TESTS_PROC_RUN_H

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct run {
	int status;    /* exit code, 128 + signal, 127 if it could not be run, -1 if not forked */
	char *out;     /* stdout, NUL-terminated */
	char *err;     /* stderr, NUL-terminated */
	size_t out_len;
};

/* A program started by proc_start: its stdout and stderr go to unlinked
 * temporary files.  proc_wait reads them while it runs with pread, which
 * moves no offset, and O_APPEND keeps the writes of the program and of
 * any process it forks (a daemon) from overwriting each other. */
struct proc_bg {
	pid_t pid;     /* -1 if it could not be forked, or once reaped */
	int out, err;
};

/* How long a proc_wait waits for what a program prints before the test
 * fails instead of hanging: long, for a loaded 2-core machine under
 * ThreadSanitizer; a wait that succeeds returns as soon as it sees it. */
#define PROC_WAIT_MS 30000

/* Bytes from offset at of fd (from its start if at is 0) appended to
 * *b (n bytes of cap so far, NUL-terminated); the new n. */
static inline size_t proc_read_from(int fd, char **b, size_t n, size_t *cap)
{
	for (;;) {
		if (*b == NULL || *cap - n < 4096) {
			*cap = *b == NULL ? 65536 : *cap * 2;
			if ((*b = realloc(*b, *cap + 1)) == NULL)
				abort();
		}
		ssize_t k = pread(fd, *b + n, *cap - n, (off_t)n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	(*b)[n] = '\0';
	return n;
}

/* The contents of fd from its start, NUL-terminated (malloc'd); *len its
 * bytes. */
static inline char *proc_slurp_fd(int fd, size_t *len)
{
	char *b = NULL;
	size_t cap = 0, n = proc_read_from(fd, &b, 0, &cap);
	if (len)
		*len = n;
	return b;
}

/* An unlinked temporary file, O_APPEND, closed on exec. */
static inline int proc_tmpfile(void)
{
	char path[] = "/tmp/rlog-run-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || unlink(path) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 ||
	    fcntl(fd, F_SETFL, O_APPEND) < 0) {
		fprintf(stderr, "proc_run: cannot make a temporary file: %s\n", strerror(errno));
		exit(99);
	}
	return fd;
}

/* Starts argv[0] (a path, or a name looked up in PATH) with argv
 * (NULL-terminated) in the background.  As user and group id if id >= 0
 * (the child drops to them before the exec; status 126 if it cannot).
 * Its stdout goes to the file out_path instead if that is not NULL (e.g.
 * /dev/full; p's stdout is then empty). */
static inline void proc_start_ex(struct proc_bg *p, const char *const *argv, long id,
				 const char *out_path)
{
	p->out = proc_tmpfile();
	p->err = proc_tmpfile();
	fflush(NULL);
	p->pid = fork();
	if (p->pid == 0) {
		int o = out_path ? open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600) : p->out;
		if (o < 0 || dup2(o, 1) < 0 || dup2(p->err, 2) < 0)
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
	if (p->pid < 0)
		p->pid = -1;
}

static inline void proc_start(struct proc_bg *p, const char *const *argv)
{
	proc_start_ex(p, argv, -1, NULL);
}

/* Sleeps ms milliseconds, or less if a signal comes: every caller waits
 * in a loop that checks what it waits for. */
static inline void proc_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static inline long long proc_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until p's stdout holds needle (a word, or a whole line with its
 * "\n"); false after timeout_ms, or as soon as p has exited without
 * printing it.  p is not reaped. */
static inline bool proc_wait(const struct proc_bg *p, const char *needle, int timeout_ms)
{
	long long give_up = proc_now_ms() + timeout_ms;
	size_t nl = strlen(needle), n = 0, cap = 0, seen = 0;
	char *b = NULL;
	bool found = false;
	for (;;) {
		/* Whether it has exited, asked before the last read so that
		 * nothing it printed is missed (WNOWAIT: still to be reaped). */
		siginfo_t si;
		memset(&si, 0, sizeof si);
		bool gone = p->pid < 0 ||
			    waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0 ||
			    si.si_pid == p->pid;
		n = proc_read_from(p->out, &b, n, &cap);
		/* Only the new bytes, and the needle's length before them. */
		found = strstr(b + seen, needle) != NULL;
		seen = n >= nl ? n - nl + 1 : 0;
		if (found || gone || proc_now_ms() > give_up)
			break;
		proc_sleep_ms(5);
	}
	free(b);
	return found;
}

/* Sends p signal sig: 0 or -errno. */
static inline int proc_signal(const struct proc_bg *p, int sig)
{
	if (p->pid <= 0)
		return -ESRCH;
	return kill(p->pid, sig) == 0 ? 0 : -errno;
}

/* Waits for p to exit and returns its status and all of its output. */
static inline struct run proc_reap(struct proc_bg *p)
{
	struct run r = { -1, NULL, NULL, 0 };
	int st;
	pid_t w = -1;
	if (p->pid > 0)
		while ((w = waitpid(p->pid, &st, 0)) < 0 && errno == EINTR)
			;
	if (w == p->pid && p->pid > 0)
		r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r.out = proc_slurp_fd(p->out, &r.out_len);
	r.err = proc_slurp_fd(p->err, NULL);
	close(p->out);
	close(p->err);
	p->pid = -1;
	p->out = p->err = -1;
	return r;
}

/* Sends p signal sig and reaps it. */
static inline struct run proc_stop(struct proc_bg *p, int sig)
{
	proc_signal(p, sig);
	return proc_reap(p);
}

/* Runs argv in the foreground (proc_start_ex, then proc_reap). */
static inline struct run proc_run_as(const char *const *argv, long id)
{
	struct proc_bg p;
	proc_start_ex(&p, argv, id, NULL);
	return proc_reap(&p);
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


/* ------------------------------------------------------------------ */
/* The built `ringlog`, in the foreground, output of any size          */
/* ------------------------------------------------------------------ */

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

/*   struct run r = RUN("dump", path, "--format", "json");
 *   ASSERT_EQ(r.status, 0);
 *   ... r.out, r.err ...
 *   run_free(&r);                                               */
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

/* ------------------------------------------------------------------ */
/* babeltrace2, and the files the programs write                       */
/* ------------------------------------------------------------------ */

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
