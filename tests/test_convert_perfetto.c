/*
 * test_convert_perfetto.c - `ringlog convert --to perfetto` on the crafted
 * trace of test_convert_fixture.h: every output is decoded by
 * `protoc --decode=perfetto.protos.Trace` against
 * docs/perfetto/ringlog_perfetto.proto (proto3: protoc also rejects a
 * string that is not valid UTF-8), then
 *
 *   - the invariants a loader relies on: the first packet of each file is
 *     flagged SEQ_INCREMENTAL_STATE_CLEARED and holds the clock snapshot,
 *     every later one SEQ_NEEDS_INCREMENTAL_STATE, all on sequence 1;
 *     every track uuid an event or a descriptor names was described
 *     before in the same file; every iid used was interned before in the
 *     same file; the timestamps never go back;
 *   - the packets exactly: a summary line per packet (interned names
 *     resolved) compared with the expected text;
 *   - --split and --max-size: a series of files each of which passes the
 *     same checks on its own, holding every event once between them;
 *     --since/--until: the window's events only;
 *   - the system events: sched_switch, sched_waking as ftrace events in
 *     a bundle per CPU (timestamps on BOOTTIME, which the snapshot makes
 *     clock 64), the rundown as a ProcessTree, an event Perfetto has no
 *     ftrace message for left an instant on the system track;
 *   - two hosts (the demo and the system events' traces) as one trace:
 *     no ftrace, the system events instants on the host's system track,
 *     each host's metadata and processes ("HOST: name", its pids);
 *   - a corrupt input: one error line, exit 1.
 */
#include "harness.h"

#include "tap.h"
#include "test_convert_fixture.h"
#include "proc_run.h"
#include "pbtext.h"

#include <sys/stat.h>

/* ------------------------------------------------------------------ */
/* The checks                                                          */

#define MAXI 256
#define MAXSEQ 192

/* A trusted packet sequence's incremental state, in the current file. */
struct seqst {
	char *names[3][MAXI];    /* categories, event names, annotation names by iid */
	bool started;            /* its first packet (state cleared) was seen */
	uint64_t last_ts, mono;  /* clock 64, and its value at time 0 */
	uint64_t track;          /* its TrackEvents' default track, or 0 */
};

struct check {
	struct seqst seq[MAXSEQ]; /* by trusted_packet_sequence_id */
	uint64_t uuids[MAXI];
	size_t nuuid;
	uint64_t mono;           /* sequence 1's: the file's */
	unsigned errors;
	unsigned files, events;
	unsigned seqs;           /* sequences started (state cleared), every file */
	char sum[1 << 20];      /* room for build_twice's 140 threads */
	size_t len;
};

static void bad(struct check *c, const char *what, const char *detail)
{
	if (c->errors++ < 5)
		diag("invariant broken: %s (%s)", what, detail);
}

static bool described(const struct check *c, uint64_t u)
{
	for (size_t i = 0; i < c->nuuid; i++)
		if (c->uuids[i] == u)
			return true;
	return false;
}

static const char *iid_name(struct check *c, struct seqst *q, int t, const char *iid)
{
	uint64_t i = iid ? strtoull(iid, NULL, 10) : 0;
	if (i == 0 || i >= MAXI || !q->names[t][i]) {
		bad(c, "an iid used before it was interned on its sequence", iid ? iid : "none");
		return "?";
	}
	return q->names[t][i];
}

/* Sequence q's state cleared. */
static void seq_reset(struct seqst *q)
{
	for (int t = 0; t < 3; t++)
		for (int i = 0; i < MAXI; i++) {
			free(q->names[t][i]);
			q->names[t][i] = NULL;
		}
	q->started = false;
	q->track = 0;
}

/* A new file: nothing described, no sequence started. */
static void reset(struct check *c)
{
	for (int k = 0; k < MAXSEQ; k++)
		seq_reset(&c->seq[k]);
	c->nuuid = 0;
}

/* The summary; past its room (a large trace), the counts only. */
#define OUT(...)                                                                           \
	do {                                                                               \
		if (c->len < sizeof(c->sum)) {                                             \
			c->len += (size_t)snprintf(c->sum + c->len, sizeof(c->sum) - c->len, \
						   __VA_ARGS__);                           \
			if (c->len >= sizeof(c->sum))                                      \
				c->len = sizeof(c->sum);                                   \
		}                                                                          \
	} while (0)

/*
 * One packet.  The file's own sequence (1) opens it; each thread's
 * sequence starts, in each file, with a packet that clears its state and
 * holds its clock snapshot and defaults (clock 64, its thread's track):
 * per sequence, the flags, the interned names and clock 64 are checked on
 * their own.  The summary shows the file's snapshot only.
 */
static void check_packet(struct check *c, const struct node *p, bool first)
{
	unsigned flags = (unsigned)num(p, "sequence_flags");
	uint64_t sid = num(p, "trusted_packet_sequence_id");
	if (sid == 0 || sid >= MAXSEQ) {
		bad(c, "a sequence id out of range", val(p, "trusted_packet_sequence_id"));
		return;
	}
	if (first && sid != 1)
		bad(c, "a file that does not open with sequence 1", "");
	if (flags == 1 && sid == 1)
		reset(c);
	struct seqst *q = &c->seq[sid];
	if (q->started == (flags == 1) || (q->started && flags != 2))
		bad(c, "sequence flags", q->started ? "later packet" : "first packet");
	if (flags == 1) {
		uint64_t rt = 0, boot = 0;
		bool incremental = false;
		seq_reset(q);
		q->started = true;
		c->files += sid == 1;
		c->seqs++;
		const struct node *cs = kid(p, "clock_snapshot");
		if (!cs)
			bad(c, "no clock snapshot in a sequence's first packet", "");
		else
			for (size_t i = 0; i < cs->n; i++)
				if (strcmp(cs->kids[i]->key, "clocks") != 0)
					continue;
				else if (num(cs->kids[i], "clock_id") == 64)
					q->last_ts = num(cs->kids[i], "timestamp"),
					incremental = val(cs->kids[i], "is_incremental") &&
						      strcmp(val(cs->kids[i], "is_incremental"), "true") == 0;
				else if (num(cs->kids[i], "clock_id") == 1)
					rt = num(cs->kids[i], "timestamp");
				else if (num(cs->kids[i], "clock_id") == 6)
					boot = num(cs->kids[i], "timestamp");
		/* The ftrace events' timestamps are BOOTTIME's: the same clock. */
		if (boot != q->last_ts)
			bad(c, "BOOTTIME is not clock 64 at the snapshot", "");
		/* time 0 (the LOG_MARKER) on clock 64: the realtime clock says
		 * how far the snapshot is from it; the same on every sequence. */
		q->mono = q->last_ts - (rt - FX_REALTIME);
		if (sid == 1)
			c->mono = q->mono;
		else if (q->mono != c->mono)
			bad(c, "a sequence's clock 64 is not the file's", "");
		if (!incremental)
			bad(c, "clock 64 is not incremental", "");
		const struct node *d = kid(p, "trace_packet_defaults");
		if (!d || num(d, "timestamp_clock_id") != 64)
			bad(c, "no default clock 64", "");
		const struct node *ted = d ? kid(d, "track_event_defaults") : NULL;
		q->track = ted ? num(ted, "track_uuid") : 0;
		if ((sid != 1) != (q->track != 0))
			bad(c, "a thread's sequence without its track, or the file's with one", "");
		if (q->track && !described(c, q->track))
			bad(c, "a default track not described first", "");
		if (sid == 1)
			OUT("C %s\n", cs ? "snapshot" : "none");
		return;
	}
	const struct node *in = kid(p, "interned_data");
	static const char *const kinds[3] = { "event_categories", "event_names",
					      "debug_annotation_names" };
	for (size_t i = 0; in && i < in->n; i++)
		for (int t = 0; t < 3; t++)
			if (strcmp(in->kids[i]->key, kinds[t]) == 0) {
				uint64_t iid = num(in->kids[i], "iid");
				if (iid == 0 || iid >= MAXI || q->names[t][iid])
					bad(c, "an iid interned twice", in->kids[i]->val ? "" : kinds[t]);
				else
					q->names[t][iid] = strdup(val(in->kids[i], "name"));
			}
	const char *ts = val(p, "timestamp");
	/* Deltas on clock 64: never back by construction (unsigned). */
	uint64_t t = q->last_ts + (ts ? strtoull(ts, NULL, 10) : 0);
	q->last_ts = t;
	const struct node *fb = kid(p, "ftrace_events");
	if (fb) {
		uint64_t prev = 0;
		OUT("F cpu %s\n", val(fb, "cpu"));
		for (size_t i = 0; i < fb->n; i++) {
			const struct node *e = fb->kids[i];
			if (strcmp(e->key, "event") != 0)
				continue;
			uint64_t ts = num(e, "timestamp");
			if (ts < prev)
				bad(c, "a CPU's ftrace timestamps go back", val(e, "timestamp"));
			prev = ts;
			OUT("  %" PRId64 " pid %s", (int64_t)(ts - c->mono), val(e, "pid"));
			for (size_t k = 0; k < e->n; k++)
				if (!e->kids[k]->val) {
					OUT(" %s", e->kids[k]->key);
					for (size_t j = 0; j < e->kids[k]->n; j++)
						OUT(" %s=%s", e->kids[k]->kids[j]->key,
						    e->kids[k]->kids[j]->val);
				}
			OUT("\n");
		}
		return;
	}
	const struct node *pt = kid(p, "process_tree");
	if (pt) {
		OUT("P %" PRId64 "\n", (int64_t)(t - c->mono));
		for (size_t i = 0; i < pt->n; i++) {
			OUT("  %s", pt->kids[i]->key);
			for (size_t j = 0; j < pt->kids[i]->n; j++)
				OUT(" %s=%s", pt->kids[i]->kids[j]->key, pt->kids[i]->kids[j]->val);
			OUT("\n");
		}
		return;
	}
	const struct node *td = kid(p, "track_descriptor");
	if (td) {
		uint64_t u = num(td, "uuid"), par = num(td, "parent_uuid");
		if (par && !described(c, par))
			bad(c, "a parent not described first", val(td, "name") ? val(td, "name") : "");
		if (!described(c, u) && c->nuuid < MAXI)
			c->uuids[c->nuuid++] = u;
		const struct node *pr = kid(td, "process"), *th = kid(td, "thread");
		OUT("D %" PRIu64 " parent %" PRIu64, u, par);
		if (val(td, "name"))
			OUT(" name %s", val(td, "name"));
		if (pr)
			OUT(" process %s %s", val(pr, "pid"), val(pr, "process_name") ? val(pr, "process_name") : "-");
		if (th)
			OUT(" thread %s %s %s", val(th, "pid"), val(th, "tid"),
			    val(th, "thread_name") ? val(th, "thread_name") : "-");
		if (kid(td, "counter"))
			OUT(" counter");
		OUT("\n");
		return;
	}
	const struct node *te = kid(p, "track_event");
	if (te) {
		c->events++;
		uint64_t u = val(te, "track_uuid") ? num(te, "track_uuid") : q->track;
		if (!described(c, u))
			bad(c, "a track used before it was described", val(te, "track_uuid"));
		OUT("E %" PRId64 " %s %" PRIu64, (int64_t)(t - c->mono), val(te, "type") + 5, u);
		if (val(te, "category_iids"))
			OUT(" [%s]", iid_name(c, q, 0, val(te, "category_iids")));
		if (val(te, "name_iid"))
			OUT(" %s", iid_name(c, q, 1, val(te, "name_iid")));
		if (val(te, "counter_value"))
			OUT(" =%s", val(te, "counter_value"));
		if (val(te, "double_counter_value"))
			OUT(" =%s", val(te, "double_counter_value"));
		for (size_t i = 0; i < te->n; i++) {
			const struct node *x = te->kids[i];
			if (strncmp(x->key, "extra_", 6) != 0)
				continue;
			if (strstr(x->key, "track_uuids")) {
				if (!described(c, strtoull(x->val, NULL, 10)))
					bad(c, "an extra counter track not described first", x->val);
				OUT(" +%s", x->val);
			} else {
				OUT("=%s", x->val);
			}
		}
		for (size_t i = 0; i < te->n; i++) {
			const struct node *a = te->kids[i];
			if (strcmp(a->key, "debug_annotations") != 0)
				continue;
			OUT(" %s=", iid_name(c, q, 2, val(a, "name_iid")));
			for (size_t k = 0; k < a->n; k++)
				if (strcmp(a->kids[k]->key, "name_iid") != 0)
					OUT("%c:%s", a->kids[k]->key[0], a->kids[k]->val);
		}
		OUT("\n");
		return;
	}
	const struct node *ce = kid(p, "chrome_events");
	if (ce) {
		OUT("M");
		for (size_t i = 0; i < ce->n; i++)
			OUT(" %s=%s", val(ce->kids[i], "name"), val(ce->kids[i], "string_value"));
		OUT("\n");
		return;
	}
	bad(c, "a packet of no known kind", "");
}

/* Decodes the file at path and checks it; the summary goes to c->sum. */
static bool decode(struct check *c, const char *path)
{
	struct node *root = pbtext_decode(path);
	if (!root)
		return false;
	for (size_t i = 0; i < root->n; i++)
		check_packet(c, root->kids[i], i == 0);
	node_free(root);
	reset(c);
	return true;
}

/* The lines of text starting with "E " (track events). */
static size_t count_lines(const char *text, const char *needle, bool ends_too)
{
	size_t n = 0;
	for (const char *l = text; *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		char line[2048];
		snprintf(line, sizeof(line), "%.*s", (int)len, l);
		if (line[0] == 'E' && (ends_too || !strstr(line, "SLICE_END")) &&
		    (!needle || strcmp(line, needle) == 0) && !strstr(line, "\"continued\""))
			n++;
		l += len + (e != NULL);
	}
	return n;
}

/* Every track event of whole (but the ends: a split adds some) is in
 * parts exactly once, and parts has no other (but the spans begun again,
 * "continued"). */
static void same_events(const char *whole, const char *parts, const char *what)
{
	size_t missing = 0;
	for (const char *l = whole; *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		char line[2048];
		snprintf(line, sizeof(line), "%.*s", (int)len, l);
		if (line[0] == 'E' && !strstr(line, "SLICE_END") && count_lines(parts, line, false) != 1) {
			if (missing++ < 3)
				diag("%s: not once: %s", what, line);
		}
		l += len + (e != NULL);
	}
	ok(missing == 0, "%s: every event of the whole trace once", what);
	ASSERT_EQ_U64(count_lines(parts, NULL, false), count_lines(whole, NULL, false));
}

/* Decodes the series base-0001.pftrace ... (n files) into one summary. */
static struct check *decode_series(const char *base, unsigned n)
{
	struct check *c = calloc(1, sizeof(*c));
	for (unsigned i = 0; i < n; i++) {
		char path[128];
		snprintf(path, sizeof(path), "%s-%04u.pftrace", base, i + 1);
		struct stat st;
		ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "%s exists, 0600", path);
		ok(decode(c, path), "protoc decodes %s", path);
		unlink(path);
	}
	return c;
}

/* A trace of n raw events of 16 bytes on one thread. */
static void build_big(struct fg_file *f, unsigned n)
{
	struct fg_block b;
	fg_file_init(f);
	fg_marker_block(f, 1, 1, 1000000000u, FX_START, FX_REALTIME, RLOG_TICK_TSC, 16384, 8, "big");
	for (unsigned i = 0; i < n;) {
		fg_block_begin(&b, 300, 301, FX_START + (uint64_t)i * 10, 0);
		for (unsigned k = 0; k < 400 && i < n; k++, i++) {
			uint32_t p[4] = { 301, i, i * 7, 0 };
			fx_rec(&b, (uint64_t)i * 10 + 1, 1030, -1, p, sizeof(p));
		}
		fg_block_end(f, &b);
	}
}

/* Converts in to out (one file), decodes and checks it; SHOW=1 prints
 * the summary. */
static struct check *convert_check(struct h_run *r, const char *in, const char *out,
				   const char *what)
{
	h_ringlog(r, "convert", in, "--to", "perfetto", "-o", out, "--force", NULL);
	ASSERT_EQ(r->status, 0);
	struct check *c = calloc(1, sizeof(*c));
	ok(decode(c, out), "protoc decodes %s", what);
	ASSERT_EQ(c->errors, 0);
	if (getenv("SHOW"))
		fputs(c->sum, stderr);
	return c;
}

/* ------------------------------------------------------------------ */
/* The templates against the general way                               */

#define TW_THREADS 140u /* past 127: two-byte track uuids and sequence ids */
#define TW_PAIRS 10u    /* per thread */

/*
 * A trace whose every record comes twice, at t (a multiple of 10 ns) and
 * t + 1: the first of a schema in a file, or on a thread not yet
 * described, goes the general way, the second from its schema's template
 * (convert_perfetto.c): the two must decode the same.  Strings of every
 * shape (long: a two-byte length; non-ASCII in the 8-byte part and in
 * the tail; not UTF-8; a NUL), every number type, a counter schema on
 * two processes, a counter of the wrong size, nested spans.
 */
static void build_twice(struct fg_file *f)
{
	static const struct fx_field ev[] = {
		{ RLOG_FIELD_STRING, 0, "s" }, { RLOG_FIELD_U8, 0, "a" }, { RLOG_FIELD_I8, 0, "b" },
		{ RLOG_FIELD_U16, 0, "c" }, { RLOG_FIELD_I16, 0, "d" }, { RLOG_FIELD_U32, 0, "e" },
		{ RLOG_FIELD_I32, 0, "g" }, { RLOG_FIELD_U64, 0, "h" }, { RLOG_FIELD_I64, 0, "i" },
		{ RLOG_FIELD_F64, 0, "x" },
	};
	static const struct fx_field cn[] = {
		{ RLOG_FIELD_I32, 0, "n" }, { RLOG_FIELD_F64, 0, "l" }, { RLOG_FIELD_U8, 0, "m" },
	};
	static const struct fx_field sp[] = { { RLOG_FIELD_STRING, 0, "what" } };
	static const char *const strs[] = { NULL, "", "abcdefg\xc3\xa9", "\xc3\xa9" "abcdefgh",
					    "bad\xff", "ab\0cd" };
	static const size_t lens[] = { 200, 0, 9, 10, 4, 5 };
	char longs[200];
	struct fg_block b;
	memset(longs, 'a', sizeof(longs));
	fg_file_init(f);
	fg_marker_block(f, 1, 1, 1000000000u, FX_START, FX_REALTIME, RLOG_TICK_TSC, 65536, 8, "twice");
	for (uint32_t pid = 700; pid <= 701; pid++) {
		fg_block_begin(&b, pid, pid, FX_START, 0);
		fx_schema(&b, 1, 1200, RLOG_KIND_EVENT, 4, "tw.event", ev, 10);
		fx_schema(&b, 2, 1201, RLOG_KIND_COUNTER, 0, "tw.counter", cn, 3);
		fx_schema(&b, 3, 1202, RLOG_KIND_SPAN, 5, "tw.span", sp, 1);
		fg_block_end(f, &b);
	}
	uint64_t t = 100;
	for (uint32_t th = 0; th < TW_THREADS; th++) {
		uint32_t pid = 700 + th % 2;
		fg_block_begin(&b, pid, 10000 + th, FX_START + t, 0);
		for (unsigned k = 0; k < 6; k++, t += 10) {
			struct fg_buf p = { 0 };
			double x = 0.5 * k - th;
			uint64_t xb;
			memcpy(&xb, &x, 8);
			fx_str(&p, strs[k] ? strs[k] : longs, lens[k]);
			fg_u8(&p, (uint8_t)(255 - k));
			fg_u8(&p, (uint8_t)(int8_t)(-1 - (int)k));
			fg_u16(&p, (uint16_t)(th * 400));
			fg_u16(&p, (uint16_t)(int16_t)(-(int)th));
			fg_u32(&p, th << 20);
			fg_u32(&p, (uint32_t)(INT32_MIN + (int32_t)k));
			fg_u64(&p, UINT64_MAX - th);
			fg_u64(&p, (uint64_t)(k % 2 ? INT64_MIN : (int64_t)th));
			fg_u64(&p, xb);
			for (unsigned rep = 0; rep < 2; rep++)
				fx_rec(&b, t + rep, 1200, -1, p.p, p.len);
			free(p.p);
		}
		for (unsigned k = 0; k < 2; k++, t += 10) {
			struct fg_buf p = { 0 };
			double l = 1.25 * th;
			uint64_t lb;
			memcpy(&lb, &l, 8);
			fg_u32(&p, (uint32_t)(-(int32_t)th));
			fg_u64(&p, lb);
			if (k == 0) /* the second: one byte short, a mismatch */
				fg_u8(&p, (uint8_t)th);
			for (unsigned rep = 0; rep < 2; rep++)
				fx_rec(&b, t + rep, 1201, -1, p.p, p.len);
			free(p.p);
		}
		struct fg_buf p = { 0 };
		fx_str(&p, "inner", 5);
		for (unsigned rep = 0; rep < 2; rep++)
			fx_rec(&b, t + rep, 1202, RLOG_SPAN_BEGIN, p.p, p.len);
		free(p.p);
		t += 10;
		for (unsigned rep = 0; rep < 2; rep++)
			fx_rec(&b, t + rep, 1202, RLOG_SPAN_END, NULL, 0);
		t += 10;
		fg_block_end(f, &b);
	}
}

/* The track events of build_twice's summary whose time is not the one
 * written: the i-th at 100 + 10 * (i / 2) + i % 2 ns, the two of a pair
 * on one of 140 sequences, each with its own clock 64. */
static unsigned times_off(const char *sum)
{
	unsigned i = 0, off = 0;
	for (const char *l = sum; (l = strstr(l, "\nE ")) != NULL; l++, i++)
		off += strtoull(l + 3, NULL, 10) != 100u + 10u * (i / 2) + i % 2;
	return off;
}

/* The pairs of build_twice's summary that decode the same (an event at t
 * + 1 the same as the one before it, at t, but for the time); *differ
 * gets the others. */
static unsigned same_pairs(const char *sum, unsigned *differ)
{
	char prev[4096] = "";
	unsigned same = 0;
	*differ = 0;
	for (const char *l = sum; *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		if (l[0] == 'E') {
			char *rest;
			long long t = strtoll(l + 2, &rest, 10);
			size_t n = len - (size_t)(rest - l);
			if (t % 10 == 0) {
				snprintf(prev, sizeof(prev), "%.*s", (int)n, rest);
			} else if (strlen(prev) == n && memcmp(prev, rest, n) == 0) {
				same++;
			} else {
				if ((*differ)++ < 3)
					diag("differs: %.*s after %s", (int)len, l, prev);
			}
		}
		l += len + (e != NULL);
	}
	return same;
}

/* ------------------------------------------------------------------ */
/* System events (docs/FORMAT.md, "System events")                     */

static const struct fg_field sw_f[] = {
	{ RLOG_FIELD_U32, 0, "pid" }, { RLOG_FIELD_U32, 0, "tid" }, { RLOG_FIELD_I32, 0, "prev_tid" },
	{ RLOG_FIELD_I64, 0, "prev_state" }, { RLOG_FIELD_I32, 0, "prev_prio" },
	{ RLOG_FIELD_I32, 0, "next_tid" }, { RLOG_FIELD_I32, 0, "next_prio" },
	{ RLOG_FIELD_STRING, 0, "prev_comm" }, { RLOG_FIELD_STRING, 0, "next_comm" },
};
static const struct fg_field wk_f[] = {
	{ RLOG_FIELD_U32, 0, "pid" }, { RLOG_FIELD_U32, 0, "tid" }, { RLOG_FIELD_I32, 0, "target_tid" },
	{ RLOG_FIELD_I32, 0, "prio" }, { RLOG_FIELD_I32, 0, "target_cpu" },
	{ RLOG_FIELD_STRING, 0, "comm" },
};
static const struct fg_field mg_f[] = {
	{ RLOG_FIELD_U32, 0, "pid" }, { RLOG_FIELD_U32, 0, "tid" }, { RLOG_FIELD_I32, 0, "target_tid" },
	{ RLOG_FIELD_I32, 0, "orig_cpu" }, { RLOG_FIELD_I32, 0, "dest_cpu" },
	{ RLOG_FIELD_STRING, 0, "comm" },
};
static const struct fg_field pr_f[] = {
	{ RLOG_FIELD_U32, 0, "pid" }, { RLOG_FIELD_U32, 0, "tid" }, { RLOG_FIELD_U32, 0, "ppid" },
	{ RLOG_FIELD_STRING, 0, "comm" }, { RLOG_FIELD_STRING, 0, "cmdline" },
};
static const struct fg_field th_f[] = {
	{ RLOG_FIELD_U32, 0, "pid" }, { RLOG_FIELD_U32, 0, "tid" }, { RLOG_FIELD_STRING, 0, "comm" },
};

static void sys_str(struct fg_buf *p, const char *s)
{
	fg_str(p, s, strlen(s));
}

static void sys_switch(struct fg_block *b, uint64_t t, uint32_t pid, uint32_t tid, int64_t state,
		       uint32_t next, const char *prev_comm, const char *next_comm)
{
	struct fg_buf p = { 0 };
	fg_u32(&p, pid);
	fg_u32(&p, tid);
	fg_u32(&p, tid);
	fg_u64(&p, (uint64_t)state);
	fg_u32(&p, 120);
	fg_u32(&p, next);
	fg_u32(&p, (uint32_t)-1); /* a negative prio: int32's ten-byte varint */
	sys_str(&p, prev_comm);
	sys_str(&p, next_comm);
	fx_rec(b, t, 64, -1, p.p, p.len);
	free(p.p);
}

/* 2.1 file: CPU 0 and CPU 1 blocks of sched_switch, sched_waking and a
 * sched_migrate_task (no ftrace message here: an instant), a rundown. */
static void build_sys(struct fg_file *f)
{
	struct fg_block b;
	struct fg_buf p = { 0 };
	fg_file_init_ex(f, 2, 1, FG_FILE_HDR, 1700000000000000000ull);
	fg_marker_block(f, 1, 1, 1000000000u, FX_START, FX_REALTIME, RLOG_TICK_TSC, 16384, 8, "sys");

	fg_block_begin(&b, 0, 0, FX_START, 0x0005);
	fg_schema(&b, (uint32_t)(FX_START + 5), 64, RLOG_KIND_EVENT, 0, "sched_switch", sw_f, 9);
	fg_schema(&b, (uint32_t)(FX_START + 5), 66, RLOG_KIND_EVENT, 0, "sched_waking", wk_f, 6);
	fg_schema(&b, (uint32_t)(FX_START + 5), 68, RLOG_KIND_EVENT, 0, "sched_migrate_task", mg_f, 6);
	sys_switch(&b, 100, 500, 501, 1, 0, "worker", "swapper/0");
	sys_switch(&b, 300, 0, 0, 0, 501, "swapper/0", "worker");
	fg_u32(&p, 500);
	fg_u32(&p, 501);
	fg_u32(&p, 501);
	fg_u32(&p, 0);
	fg_u32(&p, 1);
	sys_str(&p, "worker");
	fx_rec(&b, 350, 68, -1, p.p, p.len);
	fg_block_end(f, &b);

	fg_block_begin(&b, 0, 1, FX_START, 0x0005);
	p.len = 0;
	fg_u32(&p, 600);
	fg_u32(&p, 602);
	fg_u32(&p, 501);
	fg_u32(&p, 120);
	fg_u32(&p, 0);
	sys_str(&p, "worker");
	fx_rec(&b, 250, 66, -1, p.p, p.len);
	sys_switch(&b, 260, 600, 602, 2, 603, "waker", "waker-2");
	fg_block_end(f, &b);

	fg_block_begin(&b, 0, 0xffffffffu, FX_START, 0x0005);
	fg_schema(&b, (uint32_t)(FX_START + 50), 78, RLOG_KIND_EVENT, 0, "process_rundown", pr_f, 5);
	fg_schema(&b, (uint32_t)(FX_START + 50), 79, RLOG_KIND_EVENT, 0, "thread_rundown", th_f, 3);
	const struct {
		uint32_t pid, tid, ppid;
		const char *comm, *cmdline;
	} rd[] = {
		{ 500, 500, 1, "worker", "/usr/bin/worker --fast -n 2" },
		{ 500, 500, 0, "worker", NULL },
		{ 500, 501, 0, "worker-1", NULL },
		{ 2, 2, 0, "kthreadd", "" },
	};
	for (size_t i = 0; i < sizeof(rd) / sizeof(rd[0]); i++) {
		p.len = 0;
		fg_u32(&p, rd[i].pid);
		fg_u32(&p, rd[i].tid);
		if (rd[i].cmdline)
			fg_u32(&p, rd[i].ppid);
		sys_str(&p, rd[i].comm);
		if (rd[i].cmdline)
			sys_str(&p, rd[i].cmdline);
		fx_rec(&b, 50, rd[i].cmdline ? 78 : 79, -1, p.p, p.len);
	}
	fg_block_end(f, &b);
	free(p.p);
}

static const char expected_sys[] =
	"C snapshot\n"
	"P 50\n"
	"  processes pid=500 ppid=1 cmdline=\"/usr/bin/worker\" cmdline=\"--fast\" cmdline=\"-n\" cmdline=\"2\"\n"
	"  processes pid=2 ppid=0 cmdline=\"kthreadd\" cmdline_is_comm=true\n"
	"  threads tid=500 name=\"worker\" tgid=500\n"
	"  threads tid=501 name=\"worker-1\" tgid=500\n"
	"D 5 parent 0 name \"system (pid 0)\"\n"
	"D 2 parent 5 name \"pid 0 tid 0\"\n"
	"E 350 INSTANT 2 [\"0\"] \"sched_migrate_task\" \"pid\"=u:500 \"tid\"=u:501 \"target_tid\"=i:501 \"orig_cpu\"=i:0 \"dest_cpu\"=i:1 \"comm\"=s:\"worker\"\n"
	"F cpu 0\n"
	"  100 pid 501 sched_switch prev_comm=\"worker\" prev_pid=501 prev_prio=120 prev_state=1 next_comm=\"swapper/0\" next_pid=0 next_prio=-1\n"
	"  300 pid 0 sched_switch prev_comm=\"swapper/0\" prev_pid=0 prev_prio=120 prev_state=0 next_comm=\"worker\" next_pid=501 next_prio=-1\n"
	"F cpu 1\n"
	"  250 pid 602 sched_waking comm=\"worker\" pid=501 prio=120 target_cpu=0\n"
	"  260 pid 602 sched_switch prev_comm=\"waker\" prev_pid=602 prev_prio=120 prev_state=2 next_comm=\"waker-2\" next_pid=603 next_prio=-1\n"
	"M \"ringlog.session\"=\"sys\" \"ringlog.file_index\"=\"0\" \"ringlog.track_events\"=\"1\" \"ringlog.loss_records\"=\"0\" \"ringlog.events_lost\"=\"0\" \"ringlog.start_realtime_ns\"=\"1700000000123456789\"\n";

static const char expected[] =
	"C snapshot\n"
	"D 6 parent 0 process 200 \"client\"\n"
	"D 5 parent 6 thread 200 201 -\n"
	"E 400 INSTANT 5 [\"raw\"] \"1025\" \"payload\"=s:\"616263\"\n"
	"E 410 INSTANT 5 [\"raw\"] \"1026/7\" \"flag\"=u:7 \"payload\"=s:\"0102030405\"\n"
	"E 420 INSTANT 5 [\"raw\"] \"RAW_U32\" \"payload\"=s:\"0100000002000000ffffffff\" \"values[0]\"=u:1 \"values[1]\"=u:2 \"values[2]\"=u:4294967295\n"
	"E 430 INSTANT 5 [\"raw\"] \"RAW_STRING\" \"payload\"=s:\"6869\" \"value\"=s:\"hi\"\n"
	"E 440 INSTANT 5 [\"raw\"] \"RAW_I16\" \"payload\"=s:\"010203\"\n"
	"E 450 INSTANT 5 [\"raw\"] \"1100\" \"payload\"=s:\"7a7a\"\n"
	"D 3 parent 0 process 100 \"server\"\n"
	"D 2 parent 3 thread 100 101 \"main\"\n"
	"E 500 INSTANT 2 [\"3\"] \"all.types\" \"a\"=u:255 \"b\"=u:65535 \"c\"=u:4294967295 \"d\"=u:18446744073709551615 \"e\"=i:-128 \"f\"=i:-32768 \"g\"=i:-2147483648 \"h\"=i:-9223372036854775808 \"x\"=d:1.5 \"blob\"=s:\"deadbeef\" \"s\"=s:\"/index\"\n"
	"E 1000 SLICE_BEGIN 2 [\"1\"] \"work.span\" \"depth\"=u:0\n"
	"D 4 parent 3 thread 100 102 \"worker-1\"\n"
	"E 1050 SLICE_BEGIN 4 [\"1\"] \"work.span\" \"depth\"=u:7\n"
	"D 7 parent 3 name \"queue.depth\" counter\n"
	"D 8 parent 3 name \"queue.load\" counter\n"
	"D 9 parent 3 name \"queue.delta\" counter\n"
	"E 1100 COUNTER 7 =3=-2 +9 +8=0.25\n"
	"E 1200 SLICE_BEGIN 2 [\"2\"] \"io.span\" \"what\"=s:\"read \\\"cfg\\\"\\n\"\n"
	"E 1500 SLICE_END 2\n"
	"E 1600 SLICE_BEGIN 2 [\"1\"] \"work.span\" \"depth\"=u:1\n"
	"E 1700 SLICE_END 2\n"
	"E 1800 COUNTER 7 =0=5 +9 +8=0.001\n"
	"E 1900 SLICE_END 4\n"
	"E 2000 SLICE_END 2\n"
	"E 2100 INSTANT 2 [\"3\"] \"all.types\" \"a\"=u:0 \"b\"=u:0 \"c\"=u:0 \"d\"=u:0 \"e\"=i:127 \"f\"=i:32767 \"g\"=i:2147483647 \"h\"=i:9223372036854775807 \"x\"=d:-2.75e-300 \"blob\"=s:\"00010203\" \"s\"=s:\"\"\n"
	"E 2150 INSTANT 2 [\"3\"] \"all.types\" \"a\"=u:1 \"b\"=u:2 \"c\"=u:3 \"d\"=u:4 \"e\"=i:-1 \"f\"=i:-2 \"g\"=i:-3 \"h\"=i:-4 \"x\"=d:1e+300 \"blob\"=s:\"00010203\" \"s\"=s:\"h\\303\\251llo \\\"q\\\" \\\\ \\t\\001\"\n"
	"E 2160 INSTANT 2 [\"3\"] \"all.types\" \"a\"=u:9 \"b\"=u:9 \"c\"=u:9 \"d\"=u:9 \"e\"=i:9 \"f\"=i:9 \"g\"=i:9 \"h\"=i:9 \"x\"=d:nan \"blob\"=s:\"00010203\" \"s\"=s:\"ab\\000cd\"\n"
	"E 2170 INSTANT 2 [\"3\"] \"all.types\" \"mismatch\"=b:true \"payload\"=s:\"7a7a\"\n"
	"E 2180 COUNTER 7 =4=-1 +9 +8=2.5\n"
	"E 2185 COUNTER 7 =1=0 +9 +8=inf\n"
	"E 2190 INSTANT 2 [\"2\"] \"io.span/2\" \"mismatch\"=b:true \"flag\"=u:2 \"payload\"=s:\"78\"\n"
	"D 10 parent 4 name \"lost\"\n"
	"E 2200 INSTANT 10 [\"ringlog\"] \"data_loss: no_buffer\" \"events\"=u:5 \"bytes\"=u:80 \"cause\"=s:\"no_buffer\"\n"
	"E 2500 SLICE_BEGIN 4 [\"2\"] \"io.span\" \"what\"=s:\"never ends\"\n"
	"E 2600 INSTANT 4 [\"1\"] \"work.span\" \"span\"=s:\"end without begin\"\n"
	"D 12 parent 0 name \"system (pid 0)\"\n"
	"D 11 parent 12 name \"pid 0 tid 0\"\n"
	"D 13 parent 11 name \"lost\"\n"
	"E 2700 INSTANT 13 [\"ringlog\"] \"data_loss: log_write\" \"events\"=u:3 \"bytes\"=u:48 \"cause\"=s:\"log_write\"\n"
	"D 14 parent 2 name \"lost\"\n"
	"E 2800 INSTANT 14 [\"ringlog\"] \"data_loss: corrupt\" \"events\"=u:0 \"bytes\"=u:64 \"cause\"=s:\"corrupt\"\n"
	"M \"ringlog.session\"=\"demo\" \"ringlog.file_index\"=\"0\" \"ringlog.track_events\"=\"29\" \"ringlog.loss_records\"=\"3\" \"ringlog.events_lost\"=\"8\" \"ringlog.start_realtime_ns\"=\"1700000000123456789\"\n";

/* The string value of metadata entry key (quoted, as protoc prints it)
 * in the decoded trace root, or NULL. */
static const char *meta_of(const struct node *root, const char *key)
{
	for (size_t i = 0; i < root->n; i++) {
		const struct node *ce = kid(root->kids[i], "chrome_events");
		for (size_t k = 0; ce && k < ce->n; k++) {
			const char *n = val(ce->kids[k], "name");
			if (n && strcmp(n, key) == 0)
				return val(ce->kids[k], "string_value");
		}
	}
	return NULL;
}

/* How many track descriptors of root are named name (quoted), and of
 * those, how many are processes of pid. */
static unsigned tracks_named(const struct node *root, const char *name, uint64_t pid,
			     unsigned *of_pid)
{
	unsigned n = 0;
	*of_pid = 0;
	for (size_t i = 0; i < root->n; i++) {
		const struct node *td = kid(root->kids[i], "track_descriptor");
		const struct node *pr = td ? kid(td, "process") : NULL;
		const char *tn = !td ? NULL : pr ? val(pr, "process_name") : val(td, "name");
		if (tn && strcmp(tn, name) == 0) {
			n++;
			*of_pid += pr && num(pr, "pid") == pid;
		}
	}
	return n;
}

/*
 * Two hosts (the demo trace, the system events' trace) as one trace
 * (docs/CONVERT.md, "Several hosts"): the system events not as ftrace
 * events or a process tree but instants on the second host's system
 * track; each host's losses and events in the metadata; the processes
 * "HOST: name" with the host's pids.
 */
static void check_two_hosts(const char *demo, const char *sys, const char *out)
{
	struct h_run r;
	unlink(out);
	h_ringlog(&r, "convert", demo, sys, "--to", "perfetto", "-o", out, NULL);
	ok(r.status == 0 && h_kv(r.out, "hosts") == 2 && h_kv(r.out, "ftrace_events") == 0 &&
	   h_kv(r.out, "process_records") == 0 && h_kv(r.out, "events_written") == 29 + 9 &&
	   h_kv(r.out, "events_lost") == FX_LOST_EVENTS && h_kv(r.out, "files") == 1,
	   "two hosts: exit 0, the system events as 9 track events, no ftrace (%d %s)", r.status,
	   r.err);
	struct node *root = pbtext_decode(out);
	ok(root != NULL, "two hosts: protoc decodes the trace");
	if (!root)
		return;
	unsigned ftrace = 0;
	for (size_t i = 0; i < root->n; i++)
		ftrace += kid(root->kids[i], "ftrace_events") || kid(root->kids[i], "process_tree");
	ok(ftrace == 0, "two hosts: no ftrace bundle nor process tree");
	char h0[80], h1[80], want[160];
	snprintf(h0, sizeof h0, "%s", strrchr(demo, '/') + 1);
	snprintf(h1, sizeof h1, "%s", strrchr(sys, '/') + 1);
	static const struct {
		const char *key, *host; /* host NULL: the value as it is */
		const char *v;
	} kv[] = {
		{ "\"ringlog.hosts\"", NULL, "\"2\"" },
		{ "\"ringlog.host.0.events_lost\"", NULL, "\"8\"" },
		{ "\"ringlog.host.0.loss_records\"", NULL, "\"3\"" },
		{ "\"ringlog.host.0.track_events\"", NULL, "\"29\"" },
		{ "\"ringlog.host.1.events_lost\"", NULL, "\"0\"" },
		{ "\"ringlog.host.1.track_events\"", NULL, "\"9\"" },
		{ "\"ringlog.host.1.session\"", NULL, "\"sys\"" },
		{ "\"ringlog.host.0.pid_base\"", NULL, "\"10000000\"" },
		{ "\"ringlog.host.1.pid_base\"", NULL, "\"20000000\"" },
		{ "\"ringlog.host.0.clock_error\"", NULL, "\"not recorded\"" },
		{ "\"ringlog.host.0.name\"", "0", NULL },
		{ "\"ringlog.host.1.name\"", "1", NULL },
	};
	unsigned right = 0;
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++) {
		const char *v = meta_of(root, kv[i].key);
		snprintf(want, sizeof want, "\"%s\"", kv[i].host ? (kv[i].host[0] == '0' ? h0 : h1) : "");
		bool good = v && strcmp(v, kv[i].host ? want : kv[i].v) == 0;
		if (!good)
			diag("two hosts: %s is %s", kv[i].key, v ? v : "missing");
		right += good;
	}
	ok(right == sizeof(kv) / sizeof(kv[0]), "two hosts: each host's name, losses, events, pid "
	   "base and clock error in the metadata");
	unsigned pids;
	snprintf(want, sizeof want, "\"%s: system (pid 0)\"", h1);
	ok(tracks_named(root, want, 0, &pids) == 1, "two hosts: the second host's system track");
	snprintf(want, sizeof want, "\"%s: server\"", h0);
	ok(tracks_named(root, want, 10000100, &pids) == 1 && pids == 1,
	   "two hosts: the first host's process \"HOST: server\", pid 10000100");
	node_free(root);
	unlink(out);
}

int main(void)
{
	char in[64], out[64];
	struct fg_file f;
	struct h_run r;

	BAIL_IF(system("protoc --version >/dev/null 2>&1") != 0,
		"protoc is missing: scripts/deps.sh installs protobuf-compiler");
	fx_build(&f);
	fg_tmpname(in, "cvp");
	fg_tmpname(out, "cvpo");
	BAIL_IF(fg_write(&f, in) < 0, "cannot write %s", in);

	struct check *c = convert_check(&r, in, out, "the output");
	ASSERT_STREQ(c->sum, expected);
	/* The file's sequence and one per thread with track events: 200/201,
	 * 100/101, 100/102 and pid 0's CPU 0. */
	ASSERT_EQ(c->seqs, 1 + 4);
	ASSERT_EQ_U64(h_kv(r.out, "files"), 1);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 29);
	ASSERT_EQ_U64(h_kv(r.out, "spans"), 4);
	ASSERT_EQ_U64(h_kv(r.out, "unmatched_begins"), 1);
	ASSERT_EQ_U64(h_kv(r.out, "unmatched_ends"), 1);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), FX_LOST_EVENTS);
	struct stat sb;
	ASSERT_EQ_U64(stat(out, &sb) == 0 ? (uint64_t)sb.st_size : 0, h_kv(r.out, "bytes_written"));

	/* --split 1us: a file per microsecond from its first event. */
	char base[80], first[96];
	snprintf(base, sizeof(base), "%s_s", out);
	snprintf(first, sizeof(first), "%s.pftrace", base);
	h_ringlog(&r, "convert", in, "--to", "perfetto", "-o", first, "--split", "1us", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "files"), 3);
	struct check *s3 = decode_series(base, 3);
	ASSERT_EQ(s3->errors, 0);
	ASSERT_EQ(s3->files, 3);
	same_events(c->sum, s3->sum, "--split 1us");
	/* A file starts at its first record (a name at 100 ns): the span open
	 * at the second split (1000 ns, work.span) ends with the second file,
	 * at its last time, and is begun again at the third's first event. */
	ASSERT_CONTAINS(s3->sum, "E 1900 SLICE_END 4\nE 1900 SLICE_END 2\nM ");
	ASSERT_CONTAINS(s3->sum, "C snapshot\nD 3 parent 0 process 100 \"server\"\n"
				 "D 2 parent 3 thread 100 101 \"main\"\n"
				 "E 2000 SLICE_BEGIN 2 [\"1\"] \"work.span\" \"continued\"=b:true\n"
				 "E 2000 SLICE_END 2\n");
	ASSERT_EQ_U64(count_lines(s3->sum, NULL, true), 29 + 1);
	ASSERT_EQ_U64(s3->events, 29 + 1 + 1);
	free(s3);

	/* A series never writes over its input, at its first name or a later
	 * one, even with --force (the reader is reading it). */
	for (unsigned k = 1; k <= 2; k++) {
		char copy[128], cmd[300], line[256];
		snprintf(copy, sizeof(copy), "%s_in-%04u.pftrace", out, k);
		snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", in, copy);
		ASSERT_EQ(system(cmd), 0);
		struct stat before, after;
		ASSERT_EQ(stat(copy, &before), 0);
		snprintf(first, sizeof(first), "%s_in.pftrace", out);
		h_ringlog(&r, "convert", copy, "--to", "perfetto", "-o", first, "--split", "1us",
			  "--force", NULL);
		ASSERT_EQ(r.status, 1);
		snprintf(line, sizeof(line), "ringlog: convert: %s: the output is the input file\n", copy);
		ASSERT_STREQ(r.err, line);
		ASSERT_EQ(stat(copy, &after), 0);
		ASSERT_EQ_U64((uint64_t)after.st_size, (uint64_t)before.st_size);
		unlink(copy);
		snprintf(copy, sizeof(copy), "%s_in-0001.pftrace", out);
		unlink(copy);
	}

	/* --since/--until: the window's events only. */
	h_ringlog(&r, "convert", in, "--to", "perfetto", "-o", out, "--force", "--since", "1100ns",
		  "--until", "2us", NULL);
	ASSERT_EQ(r.status, 0);
	struct check *w = calloc(1, sizeof(*w));
	ok(decode(w, out), "protoc decodes the window");
	ASSERT_EQ(w->errors, 0);
	ASSERT_CONTAINS(w->sum, "E 1100 SLICE_BEGIN 2 [\"1\"] \"work.span\" \"continued\"=b:true\n"
				"D 4 parent 3 thread 100 102 \"worker-1\"\n"
				"E 1100 SLICE_BEGIN 4 [\"1\"] \"work.span\" \"continued\"=b:true\n"
				"D 7 parent 3 name \"queue.depth\" counter\n");
	ASSERT_CONTAINS(w->sum, "E 2000 SLICE_END 2\nM ");
	ok(strstr(w->sum, "E 1050 ") == NULL && strstr(w->sum, "E 2100 ") == NULL,
	   "nothing outside the window");
	free(w);
	free(c);

	/* --max-size 1M: no file past it, every event once. */
	struct fg_file big;
	char bin[64];
	build_big(&big, 50000);
	fg_tmpname(bin, "cvpb");
	BAIL_IF(fg_write(&big, bin) < 0, "cannot write %s", bin);
	fg_file_free(&big);
	h_ringlog(&r, "convert", bin, "--to", "perfetto", "-o", out, "--force", NULL);
	ASSERT_EQ(r.status, 0);
	struct check *whole = calloc(1, sizeof(*whole));
	ok(decode(whole, out), "protoc decodes the large trace");
	uint64_t whole_bytes = h_kv(r.out, "bytes_written");
	ASSERT_EQ_U64(whole->events, 50000);
	ASSERT_EQ(whole->errors, 0);
	snprintf(base, sizeof(base), "%s_m", out);
	snprintf(first, sizeof(first), "%s.pftrace", base);
	h_ringlog(&r, "convert", bin, "--to", "perfetto", "-o", first, "--max-size", "1M", NULL);
	ASSERT_EQ(r.status, 0);
	unsigned nf = (unsigned)h_kv(r.out, "files");
	ok(nf >= 2 && nf <= 1 + whole_bytes / 900000, "%u files for %" PRIu64 " bytes", nf, whole_bytes);
	for (unsigned i = 0; i < nf; i++) {
		char path[128];
		snprintf(path, sizeof(path), "%s-%04u.pftrace", base, i + 1);
		ok(stat(path, &sb) == 0 && sb.st_size <= (1 << 20), "%s within 1M", path);
	}
	struct check *m = decode_series(base, nf);
	ASSERT_EQ(m->errors, 0);
	ASSERT_EQ(m->files, nf);
	ASSERT_EQ_U64(m->events, 50000);
	free(m);
	free(whole);
	unlink(bin);

	/* Bytes that are not UTF-8 in a thread name and a string: each
	 * becomes U+FFFD (protoc would refuse the file otherwise). */
	struct fg_file u;
	struct fg_block ub;
	fg_file_init(&u);
	fg_marker_block(&u, 1, 1, 1000000000u, FX_START, FX_REALTIME, RLOG_TICK_TSC, 16384, 8, "utf");
	fg_block_begin(&ub, 400, 401, FX_START, 0);
	fx_rec(&ub, 10, RLOG_ID_THREAD_NAME, -1, "w\xff\xfe", 3);
	fx_rec(&ub, 20, RLOG_ID_RAW_STRING, -1, "a\xc3(b", 4);
	fg_block_end(&u, &ub);
	BAIL_IF(fg_write(&u, bin) < 0, "cannot write %s", bin);
	fg_file_free(&u);
	h_ringlog(&r, "convert", bin, "--to", "perfetto", "-o", out, "--force", NULL);
	ASSERT_EQ(r.status, 0);
	struct check *uc = calloc(1, sizeof(*uc));
	ok(decode(uc, out), "protoc decodes the names made valid");
	ASSERT_EQ(uc->errors, 0);
	ASSERT_CONTAINS(uc->sum, "thread 400 401 \"w\\357\\277\\275\\357\\277\\275\"\n");
	ASSERT_CONTAINS(uc->sum, "\"value\"=s:\"a\\357\\277\\275(b\"\n");
	free(uc);
	unlink(bin);

	/* Every event from its schema's template decodes as the general way
	 * writes it (the first of each pair). */
	struct fg_file tw;
	build_twice(&tw);
	BAIL_IF(fg_write(&tw, bin) < 0, "cannot write %s", bin);
	fg_file_free(&tw);
	struct check *twc = convert_check(&r, bin, out, "the records written twice");
	unsigned differ;
	ASSERT_EQ_U64(same_pairs(twc->sum, &differ), TW_THREADS * TW_PAIRS);
	ASSERT_EQ(differ, 0);
	ASSERT_EQ_U64(twc->events, 2 * TW_THREADS * TW_PAIRS);
	/* The file's sequence and one per thread, each event's time exact. */
	ASSERT_EQ(twc->seqs, 1 + TW_THREADS);
	ASSERT_EQ(times_off(twc->sum), 0);
	ASSERT_EQ_U64(h_kv(r.out, "mismatched"), 2 * TW_THREADS);
	ASSERT_CONTAINS(twc->sum, "E 101 INSTANT 4 [\"4\"] \"tw.event\" \"s\"=s:\"aaaaaaaaaa");
	ASSERT_CONTAINS(twc->sum, "\"s\"=s:\"abcdefg\\303\\251\" \"a\"=u:253 \"b\"=i:-3");
	ASSERT_CONTAINS(twc->sum, "\"s\"=s:\"bad\\357\\277\\275\" \"a\"=u:251");
	ASSERT_CONTAINS(twc->sum, "\"s\"=s:\"ab\\000cd\"");
	ASSERT_CONTAINS(twc->sum, " \"h\"=u:18446744073709551476 \"i\"=i:-9223372036854775808 "
				  "\"x\"=d:-138.5\n");
	ASSERT_CONTAINS(twc->sum, " SLICE_END 141\n");
	free(twc);
	unlink(bin);

	/* System events: ftrace bundles per CPU, the process tree. */
	struct fg_file sf;
	build_sys(&sf);
	BAIL_IF(fg_write(&sf, bin) < 0, "cannot write %s", bin);
	fg_file_free(&sf);
	struct check *sc = convert_check(&r, bin, out, "the system events");
	ASSERT_STREQ(sc->sum, expected_sys);
	ASSERT_EQ_U64(h_kv(r.out, "ftrace_events"), 4);
	ASSERT_EQ_U64(h_kv(r.out, "process_records"), 4);
	free(sc);
	/* --split 200ns (from the schemas at 5 ns): each file holds its own
	 * CPUs' bundles, written at its end. */
	snprintf(base, sizeof(base), "%s_y", out);
	snprintf(first, sizeof(first), "%s.pftrace", base);
	h_ringlog(&r, "convert", bin, "--to", "perfetto", "-o", first, "--split", "200ns", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "files"), 2);
	struct check *ys = decode_series(base, 2);
	ASSERT_EQ(ys->errors, 0);
	ASSERT_CONTAINS(ys->sum, "F cpu 0\n  100 pid 501 sched_switch prev_comm=\"worker\"");
	ASSERT_CONTAINS(ys->sum, "next_prio=-1\nM \"ringlog.session\"=\"sys\" \"ringlog.file_index\"=\"0\"");
	ASSERT_CONTAINS(ys->sum, "F cpu 0\n  300 pid 0 sched_switch");
	ASSERT_CONTAINS(ys->sum, "F cpu 1\n  250 pid 602 sched_waking comm=\"worker\" pid=501 prio=120 "
				 "target_cpu=0\n  260 pid 602 sched_switch");
	free(ys);
	check_two_hosts(in, bin, out);
	unlink(bin);

	/* A file that is not a log: one error line, exit 1, no output. */
	FILE *g = fopen(bin, "w");
	fputs("this is not a ringlog log file, not even its header...........", g);
	fclose(g);
	unlink(out);
	h_ringlog(&r, "convert", bin, "--to", "perfetto", "-o", out, NULL);
	ASSERT_EQ(r.status, 1);
	char want[160];
	snprintf(want, sizeof(want), "ringlog: convert %s: not a ringlog log file (bad file header)\n", bin);
	ASSERT_STREQ(r.err, want);
	ok(access(out, F_OK) != 0, "no output for a corrupt input");
	unlink(bin);

	/* Usage errors. */
	h_ringlog(&r, "convert", in, "--to", "chrome", "-o", out, "--split", "1s", NULL);
	ASSERT_EQ(r.status, 2);
	h_ringlog(&r, "convert", in, "--to", "perfetto", "-o", out, "--max-size", "1000", NULL);
	ASSERT_EQ(r.status, 1); /* a bad value, as in every command */
	ASSERT_CONTAINS(r.err, "--max-size '1000': expected a size of at least 1M");

	unlink(in);
	unlink(out);
	fg_file_free(&f);
	return done_testing();
}
