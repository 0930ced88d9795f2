/*
 * snapshot.c - `ringlog snapshot`: the current contents of a session's
 * buffers, partial ones included, written by the daemon to a log file of
 * their own while producers go on writing (docs/SESSIONS.md "Snapshots").
 *
 * A snapshot file is an ordinary sequential log file that decodes alone:
 *
 *   file header, block 0 (LOG_MARKER)
 *   metadata copies          every process and thread name and schema the
 *                            daemon has seen (its cache), even when the
 *                            buffers that carried them were overwritten
 *   per thread, in the order it took its buffers:
 *     DATA_LOSS records      what the thread lost since the previous
 *                            snapshot (overwritten, no buffer, nested)
 *     its blocks             a buffer's records from 0, or, with
 *                            --since-last, from where the previous
 *                            snapshot left it
 *   counter blocks           the daemon's latest COUNTER records, kept
 *                            by its output (counter_keep.h): all, or,
 *                            with --since-last, those no snapshot held
 *   system blocks            likewise the daemon's latest system blocks,
 *                            ending with a rundown made now (snapshot.h)
 *
 * Buffers are read one at a time, each held (overwrite.c) only while it is
 * copied, so producers keep every other buffer.  With --since-last the
 * snapshots of a flight recorder together hold each event once, or count
 * it in exactly one DATA_LOSS: what a snapshot took is "delivered"
 * (desc.delivered_*), and a producer that reuses the buffer counts only
 * the rest as overwritten.
 *
 * Requests come through the region's request page (struct rlog_shm_ctl);
 * a trigger (--on-loss, --on-event) is armed there and fires here.
 */
#define _GNU_SOURCE
#include "snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomics.h"
#include "clock.h"
#include "daemon.h"
#include "drain.h"
#include "futex.h"
#include "journal.h"
#include "overwrite.h"
#include "pool.h"
#include "record.h"
#include "sink_file.h"
#include "io.h"

/* What one snapshot wrote. */
struct snap_result {
	int status;
	uint64_t events, lost, bytes;
	char message[256];
};

/* One snapshot being written. */
struct snap_job {
	struct rlog__drain *d;
	struct rlog__sink *fs;
	bool since_last;
	bool *told;                  /* per slot: its losses are in the file */
	uint32_t *gap;               /* per slot: index + 1 of a buffer of it the snapshot
	                                could not hold (taken over), 0 if none */
	uint64_t lost;
};

/* A daemon block of one DATA_LOSS record (payload pl, len bytes). */
static void put_loss(struct snap_job *j, uint32_t pid, uint32_t tid, uint64_t time, const void *pl,
		     uint32_t len)
{
	struct rlog__loss_rec rec;
	struct rlog__out_block b;
	struct rlog_data_loss dl = rlog__loss_block_make(&rec, pid, tid, time, pl, len, &b);
	/* A buffer reused after a snapshot took all of it lost nothing. */
	if (dl.events == 0 && dl.bytes == 0)
		return;
	j->fs->ops->block(j->fs, &b);
	j->lost += dl.events;
	rlog__journal_snapshot_loss(j->d, pl, len);
}

/* The DATA_LOSS records of a thread's losses since the previous snapshot:
 * cumulative counters ev/by (NO_BUFFER, NESTED) and ow (overwritten), of
 * which rep and rep_ow were reported; first is the time of its last
 * record in a snapshot (or the session's start). */
static void put_losses(struct snap_job *j, uint32_t pid, uint32_t tid, uint64_t first,
		       const uint64_t ev[2], const uint64_t by[2], struct rlog__reported *rep,
		       const struct rlog__overwritten *ow, uint64_t ow_last,
		       struct rlog__overwritten *rep_ow)
{
	static const uint32_t causes[2] = { RLOG_LOSS_NO_BUFFER, RLOG_LOSS_NESTED };
	for (int c = 0; c < 2; c++) {
		struct rlog_data_loss dl = {
			.events = ev[c] > rep->events[c] ? ev[c] - rep->events[c] : 0,
			.bytes = by[c] > rep->bytes[c] ? by[c] - rep->bytes[c] : 0, .cause = causes[c],
		};
		put_loss(j, pid, tid, first, &dl, sizeof dl);
		rep->events[c] = ev[c] > rep->events[c] ? ev[c] : rep->events[c];
		rep->bytes[c] = by[c] > rep->bytes[c] ? by[c] : rep->bytes[c];
	}
	if (ow->buffers > rep_ow->buffers) {
		struct rlog_data_loss_range dl = {
			.loss = { .events = ow->events > rep_ow->events ? ow->events - rep_ow->events : 0,
				  .bytes = ow->bytes > rep_ow->bytes ? ow->bytes - rep_ow->bytes : 0,
				  .cause = RLOG_LOSS_OVERWRITTEN },
			.blocks = ow->buffers - rep_ow->buffers, .first_time = first,
			.last_time = ow_last > first ? ow_last : first,
		};
		put_loss(j, pid, tid, first, &dl, sizeof dl);
		*rep_ow = *ow;
	}
}

/* Slot i's losses since the previous snapshot: before its first block
 * (once), and again at the end (again: only what was counted meanwhile,
 * a buffer of it a producer took over while the snapshot ran). */
static void slot_losses(struct snap_job *j, uint32_t i, bool again)
{
	if (j->told[i] && !again)
		return;
	j->told[i] = true;
	struct rlog__drain *d = j->d;
	struct rlog_shm_slot *sl = &d->r->slots[i];
	struct rlog__snapshot_slot *s = &d->snapshots.slots[i];
	uint64_t ev[2], by[2];
	for (int c = 0; c < 2; c++) {
		ev[c] = load_acquire(&sl->lost_events[c]);
		by[c] = load_acquire(&sl->lost_bytes[c]);
	}
	struct rlog__overwritten ow = { load_relaxed(&sl->ow_events), load_relaxed(&sl->ow_bytes),
					load_relaxed(&sl->ow_buffers) };
	uint64_t first = s->time ? s->time : d->start_ticks;
	put_losses(j, sl->pid, sl->tid, first, ev, by, &s->reported, &ow,
		   load_relaxed(&sl->ow_last_time), &s->overwritten);
}

/* How long a snapshot waits for producers in the middle of taking a
 * buffer over (a preempted one: milliseconds; a dead one: never). */
#define SETTLE_NS UINT64_C(20000000)

/* Waits until buffer idx is not TAKING (its taker has counted what it
 * overwrote in the owner's slot), SETTLE_NS at most. */
static void settle_taker(struct rlog__drain *d, uint32_t idx)
{
	uint64_t deadline = rlog__monotonic_ns() + SETTLE_NS;
	while (load_acquire(&d->r->desc[idx].state) == RLOG_BUF_TAKING &&
	       rlog__monotonic_ns() < deadline)
		sched_yield();
}

/* Copies what buffer idx (held) has for this snapshot into the file. */
static void put_buffer(struct snap_job *j, uint32_t idx)
{
	struct rlog__drain *d = j->d;
	struct rlog__region *r = d->r;
	struct rlog_shm_desc *desc = &r->desc[idx];
	struct rlog__buffer_view *b = &d->bufs[idx];
	uint32_t slot = desc->slot, pid = desc->pid, tid = desc->tid;
	uint32_t gen = load_relaxed(&desc->gen);
	if (slot >= r->slot_count)
		return;
	slot_losses(j, slot, false);
	if (j->gap[slot]) {
		/* A buffer of this thread before this one was taken over while
		 * the snapshot went through the pool: its events lie between
		 * the thread's blocks written so far and this one, and so does
		 * its DATA_LOSS (docs/FORMAT.md, struct rlog_data_loss_range),
		 * once its taker has counted it. */
		settle_taker(d, j->gap[slot] - 1);
		j->gap[slot] = 0;
		slot_losses(j, slot, true);
	}
	uint32_t from = 0;
	uint64_t cursor = desc->base_time;
	if (j->since_last && b->snapshot.off) {
		from = b->snapshot.off;
		cursor = b->snapshot.cursor;
	}
	/* Pairs with the producer's store_release(write_off). */
	uint32_t wo = load_acquire(&desc->write_off);
	if (wo > r->buffer_size || (wo & 3) || wo < from || wo == from)
		return;
	uint32_t n = wo - from;
	/* Decoded in place (drain.c); the file copies the bytes accepted. */
	const uint8_t *src = rlog__region_buffer(r, idx) + from;
	struct rlog__chunk c;
	rlog__drain_decode(d, src, n, pid, tid, cursor, &c);
	if (c.size > 0) {
		struct rlog__out_block ob = {
			.flags = 0, .pid = pid, .tid = tid, .base_time = c.start, .data = src,
			.size = c.size, .records = c.records, .events = c.events,
			.event_bytes = c.event_bytes,
		};
		j->fs->ops->block(j->fs, &ob);
		d->snapshots.slots[slot].time = c.cursor;
	}
	/* What this buffer's contents have now been in a snapshot: a full
	 * snapshot reads from 0 again, so only what lies past the previous
	 * snapshot's end is delivered for the first time. */
	uint32_t before_ev = from < b->snapshot.off ? b->snapshot.events : 0;
	uint32_t before_by = from < b->snapshot.off ? b->snapshot.event_bytes : 0;
	uint32_t end = c.bad ? wo : from + c.size;
	if (end >= b->snapshot.off) {
		if (d->recorder.on) {
			d->recorder.delivered_events += c.events > before_ev ? c.events - before_ev : 0;
			d->recorder.delivered_bytes += c.event_bytes > before_by ? c.event_bytes - before_by : 0;
		}
		b->snapshot.events = from ? b->snapshot.events + c.events : c.events;
		b->snapshot.event_bytes = from ? b->snapshot.event_bytes + c.event_bytes : c.event_bytes;
		b->snapshot.off = end;
		b->snapshot.cursor = c.cursor;
		b->snapshot.gen = gen;
	}
}

/* Losses of freed slots, kept for this snapshot. */
static void put_gone(struct snap_job *j, struct rlog__snap_state *s)
{
	for (size_t k = 0; k < s->ngone; k++) {
		struct rlog__snap_gone *g = &s->gone[k];
		struct rlog__reported rep = { { 0, 0 }, { 0, 0 } };
		struct rlog__overwritten none = { 0, 0, 0 };
		struct rlog__overwritten ow = { g->overwritten_events, g->overwritten_bytes, g->overwritten_buffers };
		put_losses(j, g->pid, g->tid, g->overwritten_first, g->events, g->bytes, &rep, &ow, g->overwritten_last,
			   &none);
	}
	s->ngone = 0;
}

/* The buffers a snapshot reads, in (slot, seq) order: d->snapshots.order[0 .. n). */
static uint32_t candidates(struct rlog__drain *d)
{
	struct rlog__region *r = d->r;
	uint32_t n = 0;
	rlog__pool_sync(r, &d->pool); /* buffers producers added since the last pass */
	for (uint32_t i = 0; i < d->pool; i++) {
		uint32_t st = load_acquire(&r->desc[i].state);
		if ((st != RLOG_BUF_OWNED && st != RLOG_BUF_FULL) || !rlog__desc_sane(r, &r->desc[i]))
			continue;
		d->snapshots.scan_slot[i] = r->desc[i].slot;
		d->snapshots.scan_seq[i] = r->desc[i].seq;
		d->snapshots.order[n++] = i;
	}
	rlog__sort_by_slot_seq(d->snapshots.order, n, d->snapshots.scan_slot, d->snapshots.scan_seq);
	return n;
}

static void fail(struct snap_result *res, int err, const char *what, const char *path)
{
	res->status = -err;
	snprintf(res->message, sizeof res->message, "%s %s: %s", what, path,
		 rlog__output_strerror(err));
}

/*
 * A buffer the snapshot could not hold because a producer was taking it
 * over (TAKING) is lost to it: the producer counts its events as
 * overwritten before it makes it OWNED.  Waits until no buffer is TAKING,
 * so that the counts are in the slots when this snapshot reads them at
 * its end: the gap is reported in the snapshot that has it, not in the
 * next one.
 */
static void settle_takers(struct rlog__drain *d)
{
	if (!d->overwrite.on)
		return;
	uint64_t deadline = rlog__monotonic_ns() + SETTLE_NS;
	for (uint32_t i = 0; i < d->pool; i++)
		while (load_acquire(&d->r->desc[i].state) == RLOG_BUF_TAKING &&
		       rlog__monotonic_ns() < deadline)
			sched_yield();
}

/* Writes one snapshot to path. */
static void take(struct rlog__snap_state *s, struct rlog__drain *d, const char *path,
		 uint32_t flags, struct snap_result *res)
{
	memset(res, 0, sizeof *res);
	struct rlog__region *r = d->r;
	int fd = rlog__create_output(path, (flags & RLOG_SNAP_FORCE) ? RLOG_OUT_FORCE : 0, NULL);
	if (fd < 0) {
		fail(res, -fd, fd == -EEXIST ? "file exists (use --force to overwrite):"
					     : "cannot create", path);
		return;
	}
	struct rlog__file_opts fo = {
		.fd = fd, .mode = RLOG_MODE_SEQUENTIAL, .max_block = r->buffer_size,
		.pid = s->pid, .tid = s->tid, .marker = rlog__daemon_marker_fn, .marker_arg = r,
	};
	struct snap_job j = { .d = d, .since_last = (flags & RLOG_SNAP_SINCE_LAST) != 0 };
	j.told = calloc(r->slot_count, sizeof *j.told);
	j.gap = calloc(r->slot_count, sizeof *j.gap);
	int err = j.told && j.gap ? rlog__sink_file_open(&fo, &j.fs) : -ENOMEM;
	if (err < 0) {
		if (!j.told || !j.gap)
			close(fd);
		free(j.told);
		free(j.gap);
		fail(res, -err, "writing", path);
		return;
	}
	/* The names and schemas of every process and thread seen so far. */
	rlog__sink_file_copies(j.fs, d->out);
	uint32_t n = candidates(d);
	for (uint32_t k = 0; k < n; k++) {
		uint32_t idx = d->snapshots.order[k];
		bool held = rlog__drain_hold_scanned(d, idx, d->snapshots.scan_slot[idx], d->snapshots.scan_seq[idx]);
		/* A hold that saw TAKING may have met a producer that saw
		 * reader = 1 and stepped back (both do, at times: overwrite.c):
		 * once it is done, the buffer may hold what candidates() saw
		 * still, and is no gap.  A few tries, each after the taker. */
		for (int t = 0; !held && d->overwrite.on && t < 4; t++) {
			settle_taker(d, idx);
			held = rlog__drain_hold_scanned(d, idx, d->snapshots.scan_slot[idx], d->snapshots.scan_seq[idx]);
		}
		if (!held) {
			/* Taken over since candidates() saw it: reported
			 * before the thread's next block here, or at the end. */
			if (d->snapshots.scan_slot[idx] < r->slot_count)
				j.gap[d->snapshots.scan_slot[idx]] = idx + 1;
			continue;
		}
		put_buffer(&j, idx);
		rlog__overwrite_release(d, idx);
	}
	settle_takers(d);
	for (uint32_t i = 0; i < r->slot_count; i++) {
		uint32_t st = load_acquire(&r->slots[i].state);
		if ((st == RLOG_SLOT_ACTIVE || st == RLOG_SLOT_EXITED) && !d->slots[i].reaped)
			slot_losses(&j, i, true);
	}
	put_gone(&j, s);
	/* The counters' records are not in the buffers: the daemon's copy
	 * of its latest ones (counter_keep.h). */
	rlog__output_counters_to(d->out, j.fs, j.since_last);
	/* So are the system events': the latest the output kept, ending
	 * with a rundown of this moment, so that the snapshot names every
	 * process and thread of the scope however long ago a trigger was
	 * armed (the kept blocks may have dropped older rundowns). */
	if (s->rundown != NULL)
		s->rundown(s->rundown_arg);
	rlog__output_system_to(d->out, j.fs, j.since_last);
	err = j.fs->ops->flush(j.fs);
	struct rlog_log_marker m;
	rlog__daemon_marker(r, &m);
	int err2 = j.fs->ops->finish(j.fs, &m);
	res->events = j.fs->st.events_written;
	res->bytes = j.fs->st.file_bytes;
	res->lost = j.lost;
	if (err < 0 || err2 < 0) {
		int e = err < 0 ? -err : -err2;
		snprintf(res->message, sizeof res->message, "%s %s: %s",
			 j.fs->st.what[0] ? j.fs->st.what : "writing", path, strerror(e));
		res->status = -e;
	}
	j.fs->ops->free(j.fs);
	free(j.told);
	free(j.gap);
	rlog__journal_snapshot_done(d);
}

/* Publishes a snapshot's result and wakes `ringlog snapshot --wait`. */
static void publish(struct rlog_shm_ctl *ctl, const char *path, const struct snap_result *res)
{
	ctl->last_status = res->status;
	ctl->last_events = res->events;
	ctl->last_lost = res->lost;
	ctl->last_bytes = res->bytes;
	snprintf(ctl->last_path, sizeof ctl->last_path, "%s", path);
	snprintf(ctl->message, sizeof ctl->message, "%s", res->message);
	/* Pairs with the requester's load_acquire(snapshots). */
	store_release(&ctl->snapshots, load_relaxed(&ctl->snapshots) + 1);
	rlog__futex_wake(&ctl->snapshots, INT_MAX);
}

/* Answers request seq with status (and message, if it failed). */
static void answer(struct rlog_shm_ctl *ctl, uint32_t seq, int status, const char *message)
{
	ctl->status = status;
	if (status < 0)
		snprintf(ctl->message, sizeof ctl->message, "%s", message);
	store_release(&ctl->done_seq, seq);
	rlog__futex_wake(&ctl->done_seq, INT_MAX);
}

/* The session's losses that count for --on-loss: all of them, but the
 * events a flight recorder overwrites, which is what it is for. */
static uint64_t losses(struct rlog__drain *d)
{
	const struct rlog_shm_stats *st = &d->r->hdr->stats;
	uint64_t lost = load_relaxed(&st->events_lost);
	uint64_t ow = load_relaxed(&st->events_overwritten);
	return d->recorder.on && lost >= ow ? lost - ow : lost;
}

/* Reads and serves a new request. */
static void serve(struct rlog__snap_state *s, struct rlog__drain *d, uint32_t seq)
{
	struct rlog_shm_ctl *ctl = d->r->ctl;
	/* The request is the requester's: copied once, then checked. */
	uint32_t kind = ctl->kind, flags = ctl->flags, id = ctl->event_id, flag = ctl->event_flag;
	uint32_t after = ctl->after_ms;
	char path[RLOG_PATH_MAX];
	memcpy(path, ctl->path, sizeof path);
	path[sizeof path - 1] = '\0';
	if (kind == RLOG_CTL_SINK) {
		char msg[200] = "the daemon adds no sink";
		int st = -EINVAL;
		if (flags != 0)
			snprintf(msg, sizeof msg, "the request is not one this daemon knows");
		else
			st = s->sink_add ? s->sink_add(s->sink_arg, path, msg, sizeof msg) : -ENOTSUP;
		answer(ctl, seq, st, msg);
		return;
	}
	if (kind != RLOG_CTL_SNAPSHOT || (flags & ~0x3fu) || (flags & RLOG_SNAP_ON_LOSS &&
	    flags & RLOG_SNAP_ON_EVENT) || ((flags & RLOG_SNAP_ON_EVENT) && (id < 16 ||
	    id > RLOG_ID_MAX || flag > 0xffff))) {
		answer(ctl, seq, -EINVAL, "the request is not one this daemon knows");
		return;
	}
	if (flags & RLOG_SNAP_DISARM) {
		bool was = s->armed;
		s->armed = s->fired = false;
		d->watch.id = 0;
		store_release(&ctl->trigger, RLOG_TRIGGER_NONE);
		answer(ctl, seq, was ? 0 : -ENOENT, "no snapshot trigger is armed");
		return;
	}
	if (path[0] != '/') {
		answer(ctl, seq, -EINVAL, "the snapshot's path is not absolute");
		return;
	}
	if (flags & (RLOG_SNAP_ON_LOSS | RLOG_SNAP_ON_EVENT)) {
		if (s->armed) {
			answer(ctl, seq, -EBUSY, "a snapshot trigger is armed already (disarm it "
						 "first: ringlog snapshot NAME --disarm)");
			return;
		}
		s->armed = true;
		s->fired = false;
		s->flags = flags;
		s->after_ms = after;
		memcpy(s->path, path, sizeof path);
		s->lost_at_arm = losses(d);
		d->watch.hit = false;
		d->watch.id = (flags & RLOG_SNAP_ON_EVENT) ? id : 0;
		d->watch.flagged = (flags & RLOG_SNAP_FLAG) != 0;
		d->watch.flag = (uint16_t)flag;
		store_release(&ctl->trigger, RLOG_TRIGGER_ARMED);
		answer(ctl, seq, 0, "");
		return;
	}
	struct snap_result res;
	take(s, d, path, flags, &res);
	publish(ctl, path, &res);
	answer(ctl, seq, res.status, res.message);
}

bool rlog__snap_poll(struct rlog__snap_state *s, struct rlog__drain *d, uint64_t now_ns)
{
	struct rlog_shm_ctl *ctl = d->r->ctl;
	/* Acquire pairs with the requester's release of req_seq: the request
	 * it wrote before is seen. */
	uint32_t seq = load_acquire(&ctl->req_seq);
	if (seq != s->served) {
		s->served = seq;
		serve(s, d, seq);
	}
	if (s->armed && !s->fired &&
	    (d->watch.hit || ((s->flags & RLOG_SNAP_ON_LOSS) && losses(d) > s->lost_at_arm))) {
		s->fired = true;
		s->fired_ns = now_ns;
		d->watch.id = 0;
		store_release(&ctl->trigger, RLOG_TRIGGER_FIRED);
	}
	if (s->fired && now_ns - s->fired_ns >= (uint64_t)s->after_ms * 1000000u) {
		struct snap_result res;
		take(s, d, s->path, s->flags, &res);
		s->armed = s->fired = false;
		store_release(&ctl->trigger, RLOG_TRIGGER_NONE);
		publish(ctl, s->path, &res);
	}
	return s->armed && !s->fired && d->watch.id != 0;
}

struct rlog__recorder_stats rlog__recorder_stats(const struct rlog__drain *d)
{
	const struct rlog__flight_recorder *f = &d->recorder;
	return (struct rlog__recorder_stats){ f->delivered_events, f->delivered_bytes,
					      f->discarded_events, f->discarded_bytes };
}

int rlog__snapshots_init(struct rlog__snapshots *s, const struct rlog__region *r)
{
	memset(s, 0, sizeof *s);
	s->slots = calloc(r->slot_count, sizeof *s->slots);
	s->order = malloc(r->buffer_count * sizeof *s->order);
	s->scan_slot = calloc(r->buffer_count, sizeof *s->scan_slot);
	s->scan_seq = calloc(r->buffer_count, sizeof *s->scan_seq);
	return s->slots && s->order && s->scan_slot && s->scan_seq ? 0 : -ENOMEM;
}

void rlog__snapshots_free(struct rlog__snapshots *s)
{
	free(s->slots);
	free(s->order);
	free(s->scan_slot);
	free(s->scan_seq);
	s->slots = NULL;
	s->order = s->scan_slot = NULL;
	s->scan_seq = NULL;
}

/* Keeps what no snapshot has reported of slot i's losses, for the next
 * snapshot (a flight recorder). */
static void keep_gone(struct rlog__drain *d, uint32_t i)
{
	struct rlog__snap_state *s = d->snapshots.state;
	if (s == NULL || !d->recorder.on)
		return;
	struct rlog_shm_slot *sl = &d->r->slots[i];
	const struct rlog__snapshot_slot *ds = &d->snapshots.slots[i];
	struct rlog__snap_gone g = { .pid = sl->pid, .tid = sl->tid };
	bool any = false;
	for (int c = 0; c < 2; c++) {
		uint64_t e = load_relaxed(&sl->lost_events[c]), b = load_relaxed(&sl->lost_bytes[c]);
		g.events[c] = e > ds->reported.events[c] ? e - ds->reported.events[c] : 0;
		g.bytes[c] = b > ds->reported.bytes[c] ? b - ds->reported.bytes[c] : 0;
		any |= g.events[c] || g.bytes[c];
	}
	uint64_t oe = load_relaxed(&sl->ow_events), ob = load_relaxed(&sl->ow_bytes);
	uint64_t obuf = load_relaxed(&sl->ow_buffers);
	if (obuf > ds->overwritten.buffers) {
		g.overwritten_events = oe > ds->overwritten.events ? oe - ds->overwritten.events : 0;
		g.overwritten_bytes = ob > ds->overwritten.bytes ? ob - ds->overwritten.bytes : 0;
		g.overwritten_buffers = obuf - ds->overwritten.buffers;
		g.overwritten_first = ds->time ? ds->time : d->start_ticks;
		g.overwritten_last = load_relaxed(&sl->ow_last_time);
		any = true;
	} else {
		g.overwritten_first = ds->time ? ds->time : d->start_ticks;
	}
	if (!any)
		return;
	if (s->ngone == s->gone_cap) {
		size_t cap = s->gone_cap ? s->gone_cap * 2 : 16;
		struct rlog__snap_gone *p = realloc(s->gone, cap * sizeof *p);
		if (p == NULL)
			return; /* the losses stay in the statistics, not in a snapshot */
		s->gone = p;
		s->gone_cap = cap;
	}
	s->gone[s->ngone++] = g;
}

void rlog__snap_slot_gone(struct rlog__drain *d, uint32_t i)
{
	keep_gone(d, i);
	memset(&d->snapshots.slots[i], 0, sizeof d->snapshots.slots[i]);
}

void rlog__snap_discard(struct rlog__drain *d)
{
	struct rlog__region *r = d->r;
	if (!d->recorder.on)
		return;
	/* Counting only: no trigger, no metadata matters any more. */
	d->watch.id = 0;
	for (uint32_t i = 0; i < d->pool; i++) {
		if (!rlog__overwrite_hold(d, i))
			continue;
		struct rlog__buffer_view *b = &d->bufs[i];
		struct rlog_shm_desc *desc = &r->desc[i];
		uint32_t wo = load_acquire(&desc->write_off);
		uint32_t from = b->snapshot.off;
		if (wo <= r->buffer_size && !(wo & 3) && wo > from) {
			struct rlog__chunk c;
			rlog__drain_decode(d, rlog__region_buffer(r, i) + from, wo - from, desc->pid, desc->tid,
					   from ? b->snapshot.cursor : desc->base_time, &c);
			d->recorder.discarded_events += c.events;
			d->recorder.discarded_bytes += c.event_bytes;
		}
		rlog__overwrite_release(d, i);
	}
}

void rlog__snap_init(struct rlog__snap_state *s, struct rlog__drain *d, uint32_t pid,
		     uint32_t tid)
{
	memset(s, 0, sizeof *s);
	s->pid = pid;
	s->tid = tid;
	/* Every request not answered yet is for this daemon: one made
	 * between the session becoming ACTIVE and this point (the daemon
	 * serves after ACTIVE: a requester may come first, and would wait
	 * for its answer for ever), or one a dead daemon left unanswered
	 * whose requester, seeing this daemon, waits for it (--resume).
	 * Acquire pairs with the answering daemon's release. */
	s->served = load_acquire(&d->r->ctl->done_seq);
	d->snapshots.state = s;
}

void rlog__snap_free(struct rlog__snap_state *s)
{
	free(s->gone);
	s->gone = NULL;
	s->ngone = s->gone_cap = 0;
}
