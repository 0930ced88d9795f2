/*
 * test_stats_sched_live - `ringlog stats --sched` on a real session with
 * system events (root only): workloads whose answer the kernel decides,
 * checked with documented tolerances.
 *   - a thread that sleeps 10 ms 20 times: blocked >= 195 ms (each sleep
 *     is at least 10 ms from nanosleep's entry; the part before the
 *     switch-out, at most a few tens of microseconds each, is on a CPU,
 *     so 250 us per sleep are allowed) and at least 20 switches in;
 *   - a thread that spins until its own CPU clock says 100 ms: on a CPU
 *     >= 90 ms (the CPU clock and the switches agree to the microsecond;
 *     10 ms allow for the time before the session saw its first switch-in);
 *   - a thread that calls read() 500 times: read >= 500 times among the
 *     system calls, and that thread's syscalls >= 500 (found by its tid:
 *     a session of system calls only records no comm).
 * The scope is this process (--system-pid), and the system calls have a
 * session of their own, so that the kernel's rings do not fill; if they
 * do all the same (the daemon's sys_lost: a few, even for this scope,
 * as the kernel's rings hold the whole machine's events), the answer says
 * how many were lost, and each bound is lowered by what the lost events
 * could hide (one switch, 10 ms, one call each); above 20 lost they are
 * not asserted.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "sys_stats.h"
#include "json.h"
#include "proc_run.h"
#include "tap.h"

static void *sleeper(void *a)
{
	(void)a;
	pthread_setname_np(pthread_self(), "sl_sleeper");
	for (int i = 0; i < 20; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void *spinner(void *a)
{
	(void)a;
	pthread_setname_np(pthread_self(), "sl_spin");
	struct timespec t;
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	while (t.tv_sec == 0 && t.tv_nsec < 100 * 1000 * 1000);
	return NULL;
}

static long reader_tid;

static void *reader(void *a)
{
	(void)a;
	reader_tid = (long)gettid();
	int fd = open("/dev/zero", O_RDONLY);
	char c;
	for (int i = 0; i < 500 && fd >= 0; i++)
		if (read(fd, &c, 1) != 1)
			break;
	if (fd >= 0)
		close(fd);
	return NULL;
}

static const struct json *named(const struct json *j, const char *name)
{
	const struct json *a = json_get(j, "threads");
	for (size_t i = 0; a && i < a->n; i++) {
		const struct json *n = json_get(a->items[i], "name");
		if (n && n->type == JSON_STR && strcmp(n->s, name) == 0)
			return a->items[i];
	}
	return NULL;
}

static const struct json *by_tid(const struct json *j, long tid)
{
	const struct json *a = json_get(j, "threads");
	for (size_t i = 0; a && i < a->n; i++) {
		const char *t = json_num(a->items[i], "tid");
		if (t && strtol(t, NULL, 10) == tid)
			return a->items[i];
	}
	return NULL;
}

static double num(const struct json *o, const char *key)
{
	const char *v = o ? json_num(o, key) : NULL;
	return v ? strtod(v, NULL) : -1;
}

int main(void)
{
	h_sys_require();
	struct h_run r;
	char pid[24], err[128];
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	/* Two sessions: the switches without the system calls' volume, then
	 * the system calls. */
	const char *name = h_session("sslive");
	const char *path = h_path("sslive");
	char path2[512];
	snprintf(path2, sizeof(path2), "%s.2", path);
	unlink(path);
	unlink(path2);
	h_ringlog(&r, "start", name, "-o", path, "--system", "cswitch,wakeup", "--system-pid", pid,
		  NULL);
	BAIL_IF(r.status != 0, "start --system: %s", r.err);
	pthread_t th[2];
	BAIL_IF(pthread_create(&th[0], NULL, sleeper, NULL) != 0, "pthread_create");
	BAIL_IF(pthread_create(&th[1], NULL, spinner, NULL) != 0, "pthread_create");
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	uint64_t lost = h_kv(r.out, "sys_lost");
	diag("stop: sys_written %llu sys_lost %llu", (unsigned long long)h_kv(r.out, "sys_written"),
	     (unsigned long long)lost);

	struct run s = RUN("stats", path, "--sched", "--json");
	ok(s.status == 0, "stats --sched --json: exit 0 (%s)", s.err);
	struct json *j = json_parse(s.out, strlen(s.out), err, sizeof(err));
	ok(j && j->type == JSON_OBJ, "the output parses%s%s", j ? "" : ": ", j ? "" : err);
	const struct json *sl = named(j, "sl_sleeper"), *sp = named(j, "sl_spin");
	ok(sl && sp, "the two threads, by the names they gave themselves");
	diag("sl_sleeper: blocked %.3f ms, switches %.0f, runnable %.3f ms", num(sl, "blocked_ns") / 1e6,
	     num(sl, "switches"), num(sl, "runnable_ns") / 1e6);
	diag("sl_spin: on_cpu %.3f ms, switches %.0f, preempted %.0f", num(sp, "on_cpu_ns") / 1e6,
	     num(sp, "switches"), num(sp, "preempted"));
	ok(num(j, "lost_events") == (double)lost, "the losses the daemon counted are in the answer");
	/* Each event the kernel lost (of the whole machine's, mostly other
	 * processes': the scope is applied by the daemon) can hide at most
	 * one of these threads' switches, and so one interval: a sleep of
	 * 10 ms, or a slice of the spinner (10 ms allowed). */
	if (lost <= 20) {
		double l = (double)lost;
		ok(num(sl, "blocked_ns") >= 195e6 - l * 10e6, "the sleeper was blocked >= 195 ms "
		   "(20 x 10 ms, 250 us each before the switch-out), less 10 ms per lost event");
		ok(num(sl, "switches") >= 20 - l, "the sleeper was switched in at least 20 times, "
		   "less one per lost event");
		ok(num(sp, "on_cpu_ns") >= 90e6 - l * 10e6, "the spinner was on a CPU >= 90 ms, "
		   "less 10 ms per lost event");
	} else {
		for (int i = 0; i < 3; i++)
			ok(1, "# SKIP the kernel lost %llu events", (unsigned long long)lost);
	}
	json_free(j);
	run_free(&s);

	h_ringlog(&r, "start", name, "-o", path2, "--system", "syscall", "--system-pid", pid, NULL);
	BAIL_IF(r.status != 0, "start --system syscall: %s", r.err);
	BAIL_IF(pthread_create(&th[0], NULL, reader, NULL) != 0, "pthread_create");
	pthread_join(th[0], NULL);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	lost = h_kv(r.out, "sys_lost");
	diag("stop: sys_written %llu sys_lost %llu", (unsigned long long)h_kv(r.out, "sys_written"),
	     (unsigned long long)lost);
	s = RUN("stats", path2, "--sched", "--json");
	j = json_parse(s.out, strlen(s.out), err, sizeof(err));
	/* No switch in this session: the thread has no comm, its tid names it. */
	const struct json *rd = by_tid(j, reader_tid);
	diag("sl_read: syscalls %.0f", num(rd, "syscalls"));
	const struct json *calls = json_get(j, "syscalls");
	double reads = -1;
	for (size_t i = 0; calls && i < calls->n; i++) {
		const struct json *n = json_get(calls->items[i], "name");
		if (n && n->type == JSON_STR && strcmp(n->s, "read") == 0)
			reads = num(calls->items[i], "count");
	}
	if (lost <= 20) {
		ok(num(rd, "syscalls") >= 500 - (double)lost,
		   "the reader made >= 500 system calls, less the lost events");
		ok(reads >= 500 - (double)lost,
		   "read among the system calls, >= 500 times less the lost events (%.0f)", reads);
	} else {
		for (int i = 0; i < 2; i++)
			ok(1, "# SKIP the kernel lost %llu events", (unsigned long long)lost);
	}
	json_free(j);
	run_free(&s);

	s = RUN("stats", path2, "--sched");
	ok(s.status == 0 && strstr(s.out, "\nread "), "the text names read");
	run_free(&s);
	unlink(path);
	unlink(path2);
	return done_testing();
}
