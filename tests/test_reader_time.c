/*
 * test_reader_time - 64-bit time reconstruction from 32-bit timestamps:
 * across many 32-bit wraps, with TIME_SYNC jumps of more than 2^31 ticks,
 * records without a timestamp, exact ticks and exact nanoseconds at 3 GHz
 * and 1 GHz (including events before the start), TIME_SYNC hidden unless
 * asked for, and a jump of 2^31 ticks without TIME_SYNC reported as damage.
 */
#include <errno.h>

#include "ringlog/reader.h"
#include "filegen.h"
#include "tap.h"

#define MAXEV 64

struct plan_ev {
	uint64_t ticks;
	bool ts;
	bool sync; /* a TIME_SYNC record */
};

/* Builds one thread's block (pid 10 tid 11) from base through evs; the
 * marker says start at freq. */
static void build(struct fg_file *f, uint64_t freq, uint64_t start, uint64_t base,
		  const struct plan_ev *evs, size_t n)
{
	struct fg_block b;
	fg_file_init(f);
	fg_marker_block(f, 1, 1, freq, start, 0, RLOG_TICK_TSC, 16384, 4, "time");
	fg_block_begin(&b, 10, 11, base, 0);
	for (size_t i = 0; i < n; i++) {
		uint32_t v = (uint32_t)i;
		if (evs[i].sync)
			fg_time_sync(&b, evs[i].ticks);
		else
			fg_event(&b, 2000, -1, evs[i].ts, (uint32_t)evs[i].ticks, &v, 4);
	}
	fg_block_end(f, &b);
}

/* Reads every event but the LOG_MARKER; checks ticks and ns against
 * want_ns(ticks).  Returns the number of mismatches. */
static int check(struct rlog_reader *r, const struct plan_ev *evs, size_t n, bool with_sync,
		 int64_t (*want_ns)(uint64_t))
{
	struct rlog_event ev;
	int bad = 0;
	size_t i = 0;
	int rc;

	while ((rc = rlog_reader_next(r, &ev)) == 1) {
		if (ev.id == RLOG_ID_LOG_MARKER)
			continue;
		while (i < n && evs[i].sync && !with_sync)
			i++;
		if (i >= n) {
			bad++;
			break;
		}
		if (ev.ticks != evs[i].ticks || ev.time_ns != want_ns(evs[i].ticks) ||
		    ev.id != (evs[i].sync ? RLOG_ID_TIME_SYNC : 2000) || ev.has_time != evs[i].ts) {
			bad++;
			diag("event %zu: ticks %llu want %llu, ns %lld want %lld", i,
			     (unsigned long long)ev.ticks, (unsigned long long)evs[i].ticks,
			     (long long)ev.time_ns, (long long)want_ns(evs[i].ticks));
		}
		i++;
	}
	while (i < n && evs[i].sync && !with_sync)
		i++;
	if (rc != 0 || i != n) {
		diag("rc %d, read %zu of %zu", rc, i, n);
		bad++;
	}
	return bad;
}

/* 3 GHz from start S1: ns = (t - S1) / 3, truncated toward zero. */
#define S1 0xffffffffull
static int64_t ns_3ghz(uint64_t t)
{
	return t >= S1 ? (int64_t)((t - S1) / 3) : -(int64_t)((S1 - t) / 3);
}

#define S2 (UINT64_C(7) << 40)
static int64_t ns_1ghz(uint64_t t)
{
	return (int64_t)(t - S2);
}

int main(void)
{
	struct plan_ev evs[MAXEV];
	struct fg_file f;
	struct rlog_reader *r;
	struct rlog_event ev;
	struct rlog_damage d;
	size_t n = 0;

	/* 1. Base just below 2^32; small steps across the wrap, then the largest
	 * legal steps (2^31 - 1) across several more wraps, records without a
	 * timestamp in between, and two TIME_SYNC jumps of far more than 2^31
	 * (forward, then backward). */
	uint64_t base = 0xfffffff6ull, t = base;
	evs[n++] = (struct plan_ev){ t - 2, true, false };        /* before the start */
	for (int i = 0; i < 6; i++)
		evs[n++] = (struct plan_ev){ t += 3, true, false };  /* crosses 2^32 */
	evs[n++] = (struct plan_ev){ t, false, false };           /* no timestamp */
	for (int i = 0; i < 9; i++)
		evs[n++] = (struct plan_ev){ t += 0x7fffffffu, true, false };
	evs[n++] = (struct plan_ev){ t, false, false };
	evs[n++] = (struct plan_ev){ t += (UINT64_C(1) << 40) + 12345, true, true };
	evs[n++] = (struct plan_ev){ t += 1, true, false };
	evs[n++] = (struct plan_ev){ t, false, false };
	evs[n++] = (struct plan_ev){ t += 0x80000000u, true, true }; /* exactly 2^31: needs a sync */
	evs[n++] = (struct plan_ev){ t += 0x7fffffffu, true, false };
	evs[n++] = (struct plan_ev){ t -= (UINT64_C(1) << 39), true, true }; /* backwards */
	evs[n++] = (struct plan_ev){ t += 5, true, false };
	/* The block's base time is that of evs[0]. */
	build(&f, 3000000000u, S1, base - 2, evs, n);
	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_EQ(check(r, evs, n, false, ns_3ghz), 0);
	ASSERT_EQ(rlog_reader_damage_count(r), 0);
	rlog_reader_close(r);

	/* Spot checks of the reconstruction, computed by hand. */
	ASSERT_EQ_U64(evs[0].ticks, 0xfffffff4ull);
	ASSERT_EQ(ns_3ghz(evs[0].ticks), -3);      /* 11 ticks before start: -3.67 ns, truncated */
	ASSERT_EQ_U64(evs[6].ticks, 0x100000008ull);        /* past the first wrap */
	ASSERT_EQ_U64(evs[16].ticks, 0x100000008ull + 9ull * 0x7fffffffu);
	ASSERT_EQ(ns_3ghz(evs[16].ticks), (int64_t)((0x100000008ull + 9ull * 0x7fffffffu - S1) / 3));

	/* 2. The same with TIME_SYNC records returned. */
	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_EQ(rlog_reader_set_flags(r, RLOG_READER_TIME_SYNC), 0);
	ASSERT_EQ(rlog_reader_set_flags(r, 0x80), -EINVAL);
	ASSERT_EQ(check(r, evs, n, true, ns_3ghz), 0);
	ASSERT_EQ(rlog_reader_set_flags(r, 0), -EBUSY);
	rlog_reader_close(r);
	fg_file_free(&f);

	/* 3. 1 GHz: ns are ticks since the start, with a start far from 0. */
	n = 0;
	t = S2 - 100;
	evs[n++] = (struct plan_ev){ t, true, false };
	evs[n++] = (struct plan_ev){ t += 0x7fffffffu, true, false };
	evs[n++] = (struct plan_ev){ t += 0x7fffffffu, true, false };
	evs[n++] = (struct plan_ev){ t += UINT64_C(1) << 35, true, true };
	evs[n++] = (struct plan_ev){ t, false, false };
	build(&f, 1000000000u, S2, S2 - 100, evs, n);
	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_EQ(check(r, evs, n, false, ns_1ghz), 0);
	rlog_reader_close(r);
	fg_file_free(&f);
	ASSERT_EQ(ns_1ghz(S2 - 100), -100);

	/* 4. A timestamp 2^31 ticks after the cursor, no TIME_SYNC: the block is
	 * damaged and skipped whole; the next block of the thread is read. */
	struct fg_block b;
	uint32_t v = 1;
	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, 1000000000u, 1000, 0, RLOG_TICK_MONOTONIC, 16384, 4, "time");
	fg_block_begin(&b, 10, 11, 1000, 0);
	fg_event(&b, 2000, -1, true, 1010, &v, 4);
	size_t bad_rec = fg_event(&b, 2000, -1, true, 1010u + 0x80000000u, &v, 4);
	fg_event(&b, 2000, -1, true, 1011u + 0x80000000u, &v, 4);
	size_t bad_blk = fg_block_end(&f, &b);
	fg_block_begin(&b, 10, 11, 5000, 0);
	fg_event(&b, 2001, -1, true, 5000, &v, 4);
	fg_event(&b, 2001, -1, true, 5000u + 0x7fffffffu, &v, 4); /* largest legal step */
	fg_block_end(&f, &b);
	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_EQ(rlog_reader_next(r, &ev), 1);
	ASSERT_EQ(ev.id, RLOG_ID_LOG_MARKER);
	ASSERT_EQ(rlog_reader_next(r, &ev), 1);
	ASSERT_EQ(ev.id, 2001);
	ASSERT_EQ(ev.time_ns, 4000);
	ASSERT_EQ(rlog_reader_next(r, &ev), 1);
	ASSERT_EQ(ev.id, 2001);
	ASSERT_EQ_U64(ev.ticks, 5000ull + 0x7fffffffu);
	ASSERT_EQ(rlog_reader_next(r, &ev), 0);
	ASSERT_EQ(rlog_reader_damage_count(r), 1);
	ASSERT_EQ(rlog_reader_damage(r, 0, &d), 0);
	ASSERT_EQ_U64(d.offset, bad_blk);
	ASSERT_EQ(d.kind, RLOG_DAMAGE_BLOCK);
	ASSERT_EQ(d.records_skipped, 3);
	char want[200];
	snprintf(want, sizeof(want),
		 "damaged block at offset %zu: record at offset %zu is 2^31 ticks or more after "
		 "the previous one, without a TIME_SYNC (skipped 3 records)",
		 bad_blk, bad_blk + FG_BLOCK_HDR + bad_rec);
	ASSERT_STREQ(d.message, want);
	ASSERT_EQ(rlog_reader_damage(r, 1, &d), -ERANGE);
	rlog_reader_close(r);
	fg_file_free(&f);

	/* 5. A TIME_SYNC whose payload disagrees with its timestamp is a
	 * malformed record. */
	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, 1000000000u, 1000, 0, RLOG_TICK_MONOTONIC, 16384, 4, "time");
	fg_block_begin(&b, 10, 11, 1000, 0);
	uint64_t sync = UINT64_C(1) << 36;
	fg_event(&b, RLOG_ID_TIME_SYNC, -1, true, 99, &sync, 8);
	bad_blk = fg_block_end(&f, &b);
	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_EQ(rlog_reader_damage_count(r), 1);
	ASSERT_EQ(rlog_reader_damage(r, 0, &d), 0);
	snprintf(want, sizeof(want), "damaged block at offset %zu: malformed record at offset %zu "
		 "(skipped 1 records)", bad_blk, bad_blk + FG_BLOCK_HDR);
	ASSERT_STREQ(d.message, want);
	rlog_reader_close(r);
	fg_file_free(&f);
	return done_testing();
}
