/*
 * test_spans_hostile - `ringlog report`, `convert --to chrome|perfetto`
 * and `stats` (with --sched) on crafted files that once made them
 * misbehave:
 *
 *   - times at both ends of the reader's range (a 1 Hz clock 2^40 ticks
 *     from its origin: -(2^63 - 1) and 2^63 - 1 ns): a span across them, a
 *     lane's ticks from one to the other, a CPU switching at both; every
 *     difference of two times saturates instead of overflowing (undefined
 *     behaviour, which the ASan+UBSan build turns into an abort): exit 0,
 *     the exact counts, the span's duration 2^63 - 1 ns in Chrome's "dur"
 *     and the session's duration in stats --json;
 *   - 200,000 begins of a span then 200,000 ends of another on one thread:
 *     with at most RLOG__SPANS_OPEN (256) open spans per thread
 *     (src/convert/convert.h) each end is a bounded scan, so each command
 *     takes at most 8 times (and 2 s) its time on a file of 200,000 paired
 *     spans (without the cap, every end scanned all the begins: a minute),
 *     with exact counts: 200,000 begins never ended, 200,000 ends without
 *     a begin;
 *   - 300 nested begins of one span then its 300 ends: the 256 innermost
 *     paired, the 44 outermost begins never ended and their ends without
 *     a begin, alike in the three outputs.
 *
 * Needs the built `ringlog` binary in $RINGLOG_BIN.
 */
#include "harness.h"

#include <time.h>

#include "filegen.h"
#include "json.h"
#include "sched_fields.h"
#include "tap.h"

#define S 1000000ull
#define ID_A 1100
#define ID_B 1101
#define N_HANG 200000u
#define N_DEEP 300u
#define CAP 256u /* RLOG__SPANS_OPEN */

static const struct fg_field no_fields[1];

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One span record on the block; its time is ticks. */
static void span_rec(struct fg_block *b, uint64_t ticks, unsigned id, int flag)
{
	fg_event(b, id, flag, true, (uint32_t)ticks, NULL, 0);
}

/* A thread's records in blocks of 1000: nb begins of ID_A from tick S,
 * then ne ends of end_id; or (nb == 0) ne spans of ID_A, each begun and
 * ended, the same work but for the pairing. */
static void build_spans(const char *path, unsigned nb, unsigned ne, unsigned end_id)
{
	bool pairs = nb == 0;
	if (pairs)
		nb = ne;
	struct fg_file f;
	struct fg_block b;
	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, 1000000000u, S, 0, RLOG_TICK_TSC, 16384, 8, "spans");
	fg_block_begin(&b, 100, 101, S, 0);
	fg_schema(&b, (uint32_t)S, ID_A, RLOG_KIND_SPAN, 0, "a.span", no_fields, 0);
	fg_schema(&b, (uint32_t)S, ID_B, RLOG_KIND_SPAN, 0, "b.span", no_fields, 0);
	for (unsigned i = 0; i < nb + ne; i++) {
		uint64_t t = S + 1 + i;
		if (i % 1000 == 0) {
			fg_block_end(&f, &b);
			fg_block_begin(&b, 100, 101, t, 0);
		}
		if (pairs)
			span_rec(&b, t, ID_A, i % 2 ? RLOG_SPAN_END : RLOG_SPAN_BEGIN);
		else if (i < nb)
			span_rec(&b, t, ID_A, RLOG_SPAN_BEGIN);
		else
			span_rec(&b, t, end_id, RLOG_SPAN_END);
	}
	fg_block_end(&f, &b);
	BAIL_IF(fg_write(&f, path) < 0, "cannot write %s", path);
	fg_file_free(&f);
}

struct counts {
	uint64_t spans, begins, ends; /* paired, begins never ended, ends without begin */
};

/* Command k (report, convert --to chrome, --to perfetto) on path; its
 * time in seconds. */
static double run_cmd(struct h_run *r, int k, const char *path, const char *out, const char *html)
{
	double t0 = now_s();
	if (k == 0)
		h_ringlog(r, "report", path, "-o", html, "--force", NULL);
	else
		h_ringlog(r, "convert", path, "--to", k == 1 ? "chrome" : "perfetto", "-o", out,
			  "--force", NULL);
	return now_s() - t0;
}

/* Each command on path, with the counts want; with base (a file of as
 * many spans, all paired), in at most 8 times the command's time on base
 * and 2 s: a load on the machine or a sanitizer slows both alike. */
static void check_spans(const char *path, const char *base, const char *what, uint64_t events,
			struct counts want)
{
	static const char *const cmd[] = { "report", "convert --to chrome",
					   "convert --to perfetto" };
	char out[64], html[64];
	struct h_run r;
	fg_tmpname(out, "shc");
	fg_tmpname(html, "shr");
	unlink(html);
	strcat(html, ".html"); /* a page's name */

	for (int k = 0; k < 3; k++) {
		double tb = base ? run_cmd(&r, k, base, out, html) : 0;
		double dt = run_cmd(&r, k, path, out, html);
		ok(r.status == 0, "%s: %s exits 0 (%d)", what, cmd[k], r.status);
		if (r.status)
			diag("%s", r.err);
		if (base)
			ok(dt <= 8 * tb + 2, "%s: %s in %.2f s, all paired %.2f s", what, cmd[k], dt,
			   tb);
		if (k == 0)
			ok(h_kv(r.out, "events") == events &&
			   h_kv(r.out, "spans") == want.spans + want.begins &&
			   h_kv(r.out, "open_spans") == want.begins &&
			   h_kv(r.out, "unmatched_ends") == want.ends,
			   "%s: report: events %" PRIu64 ", spans %" PRIu64 ", open_spans %" PRIu64
			   ", unmatched_ends %" PRIu64, what, h_kv(r.out, "events"),
			   h_kv(r.out, "spans"), h_kv(r.out, "open_spans"),
			   h_kv(r.out, "unmatched_ends"));
		else
			ok(h_kv(r.out, "spans") == want.spans &&
			   h_kv(r.out, "unmatched_begins") == want.begins &&
			   h_kv(r.out, "unmatched_ends") == want.ends,
			   "%s: %s: spans %" PRIu64 ", unmatched_begins %" PRIu64
			   ", unmatched_ends %" PRIu64, what, cmd[k], h_kv(r.out, "spans"),
			   h_kv(r.out, "unmatched_begins"), h_kv(r.out, "unmatched_ends"));
	}
	unlink(out);
	unlink(html);
}

/* The far file: a 1 Hz clock whose origin is 2^40 ticks; thread 101's
 * span begins at tick 0 (-(2^63 - 1) ns) and ends at 2^41 (2^63 - 1 ns);
 * CPU 0 switches to thread 101 at tick 0 and back at 2^41. */
static void build_far(const char *path)
{
	const uint64_t far = UINT64_C(1) << 40, late = UINT64_C(1) << 41;
	struct fg_file f;
	struct fg_block b;
	struct fg_buf p = { 0 };
	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, 1, far, 0, RLOG_TICK_TSC, 16384, 8, "far");
	fg_block_begin(&b, 0, 0xffffffffu, 0, 0x0005);
	fg_schema(&b, 0, SF_ID_SWITCH, RLOG_KIND_EVENT, 0, "sched_switch", sf_switch, 9);
	fg_block_end(&f, &b);
	fg_block_begin(&b, 100, 101, 0, 0);
	fg_schema(&b, 0, ID_A, RLOG_KIND_SPAN, 0, "a.span", no_fields, 0);
	span_rec(&b, 0, ID_A, RLOG_SPAN_BEGIN);
	fg_block_end(&f, &b);
	fg_block_begin(&b, 100, 101, late, 0);
	span_rec(&b, late, ID_A, RLOG_SPAN_END);
	fg_block_end(&f, &b);
	fg_block_begin(&b, 0, 0, 0, 0x0005);
	sf_switch_payload(&p, 100, 0, 0, "swapper/0", 101, "main");
	fg_event(&b, SF_ID_SWITCH, -1, true, 0, p.p, (unsigned)p.len);
	p.len = 0;
	fg_block_end(&f, &b);
	fg_block_begin(&b, 0, 0, late, 0x0005);
	sf_switch_payload(&p, 100, 101, 1, "main", 0, "swapper/0");
	fg_event(&b, SF_ID_SWITCH, -1, true, (uint32_t)late, p.p, (unsigned)p.len);
	fg_block_end(&f, &b);
	free(p.p);
	BAIL_IF(fg_write(&f, path) < 0, "cannot write %s", path);
	fg_file_free(&f);
}

/* r exited 0 (a UBSan report would have aborted it), else its stderr. */
static void ran(const struct h_run *r, const char *what)
{
	ok(r->status == 0, "%s exits 0 (%d)", what, r->status);
	if (r->status)
		diag("%s", r->err);
}

static void test_far(void)
{
	char in[64], out[64], html[64];
	struct h_run r;
	size_t n = 0;
	fg_tmpname(in, "shf");
	fg_tmpname(out, "shfo");
	fg_tmpname(html, "shfr");
	unlink(html);
	strcat(html, ".html");
	build_far(in);

	h_ringlog(&r, "report", in, "-o", html, "--force", NULL);
	ran(&r, "far: report");
	ASSERT_EQ_U64(h_kv(r.out, "events"), 4);
	ASSERT_EQ_U64(h_kv(r.out, "spans"), 1);
	ASSERT_EQ_U64(h_kv(r.out, "open_spans"), 0);
	ASSERT_EQ_U64(h_kv(r.out, "cpu_runs"), 1);
	/* The page's times are clamped at 2^53 ns (report.c): exact doubles. */
	char *page = slurp(html, &n);
	ok(page && strstr(page, "\"tmin\":-9007199254740992,\"tmax\":9007199254740992"),
	   "the page's time range is [-2^53, 2^53]");
	free(page);

	h_ringlog(&r, "convert", in, "--to", "chrome", "-o", out, "--force", NULL);
	ran(&r, "far: convert --to chrome");
	ASSERT_EQ_U64(h_kv(r.out, "spans"), 1);
	char *json = slurp(out, &n);
	ok(json && strstr(json, "\"ph\":\"X\",\"ts\":-9223372036854775.807,\"pid\":100,"
				"\"tid\":101,\"dur\":9223372036854775.807,"),
	   "chrome: the span's dur saturates at 2^63 - 1 ns");
	free(json);

	h_ringlog(&r, "convert", in, "--to", "perfetto", "-o", out, "--force", NULL);
	ran(&r, "far: convert --to perfetto");
	ASSERT_EQ_U64(h_kv(r.out, "spans"), 1);

	h_ringlog(&r, "stats", in, "--json", NULL);
	ran(&r, "far: stats --json");
	ok(strstr(r.out, "\"duration_ns\":9223372036854775807") != NULL,
	   "stats: the session's duration saturates at 2^63 - 1 ns");
	h_ringlog(&r, "stats", in, "--sched", "--json", NULL);
	ran(&r, "far: stats --sched --json");
	ok(strstr(r.out, "\"on_cpu_ns\":9223372036854775807") != NULL,
	   "stats --sched: thread 101's time on the CPU saturates at 2^63 - 1 ns");
	h_ringlog(&r, "stats", in, "--sched", NULL);
	ran(&r, "far: stats --sched");
	unlink(in);
	unlink(out);
	unlink(html);
}

int main(void)
{
	char in[64], base[64];
	fg_tmpname(in, "shs");
	fg_tmpname(base, "shb");

	test_far();

	/* 200,000 begins, 200,000 ends of another span: none pairs. */
	build_spans(in, N_HANG, N_HANG, ID_B);
	build_spans(base, 0, N_HANG, ID_A);
	check_spans(in, base, "unmatched", 2 * N_HANG, (struct counts){ 0, N_HANG, N_HANG });

	/* 300 nested, ended: the innermost 256 pair. */
	build_spans(in, N_DEEP, N_DEEP, ID_A);
	check_spans(in, NULL, "deep", 2 * N_DEEP,
		    (struct counts){ CAP, N_DEEP - CAP, N_DEEP - CAP });
	unlink(in);
	unlink(base);
	return done_testing();
}
