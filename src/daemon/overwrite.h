/*
 * overwrite.h - the daemon's side of overwrite mode (overwrite.c).
 */
#ifndef RLOG_DAEMON_OVERWRITE_H
#define RLOG_DAEMON_OVERWRITE_H

#include <stdbool.h>
#include <stdint.h>

struct rlog__drain;

/* Overwrite mode's state (RLOG_MODE_OVERWRITE, QNX's circular list of
 * buffers); the per-buffer hold and the per-slot reports are in the
 * drain's views (drain.h: held, gen, overwritten, drained_whole). */
struct rlog__overwrite {
	bool on;                     /* the session is in overwrite mode */
	uint64_t reaped_events;      /* overwritten events of slots freed since */
	uint64_t reaped_bytes;
};

/* Holds buffer idx for reading (reader = 1) if it is OWNED or FULL; a
 * buffer whose contents changed since the daemon last read it starts over.
 * Returns false (not held) if a producer is taking it or it is free. */
bool rlog__overwrite_hold(struct rlog__drain *d, uint32_t idx);

/* Without holding it: if a producer has taken buffer idx since the daemon
 * began reading it (another gen), the daemon's view of it (started, its
 * slot and read offset) is about contents that are gone: forgotten, so
 * that a scan takes the buffer for what its descriptor says now. */
void rlog__overwrite_forget_replaced(struct rlog__drain *d, uint32_t idx);

/* Publishes what the daemon delivered of held buffer idx (delivered_*,
 * meta_seen). */
void rlog__overwrite_publish(struct rlog__drain *d, uint32_t idx);

/* Publishes, then lets go of buffer idx (reader = 0).  Nothing if not held. */
void rlog__overwrite_release(struct rlog__drain *d, uint32_t idx);

/* Reports slot i's overwritten events not reported yet: a DATA_LOSS of
 * cause OVERWRITTEN for thread pid/tid, timed first (the thread's last
 * record delivered before them). */
void rlog__overwrite_report(struct rlog__drain *d, uint32_t i, uint32_t pid, uint32_t tid,
		     uint64_t first);

/* Slot i is being freed (procs.c): reports what it has not (timed
 * first), and keeps its overwritten events in the session's total. */
void rlog__overwrite_slot_gone(struct rlog__drain *d, uint32_t i, uint64_t first);

/* Adds the slots' overwritten events not reported yet to *events, *bytes. */
void rlog__overwrite_unreported(struct rlog__drain *d, uint64_t *events, uint64_t *bytes);

/* Events overwritten before they were delivered, since the session began. */
uint64_t rlog__overwrite_total(struct rlog__drain *d);

#endif
