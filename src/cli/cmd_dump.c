/*
 * cmd_dump.c - `ringlog dump FILE [filters] [--format text|json]
 * [--time relative|wall] [--all]`: the events of a log file, one line
 * each, in time order.  The formats are specified in docs/DUMP.md.
 *
 *   # ringlog dump of FILE: session NAME, tick source tsc at F Hz, started 2026-11-22T10:00:00.123456789Z
 *   #      time_ns     pid     tid id           payload
 *                0    4242    4242 LOG_MARKER   tick_hz=... source=tsc realtime=... session=... buffers=8x16384
 *             1500    4242    4243 1025/3       01000000 02000000 ab
 *             2000    4242    4243 http.request status=200 bytes=5120 path="/index"
 *             2500    4242    4243 db.query     begin rows=5
 *
 * time_ns counts from the LOG_MARKER (negative before it).  An event whose
 * type has a schema prints its name and fields; one whose payload does not
 * match its schema prints "!mismatch" and its payload in hex.  Other
 * payloads print as hex in groups of 4 bytes, "-" when empty; RAW_*,
 * DATA_LOSS and LOG_MARKER payloads are decoded.  TIME_SYNC, EVENT_SCHEMA,
 * THREAD_NAME and PROCESS_NAME records show only with --all.
 *
 * --format json writes JSON Lines instead: one object per event, no
 * header.  Filters (--id, --name, --pid, --tid, --since, --until) keep the
 * events that pass all of them; a filter given several values (a list
 * "1,2" or the option repeated) keeps an event that matches any.
 *
 * The output is streamed through a 1 MiB stdout buffer; the reader keeps
 * one pending event per thread, so memory does not grow with the file.
 *
 * Exit status: 0 for a clean file; 1 when the file cannot be read or holds
 * damaged regions (every readable event is printed first, then one line per
 * region on stderr); 2 for a usage error.
 */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "format.h"
#include "names.h"
#include "record.h"
#include "ringlog/abi.h"
#include "ringlog/reader.h"
#include "schema.h"

#define USAGE "usage: ringlog dump FILE [--id N[,N..]] [--name NAME] [--pid P[,P..]] " \
	      "[--tid T[,T..]] [--since T] [--until T] [--format text|json] " \
	      "[--time relative|wall] [--all]"

/* Output is large; a big stdout buffer keeps write(2) calls rare. */
static char out_buf[1 << 20];


/* A list of numbers given to --id, --pid or --tid. */
struct numlist {
	uint32_t *v;
	size_t n, cap;
};

struct dump {
	const char *path;
	FILE *f;
	struct rlog_reader *r;
	const struct rlog_reader_info *info;
	bool all, json, wall;

	/* Filters; an empty list passes everything. */
	struct numlist ids, pids, tids;
	const char **names;
	size_t nnames;
	bool has_since, has_until;
	struct cli_time since, until;
	int64_t since_ns, until_ns; /* resolved against the file's start */

	/* fmt_time's cache of the date and time of the last second printed. */
	uint64_t wall_sec;
	char wall_prefix[24];
};

static const char *reserved_name(uint16_t id)
{
	return rlog__id_name(id);
}

static bool is_meta(const struct rlog_event *ev)
{
	return !ev->flagged && (ev->id == RLOG_ID_EVENT_SCHEMA || ev->id == RLOG_ID_THREAD_NAME ||
				ev->id == RLOG_ID_PROCESS_NAME);
}

/* ---------------------------------------------------------------- */
/* Filters                                                          */
/* ---------------------------------------------------------------- */

/* Adds "N[,N..]" to l; false if any is not a number in [0, max]. */
static bool numlist_add(struct numlist *l, const char *s, uint64_t max)
{
	char *copy = strdup(s), *save = NULL;
	bool ok = copy != NULL && *s != '\0';

	for (char *tok = ok ? strtok_r(copy, ",", &save) : NULL; tok && ok;
	     tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;
		if (!cli_parse_u64(tok, 0, max, &v)) {
			ok = false;
			break;
		}
		if (l->n == l->cap) {
			size_t cap = l->cap ? 2 * l->cap : 8;
			uint32_t *nv = realloc(l->v, cap * sizeof(*nv));
			if (!nv) {
				ok = false;
				break;
			}
			l->v = nv;
			l->cap = cap;
		}
		l->v[l->n++] = (uint32_t)v;
	}
	/* "1,,2" and a trailing comma are typos, not lists. */
	if (ok && (strstr(s, ",,") || s[0] == ',' || s[strlen(s) - 1] == ','))
		ok = false;
	free(copy);
	return ok;
}

static bool numlist_has(const struct numlist *l, uint32_t v)
{
	if (l->n == 0)
		return true;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i] == v)
			return true;
	return false;
}

/* The name --name matches: the schema's, a reserved ID's, or the number. */
static const char *match_name(const struct rlog_event *ev, const struct rlog_schema *s,
			      char *buf, size_t n)
{
	if (s)
		return s->name;
	const char *name = reserved_name(ev->id);
	if (name)
		return name;
	snprintf(buf, n, "%u", (unsigned)ev->id);
	return buf;
}

static bool name_passes(const struct dump *d, const struct rlog_event *ev,
			const struct rlog_schema *s)
{
	char buf[16];
	if (d->nnames == 0)
		return true;
	const char *name = match_name(ev, s, buf, sizeof(buf));
	for (size_t i = 0; i < d->nnames; i++)
		if (fnmatch(d->names[i], name, 0) == 0)
			return true;
	return false;
}

/* ---------------------------------------------------------------- */
/* Common parts                                                     */
/* ---------------------------------------------------------------- */

/* Wall-clock ns of an event (0 if before 1970). */
static uint64_t wall_ns(const struct dump *d, const struct rlog_event *ev)
{
	int64_t t = ev->time_ns;
	uint64_t base = d->info->sync_realtime_ns;
	if (t < 0)
		return (uint64_t)-t > base ? 0 : base - (uint64_t)-t;
	return base + (uint64_t)t > base ? base + (uint64_t)t : base;
}

/* RFC 3339 into buf[32], from a per-second cache: gmtime and strftime
 * cost more than the rest of a line. */
static void wall_string(struct dump *d, uint64_t ns, char *buf)
{
	uint64_t sec = ns / 1000000000u;
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

/* A field's value: text (strings quoted and C-escaped, bytes in hex) or
 * JSON (strings JSON-escaped, bytes as a hex string). */
static void put_value(FILE *f, const struct rlog_value *v, bool json)
{
	char buf[40];
	switch (v->field->type) {
	case RLOG_FIELD_U8: case RLOG_FIELD_U16: case RLOG_FIELD_U32: case RLOG_FIELD_U64:
		fmt_u64(f, v->v.u);
		break;
	case RLOG_FIELD_I8: case RLOG_FIELD_I16: case RLOG_FIELD_I32: case RLOG_FIELD_I64:
		fmt_i64(f, v->v.i);
		break;
	case RLOG_FIELD_F64:
		if (json) {
			fmt_json_double(f, v->v.f);
		} else {
			fmt_double(buf, sizeof(buf), v->v.f);
			fputs(buf, f);
		}
		break;
	case RLOG_FIELD_BYTES:
		if (json)
			putc_unlocked('"', f);
		fmt_hex(f, v->bytes, v->len, false);
		if (json)
			putc_unlocked('"', f);
		break;
	case RLOG_FIELD_STRING:
		if (json) {
			fmt_json_str(f, v->bytes, v->len);
		} else {
			putc_unlocked('"', f);
			fmt_cstr(f, v->bytes, v->len);
			putc_unlocked('"', f);
		}
		break;
	}
}

/* The fields of an event that matches its schema s (nf of them), as the
 * members of a JSON object. */
static void put_fields_json(FILE *f, const struct rlog_schema *s, const struct rlog_event *ev,
			    int nf)
{
	size_t off = 0;
	struct rlog_value v;
	for (int i = 0; i < nf; i++) {
		if (rlog_event_field(s, ev, (unsigned)i, &off, &v) < 0)
			return; /* checked by rlog_event_field_count */
		if (i > 0)
			putc_unlocked(',', f);
		putc_unlocked('"', f);
		fputs(v.field->name, f); /* a C identifier: nothing to escape */
		fputs("\":", f);
		put_value(f, &v, true);
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

/* ---------------------------------------------------------------- */
/* Text                                                             */
/* ---------------------------------------------------------------- */

/* RAW_* payload as space-separated values; false if the length does not
 * fit the type (the caller prints hex). */
static bool put_raw(FILE *f, unsigned id, const uint8_t *p, size_t n)
{
	static const unsigned char width[] = { 1, 1, 2, 2, 4, 4, 8, 8, 8 };
	char buf[40];
	size_t w;

	if (id == RLOG_ID_RAW_STRING) {
		putc_unlocked('"', f);
		fmt_cstr(f, p, n);
		putc_unlocked('"', f);
		return true;
	}
	w = width[id - RLOG_ID_RAW_U8];
	if (n % w != 0)
		return false;
	for (size_t i = 0; i < n; i += w) {
		const uint8_t *q = p + i;
		if (i > 0)
			putc_unlocked(' ', f);
		switch (id) {
		case RLOG_ID_RAW_U8: fmt_u64(f, q[0]); break;
		case RLOG_ID_RAW_I8: fmt_i64(f, (int8_t)q[0]); break;
		case RLOG_ID_RAW_U16: {
			uint16_t v;
			memcpy(&v, q, 2);
			fmt_u64(f, v);
			break;
		}
		case RLOG_ID_RAW_I16: {
			int16_t v;
			memcpy(&v, q, 2);
			fmt_i64(f, v);
			break;
		}
		case RLOG_ID_RAW_U32: fmt_u64(f, rlog__get32(q)); break;
		case RLOG_ID_RAW_I32: {
			int32_t v;
			memcpy(&v, q, 4);
			fmt_i64(f, v);
			break;
		}
		case RLOG_ID_RAW_U64: fmt_u64(f, rlog__get64(q)); break;
		case RLOG_ID_RAW_I64: {
			int64_t v;
			memcpy(&v, q, 8);
			fmt_i64(f, v);
			break;
		}
		case RLOG_ID_RAW_DOUBLE: {
			double v;
			memcpy(&v, q, 8);
			fmt_double(buf, sizeof(buf), v);
			fputs(buf, f);
			break;
		}
		}
	}
	return true;
}

/* An EVENT_SCHEMA payload: "id=1025 name=http.request kind=event
 * category=0 fields=status:u16,path:string,digest:bytes[16]". */
static void put_schema_text(FILE *f, const struct rlog_event *ev)
{
	static struct rlog__schema_buf sb; /* 9 KiB: not on the stack */
	if (rlog__schema_decode(ev->payload, ev->length, &sb) < 0) {
		fputs("!malformed ", f);
		fmt_hex(f, ev->payload, ev->length, true);
		return;
	}
	fprintf(f, "id=%u name=%s kind=%s category=%u fields=", (unsigned)sb.s.id, sb.s.name,
		fmt_kind(sb.s.kind), (unsigned)sb.s.category);
	if (sb.s.field_count == 0)
		putc_unlocked('-', f);
	for (unsigned i = 0; i < sb.s.field_count; i++) {
		const struct rlog_field *fl = &sb.s.fields[i];
		fprintf(f, "%s%s:%s", i ? "," : "", fl->name, fmt_field_type(fl->type));
		if (fl->type == RLOG_FIELD_BYTES)
			fprintf(f, "[%u]", (unsigned)fl->count);
	}
}

/* The payload column of an event without a schema (or "-"). */
static void put_payload(FILE *f, const struct rlog_event *ev)
{
	const uint8_t *p = ev->payload;
	size_t n = ev->length;
	char a[32], b[64];

	if (ev->flagged || n == 0) {
		if (n == 0)
			putc_unlocked('-', f);
		else if (ev->id >= RLOG_ID_RAW_U8 && ev->id <= RLOG_ID_RAW_STRING &&
			 put_raw(f, ev->id, p, n))
			return;
		else
			fmt_hex(f, p, n, true);
		return;
	}
	if (ev->id >= RLOG_ID_RAW_U8 && ev->id <= RLOG_ID_RAW_STRING && put_raw(f, ev->id, p, n))
		return;
	switch (ev->id) {
	case RLOG_ID_DATA_LOSS:
		if (n < sizeof(struct rlog_data_loss))
			break;
		fputs("events=", f);
		fmt_u64(f, rlog__get64(p));
		fputs(" bytes=", f);
		fmt_u64(f, rlog__get64(p + 8));
		fprintf(f, " cause=%s", fmt_loss_cause(rlog__get32(p + 16), a, sizeof(a)));
		return;
	case RLOG_ID_LOG_MARKER: {
		if (n < sizeof(struct rlog_log_marker))
			break;
		const uint8_t *name = p + offsetof(struct rlog_log_marker, session_name);
		fmt_rfc3339(b, sizeof(b), rlog__get64(p + 16));
		fprintf(f, "tick_hz=%" PRIu64 " source=%s realtime=%s session=", rlog__get64(p),
			fmt_tick_source(rlog__get32(p + 32), a, sizeof(a)), b);
		fmt_cstr(f, name, strnlen((const char *)name, RLOG_NAME_MAX));
		fprintf(f, " buffers=%" PRIu32 "x%" PRIu32, rlog__get32(p + 40), rlog__get32(p + 36));
		return;
	}
	case RLOG_ID_EVENT_SCHEMA:
		put_schema_text(f, ev);
		return;
	case RLOG_ID_THREAD_NAME:
	case RLOG_ID_PROCESS_NAME:
		putc_unlocked('"', f);
		fmt_cstr(f, p, n);
		putc_unlocked('"', f);
		return;
	default:
		break;
	}
	fmt_hex(f, p, n, true);
}

/* v right-aligned in width columns (the digits, after a '-' if neg). */
static char *put_num(char *p, uint64_t v, bool neg, int width)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (int pad = width - n - (neg ? 1 : 0); pad > 0; pad--)
		*p++ = ' ';
	if (neg)
		*p++ = '-';
	while (n > 0)
		*p++ = tmp[--n];
	return p;
}

/* The time, pid and tid columns into p; returns the end. */
static char *put_prefix(struct dump *d, char *p, const struct rlog_event *ev)
{
	if (d->wall) {
		char w[32];
		wall_string(d, wall_ns(d, ev), w);
		size_t k = strlen(w);
		for (size_t pad = k < 30 ? 30 - k : 0; pad > 0; pad--)
			*p++ = ' ';
		memcpy(p, w, k);
		p += k;
	} else {
		bool neg = ev->time_ns < 0;
		p = put_num(p, neg ? 0u - (uint64_t)ev->time_ns : (uint64_t)ev->time_ns, neg, 14);
	}
	*p++ = ' ';
	p = put_num(p, ev->pid, false, 7);
	*p++ = ' ';
	p = put_num(p, ev->tid, false, 7);
	*p++ = ' ';
	return p;
}

/* The id column: name (or number), "/flag" if with_flag, padded to 12
 * and a space, unless nothing follows (pad false). */
static char *put_idcol(char *p, const char *name, const struct rlog_event *ev, bool with_flag,
		       bool pad)
{
	char *start = p;
	if (name) {
		size_t k = strlen(name);
		memcpy(p, name, k);
		p += k;
	} else {
		p = put_num(p, ev->id, false, 0);
	}
	if (with_flag) {
		*p++ = '/';
		p = put_num(p, ev->flag, false, 0);
	}
	if (pad) {
		while (p - start < 12)
			*p++ = ' ';
		*p++ = ' ';
	}
	return p;
}

/*
 * An event with a schema: "name field=value ...", spans "name begin
 * field=value ..." and "name end", a payload that does not match
 * "name !mismatch <hex>".
 */
static void put_schema_event(struct dump *d, const struct rlog_event *ev,
			     const struct rlog_schema *s)
{
	FILE *f = d->f;
	char line[64 + 256 + 16];
	char *p = put_prefix(d, line, ev);
	int nf = rlog_event_field_count(s, ev);

	if (nf < 0) {
		p = put_idcol(p, s->name, ev, ev->flagged, true);
		fwrite(line, 1, (size_t)(p - line), f);
		fputs("!mismatch ", f);
		if (ev->length == 0)
			putc_unlocked('-', f);
		else
			fmt_hex(f, ev->payload, ev->length, true);
		putc_unlocked('\n', f);
		return;
	}
	bool span = s->kind == RLOG_KIND_SPAN;
	p = put_idcol(p, s->name, ev, ev->flagged && !span, span || nf > 0);
	fwrite(line, 1, (size_t)(p - line), f);
	if (span)
		fputs(ev->flag == RLOG_SPAN_END ? "end" : "begin", f);
	if (nf > 0) {
		/* The id column ends with a space unless a span word follows it. */
		size_t off = 0;
		struct rlog_value v;
		for (int i = 0; i < nf; i++) {
			if (rlog_event_field(s, ev, (unsigned)i, &off, &v) < 0)
				break;
			if (i > 0 || span)
				putc_unlocked(' ', f);
			fputs(v.field->name, f);
			putc_unlocked('=', f);
			put_value(f, &v, false);
		}
	}
	putc_unlocked('\n', f);
}

/*
 * One event line without a schema, formatted by hand: printf's format
 * parsing was most of the cost of a dump.  Hex payloads up to HEX_INLINE
 * bytes go in the same buffer.
 */
#define HEX_INLINE 256
static void put_event_text(struct dump *d, const struct rlog_event *ev)
{
	static const char digits[] = "0123456789abcdef";
	char line[64 + HEX_INLINE * 9 / 4 + 2];
	FILE *f = d->f;
	const char *name = reserved_name(ev->id);
	bool decoded = (ev->id >= RLOG_ID_RAW_U8 && ev->id <= RLOG_ID_RAW_STRING) ||
		       (!ev->flagged && name != NULL && ev->id != RLOG_ID_TIME_SYNC);

	char *p = put_prefix(d, line, ev);
	p = put_idcol(p, name, ev, ev->flagged, true);
	if (decoded || ev->length > HEX_INLINE) {
		fwrite(line, 1, (size_t)(p - line), f);
		put_payload(f, ev);
		putc_unlocked('\n', f);
		return;
	}
	const uint8_t *q = ev->payload;
	if (ev->length == 0)
		*p++ = '-';
	for (size_t i = 0; i < ev->length; i++) {
		if (i > 0 && i % 4 == 0)
			*p++ = ' ';
		*p++ = digits[q[i] >> 4];
		*p++ = digits[q[i] & 15];
	}
	*p++ = '\n';
	fwrite(line, 1, (size_t)(p - line), f);
}

/* ---------------------------------------------------------------- */
/* JSON                                                             */
/* ---------------------------------------------------------------- */

static void json_payload_hex(FILE *f, const struct rlog_event *ev)
{
	fputs(",\"payload_hex\":\"", f);
	fmt_hex(f, ev->payload, ev->length, false);
	putc_unlocked('"', f);
}

/* RAW_* as "values":[...] or "value":"..."; false if the length does not
 * fit the type. */
static bool json_raw(FILE *f, const struct rlog_event *ev)
{
	static const unsigned char width[] = { 1, 1, 2, 2, 4, 4, 8, 8, 8 };
	const uint8_t *p = ev->payload;
	size_t n = ev->length;

	if (ev->id == RLOG_ID_RAW_STRING) {
		fputs(",\"value\":", f);
		fmt_json_str(f, p, n);
		return true;
	}
	size_t w = width[ev->id - RLOG_ID_RAW_U8];
	if (n % w != 0)
		return false;
	fputs(",\"values\":[", f);
	for (size_t i = 0; i < n; i += w) {
		const uint8_t *q = p + i;
		uint64_t u = 0;
		memcpy(&u, q, w);
		if (i > 0)
			putc_unlocked(',', f);
		switch (ev->id) {
		case RLOG_ID_RAW_I8: fmt_i64(f, (int8_t)u); break;
		case RLOG_ID_RAW_I16: fmt_i64(f, (int16_t)u); break;
		case RLOG_ID_RAW_I32: fmt_i64(f, (int32_t)u); break;
		case RLOG_ID_RAW_I64: {
			int64_t v;
			memcpy(&v, &u, 8);
			fmt_i64(f, v);
			break;
		}
		case RLOG_ID_RAW_DOUBLE: {
			double v;
			memcpy(&v, &u, 8);
			fmt_json_double(f, v);
			break;
		}
		default: fmt_u64(f, u); break;
		}
	}
	putc_unlocked(']', f);
	return true;
}

static void json_schema_record(FILE *f, const struct rlog_event *ev)
{
	static struct rlog__schema_buf sb; /* 9 KiB: not on the stack */
	fputs(",\"type\":\"event_schema\"", f);
	if (rlog__schema_decode(ev->payload, ev->length, &sb) < 0) {
		fputs(",\"malformed\":true", f);
		json_payload_hex(f, ev);
		return;
	}
	fprintf(f, ",\"schema\":{\"id\":%u,\"name\":", (unsigned)sb.s.id);
	fmt_json_cstr(f, sb.s.name);
	fprintf(f, ",\"kind\":\"%s\",\"category\":%u,\"fields\":[", fmt_kind(sb.s.kind),
		(unsigned)sb.s.category);
	for (unsigned i = 0; i < sb.s.field_count; i++) {
		const struct rlog_field *fl = &sb.s.fields[i];
		fprintf(f, "%s{\"name\":\"%s\",\"type\":\"%s\"", i ? "," : "", fl->name,
			fmt_field_type(fl->type));
		if (fl->type == RLOG_FIELD_BYTES)
			fprintf(f, ",\"count\":%u", (unsigned)fl->count);
		putc_unlocked('}', f);
	}
	fputs("]}", f);
}

/* The rest of a JSON line for an event without a schema. */
static void json_plain(FILE *f, const struct rlog_event *ev)
{
	const uint8_t *p = ev->payload;
	size_t n = ev->length;
	char a[32], b[64];

	if (ev->id >= RLOG_ID_RAW_U8 && ev->id <= RLOG_ID_RAW_STRING) {
		fprintf(f, ",\"name\":\"%s\"", reserved_name(ev->id));
		if (!json_raw(f, ev))
			json_payload_hex(f, ev);
		return;
	}
	if (ev->flagged) {
		json_payload_hex(f, ev);
		return;
	}
	switch (ev->id) {
	case RLOG_ID_DATA_LOSS:
		if (n < sizeof(struct rlog_data_loss))
			break;
		fputs(",\"type\":\"data_loss\",\"events\":", f);
		fmt_u64(f, rlog__get64(p));
		fputs(",\"bytes\":", f);
		fmt_u64(f, rlog__get64(p + 8));
		fprintf(f, ",\"cause\":\"%s\"", fmt_loss_cause(rlog__get32(p + 16), a, sizeof(a)));
		return;
	case RLOG_ID_LOG_MARKER: {
		if (n < sizeof(struct rlog_log_marker))
			break;
		const uint8_t *name = p + offsetof(struct rlog_log_marker, session_name);
		fmt_rfc3339(b, sizeof(b), rlog__get64(p + 16));
		fprintf(f, ",\"type\":\"log_marker\",\"tick_hz\":%" PRIu64 ",\"source\":\"%s\","
			"\"realtime\":\"%s\",\"session\":", rlog__get64(p),
			fmt_tick_source(rlog__get32(p + 32), a, sizeof(a)), b);
		fmt_json_str(f, name, strnlen((const char *)name, RLOG_NAME_MAX));
		fprintf(f, ",\"buffer_size\":%" PRIu32 ",\"buffer_count\":%" PRIu32,
			rlog__get32(p + 36), rlog__get32(p + 40));
		return;
	}
	case RLOG_ID_TIME_SYNC:
		if (n != 8)
			break;
		fputs(",\"type\":\"time_sync\",\"ticks\":", f);
		fmt_u64(f, rlog__get64(p));
		return;
	case RLOG_ID_EVENT_SCHEMA:
		json_schema_record(f, ev);
		return;
	case RLOG_ID_THREAD_NAME:
	case RLOG_ID_PROCESS_NAME:
		fprintf(f, ",\"type\":\"%s\",\"value\":",
			ev->id == RLOG_ID_THREAD_NAME ? "thread_name" : "process_name");
		fmt_json_str(f, p, n);
		return;
	default:
		break;
	}
	json_payload_hex(f, ev);
}

static void put_event_json(struct dump *d, const struct rlog_event *ev,
			   const struct rlog_schema *s)
{
	FILE *f = d->f;

	fputs("{\"time_ns\":", f);
	fmt_i64(f, ev->time_ns);
	if (d->wall) {
		char w[32];
		wall_string(d, wall_ns(d, ev), w);
		fprintf(f, ",\"wall\":\"%s\"", w);
	}
	fputs(",\"pid\":", f);
	fmt_u64(f, ev->pid);
	fputs(",\"tid\":", f);
	fmt_u64(f, ev->tid);
	fputs(",\"id\":", f);
	fmt_u64(f, ev->id);
	if (ev->flagged) {
		fputs(",\"flag\":", f);
		fmt_u64(f, ev->flag);
	}
	if (s) {
		int nf = rlog_event_field_count(s, ev);
		fputs(",\"name\":\"", f);
		fputs(s->name, f); /* printable ASCII without '"' or '\\' */
		putc_unlocked('"', f);
		if (nf < 0) {
			fputs(",\"schema_mismatch\":true", f);
			json_payload_hex(f, ev);
		} else {
			fprintf(f, ",\"kind\":\"%s\",\"fields\":{", event_kind(s, ev));
			put_fields_json(f, s, ev, nf);
			putc_unlocked('}', f);
		}
	} else {
		json_plain(f, ev);
	}
	fputs("}\n", f);
}

/* ---------------------------------------------------------------- */
/* The command                                                      */
/* ---------------------------------------------------------------- */

static int usage(void)
{
	cli_error("dump: " USAGE);
	return 2;
}

/* --opt VALUE or --opt=VALUE at argv[*i]: the value, or NULL if argv[*i]
 * is not opt. *missing is set if opt has no value. */
static const char *opt_value(int argc, char **argv, int *i, const char *opt, bool *missing)
{
	size_t k = strlen(opt);
	const char *a = argv[*i];
	if (strncmp(a, opt, k) != 0)
		return NULL;
	if (a[k] == '=')
		return a + k + 1;
	if (a[k] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		*missing = true;
		return NULL;
	}
	return argv[++*i];
}

static int bad_value(const char *opt, const char *v, const char *want)
{
	cli_error("dump: %s '%s': expected %s", opt, v, want);
	return 2;
}

#define TIME_WANT "a time: 1.5s, 250ms, 10us, 123ns, or 2026-11-22T07:01:31.5Z"

/* Parses argv into d.  Returns 0, or the exit status of a usage error. */
static int parse_args(struct dump *d, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *v;
		bool missing = false;
		if (strcmp(argv[i], "--all") == 0) {
			d->all = true;
		} else if ((v = opt_value(argc, argv, &i, "--id", &missing))) {
			if (!numlist_add(&d->ids, v, RLOG_ID_MAX))
				return bad_value("--id", v, "event IDs 0 to 16383, separated by commas");
		} else if ((v = opt_value(argc, argv, &i, "--pid", &missing))) {
			if (!numlist_add(&d->pids, v, UINT32_MAX))
				return bad_value("--pid", v, "process IDs separated by commas");
		} else if ((v = opt_value(argc, argv, &i, "--tid", &missing))) {
			if (!numlist_add(&d->tids, v, UINT32_MAX))
				return bad_value("--tid", v, "thread IDs separated by commas");
		} else if ((v = opt_value(argc, argv, &i, "--name", &missing))) {
			const char **n = realloc(d->names, (d->nnames + 1) * sizeof(*n));
			if (!n)
				return cli_error("dump: out of memory");
			d->names = n;
			d->names[d->nnames++] = v;
		} else if ((v = opt_value(argc, argv, &i, "--since", &missing))) {
			if (cli_parse_time(v, &d->since) < 0)
				return bad_value("--since", v, TIME_WANT);
			d->has_since = true;
		} else if ((v = opt_value(argc, argv, &i, "--until", &missing))) {
			if (cli_parse_time(v, &d->until) < 0)
				return bad_value("--until", v, TIME_WANT);
			d->has_until = true;
		} else if ((v = opt_value(argc, argv, &i, "--format", &missing))) {
			if (strcmp(v, "json") == 0)
				d->json = true;
			else if (strcmp(v, "text") == 0)
				d->json = false;
			else
				return bad_value("--format", v, "text or json");
		} else if ((v = opt_value(argc, argv, &i, "--time", &missing))) {
			if (strcmp(v, "wall") == 0)
				d->wall = true;
			else if (strcmp(v, "relative") == 0)
				d->wall = false;
			else
				return bad_value("--time", v, "relative or wall");
		} else if (missing || (argv[i][0] == '-' && argv[i][1] != '\0') || d->path) {
			return usage();
		} else {
			d->path = argv[i];
		}
	}
	return d->path ? 0 : usage();
}

/* A time argument as ns since the start of the trace. */
static int64_t resolve_time(const struct dump *d, const struct cli_time *t)
{
	if (!t->wall)
		return t->ns;
	/* Both are below 2^63: the difference fits. */
	int64_t base = d->info->sync_realtime_ns > (uint64_t)INT64_MAX
			       ? INT64_MAX : (int64_t)d->info->sync_realtime_ns;
	return t->ns - base;
}

static void put_header(struct dump *d)
{
	char src[32], started[64];
	const struct rlog_reader_info *info = d->info;
	fmt_rfc3339(started, sizeof(started), info->sync_realtime_ns);
	fprintf(d->f, "# ringlog dump of %s: session %s, tick source %s at %" PRIu64 " Hz, "
		"started %s\n", d->path, info->session_name,
		fmt_tick_source(info->tick_source, src, sizeof(src)), info->tick_freq_hz, started);
	if (d->wall)
		fprintf(d->f, "#%29s     pid     tid id           payload\n", "wall_time");
	else
		fprintf(d->f, "#%13s     pid     tid id           payload\n", "time_ns");
}

static void free_args(struct dump *d)
{
	free(d->ids.v);
	free(d->pids.v);
	free(d->tids.v);
	free(d->names);
}

int cmd_dump(int argc, char **argv)
{
	struct dump d = { .f = stdout };
	struct rlog_event ev;
	int rc;

	rc = parse_args(&d, argc, argv);
	if (rc != 0) {
		free_args(&d);
		return rc;
	}
	rc = rlog_reader_open(d.path, &d.r);
	if (rc < 0) {
		free_args(&d);
		return cli_error("dump %s: %s", d.path, rlog_reader_strerror(rc));
	}
	if (d.all)
		rlog_reader_set_flags(d.r, RLOG_READER_TIME_SYNC);
	d.info = rlog_reader_info(d.r);
	d.since_ns = d.has_since ? resolve_time(&d, &d.since) : INT64_MIN;
	d.until_ns = d.has_until ? resolve_time(&d, &d.until) : INT64_MAX;

	setvbuf(stdout, out_buf, _IOFBF, sizeof(out_buf));
	if (!d.json)
		put_header(&d);
	bool id_filter = d.ids.n > 0, who_filter = d.pids.n > 0 || d.tids.n > 0;
	while ((rc = rlog_reader_next(d.r, &ev)) > 0) {
		if (ev.time_ns < d.since_ns)
			continue;
		if (ev.time_ns >= d.until_ns)
			break; /* events come in time order: nothing later passes */
		if (!d.all && is_meta(&ev))
			continue;
		if (id_filter && !numlist_has(&d.ids, ev.id))
			continue;
		if (who_filter && (!numlist_has(&d.pids, ev.pid) || !numlist_has(&d.tids, ev.tid)))
			continue;
		const struct rlog_schema *s =
			ev.id >= RLOG_ID_RAW_U8 && !is_meta(&ev) ? rlog_reader_schema(d.r, &ev) : NULL;
		if (!name_passes(&d, &ev, s))
			continue;
		if (d.json)
			put_event_json(&d, &ev, s);
		else if (s)
			put_schema_event(&d, &ev, s);
		else
			put_event_text(&d, &ev);
	}
	int status = 0;
	if (fflush(stdout) != 0 || ferror(stdout))
		status = cli_error("dump %s: writing the output: %s", d.path, strerror(errno));
	if (rc < 0)
		status = cli_error("dump %s: %s", d.path, rlog_reader_strerror(rc));
	size_t nd = rlog_reader_damage_count(d.r);
	for (size_t i = 0; i < nd; i++) {
		struct rlog_damage dm;
		if (rlog_reader_damage(d.r, i, &dm) == 0)
			status = cli_error("dump %s: %s", d.path, dm.message);
	}
	uint64_t first;
	uint64_t bad = rlog_reader_bad_schemas(d.r, &first);
	if (bad > 0)
		cli_error("dump %s: warning: %" PRIu64 " malformed EVENT_SCHEMA record%s ignored "
			  "(the first at offset %" PRIu64 ")", d.path, bad, bad == 1 ? "" : "s", first);
	rlog_reader_close(d.r);
	free_args(&d);
	return status;
}
