/*
 * counter_keep.c - the daemon's latest counter blocks, kept for snapshots
 * (counter_keep.h).
 */
#include "counter_keep.h"

#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "sink.h"

/* One block kept: its daemon block's fields, then its data. */
struct rlog__kept_block {
	uint16_t flags;
	uint32_t pid, tid, size, records;
	uint64_t base_time;
	uint8_t data[];
};

/* Counter ids are numbered by the daemon from 1; past this none is
 * followed (its records are kept as they were). */
#define VALUES_MAX (1u << 20)

void rlog__counter_keep_init(struct rlog__counter_keep *k, size_t limit)
{
	memset(k, 0, sizeof *k);
	k->limit = limit;
}

void rlog__counter_keep_free(struct rlog__counter_keep *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->v[(k->head + i) % k->cap]);
	free(k->v);
	free(k->values);
	memset(k, 0, sizeof *k);
}

/* The value entry of counter id, grown to it; NULL if it cannot be. */
static struct rlog__kept_value *value_of(struct rlog__counter_keep *k, uint32_t id)
{
	if (id == 0 || id >= VALUES_MAX)
		return NULL;
	if (id >= k->nvalues) {
		size_t n = k->nvalues ? k->nvalues : 64;
		while (n <= id)
			n *= 2;
		struct rlog__kept_value *v = realloc(k->values, n * sizeof *v);
		if (v == NULL)
			return NULL;
		memset(v + k->nvalues, 0, (n - k->nvalues) * sizeof *v);
		k->values = v;
		k->nvalues = n;
	}
	return &k->values[id];
}

/*
 * Appends record r (size bytes at p) to out, a COUNTER record with its
 * value (flag VALUE, Length 24) if the value is known.  Returns the bytes
 * appended.
 */
static uint32_t copy_record(struct rlog__counter_keep *k, const struct rlog__record *r,
			    const uint8_t *p, uint8_t *out)
{
	if (r->flagged || r->id != RLOG_ID_COUNTER || r->length < 16) {
		memcpy(out, p, r->size);
		return r->size;
	}
	struct rlog_counter_delta d = { 0 };
	memcpy(&d, r->payload, r->length < sizeof d ? r->length : sizeof d);
	struct rlog__kept_value *v = value_of(k, d.counter_id);
	if (v == NULL) {
		memcpy(out, p, r->size);
		return r->size;
	}
	if (d.flags & RLOG_COUNTER_FLAG_VALUE) {
		v->value = d.value;
		v->known = true;
	} else if (v->known && d.seq == v->next_seq) {
		v->value += d.delta; /* modulo 2^64, as the reader does */
	} else {
		v->known = false; /* a gap: unknown until a record carries it */
	}
	v->next_seq = (uint16_t)(d.seq + 1);
	if (!v->known) {
		memcpy(out, p, r->size);
		return r->size;
	}
	d.flags |= RLOG_COUNTER_FLAG_VALUE;
	d.value = v->value;
	uint32_t hw[2] = { rlog__hdr_make(RLOG_ID_COUNTER, sizeof d, r->has_time), r->time_low };
	uint32_t head = r->has_time ? 8 : 4;
	memcpy(out, hw, head);
	memcpy(out + head, &d, sizeof d);
	return head + (uint32_t)sizeof d;
}

/* Drops the oldest block kept. */
static void drop_oldest(struct rlog__counter_keep *k)
{
	struct rlog__kept_block *b = k->v[k->head];
	k->bytes -= b->size;
	free(b);
	k->head = (k->head + 1) % k->cap;
	k->n--;
	k->first++;
}

/* Room for one more block in the ring.  Returns false without memory. */
static bool ring_room(struct rlog__counter_keep *k)
{
	if (k->n < k->cap)
		return true;
	size_t cap = k->cap ? 2 * k->cap : 64;
	struct rlog__kept_block **v = malloc(cap * sizeof *v);
	if (v == NULL)
		return false;
	for (size_t i = 0; i < k->n; i++)
		v[i] = k->v[(k->head + i) % k->cap];
	free(k->v);
	k->v = v;
	k->cap = cap;
	k->head = 0;
	return true;
}

/* Keeps a copy of block b (records the daemon wrote: well-formed). */
static void keep(struct rlog__counter_keep *k, const struct rlog__out_block *b)
{
	/* A COUNTER record grows by 8 bytes at most (16 to 24). */
	size_t cap = (size_t)b->size + 8 * (size_t)b->records;
	struct rlog__kept_block *kb = malloc(sizeof *kb + cap);
	if (kb == NULL)
		return;
	const uint8_t *d = b->data;
	uint32_t in = 0, out = 0, records = 0;
	while (in < b->size) {
		struct rlog__record r;
		int sz = rlog__record_decode(d + in, b->size - in, &r);
		if (sz < 0 || out + (size_t)r.size + 8 > cap)
			break;
		out += copy_record(k, &r, d + in, kb->data + out);
		in += (uint32_t)sz;
		records++;
	}
	kb->flags = b->flags;
	kb->pid = b->pid;
	kb->tid = b->tid;
	kb->size = out;
	kb->records = records;
	kb->base_time = b->base_time;
	if (out > k->limit || !ring_room(k)) {
		free(kb);
		return;
	}
	while (k->n > 0 && k->bytes + out > k->limit)
		drop_oldest(k);
	k->v[(k->head + k->n) % k->cap] = kb;
	k->n++;
	k->bytes += out;
}

void rlog__output_counter_block(struct rlog__output *o, const struct rlog__out_block *b)
{
	rlog__output_block(o, b);
	keep(&o->counters, b);
}

/* Hands sink s the blocks of k (those no snapshot took, or all). */
static void keep_to(struct rlog__counter_keep *k, struct rlog__sink *s, bool since_last)
{
	uint64_t from = since_last && k->taken > k->first ? k->taken - k->first : 0;
	for (uint64_t i = from; i < k->n; i++) {
		const struct rlog__kept_block *kb = k->v[(k->head + i) % k->cap];
		struct rlog__out_block ob = {
			.flags = kb->flags, .pid = kb->pid, .tid = kb->tid,
			.base_time = kb->base_time, .data = kb->data, .size = kb->size,
			.records = kb->records,
		};
		s->ops->block(s, &ob);
	}
	k->taken = k->first + k->n;
}

void rlog__output_counters_to(struct rlog__output *o, struct rlog__sink *s, bool since_last)
{
	keep_to(&o->counters, s, since_last);
}

void rlog__output_system_block(struct rlog__output *o, const struct rlog__out_block *b)
{
	rlog__output_block(o, b);
	keep(&o->system, b);
}

void rlog__output_system_to(struct rlog__output *o, struct rlog__sink *s, bool since_last)
{
	keep_to(&o->system, s, since_last);
}
