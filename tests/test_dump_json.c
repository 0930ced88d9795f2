/*
 * test_dump_json - `ringlog dump --format json` (JSON Lines) on the fixture
 * of tests/test_dump_fixture.h, every line parsed back with a strict JSON
 * parser (tests/json.h) and compared member by member: 64-bit limits
 * digit for digit, -0 and 0.1 and 1e+300, NaN and -Infinity as strings,
 * strings with quotes, control characters and bytes that are not UTF-8
 * (\ufffd), bytes as hex, spans, counters, a mismatch, raw payloads,
 * DATA_LOSS and LOG_MARKER objects, the metadata objects with --all, the
 * "wall" member with --time wall; then every byte value and the awkward
 * UTF-8 cases through a RAW_STRING.
 */
#include "filegen.h"
#include "proc_run.h"
#include "json.h"
#include "tap.h"
#include "test_dump_fixture.h"

#define MAXLINES 64

struct lines {
	size_t n;
	struct json *v[MAXLINES];
	char *text[MAXLINES];
};

/* Parses every line of out; a line that does not parse fails the test. */
static void parse_lines(const char *out, struct lines *l)
{
	const char *p = out;
	char err[128];
	memset(l, 0, sizeof(*l));
	while (*p && l->n < MAXLINES) {
		const char *e = strchr(p, '\n');
		BAIL_IF(!e, "the output does not end with a newline");
		size_t len = (size_t)(e - p);
		l->text[l->n] = strndup(p, len);
		l->v[l->n] = json_parse(p, len, err, sizeof(err));
		ok(l->v[l->n] != NULL && l->v[l->n]->type == JSON_OBJ, "line %zu is a JSON object%s%s",
		   l->n + 1, l->v[l->n] ? "" : ": ", l->v[l->n] ? "" : err);
		l->n++;
		p = e + 1;
	}
}

static void free_lines(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++) {
		json_free(l->v[i]);
		free(l->text[i]);
	}
}

/* The line whose time_ns is t and whose id is id (the first). */
static const struct json *find(const struct lines *l, const char *t, const char *id)
{
	for (size_t i = 0; i < l->n; i++) {
		const char *lt = json_num(l->v[i], "time_ns"), *li = json_num(l->v[i], "id");
		if (lt && li && strcmp(lt, t) == 0 && strcmp(li, id) == 0)
			return l->v[i];
	}
	return NULL;
}

static const char *field_num(const struct json *o, const char *k)
{
	return json_num(json_get(o, "fields"), k);
}

static const char *field_str(const struct json *o, const char *k)
{
	return json_str(json_get(o, "fields"), k);
}

static size_t members(const struct json *o)
{
	return o ? o->n : 0;
}

static void test_fixture(const char *path)
{
	struct lines l;
	struct run r = RUN("dump", path, "--format", "json");
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");
	parse_lines(r.out, &l);
	ASSERT_EQ(l.n, 15);

	/* Exact text of a few lines. */
	ASSERT_STREQ(l.text[0], "{\"time_ns\":0,\"pid\":1,\"tid\":1,\"id\":1,\"type\":\"log_marker\","
		     "\"tick_hz\":1000000000,\"source\":\"tsc\",\"realtime\":"
		     "\"2026-11-22T10:00:00.123456789Z\",\"session\":\"fields\","
		     "\"buffer_size\":16384,\"buffer_count\":8}");
	ASSERT_STREQ(l.text[1], "{\"time_ns\":100,\"pid\":4242,\"tid\":4243,\"id\":1025,"
		     "\"name\":\"http.request\",\"kind\":\"event\",\"fields\":{\"status\":200,"
		     "\"bytes\":5120,\"path\":\"/index\"}}");
	ASSERT_STREQ(l.text[14], "{\"time_ns\":1700,\"pid\":4242,\"tid\":4243,\"id\":2,"
		     "\"type\":\"data_loss\",\"events\":5,\"bytes\":80,\"cause\":\"no_buffer\"}");

	const struct json *o = find(&l, "300", "1026");
	ASSERT_STREQ(json_str(o, "name"), "all.types");
	ASSERT_STREQ(json_str(o, "kind"), "event");
	ok(json_get(o, "flag") == NULL, "no flag member for an unflagged record");
	ASSERT_EQ(members(json_get(o, "fields")), 11);
	ASSERT_STREQ(field_num(o, "a"), "255");
	ASSERT_STREQ(field_num(o, "b"), "65535");
	ASSERT_STREQ(field_num(o, "c"), "4294967295");
	ASSERT_STREQ(field_num(o, "d"), "18446744073709551615");
	ASSERT_STREQ(field_num(o, "e"), "127");
	ASSERT_STREQ(field_num(o, "f"), "32767");
	ASSERT_STREQ(field_num(o, "g"), "2147483647");
	ASSERT_STREQ(field_num(o, "h"), "9223372036854775807");
	ASSERT_STREQ(field_num(o, "x"), "1.5");
	ASSERT_STREQ(field_str(o, "y"), "01fe00");
	ASSERT_STREQ(field_str(o, "s"), "");

	o = find(&l, "400", "1026");
	ASSERT_STREQ(field_num(o, "e"), "-128");
	ASSERT_STREQ(field_num(o, "f"), "-32768");
	ASSERT_STREQ(field_num(o, "g"), "-2147483648");
	ASSERT_STREQ(field_num(o, "h"), "-9223372036854775808");
	ASSERT_STREQ(field_num(o, "x"), "-0");
	const struct json *s = json_get(json_get(o, "fields"), "s");
	ok(s && s->type == JSON_STR && s->len == 11 &&
	   memcmp(s->s, "q\"n\n\xe2\x9c\x93\xef\xbf\xbd\x01", 11) == 0,
	   "the string reads back, 0xff as U+FFFD");

	o = find(&l, "600", "1027");
	ASSERT_STREQ(json_str(o, "name"), "db.query");
	ASSERT_STREQ(json_str(o, "kind"), "span_begin");
	ASSERT_STREQ(json_num(o, "flag"), "1");
	ASSERT_STREQ(field_num(o, "rows"), "5");
	o = find(&l, "700", "1027");
	ASSERT_STREQ(json_str(o, "kind"), "span_end");
	ASSERT_STREQ(json_num(o, "flag"), "2");
	ok(json_get(o, "fields") && members(json_get(o, "fields")) == 0, "an end has no fields");

	o = find(&l, "900", "1028");
	ASSERT_STREQ(json_str(o, "kind"), "counter");
	ASSERT_STREQ(field_num(o, "depth"), "-3");

	o = find(&l, "1000", "1025");
	ASSERT_STREQ(json_str(o, "name"), "http.request");
	ok(json_get(o, "schema_mismatch") && json_get(o, "schema_mismatch")->b, "schema_mismatch true");
	ASSERT_STREQ(json_str(o, "payload_hex"), "616263");
	ok(json_get(o, "kind") == NULL && json_get(o, "fields") == NULL, "no kind or fields");

	o = find(&l, "1150", "1029");
	ASSERT_STREQ(json_str(o, "name"), "tick");
	ok(json_get(o, "fields") && members(json_get(o, "fields")) == 0, "no fields");

	o = find(&l, "1200", "1025");
	ASSERT_STREQ(json_num(o, "flag"), "9");
	ASSERT_STREQ(json_str(o, "kind"), "event");
	ASSERT_STREQ(field_str(o, "path"), "");

	o = find(&l, "1250", "1025");
	ASSERT_STREQ(json_num(o, "tid"), "4244");
	ASSERT_STREQ(field_str(o, "path"), "/x");

	o = find(&l, "1400", "1030");
	ASSERT_STREQ(field_num(o, "x"), "0.1");
	ASSERT_STREQ(field_num(o, "y"), "1e+300");
	ASSERT_STREQ(field_str(o, "z"), "NaN");
	ASSERT_STREQ(field_str(o, "w"), "-Infinity");

	o = find(&l, "1500", "1031");
	ASSERT_STREQ(json_str(o, "payload_hex"), "0102030405");
	ok(json_get(o, "name") == NULL, "no name without a schema");
	o = find(&l, "1600", "1025");
	ASSERT_STREQ(json_num(o, "pid"), "5000");
	ASSERT_STREQ(json_str(o, "payload_hex"), "01000000020000000300000004000000");
	free_lines(&l);
	run_free(&r);

	/* --all and --time wall: the metadata objects, a wall member on each. */
	r = RUN("dump", path, "--format=json", "--all", "--time", "wall");
	ASSERT_EQ(r.status, 0);
	parse_lines(r.out, &l);
	ASSERT_EQ(l.n, 15 + 8);
	size_t walls = 0;
	for (size_t i = 0; i < l.n; i++)
		walls += json_str(l.v[i], "wall") != NULL;
	ASSERT_EQ(walls, l.n);
	ASSERT_STREQ(json_str(l.v[0], "wall"), "2026-11-22T10:00:00.123456789Z");
	o = find(&l, "1", "35");
	ASSERT_STREQ(json_str(o, "type"), "process_name");
	ASSERT_STREQ(json_str(o, "value"), "server");
	ASSERT_STREQ(json_str(o, "wall"), "2026-11-22T10:00:00.123456790Z");
	o = find(&l, "2", "34");
	ASSERT_STREQ(json_str(o, "type"), "thread_name");
	ASSERT_STREQ(json_str(o, "value"), "worker-1");
	o = find(&l, "200", "33");
	ASSERT_STREQ(json_str(o, "type"), "event_schema");
	const struct json *sc = json_get(o, "schema");
	ASSERT_STREQ(json_num(sc, "id"), "1026");
	ASSERT_STREQ(json_str(sc, "name"), "all.types");
	ASSERT_STREQ(json_str(sc, "kind"), "event");
	ASSERT_STREQ(json_num(sc, "category"), "0");
	const struct json *fl = json_get(sc, "fields");
	ok(fl && fl->type == JSON_ARR && fl->n == 11, "11 fields");
	if (fl && fl->n == 11) {
		ASSERT_STREQ(json_str(fl->items[3], "name"), "d");
		ASSERT_STREQ(json_str(fl->items[3], "type"), "u64");
		ASSERT_STREQ(json_str(fl->items[9], "type"), "bytes");
		ASSERT_STREQ(json_num(fl->items[9], "count"), "3");
		ASSERT_STREQ(json_str(fl->items[10], "type"), "string");
		ok(json_get(fl->items[10], "count") == NULL, "no count for a string");
	}
	o = find(&l, "500", "33");
	ASSERT_STREQ(json_str(json_get(o, "schema"), "kind"), "span");
	free_lines(&l);
	run_free(&r);
}

/* Every byte value and the UTF-8 edge cases through a RAW_STRING. */
static void test_strings(const char *path)
{
	static const struct {
		const char *in;
		size_t len;
		const char *out;   /* decoded by the parser */
		size_t out_len;
	} cases[] = {
		{ "\"\\/", 3, "\"\\/", 3 },
		{ "\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd", 6 },               /* overlong '/' */
		{ "\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 9 }, /* a surrogate */
		{ "\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80", 4 },               /* U+1F600 */
		{ "\xf4\x90\x80\x80", 4, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 12 },
		{ "ok\xe2\x9c", 4, "ok\xef\xbf\xbd\xef\xbf\xbd", 8 },            /* cut short */
		{ "\xc2\x80\xdf\xbf", 4, "\xc2\x80\xdf\xbf", 4 },
		{ "", 0, "", 0 },
	};
	size_t ncases = sizeof(cases) / sizeof(cases[0]);
	uint8_t all[128];
	struct fg_file f;
	struct fg_block b;

	for (int i = 0; i < 128; i++)
		all[i] = (uint8_t)i;
	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, 1000000000u, FX_START, FX_REALTIME, RLOG_TICK_TSC, 16384, 8,
			"q\"uote\\");
	fg_block_begin(&b, 7, 8, FX_START, 0);
	fg_event(&b, RLOG_ID_RAW_STRING, -1, true, FX_START + 1, all, sizeof(all));
	for (size_t i = 0; i < ncases; i++)
		fg_event(&b, RLOG_ID_RAW_STRING, -1, true, (uint32_t)(FX_START + 2 + i), cases[i].in,
			 (unsigned)cases[i].len);
	uint32_t u[2] = { 7, 4294967295u };
	fg_event(&b, RLOG_ID_RAW_U32, -1, true, FX_START + 20, u, 8);
	fg_event(&b, RLOG_ID_RAW_I16, -1, true, FX_START + 21, "\xff\xff\x02\x00", 4);
	fg_event(&b, RLOG_ID_RAW_I16, -1, true, FX_START + 22, "\xff\xff\x02", 3);
	double d = 2.5;
	fg_event(&b, RLOG_ID_RAW_DOUBLE, -1, true, FX_START + 23, &d, 8);
	fg_block_end(&f, &b);
	BAIL_IF(fg_write(&f, path) < 0, "cannot write %s", path);
	fg_file_free(&f);

	struct lines l;
	struct run r = RUN("dump", path, "--format", "json");
	ASSERT_EQ(r.status, 0);
	parse_lines(r.out, &l);
	ASSERT_EQ(l.n, 1 + 1 + ncases + 4);
	ASSERT_STREQ(json_str(l.v[0], "session"), "q\"uote\\");

	const struct json *v = json_get(l.v[1], "value");
	ASSERT_STREQ(json_str(l.v[1], "name"), "RAW_STRING");
	ok(v && v->len == 128 && memcmp(v->s, all, 128) == 0, "bytes 0 to 127 read back");
	ok(strstr(l.text[1], "\\u0000\\u0001") && strstr(l.text[1], "\\b\\t\\n\\u000b\\f\\r") &&
	   strstr(l.text[1], "\\u007f"), "control characters escaped");
	for (size_t i = 0; i < ncases; i++) {
		v = json_get(l.v[2 + i], "value");
		ok(v && v->len == cases[i].out_len && memcmp(v->s, cases[i].out, v->len) == 0,
		   "string case %zu reads back", i);
	}
	size_t k = 2 + ncases;
	const struct json *arr = json_get(l.v[k], "values");
	ASSERT_STREQ(json_str(l.v[k], "name"), "RAW_U32");
	ok(arr && arr->type == JSON_ARR && arr->n == 2 && strcmp(arr->items[0]->s, "7") == 0 &&
	   strcmp(arr->items[1]->s, "4294967295") == 0, "RAW_U32 values");
	arr = json_get(l.v[k + 1], "values");
	ok(arr && arr->n == 2 && strcmp(arr->items[0]->s, "-1") == 0 &&
	   strcmp(arr->items[1]->s, "2") == 0, "RAW_I16 values");
	ASSERT_STREQ(json_str(l.v[k + 2], "payload_hex"), "ffff02");
	ok(json_get(l.v[k + 2], "values") == NULL, "a length that does not fit the type: hex");
	arr = json_get(l.v[k + 3], "values");
	ok(arr && arr->n == 1 && strcmp(arr->items[0]->s, "2.5") == 0, "RAW_DOUBLE value");
	free_lines(&l);
	run_free(&r);
}

int main(void)
{
	struct fg_file f;
	struct fx x;
	char path[64];

	fx_build(&f, &x);
	fg_tmpname(path, "json");
	BAIL_IF(fg_write(&f, path) < 0, "cannot write %s", path);
	fg_file_free(&f);
	test_fixture(path);
	test_strings(path);
	unlink(path);
	return done_testing();
}
