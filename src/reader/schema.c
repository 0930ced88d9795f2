/*
 * schema.c - the reader's metadata: event schemas, thread and process
 * names, and decoding an event's fields.
 *
 * The open pass (file.c) hands every unflagged EVENT_SCHEMA, THREAD_NAME
 * and PROCESS_NAME record of a valid block to rlog__meta_record(), with its
 * 64-bit time and file offset.  Blocks come in file order, not time order,
 * so each record is placed by (ticks, offset), the order in which
 * rlog_reader_next() returns events:
 *
 *   schemas  one entry per (pid, event ID), found through a map; each holds the versions
 *            of that schema in time order, each in force from its record
 *            on.  rlog_reader_schema() takes the latest version at or
 *            before the event.  A record that repeats the version in force
 *            at its time adds nothing (a producer writes the same schema
 *            into every file and snapshot), so memory grows with the
 *            number of schema changes, not of schema records.
 *   names    the latest THREAD_NAME of each thread (kept in the thread
 *            table) and the latest PROCESS_NAME of each process.
 *
 * A malformed EVENT_SCHEMA (rlog__schema_decode() refuses it: among
 * others, one that describes an ID the producer API refuses, below 16 or
 * ringlog's own 32..38) is counted and ignored: the events it meant to
 * describe read as raw payloads.  It is not damage: its block is sound.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "internal.h"
#include "vec.h"
#include "schema.h"

/* (ticks, offset) order: -1, 0, 1. */
static int when_cmp(uint64_t t1, size_t o1, uint64_t t2, size_t o2)
{
	if (t1 != t2)
		return t1 < t2 ? -1 : 1;
	return o1 < o2 ? -1 : o1 > o2;
}

/* A copy of name[0..len) up to its first NUL, NUL-terminated. */
static char *name_dup(const uint8_t *name, size_t len)
{
	const uint8_t *nul = memchr(name, 0, len);
	if (nul)
		len = (size_t)(nul - name);
	char *s = malloc(len + 1);
	if (!s)
		return NULL;
	memcpy(s, name, len);
	s[len] = '\0';
	return s;
}

/* ---------------------------------------------------------------- */
/* Schemas                                                          */
/* ---------------------------------------------------------------- */

static uint64_t schema_key(uint32_t pid, uint16_t id)
{
	return (uint64_t)pid << 16 | id;
}

static inline struct rlog__schema_entry *schema_find(struct rlog_reader *r, uint32_t pid,
						   uint16_t id)
{
	/* A few event types take turns (a span's begin and end, the events
	 * inside it): a small direct-mapped cache of the entries found last
	 * answers them without the hash map. */
	uint32_t *slot = &r->schema_cache[(id ^ pid * 0x9e3779b1u) % RLOG__SCHEMA_CACHE];
	if (*slot != 0) {
		struct rlog__schema_entry *e = &r->schemas[*slot - 1];
		if (e->pid == pid && e->id == id)
			return e;
	}
	uint32_t i = rlog__map_get(&r->schema_map, schema_key(pid, id));
	if (i == RLOG__MAP_NONE)
		return NULL;
	*slot = i + 1;
	return &r->schemas[i];
}

/* The entry for (pid, id), added (empty, nversions 0) if new; NULL: no
 * memory.  The caller gives it a version at once. */
static struct rlog__schema_entry *schema_get(struct rlog_reader *r, uint32_t pid, uint16_t id)
{
	struct rlog__schema_entry *e = schema_find(r, pid, id);
	if (e)
		return e;
	if (rlog__vec_room(&r->schemas, r->nschemas, &r->schemas_cap, sizeof(*r->schemas), 64) < 0)
		return NULL;
	if (r->nschemas >= RLOG__MAP_NONE ||
	    rlog__map_put(&r->schema_map, schema_key(pid, id), (uint32_t)r->nschemas) < 0)
		return NULL;
	e = &r->schemas[r->nschemas++];
	memset(e, 0, sizeof(*e));
	e->pid = pid;
	e->id = id;
	return e;
}

/* A decoded schema in one allocation: the struct, its fields, its names. */
static struct rlog_schema *schema_copy(const struct rlog_schema *s)
{
	size_t names = strlen(s->name) + 1;
	for (unsigned i = 0; i < s->field_count; i++)
		names += strlen(s->fields[i].name) + 1;
	size_t size = sizeof(struct rlog_schema) + s->field_count * sizeof(struct rlog_field) + names;
	struct rlog_schema *c = malloc(size);
	if (!c)
		return NULL;
	struct rlog_field *f = (struct rlog_field *)(c + 1);
	char *p = (char *)(f + s->field_count);
	*c = *s;
	c->fields = f;
	size_t n = strlen(s->name) + 1;
	memcpy(p, s->name, n);
	c->name = p;
	p += n;
	for (unsigned i = 0; i < s->field_count; i++) {
		f[i] = s->fields[i];
		n = strlen(s->fields[i].name) + 1;
		memcpy(p, s->fields[i].name, n);
		f[i].name = p;
		p += n;
	}
	return c;
}

static bool raw_equal(const struct rlog__schema_version *v, const uint8_t *p, size_t n)
{
	return v->raw_len == n && memcmp(v->raw, p, n) == 0;
}

static void bad_schema(struct rlog_reader *r, size_t off)
{
	if (r->bad_schemas++ == 0)
		r->bad_schema_offset = off;
}

static int schema_record(struct rlog_reader *r, uint32_t pid, const struct rlog__record *rec,
			 uint64_t ticks, size_t off)
{
	struct rlog__schema_buf *buf = malloc(sizeof(*buf));
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	if (rlog__schema_decode(rec->payload, rec->length, buf) < 0) {
		bad_schema(r, off);
		goto out;
	}
	struct rlog__schema_entry *e = schema_get(r, pid, buf->s.id);
	if (!e) {
		rc = -ENOMEM;
		goto out;
	}
	/* k: the first version after this record. */
	uint32_t k = e->nversions;
	while (k > 0 && when_cmp(e->v[k - 1].ticks, e->v[k - 1].offset, ticks, off) > 0)
		k--;
	if (k > 0 && raw_equal(&e->v[k - 1], rec->payload, rec->length))
		goto out; /* repeats the version in force */
	if (k < e->nversions && raw_equal(&e->v[k], rec->payload, rec->length)) {
		e->v[k].ticks = ticks; /* the next version, from earlier on */
		e->v[k].offset = off;
		goto out;
	}
	if (e->nversions == e->cap) {
		uint32_t cap = e->cap ? 2 * e->cap : 1;
		struct rlog__schema_version *v = realloc(e->v, cap * sizeof(*v));
		if (!v) {
			rc = -ENOMEM;
			goto out_empty;
		}
		e->v = v;
		e->cap = cap;
	}
	struct rlog__schema_version nv = { .ticks = ticks, .offset = off, .raw_len = rec->length };
	nv.schema = schema_copy(&buf->s);
	nv.raw = malloc(rec->length ? rec->length : 1);
	if (!nv.schema || !nv.raw) {
		free(nv.schema);
		free(nv.raw);
		rc = -ENOMEM;
		goto out_empty;
	}
	memcpy(nv.raw, rec->payload, rec->length);
	memmove(&e->v[k + 1], &e->v[k], (e->nversions - k) * sizeof(*e->v));
	e->v[k] = nv;
	e->nversions++;
	goto out;

out_empty:
	/* A new entry left without a version: the reader is being closed
	 * anyway (-ENOMEM fails the open), and lookups never return an entry
	 * without versions. */
out:
	free(buf);
	return rc;
}

const struct rlog_schema *rlog_reader_schema(struct rlog_reader *r, const struct rlog_event *ev)
{
	if (!r || !ev)
		return NULL;
	const struct rlog__schema_entry *e = schema_find(r, ev->pid, ev->id);
	if (!e || e->nversions == 0)
		return NULL;
	/* The last version at or before the event: nearly always the only
	 * one, from a time before the event's (no offsets to compare). */
	if (e->nversions == 1 && e->v[0].ticks < ev->ticks)
		return e->v[0].schema;
	uint32_t lo = 0, hi = e->nversions; /* the answer is in [lo - 1, hi) */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		/* ev->offset is a file offset; the versions keep the view's
		 * (they differ in a wrapped circular file). */
		if (when_cmp(e->v[mid].ticks, e->v[mid].offset, ev->ticks,
			     rlog__voff(r, ev->offset)) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 ? e->v[lo - 1].schema : NULL;
}

const struct rlog_schema *rlog__reader_schema_one(struct rlog_reader *r, uint32_t pid,
						  uint16_t id, uint64_t *from)
{
	const struct rlog__schema_entry *e = schema_find(r, pid, id);
	if (!e || e->nversions != 1)
		return NULL;
	/* rlog_reader_schema's answer for a time after it, by its first test. */
	*from = e->v[0].ticks;
	return e->v[0].schema;
}

const struct rlog_schema *rlog_reader_schema_latest(struct rlog_reader *r, uint32_t pid, uint16_t id)
{
	if (!r)
		return NULL;
	const struct rlog__schema_entry *e = schema_find(r, pid, id);
	return e && e->nversions ? e->v[e->nversions - 1].schema : NULL;
}

uint64_t rlog_reader_bad_schemas(const struct rlog_reader *r, uint64_t *first_offset)
{
	if (first_offset)
		*first_offset = r ? rlog__foff(r, r->bad_schema_offset) : 0;
	return r ? r->bad_schemas : 0;
}

/* ---------------------------------------------------------------- */
/* Names                                                            */
/* ---------------------------------------------------------------- */

/* Replaces *name with the record's, at (ticks, off).  Returns 0 or -ENOMEM. */
static int name_set(char **name, uint64_t *name_ticks, size_t *name_offset,
		    const struct rlog__record *rec, uint64_t ticks, size_t off)
{
	char *n = name_dup(rec->payload, rec->length);
	if (!n)
		return -ENOMEM;
	free(*name);
	*name = n;
	*name_ticks = ticks;
	*name_offset = off;
	return 0;
}

/* The index of pid in the sorted process table, or where it would go. */
static size_t proc_index(const struct rlog_reader *r, uint32_t pid)
{
	size_t lo = 0, hi = r->nprocs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->procs[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int process_name(struct rlog_reader *r, uint32_t pid, const struct rlog__record *rec,
			uint64_t ticks, size_t off)
{
	size_t i = proc_index(r, pid);
	struct rlog__process *p;

	if (i < r->nprocs && r->procs[i].pid == pid) {
		p = &r->procs[i];
		if (when_cmp(ticks, off, p->name_ticks, p->name_offset) < 0)
			return 0; /* an earlier name */
	} else {
		if (rlog__vec_room(&r->procs, r->nprocs, &r->procs_cap, sizeof(*r->procs), 16) < 0)
			return -ENOMEM;
		memmove(&r->procs[i + 1], &r->procs[i], (r->nprocs - i) * sizeof(*p));
		r->nprocs++;
		p = &r->procs[i];
		memset(p, 0, sizeof(*p));
		p->pid = pid;
	}
	return name_set(&p->name, &p->name_ticks, &p->name_offset, rec, ticks, off);
}

static int thread_name(struct rlog__thread *t, const struct rlog__record *rec, uint64_t ticks,
		       size_t off)
{
	if (t->name && when_cmp(ticks, off, t->name_ticks, t->name_offset) < 0)
		return 0;
	return name_set(&t->name, &t->name_ticks, &t->name_offset, rec, ticks, off);
}

int rlog__meta_record(struct rlog_reader *r, struct rlog__thread *th,
		      const struct rlog__record *rec, uint64_t ticks, size_t off)
{
	switch (rec->id) {
	case RLOG_ID_EVENT_SCHEMA:
		return schema_record(r, th->pid, rec, ticks, off);
	case RLOG_ID_THREAD_NAME:
		return thread_name(th, rec, ticks, off);
	case RLOG_ID_PROCESS_NAME:
		return process_name(r, th->pid, rec, ticks, off);
	case RLOG_ID_COUNTER_NAME:
		return rlog__counter_name_record(r, th->pid, rec, ticks, off);
	default:
		return 0;
	}
}

const char *rlog_reader_thread_name(struct rlog_reader *r, uint32_t pid, uint32_t tid)
{
	const struct rlog__thread *t = r ? rlog__thread_find(r, pid, tid) : NULL;
	return t ? t->name : NULL;
}

const char *rlog_reader_process_name(struct rlog_reader *r, uint32_t pid)
{
	if (!r)
		return NULL;
	size_t i = proc_index(r, pid);
	return i < r->nprocs && r->procs[i].pid == pid ? r->procs[i].name : NULL;
}

void rlog__meta_free(struct rlog_reader *r)
{
	for (size_t i = 0; i < r->nschemas; i++) {
		struct rlog__schema_entry *e = &r->schemas[i];
		for (uint32_t k = 0; k < e->nversions; k++) {
			free(e->v[k].schema);
			free(e->v[k].raw);
		}
		free(e->v);
	}
	free(r->schemas);
	rlog__map_free(&r->schema_map);
	free(r->copy_names);
	r->copy_names = NULL;
	for (size_t i = 0; i < r->nprocs; i++)
		free(r->procs[i].name);
	free(r->procs);
	for (size_t i = 0; i < r->nthreads; i++)
		free(r->threads[i].name);
}

/* ---------------------------------------------------------------- */
/* Fields                                                           */
/* ---------------------------------------------------------------- */

int rlog_event_field(const struct rlog_schema *s, const struct rlog_event *ev, unsigned idx,
		     size_t *off, struct rlog_value *v)
{
	if (s == NULL || ev == NULL || off == NULL || v == NULL || idx >= s->field_count)
		return -EINVAL;
	return rlog__value_decode(s, idx, ev->payload, ev->length, off, v);
}

int rlog_event_field_count(const struct rlog_schema *s, const struct rlog_event *ev)
{
	if (s == NULL || ev == NULL)
		return -EINVAL;
	if (s->kind == RLOG_KIND_SPAN) {
		int rule = rlog__span_rule(ev->flagged, ev->flag, ev->length);
		if (rule <= 0)
			return rule;
	}
	return rlog__payload_matches(s, ev->payload, ev->length) ? s->field_count : -EBADMSG;
}

/* ---------------------------------------------------------------- */
/* Copy blocks                                                      */
/* ---------------------------------------------------------------- */

struct copy_walk {
	struct rlog_reader *r;
	struct rlog__thread th;   /* pid and tid only: not a thread of the file */
	size_t data;              /* file offset of the block's data */
};

static int copy_record(void *arg, const struct rlog__record *rec, uint64_t ticks, uint32_t pos)
{
	struct copy_walk *w = arg;
	struct rlog_reader *r = w->r;
	size_t off = w->data + pos;
	if (rec->id == RLOG_ID_THREAD_NAME && !rec->flagged) {
		if (rlog__vec_room(&r->copy_names, r->ncopy_names, &r->copy_names_cap,
				   sizeof(*r->copy_names), 16) < 0)
			return -ENOMEM;
		r->copy_names[r->ncopy_names++] = (struct rlog__copy_name){ w->th.pid, w->th.tid, ticks,
									    off };
		return 0;
	}
	if (rlog__record_kind(rec->id, rec->flagged) != RLOG_RECORD_METADATA)
		return 0;
	return rlog__meta_record(r, &w->th, rec, ticks, off);
}

int rlog__meta_copy_block(struct rlog_reader *r, uint32_t pid, uint32_t tid, size_t offset,
			  uint64_t base_time, uint32_t size)
{
	/* A copy says nothing of the thread's events: its schemas and process
	 * names go to the tables, its thread names wait for the thread table. */
	struct copy_walk w = { .r = r, .th = { .pid = pid, .tid = tid },
			       .data = offset + RLOG__BLOCK_HDR_SIZE };
	return rlog__records_walk(r->data + w.data, size, base_time, copy_record, &w);
}

int rlog__meta_copy_finish(struct rlog_reader *r)
{
	for (size_t i = 0; i < r->ncopy_names; i++) {
		const struct rlog__copy_name *c = &r->copy_names[i];
		struct rlog__thread *t = rlog__thread_find(r, c->pid, c->tid);
		struct rlog__record rec;
		if (!t || rlog__record_decode(r->data + c->offset, r->size - c->offset, &rec) < 0)
			continue; /* a thread without events in the file needs no name */
		int rc = thread_name(t, &rec, c->ticks, c->offset);
		if (rc < 0)
			return rc;
	}
	free(r->copy_names);
	r->copy_names = NULL;
	r->ncopy_names = r->copy_names_cap = 0;
	return 0;
}
