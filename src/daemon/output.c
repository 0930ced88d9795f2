/*
 * output.c - the set of sinks the daemon writes to (sink.h).
 */
#include <errno.h>
#include <string.h>

#include "record.h"
#include "sink.h"

static const struct rlog__sink_stats no_stats;

void rlog__output_init(struct rlog__output *o, size_t meta_limit)
{
	memset(o, 0, sizeof *o);
	rlog__metacache_init(&o->meta, meta_limit);
	rlog__counter_keep_init(&o->counters, RLOG__COUNTER_KEEP_BYTES);
	rlog__counter_keep_init(&o->system, RLOG__SYSTEM_KEEP_BYTES);
}

size_t rlog__output_meta_limit(uint32_t mode, uint64_t max)
{
	size_t meta = RLOG__META_LIMIT;
	if (max && (mode & (RLOG_MODE_CIRCULAR | RLOG_MODE_NEWFILE)) && max / 4 < meta)
		meta = (size_t)(max / 4);
	return meta;
}

int rlog__output_add(struct rlog__output *o, struct rlog__sink *s, bool file)
{
	if (o->n == RLOG__SINKS_MAX)
		return -ENOSPC;
	s->out = o;
	o->sinks[o->n++] = s;
	if (file)
		o->file = s;
	/* The file, if there is one, is the session's record. */
	if (file || o->primary == NULL) {
		if (o->primary)
			o->primary->primary = false;
		o->primary = s;
		s->primary = true;
	}
	return 0;
}

void rlog__output_block(struct rlog__output *o, const struct rlog__out_block *b)
{
	for (unsigned i = 0; i < o->n; i++)
		o->sinks[i]->ops->block(o->sinks[i], b);
}

void rlog__output_file_block(struct rlog__output *o, const struct rlog__out_block *b)
{
	if (o->file)
		o->file->ops->block(o->file, b);
}

void rlog__output_meta(struct rlog__output *o, uint32_t pid, uint32_t tid, uint64_t ticks,
		       const void *rec, uint32_t size)
{
	if (rlog__metacache_add(&o->meta, pid, tid, ticks, rec, size) < 0)
		o->meta.evicted++; /* out of memory: this record will have no copy */
}

struct meta_walk {
	struct rlog__output *out;
	uint32_t pid, tid;
	unsigned id;
	const uint8_t *data;
};

static int meta_one(void *arg, const struct rlog__record *r, uint64_t ticks, uint32_t off)
{
	struct meta_walk *w = arg;
	if (!r->flagged && r->id == w->id)
		rlog__output_meta(w->out, w->pid, w->tid, ticks, w->data + off, r->size);
	return 0;
}

void rlog__output_meta_block(struct rlog__output *o, uint32_t pid, uint32_t tid, uint64_t base_time,
			     const void *data, uint32_t size, unsigned id)
{
	struct meta_walk w = { o, pid, tid, id, data };
	rlog__records_walk(data, size, base_time, meta_one, &w);
}

int rlog__output_flush(struct rlog__output *o)
{
	int first = 0;
	for (unsigned i = 0; i < o->n; i++) {
		int err = o->sinks[i]->ops->flush(o->sinks[i]);
		if (err < 0 && first == 0)
			first = err;
	}
	return first;
}

void rlog__output_poll(struct rlog__output *o)
{
	for (unsigned i = 0; i < o->n; i++)
		if (o->sinks[i]->ops->poll)
			o->sinks[i]->ops->poll(o->sinks[i]);
}

int rlog__output_finish(struct rlog__output *o, const struct rlog_log_marker *refined)
{
	int first = 0;
	for (unsigned i = 0; i < o->n; i++) {
		int err = o->sinks[i]->ops->finish(o->sinks[i], refined);
		if (err < 0 && first == 0)
			first = err;
	}
	return first;
}

void rlog__output_free(struct rlog__output *o)
{
	for (unsigned i = 0; i < o->n; i++)
		o->sinks[i]->ops->free(o->sinks[i]);
	rlog__metacache_free(&o->meta);
	rlog__counter_keep_free(&o->counters);
	rlog__counter_keep_free(&o->system);
	memset(o, 0, sizeof *o);
}

const struct rlog__sink_stats *rlog__output_stats(const struct rlog__output *o)
{
	return o->primary ? &o->primary->st : &no_stats;
}

uint64_t rlog__output_realtime_lost(const struct rlog__output *o)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < o->n; i++)
		n += o->sinks[i]->st.realtime_buffers_lost;
	return n;
}

int rlog__output_error(const struct rlog__output *o, const char **what)
{
	for (unsigned i = 0; i < o->n; i++)
		if (o->sinks[i]->st.last_errno) {
			*what = o->sinks[i]->st.what;
			return -o->sinks[i]->st.last_errno;
		}
	return 0;
}

int rlog__output_copies(struct rlog__output *o, rlog__meta_emit_fn *fn, void *arg)
{
	return rlog__metacache_render(&o->meta, fn, arg);
}
