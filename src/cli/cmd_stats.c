/*
 * cmd_stats.c - `ringlog stats FILE [--json]`: what a log file holds, in
 * totals: duration, events and bytes per event name and per thread, the
 * rate, losses by cause, the sampled counters' totals and rates, damaged
 * regions.  The formats are specified in
 * docs/DUMP.md.
 *
 * The counting is the reader's (rlog_reader_open_count: during its open
 * pass, the file read once; what counts as an event is rlog_record_kind's
 * answer).  This file names the rows (the latest schema of each (pid, ID)
 * in the file, rows of the same name and ID added up) and prints them.
 *
 * Exit status as `ringlog dump`: 0, 1 (unreadable, or damaged regions:
 * the totals of what could be read are printed first, then one line per
 * region on stderr), 2 (usage).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/sched.h"
#include "buf.h"
#include "args.h"
#include "cli.h"
#include "format.h"
#include "json.h"
#include "names.h"
#include "ringlog/reader.h"
#include "hosts.h"
#include "satmath.h"
#include "stats_multi.h"
#include "term.h"


/* A row of the per-name table: (pid, ID) counts merged by name and ID. */
struct name_row {
	const char *name;  /* the schema's or a reserved ID's name, or NULL ... */
	char num[8];       /* ... and then the ID in decimal */
	uint16_t id;
	uint64_t events, bytes;
};

static const char *row_name(const struct name_row *w)
{
	return w->name ? w->name : w->num;
}

static int row_key_cmp(const void *a, const void *b)
{
	const struct name_row *x = a, *y = b;
	int c = strcmp(row_name(x), row_name(y));
	if (c)
		return c;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int row_cmp(const void *a, const void *b)
{
	const struct name_row *x = a, *y = b;
	if (x->events != y->events)
		return x->events > y->events ? -1 : 1;
	return row_key_cmp(a, b);
}

/* The per-name rows, merged by (name, ID), most events first; *n rows. */
static struct name_row *name_rows(struct rlog_reader *r, const struct rlog_count *c, size_t *n)
{
	struct name_row *rows = calloc(c->ids ? c->ids : 1, sizeof(*rows));
	if (!rows)
		return NULL;
	for (size_t i = 0; i < c->ids; i++) {
		struct rlog_count_id ci;
		struct name_row *w = &rows[i];
		if (rlog_reader_count_id(r, i, &ci) < 0)
			continue;
		const struct rlog_schema *s = rlog_reader_schema_latest(r, ci.pid, ci.id);
		w->id = ci.id;
		w->events = ci.events;
		w->bytes = ci.bytes;
		w->name = s ? s->name : rlog__id_name(ci.id);
		if (!w->name)
			snprintf(w->num, sizeof(w->num), "%u", (unsigned)w->id);
	}
	qsort(rows, c->ids, sizeof(*rows), row_key_cmp);
	size_t k = 0;
	for (size_t i = 0; i < c->ids; i++) {
		if (k > 0 && row_key_cmp(&rows[k - 1], &rows[i]) == 0) {
			rows[k - 1].events += rows[i].events;
			rows[k - 1].bytes += rows[i].bytes;
		} else {
			rows[k++] = rows[i];
		}
	}
	qsort(rows, k, sizeof(*rows), row_cmp);
	*n = k;
	return rows;
}

static bool thread_shown(const struct rlog_count_thread *t)
{
	return t->events || t->metadata || t->lost_events || t->lost_bytes;
}

static const char *damage_kind(int kind)
{
	switch (kind) {
	case RLOG_DAMAGE_TRUNCATED: return "truncated";
	case RLOG_DAMAGE_MISSING: return "missing";
	case RLOG_DAMAGE_DUPLICATE: return "duplicate";
	case RLOG_DAMAGE_ORDER: return "out_of_order";
	default: return "damaged";
	}
}

/* An aligned text table: cells are strings, numbers right-aligned. */
#define MAXCOL 12
struct table {
	size_t ncols, nrows;
	const char *head[MAXCOL];
	bool right[MAXCOL];
	char **cells; /* nrows * ncols, owned */
	size_t cap;
	bool oom;
};

/* Starts a table of ncols columns named head[]; bit c of right aligns
 * column c to the right. */
static void table_start(struct table *t, size_t ncols, const char *const *head, unsigned right)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
	for (size_t c = 0; c < ncols; c++) {
		t->head[c] = head[c];
		t->right[c] = (right >> c) & 1u;
	}
}

static void table_row(struct table *t, const char *const *cells)
{
	if (t->oom)
		return;
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		char **c = realloc(t->cells, cap * t->ncols * sizeof(*c));
		if (!c) {
			t->oom = true;
			return;
		}
		t->cells = c;
		t->cap = cap;
	}
	for (size_t i = 0; i < t->ncols; i++) {
		t->cells[t->nrows * t->ncols + i] = strdup(cells[i]);
		if (!t->cells[t->nrows * t->ncols + i]) {
			for (size_t k = 0; k < i; k++)
				free(t->cells[t->nrows * t->ncols + k]);
			t->oom = true;
			return;
		}
	}
	t->nrows++;
}

/* A row of the loss table. */
static void loss_row(struct table *t, const char *cause, uint64_t records, uint64_t events,
		     uint64_t bytes)
{
	char x[24], y[24], z[24];
	snprintf(x, sizeof(x), "%" PRIu64, records);
	snprintf(y, sizeof(y), "%" PRIu64, events);
	snprintf(z, sizeof(z), "%" PRIu64, bytes);
	table_row(t, (const char *[]){ cause, x, y, z });
}

/* Appends the table (header included) with two spaces between columns;
 * frees the cells. */
static void table_print(struct rlog__buf *b, struct table *t)
{
	size_t w[MAXCOL];
	for (size_t c = 0; c < t->ncols; c++) {
		w[c] = strlen(t->head[c]);
		for (size_t r = 0; r < t->nrows; r++) {
			size_t k = strlen(t->cells[r * t->ncols + c]);
			if (k > w[c])
				w[c] = k;
		}
	}
	rlog__buf_char(b, '\n');
	for (size_t r = 0; r <= t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			const char *s = r == 0 ? t->head[c] : t->cells[(r - 1) * t->ncols + c];
			size_t k = strlen(s), start = b->len;
			if (c > 0)
				rlog__buf_lit(b, "  ");
			if (t->right[c])
				rlog__buf_pad(b, b->len, w[c] - k);
			rlog__buf_str(b, s);
			if (!t->right[c] && c + 1 < t->ncols)
				rlog__buf_pad(b, start + (c > 0 ? 2 : 0), w[c]);
		}
		rlog__buf_char(b, '\n');
	}
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}

/* A possibly unprintable name, escaped into buf[n] (term.h). */
static const char *printable(const char *s, char *buf, size_t n)
{
	return rlog__term_cstr(s, buf, n);
}

/* A counter's rate per second over the time its records span: the deltas
 * after its first record, over the time from its first record to its
 * last.  < 0 when there is no such time (one record). */
static double counter_rate(struct rlog_reader *r, const struct rlog_count_counter *k)
{
	if (k->last_ticks <= k->first_ticks)
		return -1.0;
	int64_t ns = rlog__sat_sub(rlog_reader_time_ns(r, k->last_ticks),
				   rlog_reader_time_ns(r, k->first_ticks));
	return ns > 0 ? (double)(k->total - k->first_delta) * 1e9 / (double)ns : -1.0;
}

/* A counter's name for the tables: its own, or "#ID". */
static const char *counter_label(const struct rlog_count_counter *k, char *buf, size_t n)
{
	if (k->name)
		return printable(k->name, buf, n);
	snprintf(buf, n, "#%" PRIu32, k->counter_id);
	return buf;
}

/* The COUNTER table: one row per counter (pid, id). */
static void put_counters_text(struct rlog__buf *b, struct rlog_reader *r)
{
	struct table t;
	struct rlog_count_counter k;
	char n[256], a[24], x[24], y[24], z[24], e[32];
	if (rlog_reader_count_counter(r, 0, &k) < 0)
		return; /* none */
	table_start(&t, 7, (const char *[]){ "COUNTER", "PID", "RECORDS", "RESETS", "TOTAL",
					     "RATE/S", "UNIT" }, 0x3e);
	for (size_t i = 0; rlog_reader_count_counter(r, i, &k) == 0; i++) {
		const char *unit = rlog__counter_unit_name(k.unit);
		double rate = counter_rate(r, &k);
		snprintf(a, sizeof(a), "%" PRIu32, k.pid);
		snprintf(x, sizeof(x), "%" PRIu64, k.records);
		snprintf(y, sizeof(y), "%" PRIu64, k.resets);
		snprintf(z, sizeof(z), "%" PRIu64, k.total);
		if (rate >= 0)
			snprintf(e, sizeof(e), "%.1f", rate);
		else
			snprintf(e, sizeof(e), "-");
		table_row(&t, (const char *[]){ counter_label(&k, n, sizeof(n)), a, x, y, z, e,
						k.name && unit ? unit : "-" });
	}
	table_print(b, &t);
}

static void put_counters_json(struct rlog__buf *b, struct rlog_reader *r)
{
	struct rlog_count_counter k;
	rlog__buf_lit(b, ",\"counters\":[");
	for (size_t i = 0; rlog_reader_count_counter(r, i, &k) == 0; i++) {
		const char *src = rlog__counter_source_name(k.source);
		const char *unit = rlog__counter_unit_name(k.unit);
		double rate = counter_rate(r, &k);
		rlog__buf_printf(b, "%s{\"pid\":%" PRIu32 ",\"counter\":%" PRIu32 ",\"name\":",
				 i ? "," : "", k.pid, k.counter_id);
		rlog__json_cstr_or_null(b, k.name);
		rlog__buf_lit(b, ",\"source\":");
		rlog__json_cstr_or_null(b, k.name ? src : NULL);
		rlog__buf_lit(b, ",\"unit\":");
		rlog__json_cstr_or_null(b, k.name ? unit : NULL);
		rlog__buf_printf(b, ",\"records\":%" PRIu64 ",\"resets\":%" PRIu64 ",\"total\":%"
				 PRIu64 ",\"first_ns\":%" PRId64 ",\"last_ns\":%" PRId64 ",\"rate\":",
				 k.records, k.resets, k.total, rlog_reader_time_ns(r, k.first_ticks),
				 rlog_reader_time_ns(r, k.last_ticks));
		if (rate >= 0)
			rlog__buf_printf(b, "%.1f}", rate);
		else
			rlog__buf_lit(b, "null}");
	}
	rlog__buf_char(b, ']');
}

struct summary {
	struct rlog_count c;
	int64_t first_ns, last_ns, duration_ns;
	double rate;             /* events per second; < 0 if no duration */
	size_t shown_threads;
};

static void put_text(struct rlog__buf *b, const char *path, struct rlog_reader *r,
		     const struct summary *sm, const struct name_row *rows, size_t nrows)
{
	const struct rlog_reader_info *info = rlog_reader_info(r);
	const struct rlog_count *c = &sm->c;
	char src[32], started[64], a[64], x[64], y[64], z[64], e[64], g[64], h[256], k[256];
	struct table t;

	fmt_rfc3339(started, sizeof(started), info->sync_realtime_ns);
	rlog__buf_printf(b, "# ringlog stats of %s: session %s, tick source %s at %" PRIu64
			 " Hz, started %s\n", path, printable(info->session_name, h, sizeof(h)),
			 fmt_tick_source(info->tick_source, src, sizeof(src)), info->tick_freq_hz,
			 started);
	if (c->timed)
		rlog__buf_printf(b, "duration  %" PRId64 ".%09" PRId64 " s (from %" PRId64 " ns to %"
				 PRId64 " ns)\n", sm->duration_ns / 1000000000,
				 sm->duration_ns % 1000000000, sm->first_ns, sm->last_ns);
	else
		rlog__buf_lit(b, "duration  0 s (no events)\n");
	rlog__buf_printf(b, "events    %" PRIu64 " (%" PRIu64 " bytes)\n", c->events, c->bytes);
	if (sm->rate >= 0)
		rlog__buf_printf(b, "rate      %.1f events/s\n", sm->rate);
	else
		rlog__buf_lit(b, "rate      -\n");
	rlog__buf_printf(b, "threads   %zu\n", sm->shown_threads);
	rlog__buf_printf(b, "lost      %" PRIu64 " events (%" PRIu64 " bytes) in %" PRIu64
			 " DATA_LOSS records\n", c->lost_events, c->lost_bytes, c->loss_records);
	rlog__buf_printf(b, "damaged   %" PRIu64 " regions (%" PRIu64 " records skipped)\n",
			 c->damage, c->skipped_records);
	rlog__buf_printf(b, "metadata  %" PRIu64 " records\n", c->metadata);

	table_start(&t, 4, (const char *[]){ "EVENT", "ID", "EVENTS", "BYTES" }, 0xe);
	for (size_t i = 0; i < nrows; i++) {
		snprintf(a, sizeof(a), "%u", (unsigned)rows[i].id);
		snprintf(x, sizeof(x), "%" PRIu64, rows[i].events);
		snprintf(y, sizeof(y), "%" PRIu64, rows[i].bytes);
		table_row(&t, (const char *[]){ printable(row_name(&rows[i]), h, sizeof(h)), a, x, y });
	}
	table_print(b, &t);

	table_start(&t, 8, (const char *[]){ "PID", "TID", "EVENTS", "BYTES", "LOST", "LOST_BYTES",
					     "THREAD", "PROCESS" }, 0x3f);
	for (size_t i = 0; i < c->threads; i++) {
		struct rlog_count_thread th;
		if (rlog_reader_count_thread(r, i, &th) < 0 || !thread_shown(&th))
			continue;
		const char *tn = rlog_reader_thread_name(r, th.pid, th.tid);
		const char *pn = rlog_reader_process_name(r, th.pid);
		snprintf(a, sizeof(a), "%" PRIu32, th.pid);
		snprintf(x, sizeof(x), "%" PRIu32, th.tid);
		snprintf(y, sizeof(y), "%" PRIu64, th.events);
		snprintf(z, sizeof(z), "%" PRIu64, th.bytes);
		snprintf(e, sizeof(e), "%" PRIu64, th.lost_events);
		snprintf(g, sizeof(g), "%" PRIu64, th.lost_bytes);
		table_row(&t, (const char *[]){ a, x, y, z, e, g,
						tn ? printable(tn, h, sizeof(h)) : "-",
						pn ? printable(pn, k, sizeof(k)) : "-" });
	}
	table_print(b, &t);
	put_counters_text(b, r);

	if (c->causes > 0 || c->damaged > 0) {
		table_start(&t, 4, (const char *[]){ "LOSS_CAUSE", "RECORDS", "EVENTS", "BYTES" }, 0xe);
		for (size_t i = 0; i < c->causes; i++) {
			struct rlog_count_loss l;
			if (rlog_reader_count_loss(r, i, &l) < 0)
				continue;
			loss_row(&t, fmt_loss_cause(l.cause, a, sizeof(a)), l.records, l.events,
				 l.bytes);
		}
		if (c->damaged > 0)
			loss_row(&t, "damaged", c->damaged, c->damaged_records, c->damaged_bytes);
		table_print(b, &t);
	}
	if (c->damage > 0) {
		table_start(&t, 4, (const char *[]){ "DAMAGE_OFFSET", "LENGTH", "RECORDS_SKIPPED",
						     "KIND" }, 0x7);
		for (size_t i = 0; i < c->damage; i++) {
			struct rlog_damage dm;
			if (rlog_reader_damage(r, i, &dm) < 0)
				continue;
			snprintf(a, sizeof(a), "%" PRIu64, dm.offset);
			snprintf(x, sizeof(x), "%" PRIu64, dm.length);
			if (dm.records_skipped >= 0)
				snprintf(y, sizeof(y), "%" PRId64, dm.records_skipped);
			else
				snprintf(y, sizeof(y), "?");
			table_row(&t, (const char *[]){ a, x, y, damage_kind(dm.kind) });
		}
		table_print(b, &t);
	}
}

/* {"cause":..,"records":..,"events":..,"bytes":..} */
static void json_loss(struct rlog__buf *b, bool comma, const char *cause, uint64_t records,
		      uint64_t events, uint64_t bytes)
{
	rlog__buf_printf(b, "%s{\"cause\":\"%s\",\"records\":%" PRIu64 ",\"events\":%" PRIu64
			 ",\"bytes\":%" PRIu64 "}", comma ? "," : "", cause, records, events, bytes);
}

static void put_json(struct rlog__buf *b, const char *path, struct rlog_reader *r,
		     const struct summary *sm, const struct name_row *rows, size_t nrows)
{
	const struct rlog_reader_info *info = rlog_reader_info(r);
	const struct rlog_count *c = &sm->c;
	char src[32], started[64], a[32];
	uint64_t bad_first;
	uint64_t bad = rlog_reader_bad_schemas(r, &bad_first);

	fmt_rfc3339(started, sizeof(started), info->sync_realtime_ns);
	rlog__buf_lit(b, "{\"file\":");
	rlog__json_cstr(b, path);
	rlog__buf_lit(b, ",\"session\":");
	rlog__json_cstr(b, info->session_name);
	rlog__buf_printf(b, ",\"tick_source\":\"%s\",\"tick_hz\":%" PRIu64 ",\"started\":\"%s\"",
			 fmt_tick_source(info->tick_source, src, sizeof(src)), info->tick_freq_hz,
			 started);
	cli_host_clock_json(b, info); /* as for several hosts (DUMP.md) */
	if (c->timed)
		rlog__buf_printf(b, ",\"first_ns\":%" PRId64 ",\"last_ns\":%" PRId64, sm->first_ns,
				 sm->last_ns);
	else
		rlog__buf_lit(b, ",\"first_ns\":null,\"last_ns\":null");
	rlog__buf_printf(b, ",\"duration_ns\":%" PRId64 ",\"events\":%" PRIu64 ",\"bytes\":%" PRIu64,
			 sm->duration_ns, c->events, c->bytes);
	if (sm->rate >= 0)
		rlog__buf_printf(b, ",\"rate\":%.1f", sm->rate);
	else
		rlog__buf_lit(b, ",\"rate\":null");
	rlog__buf_printf(b, ",\"metadata_records\":%" PRIu64 ",\"bad_schemas\":%" PRIu64,
			 c->metadata, bad);

	rlog__buf_lit(b, ",\"names\":[");
	for (size_t i = 0; i < nrows; i++) {
		rlog__buf_str(b, i ? ",{\"name\":" : "{\"name\":");
		rlog__json_cstr(b, row_name(&rows[i]));
		rlog__buf_printf(b, ",\"id\":%u,\"events\":%" PRIu64 ",\"bytes\":%" PRIu64 "}",
				 (unsigned)rows[i].id, rows[i].events, rows[i].bytes);
	}
	rlog__buf_lit(b, "],\"threads\":[");
	bool first = true;
	for (size_t i = 0; i < c->threads; i++) {
		struct rlog_count_thread th;
		if (rlog_reader_count_thread(r, i, &th) < 0 || !thread_shown(&th))
			continue;
		rlog__buf_printf(b, "%s{\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"name\":",
				 first ? "" : ",", th.pid, th.tid);
		first = false;
		rlog__json_cstr_or_null(b, rlog_reader_thread_name(r, th.pid, th.tid));
		rlog__buf_lit(b, ",\"process\":");
		rlog__json_cstr_or_null(b, rlog_reader_process_name(r, th.pid));
		rlog__buf_printf(b, ",\"events\":%" PRIu64 ",\"bytes\":%" PRIu64
				 ",\"metadata_records\":%" PRIu64 ",\"lost_events\":%" PRIu64
				 ",\"lost_bytes\":%" PRIu64, th.events, th.bytes, th.metadata,
				 th.lost_events, th.lost_bytes);
		if (th.timed)
			rlog__buf_printf(b, ",\"first_ns\":%" PRId64 ",\"last_ns\":%" PRId64 "}",
					 rlog_reader_time_ns(r, th.first_ticks),
					 rlog_reader_time_ns(r, th.last_ticks));
		else
			rlog__buf_lit(b, ",\"first_ns\":null,\"last_ns\":null}");
	}
	rlog__buf_char(b, ']');
	put_counters_json(b, r);
	rlog__buf_printf(b, ",\"lost_events\":%" PRIu64 ",\"lost_bytes\":%" PRIu64
			 ",\"loss_records\":%" PRIu64 ",\"losses\":[", c->lost_events, c->lost_bytes,
			 c->loss_records);
	for (size_t i = 0; i < c->causes; i++) {
		struct rlog_count_loss l;
		if (rlog_reader_count_loss(r, i, &l) == 0)
			json_loss(b, i > 0, fmt_loss_cause(l.cause, a, sizeof(a)), l.records, l.events,
				  l.bytes);
	}
	if (c->damaged > 0)
		json_loss(b, c->causes > 0, "damaged", c->damaged, c->damaged_records,
			  c->damaged_bytes);
	rlog__buf_lit(b, "],\"damage\":[");
	for (size_t i = 0; i < c->damage; i++) {
		struct rlog_damage dm;
		if (rlog_reader_damage(r, i, &dm) < 0)
			continue;
		rlog__buf_printf(b, "%s{\"offset\":%" PRIu64 ",\"length\":%" PRIu64 ",\"kind\":\"%s\","
				 "\"records_skipped\":", i ? "," : "", dm.offset, dm.length,
				 damage_kind(dm.kind));
		if (dm.records_skipped >= 0)
			rlog__buf_printf(b, "%" PRId64, dm.records_skipped);
		else
			rlog__buf_lit(b, "null");
		if (dm.kind == RLOG_DAMAGE_MISSING || dm.kind == RLOG_DAMAGE_DUPLICATE ||
		    dm.kind == RLOG_DAMAGE_ORDER)
			rlog__buf_printf(b, ",\"seq_first\":%" PRIu64 ",\"seq_last\":%" PRIu64,
					 dm.seq_first, dm.seq_last);
		rlog__buf_lit(b, ",\"message\":");
		rlog__json_cstr(b, dm.message);
		rlog__buf_char(b, '}');
	}
	rlog__buf_lit(b, "]}\n");
}

/* ---- --sched: the scheduling answers of src/analysis/sched.h ---- */

#define SCHED_TOP_CALLS 20

static void ms_cell(char *out, size_t cap, int64_t ns)
{
	snprintf(out, cap, "%" PRId64 ".%03" PRId64, ns / 1000000, (ns % 1000000) / 1000);
}

/* The thread's name: the comm the kernel recorded, else its THREAD_NAME;
 * NULL if neither. */
static const char *sched_name(struct rlog_reader *r, const struct rlog_sched_thread *t)
{
	if (t->name[0])
		return t->name;
	return rlog_reader_thread_name(r, t->pid, t->tid);
}

static void sched_text(struct rlog__buf *b, const char *path, struct rlog_reader *r,
		       const struct rlog_sched *s)
{
	char esc[256];
	rlog__buf_printf(b, "file:            %s\n", rlog__term_cstr(path, esc, sizeof(esc)));
	rlog__buf_printf(b, "system events:   %" PRIu64 " (switches %" PRIu64 ", wake-ups %" PRIu64
			 ", system calls %" PRIu64 ", page faults %" PRIu64 ")\n", s->system_events,
			 s->switch_events, s->wakeup_events, s->syscall_events, s->fault_events);
	if (s->lost_events)
		rlog__buf_printf(b, "lost:            %" PRIu64 " system events in %" PRIu64
				 " DATA_LOSS records of cause kernel: the intervals around them are "
				 "uncertain\n", s->lost_events, s->loss_records);
	if (s->system_events == 0) {
		rlog__buf_lit(b, "(no system events: record with 'ringlog start --system "
			      "cswitch,wakeup,syscall,page-faults')\n");
		return;
	}
	char span[32];
	ms_cell(span, sizeof(span), rlog__sat_sub(s->last_ns, s->first_ns));
	rlog__buf_printf(b, "span:            %s ms\n\nthreads (ms):\n", span);
	struct table t;
	table_start(&t, 12, (const char *const[]){ "pid", "tid", "name", "on_cpu", "runnable",
						    "blocked", "switches", "preempted",
						    "migrations", "syscalls", "syscall_ms",
						    "faults" }, 0xffbu);
	for (size_t i = 0; i < s->nthreads; i++) {
		const struct rlog_sched_thread *th = &s->threads[i];
		char c[12][40];
		const char *name = sched_name(r, th);
		snprintf(c[0], sizeof(c[0]), "%" PRIu32, th->pid);
		snprintf(c[1], sizeof(c[1]), "%" PRIu32, th->tid);
		rlog__term_cstr(name ? name : "-", c[2], sizeof(c[2]));
		ms_cell(c[3], sizeof(c[3]), th->oncpu_ns);
		ms_cell(c[4], sizeof(c[4]), th->runnable_ns);
		ms_cell(c[5], sizeof(c[5]), th->blocked_ns);
		snprintf(c[6], sizeof(c[6]), "%" PRIu64, th->switches);
		snprintf(c[7], sizeof(c[7]), "%" PRIu64, th->preempted);
		snprintf(c[8], sizeof(c[8]), "%" PRIu64, th->migrations);
		snprintf(c[9], sizeof(c[9]), "%" PRIu64, th->syscalls);
		ms_cell(c[10], sizeof(c[10]), th->syscall_ns);
		snprintf(c[11], sizeof(c[11]), "%" PRIu64 "/%" PRIu64, th->faults, th->major_faults);
		table_row(&t, (const char *const[]){ c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7],
						      c[8], c[9], c[10], c[11] });
	}
	table_print(b, &t);
	if (s->ncalls == 0)
		return;
	rlog__buf_printf(b, "\nsystem calls (top %d by count):\n", SCHED_TOP_CALLS);
	table_start(&t, 5, (const char *const[]){ "name", "count", "completed", "total_ms", "max_ms" },
		    0x1eu);
	for (size_t i = 0; i < s->ncalls && i < SCHED_TOP_CALLS; i++) {
		const struct rlog_sched_call *cl = &s->calls[i];
		char c[5][72];
		rlog__term_cstr(cl->name, c[0], sizeof(c[0]));
		snprintf(c[1], sizeof(c[1]), "%" PRIu64, cl->count);
		snprintf(c[2], sizeof(c[2]), "%" PRIu64, cl->completed);
		ms_cell(c[3], sizeof(c[3]), cl->total_ns);
		ms_cell(c[4], sizeof(c[4]), cl->max_ns);
		table_row(&t, (const char *const[]){ c[0], c[1], c[2], c[3], c[4] });
	}
	table_print(b, &t);
}

static void sched_json(struct rlog__buf *b, const char *path, struct rlog_reader *r,
		       const struct rlog_sched *s)
{
	rlog__buf_lit(b, "{\"file\":");
	rlog__json_cstr(b, path);
	rlog__buf_printf(b, ",\"system_events\":%" PRIu64 ",\"switch_events\":%" PRIu64
			 ",\"wakeup_events\":%" PRIu64 ",\"syscall_events\":%" PRIu64
			 ",\"fault_events\":%" PRIu64 ",\"lost_events\":%" PRIu64
			 ",\"loss_records\":%" PRIu64, s->system_events, s->switch_events,
			 s->wakeup_events, s->syscall_events, s->fault_events, s->lost_events,
			 s->loss_records);
	if (s->system_events)
		rlog__buf_printf(b, ",\"first_ns\":%" PRId64 ",\"last_ns\":%" PRId64, s->first_ns,
				 s->last_ns);
	else
		rlog__buf_lit(b, ",\"first_ns\":null,\"last_ns\":null");
	rlog__buf_lit(b, ",\"threads\":[");
	for (size_t i = 0; i < s->nthreads; i++) {
		const struct rlog_sched_thread *th = &s->threads[i];
		rlog__buf_printf(b, "%s{\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"name\":",
				 i ? "," : "", th->pid, th->tid);
		rlog__json_cstr_or_null(b, sched_name(r, th));
		rlog__buf_printf(b, ",\"on_cpu_ns\":%" PRId64 ",\"runnable_ns\":%" PRId64
				 ",\"blocked_ns\":%" PRId64 ",\"switches\":%" PRIu64
				 ",\"preempted\":%" PRIu64 ",\"migrations\":%" PRIu64
				 ",\"wakeups\":%" PRIu64 ",\"syscalls\":%" PRIu64
				 ",\"syscall_ns\":%" PRId64 ",\"page_faults\":%" PRIu64
				 ",\"major_faults\":%" PRIu64 "}", th->oncpu_ns, th->runnable_ns,
				 th->blocked_ns, th->switches, th->preempted, th->migrations,
				 th->wakeups, th->syscalls, th->syscall_ns, th->faults,
				 th->major_faults);
	}
	rlog__buf_lit(b, "],\"syscalls\":[");
	for (size_t i = 0; i < s->ncalls; i++) {
		const struct rlog_sched_call *cl = &s->calls[i];
		rlog__buf_str(b, i ? ",{\"name\":" : "{\"name\":");
		rlog__json_cstr(b, cl->name);
		rlog__buf_printf(b, ",\"id\":%" PRId64 ",\"count\":%" PRIu64 ",\"completed\":%" PRIu64
				 ",\"total_ns\":%" PRId64 ",\"max_ns\":%" PRId64 "}", cl->id, cl->count,
				 cl->completed, cl->total_ns, cl->max_ns);
	}
	rlog__buf_lit(b, "]}\n");
}

/* `stats FILE --sched`: the file read once in time order through the
 * analysis; damaged regions reported as for the totals. */
static int cmd_stats_sched(const char *path, bool json)
{
	struct rlog_reader *r;
	int rc = rlog_reader_open(path, &r);
	if (rc < 0)
		return cli_error("stats %s: %s", path, rlog_reader_strerror(rc));
	struct rlog_sched s;
	rlog_sched_init(&s);
	struct rlog_event ev;
	while ((rc = rlog_reader_next(r, &ev)) > 0)
		if ((rc = rlog_sched_event(&s, r, &ev)) < 0)
			break;
	int status = 0;
	if (rc < 0) {
		status = cli_error("stats %s: %s", path, rlog_reader_strerror(rc));
	} else {
		rlog_sched_end(&s);
		struct rlog__buf out = { 0 };
		if (json)
			sched_json(&out, path, r, &s);
		else
			sched_text(&out, path, r, &s);
		rc = rlog__buf_write(&out, STDOUT_FILENO);
		if (rc < 0)
			status = cli_error("stats %s: writing the output: %s", path, strerror(-rc));
		rlog__buf_free(&out);
	}
	size_t nd = rlog_reader_damage_count(r);
	for (size_t i = 0; i < nd; i++) {
		struct rlog_damage dm;
		if (rlog_reader_damage(r, i, &dm) == 0)
			status = cli_error("stats %s: %s", path, dm.message);
	}
	rlog_sched_free(&s);
	rlog_reader_close(r);
	return status;
}

/* The totals and the per-name rows of a reader opened counting: *rows
 * (NULL if out of memory, *nrows of them) for the caller to free. */
static struct name_row *summarize(struct rlog_reader *r, struct summary *sm, size_t *nrows)
{
	rlog_reader_count(r, &sm->c);
	for (size_t i = 0; i < sm->c.threads; i++) {
		struct rlog_count_thread th;
		if (rlog_reader_count_thread(r, i, &th) == 0)
			sm->shown_threads += thread_shown(&th);
	}
	if (sm->c.timed) {
		sm->first_ns = rlog_reader_time_ns(r, sm->c.first_ticks);
		sm->last_ns = rlog_reader_time_ns(r, sm->c.last_ticks);
		sm->duration_ns = rlog__sat_sub(sm->last_ns, sm->first_ns);
	}
	if (sm->duration_ns > 0)
		sm->rate = (double)sm->c.events * 1e9 / (double)sm->duration_ns;
	return name_rows(r, &sm->c, nrows);
}

int cli_stats_json(struct rlog__buf *b, const char *path, struct rlog_reader *r)
{
	struct summary sm = { .rate = -1.0 };
	size_t nrows = 0;
	struct name_row *rows = summarize(r, &sm, &nrows);
	if (!rows)
		return -ENOMEM;
	put_json(b, path, r, &sm, rows, nrows);
	free(rows);
	return b->oom ? -ENOMEM : 0;
}

int cmd_stats(int argc, char **argv)
{
	static const struct cli_opt opts[] = { { "--json", NULL, false }, { "--sched", NULL, false },
					       { NULL, NULL, false } };
	bool json = false, sched = false;
	struct rlog_reader *r;
	struct summary sm = { .rate = -1.0 };

	struct cli_args a;
	cli_args_init(&a, "stats", opts, CLI_MAX_POS, argc, argv);
	while (cli_args_next(&a)) {
		if (strcmp(a.name, "--sched") == 0)
			sched = true;
		else
			json = true;
	}
	if (!cli_args_need(&a, 1, "FILE"))
		return 2;
	const char *path = a.pos[0];
	if (cli_hosts_wanted(a.pos, a.npos)) {
		/* Several hosts (docs/DUMP.md, "Several hosts"). */
		if (sched)
			return cli_error("stats: --sched reads one file");
		return stats_multi(a.pos, a.npos, json);
	}
	if (sched)
		return cmd_stats_sched(path, json);

	int rc = rlog_reader_open_count(path, &r);
	if (rc < 0)
		return cli_error("stats %s: %s", path, rlog_reader_strerror(rc));
	size_t nrows = 0;
	struct name_row *rows = summarize(r, &sm, &nrows);
	if (!rows) {
		rlog_reader_close(r);
		return cli_error("stats %s: %s", path, strerror(ENOMEM));
	}

	struct rlog__buf out = { 0 };
	if (json)
		put_json(&out, path, r, &sm, rows, nrows);
	else
		put_text(&out, path, r, &sm, rows, nrows);
	int status = 0;
	rc = rlog__buf_write(&out, STDOUT_FILENO);
	if (rc < 0)
		status = cli_error("stats %s: writing the output: %s", path, strerror(-rc));
	for (size_t i = 0; i < sm.c.damage; i++) {
		struct rlog_damage dm;
		if (rlog_reader_damage(r, i, &dm) == 0)
			status = cli_error("stats %s: %s", path, dm.message);
	}
	uint64_t first;
	uint64_t bad = rlog_reader_bad_schemas(r, &first);
	if (bad > 0)
		cli_error("stats %s: warning: %" PRIu64 " malformed EVENT_SCHEMA record%s ignored "
			  "(the first at offset %" PRIu64 ")", path, bad, bad == 1 ? "" : "s", first);
	rlog__buf_free(&out);
	free(rows);
	rlog_reader_close(r);
	return status;
}
