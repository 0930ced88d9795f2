/*
 * dump_json.c - `ringlog dump --format json`: one JSON object per event
 * (docs/DUMP.md, "JSON Lines"), written with the one JSON writer of
 * src/common/json.h.
 *
 *   {"time_ns":100,"pid":4242,"tid":4243,"id":1025,"name":"http.request","kind":"event","fields":{"status":200}}
 *   {"time_ns":1700,"pid":4242,"tid":4243,"id":2,"type":"data_loss","events":5,"bytes":80,"cause":"no_buffer"}
 *   {"time_ns":3000,"pid":4242,"tid":0,"id":32,"type":"counter","counter":3,"name":"proc.minflt","delta":12,"value":3456}
 */
#include <inttypes.h>
#include <string.h>

#include "dump.h"
#include "json.h"
#include "names.h"
#include "schema.h"

static void payload_hex(struct rlog__buf *b, const struct rlog_event *ev)
{
	rlog__buf_lit(b, ",\"payload_hex\":");
	rlog__json_hex(b, ev->payload, ev->length);
}

/* The fields of an event that matches its schema s (nf of them), as the
 * members of a JSON object. */
static void put_fields(struct rlog__buf *b, const struct rlog_schema *s,
		       const struct rlog_event *ev, int nf)
{
	size_t off = 0;
	struct rlog_value v;
	for (int i = 0; i < nf && rlog_event_field(s, ev, (unsigned)i, &off, &v) == 1; i++) {
		if (i > 0)
			rlog__buf_char(b, ',');
		rlog__buf_char(b, '"');
		rlog__buf_str(b, v.field->name); /* a C identifier: nothing to escape */
		rlog__buf_lit(b, "\":");
		rlog__json_value(b, &v);
	}
}

/* JSON "kind" of a schema'd event that matches. */
static const char *event_kind(const struct rlog_schema *s, const struct rlog_event *ev)
{
	switch (s->kind) {
	case RLOG_KIND_SPAN: return ev->flag == RLOG_SPAN_END ? "span_end" : "span_begin";
	case RLOG_KIND_COUNTER: return "counter";
	default: return "event";
	}
}

/* RAW_* as "values":[...] or "value":"..."; false if the length does not
 * fit the type. */
static bool put_raw(struct rlog__buf *b, const struct rlog_event *ev)
{
	if (ev->id == RLOG_ID_RAW_STRING) {
		rlog__buf_lit(b, ",\"value\":");
		rlog__json_str(b, ev->payload, ev->length);
		return true;
	}
	int n = rlog_event_raw_count(ev);
	if (n < 0)
		return false;
	struct rlog_value v;
	rlog__buf_lit(b, ",\"values\":[");
	for (int i = 0; i < n && rlog_event_raw_value(ev, (unsigned)i, &v) == 1; i++) {
		if (i > 0)
			rlog__buf_char(b, ',');
		rlog__json_value(b, &v);
	}
	rlog__buf_char(b, ']');
	return true;
}

static void put_schema_record(struct rlog__buf *b, const struct rlog_event *ev)
{
	static struct rlog__schema_buf sb; /* 9 KiB: not on the stack */
	rlog__buf_lit(b, ",\"type\":\"event_schema\"");
	if (rlog__schema_decode(ev->payload, ev->length, &sb) < 0) {
		rlog__buf_lit(b, ",\"malformed\":true");
		payload_hex(b, ev);
		return;
	}
	rlog__buf_printf(b, ",\"schema\":{\"id\":%u,\"name\":", (unsigned)sb.s.id);
	rlog__json_cstr(b, sb.s.name);
	rlog__buf_printf(b, ",\"kind\":\"%s\",\"category\":%u,\"fields\":[", fmt_kind(sb.s.kind),
			 (unsigned)sb.s.category);
	for (unsigned i = 0; i < sb.s.field_count; i++) {
		const struct rlog_field *fl = &sb.s.fields[i];
		rlog__buf_printf(b, "%s{\"name\":\"%s\",\"type\":\"%s\"", i ? "," : "", fl->name,
				 fmt_field_type(fl->type));
		if (fl->type == RLOG_FIELD_BYTES)
			rlog__buf_printf(b, ",\"count\":%u", (unsigned)fl->count);
		rlog__buf_char(b, '}');
	}
	rlog__buf_lit(b, "]}");
}

/* "source" and "unit" members (skipped when not known). */
static void put_source_unit(struct rlog__buf *b, uint8_t source, uint8_t unit)
{
	const char *src = rlog__counter_source_name(source), *u = rlog__counter_unit_name(unit);
	if (src)
		rlog__buf_printf(b, ",\"source\":\"%s\"", src);
	if (u)
		rlog__buf_printf(b, ",\"unit\":\"%s\"", u);
}

static void put_counter_name(struct rlog__buf *b, const struct rlog_event *ev)
{
	struct rlog_counter_desc c;
	rlog__buf_lit(b, ",\"type\":\"counter_name\"");
	if (rlog_event_counter_name(ev, &c) < 0) {
		rlog__buf_lit(b, ",\"malformed\":true");
		payload_hex(b, ev);
		return;
	}
	rlog__buf_lit(b, ",\"counter\":");
	rlog__buf_u64(b, c.counter_id);
	rlog__buf_lit(b, ",\"name\":");
	rlog__json_str(b, c.name, c.name_len);
	put_source_unit(b, c.source, c.unit);
	if (c.info & RLOG_COUNTER_INFO_USER)
		rlog__buf_lit(b, ",\"user_only\":true");
}

/* A COUNTER record: its counter, name, delta and value (null when not
 * known), "reset" and "gap" when true. */
static void put_counter(struct dump *d, const struct rlog_event *ev)
{
	struct rlog__buf *b = &d->out;
	struct rlog_counter c;
	if (rlog_event_counter(d->r, ev, &c) < 0) {
		payload_hex(b, ev);
		return;
	}
	rlog__buf_lit(b, ",\"type\":\"counter\",\"counter\":");
	rlog__buf_u64(b, c.counter_id);
	if (c.name) {
		rlog__buf_lit(b, ",\"name\":");
		rlog__json_cstr(b, c.name);
		put_source_unit(b, c.source, c.unit);
	}
	rlog__buf_lit(b, ",\"delta\":");
	rlog__buf_u64(b, c.delta);
	rlog__buf_lit(b, ",\"value\":");
	if (c.value_known)
		rlog__buf_u64(b, c.value);
	else
		rlog__buf_lit(b, "null");
	if (c.flags & RLOG_COUNTER_FLAG_RESET)
		rlog__buf_lit(b, ",\"reset\":true");
	if (c.gap)
		rlog__buf_lit(b, ",\"gap\":true");
}

/* The rest of a JSON line for an event without a schema. */
static void put_plain(struct rlog__buf *b, const struct rlog_event *ev)
{
	char a[32], w[64];
	struct rlog_marker m;
	struct rlog_loss l;
	uint64_t ticks;

	if (ev->id >= RLOG_ID_RAW_U8 && ev->id <= RLOG_ID_RAW_STRING) {
		rlog__buf_printf(b, ",\"name\":\"%s\"", rlog__id_name(ev->id));
		if (!put_raw(b, ev))
			payload_hex(b, ev);
		return;
	}
	switch (rlog_record_kind(ev->id, ev->flagged)) {
	case RLOG_RECORD_LOSS:
		if (rlog_event_loss(ev, &l) < 0)
			break;
		rlog__buf_lit(b, ",\"type\":\"data_loss\",\"events\":");
		rlog__buf_u64(b, l.events);
		rlog__buf_lit(b, ",\"bytes\":");
		rlog__buf_u64(b, l.bytes);
		rlog__buf_printf(b, ",\"cause\":\"%s\"", fmt_loss_cause(l.cause, a, sizeof(a)));
		if (l.fields & RLOG_LOSS_HAS_BLOCKS) {
			rlog__buf_lit(b, ",\"blocks\":");
			rlog__buf_u64(b, l.blocks);
		}
		return;
	case RLOG_RECORD_MARKER:
		if (rlog_event_marker(ev, &m) < 0)
			break;
		fmt_rfc3339(w, sizeof(w), m.sync_realtime_ns);
		rlog__buf_printf(b, ",\"type\":\"log_marker\",\"tick_hz\":%" PRIu64 ",\"source\":\"%s\","
				 "\"realtime\":\"%s\",\"session\":", m.tick_freq_hz,
				 fmt_tick_source(m.tick_source, a, sizeof(a)), w);
		rlog__json_cstr(b, m.session_name);
		rlog__buf_printf(b, ",\"buffer_size\":%" PRIu32 ",\"buffer_count\":%" PRIu32,
				 m.buffer_size, m.buffer_count);
		return;
	case RLOG_RECORD_TIME_SYNC:
		if (rlog_event_time_sync(ev, &ticks) < 0)
			break;
		rlog__buf_lit(b, ",\"type\":\"time_sync\",\"ticks\":");
		rlog__buf_u64(b, ticks);
		return;
	case RLOG_RECORD_METADATA:
		if (ev->id == RLOG_ID_EVENT_SCHEMA) {
			put_schema_record(b, ev);
			return;
		}
		if (ev->id == RLOG_ID_COUNTER_NAME) {
			put_counter_name(b, ev);
			return;
		}
		rlog__buf_printf(b, ",\"type\":\"%s\",\"value\":",
				 ev->id == RLOG_ID_THREAD_NAME ? "thread_name" : "process_name");
		rlog__json_str(b, ev->payload, ev->length);
		return;
	default:
		break;
	}
	payload_hex(b, ev);
}

void dump_json_event(struct dump *d, const struct rlog_event *ev, const struct rlog_schema *s)
{
	struct rlog__buf *b = &d->out;

	rlog__buf_lit(b, "{\"time_ns\":");
	rlog__buf_i64(b, ev->time_ns);
	if (!ev->has_time)
		rlog__buf_lit(b, ",\"untimed\":true"); /* the thread's previous record's time */
	if (d->wall) {
		char w[32];
		dump_wall(d, ev, w);
		rlog__buf_lit(b, ",\"wall\":\"");
		rlog__buf_str(b, w);
		rlog__buf_char(b, '"');
	}
	if (d->host) { /* a merge of several hosts (names: file-name characters) */
		rlog__buf_lit(b, ",\"host\":\"");
		rlog__buf_str(b, d->host);
		rlog__buf_char(b, '"');
	}
	rlog__buf_lit(b, ",\"pid\":");
	rlog__buf_u64(b, ev->pid);
	rlog__buf_lit(b, ",\"tid\":");
	rlog__buf_u64(b, ev->tid);
	rlog__buf_lit(b, ",\"id\":");
	rlog__buf_u64(b, ev->id);
	if (ev->flagged) {
		rlog__buf_lit(b, ",\"flag\":");
		rlog__buf_u64(b, ev->flag);
	}
	if (s) {
		int nf = rlog_event_field_count(s, ev);
		rlog__buf_lit(b, ",\"name\":\"");
		rlog__buf_str(b, s->name); /* printable ASCII without '"' or '\\' */
		rlog__buf_char(b, '"');
		if (nf < 0) {
			rlog__buf_lit(b, ",\"schema_mismatch\":true");
			payload_hex(b, ev);
		} else {
			rlog__buf_printf(b, ",\"kind\":\"%s\",\"fields\":{", event_kind(s, ev));
			put_fields(b, s, ev, nf);
			rlog__buf_char(b, '}');
		}
	} else if (!ev->flagged && ev->id == RLOG_ID_COUNTER) {
		put_counter(d, ev);
	} else {
		put_plain(b, ev);
		int64_t first, last;
		if (rlog_record_kind(ev->id, ev->flagged) == RLOG_RECORD_LOSS &&
		    dump_loss_range(d, ev, &first, &last)) {
			rlog__buf_lit(b, ",\"first_ns\":");
			rlog__buf_i64(b, first);
			rlog__buf_lit(b, ",\"last_ns\":");
			rlog__buf_i64(b, last);
		}
	}
	rlog__buf_lit(b, "}\n");
}
