/*
 * test_multiprocess - 4 forked producer processes write 100,000 events each
 * into one session and leave with _exit() (no atexit hook: their last
 * buffer is still OWNED, so the daemon must reclaim it from the dead
 * process).  A fifth process writes K events, tells the parent, and is
 * killed with SIGKILL: its K events are in the file too.  Per pid: exact
 * counts, order, no loss.
 */
#include "harness.h"

#include <signal.h>

#include "tap.h"

#define PROCS 4
#define EVENTS 100000u
#define KILLED_EVENTS 5000u
#define RECORD 24u

/* Child: attach, write n events with seq payload 1..n, report on fd. */
static int child_write(const char *name, uint64_t n)
{
	if (rlog_attach(name) != 0)
		return 10;
	for (uint64_t i = 1; i <= n; i++) {
		uint64_t payload[2] = { i, (uint64_t)getpid() };
		if (rlog_write(1024, payload, sizeof payload) != 1)
			return 11;
	}
	return 0;
}

int main(void)
{
	const char *name = h_session("mp");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("mp"));
	/* 1024 x 16 KiB = 16 MiB: holds all 2.5 MB even if the daemon slept. */
	h_start(name, path, "16", "1024");

	pid_t pids[PROCS + 1];
	for (int i = 0; i < PROCS; i++) {
		fflush(NULL);
		pids[i] = fork();
		BAIL_IF(pids[i] < 0, "fork");
		if (pids[i] == 0)
			_exit(child_write(name, EVENTS));
	}
	int pfd[2];
	BAIL_IF(pipe(pfd) != 0, "pipe");
	fflush(NULL);
	pids[PROCS] = fork();
	BAIL_IF(pids[PROCS] < 0, "fork");
	if (pids[PROCS] == 0) {
		close(pfd[0]);
		int rc = child_write(name, KILLED_EVENTS);
		char c = (char)rc;
		if (write(pfd[1], &c, 1) != 1)
			_exit(12);
		for (;;)
			pause();
	}
	close(pfd[1]);
	char c = 99;
	ASSERT_EQ(read(pfd[0], &c, 1), 1);
	ASSERT_EQ(c, 0);
	close(pfd[0]);
	kill(pids[PROCS], SIGKILL);
	int st;
	waitpid(pids[PROCS], &st, 0);
	ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "the fifth producer was killed");
	for (int i = 0; i < PROCS; i++) {
		waitpid(pids[i], &st, 0);
		ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "producer %d exited 0 (status 0x%x)", i, st);
	}

	struct h_run r;
	h_ringlog(&r, "stop", name, NULL);
	uint64_t total = (uint64_t)PROCS * EVENTS + KILLED_EVENTS;
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), total);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), 0);
	ASSERT_EQ_U64(h_kv(r.out, "bytes_lost"), 0);
	ASSERT_EQ_U64(h_kv(r.out, "bytes_written"), total * RECORD);
	ASSERT_EQ_U64(h_kv(r.out, "corrupt_buffers"), 0);

	struct h_summary s;
	h_summarize(path, &s);
	ASSERT_EQ(s.open_err, 0);
	ASSERT_EQ_U64(s.damage, 0);
	ASSERT_EQ_U64(s.markers, 1);
	ASSERT_EQ_U64(s.time_errors, 0);
	ASSERT_EQ_U64(s.loss_records, 0);
	ASSERT_EQ_U64(s.events, total);
	ASSERT_EQ((int)s.nthreads, PROCS + 1);
	for (int i = 0; i <= PROCS; i++) {
		uint64_t want = i < PROCS ? EVENTS : KILLED_EVENTS;
		struct h_thread *t = NULL;
		int found = 0;
		for (size_t k = 0; k < s.nthreads; k++)
			if (s.th[k].pid == (uint32_t)pids[i]) {
				t = &s.th[k];
				found++;
			}
		if (!ok(found == 1, "producer %d (pid %d) has one stream in the file", i, (int)pids[i]))
			continue;
		ASSERT_EQ_U64(t->tid, (uint32_t)pids[i]); /* a process's only thread */
		ASSERT_EQ_U64(t->events, want);
		ASSERT_EQ_U64(t->last_seq, want);
		ASSERT_EQ_U64(t->order_errors, 0);
		ASSERT_EQ_U64(t->loss_events, 0);
	}
	unlink(path);
	return done_testing();
}
