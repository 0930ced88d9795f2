/*
 * system.h - system events: the kernel's tracepoints and perf records,
 * read through perf_event_open(2) per CPU, written as records of the log
 * format in the daemon's system blocks (docs/FORMAT.md, "System events";
 * docs/DESIGN.md, "System events").
 *
 *   rlog__sys_open ── tracefs: ids and formats of the tracepoints selected
 *                  ── perf_event_open per CPU and event; one mmap ring per
 *                     CPU, the CPU's other events redirected into it
 *                  ── emit(): one block of the EVENT_SCHEMA records
 *   rlog__sys_poll ── a fresh (ticks, CLOCK_MONOTONIC_RAW) pair for the times;
 *                     each CPU's ring: samples -> records (session ticks),
 *                     PERF_RECORD_LOST -> DATA_LOSS (cause KERNEL)
 *                  ── emit(): one block per CPU that had records
 *   rlog__sys_stop ── disable, drain, the losses the kernel had not
 *                     reported yet (from the events' counts)
 *
 * The engine knows nothing of the region or the sinks: the daemon gives
 * it a configuration and an emit function (src/daemon/system_out.c).
 */
#ifndef RLOG_SYSTEM_SYSTEM_H
#define RLOG_SYSTEM_SYSTEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "sysflags.h"

/* What to trace (the session's selection, docs/SESSIONS.md). */
struct rlog__sys_config {
	uint64_t flags;          /* RLOG_SYS_* (sysflags.h); 0: no system events */
	const uint32_t *pids;    /* npids processes to keep (0: the whole machine) */
	size_t npids;
	bool follow;             /* keep their children too (from sched_process_fork) */
	uint32_t profile_hz;     /* RLOG_SYS_PROFILE: samples per second per CPU (0: 1000) */
	uint32_t pages_per_cpu;  /* data pages of each CPU's ring, a power of 2 (0: 1024, 4 MiB;
	                            fewer if the kernel's mlock limit refuses them) */
	bool deferred;           /* a reopen: the schemas and records wait for rlog__sys_begin */
};

/* The session's clock, for the conversion of the kernel's times. */
struct rlog__sys_clock {
	uint32_t tick_source;    /* RLOG_TICK_* */
	uint64_t tick_freq_hz;
	struct rlog__clock_sync sync; /* a tick time and CLOCK_MONOTONIC_RAW then */
};

/*
 * Where blocks go: one system block (RLOG_BLOCK_FLAG_DAEMON |
 * RLOG_BLOCK_FLAG_SYSTEM, pid 0, tid = the CPU) of records whose time
 * cursor starts at base_time.  events: the system events in it (not
 * DATA_LOSS, TIME_SYNC or EVENT_SCHEMA).
 */
typedef void rlog__sys_emit_fn(void *arg, uint32_t cpu, uint64_t base_time, const void *data,
			       uint32_t size, uint32_t records, uint32_t events);

/* Statistics; the identity: handed_over = written + lost + filtered. */
struct rlog__sys_stats {
	uint64_t written;      /* system events written (records emitted) */
	uint64_t lost;         /* events the kernel lost (PERF_RECORD_LOST, LOST_SAMPLES, at stop) */
	uint64_t lost_at_stop; /* the part of lost found at stop from the counts */
	uint64_t filtered;     /* events of processes outside the selection, dropped */
	uint64_t handed_over;  /* at stop: the events' own counts, summed */
	uint64_t loss_records; /* DATA_LOSS records written */
	uint64_t clamped;      /* records whose time was before the CPU's previous one */
	uint64_t bytes;        /* record bytes of the events written */
};

struct rlog__sys;

/*
 * Opens the events cfg selects on every online CPU.  A tracepoint this
 * kernel lacks is skipped (said in *why, the rest goes on); an event that
 * cannot be opened at all fails the whole: -EACCES/-EPERM (privileges,
 * perf_event_paranoid), -ENOENT (no tracefs), with a line in why.  The
 * schema block is emitted before the events are enabled.
 */
int rlog__sys_open(const struct rlog__sys_config *cfg, const struct rlog__sys_clock *clk,
		   rlog__sys_emit_fn *emit, void *arg, struct rlog__sys **out, char *why,
		   size_t why_size);

/* Reads every CPU's ring, emitting a block per CPU.  Returns the records
 * emitted (>= 0). */
int rlog__sys_poll(struct rlog__sys *s);

/* Disables the events, reads what is left and counts the losses not yet
 * reported (a DATA_LOSS per CPU with them).  Poll does nothing after. */
void rlog__sys_stop(struct rlog__sys *s);

void rlog__sys_get_stats(const struct rlog__sys *s, struct rlog__sys_stats *st);

/* Stops if not stopped, closes and frees (NULL: nothing). */
void rlog__sys_close(struct rlog__sys *s);

/* Ticks of perf time t (the kernel's, as the rings give it): exposed for
 * the tests. */
uint64_t rlog__sys_ticks(const struct rlog__sys *s, uint64_t t);

/*
 * Changes the scope of an open engine (the daemon's --follow: the
 * session's attached processes as they come and go): with whole, every
 * process of the machine; else the scope becomes the processes of
 * pids[0..n-1]: each is kept from now on, with the threads and the
 * children the engine learnt of for it (kept already, or from now on),
 * and a process no longer among them goes with its threads and the
 * children followed from it; an empty scope keeps nothing rather than
 * everything.  The records still in the rings are filtered by the new
 * scope at the next poll (poll first to read them by the old one).
 * Returns 0 or -ENOMEM (the scope as it was).
 */
int rlog__sys_set_pids(struct rlog__sys *s, const uint32_t *pids, size_t n, bool whole);

/*
 * A reopen without a gap (the daemon's `update`): the new engine is opened
 * deferred and enabled while the old one still records, then the cut is
 * taken, a tick time between the two; the old one keeps only its records
 * before it (rlog__sys_end), and, once closed, the new one only those from
 * it on (rlog__sys_begin, which emits the new schema block at that time,
 * after the old one's last blocks).  The records either drops are counted
 * in filtered, so each engine's identity holds, and each event that both
 * saw is written once.  begin does nothing on an engine not deferred.
 */
void rlog__sys_begin(struct rlog__sys *s, uint64_t from);

/* At the cut of such a reopen, the old engine's taskstats listener
 * (process-counters' exits, pcounters.h) to the new one, with its
 * unread exits and partial sums: two listeners at once would both get
 * the exits of the overlap, and an exit is stamped when read, not when
 * it happened, so the window alone cannot tell whose it is.  Nothing if
 * the new one does not select process-counters (the old one's exits
 * read after the cut are filtered) or the old one has none (the new one
 * opens its own at rlog__sys_begin). */
void rlog__sys_hand_counters(struct rlog__sys *from, struct rlog__sys *to);
void rlog__sys_end(struct rlog__sys *s, uint64_t until);

/*
 * The file descriptors whose rings the engine reads, one per CPU (up to
 * max of them; returns how many): poll(2) says POLLIN on one when a
 * quarter of its ring is written (its wakeup_watermark), so that a reader
 * waiting on them reads a ring as it fills, not only at its next timeout
 * (src/daemon/system_ctl.c).  POLLHUP once its CPU went offline.  Valid
 * until rlog__sys_close.
 */
size_t rlog__sys_fds(const struct rlog__sys *s, int *fds, size_t max);

/* How the kernel's times become ticks ("Times" in source.c): "clockid"
 * (the events stamp with the session's clock itself), "perf-tsc" (the
 * perf mmap page's TSC mapping, inverted) or "raw-pairs"
 * (CLOCK_MONOTONIC_RAW, converted through the pairs taken at each poll;
 * rlog__sys_ticks then takes raw nanoseconds). */
const char *rlog__sys_time_source(const struct rlog__sys *s);

/* The RLOG_SYS_* flags of the events open (a tracepoint this kernel
 * lacks is not; a flag that selects none of them is not either). */
uint64_t rlog__sys_opened(const struct rlog__sys *s);

#endif
