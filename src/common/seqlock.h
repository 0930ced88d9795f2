/*
 * seqlock.h - a seqlock over atomic words: a few words that go together
 * (struct rlog_shm_sys: a pid list and its count), written rarely by a
 * command and read by the daemon at every pass, with no lock that a dead
 * writer could leave held.
 *
 *   writer                                   reader
 *   ------                                   ------
 *   CAS seq even -> odd (seq_cst)    (1)     s = seq (acquire)          (3)
 *   store each word (release)        (2)     s odd: try again
 *   seq = odd + 1 (release)          (3)     load each word (acquire)   (2)
 *                                            seq != s (relaxed): try again
 *
 * No fence (ThreadSanitizer does not model atomic_thread_fence, and gcc
 * refuses it under -fsanitize=thread): the words themselves are stored
 * with release and loaded with acquire (Boehm, "Can seqlocks get along
 * with programming language memory models?").  A reader whose load (2)
 * sees a word of a write that began after its s synchronizes with that
 * store, so the writer's CAS (1) happens before the reader's second load
 * of seq, which then differs from s; and no load (2) can move after that
 * second load, for they are acquires.  Writers take turns by the CAS: a
 * writer's odd sequence makes the next one's fail.  A writer that dies
 * between (1) and (3) leaves the sequence odd: readers give up after their
 * tries, as with a torn copy, until the next writer, which finds the same
 * odd sequence for a second (a write takes microseconds) and takes the
 * dead one's turn over by CAS odd -> odd + 2.  (A writer stopped for a
 * second in the middle of its few stores would be taken for dead too: the
 * readers check every field as the hostile input it is anyway.)
 *
 * The session's pending category names (enable_names, shm.c and
 * control.c) are a seqlock over plain bytes, copied with memcpy; they keep
 * their own fence-based reader.
 */
#ifndef RLOG_COMMON_SEQLOCK_H
#define RLOG_COMMON_SEQLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "atomics.h"

/* How long an odd sequence may stay before its writer is taken for dead. */
#define RLOG__SEQ_DEAD_NS 1000000000LL

static inline long long rlog__seq_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Takes the writer's turn: returns the odd sequence it holds. */
static inline uint32_t rlog__seq_write_begin(_Atomic uint32_t *seq)
{
	uint32_t s = load_relaxed(seq), seen = s;
	long long since = rlog__seq_now_ns();
	for (;;) {
		if (s != seen) {
			seen = s; /* another write: it gets its own second */
			since = rlog__seq_now_ns();
		}
		/* (1) seq_cst: the word stores (2) cannot move before the odd
		 * sequence. */
		if ((s & 1) == 0) {
			if (atomic_compare_exchange_weak(seq, &s, s + 1))
				return s + 1;
			continue;
		}
		if (rlog__seq_now_ns() - since >= RLOG__SEQ_DEAD_NS &&
		    atomic_compare_exchange_weak(seq, &s, s + 2))
			return s + 2; /* the dead writer's turn */
		struct timespec nap = { 0, 100000 };
		nanosleep(&nap, NULL);
		s = load_relaxed(seq);
	}
}

/* Ends the write that holds odd sequence s.  A compare-and-swap, not a
 * store: a writer that stalled past RLOG__SEQ_DEAD_NS and was overtaken
 * (its turn taken as a dead writer's) must not make the sequence even
 * in the middle of the new writer's section, nor move it back. */
static inline void rlog__seq_write_end(_Atomic uint32_t *seq, uint32_t s)
{
	uint32_t want = s;
	/* (3) release pairs with the reader's first load */
	atomic_compare_exchange_strong_explicit(seq, &want, s + 1, memory_order_release,
						memory_order_relaxed);
}

/* Starts a read: false while a writer is at work (try again). */
static inline bool rlog__seq_read_begin(const _Atomic uint32_t *seq, uint32_t *s)
{
	*s = load_acquire(seq); /* (3) pairs with the writer's end */
	return (*s & 1) == 0;
}

/* True if the words loaded (with acquire, (2)) since rlog__seq_read_begin
 * gave s are one write's. */
static inline bool rlog__seq_read_done(const _Atomic uint32_t *seq, uint32_t s)
{
	return load_relaxed(seq) == s;
}

#endif
