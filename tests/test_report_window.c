/*
 * test_report_window - `ringlog report FILE --since T --until T`: a
 * window of the file, with dump's times and meaning ([since, until),
 * docs/DUMP.md "Filters"; docs/CONVERT.md "The HTML report").
 *
 * A crafted file (tests/filegen.h) of numbered events {thread, sequence}
 * on two threads every 100 ns, a span that begins before the window and
 * ends in it and two outside it, and DATA_LOSS records before, in and
 * after the window, two of them with a time range (OVERWRITTEN) that
 * meets the window although the record does not lie in it, or the other
 * way round, and a counter (a counter-kind event's field) sampled before,
 * in and after the window.  With --since 5000 --until 12000 (an event at
 * each bound):
 *   - report's counts are the window's: its events equal `ringlog dump
 *     --since 5000 --until 12000`'s application events (142), the losses
 *     those whose range meets it (3 records, 31 events), one span, five
 *     threads, the counter's two points (its value before the window,
 *     from the window's start, and the one in it); the same with the
 *     bounds as RFC 3339 wall-clock times;
 *   - in headless Chromium the page opens on [5000, 12000], holds every
 *     numbered event of the window once and no other (each thread's
 *     sequence, at its time), shows the window's counts in its cards and
 *     the whole file's identity (stats --json's), with no console message;
 *   - a bad time is one line, exit 1.
 */
#include "harness.h"

#include "filegen.h"
#include "json.h"
#include "proc_run.h"
#include "tap.h"
#include "report_browser.h"

#define R 1795341600000000000ull /* 2026-11-22T10:00:00Z: the session's start */
#define S0 1000000u              /* its sync_ticks (1 GHz: a tick is a ns) */
#define NEV 200                  /* numbered events per thread */
#define SPAN_ID 1100
#define CTR_ID 1101
#define SINCE 5000
#define UNTIL 12000

/* Numbered event k of thread th (0, 1): its time, ns from the start. */
static int64_t t_of(unsigned th, unsigned k)
{
	return 1000 + 100 * (int64_t)k + 50 * th;
}

static void loss(struct fg_block *b, int64_t t, uint64_t events, bool range, int64_t last)
{
	if (!range) {
		fg_data_loss(b, (uint32_t)(S0 + t), events, events * 16, RLOG_LOSS_NO_BUFFER);
		return;
	}
	struct fg_buf p = { 0 };
	fg_u64(&p, events);
	fg_u64(&p, events * 16);
	fg_u32(&p, RLOG_LOSS_OVERWRITTEN);
	fg_u32(&p, 0);
	fg_u64(&p, 1);                     /* blocks */
	fg_u64(&p, S0 + (uint64_t)t);      /* first_time: the record's */
	fg_u64(&p, S0 + (uint64_t)last);   /* last_time */
	fg_event(b, RLOG_ID_DATA_LOSS, -1, true, (uint32_t)(S0 + t), p.p, (unsigned)p.len);
	free(p.p);
}

static void build(const char *path)
{
	struct fg_file f;
	struct fg_block b;
	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, 1000000000u, S0, R, RLOG_TICK_TSC, 16384, 8, "win");
	for (unsigned th = 0; th < 2; th++) {
		fg_block_begin(&b, 100, 101 + th, S0, 0);
		for (unsigned k = 0; k < NEV; k++) {
			uint32_t p[2] = { th, k };
			fg_event(&b, RLOG_ID_RAW_U32, -1, true, (uint32_t)(S0 + t_of(th, k)), p, 8);
		}
		fg_block_end(&f, &b);
	}
	/* Losses, by record time and range: 3000 (out), 4000..5500 (meets),
	 * 6000 (in), 11999..20000 (in), 12000 (out: the window's end). */
	fg_block_begin(&b, 100, 103, S0, RLOG_BLOCK_FLAG_DAEMON);
	loss(&b, 3000, 5, false, 0);
	loss(&b, 4000, 11, true, 5500);
	loss(&b, 6000, 7, false, 0);
	loss(&b, 11999, 13, true, 20000);
	loss(&b, 12000, 17, false, 0);
	fg_block_end(&f, &b);
	/* Spans: 2000..3000 (out), 4500..5500 (meets), 20000..21000 (out). */
	fg_block_begin(&b, 100, 104, S0, 0);
	fg_schema(&b, S0 + 100, SPAN_ID, RLOG_KIND_SPAN, 0, "work", NULL, 0);
	static const int64_t span[3][2] = { { 2000, 3000 }, { 4500, 5500 }, { 20000, 21000 } };
	for (unsigned i = 0; i < 3; i++) {
		fg_event(&b, SPAN_ID, RLOG_SPAN_BEGIN, true, (uint32_t)(S0 + span[i][0]), NULL, 0);
		fg_event(&b, SPAN_ID, RLOG_SPAN_END, true, (uint32_t)(S0 + span[i][1]), NULL, 0);
	}
	fg_block_end(&f, &b);
	/* A counter: 5 at 3000, 9 at 7000, 11 at 13000. */
	fg_block_begin(&b, 100, 105, S0, 0);
	static const struct fg_field n = { RLOG_FIELD_U64, 0, "n" };
	fg_schema(&b, S0 + 100, CTR_ID, RLOG_KIND_COUNTER, 0, "depth", &n, 1);
	static const int64_t ct[3] = { 3000, 7000, 13000 };
	static const uint64_t cv[3] = { 5, 9, 11 };
	for (unsigned i = 0; i < 3; i++)
		fg_event(&b, CTR_ID, -1, true, (uint32_t)(S0 + ct[i]), &cv[i], 8);
	fg_block_end(&f, &b);
	BAIL_IF(fg_write(&f, path) < 0, "cannot write %s", path);
	fg_file_free(&f);
}

/* The application events `dump --since --until` prints (JSON Lines; the
 * LOG_MARKER and DATA_LOSS records are not events). */
static uint64_t dump_events(const char *in, const char *since, const char *until)
{
	struct run r = RUN("dump", in, "--since", since, "--until", until, "--format", "json");
	uint64_t n = 0;
	for (const char *p = r.out; *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char line[1024];
		snprintf(line, sizeof line, "%.*s", (int)len, p);
		n += strstr(line, "\"type\":\"log_marker\"") == NULL &&
		     strstr(line, "\"type\":\"data_loss\"") == NULL;
		p += len + (e ? 1 : 0);
	}
	BAIL_IF(r.status != 0, "dump --since --until: %d %s", r.status, r.err);
	run_free(&r);
	return n;
}

static double num(const struct json *o, const char *key)
{
	const struct json *v = json_get(o, key);
	return v && v->type == JSON_NUM ? v->num : -1;
}

/* Every numbered event of the window once, and nothing else but the
 * span's end at 5500 and the counter's event at 7000: ticks are [host,
 * pid, tid, time, name]. */
static void check_ticks(const struct json *ticks)
{
	bool seen[2][NEV] = { { false } };
	unsigned bad = 0, ends = 0, n = 0;
	for (size_t i = 0; ticks && i < ticks->n; i++) {
		const struct json *t = ticks->items[i];
		if (t->type != JSON_ARR || t->n != 5) {
			bad++;
			continue;
		}
		double tid = t->items[2]->num, ts = t->items[3]->num;
		const char *name = t->items[4]->type == JSON_STR ? t->items[4]->s : "";
		if ((tid == 104 && ts == 5500 && strcmp(name, "work") == 0) ||
		    (tid == 105 && ts == 7000 && strcmp(name, "depth") == 0)) {
			ends++;
			continue;
		}
		unsigned th = (unsigned)tid - 101, k = 0;
		while (th < 2 && k < NEV && (double)t_of(th, k) != ts)
			k++;
		if (th >= 2 || k == NEV || seen[th][k] || ts < SINCE || ts >= UNTIL ||
		    strcmp(name, "RAW_U32") != 0 || t->items[1]->num != 100) {
			if (bad++ == 0)
				diag("unexpected tick: tid %.0f t %.0f %s", tid, ts, name);
			continue;
		}
		seen[th][k] = true;
		n++;
	}
	unsigned want = 0;
	for (unsigned th = 0; th < 2; th++)
		for (unsigned k = 0; k < NEV; k++)
			want += t_of(th, k) >= SINCE && t_of(th, k) < UNTIL;
	ok(ticks && bad == 0 && n == want && ends == 2,
	   "the page holds the window's %u numbered events once each at their times, the span's "
	   "end and the counter's event, nothing else (%u, %u bad)", want, n, bad);
}

static void check_browser(const char *bin, const char *html, uint64_t events,
			  const struct json *stats)
{
	struct run r;
	struct json *st = page_selftest(bin, html, "selftest=ticks", &r);
	const struct json *w = st ? json_get(st, "opened") : NULL;
	ok(w && num(w, "t0") == SINCE && num(w, "t1") == UNTIL,
	   "the timeline opens on the window [%d, %d]", SINCE, UNTIL);
	ok(w && num(w, "events") == (double)events, "... showing its %" PRIu64 " events (%.0f)",
	   events, w ? num(w, "events") : -1);
	ok(st && num(st, "events") == (double)events && num(st, "shown_events") == (double)events,
	   "events decoded %.0f and in the card \"events in the window\" %.0f = dump's %" PRIu64,
	   num(st, "events"), num(st, "shown_events"), events);
	ok(st && num(st, "lost_events") == 31 && num(st, "shown_lost_events") == 31 &&
	   num(st, "loss_records") == 3, "lost events meeting the window: 31 in 3 records, shown");
	ok(st && num(st, "spans") == 1 && num(st, "shown_threads") == 5 && num(st, "counters") == 1,
	   "one span, five threads, one counter in the window");
	check_ticks(st ? json_get(st, "ticks") : NULL);
	char want[200];
	snprintf(want, sizeof want, "the whole file: emitted = written + lost: %.0f = %.0f + %.0f",
		 num(stats, "events") + num(stats, "lost_events"), num(stats, "events"),
		 num(stats, "lost_events"));
	ok(strstr(r.out, want) != NULL, "the page shows the whole file's identity: %s", want);
	json_free(st);
	run_free(&r);
}

/* A span begun before the window and never ended covers the window: the
 * report of the window holds it (as open); one begun after the window's
 * end does not. */
static void open_span_case(const char *dir)
{
	char in[600], out[600];
	snprintf(in, sizeof in, "%s/open.rlog", dir);
	snprintf(out, sizeof out, "%s/open.html", dir);
	struct fg_file f;
	struct fg_block b;
	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, 1000000000u, S0, R, RLOG_TICK_TSC, 16384, 8, "open");
	fg_block_begin(&b, 100, 104, S0, 0);
	fg_schema(&b, S0 + 100, SPAN_ID, RLOG_KIND_SPAN, 0, "work", NULL, 0);
	fg_event(&b, SPAN_ID, RLOG_SPAN_BEGIN, true, (uint32_t)(S0 + 2000), NULL, 0);
	uint32_t v[2] = { 0, 1 };
	fg_event(&b, RLOG_ID_RAW_U32, -1, true, (uint32_t)(S0 + 6000), v, 8);
	fg_block_end(&f, &b);
	fg_block_begin(&b, 100, 105, S0, 0);
	fg_schema(&b, S0 + 100, SPAN_ID, RLOG_KIND_SPAN, 0, "work", NULL, 0);
	fg_event(&b, SPAN_ID, RLOG_SPAN_BEGIN, true, (uint32_t)(S0 + 9000), NULL, 0);
	fg_block_end(&f, &b);
	BAIL_IF(fg_write(&f, in) < 0, "cannot write %s", in);
	fg_file_free(&f);
	struct run r = RUN("report", in, "-o", out, "--since", "5000", "--until", "8000");
	ok(r.status == 0, "report of the window: exit 0 (%d %s)", r.status, r.err);
	ASSERT_EQ_U64(h_kv(r.out, "events"), 1);
	ASSERT_EQ_U64(h_kv(r.out, "open_spans"), 1);
	run_free(&r);
	unlink(out);
	unlink(in);
}

int main(void)
{
	char dir[] = "/tmp/rlog_rptw_XXXXXX", in[600], out[600], since[16], until[16];
	BAIL_IF(!mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(in, sizeof in, "%s/win.rlog", dir);
	snprintf(out, sizeof out, "%s/win.html", dir);
	snprintf(since, sizeof since, "%d", SINCE);
	snprintf(until, sizeof until, "%d", UNTIL);
	build(in);

	uint64_t events = dump_events(in, since, until);
	ASSERT_EQ_U64(events, 142); /* 70 + 70 numbered, the span's end at 5500, the counter's */
	struct run r = RUN("stats", in, "--json");
	char err[128];
	struct json *stats = json_parse(r.out, strlen(r.out), err, sizeof err);
	BAIL_IF(!stats, "stats --json does not parse: %s", err);
	ASSERT_EQ_U64((uint64_t)num(stats, "lost_events"), 53);
	run_free(&r);

	r = RUN("report", in, "-o", out, "--since", since, "--until", until);
	ok(r.status == 0 && r.err[0] == '\0', "report --since --until: exit 0 (%d %s)", r.status,
	   r.err);
	ASSERT_EQ_U64(h_kv(r.out, "events"), events);
	ASSERT_EQ_U64(h_kv(r.out, "loss_records"), 3);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), 31);
	ASSERT_EQ_U64(h_kv(r.out, "spans"), 1);
	ASSERT_EQ_U64(h_kv(r.out, "lanes"), 5);
	ASSERT_EQ_U64(h_kv(r.out, "counter_points"), 2);
	run_free(&r);
	char html_wall[600];
	snprintf(html_wall, sizeof html_wall, "%s/wall.html", dir);
	r = RUN("report", in, "-o", html_wall, "--since", "2026-11-22T10:00:00.000005Z", "--until",
		"2026-11-22T11:00:00.000012+01:00");
	ok(r.status == 0 && h_kv(r.out, "events") == events && h_kv(r.out, "events_lost") == 31,
	   "the same window as wall-clock times: %" PRIu64 " events, 31 lost (%d %s)",
	   h_kv(r.out, "events"), r.status, r.err);
	run_free(&r);
	unlink(html_wall);

	r = RUN("report", in, "-o", html_wall, "--until", "12parsecs");
	ok(r.status == 1 && strcmp(r.err, "ringlog: report: --until '12parsecs': expected a time: "
	   "1.5s, 250ms, 10us, 123ns, or 2026-11-22T07:01:31.5Z\n") == 0 &&
	   access(html_wall, F_OK) != 0, "a bad time: one line, exit 1, no page (%d %s)", r.status,
	   r.err);
	run_free(&r);

	const char *bin = chromium_or_skip("the browser part");
	if (bin)
		check_browser(bin, out, events, stats);

	json_free(stats);
	unlink(out);
	unlink(in);
	open_span_case(dir);
	rmdir(dir);
	return done_testing();
}
