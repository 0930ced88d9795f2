/*
 * test_reader_merge - three threads whose blocks interleave in the file
 * come out in global time order, each thread's events in its own order,
 * events of equal ticks in file order (within a thread and across
 * threads), and the daemon's DATA_LOSS block for a thread in its place.
 */
#include <errno.h>

#include "ringlog/reader.h"
#include "filegen.h"
#include "tap.h"

#define START 100000ull
#define MAXEV 256

struct item {
	uint64_t ticks;
	uint32_t tid;
	uint32_t tag;       /* payload: unique per event */
	size_t file_order;  /* position in the file */
};

static struct item items[MAXEV];
static size_t nitems;

/* Per-thread time cursor, for writing timestamps. */
static uint64_t cur[4];

static void add(struct fg_block *b, uint32_t tid, uint64_t ticks, bool ts)
{
	uint32_t tag = (uint32_t)nitems;
	fg_event(b, 1024 + tid, -1, ts, (uint32_t)ticks, &tag, 4);
	items[nitems] = (struct item){ ts ? ticks : cur[tid - 100], tid, tag, nitems };
	if (ts)
		cur[tid - 100] = ticks;
	nitems++;
}

int main(void)
{
	struct fg_file f;
	struct fg_block b;
	struct rlog_reader *r;
	struct rlog_event ev;

	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, 1000000000u, START, 0, RLOG_TICK_MONOTONIC, 16384, 8, "merge");
	for (int i = 1; i <= 3; i++)
		cur[i] = START;

	/*
	 * Thread 101: 10, 40, 70, ...  thread 102: 20, 50, 80, ...
	 * thread 103: 10, 40, ... (ties with 101).  Blocks of 4 events; the
	 * file holds 103's blocks first in each round so that 103 wins the ties
	 * by file order.  Records without timestamps tie within a thread.
	 */
	for (int round = 0; round < 5; round++) {
		uint64_t t0 = START + (uint64_t)round * 120;
		uint32_t tids[3] = { 103, 101, 102 };
		for (int k = 0; k < 3; k++) {
			uint32_t tid = tids[k];
			uint64_t off = tid == 102 ? 20 : 10;
			fg_block_begin(&b, 7, tid, cur[tid - 100], 0);
			for (int e = 0; e < 4; e++)
				add(&b, tid, t0 + off + (uint64_t)e * 30, true);
			if (tid == 101)
				add(&b, tid, 0, false); /* same ticks as the previous one */
			fg_block_end(&f, &b);
		}
		if (round == 2) {
			/* The daemon noticed thread 102 lost events: a DATA_LOSS
			 * block for 102, before 102's next block. */
			fg_block_begin(&b, 7, 102, cur[2], 0x0001);
			fg_data_loss(&b, (uint32_t)(cur[2] + 1), 17, 272, RLOG_LOSS_NO_BUFFER);
			fg_block_end(&f, &b);
			items[nitems] = (struct item){ cur[2] + 1, 102, UINT32_MAX, nitems };
			nitems++;
			cur[2] += 1;
		}
	}

	/* The expected order: a stable sort of the file order by ticks. */
	struct item want[MAXEV];
	memcpy(want, items, sizeof(items));
	for (size_t i = 1; i < nitems; i++) {
		struct item x = want[i];
		size_t j = i;
		while (j > 0 && want[j - 1].ticks > x.ticks) {
			want[j] = want[j - 1];
			j--;
		}
		want[j] = x;
	}

	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_EQ_U64(rlog_reader_info(r)->thread_count, 4);
	ASSERT_EQ_U64(rlog_reader_info(r)->block_count, 1 + 15 + 1);
	ASSERT_EQ(rlog_reader_next(r, &ev), 1);
	ASSERT_EQ(ev.id, RLOG_ID_LOG_MARKER);

	size_t got = 0, bad = 0, ties_across = 0, ties_within = 0;
	uint64_t prev = 0, last_offset = 0;
	uint64_t thread_prev_off[4] = { 0 };
	int rc;
	while ((rc = rlog_reader_next(r, &ev)) == 1 && got < nitems) {
		const struct item *w = &want[got];
		uint32_t tag = UINT32_MAX;
		if (ev.id != RLOG_ID_DATA_LOSS)
			memcpy(&tag, ev.payload, 4);
		if (ev.ticks != w->ticks || ev.tid != w->tid || tag != w->tag ||
		    ev.time_ns != (int64_t)(w->ticks - START) || ev.pid != 7) {
			bad++;
			diag("#%zu: tid %u tag %u ticks %llu; want tid %u tag %u ticks %llu", got,
			     ev.tid, tag, (unsigned long long)ev.ticks, w->tid, w->tag,
			     (unsigned long long)w->ticks);
		}
		if (got > 0 && ev.ticks == prev) {
			if (ev.offset < last_offset)
				bad++; /* a tie out of file order */
			ties_across += ev.tid != want[got - 1].tid;
			ties_within += ev.tid == want[got - 1].tid;
		}
		if (ev.offset < thread_prev_off[ev.tid - 100])
			bad++; /* a thread out of its own order */
		thread_prev_off[ev.tid - 100] = ev.offset;
		if (ev.id == RLOG_ID_DATA_LOSS)
			ok(ev.from_daemon && ev.length == 24, "DATA_LOSS from the daemon, 24 bytes");
		prev = ev.ticks;
		last_offset = ev.offset;
		got++;
	}
	ASSERT_EQ(rc, 0);
	ASSERT_EQ(got, nitems);
	ASSERT_EQ(nitems, 5 * (4 + 5 + 4) + 1);
	ASSERT_EQ(bad, 0);
	/* 101 and 103 tie at every timestamp: 20 ties across threads; 101's
	 * untimed record ties with its predecessor: 5 ties within. */
	ASSERT_EQ(ties_across, 20);
	ASSERT_EQ(ties_within, 5);
	ASSERT_EQ(rlog_reader_damage_count(r), 0);
	rlog_reader_close(r);
	fg_file_free(&f);
	return done_testing();
}
