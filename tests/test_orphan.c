/*
 * test_orphan - a session whose daemon died (SIGKILL), docs/SESSIONS.md "Orphans":
 *
 *   1. `ringlog list` and `ringlog query` say orphaned (exact line);
 *   2. `ringlog stop NAME` leaves it as it is, with its line, exit 1;
 *   3. `ringlog stop NAME --force` drains what the buffers still hold into
 *      the file, after its last whole block (a block cut short at the end
 *      of the file is cut off), with the block sequence going on, each
 *      event once (what the dead daemon had written of a buffer is not
 *      written again), the losses of the producers that wrote on without a
 *      daemon counted in DATA_LOSS records; then removes the session:
 *      emitted = written + lost, and the file says the same, without
 *      damage;
 *   4. a real-time consumer of a session whose daemon dies ends with its
 *      line, exit 1;
 *   5. `stop --force` on a session whose daemon runs is a plain stop.
 */
#include <signal.h>
#include <sys/stat.h>
#include <time.h>

#include "harness.h"
#include "tap.h"

static struct h_run r;

static uint64_t write_seq(uint64_t from, uint64_t n, struct h_tally *t)
{
	for (uint64_t i = from; i < from + n; i++)
		h_tally_add(t, rlog_write(1024, &i, sizeof i));
	return from + n;
}

static void orphan(const char *tag, bool flushed)
{
	const char *name = h_session(tag);
	char path[256], line[512];
	snprintf(path, sizeof path, "%s", h_path(tag));
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--buffer-size", "4", "--buffers", "8", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ(rlog_attach(name), 0);
	struct h_tally t = { 0, 0, 0, 0 };
	uint64_t next = write_seq(1, 1000, &t);
	if (flushed) {
		/* Part of the buffer being written is in the file: not again. */
		h_ringlog(&r, "flush", name, NULL);
		ASSERT_EQ(r.status, 0);
	}
	h_kill_daemon(name);
	/* On without a daemon: the pool fills, the rest is lost, counted. */
	next = write_seq(next, 20000, &t);
	ok(t.lost > 0, "%" PRIu64 " events lost while the daemon was dead", t.lost);

	h_ringlog(&r, "list", NULL);
	snprintf(line, sizeof line, "%-24.64s %-9s %s\n", name, "orphaned", path);
	ASSERT_CONTAINS(r.out, line);
	h_ringlog(&r, "query", name, NULL);
	ASSERT_CONTAINS(r.out, "state: orphaned\n");
	pid_t dpid = (pid_t)h_kv(r.out, "daemon_pid");
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 1);
	snprintf(line, sizeof line, "ringlog: stop: %s: the daemon (pid %d) is not running: the "
		 "session is orphaned; 'ringlog stop %s --force' recovers its buffers into its "
		 "file\n", name, (int)dpid, name);
	ASSERT_STREQ(r.err, line);
	h_ringlog(&r, "query", name, NULL);
	ASSERT_EQ(r.status, 0); /* still there */

	/* A block cut short at the end of the file, as a daemon killed while
	 * writing leaves it. */
	struct stat st;
	ASSERT_EQ(stat(path, &st), 0);
	uint64_t before = (uint64_t)st.st_size;
	int fd = open(path, O_WRONLY | O_APPEND);
	uint8_t cut[60] = { 0x52, 0x4c, 0x42, 0x4b, 48, 0 };
	cut[32] = 0x00;
	cut[33] = 0x10; /* data_size 4096: runs past the end */
	ok(fd >= 0 && write(fd, cut, sizeof cut) == (ssize_t)sizeof cut, "a cut block appended");
	close(fd);

	h_ringlog(&r, "stop", name, "--force", NULL);
	ASSERT_EQ(r.status, 0);
	snprintf(line, sizeof line, "ringlog: stop: %s: the daemon (pid %d) was not running; "
		 "recovered the session's buffers into its file\n", name, (int)dpid);
	ASSERT_STREQ(r.err, line);
	uint64_t written = h_kv(r.out, "events_written"), lost = h_kv(r.out, "events_lost");
	ASSERT_EQ_U64(written + lost, next - 1);
	ASSERT_EQ_U64(written, t.written);
	ASSERT_EQ_U64(lost, t.lost);
	ASSERT_EQ(stat(path, &st), 0);
	ASSERT_EQ_U64(h_kv(r.out, "file_bytes"), (uint64_t)st.st_size);
	ok((uint64_t)st.st_size >= before, "appended after the last whole block");
	struct h_summary s;
	h_summarize(path, &s);
	ASSERT_EQ(s.open_err, 0);
	ASSERT_EQ(s.damage, 0);
	ASSERT_EQ_U64(s.events, written);
	ASSERT_EQ_U64(s.loss_events, lost);
	ASSERT_EQ_U64(s.loss_by_cause[RLOG_LOSS_NO_BUFFER], lost);
	ok(s.nthreads == 1 && s.th[0].order_errors == 0, "each event once, in order");
	ASSERT_EQ(s.time_errors, 0);
	h_ringlog(&r, "query", name, NULL);
	ASSERT_EQ(r.status, 1); /* removed */
	h_ringlog(&r, "stop", name, "--force", NULL);
	ASSERT_EQ(r.status, 1);
	snprintf(line, sizeof line, "ringlog: stop: no session named '%s'\n", name);
	ASSERT_STREQ(r.err, line);
	rlog_detach();
	unlink(path);
}

/* A real-time consumer whose daemon dies says so. */
static void consumer_of_orphan(void)
{
	const char *name = h_session("orrt");
	char path[256], line[512];
	snprintf(path, sizeof path, "%s", h_path("orrt"));
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--mode", "real-time", NULL);
	ASSERT_EQ(r.status, 0);
	struct proc_bg t;
	proc_start(&t, (const char *const[]){ h_bin(), "tail", name, NULL });
	/* Connected: it has printed the stream's LOG_MARKER. */
	ok(proc_wait(&t, "LOG_MARKER", PROC_WAIT_MS), "the consumer is connected");
	h_ringlog(&r, "query", name, NULL);
	pid_t dpid = (pid_t)h_kv(r.out, "daemon_pid");
	h_kill_daemon(name);
	struct run tr = proc_reap(&t);
	ASSERT_EQ(tr.status, 1);
	snprintf(line, sizeof line, "ringlog: tail %s: the daemon (pid %d) died: the session is "
		 "orphaned ('ringlog stop %s --force' recovers it)\n", name, (int)dpid, name);
	ok(strstr(tr.err, line) != NULL, "tail says the daemon died: %s", tr.err);
	run_free(&tr);
	h_ringlog(&r, "stop", name, "--force", NULL);
	ASSERT_EQ(r.status, 0);
	char sock[128];
	snprintf(sock, sizeof sock, "/dev/shm/ringlog-rt.%s", name);
	ok(access(sock, F_OK) != 0, "the dead daemon's socket is removed");
	unlink(path);
}

static void force_on_live(void)
{
	const char *name = h_session("orlive");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("orlive"));
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ(rlog_attach(name), 0);
	struct h_tally t = { 0, 0, 0, 0 };
	write_seq(1, 500, &t);
	rlog_detach();
	h_ringlog(&r, "list", NULL);
	/* Only this session's line: tests running beside this one may have
	 * orphaned sessions of their own in the listing. */
	char line[512];
	snprintf(line, sizeof line, "%-24.64s %-9s %s\n", name, "active", path);
	ASSERT_CONTAINS(r.out, line);
	h_ringlog(&r, "stop", name, "--force", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 500);
	unlink(path);
}

int main(void)
{
	orphan("orph", true);
	orphan("orph2", false);
	consumer_of_orphan();
	force_on_live();
	return done_testing();
}
