/*
 * seqlock.h - the region's seqlocks: a few words that go together (a list
 * of names, a pid list and its count), written rarely by a command and
 * read by the daemon at every pass, with no lock a dead writer could
 * leave held forever.
 *
 *   writer                                   reader
 *   ------                                   ------
 *   CAS seq even -> odd (seq_cst)    (1)     s = seq (acquire)       (2)
 *   store the fields                         s odd: try again
 *   seq = even + 2 (release)         (2)     load the fields
 *                                            fence (acquire)         (1)
 *                                            seq != s: try again
 *
 * Writers take turns by the CAS: another writer's odd sequence makes it
 * fail.  A writer that dies between (1) and its release leaves the
 * sequence odd: readers then give up after their tries (-EAGAIN), the
 * next writer waits for ever; the region's writers are ringlog's own
 * commands, which do nothing between the two but stores.
 */
#ifndef RLOG_COMMON_SEQLOCK_H
#define RLOG_COMMON_SEQLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "atomics.h"

/* Takes the writer's turn: returns the even sequence it replaced. */
static inline uint32_t rlog__seq_write_begin(_Atomic uint32_t *seq)
{
	uint32_t s;
	/* (1) The CAS is seq_cst: the stores that follow cannot move before
	 * the odd sequence (pairs with the reader's fence). */
	do {
		s = load_relaxed(seq) & ~1u;
	} while (!atomic_compare_exchange_weak(seq, &s, s + 1));
	return s;
}

/* Ends the write begun at sequence s. */
static inline void rlog__seq_write_end(_Atomic uint32_t *seq, uint32_t s)
{
	store_release(seq, s + 2); /* (2) pairs with the reader's acquire */
}

/* Starts a read: false while a writer is at work (try again). */
static inline bool rlog__seq_read_begin(const _Atomic uint32_t *seq, uint32_t *s)
{
	*s = load_acquire(seq); /* (2) pairs with the writer's release */
	return (*s & 1) == 0;
}

/* True if what was read since rlog__seq_read_begin gave s is whole. */
static inline bool rlog__seq_read_done(const _Atomic uint32_t *seq, uint32_t s)
{
	atomic_thread_fence(memory_order_acquire); /* (1) */
	return load_relaxed(seq) == s;
}

#endif
