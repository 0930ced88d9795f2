/*
 * test_late_attach - an application started before its session records
 * into it once it starts, with no restart and no thread of ringlog's
 * (docs/SESSIONS.md, "Late attach").  A process attaches (RINGLOG_SESSION) to a session
 * that does not exist: -ENOENT, and its writes return 0.  Once `ringlog
 * start` has returned, its very next write goes in:
 *   1. from the thread that attached;
 *   2. from a signal handler (the attach then runs inside the handler);
 *   3. while another session whose name has the same wake-registry hash is
 *      running (writes go to the slow path, the session named is not there
 *      yet: 0), then from the first write after the one named starts; and
 *      the same with the other session stopped before the one named starts
 *      (the hash's count is then back at the value the last try saw: the
 *      try must come from the start itself, not from the 100 ms retry,
 *      which RINGLOG_TEST_LATE_TRY_MS stretches to 10 minutes here);
 *   4. not after rlog_detach, which ends the wait.
 * Every case checks the session's count exactly.
 */
#include <signal.h>

#include "harness.h"
#include "tap.h"
#include "wake.h"

static struct h_run r;

static int write_one(uint64_t v)
{
	return rlog_write(1024, &v, sizeof v);
}

/* A child that waits for session name: tells the parent (ready), waits
 * for the word to go on (go), then runs body; exits with its result. */
static pid_t waiter(const char *name, int ready[2], int go[2], int (*body)(void))
{
	BAIL_IF(pipe(ready) != 0 || pipe(go) != 0, "pipe");
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		close(ready[0]);
		close(go[1]);
		setenv("RINGLOG_SESSION", name, 1);
		int bad = rlog_attach(NULL) != -ENOENT;
		for (uint64_t i = 0; i < 1000; i++)
			bad += write_one(i) != 0;
		char c = bad ? 'x' : 'r';
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(98);
		_exit(bad ? 97 : body());
	}
	close(ready[1]);
	close(go[0]);
	char c = 0;
	ASSERT_EQ(read(ready[0], &c, 1), 1);
	ok(c == 'r', "the waiting process was refused (-ENOENT) and its 1000 writes returned 0");
	return pid;
}

static int go_and_wait(int go[2], pid_t pid)
{
	char c = 'g';
	ASSERT_EQ(write(go[1], &c, 1), 1);
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int body_writes(void)
{
	/* The first write after the start goes in; then 99 more. */
	int bad = write_one(1) != 1;
	for (uint64_t i = 2; i <= 100; i++)
		bad += write_one(i) != 1;
	return bad;
}

static volatile sig_atomic_t handler_ret = 99;

static void on_usr1(int sig)
{
	(void)sig;
	handler_ret = write_one(7);
}

static const char *late2_name;

static int body_handler(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1); /* the first write after the start: in the handler */
	if (handler_ret != 1) {
		/* What the waiting process sees, for the log. */
		struct rlog_wake_registry *w = rlog__wake_open();
		fprintf(stderr, "late2: handler write %d; registry %s, count %llu; attach now %d\n",
			(int)handler_ret, w ? "mapped" : "missing",
			w ? (unsigned long long)w->count[rlog__wake_hash(late2_name)] : 0ull,
			rlog_attach(late2_name));
	}
	return handler_ret == 1 ? 0 : 10 + (int)handler_ret;
}

static void picked_up(const char *tag, int (*body)(void), uint64_t want)
{
	char name[64], path[256];
	snprintf(name, sizeof name, "%s", h_session(tag));
	snprintf(path, sizeof path, "%s", h_path(tag));
	int ready[2], go[2];
	pid_t pid = waiter(name, ready, go, body);
	h_start(name, path, NULL, NULL);
	int st = go_and_wait(go, pid);
	ok(st == 0, "%s: the first write after the start went in (status %d)", tag, st);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), want);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), 0);
	ASSERT_EQ_U64(h_kv(r.out, "processes_attached"), 1);
	struct h_summary s;
	h_summarize(path, &s);
	ASSERT_EQ_U64(s.events, want);
	unlink(path);
	close(ready[0]);
	close(go[1]);
}

/* Another name with the same hash as name. */
static void twin(const char *name, char *out, size_t n)
{
	uint32_t h = rlog__wake_hash(name);
	for (int i = 0;; i++) {
		snprintf(out, n, "twin%d-%d", i, (int)getpid());
		if (rlog__wake_hash(out) == h)
			return;
	}
}

static int body_collision(void)
{
	/* Only the twin runs: writes go to the slow path and find nothing. */
	int bad = 0;
	for (int i = 0; i < 100; i++)
		bad += write_one(5) != 0;
	char c = 's';
	/* Tell the parent, then wait for the session named. */
	if (write(3, &c, 1) != 1 || read(4, &c, 1) != 1)
		return 96;
	/* Tries come at most every 100 ms while the twin keeps the mask up,
	 * but the start of the session named changed the hash's count: the
	 * first write after it goes in. */
	int got = write_one(6) == 1;
	return bad ? 20 : got ? 0 : 21;
}

static void collision(const char *tag, bool twin_stops_first)
{
	char name[64], path[256], other[64], opath[256], otag[32];
	snprintf(name, sizeof name, "%s", h_session(tag));
	snprintf(path, sizeof path, "%s", h_path(tag));
	twin(name, other, sizeof other);
	snprintf(otag, sizeof otag, "%stwin", tag);
	snprintf(opath, sizeof opath, "%s", h_path(otag));
	ASSERT_EQ(rlog__wake_hash(name), rlog__wake_hash(other));
	int side[2], back[2];
	BAIL_IF(pipe(side) != 0 || pipe(back) != 0, "pipe");
	/* The child uses fds 3 and 4 for the second handshake. */
	int ready[2], go[2];
	fflush(NULL);
	pid_t pid;
	BAIL_IF(pipe(ready) != 0 || pipe(go) != 0, "pipe");
	pid = fork();
	if (pid == 0) {
		dup2(side[1], 3);
		dup2(back[0], 4);
		close(ready[0]);
		close(go[1]);
		setenv("RINGLOG_SESSION", name, 1);
		setenv("RINGLOG_TEST_LATE_TRY_MS", "600000", 1);
		int bad = rlog_attach(NULL) != -ENOENT;
		char c = bad ? 'x' : 'r';
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(98);
		_exit(bad ? 97 : body_collision());
	}
	close(ready[1]);
	close(go[0]);
	char c;
	ASSERT_EQ(read(ready[0], &c, 1), 1);
	h_start(other, opath, NULL, NULL);
	ASSERT_EQ(write(go[1], &c, 1), 1);
	ASSERT_EQ(read(side[0], &c, 1), 1); /* the twin's writes returned 0 */
	if (twin_stops_first) {
		h_ringlog(&r, "stop", other, NULL);
		ASSERT_EQ_U64(h_kv(r.out, "events_written"), 0);
		ASSERT_EQ_U64(h_kv(r.out, "processes_attached"), 0);
	}
	h_start(name, path, NULL, NULL);
	ASSERT_EQ(write(back[1], &c, 1), 1);
	int st = 0;
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "%s: with a twin %s: nothing recorded into it, then the session named picked up "
	   "by the first write after its start (status %d)",
	   tag, twin_stops_first ? "started and stopped" : "running", st);
	if (!twin_stops_first) {
		h_ringlog(&r, "stop", other, NULL);
		ASSERT_EQ_U64(h_kv(r.out, "events_written"), 0);
		ASSERT_EQ_U64(h_kv(r.out, "processes_attached"), 0);
	}
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 1);
	unlink(path);
	unlink(opath);
}

static void detached(void)
{
	char name[64], path[256];
	snprintf(name, sizeof name, "%s", h_session("late4"));
	snprintf(path, sizeof path, "%s", h_path("late4"));
	ASSERT_EQ(rlog_attach(name), -ENOENT);
	ASSERT_EQ(rlog_detach(), -ENOENT); /* not attached; it stops waiting */
	h_start(name, path, NULL, NULL);
	ASSERT_EQ(write_one(1), 0);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 0);
	unlink(path);
}

int main(void)
{
	picked_up("late1", body_writes, 100);
	late2_name = h_session("late2");
	picked_up("late2", body_handler, 1);
	collision("late3", false);
	collision("late5", true);
	detached();
	return done_testing();
}
