/*
 * stats.c - a session's statistics copied out of its region (stats.h).
 */
#include "stats.h"

#include "atomics.h"

void rlog__stats_copy(const struct rlog_shm_header *h, struct rlog__stats *o)
{
	const struct rlog_shm_stats *s = &h->stats;
	o->events_written = load_relaxed(&s->events_written);
	o->bytes_written = load_relaxed(&s->bytes_written);
	o->buffers_written = load_relaxed(&s->buffers_written);
	o->events_lost = load_relaxed(&s->events_lost);
	o->bytes_lost = load_relaxed(&s->bytes_lost);
	o->log_buffers_lost = load_relaxed(&s->log_buffers_lost);
	o->corrupt_buffers = load_relaxed(&s->corrupt_buffers);
	o->file_bytes = load_relaxed(&s->file_bytes);
	o->wakeups = load_relaxed(&s->wakeups);
	o->passes = load_relaxed(&s->passes);
	o->realtime_buffers_lost = load_relaxed(&s->realtime_buffers_lost);
	o->file_index = load_relaxed(&s->file_index);
	o->events_overwritten = load_relaxed(&s->events_overwritten);
	o->events_discarded = load_relaxed(&s->events_discarded);
	o->processes_attached = load_relaxed(&h->procs_attached);
	o->processes_refused = load_relaxed(&h->procs_refused);
	o->counter_samples = load_relaxed(&s->counter_samples);
	o->counter_records = load_relaxed(&s->counter_records);
}
