/*
 * test_stats - `ringlog stats` on crafted files, exact numbers: events and
 * bytes per event name (a schema name merged across processes, a raw ID,
 * a reserved name) and per thread (names, losses), duration and rate,
 * losses by cause, metadata records; the text tables exactly and --json
 * parsed back; then a damaged block and a truncated last block (what is
 * left, one stderr line per region, exit 1), a trace without events, and
 * usage errors.
 */
#include "filegen.h"
#include "proc_run.h"
#include "json.h"
#include "tap.h"

#define S 1000000ull
#define R 1795341600123456789ull /* 2026-11-22T10:00:00.123456789Z */

struct layout {
	size_t io_block;   /* thread 102's block */
	size_t last_block; /* thread 301's block, the last of the file */
	size_t last_cut;   /* a cut inside its third record */
};

static void build(struct fg_file *f, struct layout *lay)
{
	static const struct fg_field v[] = { { RLOG_FIELD_U32, 0, "v" } };
	struct fg_block b;
	uint32_t x = 7;
	uint64_t q = 9;

	fg_file_init(f);
	fg_marker_block(f, 1, 1, 1000000000u, S, R, RLOG_TICK_TSC, 16384, 8, "stats");

	/* 100/101: 3 metadata records, 16 events, 208 bytes. */
	fg_block_begin(&b, 100, 101, S, 0);
	fg_process_name(&b, S + 1, "server");
	fg_thread_name(&b, S + 2, "main");
	fg_schema(&b, S + 3, 1025, RLOG_KIND_EVENT, 0, "http.request", v, 1);
	for (int i = 0; i < 10; i++)
		fg_event(&b, 1025, -1, true, (uint32_t)(S + 10 + i), &x, 4);   /* 12 bytes */
	for (int i = 0; i < 3; i++)
		fg_event(&b, 1030, -1, true, (uint32_t)(S + 20 + i), &q, 8);   /* 16 bytes */
	for (int i = 0; i < 2; i++)
		fg_event(&b, RLOG_ID_RAW_U32, -1, true, (uint32_t)(S + 23 + i), &x, 4);
	fg_event(&b, 1025, 1, true, (uint32_t)(S + 25), &x, 4);             /* 16 bytes */
	fg_block_end(f, &b);

	/* 100/102: 1 metadata record, 4 events of 12 bytes. */
	fg_block_begin(&b, 100, 102, S, 0);
	fg_thread_name(&b, S + 5, "io");
	for (int i = 0; i < 4; i++)
		fg_event(&b, 1031, -1, true, (uint32_t)(S + 50 + i), "z", 1);
	lay->io_block = fg_block_end(f, &b);

	/* 100/101 again: a TIME_SYNC (not counted), 5 events of 12 bytes. */
	fg_block_begin(&b, 100, 101, S + 25, 0);
	fg_time_sync(&b, S + 99);
	for (int i = 0; i < 5; i++)
		fg_event(&b, 1025, -1, true, (uint32_t)(S + 100 + i), &x, 4);
	fg_block_end(f, &b);

	/* The daemon's losses: thread 101, thread 201, and an orphan. */
	fg_block_begin(&b, 100, 101, S + 104, 0x0001);
	fg_data_loss(&b, (uint32_t)(S + 104), 5, 80, RLOG_LOSS_NO_BUFFER);
	fg_data_loss(&b, (uint32_t)(S + 104), 2, 32, RLOG_LOSS_NESTED);
	fg_block_end(f, &b);
	fg_block_begin(&b, 200, 201, S, 0x0001);
	fg_data_loss(&b, (uint32_t)(S + 60), 7, 112, RLOG_LOSS_NO_BUFFER);
	fg_block_end(f, &b);
	fg_block_begin(&b, 1, 1, S, 0x0001);
	fg_data_loss(&b, (uint32_t)(S + 61), 1, 16, RLOG_LOSS_NO_SLOT);
	fg_block_end(f, &b);

	/* 200/201: 1025 without a schema in process 200: 6 events. */
	fg_block_begin(&b, 200, 201, S, 0);
	for (int i = 0; i < 6; i++)
		fg_event(&b, 1025, -1, true, (uint32_t)(S + 30 + i), &x, 4);
	fg_block_end(f, &b);

	/* 300/301: its own http.request schema for 1025: 2 events, last. */
	fg_block_begin(&b, 300, 301, S, 0);
	size_t rec = fg_schema(&b, S + 40, 1025, RLOG_KIND_EVENT, 0, "http.request", v, 1);
	size_t e1 = fg_event(&b, 1025, -1, true, (uint32_t)(S + 41), &x, 4);
	fg_event(&b, 1025, -1, true, (uint32_t)(S + 42), &x, 4);
	(void)rec;
	lay->last_block = fg_block_end(f, &b);
	lay->last_cut = lay->last_block + FG_BLOCK_HDR + e1 + 12 + 5;
}

static const char *const TEXT_BODY =
	"duration  0.000000103 s (from 1 ns to 104 ns)\n"
	"events    33 (412 bytes)\n"
	"rate      320388349.5 events/s\n"
	"threads   5\n"
	"lost      15 events (240 bytes) in 4 DATA_LOSS records\n"
	"damaged   0 regions (0 records skipped)\n"
	"metadata  5 records\n"
	"\n"
	"EVENT           ID  EVENTS  BYTES\n"
	"http.request  1025      18    220\n"
	"1025          1025       6     72\n"
	"1031          1031       4     48\n"
	"1030          1030       3     48\n"
	"RAW_U32         20       2     24\n"
	"\n"
	"PID  TID  EVENTS  BYTES  LOST  LOST_BYTES  THREAD  PROCESS\n"
	"  1    1       0      0     1          16  -       -\n"
	"100  101      21    268     7         112  main    server\n"
	"100  102       4     48     0           0  io      server\n"
	"200  201       6     72     7         112  -       -\n"
	"300  301       2     24     0           0  -       -\n"
	"\n"
	"LOSS_CAUSE  RECORDS  EVENTS  BYTES\n"
	"no_buffer         2      12    192\n"
	"nested            1       2     32\n"
	"no_slot           1       1     16\n";

/* Member key of the i-th element of array member arr of o. */
static const char *at_str(const struct json *o, const char *arr, size_t i, const char *key)
{
	const struct json *a = json_get(o, arr);
	return a && a->type == JSON_ARR && i < a->n ? json_str(a->items[i], key) : NULL;
}

static const char *at_num(const struct json *o, const char *arr, size_t i, const char *key)
{
	const struct json *a = json_get(o, arr);
	return a && a->type == JSON_ARR && i < a->n ? json_num(a->items[i], key) : NULL;
}

static size_t arr_len(const struct json *o, const char *arr)
{
	const struct json *a = json_get(o, arr);
	return a && a->type == JSON_ARR ? a->n : (size_t)-1;
}

static struct json *parse(const struct run *r)
{
	char err[128];
	size_t len = strlen(r->out);
	ok(len > 0 && r->out[len - 1] == '\n' && strchr(r->out, '\n') == r->out + len - 1,
	   "--json writes one line");
	struct json *j = json_parse(r->out, len, err, sizeof(err));
	ok(j && j->type == JSON_OBJ, "the output parses as one JSON object%s%s", j ? "" : ": ",
	   j ? "" : err);
	return j;
}

int main(void)
{
	struct fg_file f;
	struct layout lay;
	char path[64], want[4096];
	struct run r;

	build(&f, &lay);
	fg_tmpname(path, "stats");
	BAIL_IF(fg_write(&f, path) < 0, "cannot write %s", path);

	/* Text. */
	r = RUN("stats", path);
	snprintf(want, sizeof(want), "# ringlog stats of %s: session stats, tick source tsc at "
		 "1000000000 Hz, started 2026-11-22T10:00:00.123456789Z\n%s", path, TEXT_BODY);
	ASSERT_STREQ(r.out, want);
	ASSERT_STREQ(r.err, "");
	ASSERT_EQ(r.status, 0);
	run_free(&r);

	/* JSON. */
	r = RUN("stats", "--json", path);
	ASSERT_EQ(r.status, 0);
	struct json *j = parse(&r);
	ASSERT_STREQ(json_str(j, "file"), path);
	ASSERT_STREQ(json_str(j, "session"), "stats");
	ASSERT_STREQ(json_str(j, "tick_source"), "tsc");
	ASSERT_STREQ(json_num(j, "tick_hz"), "1000000000");
	ASSERT_STREQ(json_str(j, "started"), "2026-11-22T10:00:00.123456789Z");
	/* A zero word at +44: not recorded, null (never 0). */
	ASSERT_EQ(json_get(j, "clock_error_ns") ? (int)json_get(j, "clock_error_ns")->type : -1,
		  JSON_NULL);
	ASSERT_EQ(json_get(j, "clock_synchronized") ? (int)json_get(j, "clock_synchronized")->type
						    : -1, JSON_NULL);
	ASSERT_STREQ(json_num(j, "first_ns"), "1");
	ASSERT_STREQ(json_num(j, "last_ns"), "104");
	ASSERT_STREQ(json_num(j, "duration_ns"), "103");
	ASSERT_STREQ(json_num(j, "events"), "33");
	ASSERT_STREQ(json_num(j, "bytes"), "412");
	ASSERT_STREQ(json_num(j, "rate"), "320388349.5");
	ASSERT_STREQ(json_num(j, "metadata_records"), "5");
	ASSERT_STREQ(json_num(j, "bad_schemas"), "0");
	ASSERT_EQ(arr_len(j, "names"), 5);
	static const char *const names[] = { "http.request", "1025", "1031", "1030", "RAW_U32" };
	static const char *const ids[] = { "1025", "1025", "1031", "1030", "20" };
	static const char *const nev[] = { "18", "6", "4", "3", "2" };
	static const char *const nby[] = { "220", "72", "48", "48", "24" };
	for (size_t i = 0; i < 5; i++) {
		ASSERT_STREQ(at_str(j, "names", i, "name"), names[i]);
		ASSERT_STREQ(at_num(j, "names", i, "id"), ids[i]);
		ASSERT_STREQ(at_num(j, "names", i, "events"), nev[i]);
		ASSERT_STREQ(at_num(j, "names", i, "bytes"), nby[i]);
	}
	ASSERT_EQ(arr_len(j, "threads"), 5);
	ASSERT_STREQ(at_num(j, "threads", 1, "pid"), "100");
	ASSERT_STREQ(at_num(j, "threads", 1, "tid"), "101");
	ASSERT_STREQ(at_str(j, "threads", 1, "name"), "main");
	ASSERT_STREQ(at_str(j, "threads", 1, "process"), "server");
	ASSERT_STREQ(at_num(j, "threads", 1, "events"), "21");
	ASSERT_STREQ(at_num(j, "threads", 1, "bytes"), "268");
	ASSERT_STREQ(at_num(j, "threads", 1, "metadata_records"), "3");
	ASSERT_STREQ(at_num(j, "threads", 1, "lost_events"), "7");
	ASSERT_STREQ(at_num(j, "threads", 1, "lost_bytes"), "112");
	ASSERT_STREQ(at_num(j, "threads", 1, "first_ns"), "1");
	ASSERT_STREQ(at_num(j, "threads", 1, "last_ns"), "104");
	ASSERT_STREQ(at_num(j, "threads", 0, "lost_events"), "1");
	{
		const struct json *t0 = json_get(j, "threads")->items[0];
		ok(json_get(t0, "name")->type == JSON_NULL && json_get(t0, "first_ns")->type == JSON_NULL,
		   "a thread with only daemon records: no name, no times");
	}
	ASSERT_STREQ(at_str(j, "threads", 2, "name"), "io");
	ASSERT_STREQ(at_num(j, "threads", 3, "events"), "6");
	ASSERT_STREQ(json_num(j, "lost_events"), "15");
	ASSERT_STREQ(json_num(j, "lost_bytes"), "240");
	ASSERT_STREQ(json_num(j, "loss_records"), "4");
	ASSERT_EQ(arr_len(j, "losses"), 3);
	ASSERT_STREQ(at_str(j, "losses", 0, "cause"), "no_buffer");
	ASSERT_STREQ(at_num(j, "losses", 0, "records"), "2");
	ASSERT_STREQ(at_num(j, "losses", 0, "events"), "12");
	ASSERT_STREQ(at_num(j, "losses", 0, "bytes"), "192");
	ASSERT_STREQ(at_str(j, "losses", 2, "cause"), "no_slot");
	ASSERT_EQ(arr_len(j, "damage"), 0);
	json_free(j);
	run_free(&r);

	/* A damaged block: thread 102's 4 events and its name are gone. */
	f.b.p[lay.io_block + FG_BLOCK_HDR + 20] ^= 0x01;
	BAIL_IF(fg_write(&f, path) < 0, "cannot write %s", path);
	r = RUN("stats", path);
	ASSERT_CONTAINS(r.out, "events    29 (364 bytes)\n");
	ASSERT_CONTAINS(r.out, "threads   4\n");
	ASSERT_CONTAINS(r.out, "damaged   1 regions (5 records skipped)\n");
	ASSERT_CONTAINS(r.out, "metadata  4 records\n");
	snprintf(want, sizeof(want), "\nDAMAGE_OFFSET  LENGTH  RECORDS_SKIPPED  KIND\n"
		 "%13zu  %6d  %15d  damaged\n", lay.io_block, 48 + 12 + 4 * 12, 5);
	ASSERT_CONTAINS(r.out, want);
	snprintf(want, sizeof(want), "ringlog: stats %s: damaged block at offset %zu: checksum "
		 "mismatch (skipped 5 records)\n", path, lay.io_block);
	ASSERT_STREQ(r.err, want);
	ASSERT_EQ(r.status, 1);
	run_free(&r);
	r = RUN("stats", path, "--json");
	ASSERT_EQ(r.status, 1);
	j = parse(&r);
	ASSERT_STREQ(json_num(j, "events"), "29");
	ASSERT_EQ(arr_len(j, "damage"), 1);
	snprintf(want, sizeof(want), "%zu", lay.io_block);
	ASSERT_STREQ(at_num(j, "damage", 0, "offset"), want);
	ASSERT_STREQ(at_num(j, "damage", 0, "records_skipped"), "5");
	ASSERT_STREQ(at_str(j, "damage", 0, "kind"), "damaged");
	json_free(j);
	run_free(&r);
	f.b.p[lay.io_block + FG_BLOCK_HDR + 20] ^= 0x01;

	/* Truncated inside the last block's third record: 2 of 3 records
	 * recovered (the schema and one event). */
	BAIL_IF(fg_write_len(&f, path, lay.last_cut) < 0, "cannot write %s", path);
	r = RUN("stats", path);
	ASSERT_CONTAINS(r.out, "events    32 (400 bytes)\n");
	ASSERT_CONTAINS(r.out, "http.request  1025      17    208\n");
	snprintf(want, sizeof(want), "ringlog: stats %s: truncated block at offset %zu: %zu of %zu "
		 "data bytes present, checksum not verifiable (recovered 2 records, skipped 1 "
		 "records)\n", path, lay.last_block, lay.last_cut - lay.last_block - FG_BLOCK_HDR,
		 f.b.len - lay.last_block - FG_BLOCK_HDR);
	ASSERT_STREQ(r.err, want);
	ASSERT_EQ(r.status, 1);
	run_free(&r);
	r = RUN("stats", path, "--json");
	j = parse(&r);
	ASSERT_STREQ(at_str(j, "damage", 0, "kind"), "truncated");
	ASSERT_STREQ(at_num(j, "damage", 0, "records_skipped"), "1");
	json_free(j);
	run_free(&r);
	fg_file_free(&f);

	/* Nothing but the LOG_MARKER. */
	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, 1000000000u, S, R, RLOG_TICK_MONOTONIC, 16384, 8, "empty");
	BAIL_IF(fg_write(&f, path) < 0, "cannot write %s", path);
	fg_file_free(&f);
	r = RUN("stats", path);
	snprintf(want, sizeof(want), "# ringlog stats of %s: session empty, tick source monotonic at "
		 "1000000000 Hz, started 2026-11-22T10:00:00.123456789Z\n"
		 "duration  0 s (no events)\n"
		 "events    0 (0 bytes)\n"
		 "rate      -\n"
		 "threads   0\n"
		 "lost      0 events (0 bytes) in 0 DATA_LOSS records\n"
		 "damaged   0 regions (0 records skipped)\n"
		 "metadata  0 records\n"
		 "\n"
		 "EVENT  ID  EVENTS  BYTES\n"
		 "\n"
		 "PID  TID  EVENTS  BYTES  LOST  LOST_BYTES  THREAD  PROCESS\n", path);
	ASSERT_STREQ(r.out, want);
	ASSERT_EQ(r.status, 0);
	run_free(&r);
	r = RUN("stats", "--json", path);
	j = parse(&r);
	ok(json_get(j, "rate") && json_get(j, "rate")->type == JSON_NULL, "rate null");
	ok(json_get(j, "first_ns") && json_get(j, "first_ns")->type == JSON_NULL, "first_ns null");
	ASSERT_STREQ(json_num(j, "duration_ns"), "0");
	json_free(j);
	run_free(&r);
	unlink(path);

	/* Errors. */
	r = RUN("stats", "/nonexistent/x.rlog");
	ASSERT_STREQ(r.err, "ringlog: stats /nonexistent/x.rlog: No such file or directory\n");
	ASSERT_EQ(r.status, 1);
	run_free(&r);
	const char *const *usages[] = {
		(const char *const[]){ "stats", NULL },
		(const char *const[]){ "stats", "--csv", "a", NULL },
	};
	/* What was not understood, then the usage line. */
	/* (Several files are several hosts: test_hosts.) */
	const char *why[] = { "missing FILE",
			      "unknown option '--csv' (see 'ringlog help stats')" };
	for (size_t i = 0; i < sizeof(usages) / sizeof(usages[0]); i++) {
		r = run_argv(usages[i]);
		char want[256];
		snprintf(want, sizeof want, "ringlog: stats: %s\nusage: ringlog stats FILE [--sched] [--json]\n",
			 why[i]);
		ASSERT_STREQ(r.err, want);
		ASSERT_STREQ(r.out, "");
		ASSERT_EQ(r.status, 2);
		run_free(&r);
	}
	return done_testing();
}
