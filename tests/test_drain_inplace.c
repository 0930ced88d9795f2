/*
 * test_drain_inplace - the daemon decodes producer buffers where they are
 * and writes them to the file from there (src/daemon/drain.c,
 * src/format/logfile.c;
 * docs/FORMAT.md "The daemon's drain"):
 *
 *   - the decode (its fast path for the common record, its slow path that
 *     copies any other record out first, and the slow path alone while a
 *     snapshot trigger watches for an event) gives exactly what the
 *     reader's rules give on a private copy: the same extent, records,
 *     events, event bytes, time cursor and verdict, on 200,000 buffers of
 *     random records (plausible and malformed);
 *   - runs of records of one shape (the decode's four-at-a-time path,
 *     rlog__record_plain_run), each spoiled at a random place or not (an
 *     ID of ringlog's own, another length, the timestamp bit, the
 *     reserved bit, a time step of 2^31, a cursor that would pass
 *     2^64 - 1, a cut): the run accepts exactly the records that
 *     rlog__record_plain one at a time accepts with that shape, in groups
 *     of four, and stops only before a group holding one it would not;
 *     and the whole decode still equals the reader's rules;
 *   - a real region drained into a real file: a buffer of every kind of
 *     record is counted and written exactly, its thread's name kept, the
 *     buffer given back after the write;
 *   - a buffer whose bytes change after the daemon checked them (between
 *     the pass and the write) is written as the daemon counted it, and the
 *     reader reports that block as damage (bad checksum) and returns none
 *     of its records, while the blocks around it read whole.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomics.h"
#include "drain.h"
#include "drain_rig.h"
#include "record.h"
#include "sink_file.h"
#include "ringlog/reader.h"
#include "tap.h"

#define BUF_SIZE 4096u

static uint64_t rng = 0x2545f4914f6cdd1du;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

/* The reader's rules on a private copy: what the daemon's decode did
 * before it decoded in place. */
static void rules(const uint8_t *data, uint32_t n, uint64_t cursor, struct rlog__chunk *c)
{
	memset(c, 0, sizeof *c);
	c->start = cursor;
	while (c->size < n) {
		struct rlog__record rec;
		int sz = rlog__record_decode(data + c->size, n - c->size, &rec);
		if (sz < 0 || rlog__record_check(&rec, false) < 0 ||
		    rlog__time_apply(&cursor, &rec) < 0) {
			c->bad = true;
			break;
		}
		c->records++;
		if (rlog__record_kind(rec.id, rec.flagged) == RLOG_RECORD_EVENT) {
			c->events++;
			c->event_bytes += (uint32_t)sz;
		}
		c->size += (uint32_t)sz;
	}
	c->cursor = cursor;
}

static const uint16_t ids[] = { 0, 1, 2, 3, 4, 5, 15, 16, 20, 25, 31, 32, 33, 34, 35, 36, 37, 38,
				1023, 1024, 1025, 9000, 16383 };

/* A random record at p (room bytes free), its time near *t; returns its
 * size, 0 if it does not fit. */
static uint32_t random_record(uint8_t *p, uint32_t room, uint64_t *t)
{
	unsigned id = rnd() % 8 ? ids[rnd() % (sizeof ids / sizeof ids[0])] : rnd() & 0x3fff;
	unsigned len = rnd() % 16 ? rnd() % 40 : rnd() % 70000;
	if (id == RLOG_ID_TIME_SYNC && rnd() % 4)
		len = 8;
	bool ts = rnd() % 5 != 0;
	uint32_t h = rlog__hdr_make(id, len & 0xffff, ts);
	if (rnd() % 50 == 0)
		h |= RLOG_HDR_RESERVED_BIT;
	if (rnd() % 50 == 0)
		h = rnd() | (uint32_t)rnd() << 21;
	uint32_t size = rlog__record_size(rlog__hdr_id(h), rlog__hdr_length(h), rlog__hdr_has_time(h));
	if (size > room)
		return 0;
	for (uint32_t i = 0; i < size; i++)
		p[i] = (uint8_t)rnd();
	memcpy(p, &h, 4);
	uint32_t at = 4;
	uint32_t step = rnd() % 20 ? rnd() % 5000 : rnd() | (uint32_t)rnd() << 21;
	if (rlog__hdr_has_time(h)) {
		uint32_t low = (uint32_t)*t + step;
		memcpy(p + at, &low, 4);
		at += 4;
		*t += step;
	}
	if (rlog__hdr_id(h) == RLOG_ID_FLAGGED && at + 4 <= size) {
		uint32_t fw = (rnd() % 4 ? 1024 + rnd() % 100 : rnd() % 40) | rnd() << 16;
		memcpy(p + at, &fw, 4);
		at += 4;
	}
	if (rlog__hdr_id(h) == RLOG_ID_TIME_SYNC && at + 8 <= size) {
		uint64_t full = *t + (rnd() % 3 == 0 ? (uint64_t)rnd() << 30 : 0);
		if (rnd() % 8 == 0)
			full ^= 1; /* a low half that disagrees */
		memcpy(p + at, &full, 8);
		*t = full;
	}
	return size;
}

/* A drain with what rlog__drain_decode uses: an output and a copy. */
static void decoder_init(struct rlog__drain *d, struct rlog__output *out)
{
	rlog__output_init(out, RLOG__META_LIMIT);
	memset(d, 0, sizeof *d);
	d->out = out;
	d->copy = malloc(BUF_SIZE);
	BAIL_IF(!d->copy, "malloc");
}

static void check_decode(void)
{
	struct rlog__output out;
	struct rlog__drain d;
	decoder_init(&d, &out);
	/* Words, as a region buffer is read (rlog__load32_once): aligned
	 * and of that type. */
	static uint32_t words[BUF_SIZE / 4];
	uint8_t *buf = (uint8_t *)words;
	unsigned differ = 0, differ_watch = 0, watch_wrong = 0, bad = 0, fast_only = 0;
	uint64_t events = 0;
	for (int round = 0; round < 200000; round++) {
		uint64_t base = rnd() % 16 ? (uint64_t)rnd() << 20 : UINT64_MAX - rnd() % 100000;
		uint64_t t = base;
		uint32_t used = 0, count = rnd() % 40;
		for (uint32_t k = 0; k < count; k++) {
			uint32_t s = random_record(buf + used, BUF_SIZE - used, &t);
			if (s == 0)
				break;
			used += s;
		}
		uint32_t n = used;
		if (n && rnd() % 4 == 0)
			n = (rnd() % (n / 4 + 1)) * 4; /* cut anywhere on a word */
		struct rlog__chunk want, got;
		rules(buf, n, base, &want);
		d.watch.id = 0;
		rlog__drain_decode(&d, buf, n, 1, 2, base, &got);
		differ += memcmp(&want, &got, sizeof want) != 0;
		/* A trigger sends every record the slow way: the same result,
		 * and a hit exactly when a watched event is among them. */
		d.watch.id = 1025;
		d.watch.flagged = false;
		d.watch.hit = false;
		rlog__drain_decode(&d, buf, n, 1, 2, base, &got);
		differ_watch += memcmp(&want, &got, sizeof want) != 0;
		bool has = false;
		for (uint32_t off = 0; off < want.size;) {
			struct rlog__record rec;
			int sz = rlog__record_decode(buf + off, want.size - off, &rec);
			if (sz < 0)
				break; /* cannot be: the rules accepted it */
			has |= rec.id == 1025 && rlog__record_kind(rec.id, rec.flagged) == RLOG_RECORD_EVENT;
			off += (uint32_t)sz;
		}
		watch_wrong += has != d.watch.hit;
		bad += want.bad;
		events += want.events;
		fast_only += !want.bad && want.records > 0;
	}
	diag("%u buffers with a bad record, %u whole; %llu events", bad, fast_only,
	     (unsigned long long)events);
	ok(bad > 20000 && fast_only > 20000, "both verdicts are exercised");
	ASSERT_EQ(differ, 0);
	ASSERT_EQ(differ_watch, 0);
	ASSERT_EQ(watch_wrong, 0);
	free(d.copy);
	rlog__output_free(&out);
}

/* A buffer of count records of one shape (length len, timed or not) at
 * buf, the times stepping from base, one of them spoiled in a random way
 * (or none); returns its size in bytes. */
static uint32_t shaped_run(uint8_t *buf, uint32_t count, unsigned len, bool ts, uint64_t base)
{
	uint32_t size = rlog__record_size(1024, len, ts), used = 0, spoil = rnd() % (count + 1);
	unsigned how = rnd() % 7;
	uint64_t t = base;
	for (uint32_t k = 0; k < count && used + size + 4 <= BUF_SIZE; k++) {
		unsigned id = rnd() % 3 ? 1024 + rnd() % 15000 : 16 + rnd() % 16;
		unsigned l = len;
		bool timed = ts;
		uint32_t step = rnd() % 5000;
		if (k == spoil) {
			switch (how) {
			case 0: id = rnd() % 16; break;        /* TIME_SYNC, FLAGGED, ... */
			case 1: id = 32 + rnd() % 992; break;   /* ringlog's own */
			case 2: l = len ^ (1 + rnd() % 8); break;
			case 3: timed = !ts; break;
			case 4: step = (uint32_t)RLOG_TIME_SYNC_TICKS + rnd() % 1000; break;
			default: break;
			}
		}
		uint32_t h = rlog__hdr_make(id, l, timed);
		if (k == spoil && how == 5)
			h |= RLOG_HDR_RESERVED_BIT;
		uint32_t sz = rlog__record_size(id, l, timed);
		if (used + sz > BUF_SIZE)
			break;
		for (uint32_t i = 0; i < sz; i++)
			buf[used + i] = (uint8_t)rnd();
		memcpy(buf + used, &h, 4);
		t += step;
		uint32_t low = (uint32_t)t;
		if (timed)
			memcpy(buf + used + 4, &low, 4);
		used += sz;
	}
	return used;
}

static void check_runs(void)
{
	struct rlog__output out;
	struct rlog__drain d;
	decoder_init(&d, &out);
	static uint32_t words[BUF_SIZE / 4];
	uint8_t *buf = (uint8_t *)words;
	unsigned differ = 0, wrong_run = 0, early_stop = 0;
	uint64_t in_runs = 0, stopped = 0;
	for (int round = 0; round < 100000; round++) {
		uint64_t base = rnd() % 8 ? (uint64_t)rnd() << 20 : UINT64_MAX - rnd() % 200000;
		unsigned len = rnd() % 4 ? rnd() % 40 : rnd() % 600;
		bool ts = rnd() % 5 != 0;
		uint32_t n = shaped_run(buf, 1 + rnd() % 80, len, ts, base);
		if (n && rnd() % 4 == 0)
			n = (rnd() % (n / 4 + 1)) * 4;
		/* The run against rlog__record_plain one at a time. */
		uint64_t cur = base, c1;
		uint32_t h0, first = n >= 4 ? rlog__record_plain(buf, n, &cur, &h0) : 0;
		if (first != 0) {
			c1 = cur;
			uint32_t r = rlog__record_plain_run(buf + first, n - first, h0, &c1);
			uint32_t off = first, k = 0, hk;
			uint64_t c2 = cur;
			const uint32_t mask = RLOG_HDR_LENGTH_MASK | RLOG_HDR_TIMESTAMP_BIT;
			/* What the walk accepts with h0's shape, from there. */
			while (k < r && off + 4 <= n) {
				uint64_t keep = c2;
				uint32_t sz = rlog__record_plain(buf + off, n - off, &c2, &hk);
				if (sz == 0 || (hk & mask) != (h0 & mask)) {
					c2 = keep;
					break;
				}
				off += sz;
				k++;
			}
			wrong_run += r % 4 != 0 || k != r || c1 != c2;
			/* Stopped before a whole group of four it would take. */
			uint32_t more = 0;
			while (more < 4 && off + 4 <= n) {
				uint32_t sz = rlog__record_plain(buf + off, n - off, &c2, &hk);
				if (sz == 0 || (hk & mask) != (h0 & mask))
					break;
				off += sz;
				more++;
			}
			early_stop += more == 4;
			in_runs += r;
			stopped += r > 0 && off < n;
		}
		struct rlog__chunk want, got;
		rules(buf, n, base, &want);
		d.watch.id = 0;
		rlog__drain_decode(&d, buf, n, 1, 2, base, &got);
		differ += memcmp(&want, &got, sizeof want) != 0;
	}
	diag("%llu records taken in runs; %llu runs stopped before the end",
	     (unsigned long long)in_runs, (unsigned long long)stopped);
	ok(in_runs > 500000 && stopped > 20000, "runs and their ends are exercised");
	ASSERT_EQ(wrong_run, 0);
	ASSERT_EQ(early_stop, 0);
	ASSERT_EQ(differ, 0);
	free(d.copy);
	rlog__output_free(&out);
}

/* A producer of ours: a claimed slot and the buffers it fills. */
struct fake {
	struct rlog__region *r;
	uint32_t slot, tid;
	uint64_t seq;
};

/* Takes the lowest free buffer, writes n bytes of rec into it and hands
 * it over FULL.  Returns its index. */
static uint32_t hand_over(struct fake *f, const void *rec, uint32_t n, uint64_t base)
{
	struct rlog__region *r = f->r;
	uint32_t idx = UINT32_MAX;
	for (uint32_t i = 0; i < r->min_buffers && idx == UINT32_MAX; i++) {
		uint64_t bit = UINT64_C(1) << (i % 64);
		if (atomic_fetch_and(&r->free_bits[i / 64], ~bit) & bit)
			idx = i;
	}
	BAIL_IF(idx == UINT32_MAX, "no free buffer");
	struct rlog_shm_desc *d = &r->desc[idx];
	memcpy(rlog__region_buffer(r, idx), rec, n);
	drain_rig_describe(d, f->slot, f->tid, f->seq++, base);
	store_relaxed(&d->write_off, n);
	/* Pairs with the daemon's load_acquire(state). */
	store_release(&d->state, RLOG_BUF_FULL);
	return idx;
}

/* Appends a record (header, timestamp if ts, words) to p at *n. */
static void put(uint8_t *p, uint32_t *n, unsigned id, bool ts, uint32_t time, const void *pl,
		unsigned len)
{
	uint32_t h = rlog__hdr_make(id, len, ts);
	memcpy(p + *n, &h, 4);
	*n += 4;
	if (ts) {
		memcpy(p + *n, &time, 4);
		*n += 4;
	}
	memcpy(p + *n, pl, len);
	*n += (len + 3) & ~3u;
}

static bool is_free(struct rlog__region *r, uint32_t idx)
{
	return (atomic_load(&r->free_bits[idx / 64]) >> (idx % 64)) & 1;
}

static void check_file(void)
{
	char name[64], path[128];
	snprintf(name, sizeof name, "t-inplace-%d", (int)getpid());
	snprintf(path, sizeof path, "/tmp/t-inplace-%d.rlog", (int)getpid());
	struct rlog__region_params p;
	memset(&p, 0, sizeof p);
	p.buffer_size = BUF_SIZE;
	p.min_buffers = p.max_buffers = 8;
	p.capacity = 8;
	p.enable_mask = ~UINT64_C(0);
	struct rlog__region r;
	ASSERT_EQ(rlog__region_create(name, &p, &r), 0);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	BAIL_IF(fd < 0, "cannot create %s", path);
	struct rlog__file_opts fo = { .fd = fd, .mode = RLOG_MODE_SEQUENTIAL, .max_block = BUF_SIZE,
				      .pid = 1, .tid = 1, .marker = drain_rig_marker };
	struct rlog__output out;
	struct rlog__sink *fs;
	rlog__output_init(&out, RLOG__META_LIMIT);
	ASSERT_EQ(rlog__sink_file_open(&fo, &fs), 0);
	ASSERT_EQ(rlog__output_add(&out, fs, true), 0);
	struct rlog__drain d;
	ASSERT_EQ(rlog__drain_init(&d, &r, &out, RLOG_TICK_MONOTONIC), 0);

	struct fake f = { .r = &r, .tid = 4243 };
	f.slot = drain_rig_claim_slot(&r, f.tid);
	BAIL_IF(f.slot == UINT32_MAX, "no free slot");

	/* Buffer 1: every kind of record.  Events: the timed and untimed
	 * application events, a RAW_U32, a FLAGGED one and an event of the
	 * reserved ID 36 (the slow path's); not events: the TIME_SYNC and the
	 * THREAD_NAME. */
	uint8_t b[BUF_SIZE];
	uint32_t n = 0;
	uint64_t v = 0x1122334455667788u, sync = 5000;
	uint32_t raw = 7, fw = 1030 | 9u << 16;
	put(b, &n, 1025, true, 1010, &v, 8);
	put(b, &n, 1026, false, 0, &v, 5);
	put(b, &n, RLOG_ID_RAW_U32, true, 1020, &raw, 4);
	put(b, &n, RLOG_ID_THREAD_NAME, true, 1030, "worker-7", 8);
	put(b, &n, RLOG_ID_TIME_SYNC, true, (uint32_t)sync, &sync, 8);
	uint8_t flagged[12];
	memcpy(flagged, &fw, 4);
	memcpy(flagged + 4, &v, 8);
	uint32_t fh = rlog__hdr_make(RLOG_ID_FLAGGED, 8, true), ft = 5010;
	memcpy(b + n, &fh, 4);
	memcpy(b + n + 4, &ft, 4);
	memcpy(b + n + 8, flagged, 12);
	n += 20;
	put(b, &n, RLOG_ID_SPAN_BEGIN, true, 5020, &v, 8);
	uint32_t first_bytes = n;
	uint32_t idx1 = hand_over(&f, b, n, 1000);

	/* Buffer 2: 100 common records; changed after the pass. */
	uint8_t c[BUF_SIZE];
	uint32_t m = 0;
	for (uint32_t i = 0; i < 100; i++) {
		uint64_t pl[2] = { i, ~(uint64_t)i };
		put(c, &m, 1024, true, 6000 + i, pl, 16);
	}
	uint32_t idx2 = hand_over(&f, c, m, 5020);

	ASSERT_EQ(rlog__drain_pass(&d, RLOG_DRAIN_FULL), 2);
	ok(!is_free(&r, idx1) && !is_free(&r, idx2), "buffers are kept until their blocks are written");
	/* A hostile producer changes a committed payload byte now. */
	rlog__region_buffer(&r, idx2)[50 * 24 + 8] ^= 0x40;
	ASSERT_EQ(rlog__output_flush(&out), 0);
	rlog__drain_commit(&d);
	ok(is_free(&r, idx1) && is_free(&r, idx2), "given back after the write");

	/* Buffer 3: 10 more, unchanged. */
	m = 0;
	for (uint32_t i = 0; i < 10; i++) {
		uint64_t pl[2] = { 100 + i, 0 };
		put(c, &m, 1024, true, 7000 + i, pl, 16);
	}
	hand_over(&f, c, m, 6099);
	ASSERT_EQ(rlog__drain_pass(&d, RLOG_DRAIN_FULL), 1);
	ASSERT_EQ(rlog__output_flush(&out), 0);
	rlog__drain_commit(&d);

	/* What the daemon counted: every event it checked. */
	const struct rlog__sink_stats *st = rlog__output_stats(&out);
	ASSERT_EQ_U64(st->events_written, 5 + 100 + 10);
	ASSERT_EQ_U64(st->bytes_written, (first_bytes - 16 - 16) + 100 * 24 + 10 * 24);
	ASSERT_EQ_U64(st->buffers_written, 3);
	ASSERT_EQ_U64(d.corrupt_buffers, 0);
	struct rlog_log_marker mk;
	drain_rig_marker(NULL, &mk);
	ASSERT_EQ(rlog__output_finish(&out, &mk), 0);
	rlog__drain_free(&d);
	rlog__output_free(&out);

	/* What the reader makes of it. */
	struct rlog_reader *rd;
	ASSERT_EQ(rlog_reader_open(path, &rd), 0);
	ASSERT_EQ(rlog_reader_info(rd)->version_major, 2);
	struct rlog_event ev;
	unsigned first = 0, later = 0, other = 0, names = 0, timed = 0;
	uint64_t next_later = 100;
	while (rlog_reader_next(rd, &ev) == 1) {
		if (ev.from_daemon)
			continue;
		if (ev.id == RLOG_ID_THREAD_NAME)
			names++;
		else if (ev.tid == 4243 && (ev.id == 1025 || ev.id == 1026 || ev.id == 1030 ||
					    ev.id == RLOG_ID_RAW_U32 || ev.id == RLOG_ID_SPAN_BEGIN)) {
			first++;
			/* Times through the fast path, the untimed record and
			 * the TIME_SYNC. */
			timed += (ev.id == 1025 && ev.ticks == 1010) ||
				 (ev.id == 1026 && ev.ticks == 1010 && !ev.has_time) ||
				 (ev.id == RLOG_ID_RAW_U32 && ev.ticks == 1020) ||
				 (ev.id == 1030 && ev.flagged && ev.flag == 9 && ev.ticks == 5010) ||
				 (ev.id == RLOG_ID_SPAN_BEGIN && ev.ticks == 5020);
		}
		else if (ev.id == 1024 && ev.length == 16) {
			uint64_t k;
			memcpy(&k, ev.payload, 8);
			later += k == next_later;
			next_later++;
		} else
			other++;
	}
	ASSERT_EQ(first, 5);
	ASSERT_EQ(timed, 5);
	ASSERT_EQ(names, 1);
	ASSERT_EQ(later, 10);
	ASSERT_EQ(other, 0);
	ASSERT_STREQ(rlog_reader_thread_name(rd, (uint32_t)getpid(), 4243), "worker-7");
	/* The changed block: damage, none of its 100 records returned. */
	ASSERT_EQ(rlog_reader_damage_count(rd), 1);
	struct rlog_damage dm;
	ASSERT_EQ(rlog_reader_damage(rd, 0, &dm), 0);
	ASSERT_EQ(dm.kind, RLOG_DAMAGE_BLOCK);
	ASSERT_EQ_U64(dm.records_skipped, 100);
	ASSERT_CONTAINS(dm.message, "checksum");
	rlog_reader_close(rd);
	unlink(path);
	rlog__region_close(&r);
	rlog__region_unlink(name);
}

int main(void)
{
	check_decode();
	check_runs();
	check_file();
	return done_testing();
}
