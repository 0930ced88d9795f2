/*
 * ringlog/ring.h - the single CeLog ring: one producer, one flush
 * application, one wrap-around byte ring in memory that both can reach.
 *
 *   #include <ringlog/ring.h>
 *
 *   // Once: a ring in memory the flush application maps too (a file, or a
 *   // POSIX shared-memory object: shm_open("/myring") is /dev/shm/myring).
 *   size_t size = RLOG_RING_HEADER_SIZE + 65536;
 *   int fd = shm_open("/myring", O_RDWR | O_CREAT | O_EXCL, 0600);
 *   ftruncate(fd, size);
 *   struct rlog_ring *r = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
 *   rlog_ring_init(r, size);                  // timestamps: CLOCK_MONOTONIC, ns
 *
 *   // Anywhere, a signal handler too: no lock, no libc, never blocks.
 *   struct timespec ts;
 *   clock_gettime(CLOCK_MONOTONIC, &ts);      // the ring's clock (async-signal-safe)
 *   uint64_t v[2] = { 42, 7 };
 *   rlog_ring_write(r, 1024, v, sizeof v, (uint32_t)(ts.tv_sec * 1000000000ull + ts.tv_nsec));
 *
 *   // When the ring is no longer needed (once ring-flush has drained it):
 *   // the object outlives both processes, as a file would.
 *   munmap(r, size);
 *   close(fd);
 *   shm_unlink("/myring");
 *
 * and `ringlog ring-flush /dev/shm/myring -o FILE` writes the events into a
 * log file that `ringlog dump`, `stats` and `convert` read.
 * (rlog_ring_init_clock declares the TSC instead, `(uint32_t)__rdtsc()`,
 * less than half the cost of clock_gettime; or firmware's own counter.)
 *
 * This is CeLog's buffering scheme (the MAPHEADER and its ring) for a
 * producer that cannot use a session: an interrupt or signal handler,
 * firmware writing into memory the host reads, a process that wants one
 * lock-free channel.  It is header-only and freestanding: the writer calls
 * no function (no libc, no system call but the fill event's futex wake,
 * made without libc; see RLOG_RING_WAKE), allocates nothing and takes no
 * lock.  docs/FORMAT.md ("The single ring") has every byte; this file is its
 * C rendering.
 *
 * The memory is a struct rlog_ring (192 bytes) followed by `size` bytes of
 * ring.  Offsets, never pointers: each side may map it at its own address.
 *
 *      header                                  ring (size bytes; offsets modulo size)
 *   +------------------------------+   +----------------------------------------------+
 *   | magic version size min_free  |   |      |//// committed records ////|            |
 *   | clock, pid, tid              |   |      ^                           ^            |
 *   +------------------------------+   |   read_off                   write_off        |
 *   | writer's line: write_off,    |   +----------------------------------------------+
 *   |   lost and nested counters   |   used = (write_off - read_off) mod size
 *   +------------------------------+   free = size - 4 - used: the writer never lets
 *   | flush side: read_off,        |          write_off catch up with read_off from
 *   |   set_event (futex), reported|          behind, so equal offsets mean empty
 *   +------------------------------+
 *
 * The protocol (the seed's rules; the numbers name the pairs):
 *
 *   writer (rlog_ring_write)                     flush application (ring-flush)
 *   ────────────────────────                     ──────────────────────────────
 *   busy set already? count nested, -EBUSY       W = load_acquire(write_off) ........ (1)
 *   busy = 1 (signal fence)                      copy [R, W) out, check every record
 *   w = write_off, rc = read_cache                 (hostile input), stage them
 *   record > free(w, rc)?                        store_release(read_off, W) ......... (2)
 *     rc = load_acquire(read_off) ....... (2)    L = load_acquire(lost_*, nested_*) . (3)
 *     still: lost_events += 1,                   DATA_LOSS records for L - reported,
 *       lost_bytes += size (release) .... (3)      then store reported_*
 *       -ENOBUFS (the event discarded whole)
 *   store the record's words at w..              to sleep until the next fill:
 *     (offsets modulo size: it may wrap)           store_seq_cst(set_event, 1)
 *   store_release(write_off, w') ........ (1)      fence(seq_cst) ................... (4)
 *   free(w', rc) < min_free?                       free(load_acquire(write_off), R)
 *     rc = load_acquire(read_off) ....... (2)        < min_free?  don't sleep
 *     still below: fence(seq_cst) ....... (4)      else futex_wait(&set_event, 1)
 *       load_acquire(set_event) == 1 and           exchange(set_event, 0) == 0: the
 *       still below (read_off again) and             producer signalled (a wake-up)
 *       exchange(set_event, 0) == 1?               drain
 *         fill_signals += 1
 *         futex_wake(&set_event, 1)
 *   busy = 0 (signal fence)
 *
 *   (1) the record's bytes are stored before write_off says so; the flush
 *       side reads no byte past the write_off it loaded.
 *   (2) the flush side has copied the bytes out before read_off frees them;
 *       the writer reuses no byte before the read_off it loaded.
 *   (3) losses are counted after the records before them are committed.
 *   (4) Dekker: the writer stores write_off then loads set_event, the flush
 *       side stores set_event then loads write_off, each with a full fence
 *       between, so either the writer sees the flag or the flush side sees
 *       the data that passed the mark: no lost wake-up.  The writer clears
 *       the flag before it wakes, so it signals once per fill, not once per
 *       event; the flush side sets it again when it is done (the seed).
 *       Both sides clear it with an exchange: the one that turns 1 into 0
 *       owns the fill, so fill_signals counts exactly the fill events the
 *       flush side receives.
 *
 * One producer.  Calls to rlog_ring_write and rlog_ring_write_flagged on one
 * ring must not overlap, except for a signal handler that interrupts a write
 * of the same thread: the busy flag catches it, and the nested write is
 * dropped and counted (-EBUSY, nested_events/nested_bytes, DATA_LOSS cause
 * NESTED).  Two threads, or two processes, writing one ring corrupt it
 * (ring-flush then counts CORRUPT losses): give each its own ring.
 *
 * The producer trusts its ring's geometry (it initialised it); it does not
 * trust the offsets the other side writes: a read offset outside the ring
 * makes a write return -EPROTO, never write outside the ring.  The flush
 * application trusts nothing (docs/FORMAT.md, "Reading a ring").
 */
#ifndef RINGLOG_RING_H
#define RINGLOG_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ringlog/format.h"

#if __STDC_HOSTED__
#include <errno.h>
#endif
/* A freestanding build has no <errno.h>: the values are Linux's, which is
 * what the flush application (on Linux) means by them. */
#ifndef EINVAL
#define EINVAL 22
#endif
#ifndef EBUSY
#define EBUSY 16
#endif
#ifndef ENOBUFS
#define ENOBUFS 105
#endif
#ifndef EMSGSIZE
#define EMSGSIZE 90
#endif
#ifndef EPROTO
#define EPROTO 71
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define RLOG_RING_MAGIC       0x47524c52u /* "RLRG" in memory byte order */
#define RLOG_RING_VERSION     1           /* the layout below; any change bumps it */
#define RLOG_RING_HEADER_SIZE 192         /* sizeof(struct rlog_ring): the ring starts here */
#define RLOG_RING_MIN_SIZE    64          /* smallest ring, bytes (a multiple of 4) */
#define RLOG_RING_MAX_SIZE    0x40000000u /* largest ring, bytes (1 GiB) */
#define RLOG_RING_GAP         4           /* bytes the writer always leaves free */

/*
 * The ring's header (CeLog's MAPHEADER, with offsets for pointers), then
 * `size` bytes of ring.  Little-endian, fixed width; docs/FORMAT.md
 * ("struct rlog_ring") has every field.
 */
struct rlog_ring {
	/* +0: identity, geometry and clock.  Written by rlog_ring_init before
	 * it stores magic (release); read-only afterwards, except pid and tid,
	 * which the creator may set before its first write. */
	_Atomic uint32_t magic;     /* RLOG_RING_MAGIC, stored last by rlog_ring_init */
	uint16_t version;           /* RLOG_RING_VERSION */
	uint16_t header_size;       /* RLOG_RING_HEADER_SIZE: offset of the ring */
	uint32_t size;              /* dwBufSize: bytes in the ring, a multiple of 4 */
	uint32_t min_free;          /* the minimum mark: a fill is due below this free space */
	uint64_t tick_freq_hz;      /* ticks per second of the timestamps; 0: measured (TSC) */
	uint32_t tick_source;       /* RLOG_TICK_TSC, RLOG_TICK_MONOTONIC or RLOG_TICK_COUNTER */
	uint32_t pid;               /* producer process, for the log file's blocks; 0: unknown */
	uint32_t tid;               /* producer thread, likewise */
	uint32_t reserved0;         /* 0 */
	uint8_t pad0[24];           /* 0 */
	/* +64: the writer's line.  Only the writer stores here. */
	_Atomic uint32_t write_off;     /* pWrite: end of the committed records, 0 .. size - 4 */
	_Atomic uint32_t lost_events;   /* events discarded for lack of room (free-running) */
	_Atomic uint32_t lost_bytes;    /* dwLostBytes: their record bytes (free-running) */
	_Atomic uint32_t nested_events; /* writes that interrupted a write (free-running) */
	_Atomic uint32_t nested_bytes;  /* their record bytes (free-running) */
	_Atomic uint32_t fill_signals;  /* fill events signalled (free-running) */
	_Atomic uint32_t read_cache;    /* writer-private: the last read_off it loaded */
	_Atomic uint32_t busy;          /* writer-private: 1 inside a write (the nesting guard) */
	uint8_t pad1[32];               /* 0 */
	/* +128: the flush application's line.  Only the flush application
	 * stores here, but for set_event, which the writer clears. */
	_Atomic uint32_t read_off;              /* pRead: oldest unread byte, 0 .. size - 4 */
	_Atomic uint32_t set_event;             /* fSetEvent, and the fill event's futex word */
	_Atomic uint32_t reported_lost_events;  /* lost_events already in DATA_LOSS records */
	_Atomic uint32_t reported_lost_bytes;   /* lost_bytes likewise */
	_Atomic uint32_t reported_nested_events;/* nested_events likewise */
	_Atomic uint32_t reported_nested_bytes; /* nested_bytes likewise */
	uint8_t pad2[40];                       /* 0 */
};
_Static_assert(sizeof(struct rlog_ring) == RLOG_RING_HEADER_SIZE, "ring header is 192 bytes");
_Static_assert(offsetof(struct rlog_ring, write_off) == 64, "writer's line at +64");
_Static_assert(offsetof(struct rlog_ring, read_off) == 128, "flush side's line at +128");
_Static_assert(sizeof(_Atomic uint32_t) == 4, "atomic u32 is 4 bytes");

#if defined(__GNUC__)
/* Branch hints and a cold, out-of-line slow path are GCC/Clang extensions;
 * without them the fast path is the same code with a worse layout.  The
 * slow-path functions are static, not inline (an inline function may not
 * be noinline), hence `unused` for a file that includes this header and
 * writes nothing. */
#define RLOG_RING__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define RLOG_RING__COLD __attribute__((noinline, unused))
/* The write path inline in the caller, always: GCC may otherwise judge it
 * too large and call it (a call and register saves per event, as measured
 * for rlog_write: docs/PERFORMANCE.md). */
#define RLOG_RING__INLINE static inline __attribute__((always_inline))
#else
#define RLOG_RING__UNLIKELY(x) (x)
#define RLOG_RING__COLD
#define RLOG_RING__INLINE static inline
#endif

/*
 * RLOG_RING_WAKE(word): wake the flush application sleeping on the futex
 * word (an _Atomic uint32_t *).  On Linux it is a raw futex(2) system call,
 * made without libc (libc's syscall() would clobber errno under a signal
 * handler, and a freestanding writer has no libc).  Elsewhere (firmware,
 * another kernel) define it before including this header: to ring a
 * doorbell, or to nothing if the flush application drains on a timer
 * (`ring-flush --flush-timer MS`).
 */
#ifndef RLOG_RING_WAKE
#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__) || \
			   (defined(__riscv) && __riscv_xlen == 64))
#define RLOG_RING_WAKE(word) rlog_ring__futex_wake(word)
static inline void rlog_ring__futex_wake(_Atomic uint32_t *word)
{
	/* futex(word, FUTEX_WAKE, 1), process-shared: the word may be in a
	 * mapping shared with another process.  Inline assembly and explicit
	 * register variables are GCC/Clang extensions: C has no other way to
	 * make a system call without a library. */
#if defined(__x86_64__)
	register long nr __asm__("rax") = 202; /* SYS_futex */
	register long a0 __asm__("rdi") = (long)word;
	register long a1 __asm__("rsi") = 1; /* FUTEX_WAKE */
	register long a2 __asm__("rdx") = 1; /* one waiter */
	__asm__ volatile("syscall" : "+r"(nr) : "r"(a0), "r"(a1), "r"(a2) : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long nr __asm__("x8") = 98; /* SYS_futex */
	register long a0 __asm__("x0") = (long)word;
	register long a1 __asm__("x1") = 1;
	register long a2 __asm__("x2") = 1;
	__asm__ volatile("svc 0" : "+r"(a0) : "r"(nr), "r"(a1), "r"(a2) : "memory");
#else
	register long nr __asm__("a7") = 98; /* SYS_futex */
	register long a0 __asm__("a0") = (long)word;
	register long a1 __asm__("a1") = 1;
	register long a2 __asm__("a2") = 1;
	__asm__ volatile("ecall" : "+r"(a0) : "r"(nr), "r"(a1), "r"(a2) : "memory");
#endif
}
#else
#error "ringlog/ring.h: define RLOG_RING_WAKE(word) for this platform (see its comment)"
#endif
#endif

/* Bytes a record of payload len takes in the ring: header, timestamp,
 * flag word if flagged, payload, fill to 4 bytes (docs/FORMAT.md). */
static inline uint32_t rlog_ring_record_size(size_t len, int flagged)
{
	return (uint32_t)((8u + (flagged ? 4u : 0u) + len + 3u) & ~(size_t)3u);
}

/*
 * rlog_ring_init_clock - lay out a ring in mem and declare its clock.
 * @mem:          at least RLOG_RING_HEADER_SIZE + RLOG_RING_MIN_SIZE bytes,
 *                8-byte aligned (64 is better: the header's lines are 64 bytes)
 * @size:         bytes at mem; the ring gets the largest multiple of 4 after
 *                the header, at most RLOG_RING_MAX_SIZE
 * @tick_source:  what the producer's 32-bit timestamps are the low bits of:
 *                RLOG_TICK_TSC (x86 time-stamp counter of this machine; the
 *                flush application measures its frequency), RLOG_TICK_MONOTONIC
 *                (CLOCK_MONOTONIC in ns) or RLOG_TICK_COUNTER (a counter only
 *                the producer reads, e.g. firmware's, at tick_freq_hz)
 * @tick_freq_hz: ticks per second for RLOG_TICK_COUNTER (> 0); ignored (0 is
 *                stored) for TSC, 1000000000 is stored for MONOTONIC
 * Everything is zeroed and set before the magic is stored (release), so a
 * flush application that sees the magic sees a whole header.  The minimum
 * mark is 30% of the ring (the fill event at 70% full, as a session's
 * high-water mark); set min_free before the first write to change it.
 * set_event starts at 0: no flush application is waiting yet.
 * Not to be called on a ring in use.
 * Returns 0, or -EINVAL (mem NULL or misaligned, size too small, an unknown
 * tick source, a COUNTER without a frequency).
 */
static inline int rlog_ring_init_clock(void *mem, size_t size, uint32_t tick_source,
				       uint64_t tick_freq_hz)
{
	if (mem == NULL || ((uintptr_t)mem & 7u) != 0 ||
	    size < RLOG_RING_HEADER_SIZE + RLOG_RING_MIN_SIZE)
		return -EINVAL;
	if (tick_source != RLOG_TICK_TSC && tick_source != RLOG_TICK_MONOTONIC &&
	    !(tick_source == RLOG_TICK_COUNTER && tick_freq_hz > 0))
		return -EINVAL;
	size_t ring = size - RLOG_RING_HEADER_SIZE;
	if (ring > RLOG_RING_MAX_SIZE)
		ring = RLOG_RING_MAX_SIZE;
	ring &= ~(size_t)3u;
	struct rlog_ring *r = (struct rlog_ring *)mem;
	unsigned char *p = (unsigned char *)mem;
	/* The header, byte by byte: no memset (no libc on this side). */
	for (size_t i = sizeof r->magic; i < RLOG_RING_HEADER_SIZE; i++)
		p[i] = 0;
	atomic_store_explicit(&r->magic, 0, memory_order_relaxed);
	r->version = RLOG_RING_VERSION;
	r->header_size = RLOG_RING_HEADER_SIZE;
	r->size = (uint32_t)ring;
	r->min_free = (uint32_t)(ring * 3 / 10) & ~3u;
	r->tick_source = tick_source;
	r->tick_freq_hz = tick_source == RLOG_TICK_COUNTER ? tick_freq_hz
			  : tick_source == RLOG_TICK_MONOTONIC ? 1000000000u : 0;
	/* Release: a flush application that loads the magic (acquire) sees
	 * every field above. */
	atomic_store_explicit(&r->magic, RLOG_RING_MAGIC, memory_order_release);
	return 0;
}

/*
 * rlog_ring_init - lay out a ring in mem whose timestamps are the low 32
 * bits of CLOCK_MONOTONIC in nanoseconds (the clock every Linux program can
 * read, async-signal-safely).  rlog_ring_init_clock(mem, size,
 * RLOG_TICK_MONOTONIC, 0); same arguments and returns.
 */
static inline int rlog_ring_init(void *mem, size_t size)
{
	return rlog_ring_init_clock(mem, size, RLOG_TICK_MONOTONIC, 0);
}

/* Stores v at p, little-endian.  Byte stores that the compiler merges into
 * one (GCC and Clang do at -O1 and up); also right on a big-endian producer. */
static inline void rlog_ring__put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

/* The payload's 4 bytes at s as a little-endian word (s need not be
 * aligned; the compiler makes this one load). */
static inline uint32_t rlog_ring__get32(const unsigned char *s)
{
	return (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 | (uint32_t)s[3] << 24;
}

/* The last 1..3 payload bytes, zero-filled to a word. */
static inline uint32_t rlog_ring__tail32(const unsigned char *s, size_t n)
{
	uint32_t v = s[0];
	if (n > 1)
		v |= (uint32_t)s[1] << 8;
	if (n > 2)
		v |= (uint32_t)s[2] << 16;
	return v;
}

/* Free bytes, given the write and read offsets (both < size). */
static inline uint32_t rlog_ring__free(uint32_t size, uint32_t w, uint32_t rd)
{
	uint32_t used = w >= rd ? w - rd : size - rd + w;
	return size - RLOG_RING_GAP - used;
}

/* The offset of the word after the one at w (w < size; both multiples of
 * 4): addresses modulo size. */
static inline uint32_t rlog_ring__next(uint32_t w, uint32_t size)
{
	return w + 4 >= size ? 0 : w + 4;
}

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/*
 * The record's words on a little-endian producer built by GCC or Clang:
 * the header and the timestamp in one 8-byte store, the payload in 8-byte
 * words, with __builtin_memcpy (a GCC/Clang built-in: inlined moves with
 * no call into a C library, which a freestanding writer may not have).
 * The byte stores of the portable path below are what the layout means;
 * GCC 12 at -O2 copies a 16-byte payload through them as a loop of four
 * 4-byte moves, about a third of the write (docs/PERFORMANCE.md, "The
 * single ring").  Loads of at most 8 bytes, as rlog__put_payload's: a
 * caller that just stored its payload has it forwarded.  Up to 64 bytes
 * the copy is straight moves for a constant length; longer or not a
 * multiple of 4, the portable words.
 */
#define RLOG_RING__LE_COPY 1
static inline void rlog_ring__copy_le(unsigned char *d, uint32_t hdr, uint32_t timestamp,
				      uint32_t flagword, int flagged, const unsigned char *s,
				      size_t len)
{
	uint64_t head = (uint64_t)timestamp << 32 | hdr;
	__builtin_memcpy(d, &head, 8);
	d += 8;
	if (flagged) {
		__builtin_memcpy(d, &flagword, 4);
		d += 4;
	}
	size_t i = 0;
	if (len <= 64 && (len & 3u) == 0) {
		for (; i + 8 <= len; i += 8) {
			uint64_t x;
			__builtin_memcpy(&x, s + i, 8);
			__builtin_memcpy(d + i, &x, 8);
		}
	}
	for (; i + 4 <= len; i += 4) {
		uint32_t x;
		__builtin_memcpy(&x, s + i, 4);
		__builtin_memcpy(d + i, &x, 4);
	}
	if (i < len)
		rlog_ring__put32(d + i, rlog_ring__tail32(s + i, len - i));
}
#else
#define RLOG_RING__LE_COPY 0
#endif

/* Stores a record's words from offset w, wrapping at the end of the ring
 * (the slow path: the record straddles the end).  Returns the new offset. */
RLOG_RING__COLD static uint32_t rlog_ring__store_wrapped(unsigned char *ring, uint32_t size,
							 uint32_t w, const uint32_t *head,
							 unsigned nhead, const unsigned char *s,
							 size_t len)
{
	/* The caller has checked w; saying so here keeps a compiler that
	 * clones this function for one ring from warning about offsets it
	 * cannot rule out. */
	if (w >= size)
		return 0;
	for (unsigned i = 0; i < nhead; i++) {
		rlog_ring__put32(ring + w, head[i]);
		w = rlog_ring__next(w, size);
	}
	size_t i = 0;
	for (; i + 4 <= len; i += 4) {
		rlog_ring__put32(ring + w, rlog_ring__get32(s + i));
		w = rlog_ring__next(w, size);
	}
	if (i < len) {
		rlog_ring__put32(ring + w, rlog_ring__tail32(s + i, len - i));
		w = rlog_ring__next(w, size);
	}
	return w;
}

/* The read offset the flush side stored last, checked, and cached for the
 * next writes; UINT32_MAX if it is not an offset.  (2) Acquire: pairs with
 * the flush side's store_release(read_off) after it copied the bytes out,
 * so from here on the writer may reuse them. */
static inline uint32_t rlog_ring__load_read(struct rlog_ring *r, uint32_t size)
{
	uint32_t rd = atomic_load_explicit(&r->read_off, memory_order_acquire);
	if (rd >= size || (rd & 3u) != 0)
		return UINT32_MAX;
	atomic_store_explicit(&r->read_cache, rd, memory_order_relaxed);
	return rd;
}

/* The cached free space at write offset w went below the mark: the fill
 * event, if the real free space is below it too and the flush application
 * is waiting for one. */
RLOG_RING__COLD static void rlog_ring__fill(struct rlog_ring *r, uint32_t size, uint32_t w)
{
	/* The cache may be old: a flush application that keeps up has freed
	 * the space since.  A read offset at most as new as the real one
	 * under-states the free space, so "at or above the mark" here is. */
	uint32_t rd = rlog_ring__load_read(r, size);
	if (rd == UINT32_MAX || rlog_ring__free(size, w, rd) >= r->min_free)
		return;
	/* (4) Pairs with the flush application's fence between its store of
	 * set_event = 1 and its load of write_off. */
	atomic_thread_fence(memory_order_seq_cst);
	/* Acquire: pairs with the flush side's store of set_event = 1, after
	 * its store of read_off, which the load below then sees. */
	if (atomic_load_explicit(&r->set_event, memory_order_acquire) == 0)
		return;
	rd = rlog_ring__load_read(r, size);
	if (rd == UINT32_MAX || rlog_ring__free(size, w, rd) >= r->min_free)
		return; /* the flush side has made room since: no fill */
	/* The flush side also clears the flag, when it finds the fill without
	 * sleeping; whoever turns the 1 into 0 owns this fill, so it is
	 * signalled (and counted) once.  One atomic exchange per fill. */
	if (atomic_exchange_explicit(&r->set_event, 0, memory_order_acq_rel) == 0)
		return;
	atomic_store_explicit(&r->fill_signals,
			      atomic_load_explicit(&r->fill_signals, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	RLOG_RING_WAKE(&r->set_event);
}

/*
 * No room at write offset w by the cached read offset: load the real one.
 * Returns 0 if the record fits now, else what the write returns (the event
 * was discarded and counted, or the read offset is not one).
 */
RLOG_RING__COLD static int rlog_ring__no_room(struct rlog_ring *r, uint32_t size, uint32_t w,
					      uint32_t rec)
{
	uint32_t rd = rlog_ring__load_read(r, size);
	if (rd == UINT32_MAX)
		return -EPROTO;
	if (rec <= rlog_ring__free(size, w, rd))
		return 0;
	/* Discard the whole event and count it (the seed's dwLostBytes).  Only
	 * the writer stores these; a nested write counts elsewhere.  (3)
	 * Release: pairs with the flush side's load_acquire of the counters. */
	atomic_store_explicit(&r->lost_events,
			      atomic_load_explicit(&r->lost_events, memory_order_relaxed) + 1,
			      memory_order_release);
	atomic_store_explicit(&r->lost_bytes,
			      atomic_load_explicit(&r->lost_bytes, memory_order_relaxed) + rec,
			      memory_order_release);
	if (rlog_ring__free(size, w, rd) < r->min_free)
		rlog_ring__fill(r, size, w);
	return -ENOBUFS;
}

/* A write that interrupted a write of the same ring (a signal handler):
 * dropped and counted.  An atomic add, since a handler may interrupt this
 * handler too; it is the rare path. */
RLOG_RING__COLD static int rlog_ring__nested(struct rlog_ring *r, uint32_t rec)
{
	atomic_fetch_add_explicit(&r->nested_events, 1, memory_order_release);
	atomic_fetch_add_explicit(&r->nested_bytes, rec, memory_order_release);
	return -EBUSY;
}

/* True for the IDs a producer may write: RAW_U8 .. RLOG_ID_MAX, except
 * ringlog's own IDs COUNTER .. COUNTER_NAME (32..38, as rlog_write): a
 * COUNTER or COUNTER_NAME outside a daemon block is malformed. */
static inline int rlog_ring__id_ok(unsigned id)
{
	return id >= RLOG_ID_RAW_U8 && id <= RLOG_ID_MAX &&
	       id - RLOG_ID_COUNTER > RLOG_ID_COUNTER_NAME - RLOG_ID_COUNTER;
}

/* The write: hdr and flagword are the record's first words (flagword only
 * if flagged). */
RLOG_RING__INLINE int rlog_ring__write(struct rlog_ring *r, uint32_t hdr, uint32_t flagword,
				   int flagged, const void *payload, size_t len, uint32_t timestamp)
{
	const uint32_t size = r->size;
	const uint32_t rec = rlog_ring_record_size(len, flagged);
	const unsigned char *s = (const unsigned char *)payload;
	/* Larger than the ring can ever hold: refused, not lost. */
	if (RLOG_RING__UNLIKELY(rec > size - RLOG_RING_GAP))
		return -EMSGSIZE;
	if (RLOG_RING__UNLIKELY(atomic_load_explicit(&r->busy, memory_order_relaxed) != 0))
		return rlog_ring__nested(r, rec);
	atomic_store_explicit(&r->busy, 1, memory_order_relaxed);
	/* A handler that runs from here on sees busy; this thread's loads
	 * below happen after it. */
	atomic_signal_fence(memory_order_seq_cst);
	int ret = 1;
	uint32_t w = atomic_load_explicit(&r->write_off, memory_order_relaxed);
	uint32_t rd = atomic_load_explicit(&r->read_cache, memory_order_relaxed);
	if (RLOG_RING__UNLIKELY(w >= size || rd >= size || ((w | rd) & 3u) != 0)) {
		ret = -EPROTO;
		goto out;
	}
	uint32_t room = rlog_ring__free(size, w, rd);
	if (RLOG_RING__UNLIKELY(rec > room)) {
		ret = rlog_ring__no_room(r, size, w, rec);
		if (ret != 0)
			goto out;
		ret = 1;
		room = rlog_ring__free(size, w, atomic_load_explicit(&r->read_cache,
								     memory_order_relaxed));
	}
	unsigned char *ring = (unsigned char *)r + RLOG_RING_HEADER_SIZE;
	uint32_t w2;
	if (RLOG_RING__UNLIKELY(rec > size - w)) {
		uint32_t head[3] = { hdr, timestamp, flagword };
		w2 = rlog_ring__store_wrapped(ring, size, w, head, flagged ? 3u : 2u, s, len);
	} else {
		unsigned char *d = ring + w;
#if RLOG_RING__LE_COPY
		rlog_ring__copy_le(d, hdr, timestamp, flagword, flagged, s, len);
#else
		rlog_ring__put32(d, hdr);
		rlog_ring__put32(d + 4, timestamp);
		d += 8;
		if (flagged) {
			rlog_ring__put32(d, flagword);
			d += 4;
		}
		size_t i = 0;
		for (; i + 4 <= len; i += 4)
			rlog_ring__put32(d + i, rlog_ring__get32(s + i));
		if (i < len)
			rlog_ring__put32(d + i, rlog_ring__tail32(s + i, len - i));
#endif
		w2 = w + rec == size ? 0 : w + rec;
	}
	/* (1) Release: the record's bytes before the offset that commits
	 * them; pairs with the flush side's load_acquire(write_off). */
	atomic_store_explicit(&r->write_off, w2, memory_order_release);
	if (RLOG_RING__UNLIKELY(room - rec < r->min_free))
		rlog_ring__fill(r, size, w2);
out:
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&r->busy, 0, memory_order_relaxed);
	return ret;
}

/*
 * rlog_ring_write - record a time-stamped event in the ring (CeLog's
 * CeLogData into the ring buffer).
 * @r:         a ring laid out by rlog_ring_init[_clock], in this process's
 *             address space
 * @id:        event ID, RLOG_ID_RAW_U8 (16) .. RLOG_ID_MAX (16383), not
 *             32..38; application IDs start at RLOG_ID_USER_MIN (1024)
 * @payload:   len bytes copied into the record (may be NULL if len is 0)
 * @len:       payload bytes, at most 65535
 * @timestamp: the low 32 bits of the ring's clock (tick_source) now
 * Returns
 *   1          the event is in the ring
 *   -ENOBUFS   discarded and counted (lost_events, lost_bytes): no room
 *              between the write offset and the read offset
 *   -EBUSY     discarded and counted (nested_events, nested_bytes): the
 *              call interrupted another write of the ring (a signal handler)
 *   -EMSGSIZE  not written, not counted: the record is larger than the
 *              ring can ever hold (size - 4), or len > 65535
 *   -EINVAL    not written, not counted: an ID the API refuses
 *   -EPROTO    not written, not counted: the ring's offsets are not offsets
 *              (something scribbled on the header)
 * An event counts as emitted when a write returns 1, -ENOBUFS or -EBUSY;
 * emitted = written + lost holds exactly (ring-flush reports the losses).
 * Async-signal-safe; lock-free; calls no function but, once per fill, the
 * fill event's wake-up (RLOG_RING_WAKE).
 */
RLOG_RING__INLINE int rlog_ring_write(struct rlog_ring *r, unsigned id, const void *payload,
				  size_t len, uint32_t timestamp)
{
	if (RLOG_RING__UNLIKELY(!rlog_ring__id_ok(id)))
		return -EINVAL;
	if (RLOG_RING__UNLIKELY(len > RLOG_MAX_PAYLOAD))
		return -EMSGSIZE;
	return rlog_ring__write(r, (uint32_t)len | (uint32_t)id << RLOG_HDR_ID_SHIFT |
					   RLOG_HDR_TIMESTAMP_BIT,
				0, 0, payload, len, timestamp);
}

/*
 * rlog_ring_write_flagged - as rlog_ring_write, with CeLog's 16-bit flag:
 * the record's header ID is FLAGGED and the real ID and the flag follow the
 * timestamp (4 bytes more).  Same arguments and returns, plus @flag.
 */
RLOG_RING__INLINE int rlog_ring_write_flagged(struct rlog_ring *r, unsigned id, uint16_t flag,
					  const void *payload, size_t len, uint32_t timestamp)
{
	if (RLOG_RING__UNLIKELY(!rlog_ring__id_ok(id)))
		return -EINVAL;
	if (RLOG_RING__UNLIKELY(len > RLOG_MAX_PAYLOAD))
		return -EMSGSIZE;
	return rlog_ring__write(r, (uint32_t)len | (uint32_t)RLOG_ID_FLAGGED << RLOG_HDR_ID_SHIFT |
					   RLOG_HDR_TIMESTAMP_BIT,
				(uint32_t)flag << 16 | id, 1, payload, len, timestamp);
}

#ifdef __cplusplus
}
#endif

#endif /* RINGLOG_RING_H */
