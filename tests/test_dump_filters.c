/*
 * test_dump_filters - `ringlog dump` filters on a crafted file, each alone
 * and combined, the exact lines kept: --id (lists and repeats), --name
 * (schema names, patterns, reserved names, the number of an ID without a
 * schema), --pid, --tid, --since and --until with every unit, negative
 * times, the half-open window, RFC 3339 times in UTC and with an offset;
 * filters with --format json; bad values rejected with one line, exit 2.
 */
#include "filegen.h"
#include "proc_run.h"
#include "tap.h"

#define S 1000000ull
#define R 1795341600123456789ull /* 2026-11-22T10:00:00.123456789Z */

/*
 * The events, by letter:
 *   M      0  1/1        LOG_MARKER
 *   A    -30  4242/4244  1025, before its schema: raw
 *   B   1000  4242/4243  http.request (1025)
 *   C   1500  4242/4244  db.query (1027)
 *   D   2000  4242/4243  1026, no schema
 *   E   2500  5000/5001  1025, no schema in process 5000
 *   F    1ms  4242/4244  http.request
 *   G   1.5s  5000/5001  1027, no schema
 *   H   1.5s+1ns 4242/4243 DATA_LOSS
 * and the two EVENT_SCHEMA records (t 1 and 2), shown only with --all.
 */
static const char *line_of(char c)
{
	switch (c) {
	case 'M': return "             0       1       1 LOG_MARKER   tick_hz=1000000000 source=tsc "
			 "realtime=2026-11-22T10:00:00.123456789Z session=filters buffers=8x16384\n";
	case 'A': return "           -30    4242    4244 1025         00000000\n";
	case 'B': return "          1000    4242    4243 http.request v=1\n";
	case 'C': return "          1500    4242    4244 db.query     v=2\n";
	case 'D': return "          2000    4242    4243 1026         03000000\n";
	case 'E': return "          2500    5000    5001 1025         04000000\n";
	case 'F': return "       1000000    4242    4244 http.request v=5\n";
	case 'G': return "    1500000000    5000    5001 1027         06000000\n";
	case 'H': return "    1500000001    4242    4243 DATA_LOSS    events=1 bytes=16 cause=nested\n";
	default: return "?\n";
	}
}

static void build(struct fg_file *f)
{
	static const struct fg_field v[] = { { RLOG_FIELD_U32, 0, "v" } };
	struct fg_block b;
	uint32_t x;

	fg_file_init(f);
	fg_marker_block(f, 1, 1, 1000000000u, S, R, RLOG_TICK_TSC, 16384, 8, "filters");
	fg_block_begin(&b, 4242, 4244, S - 30, 0);
	x = 0;
	fg_event(&b, 1025, -1, true, (uint32_t)(S - 30), &x, 4);
	x = 2;
	fg_event(&b, 1027, -1, true, (uint32_t)(S + 1500), &x, 4);
	x = 5;
	fg_event(&b, 1025, -1, true, (uint32_t)(S + 1000000), &x, 4);
	fg_block_end(f, &b);
	fg_block_begin(&b, 4242, 4243, S, 0);
	fg_schema(&b, S + 1, 1025, RLOG_KIND_EVENT, 0, "http.request", v, 1);
	fg_schema(&b, S + 2, 1027, RLOG_KIND_EVENT, 0, "db.query", v, 1);
	x = 1;
	fg_event(&b, 1025, -1, true, (uint32_t)(S + 1000), &x, 4);
	x = 3;
	fg_event(&b, 1026, -1, true, (uint32_t)(S + 2000), &x, 4);
	fg_block_end(f, &b);
	fg_block_begin(&b, 5000, 5001, S, 0);
	x = 4;
	fg_event(&b, 1025, -1, true, (uint32_t)(S + 2500), &x, 4);
	x = 6;
	fg_event(&b, 1027, -1, true, (uint32_t)(S + 1500000000u), &x, 4);
	fg_block_end(f, &b);
	fg_block_begin(&b, 4242, 4243, S + 2000, 0x0001);
	fg_data_loss(&b, (uint32_t)(S + 1500000001u), 1, 16, RLOG_LOSS_NESTED);
	fg_block_end(f, &b);
}

struct filter_case {
	const char *args[10];
	const char *want; /* letters, in output order */
};

static const struct filter_case cases[] = {
	{ { NULL }, "AMBCDEFGH" },
	{ { "--id", "1025" }, "ABEF" },
	{ { "--id", "1025,1027" }, "ABCEFG" },
	{ { "--id", "1025", "--id", "1027" }, "ABCEFG" },
	{ { "--id=2" }, "H" },
	{ { "--name", "http.request" }, "BF" },
	{ { "--name", "db.*" }, "C" },
	{ { "--name", "1025" }, "AE" },
	{ { "--name", "DATA_LOSS" }, "H" },
	{ { "--name", "LOG_MARKER" }, "M" },
	{ { "--name", "http.request", "--name", "1027" }, "BFG" },
	{ { "--name", "nothing" }, "" },
	{ { "--pid", "5000" }, "EG" },
	{ { "--pid", "4242,5000" }, "ABCDEFGH" },
	{ { "--tid", "4244" }, "ACF" },
	{ { "--pid", "4242", "--tid", "4244" }, "ACF" },
	{ { "--pid", "5000", "--tid", "4244" }, "" },
	{ { "--since", "1500" }, "CDEFGH" },
	{ { "--since", "1.5us" }, "CDEFGH" },
	{ { "--since", "1500ns" }, "CDEFGH" },
	{ { "--until", "2ms" }, "AMBCDEF" },
	{ { "--until", "1ms" }, "AMBCDE" },
	{ { "--until", "0.001s" }, "AMBCDE" },
	{ { "--since", "1ms", "--until", "1.5s" }, "F" },
	{ { "--since", "1500000000" }, "GH" },
	{ { "--since", "-1us" }, "AMBCDEFGH" },
	{ { "--since", "-10", "--until", "1" }, "M" },
	{ { "--since", "10us" }, "FGH" },
	{ { "--since", "1s" }, "GH" },
	{ { "--since", "250ms", "--until", "2s" }, "GH" },
	{ { "--since", "1.500000001s" }, "H" },
	{ { "--since", "2026-11-22T10:00:00.123457789Z" }, "BCDEFGH" },
	{ { "--until", "2026-11-22T11:00:00.123458789+01:00" }, "AMBC" },
	{ { "--until", "2026-11-22 09:30:00.12345676-00:30" }, "A" },
	{ { "--since", "2026-11-22t10:00:01.623456789z" }, "GH" },
	{ { "--id", "1025", "--tid", "4244", "--until", "1ms" }, "A" },
	{ { "--pid", "4242", "--name", "http.*", "--since", "500", "--until", "1.5s" }, "BF" },
};

int main(void)
{
	struct fg_file f;
	char path[64], head[256], want[4096];

	build(&f);
	fg_tmpname(path, "filters");
	BAIL_IF(fg_write(&f, path) < 0, "cannot write %s", path);
	fg_file_free(&f);
	snprintf(head, sizeof(head), "# ringlog dump of %s: session filters, tick source tsc at "
		 "1000000000 Hz, started 2026-11-22T10:00:00.123456789Z\n"
		 "#      time_ns     pid     tid id           payload\n", path);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *argv[12] = { "dump", path };
		int n = 2;
		char desc[256] = "";
		for (int k = 0; cases[i].args[k]; k++) {
			argv[n++] = cases[i].args[k];
			strcat(desc, " ");
			strcat(desc, cases[i].args[k]);
		}
		argv[n] = NULL;
		struct run r = run_argv(argv);
		snprintf(want, sizeof(want), "%s", head);
		for (const char *c = cases[i].want; *c; c++)
			strcat(want, line_of(*c));
		ok(strcmp(r.out, want) == 0 && r.status == 0 && r.err[0] == '\0',
		   "dump%s: %s", desc, cases[i].want[0] ? cases[i].want : "nothing");
		if (strcmp(r.out, want) != 0)
			tap_diag2("  got:  \"%s\"", r.out, "  want: \"%s\"", want);
		run_free(&r);
	}

	/* --all shows the schema records, filters apply to them too. */
	struct run r = RUN("dump", path, "--all", "--since", "1", "--until", "3");
	snprintf(want, sizeof(want), "%s"
		 "             1    4242    4243 EVENT_SCHEMA id=1025 name=http.request kind=event "
		 "category=0 fields=v:u32\n"
		 "             2    4242    4243 EVENT_SCHEMA id=1027 name=db.query kind=event "
		 "category=0 fields=v:u32\n", head);
	ASSERT_STREQ(r.out, want);
	run_free(&r);
	r = RUN("dump", path, "--all", "--name", "EVENT_SCHEMA", "--since", "2");
	ASSERT_EQ(run_lines(r.out), 3);
	run_free(&r);

	/* Filters and JSON. */
	r = RUN("dump", path, "--format", "json", "--pid", "4242", "--name", "http.*");
	ASSERT_STREQ(r.out,
		     "{\"time_ns\":1000,\"pid\":4242,\"tid\":4243,\"id\":1025,\"name\":\"http.request\","
		     "\"kind\":\"event\",\"fields\":{\"v\":1}}\n"
		     "{\"time_ns\":1000000,\"pid\":4242,\"tid\":4244,\"id\":1025,\"name\":\"http.request\","
		     "\"kind\":\"event\",\"fields\":{\"v\":5}}\n");
	ASSERT_EQ(r.status, 0);
	run_free(&r);

	/* Bad values: one line, exit 2, nothing on stdout. */
	static const struct {
		const char *opt, *val, *msg;
	} bad[] = {
		{ "--since", "abc", "--since 'abc': expected a time: 1.5s, 250ms, 10us, 123ns, or "
				    "2026-11-22T07:01:31.5Z" },
		{ "--until", "5m", "--until '5m': expected a time: 1.5s, 250ms, 10us, 123ns, or "
				   "2026-11-22T07:01:31.5Z" },
		{ "--since", "2026-13-01T00:00:00Z", "--since '2026-13-01T00:00:00Z': expected a time: "
			     "1.5s, 250ms, 10us, 123ns, or 2026-11-22T07:01:31.5Z" },
		{ "--since", "2026-11-22T10:00:00", "--since '2026-11-22T10:00:00': expected a time: "
			     "1.5s, 250ms, 10us, 123ns, or 2026-11-22T07:01:31.5Z" },
		{ "--since", "1.s", "--since '1.s': expected a time: 1.5s, 250ms, 10us, 123ns, or "
				    "2026-11-22T07:01:31.5Z" },
		{ "--until", "99999999999999999999", "--until '99999999999999999999': expected a time: "
			     "1.5s, 250ms, 10us, 123ns, or 2026-11-22T07:01:31.5Z" },
		{ "--id", "16384", "--id '16384': expected event IDs 0 to 16383, separated by commas" },
		{ "--id", "1,,2", "--id '1,,2': expected event IDs 0 to 16383, separated by commas" },
		{ "--id", "1,", "--id '1,': expected event IDs 0 to 16383, separated by commas" },
		{ "--id", "", "--id '': expected event IDs 0 to 16383, separated by commas" },
		{ "--pid", "-1", "--pid '-1': expected process IDs separated by commas" },
		{ "--tid", "x", "--tid 'x': expected thread IDs separated by commas" },
		{ "--format", "xml", "--format 'xml': expected text or json" },
		{ "--time", "utc", "--time 'utc': expected relative or wall" },
	};
	char msg[512];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = RUN("dump", path, bad[i].opt, bad[i].val);
		snprintf(msg, sizeof(msg), "ringlog: dump: %s\n", bad[i].msg);
		ASSERT_STREQ(r.err, msg);
		ASSERT_STREQ(r.out, "");
		ASSERT_EQ(r.status, 1); /* a bad value: the command's error, not usage */
		run_free(&r);
	}
	r = RUN("dump", path, "--since");
	ASSERT_CONTAINS(r.err, "ringlog: dump: option '--since' needs a value\nusage: ringlog dump FILE");
	ASSERT_EQ(r.status, 2);
	run_free(&r);
	unlink(path);
	return done_testing();
}
