/*
 * producer.h - the producer library's internal state (not installed).
 *
 * Process state: the set of sessions the process records into (at most
 * RLOG_MAX_SESSIONS), a generation number bumped at every change of it
 * and in a fork child, and the hooks (atfork, atexit, thread-exit key).
 *
 * Thread state: one binding per session of the set, the thread's slot and
 * buffer there.  Binding 0's hot part is the public struct rlog__thread
 * that the inline write path uses (include/ringlog.h); the other bindings'
 * hot parts, and every binding's cold part, are in struct rlog__tpriv,
 * which only the slow path touches.  With one session, every write the
 * fast path can take goes there; with two or more, the inline path
 * (rlog__write_several) writes into each binding that is ready, through
 * rlog__thread.multi[k] (binding k's hot part), and calls the library
 * (write.c) for the others, which writes into each session whose enable
 * mask asks for it, on a fast path per binding while it has room.
 */
#ifndef RLOG_LIB_PRODUCER_H
#define RLOG_LIB_PRODUCER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "ringlog.h"
#include "ringlog/schema.h"
#include "shm.h"
#include "test_hooks.h"

/* One attached session: a mapping of its region.  Never freed or unmapped
 * (a thread may still be writing into one); attach.c keeps them in a list. */
struct rlog__session {
	struct rlog__region region;
	char name[RLOG_NAME_MAX + 1]; /* as attached (the header's copy is not trusted) */
	/* This process's entry in the region's process table, + 1; 0 while
	 * none is claimed (a fork child claims its own at its first write). */
	_Atomic uint32_t proc;
	/* names.c: (version << 1 | 1) of the process name last claimed for
	 * writing into this session; 0: none yet.  Reset in a fork child. */
	_Atomic uint64_t pname_done;
	/* declared.c, with two or more sessions: bit id set once the schema
	 * record of declared type id is in this session. */
	_Atomic uint64_t schemas[(RLOG_ID_MAX + 1) / 64];
	struct rlog__session *next;
};

/* The sessions the process records into, as published at one generation:
 * never changed once published (attach.c publishes a new one). */
struct rlog__set {
	uint32_t gen;                 /* the generation it was published at */
	uint32_t n;                   /* 0 .. RLOG_MAX_SESSIONS */
	struct rlog__session *s[RLOG_MAX_SESSIONS];
	struct rlog__set *next;       /* every set ever published (never freed) */
	/* With two or more sessions, what rlog__mask points at: always ~0.
	 * A word per set, so that the inline path tells the set its
	 * bindings were armed for (rlog__thread.multi_mask) by the pointer
	 * it loads anyway. */
	_Atomic uint64_t all;
};

/*
 * One binding of a thread to session k of the set: its slot and current
 * buffer there.  h is the binding's hot part: &rlog__thread for binding 0
 * (where h->busy is the thread's guard), bindings[k].hot for the others
 * (where h->busy is the slot's busy flag, NULL while unbound).
 */
struct rlog__bind {
	struct rlog__thread *h;
	struct rlog__session *sess;   /* NULL when unbound */
	struct rlog__region *region;  /* &sess->region, or NULL */
	struct rlog_shm_slot *slot;   /* NULL when unbound */
	struct rlog_shm_desc *desc;   /* current buffer's descriptor, or NULL */
	uint32_t slot_idx;
	uint32_t next_buffer;         /* where the round-robin search for a free buffer starts */
	uint64_t starved_at;          /* tick time of the last search that found no free
	                                 buffer; 0: the last one found one (write.c) */
	uint64_t starve_hz;           /* the session's tick rate, clamped, read at binding */
	uint8_t meta_pending;         /* RLOG__META_*: records due before the next event here */
	/* What the current buffer holds, for its descriptor at handover. */
	bool multi;                   /* written with two or more sessions (the inline path's
	                                 rlog__write_several and write.c) */
	uint32_t buf_other;           /* bytes of its TIME_SYNC and metadata records */
	uint64_t written_mark;        /* *rlog__bind_events(b) when it was taken */
	struct rlog__thread hot;      /* the hot part of bindings 1 ..; unused in binding 0 */
};

struct rlog__tpriv {
	struct rlog__bind bind[RLOG_MAX_SESSIONS];
	uint32_t gen;                 /* process generation the bindings belong to */
	uint32_t pid, tid;
	/* The in-write guard while binding 0 has no slot: rlog__thread.busy
	 * points here then, and at binding 0's slot's busy flag while bound. */
	_Atomic uint32_t guard;
	bool exiting;                 /* thread-exit hooks ran: writes are no-ops */
	bool key_set;
	_Atomic uint64_t lost_events; /* for rlog_thread_stats (handlers add too) */
	_Atomic uint64_t lost_bytes;
	/* names.c: the name rlog_thread_name() gave the thread. */
	bool thread_name_set;         /* use thread_name, not prctl(PR_GET_NAME) */
	uint8_t thread_name_len;
	char thread_name[RLOG_THREAD_NAME_MAX];
};

#define RLOG__META_THREAD_NAME 0x1u /* THREAD_NAME: set at every binding */

extern _Thread_local struct rlog__tpriv rlog__tpriv;

/* The word that counts the events written into binding b's buffers, read
 * at take and handover (the difference is the buffer's count): h->written,
 * which is the thread's own count for binding 0 with one session (the
 * inline path's, include/ringlog.h), and a binding's own with several,
 * where binding 0's is rlog__thread.events0 (rlog__write_several). */
static inline uint64_t *rlog__bind_events(struct rlog__bind *b)
{
	return b->multi && b->h == &rlog__thread ? &rlog__thread.events0 : &b->h->written;
}

/* The sessions the process records into (never NULL: an empty set when
 * detached), and the first of them or NULL.  The generation, rlog__gen,
 * is declared in ringlog.h. */
extern struct rlog__set *_Atomic rlog__set;
extern struct rlog__session *_Atomic rlog__current;

/* The word rlog__mask points at while detached: always 0.  With two or
 * more sessions it points at the set's word (struct rlog__set, all),
 * always ~0: every category passes the inline checks and each session's
 * mask decides. */
extern _Atomic uint64_t rlog__zero_mask;

/* Points rlog__mask at m, and rlog__mask_or_null at m or, for
 * rlog__zero_mask, at NULL (ringlog.h), then sets the gate: hdr is the
 * region of the one session m is the mask of, else NULL.  Every change of
 * the pointers goes through here (attach_lock held, or a fork child). */
void rlog__mask_set(_Atomic uint64_t *m, struct rlog_shm_header *hdr);

/* rlog__mask_set for the set: its mask (the zero word, its one session's
 * enable_mask, or its own ~0 word), and the region
 * of its one session for the gate. */
void rlog__mask_publish(struct rlog__set *set);

/* gate.c: the enable gate (ringlog.h, rlog__gate) becomes hdr's first
 * page (one session), or a page whose word is v (hdr NULL). */
void rlog__gate_set(struct rlog_shm_header *hdr, uint64_t v);

/* gate.c: makes the spare page the gate's next private page comes from,
 * if there is none; 0 or -ENOMEM.  Called before an attach changes
 * anything (attach_lock held). */
int rlog__gate_spare(void);

/* gate.c: in a fork child, before the mask is settled again. */
void rlog__gate_fork_child(void);

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

/*
 * Test hooks (not API): when rlog__test_hook is set, the slow path calls it
 * with one of these points, so that a test can raise a signal, or kill the
 * process, at an exact step of the protocol.  One relaxed load per point,
 * on the rare path only, and nothing at all without RLOG_TEST_HOOKS
 * (src/common/test_hooks.h: a release build).  Not exported from
 * libringlog.so: the tests link the static producer library.
 */
enum rlog__hook_point {
	RLOG__HOOK_SLOW = 1,     /* slow path entered: guard held, signals not blocked */
	RLOG__HOOK_BIND,         /* binding: signals blocked, no slot claimed yet */
	RLOG__HOOK_BOUND,        /* binding: slot claimed and busy, signals still blocked */
	RLOG__HOOK_GATE,         /* a loss is being counted in the process entry: gate held */
	RLOG__HOOK_UNBIND,       /* unbinding: signals blocked, buffer handed over */
	RLOG__HOOK_TAKE_CLAIMED, /* a buffer's free bit cleared, the buffer not yet OWNED */
	RLOG__HOOK_TAKE_OWNED,   /* the buffer OWNED, the slot's taking mark not yet cleared */
	RLOG__HOOK_OVERWRITE,    /* overwrite mode: a FULL buffer taken (TAKING), not yet counted */
	RLOG__HOOK_LEAVE,        /* the guard has just been released */
	RLOG__HOOK_SLOT_CLAIMED, /* binding: the slot's state CAS done, its pid not stored yet */
	RLOG__HOOK_SLOT_STAMPED, /* binding: the slot's claimer stamped, its state still FREE */
	RLOG__HOOK_PROC_CLAIMED, /* attaching: the process entry's state CAS done, no pid yet */
	RLOG__HOOK_STARVED,      /* a search of the free bitmap found no buffer */
	RLOG__HOOK_GROWN,        /* the pool grown by this thread's buffer, not yet OWNED */
};
#if RLOG_TEST_HOOKS
extern void (*_Atomic rlog__test_hook)(int point);
#define RLOG__HOOK(point)                                                                 \
	do {                                                                              \
		void (*rlog__h_)(int) =                                                   \
			atomic_load_explicit(&rlog__test_hook, memory_order_relaxed);    \
		if (rlog__h_)                                                             \
			rlog__h_(point);                                                  \
	} while (0)
#else
#define RLOG__HOOK(point) ((void)0) /* no test hooks (src/common/test_hooks.h) */
#endif

/* Registers the thread-exit, atfork and atexit hooks once per process. */
void rlog__hooks_init(void);

/* Blocks every signal of the calling thread, saving the old mask in *old
 * (pthread_sigmask is async-signal-safe).  The protocol's state changes of
 * a thread (binding, unbinding, first touch) run between these two. */
void rlog__signals_block(sigset_t *old);
void rlog__signals_restore(const sigset_t *old);

/* The thread's first touch of the library: points its guard and mask at
 * words of its own, and its bindings' hot parts (signals blocked). */
void rlog__thread_init(struct rlog__thread *t, struct rlog__tpriv *pv);

/* With the guard held and signals blocked: releases binding k's slot
 * (hands its buffer to the daemon, marks the slot EXITED).  For binding 0
 * the guard moves to the thread's own word, still held. */
void rlog__bind_release(struct rlog__tpriv *pv, unsigned k);

/* With the guard held and signals blocked: binds binding k to session s
 * (the set's session k).  Returns 1 (bound; for binding 0 the guard is now
 * the slot's busy flag, for the others the slot's busy flag is left 1 for
 * the caller's write; the session enabled), 0 (session not active, paused
 * or stopping, or no process entry: nothing counted; binding k's slot, if
 * claimed, stays bound), or -ENOBUFS (no free slot: the event of size
 * bytes is counted lost in the process entry). */
int rlog__bind_slot(struct rlog__tpriv *pv, unsigned k, struct rlog__session *s, uint32_t size);

/* Ends the calling thread's recording (outside any write): hands every
 * binding's buffer over and releases its slots; with exiting, its later
 * writes return 0.  Used by the thread-exit and atexit hooks and by
 * detaching. */
void rlog__thread_release(bool exiting);

/* Invariant checker (docs/CONTRIBUTING.md), for assert(): the thread's guard, mask,
 * slots and buffer pointers agree with each other.  It reads the thread's
 * own state only, never the region: a hostile process scribbling a
 * descriptor must not be able to make an assert abort the application
 * (the daemon validates descriptors; src/common/shm.h). */
bool rlog__thread_sane(const struct rlog__thread *t, const struct rlog__tpriv *pv);

/* Hands binding b's current buffer to the daemon (state FULL). */
void rlog__buffer_handover(struct rlog__bind *b);

/* Takes a free buffer for bound binding b at time now.  False if none. */
bool rlog__buffer_take(struct rlog__tpriv *pv, struct rlog__bind *b, uint64_t now);

/*
 * proc.c: this process's entry in a session's process table.
 * rlog__proc_get returns it, claiming one if the process has none there
 * yet (async-signal-safe), or NULL if the table is full (counted in the
 * header's procs_refused).  rlog__proc_release marks it EXITED.
 * rlog__proc_count_loss counts one lost event of size bytes with cause
 * index c (0 no slot, 1 nested) under the entry's gate, and returns the
 * write's result: -ENOBUFS (c 0) or -EBUSY (c 1) if counted, 0 if the
 * session is stopping or the entry is no longer this process's (then the
 * event is not emitted: not counted, as a write without a session).
 */
struct rlog_shm_proc *rlog__proc_get(struct rlog__session *s);
void rlog__proc_release(struct rlog__session *s);
int rlog__proc_count_loss(struct rlog__session *s, int c, uint32_t size);

/* categories.c: records the process's category names in session s (at
 * attach; with try, only if their lock is free at once); resets the
 * names' lock in a fork child. */
void rlog__categories_attach(struct rlog__session *s, bool try);
void rlog__categories_fork_child(void);

/*
 * late.c: waiting for sessions that do not exist yet.  rlog__late_wait
 * (attach_lock held) starts waiting for names[0 .. n-1]: rlog__mask points
 * at the wake registry's mask of names[0], so that writes return at their
 * first load until a session of that name (hash) starts.
 * rlog__late_cancel (attach_lock held) stops waiting.  rlog__late_attach,
 * from the slow path of a write that found no session, attaches if a
 * waited-for session has started (at most one try per 100 ms); true if the
 * process is now attached.  rlog__attach_late_locked is attach.c's part of
 * it, with the lock tried by rlog__attach_trylock.
 */
void rlog__late_wait(char (*names)[RLOG_NAME_MAX + 1], int n);
void rlog__late_cancel(void);
bool rlog__late_attach(void);
bool rlog__attach_trylock(void);
void rlog__attach_unlock(void);
bool rlog__attach_late_locked(char (*names)[RLOG_NAME_MAX + 1], int n, struct rlog__session **a,
			      struct rlog__set *set);

/* attach.c: in a fork child, forgets what belongs to the parent (process
 * entries, name and schema records in the sessions) and settles the
 * process state an interrupted attach or detach may have left. */
void rlog__attach_fork_child(void);

/*
 * Entering and leaving the slow path from a library function (not from the
 * inline write path, which takes the guard itself).  rlog__slow_enter
 * returns false if the guard is held: the caller is a signal handler that
 * interrupted a write of this thread, and counts a nested write or gives
 * up.  Otherwise it takes the guard (before the slow path's decisive mask
 * load, as the inline path does).  rlog__slow_leave releases it.
 */
bool rlog__slow_enter(struct rlog__thread *t, struct rlog__tpriv *pv);
void rlog__slow_leave(struct rlog__thread *t);

/* The event categories a write is for: cat 0..63 (a declared type's), or
 * RLOG__CAT_ANY (a raw write: any session whose mask is not 0). */
#define RLOG__CAT_ANY 64

/*
 * The slow path's work, between rlog__slow_enter and rlog__slow_leave (or
 * from rlog__write_slow).  In each session of the set the event is for
 * (category cat: with one session the inline checks decided; with more,
 * each session's mask), writes, in this order, whatever metadata is
 * pending there (PROCESS_NAME, THREAD_NAME), then the schema record of
 * schema if it is not yet in that session (schema_written tells it, with
 * one session; a per-session record with more), then the event (hdr,
 * flagword, payload, len; hdr 0: no event).  Results as rlog__write_slow,
 * summed over sessions: 1 written in every session it was for, -ENOBUFS
 * or -EBUSY lost (and counted) in one or more, 0 for none.  With no event:
 * 1 (metadata written), 0 (nothing to write into), -ENOBUFS (no free
 * buffer: still pending; nothing counted).
 */
int rlog__slow(struct rlog__thread *t, struct rlog__tpriv *pv, uint32_t hdr, uint32_t flagword,
	       const void *payload, size_t len, uint64_t now, unsigned cat,
	       const struct rlog_schema *schema, bool *schema_written);

/* Is the schema record of declared type id in session s already (written
 * by any thread of this process, with one session or several)? */
bool rlog__schema_in(struct rlog__session *s, unsigned id);

/* Counts a write of category cat that found the guard held (a signal
 * handler inside a write of this thread) in every session it was for. */
int rlog__nested(uint32_t hdr, unsigned cat);

/*
 * names.c: the process name, for the slow path.  rlog__process_name_claim
 * returns true if the process's name, as of its current version, is not
 * yet in session s, and claims writing it (tok receives the claim): the
 * caller then writes it and calls rlog__process_name_done with ok =
 * whether the record was written (false hands the claim back, so that the
 * next thread in the slow path tries).  rlog__process_name_get copies the
 * name into out (RLOG_PROCESS_NAME_MAX bytes) and returns its length, 0 if
 * it could not be read consistently (it is being changed).
 * rlog__thread_name_get does the same for the calling thread's name.
 */
bool rlog__process_name_claim(struct rlog__session *s, uint64_t tok[2]);
void rlog__process_name_done(struct rlog__session *s, const uint64_t tok[2], bool ok);
size_t rlog__process_name_get(char *out);
size_t rlog__thread_name_get(struct rlog__tpriv *pv, char *out);

/* In a fork child: forgets a rename that another thread of the parent was
 * making (its lock, a half-changed name). */
void rlog__names_fork_child(void);

/* counter.c: in a fork child, forgets a registration another thread of the
 * parent was making (its lock). */
void rlog__counters_fork_child(void);

/* The longest UTF-8 prefix of s (NUL-terminated) of at most max bytes that
 * does not end inside a character.  Returns its length. */
size_t rlog__utf8_cut(const char *s, size_t max);

#endif
