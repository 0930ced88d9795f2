/*
 * convert_chrome.c - a ringlog log file as Trace Event Format JSON, the
 * format chrome://tracing and ui.perfetto.dev open (docs/CONVERT.md):
 *
 *   {"displayTimeUnit":"ns","otherData":{...},"traceEvents":[
 *   {"name":"http.request","cat":"3","ph":"i","s":"t","ts":1.500,"pid":100,"tid":101,"args":{...}},
 *   {"name":"work","cat":"1","ph":"X","ts":1.000,"dur":1.000,"pid":100,"tid":101,"args":{...}},
 *   ...
 *   {"name":"thread_name","ph":"M","pid":100,"tid":101,"args":{"name":"main"}}
 *   ]}
 *
 * One event per line, in the reader's time order, except that a span's "X"
 * is written when the span ends (the viewers sort by ts) and metadata comes
 * last.  ts and dur are microseconds with three decimals: the exact
 * nanoseconds of the reader.
 *
 * Memory: one open-span stack per thread (a span's rendered args wait for
 * its end) and the names; the output goes out in 1 MiB writes.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "convert.h"
#include "io.h"
#include "record.h"
#include "ringlog/reader.h"

#define OUT_FLUSH (1u << 20) /* write the output once this much is pending */

/* A growable byte buffer; an allocation failure sticks in oom and later
 * appends are dropped, so that callers check once. */
struct jb {
	char *p;
	size_t len, cap;
	bool oom;
};

static bool jb_grow(struct jb *b, size_t n)
{
	if (b->oom)
		return false;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

/* Room for n more bytes.  Inline, as jb_put: most appends are a few
 * bytes, and the call was a third of the time of a conversion. */
static inline bool jb_need(struct jb *b, size_t n)
{
	return b->len + n <= b->cap || jb_grow(b, n);
}

static inline void jb_put(struct jb *b, const void *p, size_t n)
{
	if (jb_need(b, n)) {
		memcpy(b->p + b->len, p, n);
		b->len += n;
	}
}

#define jb_lit(b, s) jb_put((b), (s), sizeof(s) - 1)

static void jb_str(struct jb *b, const char *s)
{
	jb_put(b, s, strlen(s));
}

static char *fmt_u64(char *end, uint64_t v)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

static void jb_u64(struct jb *b, uint64_t v)
{
	char tmp[24], *e = tmp + sizeof(tmp);
	char *s = fmt_u64(e, v);
	jb_put(b, s, (size_t)(e - s));
}

static void jb_i64(struct jb *b, int64_t v)
{
	if (v < 0) {
		jb_lit(b, "-");
		jb_u64(b, 0u - (uint64_t)v);
	} else {
		jb_u64(b, (uint64_t)v);
	}
}

/* Nanoseconds as microseconds with three decimals: -1500 -> "-1.500". */
static void jb_us(struct jb *b, int64_t ns)
{
	uint64_t a = ns < 0 ? 0u - (uint64_t)ns : (uint64_t)ns;
	char tmp[32], *e = tmp + sizeof(tmp);
	unsigned frac = (unsigned)(a % 1000);
	*--e = (char)('0' + frac % 10);
	*--e = (char)('0' + frac / 10 % 10);
	*--e = (char)('0' + frac / 100);
	*--e = '.';
	char *s = fmt_u64(e, a / 1000);
	if (ns < 0)
		*--s = '-';
	jb_put(b, s, (size_t)(tmp + sizeof(tmp) - s));
}

/* A double as the shortest JSON number (of 15, 16 or 17 significant
 * digits) that reads back as the same double; JSON has no NaN or infinity,
 * so those become the strings "NaN", "Infinity", "-Infinity". */
static void jb_f64(struct jb *b, double v)
{
	if (isnan(v)) {
		jb_lit(b, "\"NaN\"");
	} else if (isinf(v)) {
		if (v > 0)
			jb_lit(b, "\"Infinity\"");
		else
			jb_lit(b, "\"-Infinity\"");
	} else {
		char tmp[32];
		int n = 0;
		for (int digits = 15; digits <= 17; digits++) {
			n = snprintf(tmp, sizeof(tmp), "%.*g", digits, v);
			if (strtod(tmp, NULL) == v)
				break;
		}
		jb_put(b, tmp, (size_t)n);
	}
}

/* Length of the valid UTF-8 sequence at p (n bytes available), 0 if the
 * bytes there are not one (overlong forms, surrogates, > U+10FFFF). */
static size_t utf8_len(const uint8_t *p, size_t n)
{
	uint8_t c = p[0];
	if (c >= 0xc2 && c <= 0xdf)
		return n >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if (n < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f))
			return 0;
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (n < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 ||
		    (p[3] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f))
			return 0;
		return 4;
	}
	return 0;
}

/*
 * Bytes as a JSON string: valid UTF-8 is copied, '"', '\' and control
 * characters are escaped, and each byte that is not part of valid UTF-8
 * becomes \u00XX (the code point of the same value), so that the output is
 * always valid JSON and no byte is dropped.
 */
static void jb_jstr(struct jb *b, const void *data, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *p = data;
	if (!jb_need(b, n * 6 + 2))
		return;
	char *o = b->p + b->len;
	*o++ = '"';
	for (size_t i = 0; i < n;) {
		uint8_t c = p[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			*o++ = (char)c;
			i++;
			continue;
		}
		size_t k = c >= 0x80 ? utf8_len(p + i, n - i) : 0;
		if (k > 0) {
			memcpy(o, p + i, k);
			o += k;
			i += k;
			continue;
		}
		*o++ = '\\';
		switch (c) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '\n': *o++ = 'n'; break;
		case '\t': *o++ = 't'; break;
		case '\r': *o++ = 'r'; break;
		default:
			memcpy(o, "u00", 3);
			o += 3;
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
		i++;
	}
	*o++ = '"';
	b->len = (size_t)(o - b->p);
}

/* Bytes as a JSON string of lower-case hex digits, two per byte. */
static void jb_hex(struct jb *b, const void *data, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *p = data;
	if (!jb_need(b, n * 2 + 2))
		return;
	char *o = b->p + b->len;
	*o++ = '"';
	for (size_t i = 0; i < n; i++) {
		*o++ = hex[p[i] >> 4];
		*o++ = hex[p[i] & 15];
	}
	*o++ = '"';
	b->len = (size_t)(o - b->p);
}

/* ------------------------------------------------------------------ */

/* A span whose begin was seen and whose end was not (yet). */
struct open_span {
	const struct rlog_schema *s;
	int64_t ns;        /* begin time */
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
	struct jb out;
	bool first;               /* no event written yet: no separator */
	struct jb args;           /* scratch: a span's args */
	int err;                  /* first write error, -errno */

	struct thread *th;        /* in order of first appearance */
	size_t nth, th_cap;
	struct rlog__imap th_map; /* pid << 32 | tid -> index in th */
	size_t last;              /* the previous event's thread */
	struct process *pr;
	size_t npr, pr_cap;
	struct rlog__imap pr_map; /* pid -> index in pr */
	struct rlog_value vals[RLOG_SCHEMA_MAX_FIELDS];
};


static int flush_out(struct chrome *c)
{
	if (c->out.oom)
		return -ENOMEM;
	if (c->err == 0 && c->out.len > 0) {
		c->err = rlog__write_all(c->fd, c->out.p, c->out.len, NULL);
		if (c->st)
			c->st->bytes_written += c->out.len;
	}
	c->out.len = 0;
	return c->err;
}

/* Ends an event (the caller wrote up to its last key) and writes the
 * output out if enough is pending. */
static int event_end(struct chrome *c)
{
	jb_lit(&c->out, "}");
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
		jb_lit(&c->out, "{");
	else
		jb_lit(&c->out, ",\n{");
	c->first = false;
}

/* {"name":NAME,"cat":CAT,"ph":"PH","ts":TS,"pid":P,"tid":T */
static void event_head(struct chrome *c, const char *name, size_t name_len, const char *cat,
		       const char *ph, int64_t ns, uint32_t pid, uint32_t tid)
{
	struct jb *b = &c->out;
	event_start(c);
	jb_lit(b, "\"name\":");
	jb_jstr(b, name, name_len);
	if (cat) {
		jb_lit(b, ",\"cat\":\"");
		jb_str(b, cat);
		jb_lit(b, "\"");
	}
	jb_lit(b, ",\"ph\":\"");
	jb_str(b, ph);
	jb_lit(b, "\",\"ts\":");
	jb_us(b, ns);
	jb_lit(b, ",\"pid\":");
	jb_u64(b, pid);
	jb_lit(b, ",\"tid\":");
	jb_u64(b, tid);
}

static struct thread *thread_of(struct chrome *c, uint32_t pid, uint32_t tid)
{
	if (c->last < c->nth && c->th[c->last].pid == pid && c->th[c->last].tid == tid)
		return &c->th[c->last];
	uint64_t key = (uint64_t)pid << 32 | tid;
	uint32_t i = rlog__imap_get(&c->th_map, key);
	if (i != UINT32_MAX) {
		c->last = i;
		return &c->th[i];
	}
	if (c->nth == c->th_cap) {
		size_t cap = c->th_cap ? c->th_cap * 2 : 16;
		struct thread *t = realloc(c->th, cap * sizeof(*t));
		if (!t)
			return NULL;
		c->th = t;
		c->th_cap = cap;
	}
	if (rlog__imap_put(&c->th_map, key, (uint32_t)c->nth) < 0)
		return NULL;
	c->last = c->nth;
	struct thread *t = &c->th[c->nth++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	return t;
}

static struct process *process_of(struct chrome *c, uint32_t pid)
{
	uint32_t i = rlog__imap_get(&c->pr_map, pid);
	if (i != UINT32_MAX)
		return &c->pr[i];
	if (c->npr == c->pr_cap) {
		size_t cap = c->pr_cap ? c->pr_cap * 2 : 16;
		struct process *p = realloc(c->pr, cap * sizeof(*p));
		if (!p)
			return NULL;
		c->pr = p;
		c->pr_cap = cap;
	}
	if (rlog__imap_put(&c->pr_map, pid, (uint32_t)c->npr) < 0)
		return NULL;
	struct process *p = &c->pr[c->npr++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
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
static void put_fields(struct jb *b, const struct rlog_schema *s, const struct rlog_value *v,
		       bool numbers_only)
{
	bool first = true;
	jb_lit(b, "{");
	for (unsigned i = 0; i < s->field_count; i++) {
		const struct rlog_field *f = &s->fields[i];
		if (numbers_only && (f->type == RLOG_FIELD_BYTES || f->type == RLOG_FIELD_STRING ||
				     (f->type == RLOG_FIELD_F64 && !isfinite(v[i].v.f))))
			continue;
		if (!first)
			jb_lit(b, ",");
		first = false;
		jb_lit(b, "\"");
		jb_str(b, f->name); /* a C identifier: nothing to escape */
		jb_lit(b, "\":");
		switch (f->type) {
		case RLOG_FIELD_U8: case RLOG_FIELD_U16: case RLOG_FIELD_U32: case RLOG_FIELD_U64:
			jb_u64(b, v[i].v.u);
			break;
		case RLOG_FIELD_I8: case RLOG_FIELD_I16: case RLOG_FIELD_I32: case RLOG_FIELD_I64:
			jb_i64(b, v[i].v.i);
			break;
		case RLOG_FIELD_F64:
			jb_f64(b, v[i].v.f);
			break;
		case RLOG_FIELD_BYTES:
			jb_hex(b, v[i].bytes, v[i].len);
			break;
		default: /* STRING */
			jb_jstr(b, v[i].bytes, v[i].len);
			break;
		}
	}
	jb_lit(b, "}");
}

static void cat_of(char *buf, const struct rlog_schema *s)
{
	char *e = buf + 4;
	*--e = '\0';
	char *p = fmt_u64(e, s->category);
	memmove(buf, p, (size_t)(e - p) + 1);
}

/* The name `ringlog dump` gives an event: the schema's or the ID's, with
 * "/flag" for a flagged record (except a span's that matches its schema:
 * its flag is begin or end). */
static size_t event_name(char *buf, size_t n, const struct rlog_event *ev,
			 const struct rlog_schema *s, bool matched)
{
	/* By hand: snprintf() was a tenth of the time of a conversion. */
	const char *known = s ? s->name : rlog__convert_id_name(ev->id);
	char tmp[8], *e = tmp + sizeof(tmp), *d;
	size_t k;
	if (known) {
		k = strnlen(known, n - 8);
		memcpy(buf, known, k);
	} else {
		d = fmt_u64(e, ev->id);
		k = (size_t)(e - d);
		memcpy(buf, d, k);
	}
	if (ev->flagged && !(matched && s->kind == RLOG_KIND_SPAN)) {
		d = fmt_u64(e, ev->flag);
		buf[k++] = '/';
		memcpy(buf + k, d, (size_t)(e - d));
		k += (size_t)(e - d);
	}
	return k;
}

/*
 * An event without a usable schema: its name (as `ringlog dump` gives it)
 * and its payload in hex; RAW_* payloads also decoded.  With s, the event
 * has a schema that its record does not match: the schema's name and
 * category, and "mismatch":true.
 */
static int put_raw(struct chrome *c, const struct rlog_event *ev, const struct rlog_schema *s)
{
	struct jb *b = &c->out;
	char name[300], cat[4];
	size_t n = event_name(name, sizeof(name), ev, s, false);
	if (c->st) {
		c->st->raw_events++;
		c->st->mismatched += s != NULL;
	}
	if (s)
		cat_of(cat, s);
	event_head(c, name, n, s ? cat : "raw", "i", ev->time_ns, ev->pid, ev->tid);
	jb_lit(b, ",\"s\":\"t\",\"args\":{");
	if (s)
		jb_lit(b, "\"mismatch\":true,");
	if (ev->flagged) {
		jb_lit(b, "\"flag\":");
		jb_u64(b, ev->flag);
		jb_lit(b, ",");
	}
	jb_lit(b, "\"payload\":");
	jb_hex(b, ev->payload, ev->length);
	const uint8_t *p = ev->payload;
	unsigned w = rlog__convert_raw_width(ev->id);
	if (ev->id == RLOG_ID_RAW_STRING) {
		jb_lit(b, ",\"value\":");
		jb_jstr(b, p, ev->length);
	} else if (w > 0 && ev->length % w == 0) {
		jb_lit(b, ",\"values\":[");
		for (size_t i = 0; i < ev->length; i += w) {
			if (i > 0)
				jb_lit(b, ",");
			switch (ev->id) {
			case RLOG_ID_RAW_U8: jb_u64(b, p[i]); break;
			case RLOG_ID_RAW_I8: jb_i64(b, (int8_t)p[i]); break;
			case RLOG_ID_RAW_U16: jb_u64(b, (uint16_t)(p[i] | p[i + 1] << 8)); break;
			case RLOG_ID_RAW_I16: jb_i64(b, (int16_t)(uint16_t)(p[i] | p[i + 1] << 8)); break;
			case RLOG_ID_RAW_U32: jb_u64(b, rlog__get32(p + i)); break;
			case RLOG_ID_RAW_I32: jb_i64(b, (int32_t)rlog__get32(p + i)); break;
			case RLOG_ID_RAW_U64: jb_u64(b, rlog__get64(p + i)); break;
			case RLOG_ID_RAW_I64: jb_i64(b, (int64_t)rlog__get64(p + i)); break;
			default: {
				double d;
				memcpy(&d, p + i, 8);
				jb_f64(b, d);
			}
			}
		}
		jb_lit(b, "]");
	}
	jb_lit(b, "}");
	return event_end(c);
}

static int put_loss(struct chrome *c, const struct rlog_event *ev)
{
	const uint8_t *p = ev->payload;
	uint64_t events = rlog__get64(p), bytes = rlog__get64(p + 8);
	uint32_t cause = rlog__get32(p + 16);
	const char *cn = rlog__convert_cause_name(cause);
	char cbuf[24], name[48];
	if (!cn) {
		snprintf(cbuf, sizeof(cbuf), "unknown(%" PRIu32 ")", cause);
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
	struct jb *b = &c->out;
	if (ev->pid != 0)
		jb_lit(b, ",\"s\":\"p\",\"args\":{\"events\":");
	else
		jb_lit(b, ",\"s\":\"g\",\"args\":{\"events\":");
	jb_u64(b, events);
	jb_lit(b, ",\"bytes\":");
	jb_u64(b, bytes);
	jb_lit(b, ",\"cause\":\"");
	jb_str(b, cn);
	jb_lit(b, "\"}");
	return event_end(c);
}

static int span_begin(struct chrome *c, const struct rlog_schema *s, const struct rlog_event *ev)
{
	struct thread *t = thread_of(c, ev->pid, ev->tid);
	if (!t)
		return -ENOMEM;
	if (t->depth == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 8;
		struct open_span *st = realloc(t->stack, cap * sizeof(*st));
		if (!st)
			return -ENOMEM;
		t->stack = st;
		t->cap = cap;
	}
	struct open_span *o = &t->stack[t->depth];
	memset(o, 0, sizeof(*o));
	o->s = s;
	o->ns = ev->time_ns;
	char cat[4];
	cat_of(cat, s);
	if (c->flags & RLOG__CHROME_SPANS_BE) {
		event_head(c, s->name, strlen(s->name), cat, "B", ev->time_ns, ev->pid, ev->tid);
		jb_lit(&c->out, ",\"args\":");
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
		jb_lit(&c->out, ",\"s\":\"t\",\"args\":{\"span\":\"end without begin\"}");
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
	event_head(c, o.s->name, strlen(o.s->name), cat, "X", o.ns, ev->pid, ev->tid);
	jb_lit(&c->out, ",\"dur\":");
	jb_us(&c->out, ev->time_ns - o.ns);
	jb_lit(&c->out, ",\"args\":");
	jb_put(&c->out, o.args, o.args_len);
	free(o.args);
	return event_end(c);
}

static int put_schema_event(struct chrome *c, const struct rlog_schema *s,
			    const struct rlog_event *ev)
{
	char cat[4], name[300];
	size_t n = event_name(name, sizeof(name), ev, s, true);
	cat_of(cat, s);
	if (c->st)
		c->st->schema_events++;
	if (s->kind == RLOG_KIND_COUNTER) {
		event_head(c, name, n, cat, "C", ev->time_ns, ev->pid, ev->tid);
		jb_lit(&c->out, ",\"args\":");
		put_fields(&c->out, s, c->vals, true);
		return event_end(c);
	}
	event_head(c, name, n, cat, "i", ev->time_ns, ev->pid, ev->tid);
	jb_lit(&c->out, ",\"s\":\"t\",\"args\":");
	put_fields(&c->out, s, c->vals, false);
	return event_end(c);
}

static int convert_event(struct chrome *c, const struct rlog_event *ev)
{
	/* Every thread, for its name at the end. */
	if (!thread_of(c, ev->pid, ev->tid))
		return -ENOMEM;
	if (rlog__convert_is(ev, RLOG_ID_DATA_LOSS) && ev->length >= sizeof(struct rlog_data_loss))
		return put_loss(c, ev);
	if (rlog__convert_is(ev, RLOG_ID_LOG_MARKER) || rlog__convert_is(ev, RLOG_ID_EVENT_SCHEMA)) {
		if (c->st)
			c->st->skipped++;
		return 0;
	}
	if (rlog__convert_is(ev, RLOG_ID_THREAD_NAME)) {
		struct thread *t = thread_of(c, ev->pid, ev->tid);
		if (c->st)
			c->st->skipped++;
		return t ? set_name(&t->name, &t->name_len, ev) : -ENOMEM;
	}
	if (rlog__convert_is(ev, RLOG_ID_PROCESS_NAME)) {
		struct process *p = process_of(c, ev->pid);
		if (c->st)
			c->st->skipped++;
		return p ? set_name(&p->name, &p->name_len, ev) : -ENOMEM;
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

/* Spans never ended: "B" events (the viewers draw them to the end of the
 * trace); in B/E mode their "B" is already out. */
static int put_open_spans(struct chrome *c)
{
	for (size_t i = 0; i < c->nth; i++) {
		struct thread *t = &c->th[i];
		for (size_t k = 0; k < t->depth; k++) {
			struct open_span *o = &t->stack[k];
			if (c->st)
				c->st->unmatched_begins++;
			if (c->flags & RLOG__CHROME_SPANS_BE)
				continue;
			char cat[4];
			cat_of(cat, o->s);
			event_head(c, o->s->name, strlen(o->s->name), cat, "B", o->ns, t->pid, t->tid);
			jb_lit(&c->out, ",\"args\":");
			jb_put(&c->out, o->args, o->args_len);
			int rc = event_end(c);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

static int put_name_meta(struct chrome *c, const char *what, uint32_t pid, const uint32_t *tid,
			 const char *name, size_t len)
{
	struct jb *b = &c->out;
	event_start(c);
	jb_lit(b, "\"name\":\"");
	jb_str(b, what);
	jb_lit(b, "\",\"ph\":\"M\",\"pid\":");
	jb_u64(b, pid);
	if (tid) {
		jb_lit(b, ",\"tid\":");
		jb_u64(b, *tid);
	}
	jb_lit(b, ",\"args\":{\"name\":");
	jb_jstr(b, name, len);
	jb_lit(b, "}");
	return event_end(c);
}

/* Process and thread names: the reader's (the latest anywhere in the
 * file), else the last record seen here. */
static int put_names(struct chrome *c)
{
	int rc = 0;
	for (size_t i = 0; i < c->nth && rc == 0; i++) {
		struct thread *t = &c->th[i];
		if (rlog__imap_get(&c->pr_map, t->pid) == UINT32_MAX && !process_of(c, t->pid))
			return -ENOMEM;
	}
	for (size_t i = 0; i < c->npr && rc == 0; i++) {
		struct process *p = &c->pr[i];
		const char *n = rlog_reader_process_name(c->r, p->pid);
		if (n)
			rc = put_name_meta(c, "process_name", p->pid, NULL, n, strlen(n));
		else if (p->name)
			rc = put_name_meta(c, "process_name", p->pid, NULL, p->name, p->name_len);
	}
	for (size_t i = 0; i < c->nth && rc == 0; i++) {
		struct thread *t = &c->th[i];
		const char *n = rlog_reader_thread_name(c->r, t->pid, t->tid);
		if (n)
			rc = put_name_meta(c, "thread_name", t->pid, &t->tid, n, strlen(n));
		else if (t->name)
			rc = put_name_meta(c, "thread_name", t->pid, &t->tid, t->name, t->name_len);
	}
	return rc;
}

static void put_prologue(struct chrome *c)
{
	const struct rlog_reader_info *info = rlog_reader_info(c->r);
	struct jb *b = &c->out;
	char tbuf[64];
	time_t secs = (time_t)(info->sync_realtime_ns / 1000000000u);
	struct tm tm;

	jb_lit(b, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"ringlog\",\"session\":");
	jb_jstr(b, info->session_name, strlen(info->session_name));
	jb_lit(b, ",\"tick_source\":\"");
	jb_str(b, info->tick_source == RLOG_TICK_TSC ? "tsc"
		  : info->tick_source == RLOG_TICK_MONOTONIC ? "monotonic" : "unknown");
	jb_lit(b, "\",\"tick_freq_hz\":");
	jb_u64(b, info->tick_freq_hz);
	jb_lit(b, ",\"start_realtime_ns\":");
	jb_u64(b, info->sync_realtime_ns);
	if (gmtime_r(&secs, &tm) && strftime(tbuf, sizeof(tbuf), "%Y-%m-%dT%H:%M:%S", &tm) > 0) {
		jb_lit(b, ",\"start\":\"");
		jb_str(b, tbuf);
		snprintf(tbuf, sizeof(tbuf), ".%09" PRIu64 "Z\"", info->sync_realtime_ns % 1000000000u);
		jb_str(b, tbuf);
	}
	/* ts counts from the session start (ringlog dump's time_ns column). */
	jb_lit(b, ",\"ts_origin\":\"session start\"},\"traceEvents\":[\n");
	c->first = true;
}

int rlog__convert_chrome(struct rlog_reader *r, int fd, unsigned flags,
			 struct rlog__convert_stats *st)
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
	c.last = SIZE_MAX;
	if (st)
		memset(st, 0, sizeof(*st));
	if (!jb_need(&c.out, OUT_FLUSH + 65536)) {
		rc = -ENOMEM;
		goto out;
	}
	put_prologue(&c);
	while ((rc = rlog_reader_next(r, &ev)) > 0) {
		if (st)
			st->events_read++;
		rc = convert_event(&c, &ev);
		if (rc < 0)
			goto out;
	}
	if (rc < 0)
		goto out;
	rc = put_open_spans(&c);
	if (rc == 0)
		rc = put_names(&c);
	if (rc == 0) {
		jb_lit(&c.out, "\n]}\n");
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
	rlog__imap_free(&c.th_map);
	rlog__imap_free(&c.pr_map);
	free(c.out.p);
	free(c.args.p);
	return rc;
}
