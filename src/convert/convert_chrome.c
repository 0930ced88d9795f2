/*
 * convert_chrome.c - a ringlog log file as Trace Event Format JSON, the
 * format chrome://tracing and ui.perfetto.dev open (docs/CONVERT.md):
 *
 *   {"displayTimeUnit":"ns","otherData":{...},"traceEvents":[
 *   {"name":"http.request","cat":"3","ph":"i","s":"t","ts":1.500,"pid":100,"tid":101,"args":{...}},
 *   {"name":"work","cat":"1","ph":"X","ts":1.000,"dur":1.000,"pid":100,"tid":101,"args":{...}},
 *   {"name":"proc.minflt","cat":"counter","ph":"C","ts":2.000,"pid":100,"tid":0,"args":{"value":3456}},
 *   ...
 *   {"name":"thread_name","ph":"M","pid":100,"tid":101,"args":{"name":"main"}}
 *   ]}
 *
 * One event per line, in the reader's time order, except that a span's "X"
 * is written when the span ends (the viewers sort by ts) and metadata comes
 * last.  ts and dur are microseconds with three decimals: the exact
 * nanoseconds of the reader.
 *
 * System events (docs/FORMAT.md, "System events") are instants on their
 * CPU's track (pid 0, tid the CPU), as any event; besides, the scheduling
 * analysis of src/analysis/sched.h turns them into slices as its
 * intervals end: on a track per CPU (pid CPU_PID, tid the CPU, named
 * "CPU N"), which thread ran, from its switch-in to its switch-out; on
 * each thread's track, its state: "running", "runnable", "sleeping", or
 * "syscall NAME" while it runs in a system call (a sleep inside a call
 * carries the call in its args).
 *
 * Memory: one open-span stack per thread (a span's rendered args wait for
 * its end), the scheduling state per thread, and the names; the output
 * goes out in 1 MiB writes.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/sched.h"
#include "buf.h"
#include "convert.h"
#include "json.h"
#include "map.h"
#include "names.h"
#include "ringlog/reader.h"
#include "satmath.h"
#include "vec.h"

#define OUT_FLUSH (1u << 20) /* write the output once this much is pending */
#define CPU_PID 4294967295u  /* the CPUs' tracks: no process has this pid */
#define MAX_CPUS 4096        /* CPUs named at the end (a track above is left unnamed) */

/* Nanoseconds as microseconds with three decimals: -1500 -> "-1.500". */
static void put_us(struct rlog__buf *b, int64_t ns)
{
	uint64_t a = ns < 0 ? 0u - (uint64_t)ns : (uint64_t)ns;
	char tmp[32], *e = tmp + sizeof(tmp);
	unsigned frac = (unsigned)(a % 1000);
	*--e = (char)('0' + frac % 10);
	*--e = (char)('0' + frac / 10 % 10);
	*--e = (char)('0' + frac / 100);
	*--e = '.';
	char *s = rlog__convert_u64_text(e, a / 1000);
	if (ns < 0)
		*--s = '-';
	rlog__buf_put(b, s, (size_t)(tmp + sizeof(tmp) - s));
}

/* ------------------------------------------------------------------ */

/* A span whose begin was seen and whose end was not (yet). */
struct open_span {
	const struct rlog_schema *s;
	int64_t ns;        /* begin time */
	bool untimed;      /* the begin was an untimed record */
	char *args;        /* rendered "{...}" of the begin's fields (X mode) */
	size_t args_len;
};

struct thread {
	uint32_t pid, tid;
	struct open_span *stack;  /* innermost last */
	size_t depth, cap;
	char *name;               /* last THREAD_NAME record's payload, or NULL */
	size_t name_len;
};

struct process {
	uint32_t pid;
	char *name;               /* last PROCESS_NAME record's payload, or NULL */
	size_t name_len;
};

struct chrome {
	struct rlog_reader *r;
	int fd;
	unsigned flags;
	struct rlog__convert_stats *st;
	struct rlog__buf out;
	bool first;               /* no event written yet: no separator */
	struct rlog__buf args;           /* scratch: a span's args */
	int err;                  /* first write error, -errno */

	struct thread *th;        /* in order of first appearance */
	size_t nth, th_cap;
	struct rlog__map th_map; /* pid << 32 | tid -> index in th */
	struct rlog__convert_last last; /* the previous event's thread */
	struct process *pr;
	size_t npr, pr_cap;
	struct rlog__map pr_map; /* pid -> index in pr */
	struct rlog_value vals[RLOG_SCHEMA_MAX_FIELDS];
	bool untimed;             /* the record being converted has no timestamp of its own */
	struct rlog_sched sched;  /* the system events' scheduling state */
	uint64_t cpus[MAX_CPUS / 64]; /* the CPUs that have a track */
	const struct rlog__chrome_host *host; /* one host of several, or NULL */
};

/* One host of several (rlog__convert_chrome_host): its processes and
 * threads get numbers of their own, its times the merged origin. */
static uint64_t host_id(const struct chrome *c, uint32_t id)
{
	return c->host ? RLOG__CHROME_HOST_IDS * (c->host->index + 1) + id : id;
}


static int flush_out(struct chrome *c)
{
	size_t n = c->out.len;
	if (c->err == 0) {
		c->err = rlog__buf_write(&c->out, c->fd);
		if (c->st && c->err == 0)
			c->st->bytes_written += n;
	}
	c->out.len = 0;
	return c->err;
}

/* Ends an event (the caller wrote up to its last key) and writes the
 * output out if enough is pending. */
static int event_end(struct chrome *c)
{
	rlog__buf_lit(&c->out, "}");
	if (c->st)
		c->st->events_written++;
	if (c->out.len >= OUT_FLUSH)
		return flush_out(c);
	return c->out.oom ? -ENOMEM : 0;
}

/* Starts an event: "{" after the separator from the previous one. */
static void event_start(struct chrome *c)
{
	if (c->first)
		rlog__buf_lit(&c->out, "{");
	else
		rlog__buf_lit(&c->out, ",\n{");
	c->first = false;
}

/* {"name":NAME,"cat":CAT,"ph":"PH","ts":TS,"pid":P,"tid":T */
static void event_head(struct chrome *c, const char *name, size_t name_len, const char *cat,
		       const char *ph, int64_t ns, uint32_t pid, uint32_t tid)
{
	struct rlog__buf *b = &c->out;
	event_start(c);
	rlog__buf_lit(b, "\"name\":");
	rlog__json_str(b, name, name_len);
	if (cat) {
		rlog__buf_lit(b, ",\"cat\":\"");
		rlog__buf_str(b, cat);
		rlog__buf_lit(b, "\"");
	}
	rlog__buf_lit(b, ",\"ph\":\"");
	rlog__buf_str(b, ph);
	rlog__buf_lit(b, "\",\"ts\":");
	put_us(b, c->host ? ns + c->host->offset_ns : ns);
	rlog__buf_lit(b, ",\"pid\":");
	rlog__buf_u64(b, host_id(c, pid));
	rlog__buf_lit(b, ",\"tid\":");
	rlog__buf_u64(b, host_id(c, tid));
	if (c->untimed)
		rlog__buf_lit(b, ",\"untimed\":true"); /* ts is the thread's previous record's */
}

static struct thread *thread_of(struct chrome *c, uint32_t pid, uint32_t tid)
{
	bool added;
	long i = rlog__convert_entry_last(&c->th, &c->nth, &c->th_cap, sizeof(*c->th), &c->th_map,
					  (uint64_t)pid << 32 | tid, &added, &c->last);
	if (i < 0)
		return NULL;
	struct thread *t = &c->th[i];
	t->pid = pid;
	t->tid = tid;
	return t;
}

static struct process *process_of(struct chrome *c, uint32_t pid)
{
	bool added;
	long i = rlog__convert_entry(&c->pr, &c->npr, &c->pr_cap, sizeof(*c->pr), &c->pr_map, pid,
				     &added);
	if (i < 0)
		return NULL;
	c->pr[i].pid = pid;
	return &c->pr[i];
}

static int set_name(char **name, size_t *len, const struct rlog_event *ev)
{
	char *n = malloc((size_t)ev->length + 1);
	if (!n)
		return -ENOMEM;
	memcpy(n, ev->payload, ev->length);
	n[ev->length] = '\0';
	free(*name);
	*name = n;
	*len = ev->length;
	return 0;
}

/* {"field":value,...} of the decoded fields; counters: numbers only. */
static void put_fields(struct rlog__buf *b, const struct rlog_schema *s, const struct rlog_value *v,
		       bool numbers_only)
{
	bool first = true;
	rlog__buf_lit(b, "{");
	for (unsigned i = 0; i < s->field_count; i++) {
		const struct rlog_field *f = &s->fields[i];
		if (numbers_only && (f->type == RLOG_FIELD_BYTES || f->type == RLOG_FIELD_STRING ||
				     (f->type == RLOG_FIELD_F64 && !isfinite(v[i].v.f))))
			continue;
		if (!first)
			rlog__buf_lit(b, ",");
		first = false;
		rlog__buf_lit(b, "\"");
		rlog__buf_str(b, f->name); /* a C identifier: nothing to escape */
		rlog__buf_lit(b, "\":");
		rlog__json_value(b, &v[i]);
	}
	rlog__buf_lit(b, "}");
}

static void cat_of(char *buf, const struct rlog_schema *s)
{
	char *e = buf + 4;
	*--e = '\0';
	char *p = rlog__convert_u64_text(e, s->category);
	memmove(buf, p, (size_t)(e - p) + 1);
}

/*
 * An event without a usable schema: its name (as `ringlog dump` gives it)
 * and its payload in hex; RAW_* payloads also decoded.  With s, the event
 * has a schema that its record does not match: the schema's name and
 * category, and "mismatch":true.
 */
static int put_raw(struct chrome *c, const struct rlog_event *ev, const struct rlog_schema *s)
{
	struct rlog__buf *b = &c->out;
	char name[300], cat[4];
	size_t n = rlog__convert_event_name(name, sizeof(name), ev, s, false);
	if (c->st) {
		c->st->raw_events++;
		c->st->mismatched += s != NULL;
	}
	if (s)
		cat_of(cat, s);
	event_head(c, name, n, s ? cat : "raw", "i", ev->time_ns, ev->pid, ev->tid);
	rlog__buf_lit(b, ",\"s\":\"t\",\"args\":{");
	if (s)
		rlog__buf_lit(b, "\"mismatch\":true,");
	if (ev->flagged) {
		rlog__buf_lit(b, "\"flag\":");
		rlog__buf_u64(b, ev->flag);
		rlog__buf_lit(b, ",");
	}
	rlog__buf_lit(b, "\"payload\":");
	rlog__json_hex(b, ev->payload, ev->length);
	int count = rlog_event_raw_count(ev);
	if (ev->id == RLOG_ID_RAW_STRING) {
		rlog__buf_lit(b, ",\"value\":");
		rlog__json_str(b, ev->payload, ev->length);
	} else if (count >= 0) {
		struct rlog_value v;
		rlog__buf_lit(b, ",\"values\":[");
		for (int i = 0; i < count && rlog_event_raw_value(ev, (unsigned)i, &v) == 1; i++) {
			if (i > 0)
				rlog__buf_lit(b, ",");
			rlog__json_value(b, &v);
		}
		rlog__buf_lit(b, "]");
	}
	rlog__buf_lit(b, "}");
	return event_end(c);
}

static int put_loss(struct chrome *c, const struct rlog_event *ev, const struct rlog_loss *l)
{
	uint64_t events = l->events, bytes = l->bytes;
	const char *cn = rlog__loss_cause_name(l->cause);
	char cbuf[24], name[48];
	if (!cn) {
		snprintf(cbuf, sizeof(cbuf), "unknown(%" PRIu32 ")", l->cause);
		cn = cbuf;
	}
	int n = snprintf(name, sizeof(name), "data_loss: %s", cn);
	if (c->st) {
		c->st->loss_records++;
		c->st->events_lost += events;
	}
	/* Process-scoped: the loss belongs to the process of the thread that
	 * lost the events; with pid 0 (no slot, log write) to no process. */
	event_head(c, name, (size_t)n, "ringlog", "i", ev->time_ns, ev->pid, ev->tid);
	struct rlog__buf *b = &c->out;
	if (ev->pid != 0)
		rlog__buf_lit(b, ",\"s\":\"p\",\"args\":{\"events\":");
	else
		rlog__buf_lit(b, ",\"s\":\"g\",\"args\":{\"events\":");
	rlog__buf_u64(b, events);
	rlog__buf_lit(b, ",\"bytes\":");
	rlog__buf_u64(b, bytes);
	rlog__buf_lit(b, ",\"cause\":\"");
	rlog__buf_str(b, cn);
	rlog__buf_lit(b, "\"}");
	return event_end(c);
}

/*
 * A COUNTER record: a "C" event of the counter's track in its process (the
 * system's counters: process 0, named "system"), whose value is the
 * counter's absolute value.  The value, not the delta: a counter track
 * holds its value until the next event, and a counter that did not
 * change has no record, so a delta would stay drawn over periods in
 * which nothing happened.  A record whose value the reader cannot know
 * (records of the counter missing before it) is skipped.
 */
static int put_counter(struct chrome *c, const struct rlog_event *ev)
{
	struct rlog_counter k;
	if (rlog_event_counter(c->r, ev, &k) < 0)
		return put_raw(c, ev, NULL); /* never for an event of the reader */
	if (c->st)
		c->st->counter_records++;
	if (!k.value_known) {
		if (c->st)
			c->st->counter_unknown++;
		return 0;
	}
	if (ev->pid == 0) {
		struct process *p = process_of(c, 0);
		if (!p)
			return -ENOMEM;
		if (!p->name && !(p->name = strdup("system")))
			return -ENOMEM;
		p->name_len = strlen(p->name);
	}
	char name[300];
	int n = k.name ? snprintf(name, sizeof(name), "%s", k.name)
		       : snprintf(name, sizeof(name), "counter #%" PRIu32, k.counter_id);
	event_head(c, name, (size_t)n, "counter", "C", ev->time_ns, ev->pid, ev->tid);
	rlog__buf_lit(&c->out, ",\"args\":{\"value\":");
	rlog__buf_u64(&c->out, k.value);
	rlog__buf_lit(&c->out, "}");
	return event_end(c);
}

/* A span never ended: a "B" event (the viewers draw it to the end of the
 * trace); in B/E mode its "B" is already out. */
static int put_open(struct chrome *c, const struct thread *t, struct open_span *o)
{
	if (c->st)
		c->st->unmatched_begins++;
	if (c->flags & RLOG__CHROME_SPANS_BE)
		return 0;
	char cat[4];
	cat_of(cat, o->s);
	c->untimed = o->untimed;
	event_head(c, o->s->name, strlen(o->s->name), cat, "B", o->ns, t->pid, t->tid);
	rlog__buf_lit(&c->out, ",\"args\":");
	rlog__buf_put(&c->out, o->args, o->args_len);
	free(o->args);
	o->args = NULL;
	return event_end(c);
}

static int span_begin(struct chrome *c, const struct rlog_schema *s, const struct rlog_event *ev)
{
	struct thread *t = thread_of(c, ev->pid, ev->tid);
	if (!t)
		return -ENOMEM;
	if (t->depth == RLOG__SPANS_OPEN) {
		/* The outermost open span, no longer tracked (convert.h). */
		bool untimed = c->untimed;
		int rc = put_open(c, t, &t->stack[0]);
		c->untimed = untimed;
		if (rc < 0)
			return rc;
		memmove(&t->stack[0], &t->stack[1], --t->depth * sizeof(*t->stack));
	}
	if (rlog__vec_room(&t->stack, t->depth, &t->cap, sizeof(*t->stack), 8) < 0)
		return -ENOMEM;
	struct open_span *o = &t->stack[t->depth];
	memset(o, 0, sizeof(*o));
	o->s = s;
	o->ns = ev->time_ns;
	o->untimed = c->untimed;
	char cat[4];
	cat_of(cat, s);
	if (c->flags & RLOG__CHROME_SPANS_BE) {
		event_head(c, s->name, strlen(s->name), cat, "B", ev->time_ns, ev->pid, ev->tid);
		rlog__buf_lit(&c->out, ",\"args\":");
		put_fields(&c->out, s, c->vals, false);
		t->depth++;
		return event_end(c);
	}
	c->args.len = 0;
	put_fields(&c->args, s, c->vals, false);
	if (c->args.oom || !(o->args = malloc(c->args.len)))
		return -ENOMEM;
	memcpy(o->args, c->args.p, c->args.len);
	o->args_len = c->args.len;
	t->depth++;
	if (c->st)
		c->st->skipped++; /* written as an "X" at its end */
	return 0;
}

/* Per thread, an END closes the innermost open BEGIN of the same ID. */
static int span_end(struct chrome *c, const struct rlog_schema *s, const struct rlog_event *ev)
{
	struct thread *t = thread_of(c, ev->pid, ev->tid);
	if (!t)
		return -ENOMEM;
	size_t i = t->depth;
	while (i > 0 && t->stack[i - 1].s->id != s->id)
		i--;
	char cat[4];
	cat_of(cat, s);
	if (i == 0) {
		if (c->st)
			c->st->unmatched_ends++;
		event_head(c, s->name, strlen(s->name), cat, "i", ev->time_ns, ev->pid, ev->tid);
		rlog__buf_lit(&c->out, ",\"s\":\"t\",\"args\":{\"span\":\"end without begin\"}");
		return event_end(c);
	}
	struct open_span o = t->stack[i - 1];
	memmove(&t->stack[i - 1], &t->stack[i], (t->depth - i) * sizeof(o));
	t->depth--;
	if (c->st)
		c->st->spans++;
	if (c->flags & RLOG__CHROME_SPANS_BE) {
		event_head(c, o.s->name, strlen(o.s->name), cat, "E", ev->time_ns, ev->pid, ev->tid);
		return event_end(c);
	}
	c->untimed = c->untimed || o.untimed; /* ts or dur rests on an inherited time */
	event_head(c, o.s->name, strlen(o.s->name), cat, "X", o.ns, ev->pid, ev->tid);
	rlog__buf_lit(&c->out, ",\"dur\":");
	put_us(&c->out, rlog__sat_sub(ev->time_ns, o.ns));
	rlog__buf_lit(&c->out, ",\"args\":");
	rlog__buf_put(&c->out, o.args, o.args_len);
	free(o.args);
	return event_end(c);
}

static int put_schema_event(struct chrome *c, const struct rlog_schema *s,
			    const struct rlog_event *ev)
{
	char cat[4], name[300];
	size_t n = rlog__convert_event_name(name, sizeof(name), ev, s, true);
	cat_of(cat, s);
	if (c->st)
		c->st->schema_events++;
	if (s->kind == RLOG_KIND_COUNTER) {
		event_head(c, name, n, cat, "C", ev->time_ns, ev->pid, ev->tid);
		rlog__buf_lit(&c->out, ",\"args\":");
		put_fields(&c->out, s, c->vals, true);
		return event_end(c);
	}
	event_head(c, name, n, cat, "i", ev->time_ns, ev->pid, ev->tid);
	rlog__buf_lit(&c->out, ",\"s\":\"t\",\"args\":");
	put_fields(&c->out, s, c->vals, false);
	return event_end(c);
}

static int convert_event(struct chrome *c, const struct rlog_event *ev)
{
	/* Every thread, for its name at the end. */
	if (!thread_of(c, ev->pid, ev->tid))
		return -ENOMEM;
	c->untimed = !ev->has_time;
	struct rlog_loss loss;
	switch (rlog_record_kind(ev->id, ev->flagged)) {
	case RLOG_RECORD_LOSS:
		if (rlog_event_loss(ev, &loss) == 0)
			return put_loss(c, ev, &loss);
		break; /* never for an event of the reader: shown raw */
	case RLOG_RECORD_MARKER:
		if (c->st)
			c->st->skipped++;
		return 0;
	case RLOG_RECORD_COUNTER:
		return put_counter(c, ev);
	case RLOG_RECORD_METADATA:
		if (c->st)
			c->st->skipped++;
		if (ev->id == RLOG_ID_THREAD_NAME) {
			struct thread *t = thread_of(c, ev->pid, ev->tid);
			return t ? set_name(&t->name, &t->name_len, ev) : -ENOMEM;
		}
		if (ev->id == RLOG_ID_PROCESS_NAME) {
			struct process *p = process_of(c, ev->pid);
			return p ? set_name(&p->name, &p->name_len, ev) : -ENOMEM;
		}
		return 0; /* EVENT_SCHEMA, COUNTER_NAME: the reader applies them */
	default:
		break;
	}
	const struct rlog_schema *s = rlog_reader_schema(c->r, ev);
	if (!s)
		return put_raw(c, ev, NULL);
	if (rlog__convert_fields(s, ev, c->vals) < 0)
		return put_raw(c, ev, s);
	if (s->kind != RLOG_KIND_SPAN)
		return put_schema_event(c, s, ev);
	if (c->st)
		c->st->schema_events++;
	return ev->flag == RLOG_SPAN_END ? span_end(c, s, ev) : span_begin(c, s, ev);
}

/* Spans never ended. */
static int put_open_spans(struct chrome *c)
{
	for (size_t i = 0; i < c->nth; i++) {
		struct thread *t = &c->th[i];
		for (size_t k = 0; k < t->depth; k++) {
			int rc = put_open(c, t, &t->stack[k]);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

/* ---- the scheduling slices (the sink of src/analysis/sched.h) ---- */

/* The track of a thread of the system events: its process if known, else
 * a process of its own (the tid). */
static uint32_t sched_pid(const struct rlog_sched_thread *t)
{
	return t->pid ? t->pid : t->tid;
}

static int sched_segment(void *arg, const struct rlog_sched_thread *t, int state, const char *call,
			 int64_t from_ns, int64_t to_ns)
{
	struct chrome *c = arg;
	char name[RLOG_SCHED_NAME + 16];
	if (to_ns == from_ns)
		return 0; /* a cut where the state did not last */
	const char *st = state == RLOG_SCHED_RUNNING ? "running"
			 : state == RLOG_SCHED_RUNNABLE ? "runnable" : "sleeping";
	if (call && state == RLOG_SCHED_RUNNING)
		snprintf(name, sizeof(name), "syscall %s", call);
	else
		snprintf(name, sizeof(name), "%s", st);
	c->untimed = false;
	event_head(c, name, strlen(name), "sched", "X", from_ns, sched_pid(t), t->tid);
	rlog__buf_lit(&c->out, ",\"dur\":");
	put_us(&c->out, rlog__sat_sub(to_ns, from_ns));
	if (call && state != RLOG_SCHED_RUNNING) {
		rlog__buf_lit(&c->out, ",\"args\":{\"syscall\":");
		rlog__json_str(&c->out, call, strlen(call));
		rlog__buf_char(&c->out, '}');
	}
	return event_end(c);
}

static int sched_run(void *arg, const struct rlog_sched_thread *t, uint32_t cpu, int64_t from_ns,
		     int64_t to_ns)
{
	struct chrome *c = arg;
	char num[24];
	const char *name = t->name[0] ? t->name : rlog_reader_thread_name(c->r, t->pid, t->tid);
	if (!name) {
		snprintf(num, sizeof(num), "%" PRIu32, t->tid);
		name = num;
	}
	if (cpu < MAX_CPUS)
		c->cpus[cpu / 64] |= UINT64_C(1) << (cpu % 64);
	c->untimed = false;
	event_head(c, name, strlen(name), "sched", "X", from_ns, CPU_PID, cpu);
	rlog__buf_lit(&c->out, ",\"dur\":");
	put_us(&c->out, rlog__sat_sub(to_ns, from_ns));
	rlog__buf_printf(&c->out, ",\"args\":{\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 "}",
			 t->pid, t->tid);
	return event_end(c);
}

static int put_name_meta(struct chrome *c, const char *what, uint32_t pid, const uint32_t *tid,
			 const char *name, size_t len)
{
	struct rlog__buf *b = &c->out;
	event_start(c);
	rlog__buf_lit(b, "\"name\":\"");
	rlog__buf_str(b, what);
	rlog__buf_lit(b, "\",\"ph\":\"M\",\"pid\":");
	rlog__buf_u64(b, host_id(c, pid));
	if (tid) {
		rlog__buf_lit(b, ",\"tid\":");
		rlog__buf_u64(b, host_id(c, *tid));
	}
	rlog__buf_lit(b, ",\"args\":{\"name\":");
	if (c->host && !tid) {
		/* A process of one host of several: "HOST: name", so the
		 * viewers list a host's processes together. */
		size_t k;
		char *full = rlog__convert_host_name(c->host->name, name, len, &k);
		if (!full)
			return -ENOMEM;
		rlog__json_str(b, full, k);
		free(full);
	} else {
		rlog__json_str(b, name, len);
	}
	rlog__buf_lit(b, "}");
	return event_end(c);
}

/* Process and thread names: the reader's (the latest anywhere in the
 * file), else the last record seen here. */
static int put_names(struct chrome *c)
{
	int rc = 0;
	for (size_t i = 0; i < c->nth && rc == 0; i++) {
		struct thread *t = &c->th[i];
		if (rlog__map_get(&c->pr_map, t->pid) == RLOG__MAP_NONE && !process_of(c, t->pid))
			return -ENOMEM;
	}
	for (size_t i = 0; i < c->npr && rc == 0; i++) {
		struct process *p = &c->pr[i];
		const char *n = rlog_reader_process_name(c->r, p->pid);
		if (n)
			rc = put_name_meta(c, "process_name", p->pid, NULL, n, strlen(n));
		else if (p->name)
			rc = put_name_meta(c, "process_name", p->pid, NULL, p->name, p->name_len);
		else if (c->host) {
			/* Named all the same: the host's name is the grouping. */
			char pn[32];
			int k = snprintf(pn, sizeof(pn), "pid %" PRIu32, p->pid);
			rc = put_name_meta(c, "process_name", p->pid, NULL, pn, (size_t)k);
		}
	}
	for (size_t i = 0; i < c->nth && rc == 0; i++) {
		struct thread *t = &c->th[i];
		const char *n = rlog_reader_thread_name(c->r, t->pid, t->tid);
		if (n)
			rc = put_name_meta(c, "thread_name", t->pid, &t->tid, n, strlen(n));
		else if (t->name)
			rc = put_name_meta(c, "thread_name", t->pid, &t->tid, t->name, t->name_len);
	}
	/* The system events' threads, by the comm the kernel recorded. */
	for (size_t i = 0; i < c->sched.nthreads && rc == 0; i++) {
		const struct rlog_sched_thread *t = &c->sched.threads[i];
		if (t->name[0] && !rlog_reader_thread_name(c->r, sched_pid(t), t->tid))
			rc = put_name_meta(c, "thread_name", sched_pid(t), &t->tid, t->name,
					   strlen(t->name));
	}
	bool any = false;
	for (uint32_t cpu = 0; cpu < MAX_CPUS && rc == 0; cpu++) {
		if (!(c->cpus[cpu / 64] >> (cpu % 64) & 1))
			continue;
		char name[24];
		snprintf(name, sizeof(name), "CPU %" PRIu32, cpu);
		if (!any)
			rc = put_name_meta(c, "process_name", CPU_PID, NULL, "CPUs", 4);
		any = true;
		if (rc == 0)
			rc = put_name_meta(c, "thread_name", CPU_PID, &cpu, name, strlen(name));
	}
	return rc;
}

static void put_prologue(struct chrome *c)
{
	const struct rlog_reader_info *info = rlog_reader_info(c->r);
	struct rlog__buf *b = &c->out;
	char tbuf[64];
	time_t secs = (time_t)(info->sync_realtime_ns / 1000000000u);
	struct tm tm;

	rlog__buf_lit(b, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"ringlog\",\"session\":");
	rlog__json_str(b, info->session_name, strlen(info->session_name));
	rlog__buf_lit(b, ",\"tick_source\":\"");
	const char *src = rlog__tick_source_name(info->tick_source);
	rlog__buf_str(b, src ? src : "unknown");
	rlog__buf_lit(b, "\",\"tick_freq_hz\":");
	rlog__buf_u64(b, info->tick_freq_hz);
	rlog__buf_lit(b, ",\"start_realtime_ns\":");
	rlog__buf_u64(b, info->sync_realtime_ns);
	if (gmtime_r(&secs, &tm) && strftime(tbuf, sizeof(tbuf), "%Y-%m-%dT%H:%M:%S", &tm) > 0) {
		rlog__buf_lit(b, ",\"start\":\"");
		rlog__buf_str(b, tbuf);
		snprintf(tbuf, sizeof(tbuf), ".%09" PRIu64 "Z\"", info->sync_realtime_ns % 1000000000u);
		rlog__buf_str(b, tbuf);
	}
	/* ts counts from the session start (ringlog dump's time_ns column). */
	rlog__buf_lit(b, ",\"ts_origin\":\"session start\"},\"traceEvents\":[\n");
	c->first = true;
}

/* The prologue of a merge of several hosts: their sessions and starts. */
static void put_prologue_hosts(struct chrome *c)
{
	const struct rlog__chrome_host *h = c->host;
	struct rlog__buf *b = &c->out;
	rlog__buf_lit(b, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"ringlog\","
			 "\"hosts\":");
	rlog__buf_u64(b, h->count);
	rlog__buf_lit(b, ",\"start_realtime_ns\":");
	rlog__buf_u64(b, h->base_realtime_ns);
	/* ts counts from the earliest host's start, on CLOCK_REALTIME. */
	rlog__buf_lit(b, ",\"ts_origin\":\"earliest host start\"},\"traceEvents\":[\n");
}

static int convert(struct rlog_reader *r, int fd, unsigned flags, struct rlog__convert_stats *st,
		   const struct rlog__chrome_host *host)
{
	struct chrome c;
	struct rlog_event ev;
	int rc;

	if (!r || (flags & ~RLOG__CHROME_SPANS_BE))
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	c.r = r;
	c.fd = fd;
	c.flags = flags;
	c.st = st;
	c.host = host;
	rlog_sched_init(&c.sched);
	c.sched.sink = (struct rlog_sched_sink){ &c, sched_segment, sched_run };
	if (st)
		memset(st, 0, sizeof(*st));
	if (!rlog__buf_need(&c.out, OUT_FLUSH + 65536)) {
		rc = -ENOMEM;
		goto out;
	}
	if (!host) {
		put_prologue(&c);
	} else {
		if (host->index == 0)
			put_prologue_hosts(&c);
		c.first = host->index == 0;
	}
	while ((rc = rlog_reader_next(r, &ev)) > 0) {
		if (st)
			st->events_read++;
		rc = convert_event(&c, &ev);
		if (rc == 0)
			rc = rlog_sched_event(&c.sched, r, &ev);
		if (rc < 0)
			goto out;
	}
	if (rc < 0)
		goto out;
	rc = rlog_sched_end(&c.sched);
	if (rc < 0)
		goto out;
	rc = put_open_spans(&c);
	if (rc == 0)
		rc = put_names(&c);
	if (rc == 0) {
		if (!host || host->index + 1 == host->count)
			rlog__buf_lit(&c.out, "\n]}\n");
		rc = flush_out(&c);
	}
out:
	for (size_t i = 0; i < c.nth; i++) {
		for (size_t k = 0; k < c.th[i].depth; k++)
			free(c.th[i].stack[k].args);
		free(c.th[i].stack);
		free(c.th[i].name);
	}
	for (size_t i = 0; i < c.npr; i++)
		free(c.pr[i].name);
	free(c.th);
	free(c.pr);
	rlog_sched_free(&c.sched);
	rlog__map_free(&c.th_map);
	rlog__map_free(&c.pr_map);
	free(c.out.p);
	free(c.args.p);
	return rc;
}

int rlog__convert_chrome(struct rlog_reader *r, int fd, unsigned flags,
			 struct rlog__convert_stats *st)
{
	return convert(r, fd, flags, st, NULL);
}

int rlog__convert_chrome_host(struct rlog_reader *r, int fd, unsigned flags,
			      struct rlog__convert_stats *st, const struct rlog__chrome_host *host)
{
	if (!host || host->index >= host->count || !host->name)
		return -EINVAL;
	return convert(r, fd, flags, st, host);
}
