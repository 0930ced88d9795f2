/*
 * test_drain_takeover - overwrite mode, a buffer the daemon read in part
 * and a producer then took over (docs/FORMAT.md, "Overwrite mode";
 * docs/DECISIONS.md, "Overwrite mode: what a failed hold means").  The
 * daemon's drain (src/daemon/drain.c) runs in this process on a real
 * region and a real file; the producers are played here, step by step:
 *
 *   thread B takes buffer X, writes 10 events; a flush pass reads them
 *   (X is "started" for the daemon, B's); B writes 10 more, hands X over;
 *   thread A takes X over (B's last 10 overwritten), writes its events
 *   0..9 into it, hands it over, and its events 10..19 into buffer Y.
 *
 *   1. A pass runs while a producer is caught taking X (TAKING; it steps
 *      back after the pass), then passes run: A's events are in the file
 *      in order, 0..19, and B's 0..9 with one OVERWRITTEN record of 10.
 *      (The old drain looked for Y's predecessor under B's slot, did not
 *      find it, and wrote Y before X.)
 *   2. The final pass at once: A's 20 events are in the file, in order.
 *      (The old drain sorted X under B's slot, and its hold, finding A's
 *      contents, left X undrained: 10 events neither written nor lost.)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomics.h"
#include "drain.h"
#include "drain_rig.h"
#include "record.h"
#include "sink_file.h"
#include "ringlog/reader.h"
#include "tap.h"

#define BUF_SIZE 4096u
#define ID 1024u

/* A producer thread of ours: its slot, tid, next seq and event number. */
struct fake {
	struct rlog__region *r;
	uint32_t slot, tid;
	uint64_t seq, next;
};

static void claim_slot(struct rlog__region *r, struct fake *f)
{
	f->slot = drain_rig_claim_slot(r, f->tid);
	BAIL_IF(f->slot == UINT32_MAX, "no free slot");
}

/* Makes buffer idx f's next one (its free bit or its takeover done). */
static void own(struct fake *f, uint32_t idx, uint64_t now)
{
	struct rlog_shm_desc *d = &f->r->desc[idx];
	drain_rig_describe(d, f->slot, f->tid, f->seq++, now);
	d->events = d->event_bytes = 0;
	d->last_time = now;
	store_relaxed(&d->meta_end, 0);
	store_relaxed(&d->meta_seen, 0);
	store_relaxed(&d->delivered_events, 0);
	store_relaxed(&d->delivered_bytes, 0);
	store_relaxed(&d->gen, load_relaxed(&d->gen) + 1);
	store_relaxed(&d->write_off, 0);
	store_release(&d->state, RLOG_BUF_OWNED);
}

static void take_free(struct fake *f, uint32_t idx, uint64_t now)
{
	uint64_t bit = UINT64_C(1) << (idx % 64);
	BAIL_IF(!(atomic_fetch_and(&f->r->free_bits[idx / 64], ~bit) & bit), "buffer %u not free",
		idx);
	own(f, idx, now);
}

/* As src/lib/thread.c's take_overwritten: FULL -> TAKING, the owner's
 * undelivered events counted as overwritten, then f's. */
static void take_over(struct fake *f, uint32_t idx, uint64_t now)
{
	struct rlog_shm_desc *d = &f->r->desc[idx];
	uint32_t expect = RLOG_BUF_FULL;
	BAIL_IF(!atomic_compare_exchange_strong(&d->state, &expect, RLOG_BUF_TAKING),
		"buffer %u not FULL", idx);
	BAIL_IF(load_seq_cst(&d->reader) != 0, "buffer %u held", idx);
	struct rlog_shm_slot *owner = &f->r->slots[d->slot];
	uint32_t de = load_relaxed(&d->delivered_events), db = load_relaxed(&d->delivered_bytes);
	fetch_add_relaxed(&owner->ow_events, d->events - de);
	fetch_add_relaxed(&owner->ow_bytes, d->event_bytes - db);
	store_relaxed(&owner->ow_last_time, d->last_time);
	fetch_add_relaxed(&owner->ow_buffers, 1);
	own(f, idx, now);
}

/* Writes n numbered events (payload {tid, number}) into buffer idx, timed
 * now, now + 1, ... */
static void write_events(struct fake *f, uint32_t idx, unsigned n, uint64_t now)
{
	struct rlog_shm_desc *d = &f->r->desc[idx];
	uint8_t *p = rlog__region_buffer(f->r, idx);
	uint32_t off = load_relaxed(&d->write_off);
	for (unsigned i = 0; i < n; i++) {
		uint32_t h = rlog__hdr_make(ID, 16, true), t = (uint32_t)(now + i);
		uint64_t pl[2] = { f->tid, f->next++ };
		memcpy(p + off, &h, 4);
		memcpy(p + off + 4, &t, 4);
		memcpy(p + off + 8, pl, 16);
		off += 24;
		d->events++;
		d->event_bytes += 24;
		d->last_time = now + i;
	}
	store_release(&d->write_off, off);
}

static void hand_over(struct fake *f, uint32_t idx)
{
	store_seq_cst(&f->r->desc[idx].state, RLOG_BUF_FULL);
}

struct rig {
	char name[64], path[128];
	struct rlog__region r;
	struct rlog__output out;
	struct rlog__drain d;
	struct fake a, b;
};

static void rig_open(struct rig *g, const char *tag)
{
	snprintf(g->name, sizeof g->name, "t-takeover-%s-%d", tag, (int)getpid());
	snprintf(g->path, sizeof g->path, "/tmp/t-takeover-%s-%d.rlog", tag, (int)getpid());
	struct rlog__region_params p;
	memset(&p, 0, sizeof p);
	p.buffer_size = BUF_SIZE;
	p.min_buffers = p.max_buffers = 8;
	p.capacity = 8;
	p.enable_mask = ~UINT64_C(0);
	p.log_file_mode = RLOG_MODE_SEQUENTIAL | RLOG_MODE_OVERWRITE;
	ASSERT_EQ(rlog__region_create(g->name, &p, &g->r), 0);
	int fd = open(g->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	BAIL_IF(fd < 0, "cannot create %s", g->path);
	struct rlog__file_opts fo = { .fd = fd, .mode = RLOG_MODE_SEQUENTIAL, .max_block = BUF_SIZE,
				      .pid = 1, .tid = 1, .marker = drain_rig_marker };
	struct rlog__sink *fs;
	rlog__output_init(&g->out, RLOG__META_LIMIT);
	ASSERT_EQ(rlog__sink_file_open(&fo, &fs), 0);
	ASSERT_EQ(rlog__output_add(&g->out, fs, true), 0);
	ASSERT_EQ(rlog__drain_init(&g->d, &g->r, &g->out, RLOG_TICK_MONOTONIC), 0);
	g->a = (struct fake){ .r = &g->r, .tid = 5001 };
	g->b = (struct fake){ .r = &g->r, .tid = 5002 };
	/* B's slot first: X sorts under it (the daemon's stale view) ahead
	 * of A's buffers. */
	claim_slot(&g->r, &g->b);
	claim_slot(&g->r, &g->a);
}

/* One of the daemon's passes: the pass, the write, the give-back. */
static void pass(struct rig *g, enum rlog__drain_mode mode)
{
	rlog__drain_pass(&g->d, mode);
	ASSERT_EQ(rlog__output_flush(&g->out), 0);
	rlog__drain_commit(&g->d);
}

/* The producers' steps up to A's two buffers FULL: X = buffer 0, Y = 1. */
static void setup(struct rig *g)
{
	take_free(&g->b, 0, 1000);
	write_events(&g->b, 0, 10, 1000);
	pass(g, RLOG_DRAIN_FLUSH);
	write_events(&g->b, 0, 10, 1010);
	hand_over(&g->b, 0);
	take_over(&g->a, 0, 2000);
	write_events(&g->a, 0, 10, 2000);
	hand_over(&g->a, 0);
	take_free(&g->a, 1, 3000);
	write_events(&g->a, 1, 10, 3000);
	hand_over(&g->a, 1);
}

/* Ends the session (final losses) and checks the file: A's events 0..19
 * in order, B's 0..9, and OVERWRITTEN records of 10 events in all. */
static void finish(struct rig *g, const char *tag)
{
	rlog__drain_final_losses(&g->d);
	ASSERT_EQ(rlog__output_flush(&g->out), 0);
	rlog__drain_commit(&g->d);
	struct rlog_log_marker mk;
	drain_rig_marker(NULL, &mk);
	ASSERT_EQ(rlog__output_finish(&g->out, &mk), 0);
	rlog__drain_free(&g->d);
	rlog__output_free(&g->out);

	struct rlog_reader *rd;
	ASSERT_EQ(rlog_reader_open(g->path, &rd), 0);
	struct rlog_event ev;
	uint64_t next_a = 0, next_b = 0, out_of_order = 0, overwritten = 0, count[2] = { 0, 0 };
	while (rlog_reader_next(rd, &ev) == 1) {
		if (ev.from_daemon && ev.id == RLOG_ID_DATA_LOSS &&
		    ev.length >= sizeof(struct rlog_data_loss_range)) {
			struct rlog_data_loss_range dl;
			memcpy(&dl, ev.payload, sizeof dl);
			if (dl.loss.cause == RLOG_LOSS_OVERWRITTEN)
				overwritten += dl.loss.events;
			continue;
		}
		if (ev.from_daemon || ev.id != ID || ev.length != 16)
			continue;
		uint64_t v[2];
		memcpy(v, ev.payload, sizeof v);
		uint64_t *next = v[0] == g->a.tid ? &next_a : &next_b;
		count[v[0] == g->a.tid]++;
		out_of_order += v[1] != *next;
		*next = v[1] + 1;
	}
	ASSERT_EQ(rlog_reader_damage_count(rd), 0);
	rlog_reader_close(rd);
	ok(out_of_order == 0, "%s: each thread's events in order (%" PRIu64 " not)", tag,
	   out_of_order);
	ok(count[1] == 20 && next_a == 20, "%s: A's 20 events in the file (%" PRIu64 ", up to %"
	   PRIu64 ")", tag, count[1], next_a);
	ok(count[0] == 10 && next_b == 10, "%s: B's first 10 events in the file (%" PRIu64
	   ", up to %" PRIu64 ")", tag, count[0], next_b);
	ok(overwritten == 10, "%s: B's 10 overwritten events in OVERWRITTEN records (%" PRIu64 ")",
	   tag, overwritten);
	unlink(g->path);
	rlog__region_close(&g->r);
	rlog__region_unlink(g->name);
}

int main(void)
{
	struct rig g;

	rig_open(&g, "taking");
	setup(&g);
	/* A producer CASed X to TAKING and will put FULL back (it saw the
	 * daemon's reader = 1, or unread metadata): the pass sees TAKING. */
	store_seq_cst(&g.r.desc[0].state, RLOG_BUF_TAKING);
	pass(&g, RLOG_DRAIN_FULL);
	store_seq_cst(&g.r.desc[0].state, RLOG_BUF_FULL);
	pass(&g, RLOG_DRAIN_FULL);
	pass(&g, RLOG_DRAIN_FULL);
	finish(&g, "a pass while X is TAKING");

	rig_open(&g, "final");
	setup(&g);
	pass(&g, RLOG_DRAIN_FINAL);
	finish(&g, "the final pass");
	return done_testing();
}
