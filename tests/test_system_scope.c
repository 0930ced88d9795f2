/*
 * test_system_scope - the --follow scope shrinks (docs/SESSIONS.md,
 * "System events"): a process that detaches from the session leaves the
 * kernel events' scope, and so does one that exits, with the children
 * followed from it.
 *
 * A session with `--system cswitch --follow` and three children of this
 * program, driven through pipes: A and B attach, C attaches and forks G
 * (followed: C is in the scope).  Each sleep command is 20 sleeps of 2 ms:
 * 20 switches out of the sleeper, at least.
 *
 *   B sleeps (attached), detaches; `ringlog flush` (a daemon pass after it);
 *   A writes marker 1; B sleeps; A writes marker 2.
 *   G sleeps (followed); C exits (exit(): the library's atexit hook
 *   leaves the session);
 *   `ringlog flush`; A writes marker 3; G sleeps; A writes marker 4.
 *
 * The file must hold B's and G's first 20 switches out, and none of theirs
 * between markers 1 and 2 (B) and 3 and 4 (G) - but a switch from them
 * into A's threads, which names a thread in the scope.  On the old code
 * (the scope only grew) both windows hold 20 or more.  And
 * sys_handed_over = sys_written + sys_lost + sys_filtered.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "sys_stats.h"
#include "ringlog.h"
#include "ringlog/reader.h"
#include "tap.h"

#define MARK_ID 1024
#define RUNDOWN_TID 0xffffffffu

/* A child driven by one-byte commands; it answers each with its tid. */
struct kid {
	pid_t pid;
	int cmd, ack;
	uint32_t tid;
};

static const char *session;
static int die[2]; /* C, once it forked G, exits when a byte comes */

static void sleeps(int n)
{
	for (int i = 0; i < n; i++) {
		struct timespec ts = { 0, 2 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

static void kid_loop(int cmd, int ack);

static void kid_start(struct kid *k)
{
	int c[2], a[2];
	BAIL_IF(pipe(c) != 0 || pipe(a) != 0, "pipe");
	k->pid = fork();
	BAIL_IF(k->pid < 0, "fork");
	if (k->pid == 0) {
		close(c[1]);
		close(a[0]);
		kid_loop(c[0], a[1]);
		_exit(0);
	}
	close(c[0]);
	close(a[1]);
	k->cmd = c[1];
	k->ack = a[0];
}

/* Sends command ch; returns the answer (the kid's tid, or a forked kid's
 * pid for 'f'). */
static uint32_t kid_do(struct kid *k, char ch)
{
	BAIL_IF(write(k->cmd, &ch, 1) != 1, "command %c", ch);
	uint32_t v;
	BAIL_IF(read(k->ack, &v, sizeof v) != (ssize_t)sizeof v, "answer to %c", ch);
	return v;
}

/*
 * Commands: 'a' attach (and write a marker, so that it binds), 'm' write
 * a marker, 's' sleep 20 times, 'd' detach, 'x' exit (exit(): the
 * library's atexit hook leaves the session), 'f' fork a kid that answers
 * on the same pipes (this one then waits for it to exit).
 */
static void kid_loop(int cmd, int ack)
{
	uint32_t me = (uint32_t)syscall(SYS_gettid);
	uint64_t seq = 0;
	char ch;
	while (read(cmd, &ch, 1) == 1) {
		uint32_t answer = me;
		switch (ch) {
		case 'a':
			if (rlog_attach(session) != 0)
				_exit(3);
			/* fallthrough */
		case 'm': {
			uint64_t v[2] = { me, ++seq };
			if (rlog_write(MARK_ID, v, sizeof v) != 1)
				_exit(4);
			break;
		}
		case 's':
			sleeps(20);
			break;
		case 'd':
			rlog_detach();
			break;
		case 'x':
			BAIL_IF(write(ack, &answer, sizeof answer) != (ssize_t)sizeof answer, "ack");
			exit(0);
		case 'f': {
			pid_t g = fork();
			if (g < 0)
				_exit(5);
			if (g == 0) {
				/* The grandchild goes on with the commands. */
				me = (uint32_t)syscall(SYS_gettid);
				continue;
			}
			answer = (uint32_t)g;
			BAIL_IF(write(ack, &answer, sizeof answer) != (ssize_t)sizeof answer, "ack");
			/* The grandchild answers from now on. */
			char b;
			while (read(die[0], &b, 1) < 0)
				;
			exit(0);
		}
		default:
			_exit(6);
		}
		BAIL_IF(write(ack, &answer, sizeof answer) != (ssize_t)sizeof answer, "ack");
	}
	_exit(0);
}

struct scan {
	uint32_t a, b, g;               /* the kids' tids (one thread each, bar a runtime's) */
	uint32_t a_threads[16];         /* A's threads, from its records */
	uint64_t mark[5];               /* A's markers 1..4: times */
	int marks;                      /* A's markers found */
	int b_before, b_after, g_before, g_after;
};

static bool a_thread(const struct scan *s, uint32_t tid)
{
	for (int i = 0; i < 16 && s->a_threads[i]; i++)
		if (s->a_threads[i] == tid)
			return true;
	return false;
}

/* pass 0: A's threads and markers; pass 1: B's and G's switches out. */
static void scan(const char *path, struct scan *s, int pass)
{
	struct rlog_reader *rd;
	BAIL_IF(rlog_reader_open(path, &rd) < 0, "cannot open %s", path);
	struct rlog_event ev;
	int rc;
	while ((rc = rlog_reader_next(rd, &ev)) > 0) {
		if (pass == 0 && !ev.from_daemon && ev.id == MARK_ID && ev.pid == s->a &&
		    ev.length == 16) {
			uint64_t v[2];
			memcpy(v, ev.payload, sizeof v);
			/* A's marker 1 is its attach; 2..5 are the test's 1..4. */
			if (v[1] >= 2 && v[1] <= 5) {
				s->mark[v[1] - 1] = ev.ticks;
				s->marks++;
			}
			continue;
		}
		if (!ev.from_daemon || ev.id != 64 || ev.tid == RUNDOWN_TID)
			continue;
		const struct rlog_schema *sc = rlog_reader_schema(rd, &ev);
		BAIL_IF(sc == NULL || strcmp(sc->name, "sched_switch") != 0, "ID 64 is sched_switch");
		struct rlog_value f[8];
		size_t off = 0;
		for (unsigned i = 0; i < 6; i++)
			BAIL_IF(rlog_event_field(sc, &ev, i, &off, &f[i]) != 1, "field");
		uint32_t pid = (uint32_t)f[0].v.u, tid = (uint32_t)f[1].v.u;
		uint32_t prev = (uint32_t)f[2].v.i, next = (uint32_t)f[5].v.i;
		if (pass == 0) {
			if (pid == s->a && !a_thread(s, tid))
				for (int i = 0; i < 16; i++)
					if (s->a_threads[i] == 0) {
						s->a_threads[i] = tid;
						break;
					}
			continue;
		}
		/* A switch into A names a thread in the scope: recorded. */
		if (a_thread(s, next))
			continue;
		if (prev == s->b) {
			s->b_before += ev.ticks < s->mark[1];
			s->b_after += ev.ticks > s->mark[1] && ev.ticks < s->mark[2];
		}
		if (prev == s->g) {
			s->g_before += ev.ticks < s->mark[3];
			s->g_after += ev.ticks > s->mark[3] && ev.ticks < s->mark[4];
		}
	}
	BAIL_IF(rc != 0, "reading %s: %d", path, rc);
	rlog_reader_close(rd);
}

static void flush(void)
{
	struct h_run r;
	h_ringlog(&r, "flush", session, NULL);
	BAIL_IF(r.status != 0, "flush: %s", r.err);
}

int main(void)
{
	h_sys_require();
	char path[256];
	session = h_sys_session("sysscope", path, sizeof path);
	struct h_run r;
	h_ringlog(&r, "start", session, "-o", path, "--system", "cswitch", "--follow", NULL);
	BAIL_IF(r.status != 0, "start --follow: %s", r.err);

	struct kid a, b, c;
	BAIL_IF(pipe(die) != 0, "pipe");
	kid_start(&a);
	kid_start(&b);
	kid_start(&c);
	struct scan s = { 0 };
	s.a = kid_do(&a, 'a');
	s.b = kid_do(&b, 'a');
	kid_do(&c, 'a');
	flush(); /* the daemon has them in the scope */

	/* Detach. */
	kid_do(&b, 's');
	kid_do(&b, 'd');
	flush(); /* a daemon pass that began after the detach */
	kid_do(&a, 'm');
	kid_do(&b, 's');
	kid_do(&a, 'm');

	/* Exit, with a followed child. */
	struct kid g = c; /* the grandchild answers on C's pipes */
	s.g = kid_do(&c, 'f');
	kid_do(&g, 's');
	BAIL_IF(write(die[1], "x", 1) != 1, "die");
	int st;
	BAIL_IF(waitpid(c.pid, &st, 0) != c.pid || !WIFEXITED(st) || WEXITSTATUS(st), "C");
	flush(); /* a daemon pass that began after C's exit */
	kid_do(&a, 'm');
	kid_do(&g, 's');
	kid_do(&a, 'm');

	kid_do(&g, 'x');
	kid_do(&b, 'x');
	kid_do(&a, 'x');
	BAIL_IF(waitpid(a.pid, &st, 0) != a.pid || !WIFEXITED(st) || WEXITSTATUS(st), "A");
	BAIL_IF(waitpid(b.pid, &st, 0) != b.pid || !WIFEXITED(st) || WEXITSTATUS(st), "B");
	h_ringlog(&r, "stop", session, NULL);
	ASSERT_EQ(r.status, 0);
	h_sys_stats(&r);

	scan(path, &s, 0);
	ASSERT_EQ(s.marks, 4);
	scan(path, &s, 1);
	diag("B: %d switches out attached, %d after it detached; G: %d followed, %d after C died",
	     s.b_before, s.b_after, s.g_before, s.g_after);
	ok(s.b_before >= 20, "B's 20 sleeps while attached are recorded (%d)", s.b_before);
	ok(s.g_before >= 20, "G's 20 sleeps, followed from C, are recorded (%d)", s.g_before);
	ASSERT_EQ(s.b_after, 0);
	ASSERT_EQ(s.g_after, 0);
	unlink(path);
	return done_testing();
}
