/*
 * snapshot.h - `ringlog snapshot`: the daemon writes the session's buffers
 * to a file of its own, now or when an armed trigger fires (snapshot.c,
 * docs/SESSIONS.md "Snapshots").
 */
#ifndef RLOG_DAEMON_SNAPSHOT_H
#define RLOG_DAEMON_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drain.h"

/* Losses of a thread whose slot was freed before a snapshot reported them. */
struct rlog__snap_gone {
	uint32_t pid, tid;
	uint64_t time;               /* its last record's time */
	uint64_t events[2], bytes[2];/* NO_BUFFER, NESTED */
	uint64_t ow_events, ow_bytes, ow_buffers, ow_first, ow_last;
};

struct rlog__snap_state {
	uint32_t served;             /* the last request (req_seq) answered */
	/* The armed trigger (RLOG_SNAP_ON_LOSS or ON_EVENT). */
	bool armed, fired;
	uint32_t flags, after_ms;
	char path[RLOG_PATH_MAX];
	uint64_t fired_ns;           /* CLOCK_MONOTONIC when it fired */
	uint64_t lost_at_arm;        /* the session's losses (not overwritten) when armed */
	struct rlog__snap_gone *gone;
	size_t ngone, gone_cap;
	/* The snapshot's daemon identity, for its block 0. */
	uint32_t pid, tid;
};

/* Starts the snapshot state of drain d (d->snap points at s). */
void rlog__snap_init(struct rlog__snap_state *s, struct rlog__drain *d, uint32_t pid,
		     uint32_t tid);
void rlog__snap_free(struct rlog__snap_state *s);

/*
 * Serves the request page (rlog_shm_ctl): snapshots asked for now, a
 * trigger armed or disarmed; takes the snapshot of a trigger that fired
 * and whose --after time has passed.  Called by the daemon once per loop,
 * after a pass's blocks are written and its buffers given back, and after
 * rlog__drain_publish (the on-loss trigger reads the statistics).
 * Returns true while a trigger waits for an event (the drain then reads
 * every buffer's new records on each pass).
 */
bool rlog__snap_poll(struct rlog__snap_state *s, struct rlog__drain *d, uint64_t now_ns);

/* drain.c: slot i is being freed; keep what no snapshot has reported of
 * its losses (a flight recorder: they go in the next snapshot). */
void rlog__snap_slot_gone(struct rlog__drain *d, uint32_t i);

/* A flight recorder stops: counts what the buffers hold that no snapshot
 * took (events_discarded, part of events_lost).  After the final pass,
 * producers quiesced. */
void rlog__snap_discard(struct rlog__drain *d);

#endif
