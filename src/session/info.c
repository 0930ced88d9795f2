/*
 * info.c - a session's properties and live statistics, copied out of its
 * region for `ringlog query` and `ringlog list` (ETW's
 * EVENT_TRACE_CONTROL_QUERY).
 *
 * The daemon publishes statistics with relaxed stores (a reader may see a
 * mixture of two drain passes while the session runs; they are exact once
 * the state is STOPPED): relaxed loads here too.
 */
#define _GNU_SOURCE
#include "session.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "atomics.h"
#include "lock.h"
#include "procstat.h"

void rlog__sys_stats_copy(const struct rlog__region *r, struct rlog__stats *o)
{
	const struct rlog_shm_ctl *c = r->ctl;
	o->sys_written = load_relaxed(&c->sys_written);
	o->sys_lost = load_relaxed(&c->sys_lost);
	o->sys_filtered = load_relaxed(&c->sys_filtered);
	o->sys_handed_over = load_relaxed(&c->sys_handed_over);
	o->sys_rundown_written = load_relaxed(&c->sys_rundown_written);
	o->sys_rundown_lost = load_relaxed(&c->sys_rundown_lost);
	o->sink_chunks_acked = load_relaxed(&c->sink_chunks_acked);
	o->sink_bytes_acked = load_relaxed(&c->sink_bytes_acked);
	o->sink_events_acked = load_relaxed(&c->sink_events_acked);
	o->sink_chunks_queued = load_relaxed(&c->sink_chunks_queued);
	o->sink_bytes_queued = load_relaxed(&c->sink_bytes_queued);
	o->sink_retries = load_relaxed(&c->sink_retries);
	o->sink_chunks_lost = load_relaxed(&c->sink_chunks_lost);
	o->sink_events_lost = load_relaxed(&c->sink_events_lost);
}

static void info_fill(const struct rlog__region *r, struct rlog__session_info *o)
{
	const struct rlog_shm_header *h = r->hdr;
	memset(o, 0, sizeof *o);
	o->snapshot_trigger = load_acquire(&r->ctl->trigger);
	o->snapshots = load_acquire(&r->ctl->snapshots);
	snprintf(o->name, sizeof o->name, "%.*s", RLOG_NAME_MAX, h->name);
	snprintf(o->log_file, sizeof o->log_file, "%.*s", RLOG_PATH_MAX - 1, h->log_file);
	snprintf(o->last_error, sizeof o->last_error, "%.*s", 255, h->last_error);
	o->state = load_acquire(&h->state);
	o->log_file_mode = h->log_file_mode;
	o->daemon_pid = h->daemon_pid;
	o->buffer_size = r->buffer_size;
	o->min_buffers = r->min_buffers;
	o->max_buffers = load_relaxed(&h->max_buffers);
	o->capacity = r->buffer_count;
	o->number_of_buffers = load_relaxed(&h->number_of_buffers);
	o->free_buffers = rlog__region_free_count(r);
	o->high_water_pct = r->high_water_pct;
	o->flush_timer_ms = load_relaxed(&h->flush_timer_ms);
	o->age_limit = h->age_limit;
	o->drain_threads = h->drain_threads ? h->drain_threads : RLOG__DRAIN_THREADS_DEFAULT;
	/* Those the daemon got running, if it says (fewer when no more
	 * could be created). */
	if (r->ctl->drain_running)
		o->drain_threads = r->ctl->drain_running;
	o->max_file_size = h->max_file_size;
	o->tick_source = h->tick_source;
	o->tick_freq_hz = h->tick_freq_hz;
	o->enable_mask = load_relaxed(&h->enable_mask);
	rlog__categories_copy(h, o->categories);
	rlog__enable_pending_copy(h, o->enable_pending, sizeof o->enable_pending);
	o->counter_mask = load_relaxed(&h->counter_mask);
	o->counter_period_ms = load_relaxed(&h->counter_period_ms);
	rlog__sys_props_get(h, &o->system); /* -EAGAIN: shown as none this time */
	o->system_recording = rlog__sys_recording(h);
	for (uint32_t i = 0; i < RLOG_SHM_COUNTERS; i++)
		o->app_counters += load_relaxed(&r->counters[i].state) == RLOG_COUNTER_SET;
	for (uint32_t i = 0; i < r->slot_count; i++) {
		o->producer_threads += load_relaxed(&r->slots[i].state) == RLOG_SLOT_ACTIVE;
		o->processes += load_relaxed(&r->procs[i].state) == RLOG_PROC_ACTIVE;
	}
	for (uint32_t i = 0; i < r->buffer_count; i++) {
		struct rlog_shm_desc *d = &r->desc[i];
		uint32_t st = load_acquire(&d->state);
		if (st == RLOG_BUF_FULL) {
			/* events is stored before the release of FULL (FORMAT.md). */
			uint32_t ev = d->events, de = load_relaxed(&d->delivered_events);
			o->buffers_not_drained++;
			o->events_not_drained += ev > de ? ev - de : 0;
		} else if (st == RLOG_BUF_OWNED && load_relaxed(&d->write_off) > 0) {
			o->buffers_held++;
		}
	}
	rlog__stats_copy(h, &o->stats);
	rlog__sys_stats_copy(r, &o->stats);
}

/*
 * True if session name is ACTIVE or STOPPING and its daemon is gone: no
 * daemon holds its lock (common/lock.h), and its daemon_pid is dead or is
 * a process that does not map the session (the pid was reused).  The
 * second look keeps a daemon of an earlier ringlog, which takes no lock,
 * from being called orphaned.
 */
static bool orphaned(const char *name, uint32_t state, uint32_t daemon_pid)
{
	if (state != RLOG_STATE_ACTIVE && state != RLOG_STATE_STOPPING)
		return false;
	int fd = rlog__daemon_lock(name);
	if (fd < 0)
		return false; /* held: a daemon (or a recovery) runs */
	close(fd);
	if (daemon_pid == 0 || daemon_pid > INT32_MAX || rlog__process_dead((pid_t)daemon_pid, 0))
		return true;
	char shm[96], path[128];
	if (rlog__shm_name(name, shm, sizeof shm) < 0)
		return false;
	snprintf(path, sizeof path, "/dev/shm%s", shm);
	return !rlog__maps_object((pid_t)daemon_pid, NULL, path);
}

int rlog__session_query(const char *name, struct rlog__session_info *out)
{
	if (rlog__name_validate(name) < 0)
		return -EINVAL;
	struct rlog__region r;
	int err = rlog__region_open(name, &r);
	if (err < 0)
		return err;
	info_fill(&r, out);
	rlog__region_close(&r);
	out->orphaned = orphaned(name, out->state, out->daemon_pid);
	return 0;
}

struct list_ctx {
	void (*fn)(int err, const struct rlog__session_info *info, void *arg);
	void *arg;
};

static void list_one(const char *name, void *arg)
{
	struct list_ctx *c = arg;
	struct rlog__session_info info;
	struct rlog__region r;
	int err = rlog__region_open(name, &r);
	if (err < 0) {
		memset(&info, 0, sizeof info);
		snprintf(info.name, sizeof info.name, "%s", name);
		c->fn(err, &info, c->arg);
		return;
	}
	info_fill(&r, &info);
	rlog__region_close(&r);
	info.orphaned = orphaned(name, info.state, info.daemon_pid);
	c->fn(0, &info, c->arg);
}

int rlog__session_list(void (*fn)(int err, const struct rlog__session_info *info, void *arg),
		       void *arg)
{
	struct list_ctx c = { fn, arg };
	return rlog__region_list(list_one, &c);
}
