/*
 * dump_text.c - the text format of `ringlog dump` (docs/DUMP.md, "Text
 * format"):
 *
 *   # ringlog dump of FILE: session NAME, tick source tsc at F Hz, started 2026-11-22T10:00:00.123456789Z
 *   #      time_ns     pid     tid id           payload
 *                0    4242    4242 LOG_MARKER   tick_hz=... source=tsc realtime=... session=... buffers=8x16384
 *             1500    4242    4243 1025/3       01000000 02000000 ab
 *             2000    4242    4243 http.request status=200 bytes=5120 path="/index"
 *             2500    4242    4243 db.query     begin rows=5
 *             3000    4242       0 COUNTER      proc.minflt delta=12 value=3456
 *
 * Lines are built by hand in the output buffer: printf's format parsing
 * was most of the cost of a dump.
 */
#include <inttypes.h>
#include <string.h>

#include "dump.h"
#include "json.h"
#include "names.h"
#include "schema.h"
#include "term.h"

#define ID_COLUMN 12

/* Wall-clock ns of an event (0 if before 1970, clamped at 2^64 - 1). */
static uint64_t wall_ns(const struct dump *d, const struct rlog_event *ev)
{
	int64_t t = ev->time_ns;
	uint64_t base = d->info->sync_realtime_ns;
	if (t < 0)
		return (uint64_t)-t > base ? 0 : base - (uint64_t)-t;
	return base + (uint64_t)t >= base ? base + (uint64_t)t : UINT64_MAX;
}

void dump_wall(struct dump *d, const struct rlog_event *ev, char *buf)
{
	uint64_t ns = wall_ns(d, ev);
	uint64_t sec = ns / 1000000000u;
	/* From a per-second cache: gmtime and strftime cost more than the
	 * rest of a line. */
	if (sec != d->wall_sec || d->wall_prefix[0] == '\0') {
		char full[40];
		fmt_rfc3339(full, sizeof(full), sec * 1000000000u);
		if (strlen(full) != 30) { /* out of strftime's range */
			fmt_rfc3339(buf, 32, ns);
			return;
		}
		memcpy(d->wall_prefix, full, 19); /* 2026-11-22T10:00:00 */
		d->wall_prefix[19] = '\0';
		d->wall_sec = sec;
	}
	memcpy(buf, d->wall_prefix, 19);
	buf[19] = '.';
	uint64_t frac = ns % 1000000000u;
	for (int i = 28; i >= 20; i--) {
		buf[i] = (char)('0' + frac % 10);
		frac /= 10;
	}
	buf[29] = 'Z';
	buf[30] = '\0';
}

void dump_text_header(struct dump *d)
{
	char src[32], started[64];
	const struct rlog_reader_info *info = d->info;
	fmt_rfc3339(started, sizeof(started), info->sync_realtime_ns);
	char name[4 * 64 + 1];
	rlog__buf_printf(&d->out, "# ringlog %s of %s: session %s, tick source %s at %" PRIu64
			 " Hz, started %s\n", d->what, d->path,
			 rlog__term_cstr(info->session_name, name, sizeof(name)),
			 fmt_tick_source(info->tick_source, src, sizeof(src)), info->tick_freq_hz,
			 started);
	if (d->wall)
		rlog__buf_printf(&d->out, "#%29s     pid     tid id           payload\n", "wall_time");
	else
		rlog__buf_printf(&d->out, "#%13s     pid     tid id           payload\n", "time_ns");
}

/* A string value: quoted and C-escaped. */
static void put_quoted(struct rlog__buf *b, const void *p, size_t n)
{
	rlog__buf_char(b, '"');
	rlog__term_escape(b, p, n, true);
	rlog__buf_char(b, '"');
}

/* A field's value: decimal, a double that reads back the same, bytes in
 * hex, a string quoted. */
static void put_value(struct rlog__buf *b, const struct rlog_value *v)
{
	if (rlog__value_integer(b, v))
		return;
	switch (v->field->type) {
	case RLOG_FIELD_F64:
		rlog__buf_double(b, v->v.f);
		break;
	case RLOG_FIELD_BYTES:
		rlog__buf_hex(b, v->bytes, v->len, false);
		break;
	default: /* STRING */
		put_quoted(b, v->bytes, v->len);
		break;
	}
}

/* Marks the time column that starts at byte start as inherited (an
 * untimed record): a '~' right before the first character, in the padding
 * if there is any. */
static void mark_untimed(struct rlog__buf *b, size_t start)
{
	size_t i = start;
	while (i < b->len && b->p[i] == ' ')
		i++;
	if (i > start) {
		b->p[i - 1] = '~';
		return;
	}
	if (!rlog__buf_need(b, 1))
		return;
	memmove(b->p + start + 1, b->p + start, b->len - start);
	b->p[start] = '~';
	b->len++;
}

/* The time, pid and tid columns. */
static void put_prefix(struct dump *d, const struct rlog_event *ev)
{
	struct rlog__buf *b = &d->out;
	size_t start = b->len;
	if (d->wall) {
		char w[32];
		dump_wall(d, ev, w);
		size_t k = strlen(w);
		rlog__buf_pad(b, start, k < 30 ? 30 - k : 0);
		rlog__buf_put(b, w, k);
	} else {
		bool neg = ev->time_ns < 0;
		rlog__buf_num(b, neg ? 0u - (uint64_t)ev->time_ns : (uint64_t)ev->time_ns, neg, 14);
	}
	if (!ev->has_time)
		mark_untimed(b, start);
	if (d->host) {
		/* A merge of several hosts: the host column (names are
		 * file-name characters only, multi.c). */
		rlog__buf_char(b, ' ');
		size_t hs = b->len, k = strlen(d->host);
		rlog__buf_put(b, d->host, k);
		rlog__buf_pad(b, hs, ID_COLUMN);
	}
	rlog__buf_char(b, ' ');
	rlog__buf_num(b, ev->pid, false, 7);
	rlog__buf_char(b, ' ');
	rlog__buf_num(b, ev->tid, false, 7);
	rlog__buf_char(b, ' ');
}

/* The id column: name (or number), "/flag" if with_flag, padded to 12
 * and a space, unless nothing follows (pad false). */
static void put_idcol(struct rlog__buf *b, const char *name, const struct rlog_event *ev,
		      bool with_flag, bool pad)
{
	size_t start = b->len;
	if (name)
		rlog__term_escape(b, name, strlen(name), false);
	else
		rlog__buf_u64(b, ev->id);
	if (with_flag) {
		rlog__buf_char(b, '/');
		rlog__buf_u64(b, ev->flag);
	}
	if (pad) {
		rlog__buf_pad(b, start, ID_COLUMN);
		rlog__buf_char(b, ' ');
	}
}

/* A payload in hex, grouped by 4 bytes; "-" if empty. */
static void put_hex(struct rlog__buf *b, const struct rlog_event *ev)
{
	if (ev->length == 0)
		rlog__buf_char(b, '-');
	else
		rlog__buf_hex(b, ev->payload, ev->length, true);
}

/* RAW_* as space-separated values, RAW_STRING as a string; false if it is
 * no RAW type or the length does not fit its type (the caller prints hex). */
static bool put_raw(struct rlog__buf *b, const struct rlog_event *ev)
{
	if (ev->id == RLOG_ID_RAW_STRING) {
		put_quoted(b, ev->payload, ev->length);
		return true;
	}
	int n = rlog_event_raw_count(ev);
	if (n < 0)
		return false;
	struct rlog_value v;
	for (int i = 0; i < n && rlog_event_raw_value(ev, (unsigned)i, &v) == 1; i++) {
		if (i > 0)
			rlog__buf_char(b, ' ');
		put_value(b, &v);
	}
	return true;
}

/* An EVENT_SCHEMA payload: "id=1025 name=http.request kind=event
 * category=0 fields=status:u16,path:string,digest:bytes[16]". */
static void put_schema_record(struct rlog__buf *b, const struct rlog_event *ev)
{
	static struct rlog__schema_buf sb; /* 9 KiB: not on the stack */
	if (rlog__schema_decode(ev->payload, ev->length, &sb) < 0) {
		rlog__buf_lit(b, "!malformed ");
		rlog__buf_hex(b, ev->payload, ev->length, true);
		return;
	}
	rlog__buf_printf(b, "id=%u name=", (unsigned)sb.s.id);
	rlog__term_escape(b, sb.s.name, strlen(sb.s.name), false);
	rlog__buf_printf(b, " kind=%s category=%u fields=", fmt_kind(sb.s.kind),
			 (unsigned)sb.s.category);
	if (sb.s.field_count == 0)
		rlog__buf_char(b, '-');
	for (unsigned i = 0; i < sb.s.field_count; i++) {
		const struct rlog_field *fl = &sb.s.fields[i];
		if (i)
			rlog__buf_char(b, ',');
		rlog__term_escape(b, fl->name, strlen(fl->name), false);
		rlog__buf_printf(b, ":%s", fmt_field_type(fl->type));
		if (fl->type == RLOG_FIELD_BYTES)
			rlog__buf_printf(b, "[%u]", (unsigned)fl->count);
	}
}

/* A COUNTER_NAME payload: "id=3 name=proc.minflt source=proc unit=count",
 * and " user-only" for a counter of user space only. */
static void put_counter_name(struct rlog__buf *b, const struct rlog_event *ev)
{
	struct rlog_counter_desc c;
	if (rlog_event_counter_name(ev, &c) < 0) {
		rlog__buf_lit(b, "!malformed ");
		rlog__buf_hex(b, ev->payload, ev->length, true);
		return;
	}
	const char *src = rlog__counter_source_name(c.source), *unit = rlog__counter_unit_name(c.unit);
	rlog__buf_lit(b, "id=");
	rlog__buf_u64(b, c.counter_id);
	rlog__buf_lit(b, " name=");
	rlog__term_escape(b, c.name, c.name_len, false);
	rlog__buf_printf(b, " source=%s%s unit=%s%s", src ? src : "", src ? "" : "?",
			 unit ? unit : "", unit ? "" : "?");
	if (c.info & RLOG_COUNTER_INFO_USER)
		rlog__buf_lit(b, " user-only");
}

/* The payload column of an event without a schema. */
static void put_payload(struct rlog__buf *b, const struct rlog_event *ev)
{
	char a[32], w[64];
	struct rlog_marker m;
	struct rlog_loss l;

	if (ev->length == 0) {
		rlog__buf_char(b, '-');
		return;
	}
	if (put_raw(b, ev))
		return;
	switch (rlog_record_kind(ev->id, ev->flagged)) {
	case RLOG_RECORD_LOSS:
		if (rlog_event_loss(ev, &l) < 0)
			break;
		rlog__buf_lit(b, "events=");
		rlog__buf_u64(b, l.events);
		rlog__buf_lit(b, " bytes=");
		rlog__buf_u64(b, l.bytes);
		rlog__buf_lit(b, " cause=");
		rlog__buf_str(b, fmt_loss_cause(l.cause, a, sizeof(a)));
		if (l.fields & RLOG_LOSS_HAS_BLOCKS) {
			rlog__buf_lit(b, " blocks=");
			rlog__buf_u64(b, l.blocks);
		}
		return;
	case RLOG_RECORD_MARKER:
		if (rlog_event_marker(ev, &m) < 0)
			break;
		fmt_rfc3339(w, sizeof(w), m.sync_realtime_ns);
		rlog__buf_printf(b, "tick_hz=%" PRIu64 " source=%s realtime=%s session=",
				 m.tick_freq_hz, fmt_tick_source(m.tick_source, a, sizeof(a)), w);
		rlog__term_escape(b, m.session_name, strlen(m.session_name), false);
		rlog__buf_printf(b, " buffers=%" PRIu32 "x%" PRIu32, m.buffer_count, m.buffer_size);
		return;
	case RLOG_RECORD_METADATA:
		if (ev->id == RLOG_ID_EVENT_SCHEMA)
			put_schema_record(b, ev);
		else if (ev->id == RLOG_ID_COUNTER_NAME)
			put_counter_name(b, ev);
		else
			put_quoted(b, ev->payload, ev->length);
		return;
	default:
		break;
	}
	put_hex(b, ev);
}

/* A COUNTER record: "proc.minflt delta=12 value=3456", "value=?" when the
 * value is not known, " reset", " gap" (records missing before it); the
 * counter's number, "#3", when it has no name. */
static void put_counter(struct dump *d, const struct rlog_event *ev)
{
	struct rlog__buf *b = &d->out;
	struct rlog_counter c;
	if (rlog_event_counter(d->r, ev, &c) < 0) {
		put_hex(b, ev);
		return;
	}
	if (c.name) {
		/* Printable ASCII (docs/FORMAT.md), escaped all the same. */
		rlog__term_escape(b, c.name, strlen(c.name), false);
	} else {
		rlog__buf_char(b, '#');
		rlog__buf_u64(b, c.counter_id);
	}
	rlog__buf_lit(b, " delta=");
	rlog__buf_u64(b, c.delta);
	rlog__buf_lit(b, " value=");
	if (c.value_known)
		rlog__buf_u64(b, c.value);
	else
		rlog__buf_char(b, '?');
	if (c.flags & RLOG_COUNTER_FLAG_RESET)
		rlog__buf_lit(b, " reset");
	if (c.gap)
		rlog__buf_lit(b, " gap");
}

/*
 * An event with a schema: "name field=value ...", spans "name begin
 * field=value ..." and "name end", a payload that does not match
 * "name !mismatch <hex>".
 */
static void put_schema_event(struct dump *d, const struct rlog_event *ev,
			     const struct rlog_schema *s)
{
	struct rlog__buf *b = &d->out;
	int nf = rlog_event_field_count(s, ev);

	if (nf < 0) {
		put_idcol(b, s->name, ev, ev->flagged, true);
		rlog__buf_lit(b, "!mismatch ");
		put_hex(b, ev);
		return;
	}
	bool span = s->kind == RLOG_KIND_SPAN;
	put_idcol(b, s->name, ev, ev->flagged && !span, span || nf > 0);
	if (span)
		rlog__buf_str(b, ev->flag == RLOG_SPAN_END ? "end" : "begin");
	size_t off = 0;
	struct rlog_value v;
	for (int i = 0; i < nf && rlog_event_field(s, ev, (unsigned)i, &off, &v) == 1; i++) {
		/* The id column ends with a space unless a span word follows it. */
		if (i > 0 || span)
			rlog__buf_char(b, ' ');
		rlog__term_escape(b, v.field->name, strlen(v.field->name), false);
		rlog__buf_char(b, '=');
		put_value(b, &v);
	}
}

void dump_text_event(struct dump *d, const struct rlog_event *ev, const struct rlog_schema *s)
{
	put_prefix(d, ev);
	if (s) {
		put_schema_event(d, ev, s);
	} else if (!ev->flagged && ev->id == RLOG_ID_COUNTER) {
		put_idcol(&d->out, "COUNTER", ev, false, true);
		put_counter(d, ev);
	} else {
		put_idcol(&d->out, dump_event_name(ev, NULL), ev, ev->flagged, true);
		put_payload(&d->out, ev);
		int64_t first, last;
		if (rlog_record_kind(ev->id, ev->flagged) == RLOG_RECORD_LOSS &&
		    dump_loss_range(d, ev, &first, &last))
			rlog__buf_printf(&d->out, " first_ns=%" PRId64 " last_ns=%" PRId64, first,
					 last);
	}
	rlog__buf_char(&d->out, '\n');
}
