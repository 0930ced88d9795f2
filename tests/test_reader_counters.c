/*
 * test_reader_counters - the reader on COUNTER and COUNTER_NAME records
 * crafted byte by byte (tests/filegen.h), as docs/FORMAT.md specifies
 * them (docs/FORMAT.md, "COUNTER and COUNTER_NAME"):
 *   - the value of a record without one follows from the previous record
 *     of its counter; a gap in seq makes it unknown (and says gap) until a
 *     record that carries it; a RESET gives the value itself;
 *   - names: the latest COUNTER_NAME by time, per (pid, counter_id); one
 *     shorter than its name, or with name_len 0, names nothing and is no
 *     damage;
 *   - COUNTER or COUNTER_NAME in a thread block, a COUNTER in a copy block,
 *     a COUNTER shorter than 16 bytes or than 24 with VALUE: the block is
 *     damaged; a COUNTER_NAME in a copy block (the daemon's metadata
 *     copies) names the counter;
 *   - the totals per counter (records, resets, sum of deltas, first delta,
 *     times) and the rows' order; dump's text and JSON lines, stats.
 */
#include <errno.h>
#include <inttypes.h>

#include "ringlog/reader.h"
#include "filegen.h"
#include "proc_run.h"
#include "tap.h"

#define S 1000000u    /* sync ticks */
#define HZ 1000000000u /* 1 tick = 1 ns */

static void marker(struct fg_file *f)
{
	fg_file_init(f);
	fg_marker_block(f, 7, 8, HZ, S, 1790000000000000000ull, RLOG_TICK_MONOTONIC, 16384, 32, "ctr");
}

/* Counter 1 of pid 100: values 10, 15, 17 (a gap), 40 (value), 3 (reset),
 * 8; counter 2 of pid 0. */
static void build(struct fg_file *f)
{
	struct fg_block b;
	marker(f);
	fg_block_begin(&b, 100, 0, S + 100, RLOG_BLOCK_FLAG_DAEMON);
	fg_counter_name(&b, S + 100, 1, RLOG_COUNTER_SRC_APP, RLOG_COUNTER_UNIT_COUNT, 5, 0, "first");
	fg_counter(&b, S + 100, 1, RLOG_COUNTER_FLAG_VALUE, 0, 10, 10, 0);
	fg_block_end(f, &b);
	fg_block_begin(&b, 100, 0, S + 200, RLOG_BLOCK_FLAG_DAEMON);
	fg_counter(&b, S + 200, 1, 0, 1, 5, 0, 0);
	fg_block_end(f, &b);
	fg_block_begin(&b, 100, 0, S + 300, RLOG_BLOCK_FLAG_DAEMON);
	fg_counter(&b, S + 300, 1, 0, 3, 2, 0, 0);  /* seq 2 is missing */
	fg_counter(&b, S + 300, 1, RLOG_COUNTER_FLAG_VALUE, 4, 23, 40, 0);
	fg_counter(&b, S + 400, 1, RLOG_COUNTER_FLAG_RESET, 5, 3, 0, 0); /* no VALUE: a reset counts from 0 */
	fg_counter(&b, S + 500, 1, 0, 6, 5, 0, 0);
	/* A later name replaces the first; a broken one names nothing. */
	fg_counter_name(&b, S + 500, 1, RLOG_COUNTER_SRC_APP, RLOG_COUNTER_UNIT_COUNT, 6, 0, "second");
	fg_counter_name(&b, S + 500, 3, RLOG_COUNTER_SRC_APP, 0, 9, 0, "short");
	fg_counter_name(&b, S + 500, 4, RLOG_COUNTER_SRC_APP, 0, 0, 0, "");
	fg_block_end(f, &b);
	fg_block_begin(&b, 0, 0, S + 150, RLOG_BLOCK_FLAG_DAEMON);
	fg_counter_name(&b, S + 150, 2, RLOG_COUNTER_SRC_SYSTEM, RLOG_COUNTER_UNIT_NS, 8, 1,
			"system.x");
	fg_counter(&b, S + 150, 2, RLOG_COUNTER_FLAG_VALUE, 0, 1000, 5000, 0);
	fg_counter(&b, S + 1150, 2, 0, 1, 2000, 0, 0);
	fg_block_end(f, &b);
}

static void test_values(void)
{
	struct fg_file f;
	struct rlog_reader *r;
	struct rlog_event ev;
	struct rlog_counter c;
	build(&f);
	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_EQ_U64(rlog_reader_damage_count(r), 0);
	static const struct {
		uint64_t delta, value;
		bool known, gap;
	} want[6] = { { 10, 10, true, false }, { 5, 15, true, false }, { 2, 0, false, true },
		      { 23, 40, true, false }, { 3, 3, true, false }, { 5, 8, true, false } };
	int n1 = 0, n2 = 0, bad = 0;
	while (rlog_reader_next(r, &ev) == 1) {
		if (ev.flagged || ev.id != RLOG_ID_COUNTER)
			continue;
		ok(ev.from_daemon && ev.tid == 0, "COUNTER records are the daemon's, tid 0");
		ASSERT_EQ(rlog_event_counter(r, &ev, &c), 0);
		if (ev.pid == 100) {
			if (n1 < 6) {
				bad += c.counter_id != 1 || c.delta != want[n1].delta ||
				       c.value_known != want[n1].known || c.gap != want[n1].gap ||
				       (c.value_known && c.value != want[n1].value);
				bad += c.seq != (uint16_t)(n1 < 2 ? n1 : n1 + 1);
			}
			ASSERT_STREQ(c.name ? c.name : "(null)", "second");
			n1++;
		} else {
			ASSERT_EQ(ev.pid, 0);
			ASSERT_STREQ(c.name ? c.name : "(null)", "system.x");
			ASSERT_EQ(c.source, RLOG_COUNTER_SRC_SYSTEM);
			ASSERT_EQ(c.unit, RLOG_COUNTER_UNIT_NS);
			ASSERT_EQ(c.info, RLOG_COUNTER_INFO_USER);
			ASSERT_EQ_U64(c.value, n2 == 0 ? 5000 : 7000);
			n2++;
		}
		/* An earlier event, asked again: only what its record carries. */
		struct rlog_event copy = ev;
		copy.offset = 1;
		ASSERT_EQ(rlog_event_counter(r, &copy, &c), 0);
		ok(c.value_known == ((c.flags & (RLOG_COUNTER_FLAG_VALUE | RLOG_COUNTER_FLAG_RESET)) != 0),
		   "off the reader's path, a value only from the record");
	}
	ASSERT_EQ(n1, 6);
	ASSERT_EQ(n2, 2);
	ASSERT_EQ(bad, 0);
	uint8_t src, unit, info;
	ASSERT_STREQ(rlog_reader_counter_name(r, 100, 1, &src, &unit, &info), "second");
	ok(rlog_reader_counter_name(r, 100, 3, NULL, NULL, NULL) == NULL, "a short name names nothing");
	ok(rlog_reader_counter_name(r, 100, 4, &src, &unit, &info) == NULL && src == 0,
	   "name_len 0 names nothing");
	ok(rlog_reader_counter_name(r, 0, 1, NULL, NULL, NULL) == NULL, "names are per process");
	/* Argument checks. */
	ASSERT_EQ(rlog_event_counter(r, NULL, &c), -EINVAL);
	ev.id = RLOG_ID_DATA_LOSS;
	ASSERT_EQ(rlog_event_counter(r, &ev, &c), -EINVAL);
	rlog_reader_close(r);
	fg_file_free(&f);
}

/* The converters on the file at path: a Chrome counter track per counter
 * (its value; a record whose value is unknown is left out), and the CTF
 * trace's COUNTER events as babeltrace2 prints them. */
static void test_convert(const char *path)
{
	struct run o = RUN("convert", path, "--to", "chrome", "-o", "-");
	ASSERT_EQ(o.status, 0);
	ASSERT_CONTAINS(o.out,
		"{\"name\":\"second\",\"cat\":\"counter\",\"ph\":\"C\",\"ts\":0.100,\"pid\":100,"
		"\"tid\":0,\"args\":{\"value\":10}},\n"
		"{\"name\":\"system.x\",\"cat\":\"counter\",\"ph\":\"C\",\"ts\":0.150,\"pid\":0,"
		"\"tid\":0,\"args\":{\"value\":5000}},\n"
		"{\"name\":\"second\",\"cat\":\"counter\",\"ph\":\"C\",\"ts\":0.200,\"pid\":100,"
		"\"tid\":0,\"args\":{\"value\":15}},\n"
		"{\"name\":\"second\",\"cat\":\"counter\",\"ph\":\"C\",\"ts\":0.300,\"pid\":100,"
		"\"tid\":0,\"args\":{\"value\":40}},\n");
	ASSERT_CONTAINS(o.out, "\"ts\":0.400,\"pid\":100,\"tid\":0,\"args\":{\"value\":3}},\n");
	ASSERT_CONTAINS(o.out, "\"ts\":1.150,\"pid\":0,\"tid\":0,\"args\":{\"value\":7000}},\n");
	ASSERT_CONTAINS(o.out, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,"
			       "\"args\":{\"name\":\"system\"}}\n");
	size_t tracks = 0;
	for (const char *p = o.out; (p = strstr(p, "\"ph\":\"C\"")) != NULL; p++)
		tracks++;
	ok(tracks == 7, "7 counter events: the record whose value is unknown is left out (%zu)",
	   tracks);
	run_free(&o);

	char dir[] = "/tmp/rlog-ctrctf-XXXXXX";
	ASSERT_EQ(mkdtemp(dir) != NULL, 1);
	o = RUN("convert", path, "--to", "ctf", "-o", dir);
	ASSERT_EQ(o.status, 0);
	ASSERT_CONTAINS(o.out, "counter_records: 8\ncounter_values_unknown: 1\n");
	run_free(&o);
	if (access("/usr/bin/babeltrace2", X_OK) == 0) {
		o = proc_run((const char *const[]){ "babeltrace2", dir, NULL });
		ASSERT_EQ(o.status, 0);
		ASSERT_CONTAINS(o.out, "COUNTER: { pid = 100, tid = 0, process_name = \"\", "
				       "thread_name = \"\" }, { counter = 1, name = \"second\", flags = 0, "
				       "seq = 3, delta = 2, value_known = 0, value = 0 }\n");
		ASSERT_CONTAINS(o.out, "COUNTER: { pid = 0, tid = 0, process_name = \"\", "
				       "thread_name = \"\" }, { counter = 2, name = \"system.x\", "
				       "flags = 0, seq = 1, delta = 2000, value_known = 1, value = 7000 }\n");
		size_t n = 0;
		for (const char *p = o.out; (p = strstr(p, ") COUNTER: ")) != NULL; p++)
			n++;
		ok(n == 8, "babeltrace2 reads the 8 COUNTER records (%zu)", n);
		run_free(&o);
	} else {
		ok(1, "# SKIP babeltrace2 is not installed (scripts/deps.sh installs it)");
	}
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	ASSERT_EQ(system(cmd), 0);
}

static void test_counts(void)
{
	struct fg_file f;
	struct rlog_reader *r;
	struct rlog_count_counter k;
	build(&f);
	char path[64];
	fg_tmpname(path, "ctr");
	ASSERT_EQ(fg_write(&f, path), 0);
	ASSERT_EQ(rlog_reader_open_count(path, &r), 0);
	/* Rows in (pid, counter_id) order: the system's counter 2, then 100's 1. */
	static const struct {
		uint32_t pid, id;
		uint64_t records, resets, total, first_delta, first_ticks, last_ticks;
		const char *name;
	} rows[2] = { { 0, 2, 2, 0, 3000, 1000, S + 150, S + 1150, "system.x" },
		      { 100, 1, 6, 1, 48, 10, S + 100, S + 500, "second" } };
	for (size_t i = 0; i < 2; i++) {
		ASSERT_EQ(rlog_reader_count_counter(r, i, &k), 0);
		ok(k.pid == rows[i].pid && k.counter_id == rows[i].id && k.records == rows[i].records &&
		   k.resets == rows[i].resets && k.total == rows[i].total &&
		   k.first_delta == rows[i].first_delta && k.first_ticks == rows[i].first_ticks &&
		   k.last_ticks == rows[i].last_ticks,
		   "row %zu: pid %u counter %u, %" PRIu64 " records, %" PRIu64 " resets, total %" PRIu64
		   ", first delta %" PRIu64, i, k.pid, k.counter_id, k.records, k.resets, k.total,
		   k.first_delta);
		ASSERT_STREQ(k.name ? k.name : "(null)", rows[i].name);
	}
	ASSERT_EQ(rlog_reader_count_counter(r, 2, &k), -ERANGE);
	struct rlog_count t;
	ASSERT_EQ(rlog_reader_count(r, &t), 0);
	ASSERT_EQ_U64(t.events, 0); /* counters are not events */
	rlog_reader_close(r);

	/* The tools. */
	struct run o = RUN("dump", path);
	ASSERT_EQ(o.status, 0);
	/* One name per counter: the latest (as for threads). */
	ASSERT_CONTAINS(o.out, "           100     100       0 COUNTER      second delta=10 value=10\n"
			       "           150       0       0 COUNTER      system.x delta=1000 value=5000\n"
			       "           200     100       0 COUNTER      second delta=5 value=15\n"
			       "           300     100       0 COUNTER      second delta=2 value=? gap\n");
	run_free(&o);
	o = RUN("dump", path, "--all", "--pid", "0");
	ASSERT_CONTAINS(o.out, "COUNTER_NAME id=2 name=system.x source=system unit=ns user-only\n");
	run_free(&o);
	o = RUN("dump", path, "--format", "json", "--pid", "100");
	ASSERT_CONTAINS(o.out, "{\"time_ns\":300,\"pid\":100,\"tid\":0,\"id\":32,\"type\":\"counter\","
			       "\"counter\":1,\"name\":\"second\",\"source\":\"app\",\"unit\":\"count\","
			       "\"delta\":2,\"value\":null,\"gap\":true}\n");
	ASSERT_CONTAINS(o.out, "\"delta\":3,\"value\":3,\"reset\":true}\n");
	run_free(&o);
	o = RUN("stats", path);
	ASSERT_EQ(o.status, 0);
	/* Rates: (3000 - 1000) over 1000 ns; (48 - 10) over 400 ns. */
	ASSERT_CONTAINS(o.out, "COUNTER   PID  RECORDS  RESETS  TOTAL        RATE/S  UNIT\n"
			       "system.x    0        2       0   3000  2000000000.0  ns\n"
			       "second    100        6       1     48    95000000.0  count\n");
	run_free(&o);
	test_convert(path);
	unlink(path);
	fg_file_free(&f);
}

/* Records where they may not be, or too short: damage. */
static void test_rules(void)
{
	struct {
		const char *what;
		uint16_t flags; /* the bad block's */
		int kind;       /* 0 COUNTER, 1 COUNTER_NAME */
		unsigned len;   /* COUNTER Length */
		uint16_t cflags;
	} cases[] = {
		{ "COUNTER in a thread block", 0, 0, 0, 0 },
		{ "COUNTER_NAME in a thread block", 0, 1, 0, 0 },
		{ "COUNTER of 12 bytes", RLOG_BLOCK_FLAG_DAEMON, 0, 12, 0 },
		{ "COUNTER with VALUE of 16 bytes", RLOG_BLOCK_FLAG_DAEMON, 0, 16, 1 },
		{ "COUNTER in a copy block", RLOG_BLOCK_FLAG_METADATA, 0, 0, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct fg_file f;
		struct fg_block b;
		struct rlog_reader *r;
		marker(&f);
		fg_block_begin(&b, 100, cases[i].flags ? 0 : 101, S + 10, cases[i].flags);
		if (cases[i].kind == 0)
			fg_counter(&b, S + 10, 1, cases[i].cflags, 0, 1, 1, cases[i].len);
		else
			fg_counter_name(&b, S + 10, 1, 1, 0, 1, 0, "x");
		fg_block_end(&f, &b);
		fg_block_begin(&b, 100, 0, S + 20, RLOG_BLOCK_FLAG_DAEMON);
		fg_counter(&b, S + 20, 1, 1, 0, 1, 1, 0); /* a good one after it */
		fg_block_end(&f, &b);
		ASSERT_EQ(fg_open(&f, &r), 0);
		ok(rlog_reader_damage_count(r) == 1, "%s: one damaged block", cases[i].what);
		struct rlog_event ev;
		int counters = 0;
		while (rlog_reader_next(r, &ev) == 1)
			counters += !ev.flagged && ev.id == RLOG_ID_COUNTER;
		ok(counters == 1, "%s: the good record is read, the bad one not", cases[i].what);
		rlog_reader_close(r);
		fg_file_free(&f);
	}
	/* A copy block's COUNTER_NAME names the counter. */
	struct fg_file f;
	struct fg_block b;
	struct rlog_reader *r;
	marker(&f);
	fg_block_begin(&b, 100, 0, S + 5, RLOG_BLOCK_FLAG_METADATA);
	fg_counter_name(&b, S + 5, 1, RLOG_COUNTER_SRC_PROC, 0, 6, 0, "copied");
	fg_block_end(&f, &b);
	fg_block_begin(&b, 100, 0, S + 20, RLOG_BLOCK_FLAG_DAEMON);
	fg_counter(&b, S + 20, 1, 0, 7, 3, 0, 0);
	fg_block_end(&f, &b);
	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_EQ_U64(rlog_reader_damage_count(r), 0);
	ASSERT_STREQ(rlog_reader_counter_name(r, 100, 1, NULL, NULL, NULL), "copied");
	rlog_reader_close(r);
	fg_file_free(&f);
	/* The producer's side: the library refuses the daemon's IDs. */
	ASSERT_EQ(rlog_record_kind(RLOG_ID_COUNTER, false), RLOG_RECORD_COUNTER);
	ASSERT_EQ(rlog_record_kind(RLOG_ID_COUNTER, true), RLOG_RECORD_EVENT);
	ASSERT_EQ(rlog_record_kind(RLOG_ID_COUNTER_NAME, false), RLOG_RECORD_METADATA);
}

int main(void)
{
	test_values();
	test_counts();
	test_rules();
	return done_testing();
}
