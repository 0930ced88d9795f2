/*
 * test_profile - `ringlog profile` on a profile the real daemon recorded
 * (docs/PROFILE.md): a thread spinning in spin_here has at least 90% of
 * its samples in spin_here by name, its folded stacks end in
 * ";spin_here N"; a thread calling getppid() in a loop has kernel frames
 * named from /proc/kallsyms, or [kernel] 0x... when kallsyms is not
 * readable; a file that is no log file is one error line, exit 1.
 * Needs root and tracefs: skipped otherwise.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "sys_stats.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) void spin_here(volatile uint64_t *x, uint64_t until);
__attribute__((noinline)) void spin_here(volatile uint64_t *x, uint64_t until)
{
	while (now_ns() < until)
		for (int i = 0; i < 100000; i++)
			(*x)++;
}

static uint32_t kern_tid;

static void *kernel_loop(void *a)
{
	(void)a;
	kern_tid = (uint32_t)syscall(SYS_gettid);
	uint64_t until = now_ns() + 300 * 1000 * 1000;
	while (now_ns() < until)
		for (int i = 0; i < 1000; i++)
			syscall(SYS_getppid);
	return NULL;
}

/* The number before "samples" in the text output's first line. */
static uint64_t samples_of(const char *out)
{
	const char *c = strstr(out, ": ");
	return c ? strtoull(c + 2, NULL, 10) : 0;
}

/* The total column of function name's line in the text output (0: none). */
static uint64_t total_of(const char *out, const char *name)
{
	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		unsigned long long self, total;
		char pct1[16], pct2[16], fn[256];
		if (sscanf(l, "%llu %15s %llu %15s %255s", &self, pct1, &total, pct2, fn) == 5 &&
		    strcmp(fn, name) == 0)
			return total;
	}
	return 0;
}

/* Copies this program to path (a binary that can then be deleted). */
static void copy_self(const char *path)
{
	static char buf[1 << 16];
	int in = open("/proc/self/exe", O_RDONLY), out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0700);
	BAIL_IF(in < 0 || out < 0, "copy of the test program");
	ssize_t n;
	while ((n = read(in, buf, sizeof buf)) > 0)
		BAIL_IF(write(out, buf, (size_t)n) != n, "copy of the test program");
	close(in);
	close(out);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "spin") == 0) {
		volatile uint64_t y = 0;
		spin_here(&y, now_ns() + 200 * 1000 * 1000);
		return 0;
	}
	h_sys_require();
	char path[256];
	const char *name = h_sys_session("prof", path, sizeof path);
	struct h_run r;
	h_ringlog(&r, "start", name, "-o", path, "--system", "profile,image-load,process", "--profile-hz",
		  "1000", NULL);
	if (r.status != 0)
		skip_all(r.err); /* what start says is missing (perf_event_paranoid, tracefs) */

	uint32_t spin_tid = (uint32_t)syscall(SYS_gettid);
	volatile uint64_t x = 0;
	spin_here(&x, now_ns() + 300 * 1000 * 1000);
	/* A process forked during the session: its mappings are its
	 * parent's, no image_load of its own. */
	pid_t kid = fork();
	BAIL_IF(kid < 0, "fork");
	if (kid == 0) {
		spin_here(&x, now_ns() + 200 * 1000 * 1000);
		_exit(0);
	}
	int st;
	BAIL_IF(waitpid(kid, &st, 0) != kid, "waitpid");
	/* A program exec'd during the session (its image_load from the
	 * kernel), deleted before the profile is read. */
	char copy[128];
	snprintf(copy, sizeof copy, "/tmp/rlog-prof-copy-%d", (int)getpid());
	copy_self(copy);
	pid_t ex = fork();
	BAIL_IF(ex < 0, "fork");
	if (ex == 0) {
		execl(copy, copy, "spin", (char *)NULL);
		_exit(127);
	}
	BAIL_IF(waitpid(ex, &st, 0) != ex, "waitpid");
	unlink(copy);
	pthread_t th;
	BAIL_IF(pthread_create(&th, NULL, kernel_loop, NULL) != 0, "pthread_create");
	pthread_join(th, NULL);
	h_ringlog(&r, "stop", name, NULL);
	BAIL_IF(r.status != 0, "stop failed");

	char tid[16], ktid[16];
	snprintf(tid, sizeof tid, "%u", spin_tid);
	snprintf(ktid, sizeof ktid, "%u", kern_tid);
	h_ringlog(&r, "profile", path, "--tid", tid, NULL);
	ASSERT_EQ(r.status, 0);
	uint64_t n = samples_of(r.out), in_spin = total_of(r.out, "spin_here");
	diag("spin_here: %llu of %llu samples", (unsigned long long)in_spin, (unsigned long long)n);
	ok(n >= 30, "at least 30 samples of the spinning thread (%llu in 300 ms)", (unsigned long long)n);
#if defined(__SANITIZE_THREAD__)
	/* ThreadSanitizer's runtime keeps no frame pointers: the chain
	 * does not reach spin_here from inside it. */
	ok(1, "# SKIP call chains end in the ThreadSanitizer runtime");
	ok(1, "# SKIP call chains end in the ThreadSanitizer runtime");
#else
	ok(n > 0 && in_spin * 10 >= n * 9, "at least 90%% of them in spin_here by name (%llu of %llu)",
	   (unsigned long long)in_spin, (unsigned long long)n);
	h_ringlog(&r, "profile", path, "--tid", tid, "--folded", NULL);
	ok(r.status == 0 && strstr(r.out, ";spin_here ") != NULL, "folded: a ...;spin_here N line");
#endif

	char kpid[16];
	snprintf(kpid, sizeof kpid, "%d", (int)kid);
	h_ringlog(&r, "profile", path, "--pid", kpid, NULL);
	uint64_t kn = samples_of(r.out), kin = total_of(r.out, "spin_here");
#if !defined(__SANITIZE_THREAD__)
	ok(kn >= 20 && kin * 10 >= kn * 9, "forked child: at least 90%% in spin_here by name (%llu of %llu)",
	   (unsigned long long)kin, (unsigned long long)kn);
#else
	ok(kn >= 20, "forked child: %llu samples", (unsigned long long)kn);
	(void)kin;
#endif

	char expid[16], want_missing[160];
	snprintf(expid, sizeof expid, "%d", (int)ex);
	snprintf(want_missing, sizeof want_missing, ";[missing] %s", copy);
	h_ringlog(&r, "profile", path, "--pid", expid, "--folded", NULL);
	char *first_nl = strchr(r.out, '\n');
#if defined(__SANITIZE_THREAD__)
	/* The chain may end in the ThreadSanitizer runtime before the
	 * program's frames. */
	ok(r.status == 0 && strncmp(r.out, "rlog-prof-copy-", 15) == 0, "the exec'd process named by its exec");
	(void)want_missing;
	(void)first_nl;
#else
	ok(r.status == 0 && strstr(r.out, want_missing) != NULL && strncmp(r.out, "rlog-prof-copy-", 15) == 0,
	   "a deleted binary: its frames '[missing] PATH', the process named by its exec: %.*s",
	   first_nl ? (int)(first_nl - r.out) : 0, r.out);
#endif

	/* A thread with no sample: no sample to sort (qsort of none was
	 * undefined behaviour, which UBSan reported), a clean exit. */
	h_ringlog(&r, "profile", path, "--tid", "4000000000", NULL);
	ok((r.status == 0 || r.status == 1) && strstr(r.err, "runtime error") == NULL,
	   "no sample: exit %d, %s", r.status, r.err);

	/* A bad option value: one line, exit 1 (as in every command). */
	h_ringlog(&r, "profile", path, "--top", "x", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, "ringlog: profile: --top 'x': expected a number 1..4294967295\n");
	h_ringlog(&r, "profile", path, "--tid", "-1", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, "ringlog: profile: --tid '-1': expected a number 0..4294967295\n");

	/* The kernel loop: kallsyms names its kernel frames. */
	h_ringlog(&r, "profile", path, "--tid", ktid, "--top", "50", NULL);
	ASSERT_EQ(r.status, 0);
	ok(strstr(r.out, "sys_getppid") != NULL && strstr(r.out, "[kernel] 0x") == NULL,
	   "kernel frames named from /proc/kallsyms (getppid's)");
	if (!strstr(r.out, "sys_getppid"))
		diag("%s", r.out);
	setenv("RINGLOG_KALLSYMS", "/nonexistent", 1);
	h_ringlog(&r, "profile", path, "--tid", ktid, NULL);
	unsetenv("RINGLOG_KALLSYMS");
	ok(r.status == 0 && strstr(r.out, "[kernel] 0x") != NULL &&
		   strstr(r.out, "kernel frames: /proc/kallsyms not readable") != NULL,
	   "kallsyms not readable: [kernel] 0x... and a note");

	/* JSON: the same sample count. */
	h_ringlog(&r, "profile", path, "--tid", tid, "--json", NULL);
	char key[64];
	snprintf(key, sizeof key, "\"samples\":%llu,", (unsigned long long)n);
	ok(r.status == 0 && strstr(r.out, key) != NULL, "--json: %s", key);

	/* A damaged block: the profile of the rest, then one line per
	 * damaged region, exit 1. */
	FILE *d = fopen(path, "r+");
	BAIL_IF(d == NULL, "open the log file");
	fseek(d, 0, SEEK_END);
	long size = ftell(d);
	fseek(d, size / 2, SEEK_SET);
	fputs("\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8", d);
	fclose(d);
	h_ringlog(&r, "profile", path, NULL);
	char dmg[300];
	snprintf(dmg, sizeof dmg, "ringlog: profile %s: damaged block at offset ", path);
	ok(r.status == 1 && strncmp(r.out, "profile ", 8) == 0 && strncmp(r.err, dmg, strlen(dmg)) == 0,
	   "a damaged block: the profile, then '%s...', exit 1 (%d: %s)", dmg, r.status, r.err);

	/* Not a log file: one line, exit 1. */
	FILE *f = fopen(path, "w");
	fputs("not a ringlog file at all, just text\n", f);
	fclose(f);
	h_ringlog(&r, "profile", path, NULL);
	char want[512];
	snprintf(want, sizeof want, "ringlog: profile %s: not a ringlog log file (bad file header)\n", path);
	ok(r.status == 1 && strcmp(r.err, want) == 0 && r.out[0] == '\0', "garbage: one error line, exit 1 (%s)",
	   r.err);
	unlink(path);
	return done_testing();
}
