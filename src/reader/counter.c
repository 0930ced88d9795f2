/*
 * counter.c - the reader's sampled counters: COUNTER_NAME records (the
 * names, from the open pass) and COUNTER records (decoded, and followed
 * as rlog_reader_next() returns them, so that a record without its value
 * gets one from the previous record).  docs/FORMAT.md, "COUNTER and
 * COUNTER_NAME".
 *
 * One entry per counter (pid, counter_id), found through a map:
 *
 *   open pass   COUNTER_NAME ──► name, source, unit, info (the latest by
 *                                (ticks, offset), as for THREAD_NAME)
 *   next()      COUNTER ──────► seq, value: the record's own, or the
 *                               previous value + delta when no record of
 *                               the counter is missing in between (seq)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "vec.h"

static uint64_t counter_key(uint32_t pid, uint32_t id)
{
	return (uint64_t)pid << 32 | id;
}

static struct rlog__counter_entry *counter_find(const struct rlog_reader *r, uint32_t pid,
						uint32_t id)
{
	uint32_t i = rlog__map_get(&r->counter_map, counter_key(pid, id));
	return i == RLOG__MAP_NONE ? NULL : &r->counters[i];
}

/* The entry of (pid, id), added if new; NULL: no memory. */
static struct rlog__counter_entry *counter_get(struct rlog_reader *r, uint32_t pid, uint32_t id)
{
	struct rlog__counter_entry *e = counter_find(r, pid, id);
	if (e)
		return e;
	if (rlog__vec_room(&r->counters, r->ncounters, &r->counters_cap, sizeof(*r->counters), 16) < 0 ||
	    r->ncounters >= RLOG__MAP_NONE ||
	    rlog__map_put(&r->counter_map, counter_key(pid, id), (uint32_t)r->ncounters) < 0)
		return NULL;
	e = &r->counters[r->ncounters++];
	memset(e, 0, sizeof(*e));
	e->pid = pid;
	e->counter_id = id;
	return e;
}

/* Decodes a COUNTER_NAME payload.  Returns 0 or -EBADMSG. */
static int name_decode(const uint8_t *p, size_t len, struct rlog_counter_desc *out)
{
	struct rlog_counter_name h;
	if (len < sizeof(h))
		return -EBADMSG;
	memcpy(&h, p, sizeof(h));
	if (h.name_len == 0 || len < sizeof(h) + h.name_len)
		return -EBADMSG;
	out->counter_id = h.counter_id;
	out->source = h.source;
	out->unit = h.unit;
	out->info = h.flags;
	out->name = (const char *)p + sizeof(h);
	out->name_len = h.name_len;
	return 0;
}

int rlog_event_counter_name(const struct rlog_event *ev, struct rlog_counter_desc *out)
{
	if (!ev || !out || ev->flagged || ev->id != RLOG_ID_COUNTER_NAME)
		return -EINVAL;
	return name_decode(ev->payload, ev->length, out);
}

int rlog__counter_name_record(struct rlog_reader *r, uint32_t pid, const struct rlog__record *rec,
			      uint64_t ticks, size_t off)
{
	struct rlog_counter_desc d;
	if (name_decode(rec->payload, rec->length, &d) < 0)
		return 0; /* malformed as a name: ignored, as a bad schema is */
	struct rlog__counter_entry *e = counter_get(r, pid, d.counter_id);
	if (!e)
		return -ENOMEM;
	if (e->name && (e->name_ticks > ticks || (e->name_ticks == ticks && e->name_offset > off)))
		return 0; /* an earlier name: the latest stays */
	char *name = malloc(d.name_len + 1);
	if (!name)
		return -ENOMEM;
	memcpy(name, d.name, d.name_len);
	name[d.name_len] = '\0';
	free(e->name);
	e->name = name;
	e->name_ticks = ticks;
	e->name_offset = off;
	e->source = d.source;
	e->unit = d.unit;
	e->info = d.info;
	return 0;
}

/* Decodes a COUNTER payload of len bytes into out (value_known: the record
 * carries it).  Returns 0 or -EBADMSG. */
static int counter_decode(const uint8_t *p, size_t len, struct rlog_counter *out)
{
	memset(out, 0, sizeof(*out));
	if (len < 16)
		return -EBADMSG;
	out->counter_id = rlog__get32(p);
	memcpy(&out->flags, p + 4, 2);
	memcpy(&out->seq, p + 6, 2);
	out->delta = rlog__get64(p + 8);
	if (len < rlog__counter_len(out->flags))
		return -EBADMSG;
	if (out->flags & RLOG_COUNTER_FLAG_VALUE) {
		out->value = rlog__get64(p + 16);
		out->value_known = true;
	} else if (out->flags & RLOG_COUNTER_FLAG_RESET) {
		out->value = out->delta; /* a reset counts from 0 */
		out->value_known = true;
	}
	return 0;
}

void rlog__counter_follow(struct rlog_reader *r, const struct rlog_event *ev)
{
	struct rlog_counter c;
	if (counter_decode(ev->payload, ev->length, &c) < 0)
		return;
	struct rlog__counter_entry *e = counter_get(r, ev->pid, c.counter_id);
	if (!e)
		return; /* out of memory: its values are those the records carry */
	bool gap = e->seen ? c.seq != (uint16_t)(e->last_seq + 1) : c.seq != 0;
	if (!c.value_known && !gap && e->seen && e->value_known) {
		c.value = e->value + c.delta; /* modulo 2^64, as the counter */
		c.value_known = true;
	}
	e->seen = true;
	e->last_seq = c.seq;
	e->value_known = c.value_known;
	e->value = c.value;
	e->last_offset = ev->offset;
	e->last_gap = gap;
}

int rlog_event_counter(struct rlog_reader *r, const struct rlog_event *ev, struct rlog_counter *out)
{
	if (!r || !ev || !out || ev->flagged || ev->id != RLOG_ID_COUNTER)
		return -EINVAL;
	int rc = counter_decode(ev->payload, ev->length, out);
	if (rc < 0)
		return rc;
	const struct rlog__counter_entry *e = counter_find(r, ev->pid, out->counter_id);
	if (!e)
		return 0;
	out->name = e->name;
	out->source = e->source;
	out->unit = e->unit;
	out->info = e->info;
	if (e->seen && e->last_offset == ev->offset) {
		out->value_known = e->value_known;
		out->value = e->value;
		out->gap = e->last_gap;
	}
	return 0;
}

const char *rlog_reader_counter_name(const struct rlog_reader *r, uint32_t pid, uint32_t counter_id,
				     uint8_t *source, uint8_t *unit, uint8_t *info)
{
	const struct rlog__counter_entry *e = r ? counter_find(r, pid, counter_id) : NULL;
	bool named = e && e->name;
	if (source)
		*source = named ? e->source : 0;
	if (unit)
		*unit = named ? e->unit : 0;
	if (info)
		*info = named ? e->info : 0;
	return named ? e->name : NULL;
}

int rlog_reader_counters_from(struct rlog_reader *r, const struct rlog_reader *prev)
{
	if (!r || !prev || r->started)
		return -EINVAL;
	for (size_t i = 0; i < prev->ncounters; i++) {
		const struct rlog__counter_entry *p = &prev->counters[i];
		if (!p->seen)
			continue;
		struct rlog__counter_entry *e = counter_get(r, p->pid, p->counter_id);
		if (!e)
			return -ENOMEM;
		e->seen = true;
		e->last_seq = p->last_seq;
		e->value_known = p->value_known;
		e->value = p->value;
		e->last_gap = false;
		e->last_offset = SIZE_MAX; /* no event of r */
	}
	return 0;
}

void rlog__counter_free(struct rlog_reader *r)
{
	for (size_t i = 0; i < r->ncounters; i++)
		free(r->counters[i].name);
	free(r->counters);
	r->counters = NULL;
	r->ncounters = r->counters_cap = 0;
	rlog__map_free(&r->counter_map);
}
