/*
 * test_report - `ringlog report` on the crafted file of
 * test_convert_fixture.h, with a process whose names and event name are
 * hostile markup ("</script><script>...") and system events on two CPUs.
 *
 * Without a browser: the command's counts equal `ringlog stats --json`'s
 * and the spans `ringlog convert --to chrome` pairs; the page is 0600,
 * an existing one is refused without --force; it loads nothing from
 * outside (no src= or href= to anything, a Content-Security-Policy of
 * default-src 'none'); the hostile text appears only escaped, and the
 * page holds exactly its own two script elements.
 *
 * In headless Chromium (`chromium --dump-dom`, with --enable-logging to
 * see the console): the page runs with no error and no console message;
 * the figures it computed from its data and the ones it shows (in
 * <pre id="selftest">) equal stats --json's (events, lost events,
 * threads) and convert's spans, the CPUs' runs are the switches'; opened at #t0=1000&t1=2000 it counts
 * exactly the events of that window, counted here with the reader; the
 * hostile names did not run (the title is the session's); the
 * timeline's own wheel, drag and double-click handlers, driven by the
 * page on "selftest=ui" in the address, zoom around the pointer, pan by
 * the pixels dragged and show the whole trace, each window holding the
 * reader's events of it; the pointer over a span names it.  Then a
 * screenshot (--screenshot) into $RINGLOG_ARTIFACTS.  Without chromium
 * the browser part is skipped, except under CI=true where it fails.
 *
 * Needs the built `ringlog` binary in $RINGLOG_BIN.
 */
#include "harness.h"

#include "json.h"
#include "tap.h"
#include "test_convert_fixture.h"
#include "proc_run.h"
#include "sched_fields.h"
#include "report_browser.h"

#define HOSTILE_THREAD "</script><script>document.title='pwned-thread'</script>"
#define HOSTILE_PROCESS "<!--<script>document.title='pwned-process'//"
#define HOSTILE_EVENT "</SCRIPT ><img src=x onerror=\"document.title='pwned-event'\">&amp;"
#define HOSTILE_ID 1200

#define WIN_T0 1000
#define WIN_T1 2000

/* A sched_switch on the CPU of block b (docs/FORMAT.md, "System events"). */
static void sw(struct fg_block *b, uint64_t t, int32_t prev, int32_t next, const char *nc)
{
	struct fg_buf p = { 0 };
	sf_switch_payload(&p, 100, prev, 1 /* S: it sleeps */, "x", next, nc);
	fx_rec(b, t, SF_ID_SWITCH, -1, p.p, p.len);
	free(p.p);
}

/* The fixture; system events: on CPU 0 thread 101 runs 1100..1300, then
 * 102 to 1900, on CPU 1 thread 201 runs 1150..2500 (three runs); and a
 * process whose names are markup: its thread named, its process named,
 * one event of a schema so named at t=2300, one at t=2400. */
static void build(struct fg_file *f)
{
	struct fg_block b;
	fx_build(f);
	fg_block_begin(&b, 0, 0xffffffffu, FX_START, 0x0005);
	fg_schema(&b, (uint32_t)(FX_START + 90), SF_ID_SWITCH, RLOG_KIND_EVENT, 0, "sched_switch",
		  sf_switch, 9);
	fg_block_end(f, &b);
	fg_block_begin(&b, 0, 0, FX_START, 0x0005);
	sw(&b, 1100, 0, 101, "main");
	sw(&b, 1300, 101, 102, "worker-1");
	sw(&b, 1900, 102, 0, "swapper/0");
	fg_block_end(f, &b);
	fg_block_begin(&b, 0, 1, FX_START, 0x0005);
	sw(&b, 1150, 0, 201, "client");
	sw(&b, 2500, 201, 0, "swapper/1");
	fg_block_end(f, &b);
	fg_block_begin(&b, 300, 301, FX_START, 0);
	fx_rec(&b, 160, RLOG_ID_THREAD_NAME, -1, HOSTILE_THREAD, strlen(HOSTILE_THREAD));
	fx_rec(&b, 170, RLOG_ID_PROCESS_NAME, -1, HOSTILE_PROCESS, strlen(HOSTILE_PROCESS));
	fx_schema(&b, 180, HOSTILE_ID, RLOG_KIND_EVENT, 0, HOSTILE_EVENT, NULL, 0);
	fx_rec(&b, 2300, HOSTILE_ID, -1, NULL, 0);
	fx_rec(&b, 2400, HOSTILE_ID, -1, NULL, 0);
	fg_block_end(f, &b);
}

static size_t count_of(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

/* The application events of the file, and those in [t0, t1]. */
static void count_events(const char *path, int64_t t0, int64_t t1, uint64_t *all, uint64_t *win)
{
	struct rlog_reader *rd;
	struct rlog_event ev;
	*all = *win = 0;
	BAIL_IF(rlog_reader_open(path, &rd) < 0, "the fixture does not open");
	while (rlog_reader_next(rd, &ev) == 1) {
		if (rlog_record_kind(ev.id, ev.flagged) != RLOG_RECORD_EVENT)
			continue;
		(*all)++;
		*win += ev.time_ns >= t0 && ev.time_ns <= t1;
	}
	rlog_reader_close(rd);
}

static double num(const struct json *o, const char *key)
{
	const struct json *v = json_get(o, key);
	return v && v->type == JSON_NUM ? v->num : -1;
}

/* The reader's events in [t0, t1] (doubles: the page's window after a
 * zoom is not whole ns). */
static uint64_t events_in(const char *path, double t0, double t1)
{
	struct rlog_reader *rd;
	struct rlog_event ev;
	uint64_t n = 0;
	BAIL_IF(rlog_reader_open(path, &rd) < 0, "the fixture does not open");
	while (rlog_reader_next(rd, &ev) == 1)
		n += rlog_record_kind(ev.id, ev.flagged) == RLOG_RECORD_EVENT &&
		     (double)ev.time_ns >= t0 && (double)ev.time_ns <= t1;
	rlog_reader_close(rd);
	return n;
}

static bool near(double a, double b)
{
	return fabs(a - b) < 1e-6 * (fabs(b) + 1);
}

/* The timeline's handlers, driven by the page (uiSelftest in report.js):
 * a wheel notch up at the middle keeps the middle and makes the window
 * 0.8 as wide; a drag of 100 px to the left moves it right by 100 px of
 * time; a double-click shows the whole trace.  Each window holds the
 * reader's events of it. */
static void check_ui(const struct json *ui, const char *in)
{
	ok(ui != NULL, "the page ran the timeline's handlers");
	if (!ui)
		return;
	const struct json *w = json_get(ui, "wheel"), *d = json_get(ui, "drag"),
			  *r = json_get(ui, "reset");
	double px = num(ui, "plot_width"), width = 0.8 * (WIN_T1 - WIN_T0);
	double w0 = (WIN_T0 + WIN_T1) / 2.0 - width / 2, shift = 100 / px * width;
	ok(w && near(num(w, "t0"), w0) && near(num(w, "t1"), w0 + width),
	   "the wheel zooms in around the pointer: [%f, %f]", num(w, "t0"), num(w, "t1"));
	ok(w && num(w, "events") == (double)events_in(in, num(w, "t0"), num(w, "t1")),
	   "... and shows the %.0f events of that window", num(w, "events"));
	ok(d && near(num(d, "t0"), w0 + shift) && near(num(d, "t1"), w0 + width + shift),
	   "a drag pans: [%f, %f]", num(d, "t0"), num(d, "t1"));
	ok(d && num(d, "events") == (double)events_in(in, num(d, "t0"), num(d, "t1")),
	   "... and shows the %.0f events of that window", num(d, "events"));
	ok(r && num(r, "events") == (double)events_in(in, -1e18, 1e18),
	   "a double-click shows the whole trace, all %.0f events", num(r, "events"));
	/* The first lane with spans is main's (pid 100 comes after the CPUs'
	 * pid 0), its first span work.span from 1000 to 2000. */
	const char *tip = json_str(ui, "hover");
	ok(tip && strcmp(tip, "work.span\n1,000 ns, 1.00 \xc2\xb5s") == 0,
	   "the pointer over a span names it: %s", tip ? tip : "(nothing)");
}

static void check_browser(const char *bin, const char *html, const char *html_in,
			  const struct json *stats, uint64_t spans, uint64_t win_events)
{
	char url[256];
	snprintf(url, sizeof url, "file://%s#t0=%d&t1=%d&selftest=ui", html, WIN_T0, WIN_T1);
	struct run r = browse(bin, url, "--dump-dom", NULL);
	ok(r.status == 0, "chromium --dump-dom exits 0 (%d)", r.status);
	ok(strstr(r.err, ":CONSOLE") == NULL, "no console message");
	if (strstr(r.err, ":CONSOLE"))
		diag("stderr: %s", r.err);
	struct json *st = selftest_of(r.out);
	ok(st != NULL, "the page wrote its self-test figures");
	if (st) {
		const struct json *errs = json_get(st, "errors");
		ok(errs && errs->type == JSON_ARR && errs->n == 0, "the page ran with no error");
		double ev = num(stats, "events"), lost = num(stats, "lost_events");
		const struct json *th = json_get(stats, "threads");
		double nth = th ? (double)th->n : -2;
		ok(num(st, "events") == ev, "events decoded %.0f = stats --json %.0f",
		   num(st, "events"), ev);
		ok(num(st, "shown_events") == ev, "events shown %.0f", num(st, "shown_events"));
		ok(num(st, "lost_events") == lost, "lost events from the DATA_LOSS marks %.0f = %.0f",
		   num(st, "lost_events"), lost);
		ok(num(st, "shown_lost_events") == lost, "lost events shown %.0f",
		   num(st, "shown_lost_events"));
		ok(num(st, "lanes") == nth, "lanes %.0f = threads of stats --json %.0f",
		   num(st, "lanes"), nth);
		ok(num(st, "shown_threads") == nth, "threads shown %.0f", num(st, "shown_threads"));
		ok(num(st, "spans") == (double)spans, "spans drawn %.0f = convert's %" PRIu64,
		   num(st, "spans"), spans);
		ok(num(st, "open_spans") == 1, "one span never ended");
		ok(num(st, "cpu_runs") == 3, "three runs on the CPUs' lanes (%.0f)",
		   num(st, "cpu_runs"));
		const struct json *w = json_get(st, "opened");
		ok(w && num(w, "t0") == WIN_T0 && num(w, "t1") == WIN_T1,
		   "the window of the address is the one shown");
		ok(w && num(w, "events") == (double)win_events,
		   "events in [%d, %d]: the page %.0f, the reader %" PRIu64, WIN_T0, WIN_T1,
		   w ? num(w, "events") : -1, win_events);
		check_ui(json_get(st, "ui"), html_in);
		json_free(st);
	} else {
		diag("stdout: %.2000s", r.out);
		diag("stderr: %.2000s", r.err);
	}
	char want[160];
	snprintf(want, sizeof want, "emitted = written + lost: %.0f = %.0f + %.0f",
		 num(stats, "events") + num(stats, "lost_events"), num(stats, "events"),
		 num(stats, "lost_events"));
	ok(strstr(r.out, want) != NULL, "the page shows the identity: %s", want);
	ok(strstr(r.out, "<title>ringlog report: demo</title>") != NULL,
	   "the hostile names ran nothing: the title is the session's");
	run_free(&r);

	/* The screenshot, where CI keeps its artifacts. */
	const char *dir = getenv("RINGLOG_ARTIFACTS");
	char png[512], flag[600];
	if (!dir || !*dir)
		dir = "/tmp";
	mkdir(dir, 0755);
	snprintf(png, sizeof png, "%s/report.png", dir);
	snprintf(flag, sizeof flag, "--screenshot=%s", png);
	unlink(png);
	r = browse(bin, url, flag, "--window-size=1280,900");
	size_t n = 0;
	char *img = slurp(png, &n);
	ok(r.status == 0 && img && n > 8 && memcmp(img, "\x89PNG\r\n\x1a\n", 8) == 0,
	   "a screenshot: %s (%zu bytes)", png, n);
	free(img);
	run_free(&r);
}

int main(void)
{
	char in[64], out[96], cj[64], dir[] = "/tmp/rlog_rpt_XXXXXX";
	struct fg_file f;
	struct h_run r;
	size_t len;

	build(&f);
	fg_tmpname(in, "rpt");
	/* A name in .html: a browser shows any other as text. */
	BAIL_IF(!mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(out, sizeof out, "%s/report.html", dir);
	close(open(out, O_CREAT | O_WRONLY, 0600));
	fg_tmpname(cj, "rptc");
	BAIL_IF(fg_write(&f, in) < 0, "cannot write %s", in);
	uint64_t all, win;
	count_events(in, WIN_T0, WIN_T1, &all, &win);

	/* What the page must agree with. */
	h_ringlog(&r, "stats", in, "--json", NULL);
	ASSERT_EQ(r.status, 0);
	char err[128];
	struct json *stats = json_parse(r.out, strlen(r.out), err, sizeof err);
	BAIL_IF(!stats, "stats --json does not parse: %s", err);
	ASSERT_EQ_U64((uint64_t)num(stats, "events"), all);
	h_ringlog(&r, "convert", in, "--to", "chrome", "-o", cj, "--force", NULL);
	ASSERT_EQ(r.status, 0);
	uint64_t spans = h_kv(r.out, "spans") + h_kv(r.out, "unmatched_begins");
	ASSERT_EQ_U64(spans, 5);

	/* The output rules: an existing file refused, --force, 0600. */
	h_ringlog(&r, "report", in, "-o", out, NULL);
	ASSERT_EQ(r.status, 1);
	char want[256];
	snprintf(want, sizeof want, "ringlog: report: %s: file exists (use --force to overwrite)\n",
		 out);
	ASSERT_STREQ(r.err, want);
	unlink(out);
	h_ringlog(&r, "report", in, "-o", out, NULL);
	ASSERT_EQ(r.status, 0);
	if (r.status)
		diag("stderr: %s", r.err);
	struct stat sb;
	memset(&sb, 0, sizeof sb);
	stat(out, &sb);
	ok((sb.st_mode & 07777) == 0600, "the page is 0600 (%o)", (unsigned)(sb.st_mode & 07777));
	ASSERT_EQ_U64(h_kv(r.out, "events"), all);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), (uint64_t)num(stats, "lost_events"));
	ASSERT_EQ_U64(h_kv(r.out, "loss_records"), (uint64_t)num(stats, "loss_records"));
	ASSERT_EQ_U64(h_kv(r.out, "lanes"), json_get(stats, "threads")->n);
	ASSERT_EQ_U64(h_kv(r.out, "spans"), spans);
	ASSERT_EQ_U64(h_kv(r.out, "open_spans"), 1);
	ASSERT_EQ_U64(h_kv(r.out, "unmatched_ends"), 1);
	ASSERT_EQ_U64(h_kv(r.out, "cpu_runs"), 3);
	h_ringlog(&r, "report", in, "-o", out, "--force", NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "report", in, "-o", in, "--force", NULL);
	ASSERT_EQ(r.status, 1);
	ok(strstr(r.err, "the output is the input file") != NULL, "the input is not overwritten");

	/* Self-contained, and the hostile text escaped. */
	char *html = slurp(out, &len);
	BAIL_IF(!html, "no page %s", out);
	ok(strstr(html, "content=\"default-src 'none';") != NULL,
	   "a Content-Security-Policy forbids any load");
	ASSERT_EQ(count_of(html, "<script"), 2);
	ASSERT_EQ(count_of(html, "</script>"), 2);
	ok(strstr(html, " src=\"") == NULL && strstr(html, "href=") == NULL &&
	   strstr(html, "url(") == NULL && strstr(html, "@import") == NULL,
	   "nothing is loaded from outside the page");
	ok(strstr(html, "</SCRIPT") == NULL && strstr(html, "<img") == NULL &&
	   strstr(html, "<!--<") == NULL, "the hostile names appear only escaped");
	ok(strstr(html, "\\u003c/script\\u003e\\u003cscript\\u003edocument.title='pwned-thread'") !=
	   NULL, "the thread's name is in the data, escaped");
	free(html);

	const char *bin = chromium_or_skip("the browser part");
	if (bin)
		check_browser(bin, out, in, stats, spans, win);

	json_free(stats);
	unlink(in);
	unlink(out);
	rmdir(dir);
	unlink(cj);
	fg_file_free(&f);
	return done_testing();
}
