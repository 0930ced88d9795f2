/*
 * convert_ctf.c - a ringlog log file as a CTF 1.8 trace (Common Trace
 * Format, the format of LTTng, read by babeltrace2 and Trace Compass):
 * the streams and their packets; the metadata is ctf_tsdl.c's.
 * docs/CONVERT.md has the mapping.
 *
 *   DIR/stream_PID_TID   one stream per thread: packets of up to 64 KiB
 *   DIR/metadata         TSDL text: types, trace, env, clock, stream, and one
 *                        event class per kind of record the streams hold
 *
 * Every type is byte-aligned and little-endian, so that most payloads are
 * copied as they are.  A packet:
 *
 *   +0  u32 magic 0xc1fc1fc1        packet.header
 *   +4  u32 stream_id 0
 *   +8  u64 timestamp_begin          packet.context (clock: ns)
 *   +16 u64 timestamp_end
 *   +24 u64 content_size             bits
 *   +32 u64 packet_size              bits (= content_size: no padding)
 *   +40 u64 packet_seq_num           0, 1, 2, ... per stream
 *   +48 u64 events_discarded         the stream's DATA_LOSS events so far
 *   +56 u32 pid
 *   +60 u32 tid
 *   +64 string process_name          the reader's names (rlog_reader_*_name),
 *   ... string thread_name           "" if none; NUL-terminated
 *   ... events: u32 class id, u64 timestamp, then the fields
 *
 * The events are those `ringlog dump` prints: THREAD_NAME and PROCESS_NAME
 * records are in every packet context instead, EVENT_SCHEMA records are
 * the event classes, COUNTER_NAME records the name field of the COUNTER
 * events (in the streams of their processes, tid 0).
 *
 * Time: the clock counts nanoseconds (freq 1 GHz) and a timestamp is the
 * reader's time_ns (from the session start) plus a bias that is 0 unless
 * the first event is before the start; the clock's offset is the wall-clock
 * time of the session start minus the bias.  So `babeltrace2
 * --clock-seconds` prints the same wall-clock nanoseconds as `ringlog dump`
 * and `--clock-cycles` its time_ns.  (A clock at the tick frequency would
 * keep the raw ticks, but babeltrace2 converts such cycles to ns through a
 * double and truncates, which is off by one ns now and then.)
 *
 * Losses: babeltrace2 reports a rise of events_discarded between two
 * packets of a stream as "Tracer discarded N events between [t1] and
 * [t2]".  So a DATA_LOSS record ends the packet before it and starts a new
 * one whose events_discarded includes it; a stream whose first record is a
 * loss gets an empty first packet (with 0), because babeltrace2 only says
 * "may have discarded" for a count it sees in a stream's first packet.
 *
 * Memory: one packet buffer per thread; the event classes.  Stream files
 * are opened for each packet written and closed again, so the number of
 * threads is not bounded by the open-file limit.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "convert.h"
#include "ctf.h"
#include "io.h"
#include "map.h"
#include "ringlog/reader.h"
#include "schema.h"
#include "vec.h"

#define CTF_MAGIC 0xc1fc1fc1u
#define PACKET_MAX (64u << 10) /* a packet holds more only for one larger event */
#define BUFFER_BUDGET (64u << 20) /* packet buffers of all streams together */
#define PACKET_HDR 64u         /* packet.header + packet.context up to the names */
#define EVENT_HDR 12u          /* u32 id, u64 timestamp */

static inline void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/* ------------------------------------------------------------------ */
/* Streams and packets                                                  */
/* ------------------------------------------------------------------ */

static int stream_of(struct ctf *c, uint32_t pid, uint32_t tid, struct stream **out)
{
	if (c->last < c->nstreams && c->streams[c->last].pid == pid &&
	    c->streams[c->last].tid == tid) {
		*out = &c->streams[c->last];
		return 0;
	}
	uint64_t key = (uint64_t)pid << 32 | tid;
	uint32_t i = rlog__map_get(&c->stream_map, key);
	if (i == RLOG__MAP_NONE) {
		if (rlog__vec_room(&c->streams, c->nstreams, &c->streams_cap, sizeof(*c->streams),
				   16) < 0 ||
		    rlog__map_put(&c->stream_map, key, (uint32_t)c->nstreams) < 0)
			return -ENOMEM;
		struct stream *s = &c->streams[c->nstreams];
		memset(s, 0, sizeof(*s));
		s->pid = pid;
		s->tid = tid;
		/* The latest names anywhere in the file (known from the open). */
		const char *pn = rlog_reader_process_name(c->r, pid);
		const char *tn = rlog_reader_thread_name(c->r, pid, tid);
		size_t pl = pn ? strlen(pn) : 0, tl = tn ? strlen(tn) : 0;
		if (!(s->names = malloc(pl + tl + 2)))
			return -ENOMEM;
		memcpy(s->names, pn ? pn : "", pl + 1);
		memcpy(s->names + pl + 1, tn ? tn : "", tl + 1);
		s->names_len = pl + tl + 2;
		s->hdr = PACKET_HDR + s->names_len;
		i = (uint32_t)c->nstreams++;
		c->st->streams++;
	}
	c->last = i;
	*out = &c->streams[i];
	return 0;
}

/* Makes room for n more bytes in the buffer. */
static int stream_grow(struct ctf *c, struct stream *s, size_t n)
{
	if (s->len + n <= s->cap)
		return 0;
	size_t cap = s->cap ? s->cap : 4096;
	while (cap < s->len + n)
		cap *= 2;
	uint8_t *b = realloc(s->buf, cap);
	if (!b)
		return -ENOMEM;
	c->buffered += cap - s->cap;
	s->buf = b;
	s->cap = cap;
	return 0;
}

/* Writes the open packet (its header filled in now) to the stream's file. */
static int stream_flush(struct ctf *c, struct stream *s)
{
	if (s->len == 0)
		return 0;
	uint8_t *h = s->buf;
	put32(h + 0, CTF_MAGIC);
	put32(h + 4, 0);
	put64(h + 8, s->ts_begin);
	put64(h + 16, s->ts_end);
	put64(h + 24, (uint64_t)s->len * 8);
	put64(h + 32, (uint64_t)s->len * 8);
	put64(h + 40, s->seq);
	put64(h + 48, s->discarded);
	put32(h + 56, s->pid);
	put32(h + 60, s->tid);
	memcpy(h + PACKET_HDR, s->names, s->names_len);

	char name[48];
	snprintf(name, sizeof(name), "stream_%" PRIu32 "_%" PRIu32, s->pid, s->tid);
	/* Created once (a link planted in the directory is refused, not
	 * written through), then appended to. */
	int fd = s->created ? openat(c->dirfd, name, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC)
			    : rlog__create_output_at(c->dirfd, name, 0, NULL);
	if (fd < 0 && s->created)
		fd = -errno;
	if (fd < 0)
		return fd;
	int rc = rlog__write_all(fd, s->buf, s->len, NULL);
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc < 0)
		return rc;
	s->created = true;
	s->seq++;
	c->st->packets++;
	c->st->bytes_written += s->len;
	s->len = 0;
	return 0;
}

/* Room for an event of at most n bytes at time ts: the end of the open
 * packet, or a new one.  Returns the place, or NULL (out of memory, or *rc
 * set by a failed flush). */
static uint8_t *stream_reserve(struct ctf *c, struct stream *s, size_t n, uint64_t ts, int *rc)
{
	if (s->len > 0 && s->len + n > PACKET_MAX && (*rc = stream_flush(c, s)) < 0)
		return NULL;
	if (stream_grow(c, s, (s->len == 0 ? s->hdr : 0) + n) < 0) {
		*rc = -ENOMEM;
		return NULL;
	}
	if (s->len == 0) {
		s->len = s->hdr;
		s->ts_begin = ts;
	}
	s->ts_end = ts;
	return s->buf + s->len;
}

/* ------------------------------------------------------------------ */
/* Event classes                                                        */
/* ------------------------------------------------------------------ */

static uint64_t schema_sig(uint8_t kind, const struct rlog_schema *s)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	h = rlog__fnv(h, &kind, 1);
	h = rlog__fnv(h, s->name, strlen(s->name) + 1);
	h = rlog__fnv(h, &s->field_count, 1);
	for (unsigned i = 0; i < s->field_count; i++) {
		h = rlog__fnv(h, &s->fields[i].type, 1);
		h = rlog__fnv(h, &s->fields[i].count, 2);
		h = rlog__fnv(h, s->fields[i].name, strlen(s->fields[i].name) + 1);
	}
	return h;
}

static bool schema_same(const struct rlog_schema *a, const struct rlog_schema *b)
{
	if (strcmp(a->name, b->name) != 0 || a->field_count != b->field_count)
		return false;
	for (unsigned i = 0; i < a->field_count; i++)
		if (a->fields[i].type != b->fields[i].type || a->fields[i].count != b->fields[i].count ||
		    strcmp(a->fields[i].name, b->fields[i].name) != 0)
			return false;
	return true;
}

static int class_add(struct ctf *c, const struct ev_class *k, uint32_t *out)
{
	if (rlog__vec_room(&c->classes, c->nclasses, &c->classes_cap, sizeof(*c->classes), 32) < 0)
		return -ENOMEM;
	c->classes[c->nclasses] = *k;
	*out = (uint32_t)c->nclasses++;
	c->st->event_classes++;
	return 0;
}

/*
 * The class of a record kind.  Schema classes are keyed by the schema
 * (the reader's pointer, stable until close) and the kind and flagging,
 * and shared by identical schemas of other processes; the others by kind,
 * flagged and ID.  Untimed records (no timestamp of their own) have
 * classes of their own, named with ":untimed", so that a CTF reader shows
 * that their time is the thread's previous record's.
 */
static int class_of(struct ctf *c, uint8_t kind, const struct rlog_schema *s, bool flagged,
		    bool untimed, uint16_t id, uint32_t *out)
{
	bool schema_kind = kind <= CK_MISMATCH;
	if (kind == CK_SPAN_BEGIN || kind == CK_SPAN_END)
		flagged = false; /* a span's flag is begin or end: the class */
	/* User-space pointers are below 2^56: 3 low bits for the variant and
	 * bit 63 free for the other kinds. */
	uint64_t key = schema_kind ? (uint64_t)(uintptr_t)s << 3 | (uint64_t)(kind == CK_SPAN_END) |
					     (uint64_t)(kind == CK_MISMATCH) << 1 |
					     (uint64_t)flagged << 2 | (uint64_t)untimed << 60
				   : UINT64_C(1) << 63 | (uint64_t)untimed << 56 |
					     (uint64_t)kind << 40 | (uint64_t)flagged << 32 | id;
	uint32_t i = rlog__map_get(&c->class_map, key);
	if (i != RLOG__MAP_NONE) {
		*out = i;
		return 0;
	}
	struct ev_class k = { .kind = kind, .flagged = flagged, .untimed = untimed, .id = id, .s = s };
	uint64_t sig = 0;
	if (schema_kind) {
		for (unsigned f = 0; f < s->field_count; f++)
			if (s->fields[f].type == RLOG_FIELD_STRING)
				k.has_string = true;
		sig = schema_sig((uint8_t)(kind | flagged << 7 | untimed << 6), s);
		i = rlog__map_get(&c->sig_map, sig);
		if (i != RLOG__MAP_NONE && (c->classes[i].kind != kind || c->classes[i].flagged != flagged ||
					c->classes[i].untimed != untimed ||
					!schema_same(c->classes[i].s, s)))
			i = RLOG__MAP_NONE; /* a hash collision: a class of its own */
	}
	if (i == RLOG__MAP_NONE) {
		int rc = class_add(c, &k, &i);
		if (rc < 0)
			return rc;
		if (schema_kind && rlog__map_get(&c->sig_map, sig) == RLOG__MAP_NONE &&
		    rlog__map_put(&c->sig_map, sig, i) < 0)
			return -ENOMEM;
	}
	if (rlog__map_put(&c->class_map, key, i) < 0)
		return -ENOMEM;
	*out = i;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Events                                                               */
/* ------------------------------------------------------------------ */

/* A CTF string: the bytes up to the first NUL (CTF strings end there),
 * then the NUL.  Returns the bytes written. */
static size_t put_string(uint8_t *p, const void *data, size_t n)
{
	const uint8_t *nul = memchr(data, 0, n);
	if (nul)
		n = (size_t)(nul - (const uint8_t *)data);
	memcpy(p, data, n);
	p[n] = 0;
	return n + 1;
}

/* The fields of a schema'd payload (decoded into c->vals). */
static size_t put_fields(struct ctf *c, const struct ev_class *k, const struct rlog_event *ev,
			 uint8_t *p)
{
	if (!k->has_string) {
		memcpy(p, ev->payload, ev->length); /* the same layout, byte for byte */
		return ev->length;
	}
	uint8_t *o = p;
	for (unsigned i = 0; i < k->s->field_count; i++) {
		const struct rlog_value *v = &c->vals[i];
		uint8_t t = k->s->fields[i].type;
		switch (t) {
		case RLOG_FIELD_STRING:
			o += put_string(o, v->bytes, v->len);
			break;
		case RLOG_FIELD_BYTES:
			memcpy(o, v->bytes, v->len);
			o += v->len;
			break;
		case RLOG_FIELD_F64:
			memcpy(o, &v->v.f, 8);
			o += 8;
			break;
		default: {
			/* Integers: the low bytes of the value, little-endian
			 * like every target (record.h). */
			unsigned n = rlog__field_fixed_size(t, 0);
			memcpy(o, &v->v.u, n);
			o += n;
		}
		}
	}
	return (size_t)(o - p);
}


/* The class kind of an event, and its schema (schema kinds); -1 for a
 * record with no event of its own. */
static int classify(struct ctf *c, const struct rlog_event *ev, const struct rlog_schema **sp)
{
	*sp = NULL;
	switch (rlog_record_kind(ev->id, ev->flagged)) {
	case RLOG_RECORD_METADATA:
		return -1; /* an event class, or the names in the packet context */
	case RLOG_RECORD_LOSS:
		if (rlog_event_loss(ev, &c->loss) == 0)
			return CK_LOSS;
		break; /* never for an event of the reader: raw */
	case RLOG_RECORD_MARKER:
		if (rlog_event_marker(ev, &c->marker) == 0)
			return CK_MARKER;
		break;
	case RLOG_RECORD_COUNTER:
		if (rlog_event_counter(c->r, ev, &c->counter) == 0)
			return CK_COUNTER;
		break;
	default:
		break;
	}
	const struct rlog_schema *s = rlog_reader_schema(c->r, ev);
	if (s) {
		*sp = s;
		if (rlog__convert_fields(s, ev, c->vals) < 0)
			return CK_MISMATCH;
		if (s->kind != RLOG_KIND_SPAN)
			return CK_SCHEMA;
		return ev->flag == RLOG_SPAN_END ? CK_SPAN_END : CK_SPAN_BEGIN;
	}
	if (rlog_event_raw_count(ev) >= 0)
		return CK_RAW_ARRAY;
	if (ev->id == RLOG_ID_RAW_STRING)
		return CK_RAW_STRING;
	return CK_RAW;
}

static int put_event(struct ctf *c, const struct rlog_event *ev)
{
	const struct rlog_schema *s;
	const uint8_t *pl = ev->payload;
	struct stream *sm;
	uint32_t cls;
	int rc = 0;

	int kind = classify(c, ev, &s);
	if (kind < 0) {
		c->st->skipped++;
		return 0;
	}
	if ((rc = class_of(c, (uint8_t)kind, s, ev->flagged, !ev->has_time, ev->id, &cls)) < 0 ||
	    (rc = stream_of(c, ev->pid, ev->tid, &sm)) < 0)
		return rc;
	/* Unsigned: exact for every time_ns + bias in [0, 2^64). */
	uint64_t ts = (uint64_t)ev->time_ns + (uint64_t)c->bias;

	if (kind == CK_LOSS) {
		uint64_t events = c->loss.events;
		c->st->loss_records++;
		c->st->events_lost += events;
		if (events > 0) {
			/* The packet before the loss keeps the old count; a
			 * stream's first packet must carry 0 (top of file). */
			if (sm->len == 0 && !sm->created && !stream_reserve(c, sm, 0, ts, &rc))
				return rc;
			if ((rc = stream_flush(c, sm)) < 0)
				return rc;
			sm->discarded += events;
		}
	}

	/* A COUNTER event also carries its name (at most 255 bytes). */
	size_t max = EVENT_HDR + 4 + ev->length + RLOG_SCHEMA_MAX_FIELDS + 2 +
		     (kind == CK_COUNTER ? 280 : 0);
	uint8_t *p = stream_reserve(c, sm, max, ts, &rc);
	if (!p)
		return rc;
	const struct ev_class *k = &c->classes[cls];
	put32(p, cls);
	put64(p + 4, ts);
	uint8_t *o = p + EVENT_HDR;
	if (k->flagged) {
		put16(o, ev->flag);
		o += 2;
	}
	switch (k->kind) {
	case CK_SCHEMA:
	case CK_SPAN_BEGIN:
		o += put_fields(c, k, ev, o);
		break;
	case CK_SPAN_END:
		break; /* an end has no fields; a payload it might carry is dropped */
	case CK_MISMATCH:
	case CK_RAW:
		put16(o, ev->length);
		memcpy(o + 2, pl, ev->length);
		o += 2 + ev->length;
		break;
	case CK_RAW_ARRAY:
		put16(o, (uint16_t)rlog_event_raw_count(ev));
		memcpy(o + 2, pl, ev->length);
		o += 2 + ev->length;
		break;
	case CK_MARKER: {
		const struct rlog_marker *m = &c->marker;
		put64(o, m->tick_freq_hz);
		put64(o + 8, m->sync_ticks);
		put64(o + 16, m->sync_realtime_ns);
		put64(o + 24, m->sync_monotonic_ns);
		put32(o + 32, m->tick_source);
		put32(o + 36, m->buffer_size);
		put32(o + 40, m->buffer_count);
		o += 44;
		o += put_string(o, m->session_name, strlen(m->session_name));
		break;
	}
	case CK_LOSS:
		put64(o, c->loss.events);
		put64(o + 8, c->loss.bytes);
		put32(o + 16, c->loss.cause);
		o += 20;
		break;
	case CK_COUNTER: {
		const struct rlog_counter *k2 = &c->counter;
		c->st->counter_records++;
		c->st->counter_unknown += !k2->value_known;
		put32(o, k2->counter_id);
		o += 4;
		o += put_string(o, k2->name ? k2->name : "", k2->name ? strlen(k2->name) : 0);
		put16(o, k2->flags);
		put16(o + 2, k2->seq);
		put64(o + 4, k2->delta);
		o[12] = k2->value_known;
		put64(o + 13, k2->value_known ? k2->value : 0);
		o += 21;
		break;
	}
	default: /* RAW_STRING */
		o += put_string(o, pl, ev->length);
		break;
	}
	sm->len = (size_t)(o - sm->buf);
	c->st->events_written++;
	if (k->kind <= CK_SPAN_END)
		c->st->schema_events++;
	else if (k->kind <= CK_RAW_STRING)
		c->st->raw_events++;
	c->st->mismatched += k->kind == CK_MISMATCH;
	return 0;
}

/*
 * Writes every open packet and frees the buffers: memory stays bounded
 * with many threads (a packet per thread is up to 64 KiB), at the price of
 * smaller packets then.
 */
static int flush_all(struct ctf *c)
{
	for (size_t i = 0; i < c->nstreams; i++) {
		struct stream *s = &c->streams[i];
		int rc = stream_flush(c, s);
		if (rc < 0)
			return rc;
		free(s->buf);
		s->buf = NULL;
		c->buffered -= s->cap;
		s->cap = 0;
	}
	return 0;
}

int rlog__convert_ctf(struct rlog_reader *r, const char *dir, struct rlog__convert_stats *st)
{
	return rlog__convert_ctf_host(r, dir, st, NULL, NULL);
}

int rlog__convert_ctf_host(struct rlog_reader *r, const char *dir, struct rlog__convert_stats *st,
			   const char *hostname, const char *clock_error)
{
	struct ctf c;
	struct rlog_event ev;
	int rc;

	if (!r || !dir || (hostname && !clock_error))
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	c.r = r;
	c.hostname = hostname;
	c.clock_error = clock_error;
	c.st = st ? st : &c.st_local;
	memset(c.st, 0, sizeof(*c.st));
	c.last = SIZE_MAX;
	c.dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c.dirfd < 0)
		return -errno;
	while ((rc = rlog_reader_next(r, &ev)) > 0) {
		c.st->events_read++;
		if (!c.started) {
			/* The first event is the earliest (time order). */
			c.started = true;
			if (ev.time_ns < 0)
				c.bias = ev.time_ns == INT64_MIN ? INT64_MAX : -ev.time_ns;
		}
		if ((rc = put_event(&c, &ev)) < 0)
			goto out;
		if (c.buffered > BUFFER_BUDGET && (rc = flush_all(&c)) < 0)
			goto out;
	}
	if (rc < 0)
		goto out;
	for (size_t i = 0; i < c.nstreams; i++)
		if ((rc = stream_flush(&c, &c.streams[i])) < 0)
			goto out;
	rc = rlog__ctf_metadata(&c);
out:
	for (size_t i = 0; i < c.nstreams; i++) {
		free(c.streams[i].buf);
		free(c.streams[i].names);
	}
	free(c.streams);
	free(c.classes);
	rlog__map_free(&c.stream_map);
	rlog__map_free(&c.class_map);
	rlog__map_free(&c.sig_map);
	close(c.dirfd);
	return rc;
}
