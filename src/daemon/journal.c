/*
 * journal.c - the metadata journal of a session without a log file
 * (journal.h): its names and schemas, and the ledger of the losses its
 * snapshots reported (docs/FORMAT.md, "The metadata journal").
 *
 *   file header, block 0 (LOG_MARKER)
 *   copy blocks              the metadata cache
 *   per live slot            DATA_LOSS records (thread's pid/tid): the
 *                            losses of the thread all snapshots reported,
 *                            cumulative (NO_BUFFER, NESTED, OVERWRITTEN
 *                            with its buffers)
 *   the daemon's pid/tid     DATA_LOSS records: those of threads whose
 *                            slots are gone
 *   per gone thread          DATA_LOSS records: its losses no snapshot
 *                            reported yet (the next one would have)
 *
 * With it, `ringlog recover` counts a flight recorder's losses exactly:
 * the snapshots hold the ledger's, the recovered file the rest.
 */
#define _GNU_SOURCE
#include "journal.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "atomics.h"
#include "daemon.h"
#include "drain.h"
#include "sink.h"
#include "sink_file.h"
#include "io.h"
#include "snapshot.h"

int rlog__journal_path(const char *name, char *out, size_t n)
{
	char shm[96];
	if (rlog__shm_name(name, shm, sizeof shm) < 0)
		return -1;
	/* shm is "/ringlog.<lower-case name>" */
	int k = snprintf(out, n, "%s%s", RLOG_JOURNAL_PREFIX, shm + strlen(RLOG_SHM_PREFIX));
	return k < 0 || (size_t)k >= n ? -1 : 0;
}

/* A digest of the ledger: a change of any of its numbers changes it
 * (FNV-1a over the words). */
static void mix(uint64_t *h, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		*h = (*h ^ (v & 0xff)) * UINT64_C(0x100000001b3);
}

static bool slot_live(const struct rlog__drain *d, uint32_t i)
{
	uint32_t st = load_relaxed(&d->r->slots[i].state);
	return (st == RLOG_SLOT_ACTIVE || st == RLOG_SLOT_EXITED) && !d->slots[i].reaped;
}

static uint64_t ledger_sum(const struct rlog__drain *d)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (int c = 0; c < 2; c++)
		mix(&h, d->snapshots.total.events[c] + (d->snapshots.total.bytes[c] << 1));
	mix(&h, d->snapshots.total_overwritten.events + (d->snapshots.total_overwritten.buffers << 1));
	for (uint32_t i = 0; i < d->r->slot_count; i++) {
		const struct rlog__snapshot_slot *s = &d->snapshots.slots[i];
		if (!slot_live(d, i) || (s->overwritten.buffers == 0 && s->reported.events[0] == 0 &&
					 s->reported.events[1] == 0))
			continue;
		mix(&h, i);
		mix(&h, d->r->slots[i].tid);
		mix(&h, s->reported.events[0] + (s->reported.events[1] << 1));
		mix(&h, s->overwritten.events + (s->overwritten.buffers << 1));
	}
	for (size_t k = 0; d->snapshots.state && k < d->snapshots.state->ngone; k++) {
		const struct rlog__snap_gone *g = &d->snapshots.state->gone[k];
		mix(&h, g->tid);
		mix(&h, g->events[0] + (g->events[1] << 1) + (g->overwritten_events << 2));
	}
	return h;
}

/* Writes the DATA_LOSS records of losses rep (NO_BUFFER, NESTED) and ow
 * (OVERWRITTEN, from first to last) of thread pid/tid into fs. */
static void put_ledger(struct rlog__sink *fs, uint32_t pid, uint32_t tid, uint64_t first,
		       uint64_t last, const struct rlog__reported *rep,
		       const struct rlog__overwritten *ow)
{
	static const uint32_t causes[2] = { RLOG_LOSS_NO_BUFFER, RLOG_LOSS_NESTED };
	struct rlog__loss_rec rec;
	struct rlog__out_block b;
	for (int c = 0; c < 2; c++) {
		if (rep->events[c] == 0 && rep->bytes[c] == 0)
			continue;
		struct rlog_data_loss dl = { .events = rep->events[c], .bytes = rep->bytes[c],
					     .cause = causes[c] };
		rlog__loss_block_make(&rec, pid, tid, first, &dl, sizeof dl, &b);
		fs->ops->block(fs, &b);
	}
	if (ow->buffers == 0 && ow->events == 0)
		return;
	struct rlog_data_loss_range dr = {
		.loss = { .events = ow->events, .bytes = ow->bytes, .cause = RLOG_LOSS_OVERWRITTEN },
		.blocks = ow->buffers, .first_time = first, .last_time = last > first ? last : first,
	};
	rlog__loss_block_make(&rec, pid, tid, first, &dr, sizeof dr, &b);
	fs->ops->block(fs, &b);
}

static uint64_t minus(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* The ledger (the file's comment above). */
static void put_ledgers(struct rlog__drain *d, struct rlog__sink *fs, uint32_t pid)
{
	struct rlog__region *r = d->r;
	struct rlog__reported gone = d->snapshots.total;
	struct rlog__overwritten gone_overwritten = d->snapshots.total_overwritten;
	for (uint32_t i = 0; i < r->slot_count; i++) {
		if (!slot_live(d, i))
			continue;
		const struct rlog__snapshot_slot *s = &d->snapshots.slots[i];
		uint64_t t = s->time ? s->time : d->start_ticks;
		put_ledger(fs, r->slots[i].pid, r->slots[i].tid, t, t, &s->reported, &s->overwritten);
		for (int c = 0; c < 2; c++) {
			gone.events[c] = minus(gone.events[c], s->reported.events[c]);
			gone.bytes[c] = minus(gone.bytes[c], s->reported.bytes[c]);
		}
		gone_overwritten.events = minus(gone_overwritten.events, s->overwritten.events);
		gone_overwritten.bytes = minus(gone_overwritten.bytes, s->overwritten.bytes);
		gone_overwritten.buffers = minus(gone_overwritten.buffers, s->overwritten.buffers);
	}
	put_ledger(fs, pid, pid, d->start_ticks, d->start_ticks, &gone, &gone_overwritten);
	for (size_t k = 0; d->snapshots.state && k < d->snapshots.state->ngone; k++) {
		const struct rlog__snap_gone *g = &d->snapshots.state->gone[k];
		struct rlog__reported rep = { { g->events[0], g->events[1] },
					      { g->bytes[0], g->bytes[1] } };
		struct rlog__overwritten ow = { g->overwritten_events, g->overwritten_bytes, g->overwritten_buffers };
		put_ledger(fs, g->pid, g->tid, g->overwritten_first, g->overwritten_last, &rep, &ow);
	}
}

void rlog__journal_update(struct rlog__drain *d, const char *name)
{
	struct rlog__region *r = d->r;
	struct rlog__output *out = d->out;
	if (!(r->hdr->log_file_mode & RLOG_MODE_NO_FILE))
		return;
	uint64_t sum = ledger_sum(d);
	if (out->meta.version == d->journal.version && sum == d->journal.sum)
		return;
	char path[160], tmp[176];
	if (rlog__journal_path(name, path, sizeof path) < 0)
		return;
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	/* FORCE: the last update's file is replaced; a link planted in its
	 * place is removed, never written through. */
	int fd = rlog__create_output(tmp, RLOG_OUT_FORCE | RLOG_OUT_OWN, NULL);
	if (fd < 0)
		return;
	uint32_t pid = (uint32_t)getpid();
	struct rlog__file_opts fo = {
		.fd = fd, .mode = RLOG_MODE_SEQUENTIAL, .max_block = r->buffer_size,
		.pid = pid, .tid = pid, .marker = rlog__daemon_marker_fn, .marker_arg = r,
	};
	struct rlog__sink *fs;
	if (rlog__sink_file_open(&fo, &fs) < 0)
		return; /* the sink closed fd */
	rlog__sink_file_copies(fs, out);
	put_ledgers(d, fs, pid);
	struct rlog_log_marker m;
	rlog__daemon_marker(r, &m);
	int err = fs->ops->flush(fs);
	int err2 = fs->ops->finish(fs, &m);
	fs->ops->free(fs);
	if (err < 0 || err2 < 0 || rename(tmp, path) < 0) {
		unlink(tmp);
		return;
	}
	d->journal.version = out->meta.version;
	d->journal.sum = sum;
}

void rlog__journal_snapshot_loss(struct rlog__drain *d, const void *pl, uint32_t len)
{
	struct rlog_data_loss dl;
	if (len < sizeof dl)
		return;
	memcpy(&dl, pl, sizeof dl);
	if (dl.cause == RLOG_LOSS_NO_BUFFER || dl.cause == RLOG_LOSS_NESTED) {
		int c = dl.cause == RLOG_LOSS_NESTED;
		d->snapshots.total.events[c] += dl.events;
		d->snapshots.total.bytes[c] += dl.bytes;
	} else if (dl.cause == RLOG_LOSS_OVERWRITTEN) {
		d->snapshots.total_overwritten.events += dl.events;
		d->snapshots.total_overwritten.bytes += dl.bytes;
		if (len >= sizeof(struct rlog_data_loss_range)) {
			struct rlog_data_loss_range dr;
			memcpy(&dr, pl, sizeof dr);
			d->snapshots.total_overwritten.buffers += dr.blocks;
		}
	}
}

void rlog__journal_snapshot_done(struct rlog__drain *d)
{
	char name[RLOG_NAME_MAX + 1];
	snprintf(name, sizeof name, "%.*s", RLOG_NAME_MAX, d->r->hdr->name);
	rlog__drain_publish(d);
	rlog__journal_update(d, name);
}

void rlog__journal_remove(const char *name)
{
	char path[160];
	if (rlog__journal_path(name, path, sizeof path) == 0)
		unlink(path);
}
