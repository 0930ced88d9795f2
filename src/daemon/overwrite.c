/*
 * overwrite.c - the daemon's side of overwrite mode (RLOG_MODE_OVERWRITE,
 * docs/FORMAT.md "Overwrite mode").
 *
 * A producer that finds no free buffer takes a FULL one (src/lib/thread.c,
 * take_overwritten): CAS FULL -> TAKING, then it loads the descriptor's
 * reader word and steps back if it is 1.  The daemon, before it reads a
 * buffer, stores reader = 1 and then loads the state:
 *
 *   daemon                               producer
 *   store_seq_cst(reader, 1)             CAS(state, FULL -> TAKING)  seq_cst
 *   load_seq_cst(state): OWNED or FULL?  load_seq_cst(reader) == 0?
 *     no: store_release(reader, 0)         no: store_release(state, FULL)
 *     yes: read, publish delivered_*,      yes: count what the daemon had
 *          meta_seen; release reader            not delivered, make it its own
 *
 * Either the daemon sees TAKING (or the new owner's OWNED, with another
 * gen) or the producer sees reader = 1: a buffer is never written while
 * the daemon reads it.  What the daemon delivered of a buffer (to the file,
 * or in a snapshot) is published in the descriptor before reader goes back
 * to 0, so the producer counts as overwritten exactly the rest, in the
 * owner's slot (ow_*); the daemon reports the counters' growth as DATA_LOSS
 * records of cause OVERWRITTEN with the range of time they cover.
 */
#define _GNU_SOURCE
#include "overwrite.h"

#include <string.h>

#include "atomics.h"
#include "drain.h"

bool rlog__overwrite_hold(struct rlog__drain *d, uint32_t idx)
{
	struct rlog_shm_desc *desc = &d->r->desc[idx];
	struct rlog__buffer_view *b = &d->bufs[idx];
	if (b->held)
		return true;
	store_seq_cst(&desc->reader, 1);
	uint32_t st = load_seq_cst(&desc->state);
	if (st != RLOG_BUF_OWNED && st != RLOG_BUF_FULL) {
		store_release(&desc->reader, 0);
		return false;
	}
	/* The state load (seq_cst, so acquire) saw the taker's OWNED store,
	 * which came after its gen store. */
	uint32_t gen = load_relaxed(&desc->gen);
	if (b->started && b->gen != gen) {
		/* Other contents than the ones read so far: those were
		 * overwritten, and counted by the producer that did it. */
		b->started = false;
		b->poisoned = false;
	}
	if (!b->started) {
		b->gen = gen;
		b->events_read = b->bytes_read = 0;
	}
	if (b->snapshot.off != 0 && b->snapshot.gen != gen)
		memset(&b->snapshot, 0, sizeof b->snapshot);
	b->held = true;
	return true;
}

void rlog__overwrite_forget_replaced(struct rlog__drain *d, uint32_t idx)
{
	struct rlog__buffer_view *b = &d->bufs[idx];
	/* A held buffer is not taken: its contents are the ones read. */
	if (!d->overwrite.on || !b->started || b->held)
		return;
	/* gen changes only when a producer takes the buffer: the contents
	 * read so far are gone for good, counted by their taker. */
	if (load_relaxed(&d->r->desc[idx].gen) != b->gen) {
		b->started = false;
		b->poisoned = false;
	}
}

void rlog__overwrite_publish(struct rlog__drain *d, uint32_t idx)
{
	struct rlog_shm_desc *desc = &d->r->desc[idx];
	struct rlog__buffer_view *b = &d->bufs[idx];
	/* Delivered: to the file (the drain), or, in a flight recorder, in
	 * a snapshot; with a file, a snapshot is a copy, and the identity is
	 * the file's.  Seen: what either read of its metadata. */
	uint32_t drained = b->started ? b->read_off : 0;
	uint32_t ev = d->recorder.on ? b->snapshot.events : b->started ? b->events_read : 0;
	uint32_t by = d->recorder.on ? b->snapshot.event_bytes : b->started ? b->bytes_read : 0;
	uint32_t seen = drained > b->snapshot.off ? drained : b->snapshot.off;
	store_relaxed(&desc->delivered_events, ev);
	store_relaxed(&desc->delivered_bytes, by);
	store_relaxed(&desc->meta_seen, seen);
}

void rlog__overwrite_release(struct rlog__drain *d, uint32_t idx)
{
	struct rlog__buffer_view *b = &d->bufs[idx];
	/* A buffer drained whole stays held until it is given back
	 * (drain.c, release_buffer), whoever else reads it meanwhile. */
	if (!b->held || b->giving_back)
		return;
	rlog__overwrite_publish(d, idx);
	b->held = false;
	/* Release: a producer that then loads reader == 0 sees what was
	 * published above. */
	store_release(&d->r->desc[idx].reader, 0);
}

/* Reads slot i's overwrite counters into ev, by, bufs, last. */
static void load_overwritten(const struct rlog_shm_slot *sl, uint64_t *ev, uint64_t *by, uint64_t *bufs,
		    uint64_t *last)
{
	*ev = load_relaxed(&sl->ow_events);
	*by = load_relaxed(&sl->ow_bytes);
	*bufs = load_relaxed(&sl->ow_buffers);
	*last = load_relaxed(&sl->ow_last_time);
}

void rlog__overwrite_report(struct rlog__drain *d, uint32_t i, uint32_t pid, uint32_t tid,
		     uint64_t first)
{
	if (!d->overwrite.on)
		return;
	struct rlog__slot_view *s = &d->slots[i];
	uint64_t ev, by, bufs, last;
	load_overwritten(&d->r->slots[i], &ev, &by, &bufs, &last);
	if (bufs <= s->overwritten.buffers)
		return;
	/* Counters only grow; a smaller one (hostile) reports nothing. */
	uint64_t e = ev > s->overwritten.events ? ev - s->overwritten.events : 0;
	uint64_t b = by > s->overwritten.bytes ? by - s->overwritten.bytes : 0;
	/* A buffer reused after the daemon delivered all of it lost nothing. */
	if (e || b)
		rlog__drain_range_block(d, pid, tid, first, e, b, bufs - s->overwritten.buffers,
					last > first ? last : first);
	s->overwritten.events = ev > s->overwritten.events ? ev : s->overwritten.events;
	s->overwritten.bytes = by > s->overwritten.bytes ? by : s->overwritten.bytes;
	s->overwritten.buffers = bufs;
}

void rlog__overwrite_slot_gone(struct rlog__drain *d, uint32_t i, uint64_t first)
{
	if (!d->overwrite.on)
		return;
	struct rlog_shm_slot *sl = &d->r->slots[i];
	rlog__overwrite_report(d, i, sl->pid, sl->tid, first);
	d->overwrite.reaped_events += load_relaxed(&sl->ow_events);
}

void rlog__overwrite_unreported(struct rlog__drain *d, uint64_t *events, uint64_t *bytes)
{
	if (!d->overwrite.on)
		return;
	for (uint32_t i = 0; i < d->r->slot_count; i++) {
		uint32_t st = load_relaxed(&d->r->slots[i].state);
		if ((st != RLOG_SLOT_ACTIVE && st != RLOG_SLOT_EXITED) || d->slots[i].reaped)
			continue;
		uint64_t ev, by, bufs, last;
		load_overwritten(&d->r->slots[i], &ev, &by, &bufs, &last);
		if (ev > d->slots[i].overwritten.events)
			*events += ev - d->slots[i].overwritten.events;
		if (by > d->slots[i].overwritten.bytes)
			*bytes += by - d->slots[i].overwritten.bytes;
	}
}

uint64_t rlog__overwrite_total(struct rlog__drain *d)
{
	uint64_t total = d->overwrite.reaped_events;
	for (uint32_t i = 0; i < d->r->slot_count && d->overwrite.on; i++) {
		uint32_t st = load_relaxed(&d->r->slots[i].state);
		if ((st == RLOG_SLOT_ACTIVE || st == RLOG_SLOT_EXITED) && !d->slots[i].reaped)
			total += load_relaxed(&d->r->slots[i].ow_events);
	}
	return total;
}
