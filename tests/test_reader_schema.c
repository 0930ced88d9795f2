/*
 * test_reader_schema - the reader's metadata on files crafted byte by byte:
 *   1. every field type decoded with exact values (limits, -0.0, NaN bits,
 *      empty and maximum-length strings, a 4096-byte array), payloads that
 *      do not match, spans and counters (rlog_event_field_count);
 *   2. schema versions: the latest at or before each event by (ticks,
 *      offset), per process, with blocks in file order unlike time order,
 *      asked in and out of order; repeats add no version;
 *   3. thread and process names: the latest by time, NUL cut, unknown NULL;
 *      threads enumerated in (pid, tid) order;
 *   4. malformed schemas counted and ignored; a schema in a damaged block
 *      not taken;
 *   5. the open-pass block visitor.
 */
#include <errno.h>
#include <math.h>

#include "ringlog/reader.h"
#include "filegen.h"
#include "tap.h"

#define S 1000000ull /* start ticks; 1 tick = 1 ns */

static struct rlog_reader *open_file(struct fg_file *f)
{
	struct rlog_reader *r = NULL;
	int rc = fg_open(f, &r);
	BAIL_IF(rc != 0, "cannot open the crafted file: %d", rc);
	return r;
}

/* Reads the next event that is not a metadata record or LOG_MARKER. */
static int next_app(struct rlog_reader *r, struct rlog_event *ev)
{
	int rc;
	while ((rc = rlog_reader_next(r, ev)) == 1)
		if (ev->id >= RLOG_ID_USER_MIN)
			return 1;
	return rc;
}

static const struct fg_field all_fields[] = {
	{ RLOG_FIELD_U8, 0, "a" },   { RLOG_FIELD_U16, 0, "b" }, { RLOG_FIELD_U32, 0, "c" },
	{ RLOG_FIELD_U64, 0, "d" },  { RLOG_FIELD_I8, 0, "e" },  { RLOG_FIELD_I16, 0, "f" },
	{ RLOG_FIELD_I32, 0, "g" },  { RLOG_FIELD_I64, 0, "h" }, { RLOG_FIELD_F64, 0, "x" },
	{ RLOG_FIELD_BYTES, 3, "y" }, { RLOG_FIELD_STRING, 0, "s" },
};
#define NALL 11

/* An all.types payload. */
static void all_payload(struct fg_buf *p, uint8_t a, uint16_t b, uint32_t c, uint64_t d, int8_t e,
			int16_t f, int32_t g, int64_t h, double x, const char *s, size_t slen)
{
	fg_u8(p, a);
	fg_u16(p, b);
	fg_u32(p, c);
	fg_u64(p, d);
	fg_u8(p, (uint8_t)e);
	fg_u16(p, (uint16_t)f);
	fg_u32(p, (uint32_t)g);
	fg_u64(p, (uint64_t)h);
	fg_f64(p, x);
	fg_bytes(p, "\x01\xfe\x00", 3);
	fg_str(p, s, slen);
}

static void test_types(void)
{
	struct fg_file f;
	struct fg_block b;
	struct fg_buf p = { 0 };
	static char longstr[RLOG_STRING_MAX];
	static uint8_t big[RLOG_BYTES_MAX];

	for (size_t i = 0; i < sizeof(longstr); i++)
		longstr[i] = (char)('a' + i % 26);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7);

	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, 1000000000u, S, 0, RLOG_TICK_TSC, 16384, 8, "types");
	fg_block_begin(&b, 100, 101, S, 0);
	fg_schema(&b, S + 10, 1100, RLOG_KIND_EVENT, 5, "all.types", all_fields, NALL);
	all_payload(&p, 255, 65535, 4294967295u, UINT64_MAX, -128, -32768, INT32_MIN, INT64_MIN,
		    -0.0, "", 0);
	fg_event(&b, 1100, -1, true, S + 20, p.p, (unsigned)p.len);
	size_t short_len = p.len;
	p.len = 0;
	all_payload(&p, 0, 1, 2, 3, 127, 32767, INT32_MAX, INT64_MAX, 1e308, longstr,
		    sizeof(longstr));
	fg_event(&b, 1100, -1, true, S + 30, p.p, (unsigned)p.len);
	/* one byte short: the string's length says 1, no byte follows */
	p.len = short_len - 2;
	fg_u16(&p, 1);
	fg_event(&b, 1100, -1, true, S + 40, p.p, (unsigned)p.len);
	/* one byte too many */
	p.len = short_len - 2;
	fg_u16(&p, 0);
	fg_u8(&p, 0);
	fg_event(&b, 1100, -1, true, S + 50, p.p, (unsigned)p.len);
	/* NaN with a payload */
	p.len = 0;
	all_payload(&p, 1, 1, 1, 1, 1, 1, 1, 1, 0.0, "\xff\"\n", 3);
	uint64_t nan_bits = UINT64_C(0x7ff8000000000123);
	memcpy(p.p + 1 + 2 + 4 + 8 + 1 + 2 + 4 + 8, &nan_bits, 8);
	fg_event(&b, 1100, -1, true, S + 60, p.p, (unsigned)p.len);
	/* a 4096-byte array */
	static const struct fg_field bigf[] = { { RLOG_FIELD_BYTES, RLOG_BYTES_MAX, "blob" } };
	fg_schema(&b, S + 70, 1101, RLOG_KIND_EVENT, 0, "big.bytes", bigf, 1);
	fg_event(&b, 1101, -1, true, S + 80, big, sizeof(big));
	/* a span and a counter */
	static const struct fg_field rows[] = { { RLOG_FIELD_U32, 0, "rows" } };
	fg_schema(&b, S + 90, 1102, RLOG_KIND_SPAN, 1, "db.query", rows, 1);
	uint32_t five = 5;
	fg_event(&b, 1102, RLOG_SPAN_BEGIN, true, S + 100, &five, 4);
	fg_event(&b, 1102, RLOG_SPAN_END, true, S + 110, NULL, 0);
	fg_event(&b, 1102, RLOG_SPAN_END, true, S + 120, &five, 4);   /* END with fields */
	fg_event(&b, 1102, -1, true, S + 130, &five, 4);              /* not flagged */
	fg_event(&b, 1102, 7, true, S + 140, &five, 4);               /* flag 7 */
	static const struct fg_field depth[] = { { RLOG_FIELD_I64, 0, "depth" } };
	fg_schema(&b, S + 150, 1103, RLOG_KIND_COUNTER, 2, "queue.depth", depth, 1);
	int64_t d3 = 3;
	fg_event(&b, 1103, -1, true, S + 160, &d3, 8);
	fg_event(&b, 1104, -1, true, S + 170, "raw", 3);              /* no schema */
	fg_block_end(&f, &b);
	free(p.p);

	struct rlog_reader *r = open_file(&f);
	struct rlog_event ev;
	struct rlog_value v;
	size_t off;
	const struct rlog_schema *s;

	/* 1: the minimum values, -0.0 and an empty string */
	ASSERT_EQ(next_app(r, &ev), 1);
	s = rlog_reader_schema(r, &ev);
	BAIL_IF(!s, "no schema for the first all.types event");
	ASSERT_STREQ(s->name, "all.types");
	ASSERT_EQ(s->id, 1100);
	ASSERT_EQ(s->kind, RLOG_KIND_EVENT);
	ASSERT_EQ(s->category, 5);
	ASSERT_EQ(s->field_count, NALL);
	for (unsigned i = 0; i < NALL; i++) {
		ok(strcmp(s->fields[i].name, all_fields[i].name) == 0 &&
		   s->fields[i].type == all_fields[i].type && s->fields[i].count == all_fields[i].count,
		   "field %u is %s, type %u, count %u", i, all_fields[i].name, all_fields[i].type,
		   all_fields[i].count);
	}
	ASSERT_EQ(rlog_event_field_count(s, &ev), NALL);
	off = 0;
	ASSERT_EQ(rlog_event_field(s, &ev, 0, &off, &v), 1);
	ASSERT_EQ_U64(v.v.u, 255);
	ok(v.field == &s->fields[0], "the value points at its field");
	ASSERT_EQ(rlog_event_field(s, &ev, 1, &off, &v), 1);
	ASSERT_EQ_U64(v.v.u, 65535);
	ASSERT_EQ(rlog_event_field(s, &ev, 2, &off, &v), 1);
	ASSERT_EQ_U64(v.v.u, 4294967295u);
	ASSERT_EQ(rlog_event_field(s, &ev, 3, &off, &v), 1);
	ASSERT_EQ_U64(v.v.u, UINT64_MAX);
	ASSERT_EQ(rlog_event_field(s, &ev, 4, &off, &v), 1);
	ASSERT_EQ(v.v.i, -128);
	ASSERT_EQ(rlog_event_field(s, &ev, 5, &off, &v), 1);
	ASSERT_EQ(v.v.i, -32768);
	ASSERT_EQ(rlog_event_field(s, &ev, 6, &off, &v), 1);
	ASSERT_EQ(v.v.i, INT32_MIN);
	ASSERT_EQ(rlog_event_field(s, &ev, 7, &off, &v), 1);
	ok(v.v.i == INT64_MIN, "i64 minimum");
	ASSERT_EQ(rlog_event_field(s, &ev, 8, &off, &v), 1);
	ok(v.v.f == 0.0 && signbit(v.v.f), "f64 -0.0 keeps its sign");
	ASSERT_EQ(rlog_event_field(s, &ev, 9, &off, &v), 1);
	ok(v.len == 3 && memcmp(v.bytes, "\x01\xfe\x00", 3) == 0, "bytes[3]");
	ASSERT_EQ(rlog_event_field(s, &ev, 10, &off, &v), 1);
	ASSERT_EQ(v.len, 0);
	ASSERT_EQ_U64(off, ev.length);
	ASSERT_EQ(rlog_event_field(s, &ev, 11, &off, &v), -EINVAL);
	ASSERT_EQ(rlog_event_field(NULL, &ev, 0, &off, &v), -EINVAL);
	ASSERT_EQ(rlog_event_field_count(NULL, &ev), -EINVAL);

	/* 2: the maximum values and a 1024-byte string */
	ASSERT_EQ(next_app(r, &ev), 1);
	ok(rlog_reader_schema(r, &ev) == s, "the same schema object for the same version");
	ASSERT_EQ(rlog_event_field_count(s, &ev), NALL);
	off = 0;
	for (unsigned i = 0; i < NALL; i++)
		BAIL_IF(rlog_event_field(s, &ev, i, &off, &v) != 1, "field %u", i);
	ok(v.len == RLOG_STRING_MAX && memcmp(v.bytes, longstr, RLOG_STRING_MAX) == 0,
	   "a maximum-length string (%u bytes)", (unsigned)v.len);
	off = 0;
	for (unsigned i = 0; i < 9; i++)
		rlog_event_field(s, &ev, i, &off, &v);
	ok(v.v.f == 1e308, "f64 1e308");

	/* 3, 4: payloads that do not match */
	ASSERT_EQ(next_app(r, &ev), 1);
	ASSERT_EQ(rlog_event_field_count(s, &ev), -EBADMSG);
	off = 0;
	for (unsigned i = 0; i < 10; i++)
		rlog_event_field(s, &ev, i, &off, &v);
	ASSERT_EQ(rlog_event_field(s, &ev, 10, &off, &v), -EBADMSG);
	ASSERT_EQ(next_app(r, &ev), 1);
	ASSERT_EQ(rlog_event_field_count(s, &ev), -EBADMSG);

	/* 5: NaN bits and a string with bytes that are not UTF-8 */
	ASSERT_EQ(next_app(r, &ev), 1);
	ASSERT_EQ(rlog_event_field_count(s, &ev), NALL);
	off = 0;
	for (unsigned i = 0; i < 9; i++)
		rlog_event_field(s, &ev, i, &off, &v);
	uint64_t bits;
	memcpy(&bits, &v.v.f, 8);
	ok(isnan(v.v.f) && bits == nan_bits, "NaN keeps its bits");
	rlog_event_field(s, &ev, 9, &off, &v);
	rlog_event_field(s, &ev, 10, &off, &v);
	ok(v.len == 3 && memcmp(v.bytes, "\xff\"\n", 3) == 0, "string bytes as written");

	/* big.bytes */
	ASSERT_EQ(next_app(r, &ev), 1);
	s = rlog_reader_schema(r, &ev);
	BAIL_IF(!s, "no schema for big.bytes");
	ASSERT_EQ(rlog_event_field_count(s, &ev), 1);
	off = 0;
	ASSERT_EQ(rlog_event_field(s, &ev, 0, &off, &v), 1);
	ok(v.len == RLOG_BYTES_MAX && memcmp(v.bytes, big, sizeof(big)) == 0, "bytes[4096]");

	/* db.query: BEGIN 1 field, END 0, END with a payload, unflagged, flag 7 */
	static const int want_span[] = { 1, 0, -EBADMSG, -EBADMSG, -EBADMSG };
	for (int i = 0; i < 5; i++) {
		ASSERT_EQ(next_app(r, &ev), 1);
		s = rlog_reader_schema(r, &ev);
		ok(s && s->kind == RLOG_KIND_SPAN && strcmp(s->name, "db.query") == 0,
		   "span record %d has the span schema", i);
		ASSERT_EQ(rlog_event_field_count(s, &ev), want_span[i]);
	}
	ASSERT_EQ(next_app(r, &ev), 1);
	s = rlog_reader_schema(r, &ev);
	ok(s && s->kind == RLOG_KIND_COUNTER && s->category == 2, "the counter's schema");
	off = 0;
	ASSERT_EQ(rlog_event_field(s, &ev, 0, &off, &v), 1);
	ASSERT_EQ(v.v.i, 3);
	ASSERT_EQ(next_app(r, &ev), 1);
	ok(rlog_reader_schema(r, &ev) == NULL, "an ID without a schema has none");
	ASSERT_EQ(next_app(r, &ev), 0);
	ASSERT_EQ(rlog_reader_bad_schemas(r, NULL), 0);
	rlog_reader_close(r);
	fg_file_free(&f);
}

/* The schema name of ev, or "-" if it has none. */
static const char *sname(struct rlog_reader *r, const struct rlog_event *ev)
{
	const struct rlog_schema *s = rlog_reader_schema(r, ev);
	return s ? s->name : "-";
}

static void test_versions(void)
{
	static const struct fg_field one[] = { { RLOG_FIELD_U32, 0, "a" } };
	static const struct fg_field two[] = { { RLOG_FIELD_U32, 0, "a" }, { RLOG_FIELD_U32, 0, "b" } };
	struct fg_file f;
	struct fg_block b;
	uint32_t tag;

	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, 1000000000u, S, 0, RLOG_TICK_TSC, 16384, 8, "versions");
	/* Thread 102 first in the file, with the later times. */
	fg_block_begin(&b, 100, 102, S + 400, 0);
	fg_schema(&b, S + 500, 1200, RLOG_KIND_EVENT, 0, "v2", two, 2);
	uint32_t pair[2] = { 7, 8 };
	fg_event(&b, 1200, -1, true, S + 510, pair, 8);
	tag = 1;
	fg_event(&b, 1201, -1, true, S + 1000, &tag, 4); /* before 101's schema: same ticks, earlier offset */
	fg_block_end(&f, &b);
	/* Thread 101. */
	fg_block_begin(&b, 100, 101, S, 0);
	tag = 10;
	fg_event(&b, 1200, -1, true, S + 100, &tag, 4);  /* no schema yet */
	fg_schema(&b, S + 200, 1200, RLOG_KIND_EVENT, 0, "v1", one, 1);
	tag = 11;
	fg_event(&b, 1200, -1, true, S + 300, &tag, 4);  /* v1 */
	fg_event(&b, 1200, -1, true, S + 600, pair, 8);  /* v2 (from thread 102) */
	fg_schema(&b, S + 700, 1200, RLOG_KIND_EVENT, 0, "v1", one, 1);
	tag = 12;
	fg_event(&b, 1200, -1, true, S + 800, &tag, 4);  /* v1 again */
	fg_schema(&b, S + 900, 1200, RLOG_KIND_EVENT, 0, "v1", one, 1); /* a repeat */
	tag = 13;
	fg_event(&b, 1200, -1, true, S + 950, &tag, 4);
	static const struct fg_field none[1];
	fg_schema(&b, S + 1000, 1201, RLOG_KIND_EVENT, 0, "late", none, 0);
	fg_event(&b, 1201, -1, true, S + 1000, NULL, 0); /* after it in file order */
	fg_block_end(&f, &b);
	/* Process 200 has no schema for 1200. */
	fg_block_begin(&b, 200, 201, S, 0);
	tag = 20;
	fg_event(&b, 1200, -1, true, S + 650, &tag, 4);
	fg_block_end(&f, &b);

	struct rlog_reader *r = open_file(&f);
	static const char *const want[] = { "-", "v1", "v2", "v2", "-", "v1", "v1", "-", "late" };
	static const uint64_t when[] = { 100, 300, 510, 600, 650, 800, 950, 1000, 1000 };
	struct rlog_event evs[9];
	const struct rlog_schema *got[9];
	size_t n = 0;
	while (n < 9 && next_app(r, &evs[n]) == 1) {
		got[n] = rlog_reader_schema(r, &evs[n]);
		ASSERT_EQ_U64(evs[n].ticks - S, when[n]);
		ASSERT_STREQ(sname(r, &evs[n]), want[n]);
		n++;
	}
	ASSERT_EQ(n, 9);
	struct rlog_event extra;
	ASSERT_EQ(next_app(r, &extra), 0);
	ok(got[5] == got[6], "a repeated schema adds no version");
	ok(got[1] != got[5], "the same schema after another one is a version of its own");
	/* Asked again, backwards, after the end: the same answers. */
	for (size_t i = n; i-- > 0;)
		ok(rlog_reader_schema(r, &evs[i]) == got[i], "event %zu asked again: %s", i, want[i]);
	const struct rlog_schema *latest = rlog_reader_schema_latest(r, 100, 1200);
	ok(latest && latest == got[6], "the latest schema of (100, 1200) is the last v1");
	ok(rlog_reader_schema_latest(r, 200, 1200) == NULL, "none for process 200");
	ok(rlog_reader_schema_latest(r, 100, 1999) == NULL, "none for an unknown ID");
	rlog_reader_close(r);
	fg_file_free(&f);
}

static void test_names(void)
{
	struct fg_file f;
	struct fg_block b;

	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, 1000000000u, S, 0, RLOG_TICK_TSC, 16384, 8, "names");
	fg_block_begin(&b, 100, 102, S, 0);
	fg_event(&b, RLOG_ID_THREAD_NAME, -1, true, S + 5, "abc\0def", 7);
	fg_process_name(&b, S + 30, "proc-a");
	fg_block_end(&f, &b);
	fg_block_begin(&b, 100, 101, S, 0);
	fg_thread_name(&b, S + 10, "first");
	fg_process_name(&b, S + 25, "proc-b");  /* later in the file, earlier in time */
	fg_block_end(&f, &b);
	fg_block_begin(&b, 100, 101, S + 25, 0);
	fg_thread_name(&b, S + 40, "second \xe2\x9c\x93");
	fg_event(&b, RLOG_ID_THREAD_NAME, 1, true, S + 50, "flagged", 7); /* not a name */
	fg_block_end(&f, &b);
	fg_block_begin(&b, 300, 301, S, 0);
	fg_event(&b, 1024, -1, true, S + 1, NULL, 0);
	fg_block_end(&f, &b);
	fg_block_begin(&b, 200, 201, S, 0);
	fg_thread_name(&b, S + 1, "");
	fg_block_end(&f, &b);

	struct rlog_reader *r = open_file(&f);
	ASSERT_STREQ(rlog_reader_thread_name(r, 100, 101), "second \xe2\x9c\x93");
	ASSERT_STREQ(rlog_reader_thread_name(r, 100, 102), "abc");
	ASSERT_STREQ(rlog_reader_thread_name(r, 200, 201), "");
	ok(rlog_reader_thread_name(r, 300, 301) == NULL, "a thread without a name");
	ok(rlog_reader_thread_name(r, 999, 1) == NULL, "an unknown thread");
	ASSERT_STREQ(rlog_reader_process_name(r, 100), "proc-a");
	ok(rlog_reader_process_name(r, 200) == NULL, "a process without a name");
	ok(rlog_reader_thread_name(NULL, 1, 1) == NULL && rlog_reader_process_name(NULL, 1) == NULL,
	   "NULL reader");

	static const uint32_t pids[] = { 1, 100, 100, 200, 300 }, tids[] = { 1, 101, 102, 201, 301 };
	ASSERT_EQ_U64(rlog_reader_info(r)->thread_count, 5);
	for (size_t i = 0; i < 5; i++) {
		uint32_t pid = 0, tid = 0;
		ASSERT_EQ(rlog_reader_thread(r, i, &pid, &tid), 0);
		ok(pid == pids[i] && tid == tids[i], "thread %zu is %u/%u (got %u/%u)", i, pids[i],
		   tids[i], pid, tid);
	}
	uint32_t pid, tid;
	ASSERT_EQ(rlog_reader_thread(r, 5, &pid, &tid), -ERANGE);
	ASSERT_EQ(rlog_reader_thread(r, 0, NULL, &tid), -EINVAL);

	/* The metadata records still come out of rlog_reader_next. */
	struct rlog_event ev;
	int names = 0, procs = 0;
	while (rlog_reader_next(r, &ev) == 1) {
		names += ev.id == RLOG_ID_THREAD_NAME;
		procs += ev.id == RLOG_ID_PROCESS_NAME;
	}
	ASSERT_EQ(names, 5);
	ASSERT_EQ(procs, 2);
	rlog_reader_close(r);
	fg_file_free(&f);
}

static void test_bad_schemas(void)
{
	static const struct fg_field one[] = { { RLOG_FIELD_U32, 0, "a" } };
	struct fg_file f;
	struct fg_block b;
	struct fg_buf p = { 0 };

	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, 1000000000u, S, 0, RLOG_TICK_TSC, 16384, 8, "bad");
	fg_block_begin(&b, 100, 101, S, 0);
	/* field_count 2, one field */
	fg_schema_payload(&p, 1300, RLOG_KIND_EVENT, 0, "bad.count", one, 1);
	p.p[5] = 2;
	size_t first = fg_event(&b, RLOG_ID_EVENT_SCHEMA, -1, true, S + 10, p.p, (unsigned)p.len);
	/* a trailing byte */
	p.len = 0;
	fg_schema_payload(&p, 1301, RLOG_KIND_EVENT, 0, "bad.trailing", one, 1);
	fg_u8(&p, 0);
	fg_event(&b, RLOG_ID_EVENT_SCHEMA, -1, true, S + 11, p.p, (unsigned)p.len);
	/* field type 12, a name with a space, kind 3, a counter of strings */
	static const struct fg_field t12[] = { { 12, 0, "a" } };
	fg_schema(&b, S + 12, 1302, RLOG_KIND_EVENT, 0, "bad.type", t12, 1);
	fg_schema(&b, S + 13, 1303, RLOG_KIND_EVENT, 0, "bad name", one, 1);
	fg_schema(&b, S + 14, 1304, 3, 0, "bad.kind", one, 1);
	static const struct fg_field str[] = { { RLOG_FIELD_STRING, 0, "s" } };
	fg_schema(&b, S + 15, 1305, RLOG_KIND_COUNTER, 0, "bad.counter", str, 1);
	/* a schema for THREAD_NAME */
	fg_schema(&b, S + 16, RLOG_ID_THREAD_NAME, RLOG_KIND_EVENT, 0, "sneaky", one, 1);
	/* a flagged EVENT_SCHEMA record is an ordinary event, not a schema */
	p.len = 0;
	fg_schema_payload(&p, 1306, RLOG_KIND_EVENT, 0, "flagged", one, 1);
	fg_event(&b, RLOG_ID_EVENT_SCHEMA, 1, true, S + 17, p.p, (unsigned)p.len);
	uint32_t x = 1;
	for (uint16_t id = 1300; id <= 1306; id++)
		fg_event(&b, id, -1, true, S + 20 + id - 1300, &x, 4);
	fg_thread_name(&b, S + 30, "worker");
	size_t blk = fg_block_end(&f, &b);
	/* A damaged block holding a schema for 1307, and an event of 1307. */
	fg_block_begin(&b, 100, 101, S + 30, 0);
	fg_schema(&b, S + 40, 1307, RLOG_KIND_EVENT, 0, "damaged", one, 1);
	fg_thread_name(&b, S + 41, "not this one");
	size_t dmg = fg_block_end(&f, &b);
	f.b.p[dmg + FG_BLOCK_HDR + 10] ^= 1;
	fg_block_begin(&b, 100, 101, S + 41, 0);
	fg_event(&b, 1307, -1, true, S + 50, &x, 4);
	fg_block_end(&f, &b);
	free(p.p);

	struct rlog_reader *r = open_file(&f);
	uint64_t at = 0;
	ASSERT_EQ_U64(rlog_reader_bad_schemas(r, &at), 7);
	ASSERT_EQ_U64(at, blk + FG_BLOCK_HDR + first);
	ASSERT_EQ_U64(rlog_reader_bad_schemas(r, NULL), 7);
	ASSERT_EQ(rlog_reader_damage_count(r), 1);
	struct rlog_event ev;
	int n = 0;
	while (next_app(r, &ev) == 1) {
		ok(rlog_reader_schema(r, &ev) == NULL, "event %u has no schema", (unsigned)ev.id);
		n++;
	}
	ASSERT_EQ(n, 8);
	ASSERT_STREQ(rlog_reader_thread_name(r, 100, 101), "worker");
	rlog_reader_close(r);
	ASSERT_EQ_U64(rlog_reader_bad_schemas(NULL, &at), 0);
	ASSERT_EQ_U64(at, 0);
	fg_file_free(&f);
}

struct visit {
	int calls;
	uint64_t records;
	int truncated;
	int stop_at;   /* return -EINTR on this call (1-based); 0: never */
	uint64_t first[8], last[8];
	uint32_t tid[8];
};

static int visitor(void *arg, const struct rlog_block *b)
{
	struct visit *v = arg;
	if (v->calls < 8) {
		v->first[v->calls] = b->first_ticks;
		v->last[v->calls] = b->last_ticks;
		v->tid[v->calls] = b->tid;
	}
	v->calls++;
	v->records += b->record_count;
	v->truncated += b->truncated;
	return v->calls == v->stop_at ? -EINTR : 0;
}

static void test_visitor(void)
{
	struct fg_file f;
	struct fg_block b;
	uint32_t x = 0;

	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, 1000000000u, S, 0, RLOG_TICK_TSC, 16384, 8, "visit");
	fg_block_begin(&b, 10, 11, S, 0);
	for (int i = 0; i < 5; i++)
		fg_event(&b, 1024, -1, true, (uint32_t)(S + 100 + i), &x, 4);
	fg_block_end(&f, &b);
	fg_block_begin(&b, 10, 12, S, 0);
	fg_block_end(&f, &b); /* empty */
	fg_block_begin(&b, 10, 11, S + 104, 0);
	for (int i = 0; i < 4; i++)
		fg_event(&b, 1024, -1, true, (uint32_t)(S + 200 + i), &x, 4);
	size_t last = fg_block_end(&f, &b);

	struct rlog_reader *r = NULL;
	struct visit v = { 0 };
	char path[64];
	fg_tmpname(path, "visit");
	BAIL_IF(fg_write(&f, path) < 0, "write");
	ASSERT_EQ(rlog_reader_open_visit(path, visitor, &v, &r), 0);
	ASSERT_EQ(v.calls, 4);
	ASSERT_EQ_U64(v.records, 1 + 5 + 0 + 4);
	ASSERT_EQ_U64(v.first[1], S + 100);
	ASSERT_EQ_U64(v.last[1], S + 104);
	ASSERT_EQ_U64(v.first[2], S);      /* empty: its base time */
	ASSERT_EQ_U64(v.last[2], S);
	ASSERT_EQ_U64(v.first[3], S + 200);
	ASSERT_EQ_U64(v.last[3], S + 203);
	ASSERT_EQ(v.truncated, 0);
	ASSERT_EQ(rlog_reader_time_ns(r, S - 5), -5);
	ASSERT_EQ(rlog_reader_time_ns(r, S + 203), 203);
	rlog_reader_close(r);

	/* The visitor stops the open. */
	memset(&v, 0, sizeof(v));
	v.stop_at = 2;
	r = (struct rlog_reader *)&v;
	ASSERT_EQ(rlog_reader_open_visit(path, visitor, &v, &r), -EINTR);
	ok(r == NULL, "no reader after a stop");
	ASSERT_EQ(v.calls, 2);
	unlink(path);

	/* A truncated last block: its complete records, flagged truncated. */
	memset(&v, 0, sizeof(v));
	size_t cut = last + FG_BLOCK_HDR + 2 * 12 + 3;
	ASSERT_EQ(rlog_reader_open_mem_visit(f.b.p, cut, visitor, &v, &r), 0);
	ASSERT_EQ(v.calls, 4);
	ASSERT_EQ(v.truncated, 1);
	ASSERT_EQ_U64(v.records, 1 + 5 + 0 + 2);
	ASSERT_EQ_U64(v.last[3], S + 201);
	ASSERT_EQ(rlog_reader_damage_count(r), 1);
	rlog_reader_close(r);
	ASSERT_EQ(rlog_reader_open_mem_visit(NULL, 5, visitor, &v, &r), -EINVAL);
	fg_file_free(&f);
}

int main(void)
{
	test_types();
	test_versions();
	test_names();
	test_bad_schemas();
	test_visitor();
	return done_testing();
}
