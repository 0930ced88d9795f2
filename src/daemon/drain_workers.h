/*
 * drain_workers.h - the daemon's extra drain threads (`ringlog start
 * --drain-threads N`): they check the records of FULL buffers, a pass's
 * worth at a time, while the daemon's thread keeps everything whose order
 * matters (docs/DESIGN.md, "Several drain threads").
 *
 * What they do is independent per buffer: the common record's walk
 * (rlog__drain_plain) over a FULL buffer's committed bytes, from its base
 * time, up to its first record of another kind, and the CRC-32C of the
 * bytes walked (which the daemon's thread combines with the block
 * header's: rlog__block_header_make_pre).  The daemon's thread
 * posts the pass's FULL buffers, takes its share of them, waits for the
 * rest, then runs the pass as before, in (slot, seq) order: a buffer
 * whose walk is done starts its decode where the walk stopped, with the
 * same counts and times a walk of its own would have found.  Sequence
 * numbers, the order of blocks, losses, block headers and the writes stay on
 * the daemon's thread, so the file is the one a single thread writes.
 */
#ifndef RLOG_DAEMON_DRAIN_WORKERS_H
#define RLOG_DAEMON_DRAIN_WORKERS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "shm.h"


/* One FULL buffer's walk: inputs read by the daemon's thread (write_off
 * after a load_acquire, the base time), and what the walk found. */
struct rlog__walk_job {
	const uint8_t *data;       /* the buffer's bytes in the region */
	uint32_t idx, wo;          /* buffer index, committed bytes walked */
	uint64_t base;             /* the time cursor before its first record */
	uint32_t size;             /* bytes of common records from the start */
	uint32_t count, bytes;     /* those records (events), their bytes */
	uint64_t cursor;           /* the time after the last of them */
	uint32_t crc;              /* CRC-32C (from 0) of those size bytes */
};

struct rlog__drain_workers {
	uint32_t n;                /* extra threads (0: the daemon's thread alone) */
	pthread_t *tids;
	pthread_mutex_t mu;
	pthread_cond_t go, done_cv;
	uint64_t gen;              /* batches posted (under mu) */
	uint32_t finished;         /* jobs of this batch done (under mu) */
	uint32_t active;           /* workers in this batch (under mu) */
	bool open;                 /* the batch takes workers (under mu) */
	bool quit;
	struct rlog__walk_job *jobs;
	uint32_t njobs, cap;
	_Atomic uint32_t next;     /* the next job to take */
	uint32_t *by_buffer;       /* per buffer: its job + 1 in this pass, or 0 */
	uint32_t buffer_count;
	int create_err;            /* why fewer threads than asked were created, or 0 */
};

/* threads: the daemon's drain threads, its own included (1: none extra;
 * at most RLOG__DRAIN_THREADS_MAX), for a pool of buffer_count buffers.
 * A thread that cannot be created is not fatal: w->n extra threads run
 * (maybe 0) and w->create_err says why there are not more.  Returns 0, or
 * -errno for want of memory or threads out of range (then none run). */
int rlog__drain_workers_start(struct rlog__drain_workers *w, uint32_t threads,
			      uint32_t buffer_count);

/* Stops and joins the threads, frees everything (safe on a zeroed w). */
void rlog__drain_workers_stop(struct rlog__drain_workers *w);

/* Runs the jobs w->jobs[0 .. w->njobs) on every thread, the caller's
 * included, and returns once all are done. */
void rlog__drain_workers_run(struct rlog__drain_workers *w);

/* The walk of buffer idx in this pass, or NULL. */
static inline struct rlog__walk_job *rlog__drain_workers_job(struct rlog__drain_workers *w,
							      uint32_t idx)
{
	if (w->n == 0 || idx >= w->buffer_count || w->by_buffer[idx] == 0)
		return 0;
	return &w->jobs[w->by_buffer[idx] - 1];
}

/* Forgets this pass's jobs. */
void rlog__drain_workers_clear(struct rlog__drain_workers *w);

#endif
