/*
 * test_convert_chrome - `ringlog convert --to chrome` on the crafted file of
 * test_convert_fixture.h, parsed back with tests/json.h: the document's
 * keys, every required key of every event by its phase, the count of each
 * phase, exact ts and dur (microseconds, three decimals), span nesting per
 * thread, every argument value of every field type, counters, names,
 * losses and raw events; then the same with --spans be (B/E pairs that
 * nest), and the command's errors.
 *
 * Needs the built `ringlog` binary in $RINGLOG_BIN.
 */
#include "harness.h"

#include <math.h>

#include "json.h"
#include "tap.h"
#include "test_convert_fixture.h"
#include "proc_run.h"

/* The event of phase ph named name at ts (text), on pid/tid; NULL if none,
 * and counted in *n. */
static const struct json *find(const struct json *evs, const char *ph, const char *name,
			       const char *ts, uint32_t pid, uint32_t tid, int *n)
{
	const struct json *hit = NULL;
	*n = 0;
	for (size_t i = 0; i < evs->n; i++) {
		const struct json *e = evs->items[i];
		const char *eph = json_str(e, "ph"), *en = json_str(e, "name"), *ets = json_num(e, "ts");
		const struct json *p = json_get(e, "pid"), *t = json_get(e, "tid");
		if (!eph || strcmp(eph, ph) != 0 || !en || strcmp(en, name) != 0)
			continue;
		if (ts && (!ets || strcmp(ets, ts) != 0))
			continue;
		if (!p || p->num != pid || (t && t->num != tid))
			continue;
		hit = e;
		(*n)++;
	}
	return hit;
}

/* "1.500" -> 1500 (ns); the format is checked separately. */
static int64_t ns_of(const char *us)
{
	bool neg = us[0] == '-';
	const char *dot = strchr(us, '.');
	int64_t whole = strtoll(us + neg, NULL, 10);
	int64_t frac = dot ? strtoll(dot + 1, NULL, 10) : 0;
	int64_t v = whole * 1000 + frac;
	return neg ? -v : v;
}

static bool us_format_ok(const char *s)
{
	if (!s)
		return false;
	if (*s == '-')
		s++;
	if (!(*s >= '0' && *s <= '9'))
		return false;
	while (*s >= '0' && *s <= '9')
		s++;
	return s[0] == '.' && s[1] >= '0' && s[1] <= '9' && s[2] >= '0' && s[2] <= '9' && s[3] >= '0' &&
	       s[3] <= '9' && s[4] == '\0';
}

/* Every required key of every event, by phase; returns the events failing. */
static int check_required(const struct json *evs, int counts[128])
{
	int bad = 0;
	for (size_t i = 0; i < evs->n; i++) {
		const struct json *e = evs->items[i];
		const char *ph = json_str(e, "ph"), *name = json_str(e, "name");
		const struct json *pid = json_get(e, "pid"), *tid = json_get(e, "tid"),
				  *args = json_get(e, "args");
		bool good = e->type == JSON_OBJ && ph && strlen(ph) == 1 && name && name[0] &&
			    pid && pid->type == JSON_NUM;
		if (good)
			counts[(unsigned char)ph[0]]++;
		if (good && ph[0] != 'M')
			good = us_format_ok(json_num(e, "ts")) && tid && tid->type == JSON_NUM;
		if (!good) {
			bad++;
			continue;
		}
		switch (ph[0]) {
		case 'X':
			good = us_format_ok(json_num(e, "dur")) && json_str(e, "cat") && args &&
			       args->type == JSON_OBJ;
			break;
		case 'B':
			good = json_str(e, "cat") && args && args->type == JSON_OBJ;
			break;
		case 'E':
			break;
		case 'i': {
			const char *s = json_str(e, "s");
			good = s && (strcmp(s, "t") == 0 || strcmp(s, "p") == 0 || strcmp(s, "g") == 0) &&
			       json_str(e, "cat") && args && args->type == JSON_OBJ;
			break;
		}
		case 'C':
			good = args && args->type == JSON_OBJ && args->n > 0;
			for (size_t k = 0; good && k < args->n; k++)
				good = args->items[k]->type == JSON_NUM;
			break;
		case 'M':
			good = (strcmp(name, "thread_name") == 0 && tid && tid->type == JSON_NUM) ||
			       strcmp(name, "process_name") == 0;
			good = good && json_str(args, "name") != NULL;
			break;
		default:
			good = false;
		}
		if (!good) {
			bad++;
			diag("event %zu (ph %s, name %s) lacks a required key", i, ph, name);
		}
	}
	return bad;
}

/* X events of one thread nest: any two are disjoint or one holds the
 * other.  Returns the pairs that overlap partly. */
static int check_nesting(const struct json *evs)
{
	int bad = 0;
	for (size_t i = 0; i < evs->n; i++) {
		const struct json *a = evs->items[i];
		if (strcmp(json_str(a, "ph"), "X") != 0)
			continue;
		for (size_t k = 0; k < evs->n; k++) {
			const struct json *b = evs->items[k];
			if (k == i || strcmp(json_str(b, "ph"), "X") != 0 ||
			    json_get(a, "pid")->num != json_get(b, "pid")->num ||
			    json_get(a, "tid")->num != json_get(b, "tid")->num)
				continue;
			int64_t a0 = ns_of(json_num(a, "ts")), a1 = a0 + ns_of(json_num(a, "dur"));
			int64_t b0 = ns_of(json_num(b, "ts")), b1 = b0 + ns_of(json_num(b, "dur"));
			bool disjoint = a1 <= b0 || b1 <= a0;
			bool nested = (a0 <= b0 && b1 <= a1) || (b0 <= a0 && a1 <= b1);
			if (!disjoint && !nested) {
				bad++;
				diag("X %s [%lld, %lld] and %s [%lld, %lld] overlap", json_str(a, "name"),
				     (long long)a0, (long long)a1, json_str(b, "name"), (long long)b0,
				     (long long)b1);
			}
		}
	}
	return bad;
}

/* B/E of each thread, in file order, form a proper stack. */
static int check_be_stack(const struct json *evs)
{
	int bad = 0;
	struct { double pid, tid; const char *stack[16]; int depth; } th[8];
	int nth = 0;
	memset(th, 0, sizeof th);
	for (size_t i = 0; i < evs->n; i++) {
		const struct json *e = evs->items[i];
		const char *ph = json_str(e, "ph");
		if (strcmp(ph, "B") != 0 && strcmp(ph, "E") != 0)
			continue;
		double pid = json_get(e, "pid")->num, tid = json_get(e, "tid")->num;
		int k = 0;
		while (k < nth && !(th[k].pid == pid && th[k].tid == tid))
			k++;
		if (k == nth) {
			if (nth == 8)
				return bad + 1;
			th[nth].pid = pid;
			th[nth].tid = tid;
			nth++;
		}
		if (ph[0] == 'B') {
			if (th[k].depth < 16)
				th[k].stack[th[k].depth++] = json_str(e, "name");
		} else if (th[k].depth == 0 ||
			   strcmp(th[k].stack[--th[k].depth], json_str(e, "name")) != 0) {
			bad++;
		}
	}
	return bad;
}

static void check_all_types(const struct json *evs, bool schemas)
{
	int n;
	const struct json *e = find(evs, "i", "all.types", "0.500", 100, 101, &n);
	ASSERT_EQ(n, 1);
	if (!e)
		return;
	const struct json *a = json_get(e, "args");
	ASSERT_STREQ(json_str(e, "cat"), "3");
	ASSERT_STREQ(json_str(e, "s"), "t");
	ASSERT_EQ(a->n, 11);
	ASSERT_STREQ(json_num(a, "a"), "255");
	ASSERT_STREQ(json_num(a, "b"), "65535");
	ASSERT_STREQ(json_num(a, "c"), "4294967295");
	ASSERT_STREQ(json_num(a, "d"), "18446744073709551615");
	ASSERT_STREQ(json_num(a, "e"), "-128");
	ASSERT_STREQ(json_num(a, "f"), "-32768");
	ASSERT_STREQ(json_num(a, "g"), "-2147483648");
	ASSERT_STREQ(json_num(a, "h"), "-9223372036854775808");
	ASSERT_STREQ(json_num(a, "x"), "1.5");
	ASSERT_STREQ(json_str(a, "blob"), "deadbeef");
	ASSERT_STREQ(json_str(a, "s"), "/index");
	/* The keys in field order. */
	static const char *const keys[] = { "a", "b", "c", "d", "e", "f", "g", "h", "x", "blob", "s" };
	int order_bad = 0;
	for (size_t k = 0; k < 11 && k < a->n; k++)
		order_bad += strcmp(a->keys[k], keys[k]) != 0;
	ASSERT_EQ(order_bad, 0);

	e = find(evs, "i", "all.types", "2.100", 100, 101, &n);
	ASSERT_EQ(n, 1);
	if (e) {
		a = json_get(e, "args");
		ASSERT_STREQ(json_num(a, "a"), "0");
		ASSERT_STREQ(json_num(a, "d"), "0");
		ASSERT_STREQ(json_num(a, "e"), "127");
		ASSERT_STREQ(json_num(a, "f"), "32767");
		ASSERT_STREQ(json_num(a, "g"), "2147483647");
		ASSERT_STREQ(json_num(a, "h"), "9223372036854775807");
		ok(json_get(a, "x") && json_get(a, "x")->num == -2.75e-300,
		   "x reads back as the same double (%s)", json_num(a, "x"));
		ASSERT_STREQ(json_str(a, "blob"), "00010203");
		ASSERT_STREQ(json_str(a, "s"), "");
	}
	e = find(evs, "i", "all.types", "2.150", 100, 101, &n);
	ASSERT_EQ(n, 1);
	if (e) {
		a = json_get(e, "args");
		ASSERT_STREQ(json_str(a, "s"), "h\xc3\xa9llo \"q\" \\ \t\x01");
		ok(json_get(a, "x") && json_get(a, "x")->num == 1e300, "1e300 reads back");
	}
	e = find(evs, "i", "all.types", "2.160", 100, 101, &n);
	ASSERT_EQ(n, 1);
	if (e) {
		a = json_get(e, "args");
		const struct json *s = json_get(a, "s");
		ok(s && s->type == JSON_STR && s->len == 5 && memcmp(s->s, "ab\0cd", 5) == 0,
		   "a string with a NUL keeps all its bytes");
		ASSERT_STREQ(json_str(a, "x"), "NaN");
	}
	(void)schemas;
}

static void check_spans(const struct json *evs)
{
	int n;
	const struct json *e;
	e = find(evs, "X", "work.span", "1.000", 100, 101, &n);
	ASSERT_EQ(n, 1);
	if (e) {
		ASSERT_STREQ(json_num(e, "dur"), "1.000");
		ASSERT_STREQ(json_num(json_get(e, "args"), "depth"), "0");
		ASSERT_STREQ(json_str(e, "cat"), "1");
	}
	e = find(evs, "X", "io.span", "1.200", 100, 101, &n);
	ASSERT_EQ(n, 1);
	if (e) {
		ASSERT_STREQ(json_num(e, "dur"), "0.300");
		ASSERT_STREQ(json_str(json_get(e, "args"), "what"), "read \"cfg\"\n");
		ASSERT_STREQ(json_str(e, "cat"), "2");
	}
	e = find(evs, "X", "work.span", "1.600", 100, 101, &n);
	ASSERT_EQ(n, 1);
	if (e) {
		ASSERT_STREQ(json_num(e, "dur"), "0.100");
		ASSERT_STREQ(json_num(json_get(e, "args"), "depth"), "1");
	}
	e = find(evs, "X", "work.span", "1.050", 100, 102, &n);
	ASSERT_EQ(n, 1);
	if (e) {
		ASSERT_STREQ(json_num(e, "dur"), "0.850");
		ASSERT_STREQ(json_num(json_get(e, "args"), "depth"), "7");
	}
	/* The begin never ended: a "B" alone, with its fields. */
	e = find(evs, "B", "io.span", "2.500", 100, 102, &n);
	ASSERT_EQ(n, 1);
	if (e)
		ASSERT_STREQ(json_str(json_get(e, "args"), "what"), "never ends");
	/* The end with no begin open: an instant event that says so. */
	e = find(evs, "i", "work.span", "2.600", 100, 102, &n);
	ASSERT_EQ(n, 1);
	if (e)
		ASSERT_STREQ(json_str(json_get(e, "args"), "span"), "end without begin");
	ASSERT_EQ(check_nesting(evs), 0);
}

static void check_counters(const struct json *evs)
{
	int n;
	const struct json *e = find(evs, "C", "queue", "1.100", 100, 101, &n);
	ASSERT_EQ(n, 1);
	if (e) {
		const struct json *a = json_get(e, "args");
		ASSERT_EQ(a->n, 3);
		ASSERT_STREQ(json_num(a, "depth"), "3");
		ASSERT_STREQ(json_num(a, "load"), "0.25");
		ASSERT_STREQ(json_num(a, "delta"), "-2");
	}
	/* A flagged counter: the flag in the name, as `ringlog dump` shows it. */
	e = find(evs, "C", "queue/9", "2.180", 100, 101, &n);
	ASSERT_EQ(n, 1);
	if (e) {
		const struct json *a = json_get(e, "args");
		ASSERT_STREQ(json_num(a, "depth"), "4");
		ASSERT_STREQ(json_num(a, "load"), "2.5");
		ASSERT_STREQ(json_num(a, "delta"), "-1");
	}
	/* JSON has no infinity: that series is left out of the sample. */
	e = find(evs, "C", "queue", "2.185", 100, 101, &n);
	ASSERT_EQ(n, 1);
	if (e) {
		const struct json *a = json_get(e, "args");
		ASSERT_EQ(a->n, 2);
		ASSERT_STREQ(json_num(a, "depth"), "1");
		ASSERT_STREQ(json_num(a, "delta"), "0");
	}
	e = find(evs, "C", "queue", "1.800", 100, 101, &n);
	ASSERT_EQ(n, 1);
	if (e) {
		const struct json *a = json_get(e, "args");
		ASSERT_STREQ(json_num(a, "depth"), "0");
		ok(json_get(a, "load") && json_get(a, "load")->num == 0.001, "load 0.001 reads back");
		ASSERT_STREQ(json_num(a, "delta"), "5");
	}
}

static void check_raw(const struct json *evs, bool schemas)
{
	int n;
	const struct json *e, *a;
	e = find(evs, "i", "1025", "0.400", 200, 201, &n);
	ASSERT_EQ(n, 1);
	if (e) {
		a = json_get(e, "args");
		ASSERT_STREQ(json_str(e, "cat"), "raw");
		ASSERT_STREQ(json_str(a, "payload"), "616263");
		ASSERT_EQ(a->n, 1);
	}
	e = find(evs, "i", "1026/7", "0.410", 200, 201, &n);
	ASSERT_EQ(n, 1);
	if (e) {
		a = json_get(e, "args");
		ASSERT_STREQ(json_num(a, "flag"), "7");
		ASSERT_STREQ(json_str(a, "payload"), "0102030405");
	}
	e = find(evs, "i", "RAW_U32", "0.420", 200, 201, &n);
	ASSERT_EQ(n, 1);
	if (e) {
		const struct json *v = json_get(json_get(e, "args"), "values");
		ok(v && v->type == JSON_ARR && v->n == 3 && strcmp(v->items[0]->s, "1") == 0 &&
		   strcmp(v->items[1]->s, "2") == 0 && strcmp(v->items[2]->s, "4294967295") == 0,
		   "RAW_U32 values [1, 2, 4294967295]");
	}
	e = find(evs, "i", "RAW_STRING", "0.430", 200, 201, &n);
	ASSERT_EQ(n, 1);
	if (e)
		ASSERT_STREQ(json_str(json_get(e, "args"), "value"), "hi");
	e = find(evs, "i", "RAW_I16", "0.440", 200, 201, &n);
	ASSERT_EQ(n, 1);
	if (e) {
		a = json_get(e, "args");
		ASSERT_STREQ(json_str(a, "payload"), "010203");
		ok(json_get(a, "values") == NULL, "3 bytes are no whole i16 array: no values");
	}
	/* Records that do not match their schema: the schema's name and
	 * category, the flag in the name, the payload in hex. */
	e = find(evs, "i", "all.types", "2.170", 100, 101, &n);
	ASSERT_EQ(n, 1);
	if (e) {
		a = json_get(e, "args");
		ASSERT_STREQ(json_str(e, "cat"), "3");
		ok(json_get(a, "mismatch") && json_get(a, "mismatch")->b, "mismatch: true");
		ASSERT_STREQ(json_str(a, "payload"), "7a7a");
		ASSERT_EQ(a->n, 2);
	}
	e = find(evs, "i", "io.span/2", "2.190", 100, 101, &n);
	ASSERT_EQ(n, 1);
	if (e) {
		a = json_get(e, "args");
		ASSERT_STREQ(json_str(e, "cat"), "2");
		ASSERT_STREQ(json_num(a, "flag"), "2");
		ASSERT_STREQ(json_str(a, "payload"), "78");
	}
	/* ID 1100 has a schema in pid 100 only. */
	e = find(evs, "i", "1100", "0.450", 200, 201, &n);
	ASSERT_EQ(n, 1);
	if (e)
		ASSERT_STREQ(json_str(json_get(e, "args"), "payload"), "7a7a");
	(void)schemas;
}

static void check_losses(const struct json *evs)
{
	int n;
	const struct json *e, *a;
	e = find(evs, "i", "data_loss: no_buffer", "2.200", 100, 102, &n);
	ASSERT_EQ(n, 1);
	if (e) {
		a = json_get(e, "args");
		ASSERT_STREQ(json_str(e, "s"), "p");
		ASSERT_STREQ(json_num(a, "events"), "5");
		ASSERT_STREQ(json_num(a, "bytes"), "80");
		ASSERT_STREQ(json_str(a, "cause"), "no_buffer");
	}
	e = find(evs, "i", "data_loss: log_write", "2.700", 0, 0, &n);
	ASSERT_EQ(n, 1);
	if (e) {
		a = json_get(e, "args");
		ASSERT_STREQ(json_str(e, "s"), "g");
		ASSERT_STREQ(json_num(a, "events"), "3");
		ASSERT_STREQ(json_num(a, "bytes"), "48");
	}
	e = find(evs, "i", "data_loss: corrupt", "2.800", 100, 101, &n);
	ASSERT_EQ(n, 1);
	if (e) {
		a = json_get(e, "args");
		ASSERT_STREQ(json_num(a, "events"), "0");
		ASSERT_STREQ(json_num(a, "bytes"), "64");
		ASSERT_STREQ(json_str(a, "cause"), "corrupt");
	}
}

static void check_names(const struct json *evs)
{
	int n;
	const struct json *e;
	e = find(evs, "M", "process_name", NULL, 100, 0, &n);
	ASSERT_EQ(n, 1);
	if (e)
		ASSERT_STREQ(json_str(json_get(e, "args"), "name"), "server");
	e = find(evs, "M", "process_name", NULL, 200, 0, &n);
	ASSERT_EQ(n, 1);
	if (e)
		ASSERT_STREQ(json_str(json_get(e, "args"), "name"), "client");
	e = find(evs, "M", "thread_name", NULL, 100, 101, &n);
	ASSERT_EQ(n, 1);
	if (e)
		ASSERT_STREQ(json_str(json_get(e, "args"), "name"), "main");
	e = find(evs, "M", "thread_name", NULL, 100, 102, &n);
	ASSERT_EQ(n, 1);
	if (e)
		ASSERT_STREQ(json_str(json_get(e, "args"), "name"), "worker-1");
}

static struct json *convert(const char *in, const char *out, const char *spans, struct h_run *r,
			    char **text, size_t *len)
{
	/* --force: out exists (fg_tmpname creates it), and is reused. */
	if (spans)
		h_ringlog(r, "convert", in, "--to", "chrome", "-o", out, "--spans", spans, "--force",
			  NULL);
	else
		h_ringlog(r, "convert", in, "--to", "chrome", "-o", out, "--force", NULL);
	ASSERT_EQ(r->status, 0);
	if (r->status != 0)
		diag("stderr: %s", r->err);
	*text = slurp(out, len);
	BAIL_IF(!*text, "no output file %s", out);
	char err[128];
	struct json *doc = json_parse(*text, *len, err, sizeof err);
	ok(doc != NULL, "the output parses as JSON (%s)", doc ? "ok" : err);
	BAIL_IF(!doc, "cannot go on without the document");
	return doc;
}

int main(void)
{
	char in[64], out[64];
	struct fg_file f;
	struct h_run r;
	char *text;
	size_t len;

	fx_build(&f);
	fg_tmpname(in, "cvc");
	fg_tmpname(out, "cvcj");
	BAIL_IF(fg_write(&f, in) < 0, "cannot write %s", in);

	/* Events the reader gives, and whether it knows the schemas yet. */
	struct rlog_reader *rd;
	BAIL_IF(rlog_reader_open(in, &rd) < 0, "the fixture does not open");
	struct rlog_event ev;
	uint64_t nread = 0;
	bool schemas = false;
	while (rlog_reader_next(rd, &ev) == 1) {
		nread++;
		if (ev.id == FX_ALL && ev.pid == 100)
			schemas = rlog_reader_schema(rd, &ev) != NULL;
	}
	rlog_reader_close(rd);
	if (!schemas) {
		/* The reader's schema table is a placeholder in this tree:
		 * everything would be raw, nothing here would mean much. */
		unlink(in);
		unlink(out);
		fg_file_free(&f);
		skip_test("rlog_reader_schema() returns no schema for a declared event "
			 "(the reader's schema table is not built)");
	}

	struct json *doc = convert(in, out, NULL, &r, &text, &len);
	ASSERT_EQ_U64(h_kv(r.out, "events_read"), nread);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 29);
	ASSERT_EQ_U64(h_kv(r.out, "spans"), 4);
	ASSERT_EQ_U64(h_kv(r.out, "unmatched_begins"), 1);
	ASSERT_EQ_U64(h_kv(r.out, "unmatched_ends"), 1);
	ASSERT_EQ_U64(h_kv(r.out, "loss_records"), 3);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), FX_LOST_EVENTS);
	ASSERT_EQ_U64(h_kv(r.out, "raw_events"), 8);
	ASSERT_EQ_U64(h_kv(r.out, "mismatched"), 2);
	ASSERT_EQ_U64(h_kv(r.out, "bytes_written"), len);

	/* The document. */
	ok(doc->type == JSON_OBJ, "the document is an object");
	ASSERT_STREQ(json_str(doc, "displayTimeUnit"), "ns");
	const struct json *other = json_get(doc, "otherData");
	ASSERT_STREQ(json_str(other, "session"), "demo");
	ASSERT_STREQ(json_str(other, "tick_source"), "tsc");
	ASSERT_STREQ(json_num(other, "tick_freq_hz"), "1000000000");
	ASSERT_STREQ(json_num(other, "start_realtime_ns"), "1700000000123456789");
	ASSERT_STREQ(json_str(other, "start"), "2023-11-14T22:13:20.123456789Z");
	const struct json *evs = json_get(doc, "traceEvents");
	BAIL_IF(!evs || evs->type != JSON_ARR, "no traceEvents array");
	ASSERT_EQ(evs->n, 29);

	/* Required keys and the count of each phase. */
	int counts[128] = { 0 };
	ASSERT_EQ(check_required(evs, counts), 0);
	ASSERT_EQ(counts['X'], 4);
	ASSERT_EQ(counts['B'], 1);
	ASSERT_EQ(counts['E'], 0);
	ASSERT_EQ(counts['i'], 16);
	ASSERT_EQ(counts['C'], 4);
	ASSERT_EQ(counts['M'], 4);
	/* One event per line; invalid UTF-8 and controls never raw. */
	ok(strstr(text, "\\u0001") != NULL, "a control character is escaped as \\u0001");

	check_all_types(evs, schemas);
	check_spans(evs);
	check_counters(evs);
	check_raw(evs, schemas);
	check_losses(evs);
	check_names(evs);
	json_free(doc);
	free(text);

	/* --spans be: every span as a B and an E, in stack order per thread. */
	doc = convert(in, out, "be", &r, &text, &len);
	evs = json_get(doc, "traceEvents");
	memset(counts, 0, sizeof counts);
	ASSERT_EQ(check_required(evs, counts), 0);
	ASSERT_EQ(counts['X'], 0);
	ASSERT_EQ(counts['B'], 5);
	ASSERT_EQ(counts['E'], 4);
	ASSERT_EQ(counts['i'], 16);
	ASSERT_EQ(counts['C'], 4);
	ASSERT_EQ(counts['M'], 4);
	ASSERT_EQ(check_be_stack(evs), 0);
	int n;
	const struct json *e = find(evs, "B", "io.span", "1.200", 100, 101, &n);
	ASSERT_EQ(n, 1);
	if (e)
		ASSERT_STREQ(json_str(json_get(e, "args"), "what"), "read \"cfg\"\n");
	find(evs, "E", "io.span", "1.500", 100, 101, &n);
	ASSERT_EQ(n, 1);
	json_free(doc);
	free(text);

	/* To stdout: the JSON, and no summary. */
	h_ringlog(&r, "convert", in, "--to", "chrome", "-o", "-", NULL);
	ASSERT_EQ(r.status, 0);
	ok(strncmp(r.out, "{\"displayTimeUnit\":\"ns\"", 23) == 0, "stdout starts with the document");
	ok(strstr(r.out, "events_read:") == NULL, "no summary on stdout");

	/* Errors. */
	h_ringlog(&r, "convert", in, "--to", "chrome", NULL);
	ASSERT_EQ(r.status, 2);
	ASSERT_CONTAINS(r.err, "usage: ringlog convert FILE");
	h_ringlog(&r, "convert", in, "--to", "svg", "-o", out, NULL);
	ASSERT_EQ(r.status, 1); /* a bad value, as in every command */
	ASSERT_CONTAINS(r.err, "ringlog: convert: --to 'svg': expected chrome, perfetto or ctf");
	h_ringlog(&r, "convert", in, "--to", "chrome", "-o", out, "--spans", "y", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, "ringlog: convert: --spans 'y': expected x or be\n");
	h_ringlog(&r, "convert", "/nonexistent/x.rlog", "--to", "chrome", "-o", out, NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_CONTAINS(r.err, "ringlog: convert /nonexistent/x.rlog: No such file or directory");
	h_ringlog(&r, "convert", in, "--to", "chrome", "-o", "/nonexistent/x.json", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_CONTAINS(r.err, "ringlog: convert: cannot create /nonexistent/x.json");

	/* A damaged file: every readable event converted, one line per
	 * region, exit 1. */
	size_t cut = f.b.len - 6;
	BAIL_IF(fg_write_len(&f, in, cut) < 0, "cannot write %s", in);
	h_ringlog(&r, "convert", in, "--to", "chrome", "-o", out, "--force", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_CONTAINS(r.err, "truncated block");
	ASSERT_EQ_U64(h_kv(r.out, "events_read"), nread - 1);
	text = slurp(out, &len);
	char err[128];
	doc = text ? json_parse(text, len, err, sizeof err) : NULL;
	ok(doc != NULL, "the output of a damaged file is complete JSON");
	json_free(doc);
	free(text);

	unlink(in);
	unlink(out);
	fg_file_free(&f);
	return done_testing();
}
