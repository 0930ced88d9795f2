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
#include "ringlog/schema.h"
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
	/* Metadata (names.c): records to write before the thread's next event,
	 * and the name rlog_thread_name() gave the thread. */
	uint8_t meta_pending;         /* RLOG__META_* */
	bool thread_name_set;         /* use thread_name, not prctl(PR_GET_NAME) */
	uint8_t thread_name_len;
	char thread_name[RLOG_THREAD_NAME_MAX];
};

#define RLOG__META_THREAD_NAME 0x1u /* THREAD_NAME: set at every binding */

extern _Thread_local struct rlog__tpriv rlog__tpriv;

/* The attached region (NULL when detached).  The generation, rlog__gen,
 * is declared in ringlog.h. */
extern struct rlog__region *_Atomic rlog__current;

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

/* Moves nested-write losses parked while the thread had no slot to its
 * slot, or to the region's orphan counters. */
void rlog__unpark_nested(struct rlog__tpriv *pv);

/* Hands the thread's current buffer to the daemon (state FULL). */
void rlog__buffer_handover(struct rlog__thread *t, struct rlog__tpriv *pv);

/*
 * Entering and leaving the slow path from a library function (not from the
 * inline write path, which sets busy itself).  rlog__slow_enter returns
 * false if the thread is already inside a write (the caller is a signal
 * handler that interrupted it): the caller then counts a nested write or
 * gives up.  Otherwise it sets the re-entry guard and, if the thread has a
 * slot, busy = 1 (before the slow path's decisive mask load, as the inline
 * path does).  rlog__slow_leave clears both.
 */
bool rlog__slow_enter(struct rlog__thread *t, struct rlog__tpriv *pv);
void rlog__slow_leave(struct rlog__thread *t, struct rlog__tpriv *pv);

/*
 * The slow path's work, between rlog__slow_enter and rlog__slow_leave (or
 * from rlog__write_slow).  Writes, in this order, whatever metadata is
 * pending (PROCESS_NAME, THREAD_NAME), then the schema record of schema if
 * not NULL, then the event (hdr, flagword, payload, len; hdr 0: no event).
 * Sets *schema_written once the schema record is in the buffer.  Results
 * as rlog__write_slow; with no event: 1 (metadata written), 0 (not bound
 * to the current session, or paused: nothing written), -ENOBUFS (no free
 * buffer: still pending; nothing counted).
 */
int rlog__slow(struct rlog__thread *t, struct rlog__tpriv *pv, uint32_t hdr, uint32_t flagword,
	       const void *payload, size_t len, uint64_t now, const struct rlog_schema *schema,
	       bool *schema_written);

/*
 * names.c: the process name, for the slow path.  rlog__process_name_claim
 * returns true if the process's name is not yet in the session of
 * generation gen (or changed since), and claims writing it (tok receives
 * the claim): the caller then writes it and calls rlog__process_name_done
 * with ok = whether the record was written (false hands the claim back,
 * so that the next thread in the slow path tries).  rlog__process_name_get
 * copies the name into out (RLOG_PROCESS_NAME_MAX bytes) and returns its
 * length, 0 if it could not be read consistently (it is being changed).
 * rlog__thread_name_get does the same for the calling thread's name.
 */
bool rlog__process_name_claim(uint32_t gen, uint64_t tok[2]);
void rlog__process_name_done(const uint64_t tok[2], bool ok);
size_t rlog__process_name_get(char *out);
size_t rlog__thread_name_get(struct rlog__tpriv *pv, char *out);

/* In a fork child: forgets a rename that another thread of the parent was
 * making (its lock, a half-changed name). */
void rlog__names_fork_child(void);

/* The longest UTF-8 prefix of s (NUL-terminated) of at most max bytes that
 * does not end inside a character.  Returns its length. */
size_t rlog__utf8_cut(const char *s, size_t max);

#endif
