/*
 * test_convert_ctf - `ringlog convert --to ctf` on the crafted file of
 * test_convert_fixture.h, read back by babeltrace2 (Debian's, installed by
 * scripts/deps.sh; the test is skipped without it): babeltrace2's text
 * output is compared line for line with lines this test builds from the
 * reader's events (names, every field value, the same nanoseconds), and
 * babeltrace2's own "Tracer discarded N events" warnings with the
 * DATA_LOSS records.  Also the counter sink's totals, the packet and stream
 * counts, and the refusal of a directory that is not empty (--force).
 *
 * Needs the built `ringlog` binary in $RINGLOG_BIN.
 */
#include "harness.h"

#include <math.h>

#include "record.h"
#include "tap.h"
#include "test_convert_fixture.h"
#include "proc_run.h"

/* ------------------------------------------------------------------ */
/* What babeltrace2 should print for an event: built from the reader     */
/* ------------------------------------------------------------------ */

struct sb {
	char *p;
	size_t len, cap;
};

static void sb_add(struct sb *b, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (b->p && (size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		b->cap = b->cap ? b->cap * 2 + (size_t)n : 1024 + (size_t)n;
		if (!(b->p = realloc(b->p, b->cap)))
			abort();
	}
}

/* A string as babeltrace2's pretty sink prints it: up to the first NUL
 * (where a CTF string ends), '\', '"', '\'' and '?' backslashed, control
 * characters as C escapes or \xHH, other bytes (UTF-8) as they are. */
static void sb_bt_string(struct sb *b, const uint8_t *p, size_t n)
{
	sb_add(b, "\"");
	for (size_t i = 0; i < n && p[i]; i++) {
		uint8_t c = p[i];
		switch (c) {
		case '\\': sb_add(b, "\\\\"); break;
		case '"': sb_add(b, "\\\""); break;
		case '\'': sb_add(b, "\\'"); break;
		case '?': sb_add(b, "\\?"); break;
		case '\a': sb_add(b, "\\a"); break;
		case '\b': sb_add(b, "\\b"); break;
		case '\f': sb_add(b, "\\f"); break;
		case '\n': sb_add(b, "\\n"); break;
		case '\r': sb_add(b, "\\r"); break;
		case '\t': sb_add(b, "\\t"); break;
		case '\v': sb_add(b, "\\v"); break;
		default:
			if (c < 0x20 || c == 0x7f)
				sb_add(b, "\\x%02x", c);
			else
				sb_add(b, "%c", c);
		}
	}
	sb_add(b, "\"");
}

static void sb_u8_array(struct sb *b, const uint8_t *p, size_t n)
{
	sb_add(b, "[");
	for (size_t i = 0; i < n; i++)
		sb_add(b, "%s [%zu] = %u", i ? "," : "", i, p[i]);
	sb_add(b, n ? " ]" : " ]");
}

static const char *cause_name(uint32_t c)
{
	static const char *const n[] = { "",	    "no_buffer", "nested",	"corrupt",
					 "log_write", "no_slot",   "real_time", "overwritten" };
	return c >= 1 && c <= 7 ? n[c] : NULL;
}

/* Whether ev matches its schema s, by the rules of `ringlog dump`
 * (include/ringlog/format.h): a span's record is FLAGGED with flag BEGIN (the
 * fields) or END (no payload); any other holds exactly the fields. */
static bool matches(const struct rlog_schema *s, const struct rlog_event *ev,
		    struct rlog_value *v, bool *end)
{
	*end = false;
	if (s->kind == RLOG_KIND_SPAN) {
		if (!ev->flagged || (ev->flag != RLOG_SPAN_BEGIN && ev->flag != RLOG_SPAN_END))
			return false;
		if (ev->flag == RLOG_SPAN_END)
			return *end = true, ev->length == 0;
	}
	size_t off = 0;
	for (unsigned i = 0; i < s->field_count; i++)
		if (rlog_event_field(s, ev, i, &off, &v[i]) != 1)
			return false;
	return off == ev->length;
}

/*
 * The line for ev, or false if it has none (EVENT_SCHEMA, THREAD_NAME,
 * PROCESS_NAME).  The mapping (docs/CONVERT.md): the packet context gives
 * pid, tid and the reader's names; class names are the schema's name
 * (":begin"/":end" for spans), ringlog's own record names, or the raw ID;
 * fields are the schema's (a flag first if flagged), or flag/length/payload
 * (raw, and records that do not match their schema), count/values (RAW_*
 * arrays), value (RAW_STRING).
 */
static bool expect_line(struct rlog_reader *rd, const struct rlog_event *ev, struct sb *b)
{
	static const char *const raw_names[] = { "RAW_U8", "RAW_I8", "RAW_U16", "RAW_I16", "RAW_U32",
						  "RAW_I32", "RAW_U64", "RAW_I64", "RAW_DOUBLE",
						  "RAW_STRING" };
	static const unsigned char width[] = { 1, 1, 2, 2, 4, 4, 8, 8, 8 };
	const uint8_t *p = ev->payload;
	uint64_t wall = FX_REALTIME + (uint64_t)ev->time_ns;

	if (!ev->flagged && (ev->id == RLOG_ID_EVENT_SCHEMA || ev->id == RLOG_ID_THREAD_NAME ||
			     ev->id == RLOG_ID_PROCESS_NAME))
		return false;
	b->len = 0;
	sb_add(b, "[%llu.%09llu] ", (unsigned long long)(wall / 1000000000u),
	       (unsigned long long)(wall % 1000000000u));
	const char *pn = rlog_reader_process_name(rd, ev->pid);
	const char *tn = rlog_reader_thread_name(rd, ev->pid, ev->tid);
#define HEAD(name)                                                                           \
	do {                                                                                 \
		sb_add(b, "%s: { pid = %u, tid = %u, process_name = ", name, ev->pid, ev->tid); \
		sb_bt_string(b, (const uint8_t *)(pn ? pn : ""), pn ? strlen(pn) : 0);       \
		sb_add(b, ", thread_name = ");                                               \
		sb_bt_string(b, (const uint8_t *)(tn ? tn : ""), tn ? strlen(tn) : 0);       \
		sb_add(b, " }");                                                              \
	} while (0)
	if (!ev->flagged && ev->id == RLOG_ID_LOG_MARKER) {
		HEAD("LOG_MARKER");
		sb_add(b, ", { tick_freq_hz = %llu, sync_ticks = %llu, sync_realtime_ns = %llu, "
			  "sync_monotonic_ns = %llu, tick_source = ( \"tsc\" : container = 1 ), "
			  "buffer_size = %u, buffer_count = %u, session_name = ",
		       (unsigned long long)rlog__get64(p), (unsigned long long)rlog__get64(p + 8),
		       (unsigned long long)rlog__get64(p + 16), (unsigned long long)rlog__get64(p + 24),
		       rlog__get32(p + 36), rlog__get32(p + 40));
		sb_bt_string(b, p + 48, strnlen((const char *)p + 48, 64));
		sb_add(b, " }");
		return true;
	}
	if (!ev->flagged && ev->id == RLOG_ID_DATA_LOSS) {
		HEAD("DATA_LOSS");
		sb_add(b, ", { events = %llu, bytes = %llu, cause = ( \"%s\" : container = %u ) }",
		       (unsigned long long)rlog__get64(p), (unsigned long long)rlog__get64(p + 8),
		       cause_name(rlog__get32(p + 16)), rlog__get32(p + 16));
		return true;
	}
	const struct rlog_schema *s = rlog_reader_schema(rd, ev);
	struct rlog_value v[RLOG_SCHEMA_MAX_FIELDS];
	bool end = false;
	if (s && matches(s, ev, v, &end)) {
		char name[300];
		bool span = s->kind == RLOG_KIND_SPAN;
		snprintf(name, sizeof name, "%s%s", s->name, !span ? "" : end ? ":end" : ":begin");
		HEAD(name);
		sb_add(b, ", {");
		if (ev->flagged && !span)
			sb_add(b, " flag = %u%s", ev->flag, s->field_count ? "," : "");
		for (unsigned i = 0; !end && i < s->field_count; i++) {
			sb_add(b, "%s %s = ", i ? "," : "", s->fields[i].name);
			switch (s->fields[i].type) {
			case RLOG_FIELD_U8: case RLOG_FIELD_U16: case RLOG_FIELD_U32: case RLOG_FIELD_U64:
				sb_add(b, "%llu", (unsigned long long)v[i].v.u);
				break;
			case RLOG_FIELD_I8: case RLOG_FIELD_I16: case RLOG_FIELD_I32: case RLOG_FIELD_I64:
				sb_add(b, "%lld", (long long)v[i].v.i);
				break;
			case RLOG_FIELD_F64:
				sb_add(b, "%g", v[i].v.f);
				break;
			case RLOG_FIELD_BYTES:
				sb_u8_array(b, v[i].bytes, v[i].len);
				break;
			default:
				sb_bt_string(b, v[i].bytes, v[i].len);
			}
		}
		sb_add(b, " }");
		return true;
	}
	/* Raw, or not matching its schema (then named after the schema). */
	bool typed = !s && ev->id >= RLOG_ID_RAW_U8 && ev->id <= RLOG_ID_RAW_DOUBLE &&
		     ev->length % width[ev->id - RLOG_ID_RAW_U8] == 0;
	if (s) {
		HEAD(s->name);
	} else if (ev->id >= RLOG_ID_RAW_U8 && ev->id <= RLOG_ID_RAW_STRING) {
		HEAD(raw_names[ev->id - RLOG_ID_RAW_U8]);
	} else {
		char name[16];
		snprintf(name, sizeof name, "%u", ev->id);
		HEAD(name);
	}
	sb_add(b, ", { ");
	if (ev->flagged)
		sb_add(b, "flag = %u, ", ev->flag);
	if (!s && ev->id == RLOG_ID_RAW_STRING) {
		sb_add(b, "value = ");
		sb_bt_string(b, p, ev->length);
	} else if (typed && ev->id == RLOG_ID_RAW_U32) {
		/* The only typed array of the fixture. */
		sb_add(b, "count = %u, values = [", ev->length / 4);
		for (unsigned i = 0; i < ev->length / 4u; i++)
			sb_add(b, "%s [%u] = %u", i ? "," : "", i, rlog__get32(p + 4 * i));
		sb_add(b, " ]");
	} else if (typed) {
		sb_add(b, "(a RAW_* array this test does not format)");
	} else {
		sb_add(b, "length = %u, payload = ", ev->length);
		sb_u8_array(b, p, ev->length);
	}
	sb_add(b, " }");
	return true;
#undef HEAD
}

int main(void)
{
	char in[64], dir[128];
	struct fg_file f;
	struct h_run r;
	struct run bt;

	fx_build(&f);
	fg_tmpname(in, "cvt");
	BAIL_IF(fg_write(&f, in) < 0, "cannot write %s", in);
	snprintf(dir, sizeof dir, "%s.ctf", in);

	struct rlog_reader *rd;
	struct rlog_event ev;
	BAIL_IF(rlog_reader_open(in, &rd) < 0, "the fixture does not open");
	bool schemas = false;
	while (rlog_reader_next(rd, &ev) == 1)
		if (ev.id == FX_ALL && ev.pid == 100)
			schemas = rlog_reader_schema(rd, &ev) != NULL;
	rlog_reader_close(rd);
	if (!schemas) {
		unlink(in);
		skip_test("rlog_reader_schema() returns no schema for a declared event "
			 "(the reader's schema table is not built)");
	}
	if (!have_babeltrace()) {
		unlink(in);
		skip_test("babeltrace2 is not on PATH (scripts/deps.sh installs Debian's babeltrace2)");
	}

	/* Convert; the directory does not exist yet. */
	h_ringlog(&r, "convert", in, "--to", "ctf", "-o", dir, NULL);
	ASSERT_EQ(r.status, 0);
	if (r.status != 0)
		diag("stderr: %s", r.err);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 30); /* 38 records: 4 schemas, 4 names */
	ASSERT_EQ_U64(h_kv(r.out, "streams"), 5);
	ASSERT_EQ_U64(h_kv(r.out, "packets"), 7);
	ASSERT_EQ_U64(h_kv(r.out, "event_classes"), 17);
	ASSERT_EQ_U64(h_kv(r.out, "mismatched"), 2);
	ASSERT_EQ_U64(h_kv(r.out, "loss_records"), 3);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), FX_LOST_EVENTS);
	ASSERT_EQ(count_files(dir, "stream_"), 5);
	ASSERT_EQ(count_files(dir, "metadata"), 1);

	/* babeltrace2 reads it; wall-clock seconds, no deltas. */
	const char *argv[] = { "babeltrace2", "--clock-seconds", "--no-delta", dir, NULL };
	bt = proc_run(argv);
	ASSERT_EQ(bt.status, 0);
	if (bt.status != 0)
		diag("babeltrace2: %s", bt.err);

	/* Line for line against the reader. */
	BAIL_IF(rlog_reader_open(in, &rd) < 0, "the fixture does not open");
	struct sb want = { 0 };
	char *line = bt.out;
	int lines = 0, mismatches = 0, extra = 0;
	while (rlog_reader_next(rd, &ev) == 1) {
		if (!expect_line(rd, &ev, &want))
			continue;
		lines++;
		char *nl = line ? strchr(line, '\n') : NULL;
		if (!nl) {
			mismatches++;
			diag("babeltrace2 printed no line for: %s", want.p);
			line = NULL;
			continue;
		}
		*nl = '\0';
		if (strcmp(line, want.p) != 0) {
			if (mismatches++ < 5)
				diag("line %d\n#   babeltrace2: %s\n#   expected:    %s", lines, line, want.p);
		}
		line = nl + 1;
	}
	while (line && *line) {
		char *nl = strchr(line, '\n');
		diag("babeltrace2 printed one line more: %.*s", nl ? (int)(nl - line) : 200, line);
		extra++;
		line = nl ? nl + 1 : NULL;
	}
	rlog_reader_close(rd);
	free(want.p);
	ASSERT_EQ(lines, 30);
	ASSERT_EQ(mismatches, 0);
	ASSERT_EQ(extra, 0);

	/* babeltrace2's own loss reports: the DATA_LOSS totals, with the
	 * ranges of the packets around each loss. */
	int nlines, may;
	ASSERT_EQ_U64(discarded_total(bt.err, &nlines, &may), FX_LOST_EVENTS);
	ASSERT_EQ(nlines, 2);
	ASSERT_EQ(may, 0);
	ASSERT_CONTAINS(bt.err, "Tracer discarded 5 events between [1700000000.123458689] and "
				"[1700000000.123459389]");
	ASSERT_CONTAINS(bt.err, "Tracer discarded 3 events between [1700000000.123459489] and "
				"[1700000000.123459489]");
	run_free(&bt);

	/* Relative times: clock cycles are time_ns (ns since the start). */
	const char *argv_c[] = { "babeltrace2", "--clock-cycles", "--no-delta", dir, NULL };
	bt = proc_run(argv_c);
	ASSERT_EQ(bt.status, 0);
	ok(strncmp(bt.out, "[00000000000000000000] LOG_MARKER", 33) == 0,
	   "the LOG_MARKER is at cycle 0 (%.40s)", bt.out);
	ASSERT_CONTAINS(bt.out, "[00000000000000002160] all.types");
	run_free(&bt);

	/* The counter sink. */
	const char *argv_n[] = { "babeltrace2", dir, "-c", "sink.utils.counter", NULL };
	bt = proc_run(argv_n);
	ASSERT_EQ(bt.status, 0);
	ASSERT_EQ_U64(counter_value(bt.out, " Event messages"), 30);
	ASSERT_EQ_U64(counter_value(bt.out, " Discarded event messages"), 2);
	ASSERT_EQ_U64(counter_value(bt.out, " Packet beginning messages"), 7);
	ASSERT_EQ_U64(counter_value(bt.out, " Stream beginning messages"), 5);
	run_free(&bt);

	/* A directory that is not empty: refused, or cleaned with --force. */
	h_ringlog(&r, "convert", in, "--to", "ctf", "-o", dir, NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_CONTAINS(r.err, "is not empty");
	h_ringlog(&r, "convert", in, "--to", "ctf", "-o", dir, "--force", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ(count_files(dir, "stream_"), 5);
	char other[200];
	snprintf(other, sizeof other, "%s/notes.txt", dir);
	FILE *o = fopen(other, "w");
	if (o)
		fclose(o);
	h_ringlog(&r, "convert", in, "--to", "ctf", "-o", dir, "--force", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_CONTAINS(r.err, "is not empty (it holds notes.txt)");
	h_ringlog(&r, "convert", in, "--to", "ctf", "-o", dir, "--spans", "be", NULL);
	ASSERT_EQ(r.status, 2);

	rm_dir(dir);
	unlink(in);
	fg_file_free(&f);
	return done_testing();
}
