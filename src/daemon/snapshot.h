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

#include "ledger.h"
#include "shm.h"

struct rlog__drain;

/* Where the snapshots left a buffer (--since-last goes on from there). */
struct rlog__snapshot_mark {
	uint32_t gen;        /* the contents it is about (the descriptor's gen); valid if off */
	uint32_t off;        /* bytes of it in snapshots */
	uint32_t events;     /* their events ... */
	uint32_t event_bytes;/* ... and record bytes */
	uint64_t cursor;     /* the time after them */
};

/* What the last snapshot reported of a slot. */
struct rlog__snapshot_slot {
	struct rlog__reported reported;
	struct rlog__overwritten overwritten;
	uint64_t time;               /* time of its last record in a snapshot */
};

/* A flight recorder (overwrite mode, no file): the daemon writes only
 * snapshots, and the buffers stay until overwritten. */
struct rlog__flight_recorder {
	bool on;
	uint64_t delivered_events;   /* events snapshots delivered first */
	uint64_t delivered_bytes;
	uint64_t discarded_events;   /* events no snapshot took, at stop */
	uint64_t discarded_bytes;
};

struct rlog__snap_state;

/* The snapshots' state that lives as long as the drain. */
struct rlog__snapshots {
	struct rlog__snap_state *state;      /* the requests' state, or NULL */
	struct rlog__snapshot_slot *slots;   /* per slot */
	/* A snapshot's scratch: the buffers it reads, in (slot, seq) order,
	 * and per buffer its slot and seq as read. */
	uint32_t *order, *scan_slot;
	uint64_t *scan_seq;
	/* Every loss the snapshots' DATA_LOSS records counted since the
	 * session began, per cause (journal.c keeps it for recovery). */
	struct rlog__reported total;
	struct rlog__overwritten total_overwritten;
};

/* The snapshot trigger's event: an event of ID id (and, if flagged,
 * FLAGGED with flag) sets hit (the drain's decode looks). */
struct rlog__watch {
	uint32_t id;                 /* 0: none */
	uint16_t flag;
	bool flagged;
	bool hit;
};

/* A flight recorder's part of the statistics (drain.c publishes them):
 * events and bytes its snapshots delivered first, and those no snapshot
 * took (at stop).  All 0 for a session with a file. */
struct rlog__recorder_stats {
	uint64_t delivered_events, delivered_bytes, discarded_events, discarded_bytes;
};
struct rlog__recorder_stats rlog__recorder_stats(const struct rlog__drain *d);

/* Returns 0 or -ENOMEM. */
int rlog__snapshots_init(struct rlog__snapshots *s, const struct rlog__region *r);
void rlog__snapshots_free(struct rlog__snapshots *s);

/* Losses of a thread whose slot was freed before a snapshot reported them. */
struct rlog__snap_gone {
	uint32_t pid, tid;
	uint64_t time;               /* its last record's time */
	uint64_t events[2], bytes[2];/* NO_BUFFER, NESTED */
	uint64_t overwritten_events, overwritten_bytes, overwritten_buffers;
	uint64_t overwritten_first, overwritten_last; /* the time range they cover */
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
	/* Called by each snapshot (a trigger's too) once the buffers are
	 * copied, before the daemon's kept system blocks are: the system
	 * events' rundown, which those blocks then end with (NULL: none). */
	void (*rundown)(void *arg);
	void *rundown_arg;
	/* Serves an RLOG_CTL_SINK request (its text, from the page's path):
	 * returns 0 or -errno with msg (n bytes) saying why (NULL: refused). */
	int (*sink_add)(void *arg, const char *req, char *msg, size_t n);
	void *sink_arg;
};

/* Starts the snapshot state of drain d (d->snapshots.state points at s). */
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

/* procs.c: slot i is being freed; keep what no snapshot has reported of
 * its losses (a flight recorder: they go in the next snapshot), and
 * forget the slot. */
void rlog__snap_slot_gone(struct rlog__drain *d, uint32_t i);

/* A flight recorder stops: counts what the buffers hold that no snapshot
 * took (events_discarded, part of events_lost).  After the final pass,
 * producers quiesced. */
void rlog__snap_discard(struct rlog__drain *d);

#endif
