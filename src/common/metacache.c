/*
 * metacache.c - the latest metadata records of a session, and their copy
 * blocks (metacache.h).
 *
 * Entries live in one vector, found through three maps (one per kind of
 * key).  An evicted entry keeps its place (and its key) with rec NULL, so
 * that a later record of the same key finds it; when evicted entries
 * outnumber live ones the vector and the maps are rebuilt, so memory stays
 * proportional to the live entries.
 */
#include "metacache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "vec.h"

void rlog__metacache_init(struct rlog__metacache *c, size_t limit)
{
	memset(c, 0, sizeof *c);
	c->limit = limit;
}

void rlog__metacache_free(struct rlog__metacache *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].rec);
	free(c->v);
	rlog__map_free(&c->schemas);
	rlog__map_free(&c->threads);
	rlog__map_free(&c->procs);
	rlog__map_free(&c->counters);
	memset(c, 0, sizeof *c);
}

/* The map of an entry's kind and its key there; sub is the event ID of an
 * EVENT_SCHEMA, the counter ID of a COUNTER_NAME. */
static struct rlog__map *key_of(struct rlog__metacache *c, uint16_t id, uint32_t pid, uint32_t tid,
				uint32_t sub, uint64_t *key)
{
	switch (id) {
	case RLOG_ID_EVENT_SCHEMA:
		*key = (uint64_t)pid << 16 | (uint16_t)sub;
		return &c->schemas;
	case RLOG_ID_THREAD_NAME:
		*key = (uint64_t)pid << 32 | tid;
		return &c->threads;
	case RLOG_ID_COUNTER_NAME:
		*key = (uint64_t)pid << 32 | sub;
		return &c->counters;
	default:
		*key = pid;
		return &c->procs;
	}
}

/* The u16 event ID of an EVENT_SCHEMA payload, the u32 counter ID of a
 * COUNTER_NAME (len: the payload's bytes; rlog__metacache_add refuses a
 * record too short for it); 0 for the other kinds. */
static uint32_t sub_key(uint16_t id, const uint8_t *p, size_t len)
{
	if (id == RLOG_ID_EVENT_SCHEMA && len >= 2)
		return (uint32_t)(p[0] | p[1] << 8);
	if (id == RLOG_ID_COUNTER_NAME && len >= 4)
		return rlog__get32(p);
	return 0;
}

static uint32_t sub_of(const struct rlog__meta_entry *e)
{
	/* The payload starts after the header and the timestamp (a
	 * metadata record is never flagged). */
	if (e->rec == NULL)
		return 0;
	size_t hdr = rlog__hdr_has_time(rlog__get32(e->rec)) ? 8 : 4;
	return sub_key(e->id, e->rec + hdr, e->size - hdr);
}

static size_t cost(uint32_t size)
{
	return (size_t)size + RLOG__META_OVERHEAD;
}

/* Rebuilds the vector and the maps from the live entries.  Returns 0 or
 * -ENOMEM (then nothing changed). */
static int compact(struct rlog__metacache *c)
{
	struct rlog__metacache n;
	rlog__metacache_init(&n, c->limit);
	n.v = malloc((c->live ? c->live : 1) * sizeof *n.v);
	if (!n.v)
		return -ENOMEM;
	n.cap = c->live ? c->live : 1;
	for (size_t i = 0; i < c->n; i++) {
		struct rlog__meta_entry *e = &c->v[i];
		if (!e->rec)
			continue;
		uint64_t key;
		struct rlog__map *m = key_of(&n, e->id, e->pid, e->tid, sub_of(e), &key);
		if (rlog__map_put(m, key, (uint32_t)n.n) < 0) {
			free(n.v);
			rlog__map_free(&n.schemas);
			rlog__map_free(&n.threads);
			rlog__map_free(&n.procs);
			rlog__map_free(&n.counters);
			return -ENOMEM;
		}
		n.v[n.n++] = *e;
	}
	n.live = c->live;
	n.bytes = c->bytes;
	n.evicted = c->evicted;
	n.version = c->version;
	free(c->v);
	rlog__map_free(&c->schemas);
	rlog__map_free(&c->threads);
	rlog__map_free(&c->procs);
	rlog__map_free(&c->counters);
	*c = n;
	return 0;
}

/* Drops the oldest live entries, other than keep, until bytes <= limit. */
static void evict(struct rlog__metacache *c, size_t keep)
{
	while (c->bytes > c->limit && c->live > 1) {
		size_t old = SIZE_MAX;
		for (size_t i = 0; i < c->n; i++)
			if (c->v[i].rec && i != keep &&
			    (old == SIZE_MAX || c->v[i].ticks < c->v[old].ticks))
				old = i;
		if (old == SIZE_MAX)
			return;
		struct rlog__meta_entry *e = &c->v[old];
		c->bytes -= cost(e->size);
		free(e->rec);
		e->rec = NULL;
		c->live--;
		c->evicted++;
	}
}

int rlog__metacache_add(struct rlog__metacache *c, uint32_t pid, uint32_t tid, uint64_t ticks,
			const void *rec, uint32_t size)
{
	struct rlog__record r;
	if (rlog__record_decode(rec, size, &r) < 0 || r.flagged ||
	    rlog__record_kind(r.id, false) != RLOG_RECORD_METADATA ||
	    (r.id == RLOG_ID_EVENT_SCHEMA && r.length < 2) ||
	    (r.id == RLOG_ID_COUNTER_NAME && r.length < 4))
		return 0;
	size = r.size;
	uint64_t key;
	struct rlog__map *m = key_of(c, r.id, pid, tid, sub_key(r.id, r.payload, r.length), &key);
	uint32_t i = rlog__map_get(m, key);
	struct rlog__meta_entry *e = i == RLOG__MAP_NONE ? NULL : &c->v[i];
	if (e && e->rec && e->ticks > ticks)
		return 0; /* an older record than the one kept */
	if (e && e->rec && e->size == size && e->ticks == ticks && memcmp(e->rec, rec, size) == 0)
		return 0; /* the same record again (a copy block read back) */
	uint8_t *copy = malloc(size);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, rec, size);
	if (!e) {
		if (rlog__vec_room(&c->v, c->n, &c->cap, sizeof *c->v, 16) < 0 ||
		    c->n >= RLOG__MAP_NONE || rlog__map_put(m, key, (uint32_t)c->n) < 0) {
			free(copy);
			return -ENOMEM;
		}
		i = (uint32_t)c->n++;
		e = &c->v[i];
		memset(e, 0, sizeof *e);
	}
	if (e->rec) {
		c->bytes -= cost(e->size);
		free(e->rec);
		c->live--;
	}
	e->ticks = ticks;
	e->pid = pid;
	e->tid = tid;
	e->id = r.id;
	e->size = size;
	e->rec = copy;
	c->live++;
	c->bytes += cost(size);
	c->version++;
	evict(c, i);
	if (c->n > 64 && c->n > 2 * c->live)
		(void)compact(c); /* on failure the cache just stays larger */
	return 0;
}

struct block_walk {
	struct rlog__metacache *c;
	uint32_t pid, tid;
	const uint8_t *data;
};

static int add_one(void *arg, const struct rlog__record *r, uint64_t ticks, uint32_t off)
{
	struct block_walk *w = arg;
	if (r->flagged || rlog__record_kind(r->id, false) != RLOG_RECORD_METADATA)
		return 0;
	return rlog__metacache_add(w->c, w->pid, w->tid, ticks, w->data + off, r->size);
}

int rlog__metacache_block(struct rlog__metacache *c, uint32_t pid, uint32_t tid,
			  uint64_t base_time, const void *data, uint32_t size)
{
	struct block_walk w = { c, pid, tid, data };
	return rlog__records_walk(data, size, base_time, add_one, &w);
}

static int by_thread_time(const void *a, const void *b)
{
	const struct rlog__meta_entry *x = *(struct rlog__meta_entry *const *)a;
	const struct rlog__meta_entry *y = *(struct rlog__meta_entry *const *)b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ticks != y->ticks)
		return x->ticks < y->ticks ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id; /* the library's order: process, thread, schema */
}

/* A TIME_SYNC record setting the cursor to t: 16 bytes at p. */
static void time_sync(uint8_t *p, uint64_t t)
{
	uint32_t w[2] = { rlog__hdr_make(RLOG_ID_TIME_SYNC, 8, true), (uint32_t)t };
	memcpy(p, w, 8);
	memcpy(p + 8, &t, 8);
}

int rlog__metacache_render(struct rlog__metacache *c, rlog__meta_emit_fn *emit, void *arg)
{
	if (c->live == 0)
		return 0;
	struct rlog__meta_entry **sorted = malloc(c->live * sizeof *sorted);
	uint8_t *buf = malloc(RLOG__META_BLOCK_MAX);
	int rc = 0;
	if (!sorted || !buf) {
		rc = -ENOMEM;
		goto out;
	}
	size_t n = 0;
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].rec)
			sorted[n++] = &c->v[i];
	qsort(sorted, n, sizeof *sorted, by_thread_time);
	for (size_t i = 0; i < n && rc == 0;) {
		/* One block: records of (pid, tid) while they fit. */
		const struct rlog__meta_entry *first = sorted[i];
		uint64_t cursor = first->ticks;
		uint32_t used = 0, records = 0;
		for (; i < n && sorted[i]->pid == first->pid && sorted[i]->tid == first->tid; i++) {
			const struct rlog__meta_entry *e = sorted[i];
			/* A record time-stamped 2^31 ticks or more after the
			 * cursor needs a TIME_SYNC (sorted: never before it). */
			bool sync = rlog__hdr_has_time(rlog__get32(e->rec)) &&
				    e->ticks - cursor >= RLOG_TIME_SYNC_TICKS;
			uint32_t need = e->size + (sync ? 16u : 0u);
			if (used > 0 && used + need > RLOG__META_BLOCK_MAX)
				break; /* the rest of the group: a block of its own */
			if (need > RLOG__META_BLOCK_MAX)
				continue; /* cannot happen: records are at most 65548 bytes */
			if (sync) {
				time_sync(buf + used, e->ticks);
				used += 16;
				records++;
			}
			memcpy(buf + used, e->rec, e->size);
			used += e->size;
			records++;
			cursor = e->ticks;
		}
		if (used > 0)
			rc = emit(arg, first->pid, first->tid, first->ticks, buf, used, records);
	}
out:
	free(sorted);
	free(buf);
	return rc;
}
