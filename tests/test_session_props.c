/*
 * test_session_props - a session's ETW properties at start: the defaults,
 * every flag as `ringlog query` shows it (text and --json), the pool that
 * grows from MinimumBuffers to MaximumBuffers under load (NumberOfBuffers
 * and FreeBuffers checked), a fixed pool, and every refused combination
 * with its exact line (docs/SESSIONS.md, "Every member").
 */
#include <pthread.h>
#include <sys/stat.h>

#include "harness.h"
#include "json.h"
#include "tap.h"

static struct h_run r;

static void expect_refused(const char *why, const char *line, const char *name, ...)
{
	const char *argv[32] = { 0 };
	int n = 0;
	va_list ap;
	va_start(ap, name);
	for (const char *a = name; a && n < 12; a = va_arg(ap, const char *))
		argv[n++] = a;
	va_end(ap);
	struct h_run *x = &r;
	/* h_ringlog takes a NULL-terminated list: pass up to 12 arguments. */
	h_ringlog(x, "start", argv[0], argv[1], argv[2], argv[3], argv[4], argv[5], argv[6],
		  argv[7], argv[8], argv[9], argv[10], argv[11], NULL);
	ok(x->status == 1, "%s: exit 1 (got %d)", why, x->status);
	ASSERT_STREQ(x->err, line);
	ASSERT_STREQ(x->out, "");
}

static void defaults(void)
{
	const char *name = h_session("props0");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("props0"));
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "query", name, NULL);
	ASSERT_EQ(r.status, 0);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t min = (uint64_t)cpus + 2 < 32 ? 32 : (uint64_t)cpus + 2;
	ASSERT_EQ_U64(h_kv(r.out, "buffer_size"), 16384);
	ASSERT_EQ_U64(h_kv(r.out, "min_buffers"), min);
	ASSERT_EQ_U64(h_kv(r.out, "max_buffers"), 1024);
	ASSERT_EQ_U64(h_kv(r.out, "buffer_capacity"), 4096);
	ASSERT_EQ_U64(h_kv(r.out, "number_of_buffers"), min);
	ASSERT_EQ_U64(h_kv(r.out, "free_buffers"), min);
	ASSERT_EQ_U64(h_kv(r.out, "high_water_pct"), 70);
	ASSERT_EQ_U64(h_kv(r.out, "flush_timer_ms"), 0);
	ASSERT_EQ_U64(h_kv(r.out, "max_file_size"), 0);
	ASSERT_CONTAINS(r.out, "log_file_mode: sequential\n");
	ASSERT_CONTAINS(r.out, "enable_mask: 0xffffffffffffffff\n");
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	unlink(path);
}

static void flags_and_json(void)
{
	const char *name = h_session("props1");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("props1"));
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--buffer-size", "8", "--min-buffers", "6",
		  "--max-buffers", "40", "--flush-timer", "2s", "--enable", "3,net,5,disk",
		  "--high-water", "50", "--age-limit", "15", NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "query", name, "--json", NULL);
	ASSERT_EQ(r.status, 0);
	char err[128] = "";
	struct json *j = json_parse(r.out, strlen(r.out), err, sizeof err);
	ok(j != NULL, "query --json is JSON (%s)", err);
	if (j) {
		ASSERT_STREQ(json_num(j, "buffer_size"), "8192");
		ASSERT_STREQ(json_num(j, "min_buffers"), "6");
		ASSERT_STREQ(json_num(j, "max_buffers"), "40");
		ASSERT_STREQ(json_num(j, "buffer_capacity"), "160");
		ASSERT_STREQ(json_num(j, "number_of_buffers"), "6");
		ASSERT_STREQ(json_num(j, "flush_timer_ms"), "2000");
		ASSERT_STREQ(json_num(j, "high_water_pct"), "50");
		ASSERT_STREQ(json_num(j, "age_limit"), "15");
		/* Bits 3 and 5; net and disk wait for a process to declare them. */
		ASSERT_STREQ(json_str(j, "enable_mask"), "0x0000000000000028");
		ASSERT_STREQ(json_str(j, "enable_pending"), "net,disk");
		ASSERT_STREQ(json_str(j, "session"), name);
		ASSERT_STREQ(json_str(j, "log_file_mode"), "sequential");
		ASSERT_STREQ(json_num(j, "events_lost"), "0");
		json_free(j);
	}
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	unlink(path);
}

/* The pool grows from 4 to 64 buffers while a producer writes a burst. */
static void growth(void)
{
	const char *name = h_session("props2");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("props2"));
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--buffer-size", "4", "--min-buffers", "4",
		  "--max-buffers", "64", NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "query", name, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "number_of_buffers"), 4);
	ASSERT_EQ_U64(h_kv(r.out, "free_buffers"), 4);
	ASSERT_EQ(rlog_attach(name), 0);
	struct h_tally t = { 0, 0, 0, 0 };
	/* 4 buffers of 256 16-byte records: 3 of them in use pass the 70 %
	 * mark; keep writing until the daemon has grown the pool. */
	uint64_t n = 0, grown = 0;
	for (int round = 0; round < 2000 && grown != 64; round++) {
		for (int k = 0; k < 300; k++) {
			n++;
			h_tally_add(&t, rlog_write(1024, &n, sizeof n));
		}
		h_ringlog(&r, "query", name, NULL);
		grown = h_kv(r.out, "number_of_buffers");
	}
	ASSERT_EQ_U64(grown, 64);
	uint64_t freeb = h_kv(r.out, "free_buffers");
	ok(freeb <= 64, "free_buffers %" PRIu64 " within the pool of 64", freeb);
	/* A burst of 60 buffers' worth now fits without the daemon. */
	rlog_flush_thread();
	struct timespec ts = { 0, 100000000 };
	nanosleep(&ts, NULL);
	uint64_t before_lost = t.lost;
	for (int k = 0; k < 60 * 250; k++) {
		n++;
		h_tally_add(&t, rlog_write(1024, &n, sizeof n));
	}
	ASSERT_EQ_U64(t.lost, before_lost);
	rlog_detach();
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), t.written);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), t.lost);
	struct h_summary s;
	h_summarize(path, &s);
	ASSERT_EQ_U64(s.events, t.written);
	ASSERT_EQ_U64(s.loss_events, t.lost);
	unlink(path);
}

/* --buffers N: a pool of exactly N, which never grows. */
static void fixed(void)
{
	const char *name = h_session("props3");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("props3"));
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--buffer-size", "4", "--buffers", "4", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ(rlog_attach(name), 0);
	struct h_tally t = { 0, 0, 0, 0 };
	for (uint64_t i = 1; i <= 5000; i++)
		h_tally_add(&t, rlog_write(1024, &i, sizeof i));
	h_ringlog(&r, "query", name, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "number_of_buffers"), 4);
	ASSERT_EQ_U64(h_kv(r.out, "max_buffers"), 4);
	rlog_detach();
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "events_written") + h_kv(r.out, "events_lost"), 5000);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), t.written);
	unlink(path);
}

static void refused(void)
{
	const char *name = h_session("props4");
	char path[256], pat[300], line[512];
	snprintf(path, sizeof path, "%s", h_path("props4"));
	snprintf(pat, sizeof pat, "%s.%%d", path);
	unlink(path);
	expect_refused("newfile without %d",
		       (snprintf(line, sizeof line,
				 "ringlog: start: --mode newfile: the file name '%s' must contain %%d "
				 "(the file's number) once, and no other %% but %%%%\n", path),
			line),
		       name, "-o", path, "--mode", "newfile", "--max-file-size", "8", NULL);
	expect_refused("circular without a size",
		       "ringlog: start: --mode circular needs --max-file-size\n", name, "-o", path,
		       "--mode", "circular", NULL);
	expect_refused("newfile without a size",
		       "ringlog: start: --mode newfile needs --max-file-size\n", name, "-o", pat,
		       "--mode", "newfile", NULL);
	expect_refused("preallocate without a size",
		       "ringlog: start: --mode preallocate needs --max-file-size\n", name, "-o", path,
		       "--mode", "preallocate", NULL);
	expect_refused("two file modes",
		       "ringlog: start: --mode: choose one of sequential, circular and newfile\n", name,
		       "-o", path, "--mode", "circular,newfile", "--max-file-size", "8", NULL);
	expect_refused("maximum below minimum",
		       "ringlog: start: --max-buffers 8 is below --min-buffers 16\n", name, "-o", path,
		       "--min-buffers", "16", "--max-buffers", "8", NULL);
	expect_refused("buffer size not a power of two",
		       "ringlog: start: --buffer-size '12': expected KB, a power of two from 4 to "
		       "1024\n", name, "-o", path, "--buffer-size", "12", NULL);
	expect_refused("high water out of range",
		       "ringlog: start: --high-water '0': expected a percentage of the pool, 1 to "
		       "100\n", name, "-o", path, "--high-water", "0", NULL);
	expect_refused("a flush timer over an hour",
		       "ringlog: start: --flush-timer '3601s': expected milliseconds (or a number with "
		       "ms or s) up to 3600 s\n", name, "-o", path, "--flush-timer", "3601s", NULL);
	expect_refused("an unknown mode",
		       "ringlog: start: --mode 'spiral': expected a comma-separated list of "
		       "sequential, circular, newfile, preallocate, real-time, overwrite\n", name,
		       "-o", path, "--mode", "spiral", NULL);
	expect_refused("a bad category", "ringlog: start: --enable: 'Net!' is not a category name "
		       "(1 to 27 of a-z, 0-9, '_', '.', '-') or number\n", name, "-o", path,
		       "--enable", "Net!", NULL);
	expect_refused("category 64", "ringlog: start: --enable: category 64: expected 0 to 63\n",
		       name, "-o", path, "--enable", "64", NULL);
	expect_refused("--enable and --mask", "ringlog: start: use one of --enable and --mask\n",
		       name, "-o", path, "--enable", "1", "--mask", "0x2", NULL);
	expect_refused("a size without a file mode's file",
		       "ringlog: start: --max-file-size needs a log file (-o FILE)\n", name, "--mode",
		       "real-time", "--max-file-size", "8", NULL);
	struct stat st;
	ok(stat(path, &st) < 0, "no file left by the refused starts");
	h_ringlog(&r, "query", name, NULL);
	ASSERT_EQ(r.status, 1);
}

int main(void)
{
	defaults();
	flags_and_json();
	growth();
	fixed();
	refused();
	return done_testing();
}
