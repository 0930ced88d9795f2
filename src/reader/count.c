/*
 * count.c - the totals of a file (rlog_reader_open_count, `ringlog
 * stats`): events and bytes per (pid, event ID) and per thread, metadata
 * records, losses by cause, the counters' totals, the damage.
 *
 * Speed is the point (`ringlog stats` reads 100 M events/s on a 2-core
 * machine), so nothing is merged by time: each valid block is counted
 * during the open pass, right after it was checked, while it is still in
 * the cache.  The loop reads one header word per record (two for a flagged
 * one) and adds to a counter per (pid, event ID), found through a small
 * direct-mapped cache that is valid for one pid.  What a record counts as
 * is rlog__record_kind()'s answer, the accounting identity's definition.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "vec.h"

#define CACHE 64 /* direct-mapped cache of id -> counter, valid for one pid */

struct rlog__count {
	struct rlog_count t;

	struct rlog_count_id *ids;
	size_t nids, ids_cap;
	struct rlog__map id_map;          /* pid << 16 | id -> ids[] */

	struct rlog_count_thread *threads;
	size_t nthreads, threads_cap;
	struct rlog__map thread_map;      /* pid << 32 | tid -> threads[] */

	struct rlog_count_loss *losses;
	size_t nlosses;

	struct rlog__thread_loss *tlosses; /* per (pid, tid, cause), in the order found */
	size_t ntlosses, tlosses_cap;

	struct rlog_count_counter *counters;
	size_t ncounters, counters_cap;
	struct rlog__map counter_map;     /* pid << 32 | counter_id -> counters[] */

	bool cache_valid;
	uint32_t cache_pid;
	uint16_t cache_id[CACHE];
	uint32_t cache_at[CACHE];
};

int rlog__count_start(struct rlog_reader *r)
{
	r->count = calloc(1, sizeof(*r->count));
	return r->count ? 0 : -ENOMEM;
}

void rlog__count_free(struct rlog_reader *r)
{
	struct rlog__count *c = r->count;
	if (!c)
		return;
	free(c->ids);
	rlog__map_free(&c->id_map);
	free(c->threads);
	rlog__map_free(&c->thread_map);
	free(c->losses);
	free(c->tlosses);
	free(c->counters);
	rlog__map_free(&c->counter_map);
	free(c);
	r->count = NULL;
}

/* The counter of (pid, id): its index, or SIZE_MAX (no memory). */
static size_t id_counter(struct rlog__count *c, uint32_t pid, uint16_t id)
{
	uint64_t key = (uint64_t)pid << 16 | id;
	uint32_t i = rlog__map_get(&c->id_map, key);
	if (i != RLOG__MAP_NONE)
		return i;
	if (rlog__vec_room(&c->ids, c->nids, &c->ids_cap, sizeof(*c->ids), 64) < 0 ||
	    c->nids >= RLOG__MAP_NONE || rlog__map_put(&c->id_map, key, (uint32_t)c->nids) < 0)
		return SIZE_MAX;
	c->ids[c->nids] = (struct rlog_count_id){ .pid = pid, .id = id };
	return c->nids++;
}

static struct rlog_count_thread *thread_counter(struct rlog__count *c, uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)pid << 32 | tid;
	uint32_t i = rlog__map_get(&c->thread_map, key);
	if (i != RLOG__MAP_NONE)
		return &c->threads[i];
	if (rlog__vec_room(&c->threads, c->nthreads, &c->threads_cap, sizeof(*c->threads), 64) < 0 ||
	    c->nthreads >= RLOG__MAP_NONE ||
	    rlog__map_put(&c->thread_map, key, (uint32_t)c->nthreads) < 0)
		return NULL;
	c->threads[c->nthreads] = (struct rlog_count_thread){ .pid = pid, .tid = tid };
	return &c->threads[c->nthreads++];
}

/* The DATA_LOSS record l of block b, under its thread and cause. */
static int add_thread_loss(struct rlog__count *c, const struct rlog_block *b,
			   const struct rlog_loss *l)
{
	struct rlog__thread_loss *s = NULL;
	for (size_t i = 0; i < c->ntlosses && !s; i++)
		if (c->tlosses[i].pid == b->pid && c->tlosses[i].tid == b->tid &&
		    c->tlosses[i].cause == l->cause)
			s = &c->tlosses[i];
	if (!s) {
		if (rlog__vec_room(&c->tlosses, c->ntlosses, &c->tlosses_cap, sizeof(*c->tlosses),
				   16) < 0)
			return -ENOMEM;
		s = &c->tlosses[c->ntlosses++];
		*s = (struct rlog__thread_loss){ .pid = b->pid, .tid = b->tid, .cause = l->cause,
						 .first = b->base_time, .last = b->base_time };
	}
	s->events += l->events;
	s->bytes += l->bytes;
	if (l->fields & RLOG_LOSS_HAS_BLOCKS)
		s->blocks += l->blocks;
	if ((l->fields & RLOG_LOSS_HAS_RANGE) && l->last_time > s->last)
		s->last = l->last_time;
	return 0;
}

static int add_loss(struct rlog__count *c, struct rlog_count_thread *t,
		    const struct rlog_block *b, const uint8_t *p, size_t len)
{
	struct rlog_loss l;
	size_t i;

	if (rlog__loss_decode(p, len, &l) < 0)
		return 0; /* the walk refused those: cannot happen */
	if (add_thread_loss(c, b, &l) < 0)
		return -ENOMEM;
	for (i = 0; i < c->nlosses && c->losses[i].cause != l.cause; i++)
		;
	if (i == c->nlosses) {
		struct rlog_count_loss *v = realloc(c->losses, (c->nlosses + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		c->losses = v;
		c->losses[c->nlosses++] = (struct rlog_count_loss){ .cause = l.cause };
	}
	c->losses[i].records++;
	c->losses[i].events += l.events;
	c->losses[i].bytes += l.bytes;
	c->t.loss_records++;
	c->t.lost_events += l.events;
	c->t.lost_bytes += l.bytes;
	t->lost_events += l.events;
	t->lost_bytes += l.bytes;
	return 0;
}

/* Adds a COUNTER record (payload p, len bytes, at ticks) of process pid. */
static int add_counter(struct rlog__count *c, uint32_t pid, const uint8_t *p, size_t len,
		       uint64_t ticks)
{
	if (len < 16)
		return 0; /* the walk refused those: cannot happen */
	uint32_t id = rlog__get32(p);
	uint16_t flags;
	memcpy(&flags, p + 4, 2);
	uint64_t delta = rlog__get64(p + 8);
	uint64_t key = (uint64_t)pid << 32 | id;
	uint32_t i = rlog__map_get(&c->counter_map, key);
	if (i == RLOG__MAP_NONE) {
		if (rlog__vec_room(&c->counters, c->ncounters, &c->counters_cap,
				   sizeof(*c->counters), 16) < 0 ||
		    c->ncounters >= RLOG__MAP_NONE ||
		    rlog__map_put(&c->counter_map, key, (uint32_t)c->ncounters) < 0)
			return -ENOMEM;
		i = (uint32_t)c->ncounters++;
		c->counters[i] = (struct rlog_count_counter){ .pid = pid, .counter_id = id,
							      .first_delta = delta,
							      .first_ticks = ticks,
							      .last_ticks = ticks };
	}
	struct rlog_count_counter *k = &c->counters[i];
	k->records++;
	k->resets += (flags & RLOG_COUNTER_FLAG_RESET) != 0;
	k->total += delta;
	if (ticks < k->first_ticks) {
		k->first_ticks = ticks;
		k->first_delta = delta;
	}
	if (ticks > k->last_ticks)
		k->last_ticks = ticks;
	return 0;
}

/* The COUNTER records of a daemon block, with their times (the fast loop
 * below keeps no time cursor; daemon blocks are few and small). */
struct counter_walk {
	struct rlog__count *c;
	uint32_t pid;
};

static int count_counter(void *arg, const struct rlog__record *rec, uint64_t ticks, uint32_t off)
{
	struct counter_walk *w = arg;
	(void)off;
	if (rlog__record_kind(rec->id, rec->flagged) != RLOG_RECORD_COUNTER)
		return 0;
	return add_counter(w->c, w->pid, rec->payload, rec->length, ticks);
}

static int count_counters(struct rlog__count *c, const struct rlog_block *b)
{
	struct counter_walk w = { c, b->pid };
	return rlog__records_walk(b->data, b->size, b->base_time, count_counter, &w);
}

static void span(bool *timed, uint64_t *first, uint64_t *last, const struct rlog_block *b)
{
	if (!*timed || b->first_ticks < *first)
		*first = b->first_ticks;
	if (!*timed || b->last_ticks > *last)
		*last = b->last_ticks;
	*timed = true;
}

int rlog__count_block(struct rlog_reader *r, const struct rlog_block *b)
{
	struct rlog__count *c = r->count;
	const uint8_t *d = b->data, *end = d + b->size;
	uint64_t events = 0, bytes = 0;

	struct rlog_count_thread *t = thread_counter(c, b->pid, b->tid);
	if (!t)
		return -ENOMEM;
	if (!c->cache_valid || b->pid != c->cache_pid) {
		memset(c->cache_id, 0, sizeof(c->cache_id)); /* ID 0 is never a record's */
		c->cache_pid = b->pid;
		c->cache_valid = true;
	}
	/* The block was checked just before (every record well-formed); the
	 * bounds are checked again all the same, one compare per record. */
	while ((size_t)(end - d) >= 4) {
		uint32_t h = rlog__get32(d);
		unsigned id = rlog__hdr_id(h), len = rlog__hdr_length(h);
		unsigned hdr = 4u + (rlog__hdr_has_time(h) ? 4u : 0u);
		bool flagged = id == RLOG_ID_FLAGGED;
		if (flagged) {
			if ((size_t)(end - d) < hdr + 4)
				break;
			id = rlog__get32(d + hdr) & 0xffffu;
			hdr += 4;
		}
		uint32_t size = (hdr + len + 3u) & ~3u;
		if (size > (size_t)(end - d))
			break;
		switch (rlog__record_kind(id, flagged)) {
		case RLOG_RECORD_EVENT: {
			unsigned k = id % CACHE;
			if (c->cache_id[k] != id) {
				size_t at = id_counter(c, b->pid, (uint16_t)id);
				if (at == SIZE_MAX)
					return -ENOMEM;
				c->cache_id[k] = (uint16_t)id;
				c->cache_at[k] = (uint32_t)at;
			}
			struct rlog_count_id *ic = &c->ids[c->cache_at[k]];
			ic->events++;
			ic->bytes += size;
			events++;
			bytes += size;
			break;
		}
		case RLOG_RECORD_LOSS:
			if (add_loss(c, t, b, d + hdr, len) < 0)
				return -ENOMEM;
			break;
		case RLOG_RECORD_METADATA:
			c->t.metadata++;
			t->metadata++;
			break;
		default: /* LOG_MARKER, TIME_SYNC: nothing to count */
			break;
		}
		d += size;
	}
	t->events += events;
	t->bytes += bytes;
	c->t.events += events;
	c->t.bytes += bytes;
	/* Thread blocks and system blocks hold events with times of their
	 * own (the daemon's other blocks are about them). */
	if ((!(b->flags & RLOG_BLOCK_FLAG_DAEMON) || (b->flags & RLOG_BLOCK_FLAG_SYSTEM)) &&
	    b->record_count > 0) {
		span(&t->timed, &t->first_ticks, &t->last_ticks, b);
		span(&c->t.timed, &c->t.first_ticks, &c->t.last_ticks, b);
	}
	if (b->flags & RLOG_BLOCK_FLAG_DAEMON)
		return count_counters(c, b);
	return 0;
}

static int id_cmp(const void *a, const void *b)
{
	const struct rlog_count_id *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int thread_cmp(const void *a, const void *b)
{
	const struct rlog_count_thread *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int counter_cmp(const void *a, const void *b)
{
	const struct rlog_count_counter *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->counter_id < y->counter_id ? -1 : x->counter_id > y->counter_id;
}

static int loss_cmp(const void *a, const void *b)
{
	const struct rlog_count_loss *x = a, *y = b;
	return x->cause < y->cause ? -1 : x->cause > y->cause;
}

int rlog__count_finish(struct rlog_reader *r)
{
	struct rlog__count *c = r->count;

	/* qsort's base must not be NULL, even for 0 elements. */
	if (c->nids > 1)
		qsort(c->ids, c->nids, sizeof(*c->ids), id_cmp);
	if (c->nthreads > 1)
		qsort(c->threads, c->nthreads, sizeof(*c->threads), thread_cmp);
	if (c->nlosses > 1)
		qsort(c->losses, c->nlosses, sizeof(*c->losses), loss_cmp);
	if (c->ncounters > 1)
		qsort(c->counters, c->ncounters, sizeof(*c->counters), counter_cmp);
	/* The maps index the unsorted vectors: no longer needed. */
	rlog__map_free(&c->id_map);
	rlog__map_free(&c->thread_map);
	rlog__map_free(&c->counter_map);
	c->t.ids = c->nids;
	c->t.threads = c->nthreads;
	c->t.causes = c->nlosses;
	c->t.damage = r->ndamage;
	for (size_t i = 0; i < r->ndamage; i++) {
		const struct rlog__damage *d = r->damage[i];
		if (d->records_skipped > 0)
			c->t.skipped_records += (uint64_t)d->records_skipped;
		/* Losses: reports of records lost, or of an unknown number (not
		 * a repeat, an order, nor damage that cost nothing, as a bad copy
		 * of the LOG_MARKER in the file header). */
		if ((d->kind != RLOG_DAMAGE_BLOCK && d->kind != RLOG_DAMAGE_TRUNCATED &&
		     d->kind != RLOG_DAMAGE_MISSING) || d->records_skipped == 0)
			continue;
		c->t.damaged++;
		if (d->records_skipped > 0)
			c->t.damaged_records += (uint64_t)d->records_skipped;
		c->t.damaged_bytes += d->length;
	}
	return 0;
}

int rlog_reader_count(const struct rlog_reader *r, struct rlog_count *out)
{
	if (!r || !out)
		return -EINVAL;
	if (!r->count)
		return -ENODATA;
	*out = r->count->t;
	return 0;
}

/* Row i of a table of n rows: 0, or -EINVAL, -ENODATA, -ERANGE. */
static int row(const struct rlog_reader *r, const void *out, size_t i, size_t n)
{
	if (!r || !out)
		return -EINVAL;
	if (!r->count)
		return -ENODATA;
	return i < n ? 0 : -ERANGE;
}

int rlog_reader_count_id(const struct rlog_reader *r, size_t i, struct rlog_count_id *out)
{
	int rc = row(r, out, i, r && r->count ? r->count->nids : 0);
	if (rc == 0)
		*out = r->count->ids[i];
	return rc;
}

int rlog_reader_count_thread(const struct rlog_reader *r, size_t i, struct rlog_count_thread *out)
{
	int rc = row(r, out, i, r && r->count ? r->count->nthreads : 0);
	if (rc == 0)
		*out = r->count->threads[i];
	return rc;
}

int rlog_reader_count_loss(const struct rlog_reader *r, size_t i, struct rlog_count_loss *out)
{
	int rc = row(r, out, i, r && r->count ? r->count->nlosses : 0);
	if (rc == 0)
		*out = r->count->losses[i];
	return rc;
}

int rlog_reader_count_counter(const struct rlog_reader *r, size_t i, struct rlog_count_counter *out)
{
	int rc = row(r, out, i, r && r->count ? r->count->ncounters : 0);
	if (rc < 0)
		return rc;
	*out = r->count->counters[i];
	/* The names are complete once the open pass is done. */
	out->name = rlog_reader_counter_name(r, out->pid, out->counter_id,
					     &out->source, &out->unit, NULL);
	return 0;
}

int rlog__count_thread_losses(const struct rlog_reader *r, const struct rlog__thread_loss **rows,
			      size_t *n)
{
	if (!r->count)
		return -ENODATA;
	*rows = r->count->tlosses;
	*n = r->count->ntlosses;
	return 0;
}
