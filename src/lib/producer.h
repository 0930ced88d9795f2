/*
 * producer.h - the producer library's internal state (not installed).
 *
 * Process state: the region attached to, a generation number bumped at
 * every attach and detach, and the hooks (atfork, atexit, thread-exit key).
 * Thread state: the public struct rlog__thread the inline write path uses
 * (include/ringlog.h), plus struct rlog__tpriv below, which only the slow
 * path touches.
 */
#ifndef RLOG_LIB_PRODUCER_H
#define RLOG_LIB_PRODUCER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "ringlog.h"
#include "shm.h"

struct rlog__tpriv {
	struct rlog__region *region;  /* region of the thread's slot */
	struct rlog_shm_slot *slot;   /* NULL when unbound */
	struct rlog_shm_desc *desc;   /* current buffer's descriptor, or NULL */
	uint32_t slot_idx;
	uint32_t next_buffer;         /* where the round-robin search for a free buffer starts */
	uint32_t gen;                 /* process generation the binding belongs to */
	uint32_t pid, tid;
	volatile sig_atomic_t in_slow; /* re-entry guard for the unbound slow path */
	bool exiting;                 /* thread-exit hooks ran: writes are no-ops */
	bool key_set;
	/* Nested writes (signal handlers) that hit the slow path before the
	 * thread had a slot: parked here, moved to the slot by the interrupted
	 * slow path once it has one.  Atomic: a handler adds, the thread takes. */
	_Atomic uint64_t parked_nested_events;
	_Atomic uint64_t parked_nested_bytes;
	uint64_t lost_events;         /* for rlog_thread_stats */
	uint64_t lost_bytes;
};

extern _Thread_local struct rlog__tpriv rlog__tpriv;

/* The attached region (NULL when detached) and the generation. */
extern struct rlog__region *_Atomic rlog__current;
extern _Atomic uint32_t rlog__gen;

/* The word rlog__mask points at while detached: always 0. */
extern _Atomic uint64_t rlog__zero_mask;

/*
 * ThreadSanitizer sees the threads of one process only.  A buffer goes from
 * one producer thread to another through the daemon, in another process
 * (handover -> daemon drains -> free bitmap -> take), so TSan cannot see
 * that chain and would report the next owner's descriptor writes as a race
 * with the previous owner's.  These annotations tell it about the chain;
 * they compile to nothing without TSan.
 */
#if defined(__SANITIZE_THREAD__)
#define RLOG__TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RLOG__TSAN 1
#endif
#endif
#ifdef RLOG__TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define rlog__tsan_acquire(p) __tsan_acquire((void *)(p))
#define rlog__tsan_release(p) __tsan_release((void *)(p))
#else
#define rlog__tsan_acquire(p) ((void)(p))
#define rlog__tsan_release(p) ((void)(p))
#endif

/* Registers the thread-exit, atfork and atexit hooks once per process. */
void rlog__hooks_init(void);

/* Releases the calling thread's binding: hands its buffer to the daemon,
 * marks its slot EXITED.  Safe to call when unbound. */
void rlog__thread_unbind(void);

/* Hands the thread's current buffer to the daemon (state FULL). */
void rlog__buffer_handover(struct rlog__thread *t, struct rlog__tpriv *pv);

#endif
