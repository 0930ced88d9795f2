/*
 * test_dump_fields - `ringlog dump` text output of self-describing events
 * (tests/test_dump_fixture.h), exactly: named fields of every type, limits,
 * C-escaped strings (UTF-8 kept, other bytes \xHH), bytes in hex, doubles
 * that read back (-0, 0.1, 1e+300, nan, -inf), spans, counters, a schema
 * without fields, a flagged event, "!mismatch" for a payload that does not
 * match, raw hex without a schema (also in another process), the metadata
 * records with --all, wall-clock times, a 1024-byte string; and the same
 * file with the schema's block damaged: its events print raw, one error
 * line names the block, exit 1.
 */
#include "filegen.h"
#include "proc_run.h"
#include "tap.h"
#include "test_dump_fixture.h"

static char *append(char *buf, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static char *append(char *buf, size_t *len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	buf = realloc(buf, *len + (size_t)n + 1);
	if (!buf)
		abort();
	va_start(ap, fmt);
	vsnprintf(buf + *len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	*len += (size_t)n;
	return buf;
}

/* One expected line: the layout of docs/DUMP.md, computed with printf. */
#define L(t, pid, tid, idcol, payload) \
	out = append(out, &len, "%14lld %7u %7u %-12s %s\n", (long long)(t), pid, tid, idcol, payload)
#define L0(t, pid, tid, idcol) \
	out = append(out, &len, "%14lld %7u %7u %s\n", (long long)(t), pid, tid, idcol)

#define HTTP100 "status=200 bytes=5120 path=\"/index\""
#define MAXV "a=255 b=65535 c=4294967295 d=18446744073709551615 e=127 f=32767 " \
	     "g=2147483647 h=9223372036854775807 x=1.5 y=01fe00 s=\"\""
#define MINV "a=0 b=0 c=0 d=0 e=-128 f=-32768 g=-2147483648 " \
	     "h=-9223372036854775808 x=-0 y=01fe00 s=\"q\\\"n\\n\xe2\x9c\x93\\xff\\x01\""
#define MARKER "tick_hz=1000000000 source=tsc realtime=2026-11-22T10:00:00.123456789Z " \
	       "session=fields buffers=8x16384"

/* The expected output; all: with --all; damaged: block A skipped. */
static char *expected(const char *path, bool all, bool damaged)
{
	char *out = NULL;
	size_t len = 0;

	out = append(out, &len, "# ringlog dump of %s: session fields, tick source tsc at "
		     "1000000000 Hz, started 2026-11-22T10:00:00.123456789Z\n", path);
	out = append(out, &len, "#      time_ns     pid     tid id           payload\n");
	L(0, 1, 1, "LOG_MARKER", MARKER);
	if (!damaged) {
		if (all) {
			L(1, 4242, 4243, "PROCESS_NAME", "\"server\"");
			L(2, 4242, 4243, "THREAD_NAME", "\"worker-1\"");
			L(10, 4242, 4243, "EVENT_SCHEMA", "id=1025 name=http.request kind=event "
			  "category=1 fields=status:u16,bytes:u32,path:string");
		}
		L(100, 4242, 4243, "http.request", HTTP100);
		if (all)
			L(200, 4242, 4243, "EVENT_SCHEMA", "id=1026 name=all.types kind=event "
			  "category=0 fields=a:u8,b:u16,c:u32,d:u64,e:i8,f:i16,g:i32,h:i64,x:f64,"
			  "y:bytes[3],s:string");
		L(300, 4242, 4243, "all.types", MAXV);
		L(400, 4242, 4243, "all.types", MINV);
		if (all)
			L(500, 4242, 4243, "EVENT_SCHEMA", "id=1027 name=db.query kind=span "
			  "category=0 fields=rows:u32");
		L(600, 4242, 4243, "db.query", "begin rows=5");
		L(700, 4242, 4243, "db.query", "end");
		if (all)
			L(800, 4242, 4243, "EVENT_SCHEMA", "id=1028 name=queue.depth kind=counter "
			  "category=0 fields=depth:i64");
		L(900, 4242, 4243, "queue.depth", "depth=-3");
		L(1000, 4242, 4243, "http.request", "!mismatch 616263");
		if (all)
			L(1100, 4242, 4243, "EVENT_SCHEMA", "id=1029 name=tick kind=event category=0 "
			  "fields=-");
		L0(1150, 4242, 4243, "tick");
		L(1200, 4242, 4243, "http.request/9", "status=404 bytes=0 path=\"\"");
		L(1250, 4242, 4244, "http.request", "status=500 bytes=1 path=\"/x\"");
		if (all)
			L(1300, 4242, 4243, "EVENT_SCHEMA", "id=1030 name=doubles kind=event "
			  "category=0 fields=x:f64,y:f64,z:f64,w:f64");
		L(1400, 4242, 4243, "doubles", "x=0.1 y=1e+300 z=nan w=-inf");
		L(1500, 4242, 4243, "1031", "01020304 05");
	} else {
		/* Without block A, thread 4244's event has no schema. */
		L(1250, 4242, 4244, "1025", "f4010100 00000200 2f78");
	}
	L(1600, 5000, 5001, "1025", "01000000 02000000 03000000 04000000");
	L(1700, 4242, 4243, "DATA_LOSS", "events=5 bytes=80 cause=no_buffer");
	return out;
}

int main(void)
{
	struct fg_file f;
	struct fx x;
	char path[64], want[512], line[2048];
	struct run r;

	fx_build(&f, &x);
	fg_tmpname(path, "fields");
	BAIL_IF(fg_write(&f, path) < 0, "cannot write %s", path);

	char *exp = expected(path, false, false);
	r = RUN("dump", path);
	ASSERT_STREQ(r.out, exp);
	ASSERT_STREQ(r.err, "");
	ASSERT_EQ(r.status, 0);
	run_free(&r);
	free(exp);

	exp = expected(path, true, false);
	r = RUN("dump", path, "--all");
	ASSERT_STREQ(r.out, exp);
	ASSERT_EQ(r.status, 0);
	run_free(&r);
	free(exp);

	/* --time wall: the same lines with RFC 3339 times. */
	r = RUN("dump", "--time", "wall", path);
	ASSERT_STREQ(run_line(r.out, 1, line, sizeof(line)),
		     "#" "                    " "wall_time     pid     tid id           payload");
	ASSERT_STREQ(run_line(r.out, 2, line, sizeof(line)),
		     "2026-11-22T10:00:00.123456789Z       1       1 LOG_MARKER   " MARKER);
	ASSERT_STREQ(run_line(r.out, 3, line, sizeof(line)),
		     "2026-11-22T10:00:00.123456889Z    4242    4243 http.request " HTTP100);
	ASSERT_EQ(run_lines(r.out), 2 + 15);
	ASSERT_EQ(r.status, 0);
	run_free(&r);
	r = RUN("dump", "--time=relative", path);
	ASSERT_STREQ(run_line(r.out, 3, line, sizeof(line)),
		     "           100    4242    4243 http.request " HTTP100);
	run_free(&r);

	/* The schema's block damaged: events print raw, one line on stderr. */
	f.b.p[x.block_a + FG_BLOCK_HDR + 40] ^= 0x10;
	BAIL_IF(fg_write(&f, path) < 0, "cannot write %s", path);
	exp = expected(path, false, true);
	r = RUN("dump", path);
	ASSERT_STREQ(r.out, exp);
	snprintf(want, sizeof(want), "ringlog: dump %s: damaged block at offset %zu: checksum "
		 "mismatch (skipped %u records)\n", path, x.block_a, x.block_a_count);
	ASSERT_STREQ(r.err, want);
	ASSERT_EQ(r.status, 1);
	run_free(&r);
	free(exp);
	fg_file_free(&f);

	/* A 1024-byte string, and bytes that are not UTF-8 in a name. */
	{
		static const struct fg_field str[] = { { RLOG_FIELD_STRING, 0, "s" } };
		struct fg_block b;
		char big[RLOG_STRING_MAX];
		struct fg_buf p = { 0 };
		for (size_t i = 0; i < sizeof(big); i++)
			big[i] = (char)('a' + i % 26);
		fg_file_init(&f);
		fg_marker_block(&f, 1, 1, 1000000000u, FX_START, FX_REALTIME, RLOG_TICK_TSC, 16384, 8,
				"long");
		fg_block_begin(&b, 7, 8, FX_START, 0);
		fg_thread_name(&b, FX_START + 1, "t\x01\xc3\xa9");
		fg_schema(&b, FX_START + 2, 2000, RLOG_KIND_EVENT, 0, "long.string", str, 1);
		fg_str(&p, big, sizeof(big));
		fg_event(&b, 2000, -1, true, FX_START + 3, p.p, (unsigned)p.len);
		fg_block_end(&f, &b);
		free(p.p);
		BAIL_IF(fg_write(&f, path) < 0, "cannot write %s", path);
		r = RUN("dump", path, "--all");
		char *w = NULL;
		size_t wl = 0;
		w = append(w, &wl, "             3       7       8 long.string  s=\"%.*s\"",
			   (int)sizeof(big), big);
		char *got = malloc(r.out_len + 1);
		ASSERT_STREQ(run_line(r.out, 5, got, r.out_len + 1), w);
		ASSERT_STREQ(run_line(r.out, 3, line, sizeof(line)),
			     "             1       7       8 THREAD_NAME  \"t\\x01\xc3\xa9\"");
		ASSERT_EQ(r.status, 0);
		free(got);
		free(w);
		run_free(&r);
		fg_file_free(&f);
	}
	unlink(path);
	return done_testing();
}
