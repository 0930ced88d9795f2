/*
 * drain_rig.h - for tests that run the daemon's drain (src/daemon/drain.c)
 * in their own process on a real region, playing the producers: the
 * file's LOG_MARKER and a slot claimed as a thread of this process.
 */
#ifndef RLOG_TESTS_DRAIN_RIG_H
#define RLOG_TESTS_DRAIN_RIG_H

#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "shm.h"
#include "ringlog/format.h"

/* The LOG_MARKER of a file of buffers of DRAIN_RIG_BUF_SIZE bytes. */
#ifndef DRAIN_RIG_BUF_SIZE
#define DRAIN_RIG_BUF_SIZE 4096u
#endif
static inline void drain_rig_marker(void *arg, struct rlog_log_marker *m)
{
	(void)arg;
	memset(m, 0, sizeof *m);
	m->tick_freq_hz = 1000000000u;
	m->tick_source = RLOG_TICK_MONOTONIC;
	m->buffer_size = DRAIN_RIG_BUF_SIZE;
}

/* Claims a free slot for thread tid of this process; UINT32_MAX if none. */
static inline uint32_t drain_rig_claim_slot(struct rlog__region *r, uint32_t tid)
{
	for (uint32_t i = 0; i < r->slot_count; i++) {
		uint32_t expect = RLOG_SLOT_FREE;
		if (atomic_compare_exchange_strong(&r->slots[i].state, &expect, RLOG_SLOT_ACTIVE)) {
			r->slots[i].pid = (uint32_t)getpid();
			r->slots[i].tid = tid;
			return i;
		}
	}
	return UINT32_MAX;
}

/* A producer's fields of buffer d's descriptor, as a thread (slot, tid)
 * of this process fills them when it takes the buffer (src/lib/thread.c):
 * its seq, base time, no losses. */
static inline void drain_rig_describe(struct rlog_shm_desc *d, uint32_t slot, uint32_t tid,
				      uint64_t seq, uint64_t base)
{
	d->pid = (uint32_t)getpid();
	d->tid = tid;
	d->slot = slot;
	d->seq = seq;
	d->base_time = base;
	memset(d->lost_events, 0, sizeof d->lost_events);
	memset(d->lost_bytes, 0, sizeof d->lost_bytes);
}

#endif
