/*
 * ringlog.h - the producer API: record events into a ringlog session.
 *
 *   #include <ringlog.h>
 *
 *   rlog_attach(NULL);                    // $RINGLOG_SESSION, else "default"
 *   uint64_t v[2] = { 42, 7 };
 *   rlog_write(1024, v, sizeof v);        // ID 1024, 16-byte payload, timestamped
 *   if (rlog_enabled(3))                  // category 3 on in the session's mask?
 *       rlog_write_flagged(1025, 3, v, 8);
 *
 * Link with -lringlog (pkg-config ringlog).  Every function is safe to call
 * when no session exists: writes are then no-ops that return 0 and the
 * application runs on.  Tracing never blocks, never allocates on the write
 * path and never fails loudly: an event that cannot be stored is counted as
 * lost in the session and reported in the log as a DATA_LOSS record.
 *
 * The write path is inline (below) so that the application compiles it: it
 * loads the session's enable mask, sets the thread's in-write flag, reads the
 * tick counter, checks space, stores the record and release-stores the
 * buffer's new write offset.  No lock, no atomic read-modify-write, no
 * syscall.  Everything else (the first write of a thread, a full buffer, a
 * time sync, losses) is in the library's slow path.
 *
 * Return values of the write functions:
 *   1            the event is in the thread's buffer and will reach the log
 *   0            not recorded and not counted: no session, or the session is
 *                paused (enable mask 0) or stopping
 *   -ENOBUFS     dropped and counted lost: no free buffer in the pool
 *   -EBUSY       dropped and counted lost: the write interrupted another
 *                write of the same thread (a signal handler)
 *   -EMSGSIZE    not recorded, not counted: the record cannot fit in a buffer
 *   -EINVAL      not recorded, not counted: ID below 16, one of ringlog's
 *                own IDs 32..38, or above 16383
 * An event counts as emitted when a write returns 1, -ENOBUFS or -EBUSY;
 * emitted = written + lost holds exactly for every session.
 *
 * Besides the application's events the library writes metadata records
 * into a thread's buffer, never counted as events (neither written nor
 * lost): a THREAD_NAME record before the thread's first event in a
 * session, a PROCESS_NAME record before the first event of the process's
 * first thread, and, for event types declared with <ringlog/event.h>, an
 * EVENT_SCHEMA record before the type's first event.  A metadata record
 * that finds no free buffer stays pending and is written before the
 * thread's next event that does find one, so it is never lost.
 */
#ifndef RINGLOG_H
#define RINGLOG_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
/* __rdtsc() is a compiler intrinsic (GCC and Clang), the only portable way
 * to read the time-stamp counter without inline assembly. */
#include <x86intrin.h>
#define RLOG__HAVE_TSC 1
#else
#define RLOG__HAVE_TSC 0
#endif

#include "ringlog/format.h"
#include "ringlog/version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define RLOG__EXPORT __attribute__((visibility("default")))
/* Branch hints are a GCC/Clang extension; without them the fast path is the
 * same code with a worse layout. */
#define RLOG__LIKELY(x)   __builtin_expect(!!(x), 1)
#define RLOG__UNLIKELY(x) __builtin_expect(!!(x), 0)
/* The disabled check's condition (no session; a category off): expected
 * true, so that the compiler lays the disabled case out as the straight
 * path, its branch not taken, and the enabled write (or the caller's
 * guarded block) away from it.  A disabled event is what an instrumented
 * program runs most of the time; an enabled write pays one jump more in a
 * path that reads the clock.  The same branch, hint or not: without the
 * extension the layout is the compiler's choice, and a taken branch in the
 * disabled case costs about a cycle more (docs/PERFORMANCE.md). */
/* No hint under AddressSanitizer: there GCC 12 building with
 * -fsanitize=address,undefined emitted the null check of the thread's
 * state in an inlined write on flags no instruction had set, and reported
 * a thread-local's address as NULL, after either of the hinted checks
 * (rlog_enabled's in a declared event's write, or the write's own).
 * UBSan alone and plain builds are not affected. */
#if defined(__SANITIZE_ADDRESS__)
#define RLOG__DISABLED(x) (x)
#endif
#if defined(__has_builtin) && !defined(RLOG__DISABLED)
#if __has_builtin(__builtin_expect_with_probability)
/* Where the compiler has it, "almost always": at __builtin_expect's 90%
 * the enabled write still weighs enough that GCC 12 keeps the caller's
 * loop counter in memory to free a register for it, a store and a reload
 * per disabled event (docs/PERFORMANCE.md, "LTTng-UST, side by side"). */
#define RLOG__DISABLED(x) __builtin_expect_with_probability(!!(x), 1, 0.9999)
#endif
#endif
#ifndef RLOG__DISABLED
#define RLOG__DISABLED(x) __builtin_expect(!!(x), 1)
#endif
/* The write paths' gate check (the same hint, a name of its own). */
#define RLOG__WRITE_OFF(x) RLOG__DISABLED(x)
/* Initial-exec TLS: one %fs-relative load even from a -fPIC plugin, instead
 * of a __tls_get_addr call.  A GCC/Clang attribute; without it the access is
 * correct, only slower. */
#define RLOG__TLS_IE __attribute__((tls_model("initial-exec")))
/* Prefetch for writing a few cache lines ahead: the daemon's reads leave
 * the buffer's lines in the other core's cache, and taking them back for
 * writing is the largest cost of an event after the timestamp.  A prefetch
 * past the end of the buffer is harmless (prefetches never fault). */
#define RLOG__PREFETCH_W(p) __builtin_prefetch((p), 1, 3)
/* GCC judges the write path too large to inline and calls it instead,
 * which costs a call and six register saves per event: force it. */
#define RLOG__INLINE static inline __attribute__((always_inline))
#else
#define RLOG__INLINE static inline
#define RLOG__PREFETCH_W(p) ((void)(p))
#define RLOG__TLS_IE
#define RLOG__EXPORT
#define RLOG__LIKELY(x)   (x)
#define RLOG__UNLIKELY(x) (x)
#define RLOG__DISABLED(x) (x)
#define RLOG__WRITE_OFF(x) (x)
#endif

/* ------------------------------------------------------------------ */
/* Session attachment                                                  */
/* ------------------------------------------------------------------ */

/*
 * rlog_attach - record into this session (or these sessions) from now on.
 * @name: a session name, or several separated by commas (at most
 *        RLOG_MAX_SESSIONS); NULL means $RINGLOG_SESSION (same form), or
 *        "default" if unset.
 *
 * Maps the session's shared-memory region and validates its header.  The
 * sessions named replace those the process was attached to (a session in
 * both stays as it is); rlog_attach_add adds one.  Threads get their
 * buffers lazily, at their first write into each session.
 *
 * Returns 0, or:
 *   -EINVAL   the name is not a valid session name
 *   -ENOENT   no such session (writes stay no-ops; call again later)
 *   -EPROTO   the region has another ABI version or an inconsistent header
 *   -EACCES   the region belongs to another user (its owner is not this
 *             process's effective uid, root included), or is open to
 *             group or others
 *   -ENOMEM   the region could not be mapped, or the page the enable
 *             gate needs (docs/FORMAT.md, "The inline path's words"):
 *             nothing changed
 *   -ENOSPC   the session's process table is full (as many processes as it
 *             has producer slots are attached)
 * Not async-signal-safe.  Threads bound to a previous session move to the
 * new one at their next write.
 */
RLOG__EXPORT int rlog_attach(const char *name);

/* The most sessions a process records into at once (ETW's 8 per provider). */
#define RLOG_MAX_SESSIONS 8

/*
 * rlog_attach - the sessions of name, and only those, from now on: a
 * comma-separated list of at most RLOG_MAX_SESSIONS session names ("a,b"),
 * or NULL for $RINGLOG_SESSION (the same form), or "default" if unset.
 * (Declared above: this is the same function.)
 *
 * rlog_attach_add - record into session name as well as the ones the
 * process is attached to: each event goes to every attached session whose
 * enable mask asks for its category (a raw rlog_write: every session whose
 * mask is not 0).  With one session the write path is the inline fast
 * path; with two or more every write reads the clock once and the inline
 * path stores it into each session's buffer that has room, calling the
 * library for the others (a buffer to take, metadata, a loss;
 * docs/PERFORMANCE.md, "Several sessions", has what that costs).
 * Returns 0 (also if already attached to it), or as rlog_attach, or:
 *   -E2BIG    RLOG_MAX_SESSIONS sessions are attached already
 *   -EXDEV    the session keeps time with another clock than the attached
 *             ones (RINGLOG_CLOCK at their start): one write has one time
 * Not async-signal-safe.
 */
RLOG__EXPORT int rlog_attach_add(const char *name);

/*
 * rlog_detach_session - stop recording into session name; the others stay.
 * Returns 0, -EINVAL (not a valid name), -ENOENT (not attached to it) or
 * -ENOMEM (no page for the enable gate, as rlog_attach: nothing changed).
 * Not async-signal-safe.
 */
RLOG__EXPORT int rlog_detach_session(const char *name);

/*
 * rlog_detach - stop recording in this process.
 *
 * Hands the calling thread's buffer to the daemon; later writes from any
 * thread are no-ops.  Other threads' buffers are handed over when those
 * threads exit, or drained by the daemon at stop.  The mapping is kept (a
 * thread may still be inside a write), so detaching does not free memory.
 * Returns 0, or -ENOENT if the process was not attached.
 */
RLOG__EXPORT int rlog_detach(void);

/*
 * rlog_flush_thread - hand the calling thread's current buffer to the daemon
 * now, instead of when it is full.  Useful before a long idle period.
 * Returns 0 (also when the thread has no buffer), or -ENOENT if detached.
 */
RLOG__EXPORT int rlog_flush_thread(void);

/*
 * rlog_stats - this process's view of its own thread: events written and
 * lost by the calling thread since it first wrote.
 */
struct rlog_thread_stats {
	uint64_t events_written; /* writes that returned 1 */
	uint64_t events_lost;    /* writes that returned -ENOBUFS or -EBUSY */
	uint64_t bytes_lost;     /* record bytes of those */
};
/* Fills *out for the calling thread.  Returns 0, or -EINVAL if out is NULL. */
RLOG__EXPORT int rlog_thread_stats(struct rlog_thread_stats *out);

/*
 * rlog_category_name - name bit cat (0..63) of the sessions' enable mask.
 * @name: 1 to 27 characters of [a-z0-9_.-]
 *
 * The name is recorded in the attached session, and in every session the
 * process attaches to later, so that `ringlog start NAME --enable net,disk`
 * and `ringlog update NAME --enable ...` can use it; a session that was
 * started with an --enable name that no process had declared yet enables
 * the bit when one does.  The first name recorded for a bit in a session
 * stays.
 * Returns 0, or:
 *   -EINVAL   cat > 63, or the name is empty, too long or has other characters
 *   -EEXIST   this process, or the attached session, has another name for cat
 * Not async-signal-safe.
 */
RLOG__EXPORT int rlog_category_name(unsigned cat, const char *name);

/* ------------------------------------------------------------------ */
/* Thread and process names                                            */
/* ------------------------------------------------------------------ */

/* Longest thread name and process name recorded, in bytes.  Longer names
 * are cut at the last UTF-8 character boundary that fits. */
#define RLOG_THREAD_NAME_MAX  64
#define RLOG_PROCESS_NAME_MAX 255

/*
 * rlog_thread_name - name the calling thread in the trace.
 * @name: UTF-8, not empty; cut to RLOG_THREAD_NAME_MAX bytes
 *
 * Without a call, a thread's name is what the kernel knows
 * (prctl(PR_GET_NAME), set by pthread_setname_np) when the thread binds to
 * a session (its first write there).  This name replaces it: it is
 * recorded now, as a THREAD_NAME record, if the thread is writing into a
 * session, and again whenever the thread binds to a later session.  The
 * kernel's name of the thread is not changed.
 * Returns 0, or:
 *   -EINVAL   name is NULL or empty
 *   -EBUSY    called from a signal handler that interrupted a write of
 *             this thread: nothing changed
 * Not async-signal-safe.
 */
RLOG__EXPORT int rlog_thread_name(const char *name);

/*
 * rlog_process_name - name the calling process in the trace.
 * @name: UTF-8, not empty; cut to RLOG_PROCESS_NAME_MAX bytes
 *
 * Without a call, the process's name is program_invocation_short_name
 * (the base name of argv[0]).  The first thread of the process to write
 * into a session records it in a PROCESS_NAME record before its event; a
 * fork child records its own.  After this call the name is recorded again:
 * now, if the calling thread is writing into a session, else by the next
 * thread of the process that takes a buffer.
 * Returns 0, or -EINVAL (name NULL or empty).  Not async-signal-safe.
 */
RLOG__EXPORT int rlog_process_name(const char *name);

/* ------------------------------------------------------------------ */
/* Counters                                                            */
/* ------------------------------------------------------------------ */

/*
 * rlog_counter_register - a 64-bit counter that the session's daemon
 * samples (CeLog's dwCeLogTLBMiss, for any count of the application).
 * @name: 1 to RLOG_COUNTER_NAME_MAX (39) bytes of printable ASCII other
 *        than '"' and '\' (say "http.requests")
 * @out:  receives the counter's address
 *
 *   uint64_t *requests;
 *   rlog_counter_register("http.requests", &requests);
 *   ...
 *   ++*requests;                                    // one thread: a plain add
 *   __atomic_fetch_add(requests, 1, __ATOMIC_RELAXED);  // several threads
 *
 * The counter lives in the session's shared memory, starting at 0.  The
 * application only adds to it (or stores a smaller value: a reset); no
 * thread of ringlog's runs in the process and no call is made: the
 * daemon reads it every counter period (`ringlog start --counter-period`,
 * 100 ms by default) and, when it changed, writes a COUNTER record with
 * the increase since its last record (docs/FORMAT.md).  A session samples
 * application counters when its --counters list has "app" (the default).
 *
 * With several sessions attached (rlog_attach_add), the counter lives in
 * the first one: the first name of rlog_attach's list (or of
 * RINGLOG_SESSION).  Registering a name this process registered before in
 * that session gives the same counter again.  The counter is sampled as
 * long as the process lives, attached or not; after the process exits the
 * daemon takes its last value and frees its place.  A fork child inherits
 * the parent's pointers, which still count for the parent: it registers
 * its own.
 *
 * On every return *out (if out is not NULL) points at a counter the
 * application may add to: in the session (return 1), or in the process's
 * own memory (any other return), where adding does no harm and is not
 * recorded.  So the result may be ignored.
 * Returns 1 (in the session), or:
 *   0         no session: the process is not attached (a session it waits
 *             for does not get counters registered before it started)
 *   -EINVAL   out is NULL, or the name is empty, too long or has other bytes
 *             (*out then points at a counter shared by every such failure)
 *   -ENOSPC   the session's counter table is full (RLOG_SHM_COUNTERS)
 *   -ENOMEM   not even the process-local counter could be allocated (*out
 *             then points at a counter shared by every such failure)
 * Not async-signal-safe.
 */
RLOG__EXPORT int rlog_counter_register(const char *name, uint64_t **out);

/* ------------------------------------------------------------------ */
/* Version                                                             */
/* ------------------------------------------------------------------ */

/*
 * rlog_version - the version of the library the program runs with, as
 * RLOG_VERSION_HEX (<ringlog/version.h>): 0xMMmmpp.
 * rlog_version_string - the same as "MAJOR.MINOR.PATCH", a static string.
 *
 * The macros of <ringlog/version.h> are the headers' version, fixed when
 * the program was compiled; these are the shared library's, which may be
 * newer.  Since 0.2 (version node RINGLOG_0.2): a program that calls them
 * needs libringlog 0.2 or later to start.  Async-signal-safe.
 */
RLOG__EXPORT unsigned int rlog_version(void);
RLOG__EXPORT const char *rlog_version_string(void);

/* ------------------------------------------------------------------ */
/* Internals the inline write path needs.  Not API: may change with the  */
/* library's soname.                                                    */
/* ------------------------------------------------------------------ */

struct rlog__thread {
	uint8_t *pos;                 /* next byte to write; NULL: no buffer */
	uint8_t *end;                 /* end of the current buffer */
	uint8_t *base;                /* start of the current buffer */
	_Atomic uint32_t *write_off;  /* &descriptor->write_off of the buffer */
	_Atomic uint32_t *busy;       /* the thread's in-write guard: &slot->busy while bound,
	                                 a word of the thread's own otherwise; NULL before
	                                 the thread's first write */
	_Atomic uint64_t *mask;       /* enable mask of the region the slot is in; a zero
	                                 word while unbound */
	uint64_t last;                /* 64-bit tick time of the last record */
	uint64_t written;             /* events this thread wrote (for rlog_thread_stats) */
	/* Since 0.2, after the fields above (whose layout programs built
	 * with older headers read, and which they alone use): the
	 * several-session inline path (rlog__write_several).  multi[k] is
	 * binding k's hot part (multi[0] is this struct), laid out as the
	 * fields above, its written counting the events of its current
	 * buffer (binding 0: events0).  The library fills them. */
	uint32_t multi_n;             /* 2 .. RLOG_MAX_SESSIONS: the inline path writes the
	                                 sessions' ready bindings itself; 0: it does not */
	uint32_t multi_gen;           /* the rlog__gen multi_n belongs to */
	uint64_t events0;             /* binding 0's events in its current buffer (several) */
	struct rlog__thread *multi[RLOG_MAX_SESSIONS];
	_Atomic uint64_t *multi_mask; /* the rlog__mask_or_null of the set multi_n was armed
	                                 for (each set of two or more sessions has a word of
	                                 its own); the inline path writes the bindings itself
	                                 only while they are the same */
};

/* The thread's state.  The initial-exec TLS model makes this one
 * %fs-relative access from the application and from the library. */
extern _Thread_local struct rlog__thread rlog__thread RLOG__EXPORT RLOG__TLS_IE;

/* Points at the session's enable mask, or at a word that is always 0.
 * Read by programs built with headers before 0.2 (their inline paths);
 * this header's read rlog__mask_or_null. */
extern _Atomic uint64_t *_Atomic rlog__mask RLOG__EXPORT;

/* The same pointer as rlog__mask, but NULL while the process is in no
 * session and waits for none: the disabled check of a process that
 * nothing traces is then this one load (of a word of the process's own,
 * in cache) and a branch that is not taken.  Once attached, the word it
 * points at is the session's enable mask, which `ringlog pause`,
 * `resume`, category changes and the daemon's stop write in the session
 * region: following them costs the second load, of that word, and
 * nothing needs telling the process (docs/FORMAT.md, "The inline
 * path's words").  Since 0.2. */
extern _Atomic uint64_t *_Atomic rlog__mask_or_null RLOG__EXPORT;

/* The enable gate: one page of the process's own memory, at an address
 * fixed when the program is linked, whose word RLOG__GATE_WORD the
 * disabled checks read first (one load, from a constant address, and a
 * branch not taken).  The library keeps it (docs/FORMAT.md, "The inline
 * path's words"):
 *   0        no session and no wait: every write returns 0;
 *   the mask while the process is in exactly one session, the page is
 *            the session region's first page itself, mapped over this
 *            object read-only, so the word IS the region's enable_mask
 *            (+1280) and follows `ringlog pause`, `update --mask` and the
 *            daemon's stop as they are written, with nothing telling the
 *            process;
 *   ~0       otherwise (several sessions, a wait for a session, or a
 *            system whose pages are not 4 KiB): the checks after it
 *            decide, as before 0.2.
 * A non-zero word only lets the write go on to the checks that decide
 * (rlog__mask_or_null, then the thread's own mask after its guard).
 * _Alignas(4096): an extended alignment, which C11 leaves to the
 * implementation; GCC and Clang honour it for static objects, and the
 * library maps only when the object is on a page of its own.  Since 0.2. */
#define RLOG__GATE_WORD 160
struct rlog__gate {
	_Alignas(4096) _Atomic uint64_t w[512];
};
extern struct rlog__gate rlog__gate RLOG__EXPORT;

/* Non-zero when the session's tick source is the TSC. */
extern _Atomic int rlog__tick_tsc RLOG__EXPORT;

/* The process's session generation: bumped at every attach and detach, and
 * in a fork child.  Declared event types (<ringlog/event.h>) remember the
 * generation in which their schema reached the session.  Stays below 2^31. */
extern _Atomic uint32_t rlog__gen RLOG__EXPORT;

/* The slow path: called with the thread's guard held (*busy == 1), and
 * now the tick reading.  Same arguments and results as rlog__write. */
RLOG__EXPORT int rlog__write_slow(uint32_t hdr, uint32_t flagword, const void *payload,
				  size_t len, uint64_t now);

/* The thread's first write (busy == NULL): sets the thread up, then as
 * rlog__write. */
RLOG__EXPORT int rlog__write_first(uint32_t hdr, uint32_t flagword, const void *payload,
				   size_t len);

/* Counts a write that found the guard held (signal-handler nesting). */
RLOG__EXPORT int rlog__write_nested(uint32_t hdr, size_t len);

/* Several sessions: called with the guard held by the inline path once it
 * has written the event into every ready binding; todo has bit k set for
 * each binding k it did not write (not ready: no room, no buffer,
 * metadata or a TIME_SYNC due), and bit 8 if it wrote into any.  Writes
 * those, releases the guard, returns what rlog__write returns.  Since
 * 0.2. */
RLOG__EXPORT int rlog__write_rest(uint32_t hdr, uint32_t flagword, const void *payload,
				  size_t len, uint64_t now, uint32_t todo);

RLOG__INLINE uint64_t rlog__now(void)
{
#if RLOG__HAVE_TSC
	if (RLOG__LIKELY(atomic_load_explicit(&rlog__tick_tsc, memory_order_relaxed)))
		return __rdtsc();
#endif
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Stores a record's payload at p: its fill bytes to the next 4-byte
 * boundary zero (no stale bytes leak into the log), then the payload.
 * Loads of at most 8 bytes: a caller that has just stored its payload
 * (v[0] = i; rlog_write(id, v, 16)) still has it in its store buffer, and
 * a load wider than the store it reads is not forwarded from it: the load
 * waits until every earlier store has reached the cache, the previous
 * record's included, and writes stop overlapping (a 16-byte untimed
 * event: 8.7 ns with one 16-byte load, 2.8 ns with two 8-byte ones;
 * docs/PERFORMANCE.md).  Up to 64 bytes in 8-byte words and a 4-byte
 * tail, folded into straight moves for a constant length; a caller that
 * stored 8-byte fields, or wider, is forwarded.  Longer or odd lengths:
 * memcpy.  Used by the inline paths and the library's slow path alike.
 */
RLOG__INLINE void rlog__put_payload(uint8_t *p, const void *payload, size_t len)
{
	const uint8_t *s = (const uint8_t *)payload;
	if (len & 3) {
		uint32_t zero = 0; /* the word the last bytes and the fill share */
		memcpy(p + (len & ~(size_t)3), &zero, 4);
	}
	if (len > 64 || (len & 3) != 0) {
		memcpy(p, s, len); /* len is not 0 here: never memcpy from NULL */
		return;
	}
	size_t k = 0;
	for (; k + 8 <= len; k += 8) {
		uint64_t w;
		memcpy(&w, s + k, 8);
		memcpy(p + k, &w, 8);
	}
	if (k < len) {
		uint32_t w;
		memcpy(&w, s + k, 4);
		memcpy(p + k, &w, 4);
	}
}

/*
 * Several sessions (t->multi_n bindings, set up by the library for the
 * set whose word rlog__mask_or_null points at, t->multi_mask), with the
 * guard held and the clock read once:
 * the event goes into each binding that is ready, as rlog__write puts it
 * into one session, and the library (rlog__write_rest) writes the others.
 * Ready: a buffer with room for the record (no buffer is pos == end ==
 * NULL; the library sets end = pos while metadata is due there), and no
 * TIME_SYNC due.  Binding k >= 1 takes its slot's busy flag around its
 * part, before the decisive load of its session's mask, as binding 0's
 * guard (the daemon's stop sequence pairs with it); a session whose mask
 * is 0 (paused, stopping) is skipped.  Each binding counts the events of
 * its buffer (binding 0 in events0); t->written counts the write once,
 * when it returns 1.  The library's several-session write (write_multi
 * in src/lib/write.c) makes the same stores in the same order, so that
 * programs built with older headers, which always call it, write the
 * same records.
 */
/* One binding's record, on rlog__write_several's terms (ready, its busy
 * flag held, its mask not 0); count is its buffer's event count, head
 * the first 8 bytes of a timed record (hdr, then now's low 32 bits). */
RLOG__INLINE void rlog__several_put(struct rlog__thread *h, uint64_t *count, uint32_t hdr,
				    uint64_t head, uint32_t flagword, const void *payload,
				    size_t len, uint64_t now, bool timed, size_t flagbytes,
				    size_t size)
{
	uint8_t *p = h->pos;
	RLOG__PREFETCH_W(p + 256);
	/* Read before the record's stores (rlog__write). */
	uint8_t *next = p + size, *base = h->base;
	_Atomic uint32_t *write_off = h->write_off;
	uint64_t c = *count;
	if (timed) {
		memcpy(p, &head, 8);
		p += 8;
		h->last = now;
	} else {
		memcpy(p, &hdr, 4);
		p += 4;
	}
	if (flagbytes) {
		memcpy(p, &flagword, 4);
		p += 4;
	}
	rlog__put_payload(p, payload, len);
	h->pos = next;
	*count = c + 1;
	atomic_store_explicit(write_off, (uint32_t)(next - base), memory_order_release);
}

/* Is binding h ready for a record of size bytes at now?  No buffer is
 * pos == end == NULL: no room either. */
RLOG__INLINE bool rlog__several_ready(const struct rlog__thread *h, uint64_t now, bool timed,
				      size_t size)
{
	return (uintptr_t)h->end - (uintptr_t)h->pos >= size &&
	       !(timed && now - h->last >= (UINT64_C(1) << 31));
}

/* rlog__write_several's todo: bit k for binding k not ready (for the
 * library), and from bit 8 the number of bindings not written (not ready,
 * or skipped: its session's mask is 0).  0: every binding written, the
 * common case, which costs nothing to count. */
#define RLOG__TODO_MISS (UINT32_C(1) << 8)

/* Binding k >= 1 of rlog__write_several: its part if it is ready, under
 * its slot's busy flag.  Returns what to add to the write's todo. */
RLOG__INLINE uint32_t rlog__several_other(struct rlog__thread *h, unsigned k, uint32_t hdr,
					  uint64_t head, uint32_t flagword, const void *payload,
					  size_t len, uint64_t now, bool timed, size_t flagbytes,
					  size_t size)
{
	if (RLOG__UNLIKELY(!rlog__several_ready(h, now, timed, size)))
		return (UINT32_C(1) << k) + RLOG__TODO_MISS;
	uint32_t r = 0;
	_Atomic uint32_t *kb = h->busy;
	atomic_store_explicit(kb, 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	if (RLOG__LIKELY(atomic_load_explicit(h->mask, memory_order_relaxed) != 0))
		rlog__several_put(h, &h->written, hdr, head, flagword, payload, len, now, timed,
				  flagbytes, size);
	else
		r = RLOG__TODO_MISS;
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(kb, 0, memory_order_release);
	return r;
}

RLOG__INLINE int rlog__write_several(struct rlog__thread *t, _Atomic uint32_t *busy,
				     uint32_t hdr, uint32_t flagword, const void *payload,
				     size_t len, uint64_t now, bool timed, size_t flagbytes,
				     size_t size)
{
	uint32_t todo = 0;
	/* A timed record's first 8 bytes, made once for all. */
	uint32_t hw[2] = { hdr, (uint32_t)now };
	uint64_t head;
	memcpy(&head, hw, 8);
	/* Binding 0 (this struct): its busy flag is the guard, held. */
	if (RLOG__LIKELY(rlog__several_ready(t, now, timed, size))) {
		if (RLOG__LIKELY(atomic_load_explicit(t->mask, memory_order_relaxed) != 0))
			rlog__several_put(t, &t->events0, hdr, head, flagword, payload, len, now,
					  timed, flagbytes, size);
		else
			todo = RLOG__TODO_MISS;
	} else {
		todo = 1 + RLOG__TODO_MISS;
	}
	/* Binding 1 out of the loop: two sessions, the common case, run
	 * straight through. */
	todo += rlog__several_other(t->multi[1], 1, hdr, head, flagword, payload, len, now,
				    timed, flagbytes, size);
	unsigned n = t->multi_n;
	for (unsigned k = 2; k < n; k++)
		todo += rlog__several_other(t->multi[k], k, hdr, head, flagword, payload, len,
					    now, timed, flagbytes, size);
	int wrote = 1;
	if (RLOG__UNLIKELY(todo != 0)) {
		wrote = todo / RLOG__TODO_MISS < n;
		if ((todo & 0xff) != 0)
			return rlog__write_rest(hdr, flagword, payload, len, now,
						(todo & 0xff) | (uint32_t)wrote << 8);
	}
	t->written += (uint64_t)wrote;
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(busy, 0, memory_order_release);
	return wrote;
}

/*
 * The write path.  hdr carries ID (FLAGGED for a flagged record), Length and
 * the timestamp bit; flagword is (flag << 16 | real ID) for FLAGGED.  Without
 * the timestamp bit (rlog_write_untimed) no clock is read: the slow path gets
 * now = 0.
 *
 * Ordering, in this function and against the daemon (src/daemon/drain.c):
 *   busy = 1        the thread's guard (src/lib/thread.c draws its states);
 *                   then the decisive load of the thread's own region mask
 *                   (t->mask; the slow path returns 0 when it reads 0): the
 *                   daemon's stop sequence (mask = 0; membarrier(GLOBAL); wait
 *                   busy == 0) pairs with this order; a signal fence keeps
 *                   the compiler from swapping the two, membarrier does it
 *                   for the CPU.  A thread bound to another session than the
 *                   one rlog__mask points at (t->mask != m: the process
 *                   attached elsewhere, or detached) goes to the slow path,
 *                   which rebinds it.
 *   record stores   then store_release(write_off): pairs with the daemon's
 *                   load_acquire(write_off) before it reads the bytes.
 *   busy = 0        release: pairs with the daemon's load_acquire(busy).
 */
RLOG__INLINE int rlog__write(uint32_t hdr, uint32_t flagword, const void *payload, size_t len)
{
	/* Fast exit while no session is attached, or it is paused or
	 * stopping: the gate's word (one load from a fixed address, the
	 * disabled case the branch not taken), then the pointer and the mask
	 * it points at (several sessions, a wait). */
	if (RLOG__WRITE_OFF(atomic_load_explicit(&rlog__gate.w[RLOG__GATE_WORD],
						 memory_order_relaxed) == 0))
		return 0;
	_Atomic uint64_t *m = atomic_load_explicit(&rlog__mask_or_null, memory_order_relaxed);
	if (RLOG__UNLIKELY(m == NULL || atomic_load_explicit(m, memory_order_relaxed) == 0))
		return 0;
	struct rlog__thread *t = &rlog__thread;
	_Atomic uint32_t *busy = t->busy;
	if (RLOG__UNLIKELY(busy == NULL))
		return rlog__write_first(hdr, flagword, payload, len);
	if (RLOG__UNLIKELY(atomic_load_explicit(busy, memory_order_relaxed)))
		return rlog__write_nested(hdr, len);
	atomic_store_explicit(busy, 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	/* A constant in every caller: the untimed write reads no clock. */
	bool timed = (hdr & RLOG_HDR_TIMESTAMP_BIT) != 0;
	uint64_t now = timed ? rlog__now() : 0;
	size_t flagbytes = (hdr >> RLOG_HDR_ID_SHIFT & RLOG_HDR_ID_MASK) == RLOG_ID_FLAGGED ? 4 : 0;
	size_t size = ((timed ? 8 : 4) + flagbytes + len + 3) & ~(size_t)3;
	uint8_t *p = t->pos;
	/* t->mask != m first: with several sessions it is the test that
	 * fails, and the several-session path makes the others itself.  No
	 * buffer (pos == NULL) is end == NULL too (src/lib/thread.c): no
	 * room.  The decisive load is then of *m, which is *t->mask. */
	if (RLOG__UNLIKELY(t->mask != m || len > RLOG_MAX_PAYLOAD ||
			   (timed && now - t->last >= (UINT64_C(1) << 31)) ||
			   (uintptr_t)t->end - (uintptr_t)p < size ||
			   atomic_load_explicit(m, memory_order_relaxed) == 0)) {
		/* Several sessions, the set the library armed the bindings
		 * for (another set has another word: an attach or detach
		 * since sends the write there first). */
		if (t->multi_mask == m && len <= RLOG_MAX_PAYLOAD)
			return rlog__write_several(t, busy, hdr, flagword, payload, len, now, timed,
						   flagbytes, size);
		return rlog__write_slow(hdr, flagword, payload, len, now);
	}
	RLOG__PREFETCH_W(p + 256);
	/* Read before the record's stores, which the compiler must assume
	 * may alias the thread's state: no reloads after them. */
	uint8_t *next = p + size, *base = t->base;
	_Atomic uint32_t *write_off = t->write_off;
	if (timed) {
		uint32_t hw[2] = { hdr, (uint32_t)now };
		memcpy(p, hw, 8);
		p += 8;
		t->last = now;
	} else {
		/* No timestamp: the reader gives the record the time of the
		 * thread's previous record (t->last stays). */
		memcpy(p, &hdr, 4);
		p += 4;
	}
	if (flagbytes) {
		memcpy(p, &flagword, 4);
		p += 4;
	}
	rlog__put_payload(p, payload, len);
	t->pos = next;
	t->written++;
	atomic_store_explicit(write_off, (uint32_t)(next - base), memory_order_release);
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(busy, 0, memory_order_release);
	return 1;
}

/* ------------------------------------------------------------------ */
/* Writing events                                                      */
/* ------------------------------------------------------------------ */

/*
 * rlog_enabled - is category cat (0..63) enabled in the session?
 * One load and a test: call it before preparing an expensive payload.
 * Returns false when no session is attached or cat > 63.
 */
RLOG__INLINE bool rlog_enabled(unsigned cat)
{
	/* The gate first: one load from a fixed address, exact for no
	 * session and for one (its word is then the session's mask), and a
	 * category that is off (a flight recorder's usual state) is the
	 * branch not taken: the caller's guarded block is laid out away from
	 * its straight path.  Past it, the mask rlog__mask points at decides
	 * (several sessions, a wait: the gate's word is ~0 there). */
	if (RLOG__DISABLED(cat >= 64 ||
			   (atomic_load_explicit(&rlog__gate.w[RLOG__GATE_WORD],
						 memory_order_relaxed) >> cat & 1u) == 0))
		return false;
	_Atomic uint64_t *m = atomic_load_explicit(&rlog__mask, memory_order_relaxed);
	return (atomic_load_explicit(m, memory_order_relaxed) >> cat & 1u) != 0;
}

/*
 * rlog_write - record a time-stamped event.
 * @id:      event ID, RLOG_ID_RAW_U8 (16) .. RLOG_ID_MAX (16383), not 32..38;
 *           application IDs start at RLOG_ID_USER_MIN (1024)
 * @payload: len bytes to copy into the record (may be NULL if len is 0)
 * @len:     payload length, at most 65535 and what fits in a buffer
 * Returns 1, 0, -ENOBUFS, -EBUSY, -EMSGSIZE or -EINVAL (see the top of this
 * file).  Async-signal-safe.
 */
/* True for the IDs the producer API accepts: RAW_U8 .. RLOG_ID_MAX, except
 * ringlog's own IDs COUNTER .. COUNTER_NAME (written by the library or the
 * daemon only, and not counted as events).  Folds away for a constant ID. */
RLOG__INLINE bool rlog__id_ok(unsigned id)
{
	return id >= RLOG_ID_RAW_U8 && id <= RLOG_ID_MAX &&
	       id - RLOG_ID_COUNTER > RLOG_ID_COUNTER_NAME - RLOG_ID_COUNTER;
}

RLOG__INLINE int rlog_write(unsigned id, const void *payload, size_t len)
{
	if (RLOG__UNLIKELY(!rlog__id_ok(id)))
		return -EINVAL;
	return rlog__write(((uint32_t)id << RLOG_HDR_ID_SHIFT) | (uint32_t)(len & 0xffffu) |
				   RLOG_HDR_TIMESTAMP_BIT,
			   0, payload, len);
}

/*
 * rlog_write_flagged - record a time-stamped event with a 16-bit flag
 * (CeLog's CeLogData with fFlagged).  The record's header ID is FLAGGED and
 * the real ID and the flag follow the timestamp.
 * Same arguments and results as rlog_write, plus @flag.
 */
RLOG__INLINE int rlog_write_flagged(unsigned id, uint16_t flag, const void *payload, size_t len)
{
	if (RLOG__UNLIKELY(!rlog__id_ok(id)))
		return -EINVAL;
	return rlog__write(((uint32_t)RLOG_ID_FLAGGED << RLOG_HDR_ID_SHIFT) |
				   (uint32_t)(len & 0xffffu) | RLOG_HDR_TIMESTAMP_BIT,
			   (uint32_t)flag << 16 | id, payload, len);
}

/*
 * rlog_write_untimed - record an event without a timestamp (CeLog's
 * fTimeStamp clear): the record is the header and the payload, and writing
 * it reads no clock, so it costs about what storing the payload costs.
 * The reader gives it the time of the thread's previous record in the
 * session (the record just before it in the thread's buffer, or, at the
 * start of a buffer, the thread's last record before it) and marks it as
 * untimed (struct rlog_event.has_time false; docs/FORMAT.md, "Time").  A
 * thread's first record in a session, if untimed, gets the time at which
 * the thread took its buffer.  Use it for events whose order within the
 * thread matters and whose exact time does not: a counter bump, a state
 * change between two timed events.
 * Same arguments and results as rlog_write; counted as an event (written
 * or lost) like any other.  Async-signal-safe.
 */
RLOG__INLINE int rlog_write_untimed(unsigned id, const void *payload, size_t len)
{
	if (RLOG__UNLIKELY(!rlog__id_ok(id)))
		return -EINVAL;
	return rlog__write(((uint32_t)id << RLOG_HDR_ID_SHIFT) | (uint32_t)(len & 0xffffu), 0,
			   payload, len);
}

/*
 * rlog_write_untimed_flagged - rlog_write_flagged without a timestamp: the
 * header (ID FLAGGED, fTimeStamp clear), the flag word, the payload.  Timed
 * as rlog_write_untimed; same arguments and results as rlog_write_flagged.
 */
RLOG__INLINE int rlog_write_untimed_flagged(unsigned id, uint16_t flag, const void *payload,
					     size_t len)
{
	if (RLOG__UNLIKELY(!rlog__id_ok(id)))
		return -EINVAL;
	return rlog__write(((uint32_t)RLOG_ID_FLAGGED << RLOG_HDR_ID_SHIFT) |
				   (uint32_t)(len & 0xffffu),
			   (uint32_t)flag << 16 | id, payload, len);
}

/*
 * rlog_write_untimed_n - record count untimed events of one ID and one
 * payload length at once: record i's payload is the len bytes at
 * (const char *)payloads + i * len.  The records are exactly those that
 * count calls of rlog_write_untimed would write, in order, and each is
 * counted as an event (written or lost) like theirs.  What one call
 * saves is the per-call work (the enabled check, the thread's guard, the
 * space check, publishing the write offset), done once for all the records
 * that fit in the thread's buffer: each record then costs a header store
 * and its payload's copy.  A signal handler's write on this thread while
 * the records are copied is refused as nested, as during any write.
 * @id:       as rlog_write
 * @payloads: count * len bytes (may be NULL if len or count is 0)
 * @len:      payload length of each record, as rlog_write
 * @count:    records, at most INT_MAX
 * Returns the number of records written (0..count): the others were lost
 * (counted, as rlog_write's -ENOBUFS and -EBUSY) or not emitted (no
 * session, paused: as rlog_write's 0; the call then returns at once);
 * -EINVAL for a bad ID or count; -EMSGSIZE when no record was written
 * because len fits no buffer (as rlog_write_untimed, which with several
 * sessions still writes into those whose buffers hold it).
 * Async-signal-safe.
 */
RLOG__INLINE int rlog_write_untimed_n(unsigned id, const void *payloads, size_t len, size_t count)
{
	if (RLOG__UNLIKELY(!rlog__id_ok(id) || count > (size_t)0x7fffffff))
		return -EINVAL;
	/* As rlog_write_untimed's header: a len over RLOG_MAX_PAYLOAD never
	 * takes the fast path below, and the slow path refuses it. */
	uint32_t hdr = ((uint32_t)id << RLOG_HDR_ID_SHIFT) | (uint32_t)(len & 0xffffu);
	size_t size = (4 + len + 3) & ~(size_t)3;
	const uint8_t *src = (const uint8_t *)payloads;
	size_t i = 0, written = 0; /* records done (written, lost or refused), written */
	bool refused = false;     /* a record fitted no buffer (-EMSGSIZE) */
	while (i < count) {
		if (RLOG__WRITE_OFF(atomic_load_explicit(&rlog__gate.w[RLOG__GATE_WORD],
							 memory_order_relaxed) == 0))
			break;
		_Atomic uint64_t *m = atomic_load_explicit(&rlog__mask_or_null,
							   memory_order_relaxed);
		if (RLOG__UNLIKELY(m == NULL || atomic_load_explicit(m, memory_order_relaxed) == 0))
			break;
		struct rlog__thread *t = &rlog__thread;
		_Atomic uint32_t *busy = t->busy;
		size_t k = 0;
		if (RLOG__LIKELY(busy != NULL && atomic_load_explicit(busy, memory_order_relaxed) == 0)) {
			/* The guard, then the decisive mask load, as rlog__write. */
			atomic_store_explicit(busy, 1, memory_order_relaxed);
			atomic_signal_fence(memory_order_seq_cst);
			uint8_t *p = t->pos;
			if (p != NULL && len <= RLOG_MAX_PAYLOAD && t->mask == m &&
			    atomic_load_explicit(t->mask, memory_order_relaxed) != 0) {
				k = (size_t)(t->end - p) / size;
				k = k < count - i ? k : count - i;
			}
			if (k > 0) {
				uint8_t *base = t->base;
				_Atomic uint32_t *write_off = t->write_off;
				for (size_t j = 0; j < k; j++) {
					memcpy(p, &hdr, 4);
					rlog__put_payload(p + 4, src, len);
					p += size;
					src = len ? src + len : src; /* payloads may be NULL if len is 0 */
				}
				t->pos = p;
				t->written += k;
				atomic_store_explicit(write_off, (uint32_t)(p - base), memory_order_release);
			}
			atomic_signal_fence(memory_order_seq_cst);
			atomic_store_explicit(busy, 0, memory_order_release);
		}
		if (k > 0) {
			i += k;
			written += k;
			continue;
		}
		/* No room, no buffer yet, a rebinding, a nested write: one
		 * record the ordinary way (the slow path takes a new buffer). */
		int r = rlog__write(hdr, 0, src, len);
		if (r == 0)
			break;
		/* -EMSGSIZE: no buffer holds it (with several sessions, some
		 * may have taken it, as a single call's record); go on, as n
		 * calls would. */
		refused |= r == -EMSGSIZE;
		i++;
		src = len ? src + len : src;
		written += r > 0; /* else lost (-ENOBUFS, -EBUSY): counted */
	}
	return written == 0 && refused ? -EMSGSIZE : (int)written;
}

#ifdef __cplusplus
}
#endif

#endif /* RINGLOG_H */
