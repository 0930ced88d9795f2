/*
 * test_force_live - --force never overwrites a session's log file
 * (src/common/inuse.h; docs/SESSIONS.md, "Output files").  With session A
 * running and holding numbered events, each of these is refused with one
 * line naming the reason and exit 1, and A's file keeps every event:
 *   1. `start B -o A's file --force`;
 *   2. `snapshot A -o A's own file --force`;
 *   3. `convert OTHER -o A's file --force`, `report OTHER -o A's file --force`;
 *   4. a newfile session's first file, while it writes its second
 *      (`start C -o FILE_1 --force`);
 *   5. `recover A -o A's file --force` after A's daemon was killed; then
 *      `stop --force` recovers A into its file, every event once.
 * A file of no session is still overwritten with --force (start D).
 */
#include "harness.h"
#include "tap.h"

static struct h_run r;

/* Writes events first..last (payload: the sequence) into the attached
 * session; each must go in. */
static void numbered(uint64_t first, uint64_t last)
{
	uint64_t bad = 0;
	for (uint64_t i = first; i <= last; i++)
		bad += rlog_write(1024, &i, sizeof i) != 1;
	rlog_flush_thread();
	ok(bad == 0, "events %llu to %llu written", (unsigned long long)first,
	   (unsigned long long)last);
}

static void refused(const char *what)
{
	ok(r.status == 1 && strstr(r.err, "it is the log file of a session") != NULL &&
		   strchr(r.err, '\n') == r.err + strlen(r.err) - 1,
	   "%s: refused in one line (%d: %s)", what, r.status, r.err);
}

/* The file holds events 1..n of one thread, each once, in order. */
static void holds(const char *path, uint64_t n, const char *what)
{
	struct h_summary s;
	h_summarize(path, &s);
	ok(s.open_err == 0 && s.damage == 0 && s.events == n && s.nthreads == 1 &&
		   s.th[0].order_errors == 0 && s.th[0].last_seq == n,
	   "%s: the file holds events 1 to %llu once each (%llu events, damage %zu)", what,
	   (unsigned long long)n, (unsigned long long)s.events, s.damage);
}

int main(void)
{
	char a[64], b[64], path[256], other[256];
	snprintf(a, sizeof a, "%s", h_session("fa"));
	snprintf(b, sizeof b, "%s", h_session("fb"));
	snprintf(path, sizeof path, "%s", h_path("fa"));
	snprintf(other, sizeof other, "%s", h_path("fo"));

	/* A file of another, stopped session to convert. */
	h_start(b, other, NULL, NULL);
	ASSERT_EQ(rlog_attach(b), 0);
	numbered(1, 10);
	rlog_detach();
	h_ringlog(&r, "stop", b, NULL);
	ASSERT_EQ(r.status, 0);

	h_start(a, path, NULL, NULL);
	ASSERT_EQ(rlog_attach(a), 0);
	numbered(1, 1000);
	ASSERT_EQ(h_ringlog(&r, "flush", a, NULL), 0);

	h_ringlog(&r, "start", b, "-o", path, "--force", NULL);
	refused("start B -o A's file --force");
	h_ringlog(&r, "snapshot", a, "-o", path, "--force", NULL);
	refused("snapshot A -o A's own file --force");
	h_ringlog(&r, "convert", other, "--to", "chrome", "-o", path, "--force", NULL);
	refused("convert --to chrome -o A's file --force");
	h_ringlog(&r, "convert", other, "--to", "perfetto", "-o", path, "--force", NULL);
	refused("convert --to perfetto -o A's file --force");
	h_ringlog(&r, "report", other, "-o", path, "--force", NULL);
	refused("report -o A's file --force");
	numbered(1001, 2000);

	/* A newfile session's first file, while it writes its second. */
	char c[64], pattern[256], first[256];
	snprintf(c, sizeof c, "%s", h_session("fc"));
	snprintf(pattern, sizeof pattern, "/tmp/rlog-test-fc-%d-%%d.rlog", (int)getpid());
	snprintf(first, sizeof first, "/tmp/rlog-test-fc-%d-1.rlog", (int)getpid());
	h_ringlog(&r, "start", c, "-o", pattern, "--mode", "newfile", "--max-file-size", "1",
		  "--buffer-size", "4", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ(rlog_attach_add(c), 0);
	numbered(2001, 200000); /* about 1.6 MB into C: its second file */
	ASSERT_EQ(h_ringlog(&r, "flush", c, NULL), 0);
	h_ringlog(&r, "query", c, NULL);
	ok(h_kv(r.out, "file_index") >= 2, "C writes its file %llu",
	   (unsigned long long)h_kv(r.out, "file_index"));
	h_ringlog(&r, "start", b, "-o", first, "--force", NULL);
	refused("start B -o C's first file --force");
	ASSERT_EQ(rlog_detach_session(c), 0);
	h_ringlog(&r, "stop", c, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), 0);

	/* A's daemon killed: still A's file, until A is recovered. */
	rlog_detach();
	h_kill_daemon(a);
	h_ringlog(&r, "recover", a, "-o", path, "--force", NULL);
	refused("recover A -o A's own file --force");
	h_ringlog(&r, "stop", a, "--force", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 200000);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), 0);
	holds(path, 200000, "A after recovery");

	/* No session's file: --force overwrites it as before. */
	char d[64];
	snprintf(d, sizeof d, "%s", h_session("fd"));
	h_ringlog(&r, "start", d, "-o", path, "--force", NULL);
	ok(r.status == 0, "start D -o A's file --force once A is gone (%d: %s)", r.status, r.err);
	h_ringlog(&r, "stop", d, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 0);

	unlink(path);
	unlink(other);
	for (int i = 1; i <= 16; i++) {
		char f[256];
		snprintf(f, sizeof f, "/tmp/rlog-test-fc-%d-%d.rlog", (int)getpid(), i);
		unlink(f);
	}
	return done_testing();
}
