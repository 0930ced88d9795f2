/*
 * test_resume - a session whose daemon was killed (SIGKILL) goes on, and
 * its buffers are saved, while its producers keep running
 * (docs/SESSIONS.md, "Orphans"):
 *
 *   1. `ringlog start NAME --resume`: a new daemon takes the session over
 *      while a thread writes all along (never re-attached); after stop,
 *      emitted = written + lost exactly, the file holds each event once,
 *      in order, undamaged, with the losses of the daemonless time;
 *      the same in overwrite mode, where the producer overwrites its
 *      buffers while no daemon drains them (counted, exactly);
 *   2. `ringlog recover NAME -o FILE` on a session with a file: FILE
 *      decodes alone and holds what the session's file does not; the two
 *      together hold each event once, and the statistics are exact;
 *   3. `ringlog recover` on a flight recorder (overwrite mode, no file):
 *      FILE holds the buffers' newest events in order, with the
 *      overwritten ones as OVERWRITTEN losses, and a thread name that was
 *      written once, 40 laps of the ring before;
 *   4. errors: each one line, exit 1 (a running session, a missing one,
 *      --resume with other options, an existing FILE).
 */
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>

#include "harness.h"
#include "tap.h"

static struct h_run r;

/* A producer thread writing 1, 2, 3, ... until told to stop. */
struct writer {
	pthread_t th;
	_Atomic bool stop;
	struct h_atomic_tally t;
	_Atomic uint64_t next;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint64_t i = 1;
	while (!atomic_load(&w->stop)) {
		h_atomic_tally_add(&w->t, rlog_write(1024, &i, sizeof i));
		i++;
		atomic_store(&w->next, i);
		if ((i & 1023) == 0)
			proc_sleep_ms(1); /* about 1 M events/s: the pool fills without a daemon */
	}
	return NULL;
}

/* Waits until w has written at least n more events. */
static void wait_writes(struct writer *w, uint64_t n)
{
	uint64_t to = atomic_load(&w->next) + n;
	while (atomic_load(&w->next) < to)
		proc_sleep_ms(1);
}

static void resume_under_writes(void)
{
	const char *name = h_session("resume");
	char path[256], line[512];
	snprintf(path, sizeof path, "%s", h_path("resume"));
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--buffer-size", "4", "--buffers", "8", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ(rlog_attach(name), 0);
	struct writer w = { .next = 1 };
	ASSERT_EQ(pthread_create(&w.th, NULL, writer_main, &w), 0);
	wait_writes(&w, 20000);
	h_kill_daemon(name);
	uint64_t lost_before = atomic_load(&w.t.lost);
	wait_writes(&w, 20000); /* no daemon: the pool fills, the rest is lost */
	ok(atomic_load(&w.t.lost) > lost_before, "events lost while the daemon was dead");

	h_ringlog(&r, "start", name, "--resume", NULL);
	ASSERT_EQ(r.status, 0);
	snprintf(line, sizeof line, "ringlog: start: %s: resumed: a new daemon took the session "
		 "over from the one that died\n", name);
	ASSERT_STREQ(r.err, line);
	pid_t dpid = (pid_t)h_kv(r.out, "daemon_pid");
	h_ringlog(&r, "query", name, NULL);
	ASSERT_CONTAINS(r.out, "state: active\n");
	ASSERT_EQ_U64(h_kv(r.out, "daemon_pid"), (uint64_t)dpid);
	uint64_t w0 = atomic_load(&w.t.written);
	wait_writes(&w, 20000);
	ok(atomic_load(&w.t.written) > w0, "writes go through again after the resume");
	/* A second --resume while the new daemon runs is refused. */
	h_ringlog(&r, "start", name, "--resume", NULL);
	ASSERT_EQ(r.status, 1);
	snprintf(line, sizeof line, "ringlog: start: %s: its daemon is running: nothing to "
		 "resume\n", name);
	ASSERT_STREQ(r.err, line);

	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	atomic_store(&w.stop, true);
	pthread_join(w.th, NULL);
	rlog_detach();
	ASSERT_EQ_U64(atomic_load(&w.t.other), 0);
	uint64_t written = atomic_load(&w.t.written), lost = atomic_load(&w.t.lost);
	h_check_identity(&r, path, written, lost);
	struct h_summary s;
	h_summarize(path, &s);
	ok(s.nthreads == 1 && s.th[0].order_errors == 0, "each event once, in order");
	ASSERT_EQ(s.time_errors, 0);
	ASSERT_EQ_U64(s.loss_by_cause[RLOG_LOSS_NO_BUFFER], lost);
	unlink(path);
}

/* Starts session name (mode, file path, 8 buffers of 4 KiB), attaches,
 * writes 1..3000 (tallied in t), flushes them to the file, and kills the
 * daemon.  Returns the next number to write. */
static uint64_t orphan_after_3000(const char *name, const char *path, const char *mode,
				  struct h_tally *t)
{
	h_ringlog(&r, "start", name, "-o", path, "--mode", mode, "--buffer-size", "4",
		  "--buffers", "8", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ(rlog_attach(name), 0);
	uint64_t i = 1;
	for (; i <= 3000; i++)
		h_tally_add(t, rlog_write(1024, &i, sizeof i));
	h_ringlog(&r, "flush", name, NULL);
	ASSERT_EQ(r.status, 0);
	h_kill_daemon(name);
	return i;
}

/* An overwrite-mode session with a file: while no daemon drains, the
 * producer overwrites its full buffers (counted); the new daemon goes on. */
static void resume_overwrite(void)
{
	const char *name = h_session("resow");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("resow"));
	unlink(path);
	struct h_tally t = { 0, 0, 0, 0 };
	uint64_t i = orphan_after_3000(name, path, "overwrite", &t);
	for (; i <= 20000; i++) /* 8 laps of the ring without a daemon */
		h_tally_add(&t, rlog_write(1024, &i, sizeof i));
	h_ringlog(&r, "start", name, "--resume", NULL);
	ASSERT_EQ(r.status, 0);
	for (; i <= 25000; i++)
		h_tally_add(&t, rlog_write(1024, &i, sizeof i));
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	rlog_detach();
	ASSERT_EQ_U64(t.written, 25000); /* overwrite mode never refuses */
	uint64_t written = h_kv(r.out, "events_written"), lost = h_kv(r.out, "events_lost");
	ASSERT_EQ_U64(written + lost, 25000);
	ok(lost > 0, "%" PRIu64 " events overwritten without a daemon", lost);
	ASSERT_EQ_U64(h_kv(r.out, "events_overwritten"), lost);
	struct h_summary s;
	h_summarize(path, &s);
	ASSERT_EQ_U64(s.damage, 0);
	ASSERT_EQ_U64(s.events, written);
	ASSERT_EQ_U64(s.loss_by_cause[RLOG_LOSS_OVERWRITTEN], lost);
	ok(s.nthreads == 1 && s.th[0].order_errors == 0 && s.th[0].last_seq == 25000,
	   "each event once, in order, to the last");
	unlink(path);
}

static void recover_file_session(void)
{
	const char *name = h_session("recf");
	char path[256], out[256];
	snprintf(path, sizeof path, "%s", h_path("recf"));
	snprintf(out, sizeof out, "%s", h_path("recf-out"));
	unlink(path);
	unlink(out);
	struct h_tally t = { 0, 0, 0, 0 };
	uint64_t i = orphan_after_3000(name, path, "sequential", &t);
	uint64_t last_written = 0;
	for (; i <= 30000; i++)
		if (h_tally_add(&t, rlog_write(1024, &i, sizeof i)) == 1)
			last_written = i;
	ok(t.lost > 0, "%" PRIu64 " events lost while the daemon was dead", t.lost);

	h_ringlog(&r, "recover", name, "-o", out, NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "recover", name, NULL); /* usage */
	ASSERT_EQ(r.status, 2);
	ASSERT_STREQ(r.err, "ringlog: recover: missing -o FILE\nusage: ringlog recover NAME -o FILE "
			    "[--force]\n");
	rlog_detach();
	struct h_summary a, b;
	h_summarize(path, &a);
	h_summarize(out, &b);
	ASSERT_EQ(a.damage + b.damage, 0);
	ASSERT_EQ(b.open_err, 0);
	ASSERT_EQ_U64(b.markers, 1); /* decodes alone */
	ok(a.events > 0 && b.events > 0, "both files hold events (%" PRIu64 " + %" PRIu64 ")",
	   a.events, b.events);
	ASSERT_EQ_U64(a.events + b.events, t.written);
	ASSERT_EQ_U64(a.loss_events + b.loss_events, t.lost);
	/* Each event once: the new file goes on where the old one ends. */
	diag("session's file: %zu threads, %" PRIu64 " order errors, last %" PRIu64
	     "; recovered: %zu, %" PRIu64 ", %" PRIu64 " .. %" PRIu64, a.nthreads,
	     a.th[0].order_errors, a.th[0].last_seq, b.nthreads, b.th[0].order_errors,
	     b.th[0].last_seq, b.th[0].events);
	ok(a.nthreads == 1 && b.nthreads == 1 && a.th[0].order_errors == 0 &&
	   b.th[0].order_errors == 0 && b.th[0].last_seq == last_written,
	   "the recovered file goes on where the session's ends");
	unlink(path);
	unlink(out);
}

static void recover_flight_recorder(void)
{
	const char *name = h_session("recfr");
	char out[256], line[512];
	snprintf(out, sizeof out, "%s", h_path("recfr-out"));
	unlink(out);
	h_ringlog(&r, "start", name, "--mode", "overwrite", "--buffer-size", "4", "--buffers",
		  "8", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ(rlog_attach(name), 0);
	ASSERT_EQ(rlog_thread_name("recorder"), 0);
	struct h_tally t = { 0, 0, 0, 0 };
	uint64_t i = 1;
	h_tally_add(&t, rlog_write(1024, &i, sizeof i));
	/* The daemon journals the name (it reads the metadata each pass);
	 * then the buffer that carried it may be overwritten. */
	char jpath[128];
	snprintf(jpath, sizeof jpath, "/dev/shm/ringlog-meta.%s", name);
	for (int k = 0; k < 1000 && access(jpath, F_OK) != 0; k++)
		proc_sleep_ms(2);
	ok(access(jpath, F_OK) == 0, "the daemon journals the names it has seen");
	/* 8 buffers of 4 KiB hold 2,048 of these 16-byte records: 40 laps. */
	const uint64_t n = 8 * 4096 / 16 * 40;
	for (i = 2; i <= n; i++)
		h_tally_add(&t, rlog_write(1024, &i, sizeof i));
	ASSERT_EQ_U64(t.written, n); /* a flight recorder never refuses */
	h_kill_daemon(name);
	h_ringlog(&r, "recover", name, "-o", out, NULL);
	ASSERT_EQ(r.status, 0);
	snprintf(line, sizeof line, "ringlog: recover: %s: the daemon (pid %d) was not running; "
		 "recovered the session's buffers into %s\n", name,
		 (int)h_kv(r.out, "daemon_pid"), out);
	(void)line;
	uint64_t written = h_kv(r.out, "events_written"), lost = h_kv(r.out, "events_lost");
	rlog_detach();
	struct h_summary s;
	h_summarize(out, &s);
	ASSERT_EQ(s.open_err, 0);
	ASSERT_EQ_U64(s.damage, 0);
	ASSERT_EQ_U64(s.markers, 1);
	ASSERT_EQ_U64(s.events, written);
	ok(s.events > 1000 && s.events < 8 * 4096 / 16, "the ring's contents: %" PRIu64 " events",
	   s.events);
	ok(s.nthreads == 1 && s.th[0].order_errors == 0 && s.th[0].last_seq == n,
	   "the newest events, in order, up to the last one written");
	ASSERT_EQ_U64(s.events + s.loss_by_cause[RLOG_LOSS_OVERWRITTEN], n);
	/* Exactly: the journal's ledger says what no snapshot reported. */
	ASSERT_EQ_U64(written + lost, n);
	/* The thread's name, though its record was overwritten 40 laps ago:
	 * from the dead daemon's metadata journal, which is then removed. */
	ok(s.th[0].last_seq - s.th[0].events + 1 > 1, "the first buffer was overwritten");
	h_ringlog(&r, "stats", out, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_CONTAINS(r.out, " recorder ");
	char journal[128];
	snprintf(journal, sizeof journal, "/dev/shm/ringlog-meta.%s", name);
	ok(access(journal, F_OK) != 0, "the journal is removed with the session");
	h_ringlog(&r, "query", name, NULL);
	ASSERT_EQ(r.status, 1); /* removed */
	unlink(out);
}

static void errors(void)
{
	const char *name = h_session("recerr");
	char path[256], out[256], line[512];
	snprintf(path, sizeof path, "%s", h_path("recerr"));
	snprintf(out, sizeof out, "%s", h_path("recerr-out"));
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "recover", name, "-o", out, NULL);
	ASSERT_EQ(r.status, 1);
	snprintf(line, sizeof line, "ringlog: recover: %s: its daemon is running: nothing to "
		 "recover ('ringlog snapshot %s -o FILE' copies its buffers)\n", name, name);
	ASSERT_STREQ(r.err, line);
	ok(access(out, F_OK) != 0, "no file written");
	h_ringlog(&r, "start", name, "--resume", "--buffers", "4", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, "ringlog: start: --resume takes no other option: the session keeps "
			    "its properties\n");
	h_kill_daemon(name);
	int fd = open(out, O_WRONLY | O_CREAT, 0644);
	close(fd);
	h_ringlog(&r, "recover", name, "-o", out, NULL);
	ASSERT_EQ(r.status, 1);
	snprintf(line, sizeof line, "ringlog: recover: %s: the file exists (--force overwrites "
		 "it)\n", out);
	ASSERT_STREQ(r.err, line);
	h_ringlog(&r, "recover", name, "-o", out, "--force", NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "start", name, "--resume", NULL);
	ASSERT_EQ(r.status, 1);
	snprintf(line, sizeof line, "ringlog: start: no session named '%s'\n", name);
	ASSERT_STREQ(r.err, line);
	h_ringlog(&r, "recover", name, "-o", out, "--force", NULL);
	ASSERT_EQ(r.status, 1);
	snprintf(line, sizeof line, "ringlog: recover: no session named '%s'\n", name);
	ASSERT_STREQ(r.err, line);
	unlink(path);
	unlink(out);
}

int main(void)
{
	resume_under_writes();
	resume_overwrite();
	recover_file_session();
	recover_flight_recorder();
	errors();
	return done_testing();
}
