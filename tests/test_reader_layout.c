/*
 * test_reader_layout.c - the reader's open for a writer that goes on
 * writing a file (src/reader/layout.h, used by the takeover of an
 * orphaned session, src/daemon/adopt.c): its counts are the reader's own
 * (src/reader/count.c), so the takeover counts nothing itself.  On a
 * crafted file (tests/filegen.h) with a thread's DATA_LOSS records of two
 * causes (one an OVERWRITTEN range) and a truncated last block:
 *   - the totals are rlog_reader_open_count()'s, without the truncated
 *     block's readable records unless with_cut;
 *   - the losses per thread and cause, exactly: events, bytes, blocks, the
 *     first block's base time and the range's last time;
 *   - the layout: where the last whole block ends, the next sequence
 *     number (the truncated block's own: it is written again), block 0.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "ringlog/reader.h"
#include "filegen.h"
#include "reader/layout.h"
#include "tap.h"

#define SYNC 1000u

static size_t ev(struct fg_block *b, uint32_t t, uint64_t v)
{
	return fg_event(b, 1031, -1, true, t, &v, sizeof v);
}

/* 48-byte DATA_LOSS payload of cause OVERWRITTEN: a range. */
static void overwritten(struct fg_block *b, uint32_t t, uint64_t events, uint64_t bytes,
			uint64_t blocks, uint64_t first, uint64_t last)
{
	struct fg_buf p = { 0 };
	fg_u64(&p, events);
	fg_u64(&p, bytes);
	fg_u32(&p, RLOG_LOSS_OVERWRITTEN);
	fg_u32(&p, 0);
	fg_u64(&p, blocks);
	fg_u64(&p, first);
	fg_u64(&p, last);
	fg_event(b, 2, -1, true, t, p.p, (unsigned)p.len);
	free(p.p);
}

int main(void)
{
	struct fg_file f;
	struct fg_block b;
	fg_file_init_marker(&f, 1000000000u, SYNC, 1700000000000000000ull, RLOG_TICK_MONOTONIC,
			    4096, 4, "layout");
	fg_marker_block(&f, 7, 7, 1000000000u, SYNC, 1700000000000000000ull, RLOG_TICK_MONOTONIC,
			4096, 4, "layout");
	fg_block_begin(&b, 10, 11, SYNC + 10, 0);
	for (uint32_t i = 0; i < 3; i++)
		ev(&b, SYNC + 10 + i, i);
	fg_block_end(&f, &b);
	/* The daemon's blocks for thread 10/11: two NO_BUFFER records, then
	 * an OVERWRITTEN range. */
	fg_block_begin(&b, 10, 11, SYNC + 20, RLOG_BLOCK_FLAG_DAEMON);
	fg_data_loss(&b, SYNC + 20, 5, 80, RLOG_LOSS_NO_BUFFER);
	fg_data_loss(&b, SYNC + 21, 7, 112, RLOG_LOSS_NO_BUFFER);
	fg_block_end(&f, &b);
	fg_block_begin(&b, 10, 11, SYNC + 30, RLOG_BLOCK_FLAG_DAEMON);
	overwritten(&b, SYNC + 30, 4, 64, 2, SYNC + 22, SYNC + 900);
	fg_block_end(&f, &b);
	size_t whole_end = f.b.len;
	/* The last block, 4 events of thread 10/12, cut after its second
	 * (each record 16 bytes). */
	fg_block_begin(&b, 10, 12, SYNC + 40, 0);
	for (uint32_t i = 0; i < 4; i++)
		ev(&b, SYNC + 40 + i, 100 + i);
	fg_block_end(&f, &b);
	size_t len = whole_end + 48 + 2 * 16 + 8; /* two records and half of the third */
	char path[64];
	fg_tmpname(path, "layout");
	ASSERT_EQ(fg_write_len(&f, path, len), 0);

	for (int with_cut = 0; with_cut < 2; with_cut++) {
		struct rlog_reader *r;
		struct rlog__layout lay;
		ASSERT_EQ(rlog__reader_open_layout(path, NULL, NULL, with_cut != 0, &r, &lay), 0);
		struct rlog_count c;
		ASSERT_EQ(rlog_reader_count(r, &c), 0);
		uint64_t events = 3 + (with_cut ? 2 : 0);
		ok(c.events == events && c.bytes == events * 16,
		   "with_cut %d: %" PRIu64 " events of 16 bytes counted (%" PRIu64 ", %" PRIu64 ")",
		   with_cut, events, c.events, c.bytes);
		ok(c.loss_records == 3 && c.lost_events == 16 && c.lost_bytes == 256,
		   "with_cut %d: 3 DATA_LOSS records, 16 events, 256 bytes", with_cut);
		const struct rlog__thread_loss *tl;
		size_t n;
		ASSERT_EQ(rlog__count_thread_losses(r, &tl, &n), 0);
		ASSERT_EQ_U64(n, 2);
		ok(tl[0].pid == 10 && tl[0].tid == 11 && tl[0].cause == RLOG_LOSS_NO_BUFFER &&
		   tl[0].events == 12 && tl[0].bytes == 192 && tl[0].blocks == 0 &&
		   tl[0].first == SYNC + 20 && tl[0].last == SYNC + 20,
		   "10/11 NO_BUFFER: 12 events, 192 bytes, at the base time of its block");
		ok(tl[1].pid == 10 && tl[1].tid == 11 && tl[1].cause == RLOG_LOSS_OVERWRITTEN &&
		   tl[1].events == 4 && tl[1].bytes == 64 && tl[1].blocks == 2 &&
		   tl[1].first == SYNC + 30 && tl[1].last == SYNC + 900,
		   "10/11 OVERWRITTEN: 4 events, 64 bytes, 2 blocks, up to its range's last time");
		ok(lay.append_at == whole_end && lay.next_seq == 4 && lay.have_block0 &&
		   lay.block0_pid == 7, "layout: append at %zu (the last whole block's end), next "
		   "seq 4 (the truncated block's, written again), block 0 of pid 7", whole_end);
		rlog_reader_close(r);
	}
	/* Opened without counting, there are no rows. */
	struct rlog_reader *r;
	ASSERT_EQ(rlog_reader_open(path, &r), 0);
	const struct rlog__thread_loss *tl;
	size_t n;
	ASSERT_EQ(rlog__count_thread_losses(r, &tl, &n), -ENODATA);
	rlog_reader_close(r);
	unlink(path);
	fg_file_free(&f);
	return done_testing();
}
