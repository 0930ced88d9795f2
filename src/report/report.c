/*
 * report.c - the data of `ringlog report`'s page (report.h has what it
 * holds and why), read in one pass of rlog_reader_next() and written as
 * one JSON object between the page's two halves.
 *
 * Events become ticks on their thread's lane; a span's begin and end are
 * ticks too (the page counts the events of a window from the ticks
 * alone, as `ringlog stats` counts events) and besides a bar, paired as
 * `ringlog convert --to chrome` pairs them: an end closes the innermost
 * open begin of the same ID on its thread (at most RLOG__SPANS_OPEN open
 * per thread, as there).  The CPUs' lanes come from the scheduling
 * analysis of src/analysis/sched.h (its "run" intervals).
 *
 * Every time is clamped to [-PAGE_NS_MAX, PAGE_NS_MAX] first: the page
 * computes in doubles, exact to 2^53, and only a damaged or crafted file
 * has times 104 days from its session's start; within those bounds every
 * difference of two times fits in int64.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sched.h"
#include "buf.h"
#include "convert/convert.h"
#include "json.h"
#include "map.h"
#include "names.h"
#include "reader/layout.h"
#include "reader/multi.h"
#include "report/report.h"
#include "ringlog/version.h"
#include "satmath.h"
#include "vec.h"

#define OUT_FLUSH (1u << 20)
#define HIST 64 /* log2 buckets of span durations, ns */
#define MAX_DEPTH 255
#define PAGE_NS_MAX (INT64_C(1) << 53)

struct span {
	int64_t start, end;
	uint32_t name;
	uint16_t depth;
	bool open;
};

struct open_span {
	int64_t start;
	uint32_t name;
	uint16_t id;
};

struct lane {
	uint32_t host;          /* index in the report's hosts (0 for one file) */
	uint32_t pid, tid;
	bool used;              /* holds something of the window (always, without one) */
	struct rlog__buf ticks; /* per event: zigzag(dt) varint, (name << 2 | kind) varint */
	uint64_t nticks;
	int64_t last;
	struct open_span *stack;
	size_t depth, stack_cap;
	struct span *spans;
	size_t nspans, spans_cap;
	struct rlog__buf runs;  /* per run: zigzag(dt) varint, duration varint, tid varint */
	uint64_t nruns;
	int64_t run_last;
};

struct name {
	char *s;
	uint64_t events, spans;
	int64_t total, min, max;
	uint64_t hist[HIST];
};

struct counter {
	uint32_t host, pid;
	char *name;
	const char *unit;
	struct rlog__buf t, v; /* JSON numbers: time deltas, values */
	uint64_t n;
	int64_t last;
	bool has_before;       /* a window: the last value before it ... */
	double before;         /* ... drawn from its start */
};

/* A file read into the report: one, or each host's of several
 * (src/reader/multi.h).  Threads and counters are keyed per host: two
 * hosts' pids and tids are unrelated. */
struct host {
	struct report *p;
	uint32_t index;
	struct rlog_reader *r;
	int64_t offset_ns;       /* its times' shift onto the merged timeline */
	struct rlog__map lane_map, ctr_map;
	struct rlog_sched sched; /* the scheduling analysis of its system events */
};

struct report {
	struct rlog_reader *r;   /* the current event's file: cur->r */
	struct host *cur;
	struct host *hosts;
	size_t nhosts;
	const struct rlog__report_opts *o; /* the window, or NULL */
	const char *extra_json;
	struct rlog__report_stats *st;
	struct lane *lanes;
	size_t nlanes, lanes_cap;
	struct name *names;
	size_t nnames, names_cap;
	struct rlog__map name_map;
	struct counter *ctrs;
	size_t nctrs, ctrs_cap;
	struct rlog__buf losses; /* JSON objects, comma-separated */
	bool timed;
	int64_t tmin, tmax;
};

/* Is t in the window [since, until) (dump's, docs/DUMP.md "Filters")? */
static bool in_window(const struct report *p, int64_t t)
{
	return !p->o || ((!p->o->has_since || t >= p->o->since_ns) &&
			 (!p->o->has_until || t < p->o->until_ns));
}

/* Does the range [t0, t1] meet the window? */
static bool meets_window(const struct report *p, int64_t t0, int64_t t1)
{
	return !p->o || ((!p->o->has_since || t1 >= p->o->since_ns) &&
			 (!p->o->has_until || t0 < p->o->until_ns));
}

static int64_t page_ns(int64_t t)
{
	return t > PAGE_NS_MAX ? PAGE_NS_MAX : t < -PAGE_NS_MAX ? -PAGE_NS_MAX : t;
}

static void see_time(struct report *p, int64_t t)
{
	if (!p->timed || t < p->tmin)
		p->tmin = t;
	if (!p->timed || t > p->tmax)
		p->tmax = t;
	p->timed = true;
}

static void put_uv(struct rlog__buf *b, uint64_t v)
{
	if (!rlog__buf_need(b, 10))
		return;
	while (v >= 0x80) {
		b->p[b->len++] = (char)(v | 0x80);
		v >>= 7;
	}
	b->p[b->len++] = (char)v;
}

static void put_zz(struct rlog__buf *b, int64_t v)
{
	put_uv(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

/* The varint at *i of b (the writer's own encoding: never malformed). */
static uint64_t get_uv(const struct rlog__buf *b, size_t *i)
{
	uint64_t v = 0;
	for (unsigned s = 0; *i < b->len; s += 7) {
		uint8_t c = (uint8_t)b->p[(*i)++];
		v |= (uint64_t)(c & 0x7f) << s;
		if (!(c & 0x80))
			break;
	}
	return v;
}

static void put_base64(struct rlog__buf *b, const void *data, size_t n)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const uint8_t *s = data;
	if (!rlog__buf_need(b, (n + 2) / 3 * 4 + 2))
		return;
	char *o = b->p + b->len;
	rlog__buf_char(b, '"');
	o = b->p + b->len;
	size_t i = 0;
	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
		*o++ = a[v >> 18];
		*o++ = a[v >> 12 & 63];
		*o++ = a[v >> 6 & 63];
		*o++ = a[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0);
		*o++ = a[v >> 18];
		*o++ = a[v >> 12 & 63];
		*o++ = i + 1 < n ? a[v >> 6 & 63] : '=';
		*o++ = '=';
	}
	b->len = (size_t)(o - b->p);
	rlog__buf_char(b, '"');
}

static struct lane *lane_of(struct report *p, uint32_t pid, uint32_t tid)
{
	bool added;
	long i = rlog__convert_entry(&p->lanes, &p->nlanes, &p->lanes_cap, sizeof(*p->lanes),
				     &p->cur->lane_map, (uint64_t)pid << 32 | tid, &added);
	if (i < 0)
		return NULL;
	if (added) {
		p->lanes[i].host = p->cur->index;
		p->lanes[i].pid = pid;
		p->lanes[i].tid = tid;
		/* Without a window every thread of the file is a lane (`ringlog
		 * stats` lists it); with one, a thread with nothing in it is not. */
		p->lanes[i].used = !p->o;
	}
	return &p->lanes[i];
}

static uint64_t fnv(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h;
}

/* The index of name s[n] in p->names (added if new); -ENOMEM. */
static long name_of(struct report *p, const char *s, size_t n)
{
	for (uint64_t key = fnv(s, n);; key++) {
		uint32_t i = rlog__map_get(&p->name_map, key);
		if (i == RLOG__MAP_NONE) {
			if (rlog__vec_room(&p->names, p->nnames, &p->names_cap, sizeof(*p->names), 64) < 0 ||
			    rlog__map_put(&p->name_map, key, (uint32_t)p->nnames) < 0)
				return -ENOMEM;
			struct name *nm = &p->names[p->nnames];
			memset(nm, 0, sizeof(*nm));
			if (!(nm->s = strndup(s, n)))
				return -ENOMEM;
			return (long)p->nnames++;
		}
		if (strlen(p->names[i].s) == n && memcmp(p->names[i].s, s, n) == 0)
			return (long)i;
	}
}

static int add_tick(struct report *p, struct lane *l, int64_t t, uint32_t name, unsigned kind)
{
	if (!in_window(p, t))
		return 0;
	l->used = true;
	put_zz(&l->ticks, t - l->last);
	put_uv(&l->ticks, (uint64_t)name << 2 | kind);
	l->last = t;
	l->nticks++;
	p->names[name].events++;
	see_time(p, t);
	return l->ticks.oom ? -ENOMEM : 0;
}

static int add_span(struct report *p, struct lane *l, const struct open_span *o, int64_t end,
		    uint16_t depth, bool open)
{
	/* A span is the window's if it meets it; one never ended, if it
	 * began before the window's end. */
	if (!meets_window(p, o->start, open ? INT64_MAX : end))
		return 0;
	l->used = true;
	if (rlog__vec_room(&l->spans, l->nspans, &l->spans_cap, sizeof(*l->spans), 16) < 0)
		return -ENOMEM;
	l->spans[l->nspans++] = (struct span){ o->start, end, o->name, depth, open };
	if (open) {
		if (p->st)
			p->st->open_spans++;
		return 0;
	}
	struct name *nm = &p->names[o->name];
	int64_t d = end - o->start;
	if (d < 0)
		d = 0;
	if (nm->spans == 0 || d < nm->min)
		nm->min = d;
	if (d > nm->max)
		nm->max = d;
	nm->spans++;
	nm->total = rlog__sat_add(nm->total, d);
	unsigned b = 0;
	for (uint64_t v = (uint64_t)d; v > 1 && b < HIST - 1; v >>= 1)
		b++;
	nm->hist[d == 0 ? 0 : b]++;
	return 0;
}

/* A span's end on l: closes the innermost open begin of the same ID. */
static int span_end(struct report *p, struct lane *l, uint16_t id, int64_t t)
{
	size_t i = l->depth;
	while (i > 0 && l->stack[i - 1].id != id)
		i--;
	if (i == 0) {
		if (in_window(p, t))
			p->st->unmatched_ends++;
		return 0;
	}
	struct open_span o = l->stack[i - 1];
	memmove(&l->stack[i - 1], &l->stack[i], (l->depth - i) * sizeof(o));
	l->depth--;
	return add_span(p, l, &o, t, (uint16_t)(i - 1 > MAX_DEPTH ? MAX_DEPTH : i - 1), false);
}

static struct counter *counter_of(struct report *p, uint32_t pid, uint64_t key, const char *name,
				  const char *unit)
{
	bool added;
	long i = rlog__convert_entry(&p->ctrs, &p->nctrs, &p->ctrs_cap, sizeof(*p->ctrs),
				     &p->cur->ctr_map, key, &added);
	if (i < 0)
		return NULL;
	struct counter *c = &p->ctrs[i];
	if (added) {
		c->host = p->cur->index;
		c->pid = pid;
	}
	if (name && (!c->name || strcmp(c->name, name) != 0)) {
		free(c->name);
		if (!(c->name = strdup(name)))
			return NULL;
	}
	if (unit)
		c->unit = unit;
	return c;
}

static int add_point(struct report *p, struct counter *c, int64_t t, double v)
{
	if (!in_window(p, t)) {
		/* A counter holds its value until its next point: the last
		 * one before the window is its value at the window's start. */
		if (p->o->has_since && t < p->o->since_ns) {
			c->has_before = true;
			c->before = v;
		}
		return 0;
	}
	if (c->has_before) {
		c->has_before = false;
		int rc = add_point(p, c, page_ns(p->o->since_ns), c->before);
		if (rc < 0)
			return rc;
	}
	if (c->n) {
		rlog__buf_char(&c->t, ',');
		rlog__buf_char(&c->v, ',');
	}
	rlog__buf_i64(&c->t, t - c->last);
	if (v != v || v > 1e300 || v < -1e300)
		v = 0; /* JSON has no NaN or infinity: the line stays drawable */
	rlog__buf_double(&c->v, v);
	c->last = t;
	c->n++;
	if (p->st)
		p->st->counter_points++;
	see_time(p, t);
	return c->t.oom || c->v.oom ? -ENOMEM : 0;
}

static int on_counter(struct report *p, const struct rlog_event *ev)
{
	struct rlog_counter k;
	if (rlog_event_counter(p->r, ev, &k) < 0 || !k.value_known)
		return 0;
	char buf[32];
	if (!k.name)
		snprintf(buf, sizeof(buf), "counter #%" PRIu32, k.counter_id);
	struct counter *c = counter_of(p, ev->pid, (uint64_t)ev->pid << 32 | k.counter_id,
				       k.name ? k.name : buf, NULL);
	if (!c)
		return -ENOMEM;
	return add_point(p, c, ev->time_ns, (double)k.value);
}

/* A counter-kind event: its first field, if it is a number, as a point of
 * a counter named after the event (keys above 2^48: apart from COUNTER
 * records' ids). */
static int on_counter_event(struct report *p, const struct rlog_schema *s,
			    const struct rlog_event *ev)
{
	struct rlog_value v;
	size_t off = 0;
	if (s->field_count == 0 || rlog_event_field(s, ev, 0, &off, &v) != 1)
		return 0;
	double x;
	switch (v.field->type) {
	case RLOG_FIELD_U8: case RLOG_FIELD_U16: case RLOG_FIELD_U32: case RLOG_FIELD_U64:
		x = (double)v.v.u;
		break;
	case RLOG_FIELD_I8: case RLOG_FIELD_I16: case RLOG_FIELD_I32: case RLOG_FIELD_I64:
		x = (double)v.v.i;
		break;
	case RLOG_FIELD_F64:
		x = v.v.f;
		break;
	default:
		return 0;
	}
	struct counter *c = counter_of(p, ev->pid, 1ull << 48 | (uint64_t)ev->pid << 16 | s->id,
				       s->name, s->fields[0].name);
	return c ? add_point(p, c, ev->time_ns, x) : -ENOMEM;
}

static const char *cause_text(uint32_t cause, char *buf, size_t n)
{
	const char *c = rlog__loss_cause_name(cause);
	if (c)
		return c;
	snprintf(buf, n, "unknown(%" PRIu32 ")", cause); /* as `ringlog stats` */
	return buf;
}

static int on_loss(struct report *p, const struct rlog_event *ev)
{
	struct rlog_loss l;
	char cb[32];
	if (rlog_event_loss(ev, &l) < 0)
		return 0; /* never for an event of the reader */
	struct lane *ln = lane_of(p, ev->pid, ev->tid);
	if (!ln)
		return -ENOMEM;
	int64_t t0 = ev->time_ns, t1 = ev->time_ns;
	if (l.fields & RLOG_LOSS_HAS_RANGE) {
		t0 = page_ns(rlog__sat_add(rlog_reader_time_ns(p->r, l.first_time), p->cur->offset_ns));
		t1 = page_ns(rlog__sat_add(rlog_reader_time_ns(p->r, l.last_time), p->cur->offset_ns));
		if (t1 < t0)
			t1 = t0;
	}
	/* The window's losses are those whose time range meets it. */
	if (!meets_window(p, t0, t1))
		return 0;
	ln->used = true;
	see_time(p, t0);
	see_time(p, t1);
	struct rlog__buf *b = &p->losses;
	rlog__buf_printf(b, "%s{\"host\":%" PRIu32 ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
			 ",\"cause\":\"%s\",\"events\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"t\":%"
			 PRId64 ",\"t0\":%" PRId64 ",\"t1\":%" PRId64 "}", b->len ? "," : "",
			 p->cur->index, ev->pid, ev->tid,
			 cause_text(l.cause, cb, sizeof(cb)), l.events, l.bytes, ev->time_ns, t0, t1);
	if (p->st) {
		p->st->loss_records++;
		p->st->lost_events += l.events;
	}
	return b->oom ? -ENOMEM : 0;
}

static int on_event(struct report *p, const struct rlog_event *ev)
{
	switch (rlog_record_kind(ev->id, ev->flagged)) {
	case RLOG_RECORD_EVENT:
		break;
	case RLOG_RECORD_LOSS:
		return on_loss(p, ev);
	case RLOG_RECORD_COUNTER:
		return on_counter(p, ev);
	case RLOG_RECORD_METADATA:
		/* A thread with only metadata (one that named itself, the
		 * rundown's block of schemas) is a thread of the file: `ringlog
		 * stats` lists it. */
		return lane_of(p, ev->pid, ev->tid) ? 0 : -ENOMEM;
	default:
		return 0; /* TIME_SYNC, LOG_MARKER */
	}
	struct lane *l = lane_of(p, ev->pid, ev->tid);
	if (!l)
		return -ENOMEM;
	const struct rlog_schema *s = rlog_reader_schema(p->r, ev);
	bool matched = s && rlog_event_field_count(s, ev) >= 0;
	char buf[300];
	size_t n = rlog__convert_event_name(buf, sizeof(buf), ev, s, matched);
	long name = name_of(p, buf, n);
	if (name < 0)
		return -ENOMEM;
	unsigned kind = 0;
	int rc = 0;
	if (matched && s->kind == RLOG_KIND_SPAN) {
		if (ev->flag == RLOG_SPAN_END) {
			kind = 2;
			rc = span_end(p, l, s->id, ev->time_ns);
		} else {
			kind = 1;
			if (l->depth == RLOG__SPANS_OPEN) {
				/* the outermost open span, never ended (drawn to the
				 * end of the trace, its end known at the end) */
				rc = add_span(p, l, &l->stack[0], 0, 0, true);
				if (rc < 0)
					return rc;
				memmove(&l->stack[0], &l->stack[1], --l->depth * sizeof(*l->stack));
			}
			if (rlog__vec_room(&l->stack, l->depth, &l->stack_cap, sizeof(*l->stack), 8) < 0)
				return -ENOMEM;
			l->stack[l->depth++] = (struct open_span){ ev->time_ns, (uint32_t)name, s->id };
		}
	} else if (matched && s->kind == RLOG_KIND_COUNTER) {
		rc = on_counter_event(p, s, ev);
	}
	if (rc == 0)
		rc = add_tick(p, l, ev->time_ns, (uint32_t)name, kind);
	return rc;
}

/* The sink of the scheduling analysis: who ran on a CPU, on the lane of
 * the CPU's system events (pid 0, tid the CPU). */
static int on_run(void *arg, const struct rlog_sched_thread *t, uint32_t cpu, int64_t from_ns,
		  int64_t to_ns)
{
	struct host *h = arg;
	struct report *p = h->p;
	p->cur = h;
	p->r = h->r;
	struct lane *l = lane_of(p, 0, cpu);
	if (!l)
		return -ENOMEM;
	if (!meets_window(p, from_ns, to_ns))
		return 0;
	l->used = true;
	put_zz(&l->runs, from_ns - l->run_last);
	put_uv(&l->runs, (uint64_t)(to_ns > from_ns ? to_ns - from_ns : 0));
	put_uv(&l->runs, t->tid);
	l->run_last = from_ns;
	l->nruns++;
	if (p->st)
		p->st->cpu_runs++;
	see_time(p, from_ns);
	see_time(p, to_ns);
	return l->runs.oom ? -ENOMEM : 0;
}

/* ---- the output ---- */

/* Appends src to out with '<', '>' and '&' as JSON escapes: src is JSON,
 * where those bytes occur only inside strings, so the value is the same
 * and the HTML parser never sees "</script" or "<!--" in the element. */
static void put_safe(struct rlog__buf *out, const char *src, size_t n)
{
	size_t from = 0;
	for (size_t i = 0; i < n; i++) {
		const char *e = src[i] == '<' ? "\\u003c" : src[i] == '>' ? "\\u003e"
						: src[i] == '&' ? "\\u0026" : NULL;
		if (!e)
			continue;
		rlog__buf_put(out, src + from, i - from);
		rlog__buf_put(out, e, 6);
		from = i + 1;
	}
	rlog__buf_put(out, src + from, n - from);
}

/* Moves what j holds to out, escaped; writes out once it is large. */
static int drain(struct rlog__buf *j, struct rlog__buf *out, int fd, uint64_t *written)
{
	put_safe(out, j->p, j->len);
	j->len = 0;
	if (out->oom || j->oom)
		return -ENOMEM;
	if (out->len < OUT_FLUSH)
		return 0;
	*written += out->len;
	return rlog__buf_write(out, fd);
}

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* A lane's overview: its events per column of [tmin, tmax]. */
static void put_overview(struct report *p, struct rlog__buf *j, const struct lane *l,
			 struct rlog__buf *tmp)
{
	uint64_t cols[REPORT_COLUMNS] = { 0 };
	double span = (double)(p->tmax - p->tmin) + 1;
	int64_t t = 0;
	for (size_t i = 0; i < l->ticks.len;) {
		uint64_t z = get_uv(&l->ticks, &i);
		t += (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
		get_uv(&l->ticks, &i);
		double c = (double)(t - p->tmin) / span * REPORT_COLUMNS;
		cols[c < 0 ? 0 : c >= REPORT_COLUMNS ? REPORT_COLUMNS - 1 : (size_t)c]++;
	}
	tmp->len = 0;
	for (size_t c = 0; c < REPORT_COLUMNS; c++)
		put_uv(tmp, cols[c]);
	put_base64(j, tmp->p, tmp->len);
}

static void put_spans(struct rlog__buf *j, struct lane *l, struct rlog__buf *tmp)
{
	if (l->nspans)
		qsort(l->spans, l->nspans, sizeof(*l->spans), span_cmp);
	rlog__buf_lit(j, ",\"spans\":[");
	for (size_t i = 0; i < l->nspans;) {
		size_t k = i;
		int64_t last = 0;
		tmp->len = 0;
		for (; k < l->nspans && l->spans[k].depth == l->spans[i].depth; k++) {
			const struct span *s = &l->spans[k];
			put_zz(tmp, s->start - last);
			put_uv(tmp, (uint64_t)(s->end > s->start ? s->end - s->start : 0));
			put_uv(tmp, (uint64_t)s->name << 1 | s->open);
			last = s->start;
		}
		rlog__buf_printf(j, "%s{\"d\":%u,\"n\":%zu,\"b\":", i ? "," : "",
				 (unsigned)l->spans[i].depth, k - i);
		put_base64(j, tmp->p, tmp->len);
		rlog__buf_char(j, '}');
		i = k;
	}
	rlog__buf_char(j, ']');
}

static void put_lane(struct report *p, struct rlog__buf *j, struct lane *l, struct rlog__buf *tmp)
{
	struct rlog_reader *r = p->hosts[l->host].r;
	rlog__buf_printf(j, "{\"host\":%" PRIu32 ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
			 ",\"name\":", l->host, l->pid, l->tid);
	rlog__json_cstr_or_null(j, rlog_reader_thread_name(r, l->pid, l->tid));
	rlog__buf_lit(j, ",\"process\":");
	rlog__json_cstr_or_null(j, rlog_reader_process_name(r, l->pid));
	rlog__buf_printf(j, ",\"n\":%" PRIu64 ",\"ticks\":", l->nticks);
	put_base64(j, l->ticks.p, l->ticks.len);
	rlog__buf_lit(j, ",\"ov\":");
	put_overview(p, j, l, tmp);
	put_spans(j, l, tmp);
	rlog__buf_printf(j, ",\"nruns\":%" PRIu64 ",\"runs\":", l->nruns);
	put_base64(j, l->runs.p, l->runs.len);
	rlog__buf_char(j, '}');
}

static void put_names(struct report *p, struct rlog__buf *j)
{
	rlog__buf_lit(j, ",\"names\":[");
	for (size_t i = 0; i < p->nnames; i++) {
		const struct name *nm = &p->names[i];
		rlog__buf_str(j, i ? ",{\"s\":" : "{\"s\":");
		rlog__json_cstr(j, nm->s);
		rlog__buf_printf(j, ",\"events\":%" PRIu64 ",\"spans\":%" PRIu64 ",\"total_ns\":%" PRId64
				 ",\"min_ns\":%" PRId64 ",\"max_ns\":%" PRId64 ",\"hist\":[", nm->events,
				 nm->spans, nm->total, nm->min, nm->max);
		unsigned top = 0;
		for (unsigned b = 0; b < HIST; b++)
			if (nm->hist[b])
				top = b + 1;
		for (unsigned b = 0; b < top; b++)
			rlog__buf_printf(j, "%s%" PRIu64, b ? "," : "", nm->hist[b]);
		rlog__buf_lit(j, "]}");
	}
	rlog__buf_char(j, ']');
}

/* The sched analysis' threads that ran on a CPU: tid, pid, name, host. */
static void put_tasks(struct report *p, struct rlog__buf *j)
{
	bool first = true;
	rlog__buf_lit(j, ",\"tasks\":[");
	for (size_t h = 0; h < p->nhosts; h++) {
		const struct host *hs = &p->hosts[h];
		for (size_t i = 0; i < hs->sched.nthreads; i++) {
			const struct rlog_sched_thread *t = &hs->sched.threads[i];
			const char *name =
				t->name[0] ? t->name : rlog_reader_thread_name(hs->r, t->pid, t->tid);
			rlog__buf_printf(j, "%s[%" PRIu32 ",%" PRIu32 ",", first ? "" : ",", t->tid,
					 t->pid);
			rlog__json_cstr_or_null(j, name);
			rlog__buf_printf(j, ",%zu]", h);
			first = false;
		}
	}
	rlog__buf_char(j, ']');
}

static void put_counters(struct report *p, struct rlog__buf *j)
{
	bool first = true;
	rlog__buf_lit(j, ",\"counters\":[");
	for (size_t i = 0; i < p->nctrs; i++) {
		const struct counter *c = &p->ctrs[i];
		if (c->n == 0)
			continue; /* its points all outside the window */
		rlog__buf_printf(j, "%s{\"host\":%" PRIu32 ",\"pid\":%" PRIu32 ",\"name\":",
				 first ? "" : ",", c->host, c->pid);
		first = false;
		rlog__json_cstr_or_null(j, c->name);
		rlog__buf_lit(j, ",\"unit\":");
		rlog__json_cstr_or_null(j, c->unit);
		rlog__buf_printf(j, ",\"n\":%" PRIu64 ",\"t\":[", c->n);
		rlog__buf_put(j, c->t.p, c->t.len);
		rlog__buf_lit(j, "],\"v\":[");
		rlog__buf_put(j, c->v.p, c->v.len);
		rlog__buf_lit(j, "]}");
	}
	rlog__buf_char(j, ']');
}

/* The file's losses per thread and cause (the reader's count).  Of the
 * whole file: with a window the page sums the window's own losses. */
static void put_thread_losses(struct report *p, struct rlog__buf *j)
{
	const struct rlog__thread_loss *tl;
	char cb[32];
	bool first = true;
	rlog__buf_lit(j, ",\"thread_losses\":[");
	for (size_t h = 0; h < p->nhosts && !p->o; h++) {
		size_t n = 0;
		const struct host *hs = &p->hosts[h];
		if (rlog__count_thread_losses(hs->r, &tl, &n) < 0)
			n = 0;
		for (size_t i = 0; i < n; i++) {
			int64_t a = rlog__sat_add(rlog_reader_time_ns(hs->r, tl[i].first), hs->offset_ns);
			int64_t z = rlog__sat_add(rlog_reader_time_ns(hs->r, tl[i].last), hs->offset_ns);
			rlog__buf_printf(j, "%s{\"host\":%zu,\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
					 ",\"cause\":\"%s\",\"events\":%" PRIu64 ",\"bytes\":%" PRIu64
					 ",\"blocks\":%" PRIu64 ",\"first_ns\":%" PRId64
					 ",\"last_ns\":%" PRId64 "}", first ? "" : ",", h, tl[i].pid,
					 tl[i].tid, cause_text(tl[i].cause, cb, sizeof(cb)), tl[i].events,
					 tl[i].bytes, tl[i].blocks, page_ns(a), page_ns(z));
			first = false;
		}
	}
	rlog__buf_char(j, ']');
}

/* The window and its own counts (docs/CONVERT.md, "The HTML report"). */
static void put_window(struct report *p, struct rlog__buf *j)
{
	const struct rlog__report_opts *o = p->o;
	rlog__buf_lit(j, ",\"window\":");
	if (!o) {
		rlog__buf_lit(j, "null");
		return;
	}
	rlog__buf_lit(j, "{\"since_ns\":");
	if (o->has_since)
		rlog__buf_i64(j, o->since_ns);
	else
		rlog__buf_lit(j, "null");
	rlog__buf_lit(j, ",\"until_ns\":");
	if (o->has_until)
		rlog__buf_i64(j, o->until_ns);
	else
		rlog__buf_lit(j, "null");
	rlog__buf_printf(j, ",\"events\":%" PRIu64 ",\"spans\":%" PRIu64 ",\"loss_records\":%"
			 PRIu64 ",\"lost_events\":%" PRIu64 ",\"threads\":%" PRIu64 "}",
			 p->st->events, p->st->spans, p->st->loss_records, p->st->lost_events,
			 p->st->lanes);
}

static int write_page(struct report *p, int fd, const char *stats_json)
{
	struct rlog__buf out = { 0 }, j = { 0 }, tmp = { 0 };
	uint64_t written = 0;
	int rc;
	rlog__buf_str(&out, rlog__report_page_head);
	rlog__buf_lit(&out, "<script id=\"rlog-data\" type=\"application/json\">");
	rlog__buf_lit(&j, "{\"format\":1,\"generator\":\"ringlog " RLOG_VERSION_STRING "\",\"stats\":");
	rlog__buf_str(&j, stats_json);
	if (p->extra_json)
		rlog__buf_str(&j, p->extra_json);
	put_window(p, &j);
	const struct rlog_reader_info *in = rlog_reader_info(p->hosts[0].r);
	rlog__buf_printf(&j, ",\"info\":{\"format\":\"%u.%u\",\"buffer_size\":%" PRIu32
			 ",\"buffer_count\":%" PRIu32 ",\"file_size\":%" PRIu64 ",\"blocks\":%" PRIu64
			 ",\"marker_copy\":%s}", in->version_major, in->version_minor, in->buffer_size,
			 in->buffer_count, in->file_size, in->block_count,
			 in->marker_copy ? "true" : "false");
	if (p->timed)
		rlog__buf_printf(&j, ",\"tmin\":%" PRId64 ",\"tmax\":%" PRId64, p->tmin, p->tmax);
	else
		rlog__buf_lit(&j, ",\"tmin\":0,\"tmax\":0");
	put_names(p, &j);
	put_tasks(p, &j);
	put_counters(p, &j);
	put_thread_losses(p, &j);
	rlog__buf_lit(&j, ",\"losses\":[");
	if (p->losses.len)
		rlog__buf_put(&j, p->losses.p, p->losses.len);
	rlog__buf_lit(&j, "],\"lanes\":[");
	rc = drain(&j, &out, fd, &written);
	bool first = true;
	for (size_t i = 0; i < p->nlanes && rc == 0; i++) {
		if (!p->lanes[i].used)
			continue;
		if (!first)
			rlog__buf_char(&j, ',');
		first = false;
		put_lane(p, &j, &p->lanes[i], &tmp);
		rc = tmp.oom ? -ENOMEM : drain(&j, &out, fd, &written);
	}
	if (rc == 0) {
		rlog__buf_lit(&j, "]}");
		rc = drain(&j, &out, fd, &written);
	}
	if (rc == 0) {
		rlog__buf_lit(&out, "</script>");
		rlog__buf_str(&out, rlog__report_page_tail);
		written += out.len;
		rc = out.oom ? -ENOMEM : rlog__buf_write(&out, fd);
	}
	if (p->st)
		p->st->bytes_written = written;
	rlog__buf_free(&out);
	rlog__buf_free(&j);
	rlog__buf_free(&tmp);
	return rc;
}

static void report_free(struct report *p)
{
	for (size_t i = 0; i < p->nlanes; i++) {
		rlog__buf_free(&p->lanes[i].ticks);
		rlog__buf_free(&p->lanes[i].runs);
		free(p->lanes[i].stack);
		free(p->lanes[i].spans);
	}
	free(p->lanes);
	for (size_t i = 0; i < p->nnames; i++)
		free(p->names[i].s);
	free(p->names);
	rlog__map_free(&p->name_map);
	for (size_t i = 0; i < p->nctrs; i++) {
		free(p->ctrs[i].name);
		rlog__buf_free(&p->ctrs[i].t);
		rlog__buf_free(&p->ctrs[i].v);
	}
	free(p->ctrs);
	rlog__buf_free(&p->losses);
	for (size_t h = 0; h < p->nhosts; h++) {
		rlog__map_free(&p->hosts[h].lane_map);
		rlog__map_free(&p->hosts[h].ctr_map);
		rlog_sched_free(&p->hosts[h].sched);
	}
	free(p->hosts);
}

/* The report of one file (m NULL: r), or of several merged (m). */
static int report_run(struct rlog_reader *r, struct rlog__multi *m, int fd, const char *stats_json,
		      const struct rlog__report_opts *o, struct rlog__report_stats *st,
		      size_t *bad_host)
{
	struct report p;
	struct rlog__report_stats local;
	struct rlog_event ev;
	int rc = 0;
	if ((!r && !m) || !stats_json)
		return -EINVAL;
	memset(&p, 0, sizeof(p));
	p.o = o && (o->has_since || o->has_until) ? o : NULL;
	p.extra_json = o ? o->extra_json : NULL;
	p.st = st ? st : &local;
	memset(p.st, 0, sizeof(*p.st));
	p.nhosts = m ? m->n : 1;
	p.hosts = calloc(p.nhosts, sizeof(*p.hosts));
	if (!p.hosts)
		return -ENOMEM;
	for (size_t h = 0; h < p.nhosts; h++) {
		struct host *hs = &p.hosts[h];
		hs->p = &p;
		hs->index = (uint32_t)h;
		hs->r = m ? m->h[h].r : r;
		hs->offset_ns = m ? m->h[h].offset_ns : 0;
		rlog_sched_init(&hs->sched);
		hs->sched.sink = (struct rlog_sched_sink){ hs, NULL, on_run };
	}
	size_t hi = 0;
	while ((rc = m ? rlog__multi_next(m, &ev, &hi) : rlog_reader_next(r, &ev)) > 0) {
		p.cur = &p.hosts[hi];
		p.r = p.cur->r;
		ev.time_ns = page_ns(ev.time_ns);
		rc = on_event(&p, &ev);
		if (rc == 0)
			rc = rlog_sched_event(&p.cur->sched, p.r, &ev);
		if (rc < 0)
			break;
	}
	if (rc < 0 && bad_host)
		*bad_host = hi;
	for (size_t h = 0; h < p.nhosts && rc == 0; h++)
		rc = rlog_sched_end(&p.hosts[h].sched);
	for (size_t i = 0; i < p.nctrs && rc == 0 && p.o; i++)
		if (p.ctrs[i].has_before)
			rc = add_point(&p, &p.ctrs[i], page_ns(p.o->since_ns), p.ctrs[i].before);
	if (p.o) {
		/* The timeline opens on the window (the events past it are not
		 * in the page). */
		if (p.o->has_since)
			p.tmin = page_ns(p.o->since_ns);
		if (p.o->has_until)
			p.tmax = page_ns(p.o->until_ns);
		if (!p.timed && !p.o->has_until)
			p.tmax = p.tmin;
		if (!p.timed && !p.o->has_since)
			p.tmin = p.tmax;
		p.timed = true;
	}
	/* Spans never ended are drawn to the end of the trace. */
	for (size_t i = 0; i < p.nlanes && rc == 0; i++) {
		struct lane *l = &p.lanes[i];
		p.cur = &p.hosts[l->host];
		for (size_t k = 0; k < l->nspans; k++)
			if (l->spans[k].open)
				l->spans[k].end = p.tmax;
		for (size_t k = 0; k < l->depth && rc == 0; k++)
			rc = add_span(&p, l, &l->stack[k], p.tmax,
				      (uint16_t)(k > MAX_DEPTH ? MAX_DEPTH : k), true);
		if (l->used) {
			p.st->events += l->nticks;
			p.st->spans += l->nspans;
			p.st->lanes++;
		}
	}
	if (rc == 0)
		rc = write_page(&p, fd, stats_json);
	report_free(&p);
	return rc;
}

int rlog__report_write(struct rlog_reader *r, int fd, const char *stats_json,
		       const struct rlog__report_opts *o, struct rlog__report_stats *st)
{
	return r ? report_run(r, NULL, fd, stats_json, o, st, NULL) : -EINVAL;
}

int rlog__report_write_hosts(struct rlog__multi *m, int fd, const char *stats_json,
			     const struct rlog__report_opts *o, struct rlog__report_stats *st,
			     size_t *bad_host)
{
	return m && m->n ? report_run(NULL, m, fd, stats_json, o, st, bad_host) : -EINVAL;
}
