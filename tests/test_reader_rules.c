/*
 * test_reader_rules - each decoding and time rule docs/FORMAT.md settles,
 * on files crafted byte by byte, with the exact damage message or value:
 *   records allowed by block kind: DATA_LOSS and LOG_MARKER only in daemon
 *   blocks, never shorter than their payload structs, a LOG_MARKER of tick
 *   frequency 0, metadata never in daemon blocks; a LOG_MARKER in a later
 *   daemon block is an event and no clock; an unknown tick source times the
 *   file all the same; the time origin is the LOG_MARKER's sync_ticks, not
 *   its record's time; no tick time past 2^64 - 1; exact nanoseconds at a
 *   frequency above 2^64 / 10^9 and the clamp at 2^63 - 1; the merge keeps
 *   a thread's record order when its time goes back; data_size above
 *   RLOG_BLOCK_DATA_MAX is an insane header; resync keeps the alignment of
 *   the bad block; a schema that repeats a field name is malformed (and
 *   refused by the producer's check).
 */
#include <errno.h>

#include "ringlog/reader.h"
#include "filegen.h"
#include "schema.h"
#include "tap.h"

#define S 1000u

/* A 1.0 file with block 0 (1 GHz, origin S) and one more block holding a
 * single record (id, timestamp S + 10, payload), of the given flags. */
static size_t one(struct fg_file *f, uint16_t flags, unsigned id, const void *p, unsigned n)
{
	struct fg_block b;
	fg_file_init(f);
	fg_marker_block(f, 1, 1, 1000000000u, S, 0, RLOG_TICK_MONOTONIC, 16384, 4, "rules");
	fg_block_begin(&b, 10, 11, S, flags);
	fg_event(&b, id, -1, true, S + 10, p, n);
	return fg_block_end(f, &b);
}

/* Opens f and returns its only damage message (or "" if none). */
static const char *damage_of(const struct fg_file *f, char *buf, size_t n)
{
	struct rlog_reader *r;
	struct rlog_damage d;
	buf[0] = '\0';
	if (fg_open(f, &r) < 0) {
		snprintf(buf, n, "(no open)");
		return buf;
	}
	if (rlog_reader_damage_count(r) == 1 && rlog_reader_damage(r, 0, &d) == 0)
		snprintf(buf, n, "%s", d.message);
	else if (rlog_reader_damage_count(r) > 1)
		snprintf(buf, n, "(%zu reports)", rlog_reader_damage_count(r));
	rlog_reader_close(r);
	return buf;
}

static void malformed(unsigned id, uint16_t flags, unsigned len, const char *what)
{
	struct fg_file f;
	uint8_t payload[128];
	char want[160], got[256];
	memset(payload, 0, sizeof(payload));
	payload[0] = 1; /* a LOG_MARKER's tick_freq_hz: not 0 */
	size_t at = one(&f, flags, id, payload, len);
	snprintf(want, sizeof(want), "damaged block at offset %zu: malformed record at offset %zu "
		 "(skipped 1 records)", at, at + FG_BLOCK_HDR);
	ok(strcmp(damage_of(&f, got, sizeof(got)), want) == 0, "%s is malformed (%s)", what, got);
	fg_file_free(&f);
}

static void test_block_kinds(void)
{
	struct fg_file f;
	char got[256];

	malformed(RLOG_ID_DATA_LOSS, 0, 24, "a DATA_LOSS in a thread block");
	malformed(RLOG_ID_DATA_LOSS, RLOG_BLOCK_FLAG_DAEMON, 23, "a DATA_LOSS of 23 bytes");
	malformed(RLOG_ID_LOG_MARKER, 0, 112, "a LOG_MARKER in a thread block");
	malformed(RLOG_ID_LOG_MARKER, RLOG_BLOCK_FLAG_DAEMON, 111, "a LOG_MARKER of 111 bytes");
	malformed(RLOG_ID_THREAD_NAME, RLOG_BLOCK_FLAG_DAEMON, 4, "a THREAD_NAME in a daemon block");
	malformed(RLOG_ID_EVENT_SCHEMA, RLOG_BLOCK_FLAG_DAEMON, 4, "an EVENT_SCHEMA in a daemon block");
	malformed(RLOG_ID_PROCESS_NAME, RLOG_BLOCK_FLAG_DAEMON, 4, "a PROCESS_NAME in a daemon block");

	/* The rest is fine: an application event, a RAW_U32 of 3 bytes. */
	one(&f, RLOG_BLOCK_FLAG_DAEMON, 2000, "abc", 3);
	ASSERT_STREQ(damage_of(&f, got, sizeof(got)), "");
	fg_file_free(&f);
	one(&f, 0, RLOG_ID_RAW_U32, "abc", 3);
	ASSERT_STREQ(damage_of(&f, got, sizeof(got)), "");
	fg_file_free(&f);

	/* A LOG_MARKER of tick frequency 0 in block 0: no clock. */
	{
		struct fg_block b;
		struct fg_buf m = { 0 };
		struct rlog_reader *r;
		fg_file_init(&f);
		fg_marker_payload(&m, 0, S, 0, RLOG_TICK_TSC, 16384, 4, "zero");
		fg_block_begin(&b, 1, 1, S, RLOG_BLOCK_FLAG_DAEMON);
		fg_event(&b, RLOG_ID_LOG_MARKER, -1, true, S, m.p, (unsigned)m.len);
		fg_block_end(&f, &b);
		ASSERT_EQ(fg_open(&f, &r), -ENODATA);
		free(m.p);
		fg_file_free(&f);
	}
}

/* A LOG_MARKER in a later daemon block is an event and gives no clock; an
 * unknown tick source; the origin is sync_ticks, not the record's time. */
static void test_marker(void)
{
	struct fg_file f;
	struct fg_block b;
	struct fg_buf m = { 0 };
	struct rlog_reader *r;
	struct rlog_event ev;

	fg_file_init(&f);
	/* Block 0: the LOG_MARKER record at time S + 500, sync_ticks S;
	 * tick source 7, frequency 2 GHz. */
	fg_marker_payload(&m, 2000000000u, S, 1000000000000ull, 7, 16384, 4, "origin");
	fg_block_begin(&b, 1, 1, S + 500, RLOG_BLOCK_FLAG_DAEMON);
	fg_event(&b, RLOG_ID_LOG_MARKER, -1, true, S + 500, m.p, (unsigned)m.len);
	fg_block_end(&f, &b);
	free(m.p);
	m = (struct fg_buf){ 0 };
	fg_marker_payload(&m, 5, 0, 0, RLOG_TICK_TSC, 16384, 4, "later");
	fg_block_begin(&b, 1, 1, S + 600, RLOG_BLOCK_FLAG_DAEMON);
	fg_event(&b, RLOG_ID_LOG_MARKER, -1, true, S + 600, m.p, (unsigned)m.len);
	fg_block_end(&f, &b);
	free(m.p);
	fg_block_begin(&b, 10, 11, S, 0);
	fg_event(&b, 2000, -1, true, S + 20, NULL, 0);
	fg_block_end(&f, &b);

	ASSERT_EQ(fg_open(&f, &r), 0);
	const struct rlog_reader_info *info = rlog_reader_info(r);
	ASSERT_EQ(info->tick_source, 7);
	ASSERT_EQ_U64(info->tick_freq_hz, 2000000000u);
	ASSERT_STREQ(info->session_name, "origin");
	ASSERT_EQ(rlog_reader_damage_count(r), 0);
	ASSERT_EQ(rlog_reader_next(r, &ev), 1);
	ASSERT_EQ(ev.id, 2000);
	ASSERT_EQ(ev.time_ns, 10); /* 20 ticks after sync_ticks at 2 GHz */
	ASSERT_EQ(rlog_reader_next(r, &ev), 1);
	ASSERT_EQ(ev.id, RLOG_ID_LOG_MARKER);
	ASSERT_EQ(ev.time_ns, 250); /* the record's own time, 500 ticks after the origin */
	ASSERT_EQ(rlog_reader_next(r, &ev), 1);
	ASSERT_EQ(ev.id, RLOG_ID_LOG_MARKER);
	ASSERT_EQ(ev.time_ns, 300);
	struct rlog_marker mk;
	ASSERT_EQ(rlog_event_marker(&ev, &mk), 0);
	ASSERT_STREQ(mk.session_name, "later");
	ASSERT_EQ(rlog_reader_next(r, &ev), 0);
	rlog_reader_close(r);
	fg_file_free(&f);
}

static void test_time(void)
{
	struct fg_file f;
	struct fg_block b;
	struct rlog_reader *r;
	struct rlog_event ev;
	char want[200], got[256];

	/* A record that would take the cursor past 2^64 - 1. */
	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, 1000000000u, S, 0, RLOG_TICK_MONOTONIC, 16384, 4, "wrap");
	fg_block_begin(&b, 10, 11, UINT64_MAX - 10, 0);
	fg_event(&b, 2000, -1, true, (uint32_t)(UINT64_MAX - 5), NULL, 0); /* fine: 2^64 - 6 */
	size_t rec = fg_event(&b, 2000, -1, true, (uint32_t)(UINT64_MAX - 5) + 10, NULL, 0);
	size_t at = fg_block_end(&f, &b);
	snprintf(want, sizeof(want), "damaged block at offset %zu: record at offset %zu would take "
		 "the time past 2^64 - 1 (skipped 2 records)", at, at + FG_BLOCK_HDR + rec);
	ASSERT_STREQ(damage_of(&f, got, sizeof(got)), want);
	fg_file_free(&f);

	/* 30 GHz (above 2^64 / 10^9): ns = ticks / 30 exactly, and far after
	 * the origin the clamp at 2^63 - 1; far before it, -(2^63 - 1). */
	uint64_t far = UINT64_C(1) << 62;
	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, 30000000000ull, far, 0, RLOG_TICK_TSC, 16384, 4, "fast");
	fg_block_begin(&b, 10, 11, far, 0);
	fg_event(&b, 2000, -1, true, (uint32_t)far, NULL, 0);
	fg_time_sync(&b, far + (UINT64_C(1) << 40) + 12345);
	fg_time_sync(&b, far - 12345);
	fg_block_end(&f, &b);
	fg_block_begin(&b, 10, 12, 0, 0);
	fg_time_sync(&b, UINT64_MAX);
	fg_time_sync(&b, 0);
	fg_block_end(&f, &b);
	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_EQ(rlog_reader_set_flags(r, RLOG_READER_TIME_SYNC), 0);
	int64_t ns[6];
	int n = 0;
	while (n < 6 && rlog_reader_next(r, &ev) == 1)
		if (ev.id != RLOG_ID_LOG_MARKER)
			ns[n++] = ev.time_ns;
	ASSERT_EQ(n, 5);
	/* Thread 11 first (its first record is at the origin, thread 12's at
	 * 2^64 - 1), each thread in record order, its time going back. */
	ASSERT_EQ(ns[0], 0);
	ASSERT_EQ(ns[1], (int64_t)(((UINT64_C(1) << 40) + 12345) / 30));
	ASSERT_EQ(ns[2], -(int64_t)(12345 / 30));          /* -411.5: toward zero */
	ASSERT_EQ(ns[3], (int64_t)((UINT64_MAX - far) / 30));
	ASSERT_EQ(ns[4], -(int64_t)(far / 30));
	ASSERT_EQ(ns[3], INT64_C(461168601842738790));       /* by hand: (2^64-1-2^62)/30 */
	rlog_reader_close(r);
	fg_file_free(&f);

	/* 1 Hz: 2^40 ticks after the origin is past 2^63 ns: clamped. */
	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, 1, 0, 0, RLOG_TICK_TSC, 16384, 4, "slow");
	fg_block_begin(&b, 10, 11, 0, 0);
	fg_time_sync(&b, UINT64_C(1) << 40);
	fg_event(&b, 2000, -1, true, 0, NULL, 0);
	fg_block_end(&f, &b);
	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_EQ(rlog_reader_next(r, &ev), 1);
	ASSERT_EQ(ev.id, RLOG_ID_LOG_MARKER);
	ASSERT_EQ(rlog_reader_next(r, &ev), 1);
	ASSERT_EQ(ev.time_ns, INT64_MAX);
	rlog_reader_close(r);
	fg_file_free(&f);

	/* A thread whose time goes back (a TIME_SYNC to an earlier time) keeps
	 * its record order; the merge places the other thread by time. */
	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, 1000000000u, S, 0, RLOG_TICK_MONOTONIC, 16384, 4, "back");
	fg_block_begin(&b, 10, 11, S, 0);
	fg_event(&b, 1100, -1, true, S + 100, NULL, 0);
	fg_time_sync(&b, S + 50);
	fg_event(&b, 1060, -1, true, S + 60, NULL, 0);
	fg_block_end(&f, &b);
	fg_block_begin(&b, 20, 21, S, 0);
	fg_event(&b, 2055, -1, true, S + 55, NULL, 0);
	fg_event(&b, 2070, -1, true, S + 70, NULL, 0);
	fg_event(&b, 2200, -1, true, S + 200, NULL, 0);
	fg_block_end(&f, &b);
	ASSERT_EQ(fg_open(&f, &r), 0);
	unsigned order[5], k = 0;
	while (k < 5 && rlog_reader_next(r, &ev) == 1)
		if (ev.id != RLOG_ID_LOG_MARKER)
			order[k++] = ev.id;
	ASSERT_EQ(k, 5);
	ok(order[0] == 2055 && order[1] == 2070 && order[2] == 1100 && order[3] == 1060 &&
	   order[4] == 2200, "merge order %u %u %u %u %u: 2055 2070 1100 1060 2200", order[0],
	   order[1], order[2], order[3], order[4]);
	ASSERT_EQ(rlog_reader_damage_count(r), 0);
	rlog_reader_close(r);
	fg_file_free(&f);
}

static void test_blocks(void)
{
	struct fg_file f;
	struct fg_block b;
	char want[200], got[256];

	/* data_size above RLOG_BLOCK_DATA_MAX: an insane header, not a block
	 * running past the end of the file. */
	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, 1000000000u, S, 0, RLOG_TICK_MONOTONIC, 16384, 4, "big");
	fg_block_begin(&b, 10, 11, S, 0);
	fg_event(&b, 2000, -1, true, S + 1, NULL, 0);
	size_t at = fg_block_end(&f, &b);
	fg_put32(f.b.p + at + 32, RLOG_BLOCK_DATA_MAX + 4);
	snprintf(want, sizeof(want), "damaged block at offset %zu: bad block header (data_size "
		 "16777220, record_count 1) (skipped 56 bytes up to the end of the file)", at);
	ASSERT_STREQ(damage_of(&f, got, sizeof(got)), want);
	fg_file_free(&f);

	/* Resync scans at the alignment of the bad block: a block 2 bytes off
	 * (after 102 bytes of garbage) is not found. */
	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, 1000000000u, S, 0, RLOG_TICK_MONOTONIC, 16384, 4, "align");
	size_t g = fg_garbage(&f, 102, 0x33);
	fg_block_begin(&b, 10, 11, S, 0);
	fg_event(&b, 2000, -1, true, S + 1, NULL, 0);
	fg_block_end(&f, &b);
	snprintf(want, sizeof(want), "damaged block at offset %zu: no block header (skipped %zu "
		 "bytes up to the end of the file)", g, f.b.len - g);
	ASSERT_STREQ(damage_of(&f, got, sizeof(got)), want);
	fg_file_free(&f);
}

static void test_schema_names(void)
{
	static const struct fg_field twice[] = { { RLOG_FIELD_U32, 0, "a" }, { RLOG_FIELD_U8, 0, "a" } };
	struct fg_file f;
	struct fg_block b;
	struct rlog_reader *r;
	struct rlog_event ev;
	uint8_t x[5] = { 1, 0, 0, 0, 2 };

	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, 1000000000u, S, 0, RLOG_TICK_MONOTONIC, 16384, 4, "names");
	fg_block_begin(&b, 10, 11, S, 0);
	fg_schema(&b, S + 1, 1500, RLOG_KIND_EVENT, 0, "twice", twice, 2);
	fg_event(&b, 1500, -1, true, S + 2, x, 5);
	fg_block_end(&f, &b);
	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_EQ_U64(rlog_reader_bad_schemas(r, NULL), 1);
	while (rlog_reader_next(r, &ev) == 1 && ev.id != 1500)
		;
	ok(ev.id == 1500 && rlog_reader_schema(r, &ev) == NULL, "the event has no schema: raw");
	ASSERT_EQ(rlog_reader_damage_count(r), 0);
	rlog_reader_close(r);
	fg_file_free(&f);

	const struct rlog_field fl[] = { { RLOG_FIELD_U32, 0, "a" }, { RLOG_FIELD_U8, 0, "a" } };
	struct rlog_schema s = { .id = 1500, .kind = RLOG_KIND_EVENT, .field_count = 2,
				 .name = "twice", .fields = fl };
	ASSERT_EQ(rlog__schema_check(&s), -EINVAL);
	s.field_count = 1;
	ASSERT_EQ(rlog__schema_check(&s), 0);
}

int main(void)
{
	test_block_kinds();
	test_marker();
	test_time();
	test_blocks();
	test_schema_names();
	return done_testing();
}
