/*
 * test_ring_writer - the single ring's producer side (ringlog/ring.h), byte
 * by byte, in ordinary memory:
 *
 *   - rlog_ring_init[_clock]: the header it lays out, what it refuses;
 *   - a record's bytes (plain, flagged, 1..3 fill bytes) at the write offset;
 *   - a record that straddles the end of the ring: split word by word,
 *     the rest at offset 0 (addresses modulo size);
 *   - a full ring: the whole event discarded, lost_events and lost_bytes
 *     exact, nothing written; room again once read_off moves;
 *   - refusals that are not losses: -EINVAL IDs, -EMSGSIZE, -EPROTO for a
 *     scribbled offset (and nothing written outside the ring);
 *   - the nesting guard: a write inside a write returns -EBUSY, counted in
 *     nested_*;
 *   - the fill event: signalled only with set_event set, once per fill (not
 *     once per event), the flag cleared; and the futex wake really wakes a
 *     thread sleeping on set_event, once;
 *   - the writer is freestanding: compiled with -ffreestanding by $CC, its
 *     object has no undefined symbol (no libc call).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>

#include "futex.h"
#include "ring_util.h"
#include "tap.h"

#define RING 256u

static _Alignas(64) unsigned char mem[RLOG_RING_HEADER_SIZE + RING];
static struct rlog_ring *const r = (struct rlog_ring *)mem;
static unsigned char *const ring = mem + RLOG_RING_HEADER_SIZE;

static void reset(void)
{
	memset(mem, 0xee, sizeof mem);
	BAIL_IF(rlog_ring_init_clock(mem, sizeof mem, RLOG_TICK_COUNTER, 1000000) != 0, "init");
}

static bool bytes_are(const unsigned char *p, const char *hex)
{
	for (size_t i = 0; hex[2 * i]; i++) {
		unsigned v;
		sscanf(hex + 2 * i, "%2x", &v);
		if (p[i] != v) {
			diag("byte %zu is %02x, expected %02x", i, p[i], v);
			return false;
		}
	}
	return true;
}

static void test_init(void)
{
	_Alignas(64) unsigned char m[1024];
	ASSERT_EQ(rlog_ring_init(NULL, 1024), -EINVAL);
	ASSERT_EQ(rlog_ring_init(m + 4, 1000), -EINVAL); /* misaligned */
	ASSERT_EQ(rlog_ring_init(m, RLOG_RING_HEADER_SIZE + RLOG_RING_MIN_SIZE - 1), -EINVAL);
	ASSERT_EQ(rlog_ring_init_clock(m, sizeof m, 9, 0), -EINVAL);
	ASSERT_EQ(rlog_ring_init_clock(m, sizeof m, RLOG_TICK_COUNTER, 0), -EINVAL);
	ASSERT_EQ(rlog_ring_init(m, RLOG_RING_HEADER_SIZE + RLOG_RING_MIN_SIZE), 0);

	memset(m, 0xee, sizeof m);
	ASSERT_EQ(rlog_ring_init(m, sizeof m - 2), 0); /* 830 bytes after the header */
	struct rlog_ring *h = (struct rlog_ring *)m;
	ASSERT_EQ(atomic_load(&h->magic), RLOG_RING_MAGIC);
	ok(memcmp(m, "RLRG", 4) == 0, "the magic reads \"RLRG\" in memory");
	ASSERT_EQ(h->version, 1);
	ASSERT_EQ(h->header_size, 192);
	ASSERT_EQ(h->size, 828);              /* (1022 - 192) rounded down to 4 */
	ASSERT_EQ(h->min_free, 248);          /* 30%: 828 * 3 / 10 = 248 */
	ASSERT_EQ(h->tick_source, RLOG_TICK_MONOTONIC);
	ASSERT_EQ_U64(h->tick_freq_hz, 1000000000u);
	bool zero = true;
	for (size_t i = 28; i < RLOG_RING_HEADER_SIZE; i++)
		zero = zero && m[i] == 0;
	ok(zero, "every byte of the header after the clock is 0 (offsets, counters, flags)");
	ok(m[RLOG_RING_HEADER_SIZE] == 0xee, "the ring's bytes are not touched");

	ASSERT_EQ(rlog_ring_init_clock(m, sizeof m, RLOG_TICK_TSC, 12345), 0);
	ASSERT_EQ_U64(h->tick_freq_hz, 0); /* the flush side measures the TSC */
	ASSERT_EQ(rlog_ring_init_clock(m, sizeof m, RLOG_TICK_COUNTER, 32768), 0);
	ASSERT_EQ_U64(h->tick_freq_hz, 32768);
	ASSERT_EQ(h->tick_source, RLOG_TICK_COUNTER);
}

static void test_record_bytes(void)
{
	reset();
	ASSERT_EQ(rlog_ring_write(r, 1024, "hello", 5, 0x12345678), 1);
	ok(bytes_are(ring, "0500008478563412" "68656c6c" "6f000000"),
	   "a 5-byte payload: header 0x84000005, timestamp, payload, 3 fill bytes of 0");
	ASSERT_EQ(atomic_load(&r->write_off), 16);
	uint32_t v = 7;
	ASSERT_EQ(rlog_ring_write_flagged(r, 1025, 3, &v, 4, 0x12345678), 1);
	ok(bytes_are(ring + 16, "0400038078563412" "01040300" "07000000"),
	   "flagged: header 0x80030004, timestamp, flag word 0x00030401, payload");
	ASSERT_EQ(atomic_load(&r->write_off), 32);
	ASSERT_EQ(rlog_ring_write(r, RLOG_ID_RAW_U8, NULL, 0, 1), 1);
	ok(bytes_are(ring + 32, "0000108001000000"), "no payload: 8 bytes");
	ASSERT_EQ(rlog_ring_write(r, 2000, "abcdefg", 7, 2), 1);
	ok(bytes_are(ring + 40, "0700d08702000000" "61626364" "65666700"), "7 bytes, 1 fill byte");
	ASSERT_EQ(atomic_load(&r->write_off), 56);
	ASSERT_EQ(rlog_ring_record_size(5, 0), 16);
	ASSERT_EQ(rlog_ring_record_size(4, 1), 16);
	ASSERT_EQ(rlog_ring_record_size(65535, 1), 65548);
	ASSERT_EQ(atomic_load(&r->lost_events), 0);
	ASSERT_EQ(atomic_load(&r->fill_signals), 0);
	ASSERT_EQ(atomic_load(&r->busy), 0);
}

/* The record ring.h must store for a payload of len bytes (pattern
 * 0x10 + i), at offset 0. */
static bool record_is(unsigned id, int flagged, uint16_t flag, size_t len, uint32_t ts)
{
	unsigned char want[96];
	size_t n = 0;
	uint32_t hdr = (uint32_t)len | RLOG_HDR_TIMESTAMP_BIT |
		       (uint32_t)(flagged ? RLOG_ID_FLAGGED : id) << RLOG_HDR_ID_SHIFT;
	uint32_t words[3] = { hdr, ts, (uint32_t)flag << 16 | id };
	for (int w = 0; w < (flagged ? 3 : 2); w++)
		for (int k = 0; k < 4; k++)
			want[n++] = (unsigned char)(words[w] >> (8 * k));
	for (size_t i = 0; i < len; i++)
		want[n++] = (unsigned char)(0x10 + i);
	while (n % 4)
		want[n++] = 0;
	if (memcmp(ring, want, n) != 0 || ring[n] != 0xee)
		return false;
	return atomic_load(&r->write_off) == n;
}

/* Every payload length 0..72 (the 8-byte words up to 64 bytes, 4-byte
 * words past them, 1..3 tail bytes), plain and flagged, with the length
 * known at run time and with constant lengths (the copy the compiler
 * specialises): the same bytes as the layout's byte-by-byte definition. */
static void test_record_lengths(void)
{
	unsigned char pay[80];
	for (size_t i = 0; i < sizeof pay; i++)
		pay[i] = (unsigned char)(0x10 + i);
	int bad = 0;
	for (size_t len = 0; len <= 72; len++) {
		volatile size_t vlen = len;
		reset();
		memset(ring, 0xee, RING);
		bad += rlog_ring_write(r, 1030, pay, vlen, 0xa1b2c3d4u) != 1 ||
		       !record_is(1030, 0, 0, len, 0xa1b2c3d4u);
		reset();
		memset(ring, 0xee, RING);
		bad += rlog_ring_write_flagged(r, 1031, 0xbeef, pay, vlen, 0x01020304u) != 1 ||
		       !record_is(1031, 1, 0xbeef, len, 0x01020304u);
		if (bad) {
			diag("payload length %zu", len);
			break;
		}
	}
	ok(bad == 0, "lengths 0..72, plain and flagged: the record's exact bytes");
	static const size_t consts[] = { 8, 16, 20, 64, 66 };
	bad = 0;
	for (int k = 0; k < 5; k++) {
		reset();
		memset(ring, 0xee, RING);
		int w = k == 0   ? rlog_ring_write(r, 1030, pay, 8, 7)
			: k == 1 ? rlog_ring_write(r, 1030, pay, 16, 7)
			: k == 2 ? rlog_ring_write(r, 1030, pay, 20, 7)
			: k == 3 ? rlog_ring_write(r, 1030, pay, 64, 7)
				 : rlog_ring_write(r, 1030, pay, 66, 7);
		bad += w != 1 || !record_is(1030, 0, 0, consts[k], 7);
	}
	ok(bad == 0, "constant lengths 8, 16, 20, 64, 66: the record's exact bytes");
}

static void test_wrap(void)
{
	reset();
	/* Put both offsets 8 bytes before the end. */
	atomic_store(&r->write_off, RING - 8);
	atomic_store(&r->read_off, RING - 8);
	atomic_store(&r->read_cache, RING - 8);
	uint64_t v[2] = { 0x1122334455667788u, 0x99aabbccddeeff00u };
	ASSERT_EQ(rlog_ring_write(r, 1024, v, 16, 0xcafef00d), 1);
	ok(bytes_are(ring + RING - 8, "100000840df0feca"),
	   "the header and timestamp fill the last 8 bytes of the ring");
	ok(bytes_are(ring, "8877665544332211" "00ffeeddccbbaa99"), "the payload continues at offset 0");
	ASSERT_EQ(atomic_load(&r->write_off), 16);
	ok(ring[16] == 0xee, "nothing past the record");

	/* Split inside the payload, with fill: 12 bytes before the end, a
	 * 7-byte payload (16 bytes). */
	atomic_store(&r->write_off, RING - 12);
	atomic_store(&r->read_off, RING - 12);
	atomic_store(&r->read_cache, RING - 12);
	ASSERT_EQ(rlog_ring_write(r, 1024, "ABCDEFG", 7, 5), 1);
	ok(bytes_are(ring + RING - 12, "070000840500000041424344"), "header, timestamp, 4 bytes");
	ok(bytes_are(ring, "45464700"), "then 3 bytes and the fill at offset 0");
	ASSERT_EQ(atomic_load(&r->write_off), 4);

	/* A record that ends exactly at the end: the offset wraps to 0. */
	atomic_store(&r->write_off, RING - 16);
	atomic_store(&r->read_off, RING - 16);
	atomic_store(&r->read_cache, RING - 16);
	ASSERT_EQ(rlog_ring_write(r, 1024, v, 8, 6), 1);
	ASSERT_EQ(atomic_load(&r->write_off), 0);
}

static void test_full(void)
{
	reset();
	uint64_t v = 1;
	/* 252 bytes of room (4 are always kept free): 15 records of 16. */
	int ones = 0;
	for (int i = 0; i < 15; i++)
		ones += rlog_ring_write(r, 1024, &v, 8, (uint32_t)i) == 1;
	ASSERT_EQ(ones, 15);
	ASSERT_EQ(atomic_load(&r->write_off), 240);
	unsigned char before[RING];
	memcpy(before, ring, RING);
	ASSERT_EQ(rlog_ring_write(r, 1024, &v, 8, 99), -ENOBUFS); /* 16 > 12 free */
	ASSERT_EQ(rlog_ring_write(r, 1024, &v, 4, 99), 1);        /* 12 fit, 4 stay free */
	ASSERT_EQ(rlog_ring_write(r, 1024, NULL, 0, 99), -ENOBUFS);
	ASSERT_EQ(rlog_ring_write(r, 1024, NULL, 0, 99), -ENOBUFS);
	ASSERT_EQ(atomic_load(&r->lost_events), 3);
	ASSERT_EQ(atomic_load(&r->lost_bytes), 16 + 8 + 8);
	ok(memcmp(before, ring, 240) == 0, "the lost events wrote nothing into the ring");
	ASSERT_EQ(atomic_load(&r->write_off), 252);
	/* Refusals are not losses. */
	/* (The lengths through a volatile: with a constant length that can
	 * never fit, GCC warns that the copy would overflow the array.) */
	static unsigned char big[70000];
	volatile size_t ring_len = RING, huge = 70000, n245 = 245, n244 = 244;
	ASSERT_EQ(rlog_ring_write(r, 1024, big, ring_len, 1), -EMSGSIZE); /* 264 > 252 */
	ASSERT_EQ(rlog_ring_write(r, 1024, big, huge, 1), -EMSGSIZE);
	ASSERT_EQ(rlog_ring_write(r, 15, &v, 8, 1), -EINVAL);
	ASSERT_EQ(rlog_ring_write(r, 32, &v, 8, 1), -EINVAL);
	ASSERT_EQ(rlog_ring_write(r, 37, &v, 8, 1), -EINVAL);
	ASSERT_EQ(rlog_ring_write(r, 38, &v, 8, 1), -EINVAL); /* COUNTER_NAME: the daemon's */
	ASSERT_EQ(rlog_ring_write(r, 16384, &v, 8, 1), -EINVAL);
	ASSERT_EQ(rlog_ring_write_flagged(r, 4, 1, &v, 8, 1), -EINVAL);
	ASSERT_EQ(atomic_load(&r->lost_events), 3);
	/* The flush side frees 64 bytes: the writer finds them (the first
	 * record straddles the end: 4 bytes there, 12 at offset 0). */
	atomic_store(&r->read_off, 64);
	ASSERT_EQ(rlog_ring_write(r, 1024, &v, 8, 100), 1);
	ASSERT_EQ(atomic_load(&r->read_cache), 64);
	ASSERT_EQ(atomic_load(&r->write_off), 12);
	ASSERT_EQ(rlog_ring_write(r, 1024, &v, 8, 101), 1);
	ASSERT_EQ(rlog_ring_write(r, 1024, &v, 8, 102), 1);
	ASSERT_EQ(rlog_ring_write(r, 1024, &v, 8, 103), 1);
	ASSERT_EQ(atomic_load(&r->write_off), 60);
	ASSERT_EQ(rlog_ring_write(r, 1024, &v, 8, 104), -ENOBUFS); /* 0 free: 60 + 4 = 64 */
	ASSERT_EQ(atomic_load(&r->write_off), 60);
	ASSERT_EQ(atomic_load(&r->lost_events), 4);
	ASSERT_EQ(atomic_load(&r->lost_bytes), 48);
	ASSERT_EQ(rlog_ring_write(r, 19, big, n245, 1), -EMSGSIZE); /* 256 > 256 - 4 */
	ASSERT_EQ(rlog_ring_write(r, 19, big, n244, 1), -ENOBUFS); /* 252 would fit an empty ring */
	ASSERT_EQ(atomic_load(&r->lost_events), 5);
}

static void test_scribbled(void)
{
	reset();
	uint64_t v = 1;
	atomic_store(&r->write_off, RING + 8);
	ASSERT_EQ(rlog_ring_write(r, 1024, &v, 8, 1), -EPROTO);
	atomic_store(&r->write_off, 6);
	ASSERT_EQ(rlog_ring_write(r, 1024, &v, 8, 1), -EPROTO);
	atomic_store(&r->write_off, 0);
	atomic_store(&r->read_cache, 1u << 31);
	ASSERT_EQ(rlog_ring_write(r, 1024, &v, 8, 1), -EPROTO);
	/* A bad read offset is found when the cache says no room. */
	atomic_store(&r->read_cache, 4);
	atomic_store(&r->read_off, 12345);
	ASSERT_EQ(rlog_ring_write(r, 1024, &v, 8, 1), -EPROTO);
	ASSERT_EQ(atomic_load(&r->lost_events), 0);
	ASSERT_EQ(atomic_load(&r->write_off), 0);
	ok(mem[sizeof mem - 1] == 0xee && ring[0] == 0xee, "nothing written");
	ASSERT_EQ(atomic_load(&r->busy), 0);
}

static void test_nested(void)
{
	reset();
	uint64_t v = 1;
	atomic_store(&r->busy, 1); /* as inside a write a signal interrupted */
	ASSERT_EQ(rlog_ring_write(r, 1024, &v, 8, 1), -EBUSY);
	ASSERT_EQ(rlog_ring_write_flagged(r, 1024, 2, &v, 8, 1), -EBUSY);
	ASSERT_EQ(atomic_load(&r->nested_events), 2);
	ASSERT_EQ(atomic_load(&r->nested_bytes), 16 + 20);
	ASSERT_EQ(atomic_load(&r->write_off), 0);
	ASSERT_EQ(atomic_load(&r->lost_events), 0);
	atomic_store(&r->busy, 0);
	ASSERT_EQ(rlog_ring_write(r, 1024, &v, 8, 1), 1);
}

/* The writer's side of the handshake, without a flush application. */
static void test_fill_flag(void)
{
	reset();
	/* min_free 76 (30% of 256, to 4): below it once 252 - used < 76,
	 * i.e. after 12 records of 16 (252 - 192 = 60). */
	ASSERT_EQ(r->min_free, 76);
	uint64_t v = 1;
	for (int i = 0; i < 14; i++)
		rlog_ring_write(r, 1024, &v, 8, 1);
	ASSERT_EQ(atomic_load(&r->fill_signals), 0); /* nobody waiting: no signal */
	/* The flush side drains and says it is done. */
	atomic_store(&r->read_off, atomic_load(&r->write_off));
	atomic_store(&r->set_event, 1);
	int first = -1, after = 0;
	for (int i = 0; i < 15; i++) {
		ASSERT_EQ(rlog_ring_write(r, 1024, &v, 8, 1), 1);
		if (first < 0 && atomic_load(&r->fill_signals) == 1)
			first = i;
		after += first >= 0;
	}
	ASSERT_EQ(first, 11); /* the write that left 60 < 76 bytes free */
	ASSERT_EQ(atomic_load(&r->fill_signals), 1);
	ASSERT_EQ(atomic_load(&r->set_event), 0);
	ok(after == 4, "four writes below the mark, one signal (%d)", after);
	/* Full now: discarded events do not signal again either. */
	ASSERT_EQ(rlog_ring_write(r, 1024, &v, 8, 1), -ENOBUFS);
	ASSERT_EQ(atomic_load(&r->fill_signals), 1);
	/* Drained and re-armed: the next fill signals once more. */
	atomic_store(&r->read_off, atomic_load(&r->write_off));
	atomic_store(&r->set_event, 1);
	for (int i = 0; i < 15; i++)
		rlog_ring_write(r, 1024, &v, 8, 1);
	ASSERT_EQ(atomic_load(&r->fill_signals), 2);
	/* Re-armed while the ring is still below the mark (the flush side has
	 * not drained): the next write signals, once, and a discarded one
	 * after it does not. */
	atomic_store(&r->set_event, 1);
	ASSERT_EQ(rlog_ring_write(r, 1024, NULL, 0, 1), 1);
	ASSERT_EQ(atomic_load(&r->fill_signals), 3);
	ASSERT_EQ(rlog_ring_write(r, 1024, NULL, 0, 1), -ENOBUFS);
	ASSERT_EQ(atomic_load(&r->fill_signals), 3);
	/* Re-armed after freeing enough: a write above the mark does not. */
	atomic_store(&r->read_off, atomic_load(&r->write_off));
	atomic_store(&r->set_event, 1);
	ASSERT_EQ(rlog_ring_write(r, 1024, &v, 8, 1), 1);
	ASSERT_EQ(atomic_load(&r->fill_signals), 3);
	ASSERT_EQ(atomic_load(&r->set_event), 1);
}

/* A stale read_cache makes the writer look again before it signals: the
 * flush side drained without the writer noticing. */
static void test_fill_stale_cache(void)
{
	reset();
	uint64_t v = 1;
	for (int i = 0; i < 11; i++)
		rlog_ring_write(r, 1024, &v, 8, 1);
	atomic_store(&r->read_off, atomic_load(&r->write_off)); /* drained; cache still 0 */
	atomic_store(&r->set_event, 1);
	ASSERT_EQ(rlog_ring_write(r, 1024, &v, 8, 1), 1); /* cached: 60 free; real: 236 */
	ASSERT_EQ(atomic_load(&r->fill_signals), 0);
	ASSERT_EQ(atomic_load(&r->set_event), 1);
	ASSERT_EQ(atomic_load(&r->read_cache), 176);
}

static _Atomic int waiter_tid;

static void *waiter(void *arg)
{
	struct rlog_ring *h = arg;
	atomic_store(&waiter_tid, (int)gettid());
	int woken = 0;
	while (atomic_load(&h->set_event) == 1) {
		rlog__futex_wait(&h->set_event, 1, -1);
		woken++;
	}
	return (void *)(intptr_t)woken;
}

/* Is thread tid of this process asleep ('S' in /proc/self/task/TID/stat)? */
static bool sleeping(int tid)
{
	char p[64], buf[512];
	snprintf(p, sizeof p, "/proc/self/task/%d/stat", tid);
	FILE *f = fopen(p, "r");
	if (f == NULL)
		return false;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *e = strrchr(buf, ')');
	return e && e[1] == ' ' && e[2] == 'S';
}

/* The wake-up is a real futex wake: a thread asleep on set_event returns,
 * once. */
static void test_fill_wakes(void)
{
	reset();
	atomic_store(&r->set_event, 1);
	pthread_t th;
	pthread_create(&th, NULL, waiter, r);
	int i = 0;
	while (i++ < 30000 && !(atomic_load(&waiter_tid) && sleeping(atomic_load(&waiter_tid))))
		proc_sleep_ms(1);
	ok(i < 30000, "the waiter sleeps on set_event");
	uint64_t v = 1;
	for (int k = 0; k < 14; k++)
		rlog_ring_write(r, 1024, &v, 8, 1);
	void *res;
	pthread_join(th, &res);
	ASSERT_EQ((intptr_t)res, 1);
	ASSERT_EQ(atomic_load(&r->fill_signals), 1);
}

/* ring.h needs nothing from libc: an object compiled freestanding that
 * calls the writer has no undefined symbols. */
static void test_freestanding(void)
{
	const char *cc = getenv("CC"), *inc = getenv("RINGLOG_INCLUDE");
	if (cc == NULL || inc == NULL || *cc == '\0') {
		ok(1, "freestanding # SKIP CC or RINGLOG_INCLUDE not set");
		return;
	}
	char dir[] = "/tmp/rlog-test-fs-XXXXXX";
	BAIL_IF(mkdtemp(dir) == NULL, "mkdtemp");
	char src[300], cmd[2048], nm[512];
	snprintf(src, sizeof src, "%s/w.c", dir);
	FILE *f = fopen(src, "w");
	/* The header's own example: a static ring, written with a constant
	 * payload size; and the general case.  -Wall -Wextra -Werror: no
	 * warning either (array bounds, unused functions). */
	fputs("#include <ringlog/ring.h>\n"
	      "static _Alignas(64) unsigned char mem[256 + 192];\n"
	      "int w(struct rlog_ring *r, const void *p, unsigned n, unsigned t)\n"
	      "{ return rlog_ring_write(r, 1024, p, n, t); }\n"
	      "int wf(struct rlog_ring *r, const void *p, unsigned n, unsigned t)\n"
	      "{ return rlog_ring_write_flagged(r, 1025, 3, p, n, t); }\n"
	      "int i(void *m, unsigned long n) { return rlog_ring_init(m, n); }\n"
	      "int s(unsigned t) {\n"
	      "  struct rlog_ring *r = (struct rlog_ring *)mem;\n"
	      "  unsigned long long v[2] = { t, t };\n"
	      "  int ok = rlog_ring_init_clock(mem, sizeof mem, RLOG_TICK_COUNTER, 1000);\n"
	      "  for (int k = 0; k < 40; k++)\n"
	      "    ok += rlog_ring_write(r, 1024, v, sizeof v, t + k);\n"
	      "  return ok + rlog_ring_write_flagged(r, 1025, 7, v, 8, t);\n"
	      "}\n",
	      f);
	fclose(f);
	const char *opts[] = { "-O0", "-O2", "-O3", "-Os" };
	for (int k = 0; k < 4; k++) {
		snprintf(cmd, sizeof cmd,
			 "%s -std=c11 -ffreestanding -fno-sanitize=all -Wall -Wextra -Werror %s "
			 "-I%s -c %s -o %s/w.o 2>&1 && nm -u %s/w.o",
			 cc, opts[k], inc, src, dir, dir);
		FILE *p = popen(cmd, "r");
		size_t got = fread(nm, 1, sizeof nm - 1, p);
		nm[got] = '\0';
		int st = pclose(p);
		ok(st == 0 && got == 0, "freestanding %s: compiles, no undefined symbols", opts[k]);
		if (got)
			diag("%s", nm);
	}
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
}

int main(void)
{
	test_init();
	test_record_bytes();
	test_record_lengths();
	test_wrap();
	test_full();
	test_scribbled();
	test_nested();
	test_fill_flag();
	test_fill_stale_cache();
	test_fill_wakes();
	test_freestanding();
	return done_testing();
}
