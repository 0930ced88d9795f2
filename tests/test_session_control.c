/*
 * test_session_control - changing a running session (docs/SESSIONS.md):
 *   - `ringlog update --mask/--enable`: the running producer's next write
 *     sees the new EnableFlags (declared events of a category off return 0
 *     and are not in the file; on, they are), without a restart;
 *   - category names: rlog_category_name, `update --enable NAME`, and a
 *     name given at start before any process declared it, enabled once one
 *     does;
 *   - `ringlog flush` makes one event, alone in a partly filled buffer,
 *     readable in the file while the session runs;
 *   - FlushTimer delivers a single event with no other traffic;
 *   - `update --max-buffers` within [the pool now, the capacity], the rest
 *     refused with their lines; `update --flush-timer`.
 * Every case checks emitted = written + lost at stop.
 */
#include <time.h>

#include "harness.h"
#include "ringlog/event.h"
#include "tap.h"

#define PING_FIELDS(F) F(U64, n)
RLOG_DEFINE_EVENT(ping_net, 1100, "ping.net", 2, PING_FIELDS)
RLOG_DEFINE_EVENT(ping_disk, 1101, "ping.disk", 5, PING_FIELDS)

static struct h_run r;

/* Events with the given ID in a log file (read while it is being written:
 * a partial last block is not an error here). */
static uint64_t events_with_id(const char *path, unsigned id)
{
	struct rlog_reader *rd;
	if (rlog_reader_open(path, &rd) < 0)
		return UINT64_MAX;
	struct rlog_event ev;
	uint64_t n = 0;
	while (rlog_reader_next(rd, &ev) == 1)
		n += !ev.from_daemon && ev.id == id;
	rlog_reader_close(rd);
	return n;
}

static void mask_update(void)
{
	const char *name = h_session("upd1");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("upd1"));
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--mask", "0x4", NULL); /* category 2 only */
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ(rlog_attach(name), 0);
	struct h_tally t = { 0, 0, 0, 0 };
	ASSERT_EQ(h_tally_add(&t, RLOG_EVENT(ping_net, 1)), 1);
	ASSERT_EQ(h_tally_add(&t, RLOG_EVENT(ping_disk, 1)), 0); /* category 5 off */
	h_ringlog(&r, "update", name, "--mask", "0x20", NULL);   /* category 5 only */
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");
	/* The very next write sees it. */
	ok(!rlog_enabled(2) && rlog_enabled(5), "the producer sees the new mask at once");
	ASSERT_EQ(h_tally_add(&t, RLOG_EVENT(ping_net, 2)), 0);
	ASSERT_EQ(h_tally_add(&t, RLOG_EVENT(ping_disk, 2)), 1);
	h_ringlog(&r, "query", name, NULL);
	ASSERT_CONTAINS(r.out, "enable_mask: 0x0000000000000020\n");
	/* --mask 0 pauses the session: even raw writes return 0. */
	h_ringlog(&r, "update", name, "--mask", "0", NULL);
	uint64_t v = 7;
	ASSERT_EQ(h_tally_add(&t, rlog_write(1024, &v, sizeof v)), 0);
	h_ringlog(&r, "update", name, "--mask", "0xffffffffffffffff", NULL);
	ASSERT_EQ(h_tally_add(&t, rlog_write(1024, &v, sizeof v)), 1);
	rlog_detach();
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), t.written);
	ASSERT_EQ_U64(t.written, 3);
	ASSERT_EQ_U64(events_with_id(path, 1100), 1);
	ASSERT_EQ_U64(events_with_id(path, 1101), 1);
	unlink(path);
}

static void names(void)
{
	/* "disk" is asked for before anyone declared it. */
	const char *name = h_session("upd2");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("upd2"));
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--enable", "disk", NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "query", name, NULL);
	ASSERT_CONTAINS(r.out, "enable_mask: 0x0000000000000000\n");
	ASSERT_CONTAINS(r.out, "enable_pending: disk\n");
	ASSERT_EQ(rlog_category_name(2, "net"), 0);
	ASSERT_EQ(rlog_category_name(2, "other"), -EEXIST);
	ASSERT_EQ(rlog_category_name(64, "x"), -EINVAL);
	ASSERT_EQ(rlog_category_name(3, "Bad"), -EINVAL);
	ASSERT_EQ(rlog_category_name(3, ""), -EINVAL);
	ASSERT_EQ(rlog_category_name(3, "a-very-long-category-name-xx"), -EINVAL);
	ASSERT_EQ(rlog_attach(name), 0);          /* records "net" in the session */
	ASSERT_EQ(rlog_category_name(5, "disk"), 0); /* the pending name: the daemon enables it */
	uint64_t mask = 0;
	for (int i = 0; i < 300 && mask != 0x20; i++) {
		h_ringlog(&r, "query", name, NULL);
		char *m = strstr(r.out, "enable_mask: ");
		mask = m ? strtoull(m + 13, NULL, 16) : 0;
		if (mask != 0x20)
			proc_sleep_ms(10);
	}
	ASSERT_EQ_U64(mask, 0x20);
	ASSERT_CONTAINS(r.out, "enabled: disk\n");
	struct h_tally t = { 0, 0, 0, 0 };
	ASSERT_EQ(h_tally_add(&t, RLOG_EVENT(ping_disk, 1)), 1);
	ASSERT_EQ(h_tally_add(&t, RLOG_EVENT(ping_net, 1)), 0);
	/* By name, both now declared: exactly net. */
	h_ringlog(&r, "update", name, "--enable", "net", NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "query", name, NULL);
	ASSERT_CONTAINS(r.out, "enable_mask: 0x0000000000000004\n");
	ASSERT_CONTAINS(r.out, "enabled: net\n");
	ASSERT_CONTAINS(r.out, "enable_pending: \n");
	ASSERT_EQ(h_tally_add(&t, RLOG_EVENT(ping_net, 2)), 1);
	ASSERT_EQ(h_tally_add(&t, RLOG_EVENT(ping_disk, 2)), 0);
	/* Another process cannot rename a bit. */
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int e1 = rlog_category_name(5, "disk");
		rlog_detach();
		rlog_category_name(9, "x"); /* unattached: remembered only */
		_exit(e1 == 0 ? 0 : 1);
	}
	int st;
	waitpid(pid, &st, 0);
	ASSERT_EQ(WEXITSTATUS(st), 0);
	rlog_detach();
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), t.written);
	ASSERT_EQ_U64(events_with_id(path, 1100), 1);
	ASSERT_EQ_U64(events_with_id(path, 1101), 1);
	unlink(path);
}

static void flush_and_timer(void)
{
	const char *name = h_session("upd3");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("upd3"));
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ(rlog_attach(name), 0);
	uint64_t v = 1;
	ASSERT_EQ(rlog_write(1030, &v, sizeof v), 1);
	proc_sleep_ms(50); /* the daemon passes: a partly filled buffer stays put */
	ASSERT_EQ_U64(events_with_id(path, 1030), 0);
	h_ringlog(&r, "flush", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");
	ASSERT_EQ_U64(events_with_id(path, 1030), 1);
	/* Twice more: each is served. */
	ASSERT_EQ(rlog_write(1030, &v, sizeof v), 1);
	h_ringlog(&r, "flush", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(events_with_id(path, 1030), 2);

	/* FlushTimer: a single event reaches the file with no other traffic
	 * and no flush. */
	h_ringlog(&r, "update", name, "--flush-timer", "100ms", NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "query", name, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "flush_timer_ms"), 100);
	ASSERT_EQ(rlog_write(1031, &v, sizeof v), 1);
	uint64_t seen = 0;
	for (int i = 0; i < 500 && seen == 0; i++) {
		proc_sleep_ms(10);
		seen = events_with_id(path, 1031);
	}
	ASSERT_EQ_U64(seen, 1);
	rlog_detach();
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 3);
	unlink(path);
}

static void max_buffers(void)
{
	const char *name = h_session("upd4");
	char path[256], line[512];
	snprintf(path, sizeof path, "%s", h_path("upd4"));
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--buffer-size", "4", "--min-buffers", "8",
		  "--max-buffers", "16", NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "update", name, "--max-buffers", "64", NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "query", name, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "max_buffers"), 64);
	ASSERT_EQ_U64(h_kv(r.out, "buffer_capacity"), 64);
	h_ringlog(&r, "update", name, "--max-buffers", "65", NULL);
	ASSERT_EQ(r.status, 1);
	snprintf(line, sizeof line, "ringlog: update: --max-buffers 65: expected 8 (the buffers in "
		 "the pool now) to 64 (the session's capacity)\n");
	ASSERT_STREQ(r.err, line);
	h_ringlog(&r, "update", name, "--max-buffers", "4", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_CONTAINS(r.err, "--max-buffers 4: expected 8");
	h_ringlog(&r, "update", name, NULL);
	ASSERT_EQ(r.status, 2);
	ASSERT_CONTAINS(r.err, "ringlog: update: nothing to change\n");
	h_ringlog(&r, "update", name, "--enable", "1", "--mask", "2", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, "ringlog: update: use one of --enable and --mask\n");
	h_ringlog(&r, "update", name, "--enable", "NOPE", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, "ringlog: update: --enable: 'NOPE' is not a category name (1 to 27 of "
			    "a-z, 0-9, '_', '.', '-') or number\n");
	h_ringlog(&r, "update", "t-no-such-session", "--mask", "1", NULL);
	ASSERT_STREQ(r.err, "ringlog: update: no session named 't-no-such-session'\n");
	h_ringlog(&r, "flush", "t-no-such-session", NULL);
	ASSERT_STREQ(r.err, "ringlog: flush: no session named 't-no-such-session'\n");
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	unlink(path);
}

int main(void)
{
	mask_update();
	names();
	flush_and_timer();
	max_buffers();
	return done_testing();
}
