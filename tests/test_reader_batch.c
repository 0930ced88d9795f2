/*
 * test_reader_batch - the reader's internal batch path (reader/batch.h),
 * which the Perfetto converter reads through: for every batch size, the
 * batches give exactly the events rlog_reader_next() gives, in its order,
 * every field the same, and a COUNTER record ends its batch, its value
 * (rlog_event_counter) then the one rlog_reader_next's reader gives.
 *
 * The file (tests/filegen.h): its LOG_MARKER, three threads whose blocks interleave (runs
 * of one thread, threads taking turns at equal times: the merge's order
 * by file offset), numbered events (payload {thread, sequence}), flagged
 * and untimed records, and COUNTER records of a counter whose value
 * follows from its deltas, in daemon blocks between them.
 *
 * The runs (rlog__reader_run, rlog__reader_run_take), which the Perfetto
 * converter reads through: a run's head and the records taken from its
 * block (up to 0, 1, 2 or all of a run) are exactly the events
 * rlog_reader_next() gives, in its order, every field the same.
 */
#include <errno.h>
#include <inttypes.h>

#include "reader/batch.h"
#include "ringlog/reader.h"
#include "filegen.h"
#include "tap.h"

#define S 1000000u     /* sync ticks */
#define HZ 1000000000u /* 1 tick = 1 ns */
#define ROUNDS 40u
#define PER 7u         /* events per block */
#define COUNTERS (ROUNDS / 2)
#define EVENTS (1u + 3u * ROUNDS * PER + COUNTERS) /* the LOG_MARKER too */

static void build(struct fg_file *f)
{
	struct fg_block b;
	uint32_t seq[3] = { 0 };
	uint16_t cseq = 0;
	fg_file_init(f);
	fg_marker_block(f, 7, 8, HZ, S, 1790000000000000000ull, RLOG_TICK_MONOTONIC, 16384, 32,
			"batch");
	for (unsigned round = 0; round < ROUNDS; round++) {
		uint64_t t = S + 1000u * round;
		for (uint32_t th = 0; th < 3; th++) {
			fg_block_begin(&b, 100, 101 + th, t, 0);
			for (unsigned k = 0; k < PER; k++) {
				uint32_t p[2] = { th, seq[th]++ };
				/* Threads 0 and 1 at the same times: file order. */
				uint32_t at = (uint32_t)(t + 10u * k + (th == 2 ? 5u : 0u));
				if (k == 3)
					fg_event(&b, 1030, (int)th + 1, true, at, p, sizeof(p));
				else
					fg_event(&b, 1030, -1, k != 5, at, p, sizeof(p));
			}
			fg_block_end(f, &b);
		}
		if (round % 2 == 0) {
			fg_block_begin(&b, 100, 0, t + 35, RLOG_BLOCK_FLAG_DAEMON);
			if (cseq == 0)
				fg_counter(&b, (uint32_t)(t + 35), 1, RLOG_COUNTER_FLAG_VALUE, cseq++, 0, 100, 0);
			else
				fg_counter(&b, (uint32_t)(t + 35), 1, 0, cseq++, round, 0, 0);
			fg_block_end(f, &b);
		}
	}
}

/* Every field the same (the payloads' bytes: each reader maps the file). */
static bool same_event(const struct rlog_event *a, const struct rlog_event *b)
{
	return a->ticks == b->ticks && a->time_ns == b->time_ns && a->pid == b->pid &&
	       a->tid == b->tid && a->id == b->id && a->flag == b->flag && a->length == b->length &&
	       a->flagged == b->flagged && a->has_time == b->has_time &&
	       a->from_daemon == b->from_daemon && memcmp(a->payload, b->payload, a->length) == 0 &&
	       a->offset == b->offset && a->size == b->size && a->block_offset == b->block_offset;
}

int main(void)
{
	static const size_t sizes[] = { 1, 2, 3, 5, 8, 64 };
	struct fg_file f;
	build(&f);
	char path[64];
	fg_tmpname(path, "batch");
	BAIL_IF(fg_write(&f, path) < 0, "cannot write %s", path);
	fg_file_free(&f);

	for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
		struct rlog_reader *one, *many;
		struct rlog_event ev, batch[64];
		ASSERT_EQ(rlog_reader_open(path, &one), 0);
		ASSERT_EQ(rlog_reader_open(path, &many), 0);
		uint64_t n = 0, differ = 0, counters = 0, counter_last = 0, seen[3] = { 0 };
		uint64_t value = 0, value_bad = 0, numbered_bad = 0, batches = 0, full = 0, markers = 0;
		int got;
		while ((got = rlog__reader_next_batch(many, batch, sizes[z])) > 0) {
			batches++;
			full += (size_t)got == sizes[z];
			for (int i = 0; i < got; i++) {
				struct rlog_counter c1, c2;
				if (rlog_reader_next(one, &ev) != 1 || !same_event(&ev, &batch[i])) {
					differ++;
					continue;
				}
				n++;
				if (ev.id == RLOG_ID_COUNTER && !ev.flagged) {
					counters++;
					counter_last += i == got - 1;
					/* Each reader's answer for its own event. */
					if (rlog_event_counter(one, &ev, &c1) < 0 ||
					    rlog_event_counter(many, &batch[i], &c2) < 0 ||
					    c1.value != c2.value || c1.value_known != c2.value_known ||
					    !c2.value_known || c2.value < value)
						value_bad++;
					value = c2.value;
					continue;
				}
				if (ev.id == RLOG_ID_LOG_MARKER && !ev.flagged) {
					markers++;
					continue;
				}
				uint32_t p[2];
				memcpy(p, ev.payload, sizeof(p));
				if (ev.pid != 100 || p[0] > 2 || ev.tid != 101 + p[0] || p[1] != seen[p[0]]++)
					numbered_bad++;
			}
		}
		ok(got == 0, "batches of %zu: the end (%d)", sizes[z], got);
		ok(rlog_reader_next(one, &ev) == 0, "batches of %zu: nothing more one at a time",
		   sizes[z]);
		ASSERT_EQ_U64(differ, 0);
		ASSERT_EQ_U64(n, EVENTS);
		ASSERT_EQ_U64(numbered_bad, 0);
		ASSERT_EQ_U64(markers, 1);
		ASSERT_EQ_U64(seen[0] + seen[1] + seen[2], 3u * ROUNDS * PER);
		ASSERT_EQ_U64(counters, COUNTERS);
		ASSERT_EQ_U64(counter_last, COUNTERS);
		ASSERT_EQ_U64(value_bad, 0);
		/* 100 + 2 + 4 + ... + 38: each delta the round's number. */
		ASSERT_EQ_U64(value, 100u + 2u * (COUNTERS - 1) * COUNTERS / 2);
		/* Every batch full but those a COUNTER record or the end ends. */
		ok(batches - full <= COUNTERS + 1 && batches <= n / sizes[z] + COUNTERS + 1,
		   "batches of %zu: %" PRIu64 " batches, %" PRIu64 " full", sizes[z], batches, full);
		rlog_reader_close(one);
		rlog_reader_close(many);
	}
	/* The runs (reader/batch.h): the head, then up to limit records
	 * taken from the block as a converter takes them, the rest of the
	 * run left to the reader; a COUNTER head through the batches. */
	static const uint32_t limits[] = { 0, 1, 2, 1000 };
	for (size_t z = 0; z < sizeof(limits) / sizeof(limits[0]); z++) {
		struct rlog_reader *one, *rr;
		struct rlog_event ev, e;
		struct rlog__run run;
		ASSERT_EQ(rlog_reader_open(path, &one), 0);
		ASSERT_EQ(rlog_reader_open(path, &rr), 0);
		uint64_t n = 0, differ = 0, taken = 0, runs = 0;
		int got;
		while ((got = rlog__reader_run(rr, &run)) > 0) {
			runs++;
			if (!run.head.flagged && run.head.id == RLOG_ID_COUNTER) {
				got = rlog__reader_next_batch(rr, &e, 1);
				if (got != 1 || rlog_reader_next(one, &ev) != 1 || !same_event(&ev, &e))
					differ++;
				n++;
				continue;
			}
			if (rlog_reader_next(one, &ev) != 1 || !same_event(&ev, &run.head))
				differ++;
			n++;
			uint32_t used = 0, k = 0;
			uint64_t cur = run.cursor;
			while (k < limits[z] && used < run.avail) {
				uint64_t nc = cur;
				uint32_t hw, fw;
				uint32_t size = rlog__run_next(&run, used, &nc, &hw, &fw);
				if (!size)
					break;
				rlog__run_event(&run, used, size, nc, rlog_reader_time_ns(rr, nc), hw, fw,
						&e);
				if (rlog_reader_next(one, &ev) != 1 || !same_event(&ev, &e))
					differ++;
				n++;
				used += size;
				cur = nc;
				k++;
			}
			taken += k;
			if (rlog__reader_run_take(rr, &run, used, cur, k) < 0)
				differ++;
		}
		ok(got == 0, "runs taking up to %" PRIu32 ": the end (%d)", limits[z], got);
		ok(rlog_reader_next(one, &ev) == 0, "runs taking up to %" PRIu32 ": nothing more",
		   limits[z]);
		ok(differ == 0 && n == EVENTS,
		   "runs taking up to %" PRIu32 ": the %" PRIu64 " events of rlog_reader_next, every "
		   "field the same (%" PRIu64 " differ; %" PRIu64 " runs, %" PRIu64 " taken from "
		   "the block)", limits[z], n, differ, runs, taken);
		/* Records are taken from the block but when told not to: 120
		 * in this file, whose threads take turns record by record
		 * (threads 0 and 1 at equal times: the bound by file offset),
		 * the same for every limit. */
		ok(taken == (limits[z] == 0 ? 0u : 3u * ROUNDS), "runs taking up to %" PRIu32
		   ": %" PRIu64 " taken", limits[z], taken);
		rlog_reader_close(one);
		rlog_reader_close(rr);
	}

	/* The open pass's walk of a cut last block (its fast path for event
	 * records): cut 1 to 3 bytes into the last record's header word,
	 * from a memory image of exactly its size (ASan: not a byte read
	 * past it), the block read up to its last whole record. */
	build(&f);
	size_t last = f.b.len - 16; /* the last record: timed, 8 bytes of payload */
	for (size_t cut = 1; cut <= 3; cut++) {
		struct rlog_reader *r;
		struct rlog_event ev;
		size_t len = last + cut;
		uint8_t *img = malloc(len);
		BAIL_IF(!img, "no memory");
		memcpy(img, f.b.p, len);
		int rc = rlog_reader_open_mem(img, len, &r);
		uint64_t n = 0;
		while (rc == 0 && rlog_reader_next(r, &ev) == 1)
			n++;
		ok(rc == 0 && n > 0 && n < EVENTS && rlog_reader_damage_count(r) == 1,
		   "cut %zu bytes into a word: opens, %" PRIu64 " events, %zu damage", cut, n,
		   rc == 0 ? rlog_reader_damage_count(r) : 0);
		if (rc == 0)
			rlog_reader_close(r);
		free(img);
	}
	fg_file_free(&f);

	struct rlog_event ev;
	ASSERT_EQ(rlog__reader_next_batch(NULL, &ev, 1), -EINVAL);
	unlink(path);
	return done_testing();
}
