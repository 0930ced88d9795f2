/*
 * test_format_live.c - the real-time stream's framing (src/format/live.c)
 * and the reader on a live stream (src/reader/live.c), without a daemon:
 *
 *   1. the end account (struct rlog_rt_end) encoded byte by byte as
 *      docs/FORMAT.md's table lays it out, decoded back, and refused when
 *      short, of another magic or of version 0; written and read through
 *      a memfd as the daemon and the consumer do;
 *   2. the daemon's frames: the file header, a block, the REAL_TIME
 *      DATA_LOSS block (its payload at the offsets of FORMAT.md's struct
 *      rlog_data_loss_blocks), each block's header with its checksum and
 *      what it counts if missed;
 *   3. a stream made of such frames, sent over a socketpair with its end
 *      account (SCM_RIGHTS), read through the live reader: every numbered
 *      event once, the losses the stream told, and the one more DATA_LOSS
 *      the end account adds, with exact values; a stream without an
 *      account, one cut inside a block, one that is not a stream: the
 *      problem or error each gives, word for word.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "format/block.h"
#include "format/live.h"
#include "format/logfile.h"
#include "md_table.h"
#include "reader/live.h"
#include "record.h"
#include "tap.h"

#define NUM_ID 1031
#define SYNC 1000000u

static unsigned long long end_value(const struct rlog_rt_end *e, const char *name)
{
	if (!strcmp(name, "version")) return e->version;
	if (!strcmp(name, "state")) return e->state;
	if (!strcmp(name, "stream_bytes")) return e->stream_bytes;
	if (!strcmp(name, "blocks_whole")) return e->blocks_whole;
	if (!strcmp(name, "lost_blocks")) return e->lost_blocks;
	if (!strcmp(name, "lost_events")) return e->lost_events;
	if (!strcmp(name, "lost_bytes")) return e->lost_bytes;
	if (!strcmp(name, "last_time")) return e->last_time;
	return ~0ull;
}

/* 1. The end account. */
static void end_account(const char *md)
{
	struct rlog_rt_end e = {
		.version = RLOG_RT_END_VERSION, .state = RLOG_RT_END_FINAL,
		.stream_bytes = 0x1112131415161718ull, .blocks_whole = 0x2122232425262728ull,
		.lost_blocks = 0x3132333435363738ull, .lost_events = 0x4142434445464748ull,
		.lost_bytes = 0x5152535455565758ull, .last_time = 0x6162636465666768ull,
	};
	uint8_t b[RLOG__RT_END_SIZE + 8];
	memset(b, 0xee, sizeof b);
	rlog__rt_end_encode(b, &e);
	ASSERT_EQ(b[RLOG__RT_END_SIZE], 0xee);
	struct md_field rows[16];
	unsigned long long total = 0, tiled = 0;
	int n = md_struct_rows(md, "#### struct rlog_rt_end", rows, 16, &total);
	ASSERT_EQ(n, 9);
	ASSERT_EQ_U64(total, RLOG__RT_END_SIZE);
	for (int i = 0; i < n; i++) {
		ok(rows[i].off == tiled, "rt_end %s at +%llu follows the row before", rows[i].field,
		   rows[i].off);
		tiled = rows[i].off + rows[i].size;
		if (!strcmp(rows[i].field, "magic")) {
			ok(rows[i].size == 8 && memcmp(b, "RLOGRTE\0", 8) == 0,
			   "magic: the 8 bytes \"RLOGRTE\" and its NUL at +0");
			continue;
		}
		ok(md_le(b + rows[i].off, rows[i].size) == end_value(&e, rows[i].field),
		   "rt_end %s: %llu bytes at +%llu hold 0x%llx", rows[i].field, rows[i].size,
		   rows[i].off, end_value(&e, rows[i].field));
	}
	ASSERT_EQ_U64(tiled, RLOG__RT_END_SIZE);

	struct rlog_rt_end d;
	memset(&d, 0x5a, sizeof d);
	ASSERT_EQ(rlog__rt_end_decode(b, RLOG__RT_END_SIZE, &d), 0);
	ok(memcmp(d.magic, RLOG_RT_END_MAGIC, 8) == 0 && d.version == e.version &&
	   d.state == e.state && d.stream_bytes == e.stream_bytes &&
	   d.blocks_whole == e.blocks_whole && d.lost_blocks == e.lost_blocks &&
	   d.lost_events == e.lost_events && d.lost_bytes == e.lost_bytes &&
	   d.last_time == e.last_time, "decode(encode(e)) == e");
	ASSERT_EQ(rlog__rt_end_decode(b, RLOG__RT_END_SIZE - 1, &d), -ENODATA);
	ASSERT_EQ(rlog__rt_end_decode(b, 0, &d), -ENODATA);
	uint8_t c[RLOG__RT_END_SIZE + 16];
	memcpy(c, b, RLOG__RT_END_SIZE);
	c[0] = 'X';
	ASSERT_EQ(rlog__rt_end_decode(c, RLOG__RT_END_SIZE, &d), -EBADMSG);
	memcpy(c, b, RLOG__RT_END_SIZE);
	rlog__put32(c + 8, 0);
	ASSERT_EQ(rlog__rt_end_decode(c, RLOG__RT_END_SIZE, &d), -EBADMSG);
	/* A later version's longer account: the fields this one knows. */
	memcpy(c, b, RLOG__RT_END_SIZE);
	rlog__put32(c + 8, RLOG_RT_END_VERSION + 1);
	memset(c + RLOG__RT_END_SIZE, 0x77, 16);
	ASSERT_EQ(rlog__rt_end_decode(c, sizeof c, &d), 0);
	ok(d.version == RLOG_RT_END_VERSION + 1 && d.last_time == e.last_time,
	   "a version 2 account of 80 bytes is read for its first 64");

	int fd = memfd_create("test-rt-end", MFD_CLOEXEC);
	ok(fd >= 0, "%s", "fd >= 0");
	ASSERT_EQ(rlog__rt_end_read(fd, &d), -ENODATA);
	ASSERT_EQ(rlog__rt_end_write(fd, &e), 0);
	uint8_t f[RLOG__RT_END_SIZE];
	ASSERT_EQ(pread(fd, f, sizeof f, 0), (ssize_t)sizeof f);
	ok(memcmp(f, b, sizeof f) == 0, "the account written is the 64 bytes encoded");
	memset(&d, 0, sizeof d);
	ASSERT_EQ(rlog__rt_end_read(fd, &d), 0);
	ASSERT_EQ_U64(d.lost_events, e.lost_events);
	close(fd);
}

/* A thread block of numbered events seq from..to-1 of writer w: records
 * of ID NUM_ID, payload {w, seq}, timestamped (24 bytes each). */
static uint32_t numbered(uint8_t *out, uint64_t w, uint64_t from, uint64_t to, uint64_t base)
{
	uint32_t n = 0;
	for (uint64_t s = from; s < to; s++, n += 24) {
		rlog__put32(out + n, rlog__hdr_make(NUM_ID, 16, true));
		rlog__put32(out + n + 4, (uint32_t)(base + s));
		rlog__put64(out + n + 8, w);
		rlog__put64(out + n + 16, s);
	}
	return n;
}

static struct rlog_log_marker marker(void)
{
	struct rlog_log_marker m;
	memset(&m, 0, sizeof m);
	m.tick_freq_hz = 1000000000u;
	m.sync_ticks = SYNC;
	m.sync_realtime_ns = 1700000000000000000ull;
	m.tick_source = RLOG_TICK_MONOTONIC;
	m.buffer_size = 4096;
	m.buffer_count = 4;
	snprintf(m.session_name, sizeof m.session_name, "live");
	return m;
}

/* 2. The daemon's frames: header, block 0, a thread block of 10 events,
 * a loss block.  Checked byte by byte; returns nothing (f is the
 * caller's, used by 3). */
static void frames(const char *md, struct rlog__live_frame *f, struct rlog_file_header *fh)
{
	struct rlog_log_marker m = marker();
	rlog__file_header_make(fh, 0, &m);
	uint8_t rec[8 + sizeof m];
	uint32_t mn = rlog__marker_record(rec, &m);
	uint8_t ev[24 * 10];
	uint32_t en = numbered(ev, 0, 1, 11, SYNC);
	rlog__live_frame_reset(f);
	ASSERT_EQ(rlog__live_frame_header(f, fh), 0);
	ASSERT_EQ(rlog__live_frame_block(f, RLOG_BLOCK_FLAG_DAEMON, 0, 7, 7, SYNC, rec, mn, 1, 0, 0), 0);
	ASSERT_EQ(rlog__live_frame_block(f, 0, 1, 100, 101, SYNC, ev, en, 10, 10, 160), 0);
	ASSERT_EQ(rlog__live_frame_loss(f, 2, SYNC + 50, 3, 30, 480), 0);
	size_t h = sizeof *fh, b0 = h + 48 + mn, b1 = b0 + 48 + en, b2 = b1 + 48 + 40;
	ASSERT_EQ_U64(f->len, b2);
	ok(memcmp(f->buf, fh, h) == 0, "the frame starts with the file header's %zu bytes", h);
	ASSERT_EQ_U64(f->nblk, 3);
	ok(f->blk[0].end == b0 && !f->blk[0].thread && f->blk[0].events == 0,
	   "block 0: a daemon block ending at %zu, counting nothing", b0);
	ok(f->blk[1].end == b1 && f->blk[1].thread && f->blk[1].events == 10 &&
	   f->blk[1].event_bytes == 160, "the thread block ends at %zu and counts 10 events, 160 "
	   "bytes", b1);
	ok(f->blk[2].end == b2 && !f->blk[2].thread && f->blk[2].events == 0,
	   "the loss block ends at %zu and counts nothing", b2);
	struct rlog_block_header bh;
	rlog__block_decode(f->buf + b0, &bh);
	ok(bh.magic == RLOG_BLOCK_MAGIC && bh.seq == 1 && bh.pid == 100 && bh.tid == 101 &&
	   bh.flags == 0 && bh.base_time == SYNC && bh.data_size == en && bh.record_count == 10,
	   "the thread block's header: seq 1, pid 100, tid 101, %u bytes, 10 records", en);
	ASSERT_EQ(bh.crc32, rlog__block_checksum(RLOG_FILE_VERSION_MAJOR, f->buf + b0, en));
	ok(memcmp(f->buf + b0 + 48, ev, en) == 0, "its data follows as given");

	/* The loss block: a daemon block, pid 0, tid 0, one record of 40
	 * bytes: header word (Length 32, ID 2, fTimeStamp), time, payload. */
	const uint8_t *l = f->buf + b1;
	rlog__block_decode(l, &bh);
	ok(bh.seq == 2 && bh.flags == RLOG_BLOCK_FLAG_DAEMON && bh.pid == 0 && bh.tid == 0 &&
	   bh.base_time == SYNC + 50 && bh.data_size == 40 && bh.record_count == 1,
	   "the loss block's header: seq 2, DAEMON, pid 0, tid 0, 40 bytes, 1 record");
	ASSERT_EQ(bh.crc32, rlog__block_checksum(RLOG_FILE_VERSION_MAJOR, l, 40));
	ASSERT_EQ(md_le(l + 48, 4), 32u | 2u << 16 | 0x80000000u);
	ASSERT_EQ(md_le(l + 52, 4), (uint32_t)(SYNC + 50));
	const uint8_t *pl = l + 56;
	struct md_field rows[8], inner[8];
	unsigned long long total = 0, itotal = 0;
	ASSERT_EQ(md_struct_rows(md, "#### struct rlog_data_loss_blocks", rows, 8, &total), 2);
	ASSERT_EQ_U64(total, 32);
	ASSERT_EQ(md_struct_rows(md, "#### struct rlog_data_loss\n", inner, 8, &itotal) >= 3, 1);
	for (int i = 0; i < 3; i++) {
		unsigned long long want = !strcmp(inner[i].field, "events") ? 30 :
					  !strcmp(inner[i].field, "bytes") ? 480 :
					  !strcmp(inner[i].field, "cause") ? RLOG_LOSS_REAL_TIME : ~0ull;
		ok(md_le(pl + inner[i].off, inner[i].size) == want, "loss %s at +%llu is %llu",
		   inner[i].field, inner[i].off, want);
	}
	ok(!strcmp(rows[1].field, "blocks") && md_le(pl + rows[1].off, rows[1].size) == 3,
	   "blocks at +%llu is 3", rows[1].off);
}

/* The consumer's side of a stream: every delivery of the live reader on
 * fd.  Counts the numbered events (seen: seq 1..63 of writer 0), the
 * DATA_LOSS records by value, the deliveries; returns what the last
 * rlog_live_next returned. */
struct got {
	uint64_t seen, twice, extra, deliveries;
	uint64_t loss_records, loss_blocks, loss_events, loss_bytes;
	struct rlog_loss last_loss;
	struct rlog_live *lr;
};

static int consume(int fd, struct got *g)
{
	memset(g, 0, sizeof *g);
	ASSERT_EQ(rlog_live_open_fd(fd, &g->lr), 0);
	int rc;
	struct rlog_reader *r;
	while ((rc = rlog_live_next(g->lr, &r)) == 1 || rc == -EAGAIN) {
		if (rc == -EAGAIN)
			continue; /* the writer closed its end already: more is there */
		g->deliveries++;
		struct rlog_event ev;
		while (rlog_reader_next(r, &ev) == 1) {
			struct rlog_loss l;
			if (rlog_event_loss(&ev, &l) == 0) {
				g->loss_records++;
				g->loss_blocks += l.blocks;
				g->loss_events += l.events;
				g->loss_bytes += l.bytes;
				g->last_loss = l;
				continue;
			}
			if (ev.id != NUM_ID || ev.length != 16)
				continue;
			uint64_t v[2];
			memcpy(v, ev.payload, sizeof v);
			if (v[0] != 0 || v[1] == 0 || v[1] >= 64)
				g->extra++;
			else if (g->seen & (1ull << v[1]))
				g->twice++;
			else
				g->seen |= 1ull << v[1];
		}
	}
	return rc;
}

/* Sends the n bytes at p over a new socketpair (the first bytes with
 * endfd if >= 0), closes the sending end, and returns the receiving end.
 * The socket buffer takes the few KiB whole. */
static int stream_of(const uint8_t *p, size_t n, int endfd)
{
	int sv[2];
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	size_t off = 0;
	if (endfd >= 0) {
		long k = rlog__live_send_first(sv[0], p, n, endfd);
		ok(k > 0, "%s", "k > 0");
		off = (size_t)k;
	}
	while (off < n) {
		ssize_t k = write(sv[0], p + off, n - off);
		ok(k > 0, "%s", "k > 0");
		off += (size_t)k;
	}
	close(sv[0]);
	return sv[1];
}

/* 3. Streams through the live reader. */
static void streams(struct rlog__live_frame *f)
{
	/* Two more thread blocks after the frames of 2: seq 11..40 and
	 * 41..63 of writer 0 (blocks 3 and 4 of the stream). */
	uint8_t ev[24 * 32];
	uint32_t en = numbered(ev, 0, 11, 41, SYNC + 100);
	ASSERT_EQ(rlog__live_frame_block(f, 0, 3, 100, 101, SYNC + 100, ev, en, 30, 30, 480), 0);
	en = numbered(ev, 0, 41, 64, SYNC + 200);
	ASSERT_EQ(rlog__live_frame_block(f, 0, 4, 100, 102, SYNC + 200, ev, en, 23, 23, 368), 0);
	uint64_t all = ((1ull << 63) - 1) << 1; /* seq 1..63 */

	/* The whole stream, its account FINAL: it counts 5 blocks missed, 3
	 * of them told in the stream; the 2 others come as one more
	 * DATA_LOSS at last_time. */
	int endfd = memfd_create("test-rt-end", MFD_CLOEXEC);
	ok(endfd >= 0, "%s", "endfd >= 0");
	struct rlog_rt_end e = {
		.version = RLOG_RT_END_VERSION, .state = RLOG_RT_END_FINAL,
		.stream_bytes = f->len, .blocks_whole = 5, .lost_blocks = 5, .lost_events = 37,
		.lost_bytes = 592, .last_time = SYNC + 300,
	};
	ASSERT_EQ(rlog__rt_end_write(endfd, &e), 0);
	struct got g;
	int rc = consume(stream_of(f->buf, f->len, endfd), &g);
	close(endfd);
	ASSERT_EQ(rc, 0);
	ok(g.seen == all && g.twice == 0 && g.extra == 0,
	   "every numbered event once (seq 1..63), none twice (%" PRIu64 "), none extra (%" PRIu64
	   ")", g.twice, g.extra);
	ASSERT_EQ(g.lr->nproblems, 0);
	ASSERT_EQ_U64(g.loss_records, 2);
	ok(g.loss_blocks == 5 && g.loss_events == 37 && g.loss_bytes == 592,
	   "the losses read are the account's: 5 blocks, 37 events, 592 bytes");
	ok(g.last_loss.cause == RLOG_LOSS_REAL_TIME && g.last_loss.blocks == 2 &&
	   g.last_loss.events == 7 && g.last_loss.bytes == 112,
	   "the last DATA_LOSS is the account's remainder: REAL_TIME, 2 blocks, 7 events, 112 "
	   "bytes");
	ok(g.lr->told_blocks == 5 && g.lr->told_events == 37 && g.lr->told_bytes == 592,
	   "the reader's told totals include it");
	ok(g.lr->s.blocks == 5, "5 blocks framed");
	rlog_live_close(g.lr);

	/* Without an account: the events, and the end is not known. */
	rc = consume(stream_of(f->buf, f->len, -1), &g);
	ASSERT_EQ(rc, 0);
	ok(g.seen == all && g.twice == 0 && g.extra == 0, "no account: every event once");
	ASSERT_EQ(g.lr->nproblems, 1);
	ASSERT_STREQ(g.lr->problem[0], "the stream ended without the daemon's end account: what "
				       "this consumer missed at its end is not known");
	rlog_live_close(g.lr);

	/* Cut 20 bytes into the last block; the account says it was sent
	 * whole and nothing missed: two problems. */
	size_t cut = f->blk[f->nblk - 2].end + 20;
	endfd = memfd_create("test-rt-end", MFD_CLOEXEC);
	e.stream_bytes = f->len;
	e.lost_blocks = 3;
	e.lost_events = 30;
	e.lost_bytes = 480;
	ASSERT_EQ(rlog__rt_end_write(endfd, &e), 0);
	rc = consume(stream_of(f->buf, cut, endfd), &g);
	close(endfd);
	ASSERT_EQ(rc, 0);
	ok(g.seen == (all & ((1ull << 41) - 1)), "cut: seq 1..40, before the block cut short");
	ASSERT_EQ(g.lr->nproblems, 3);
	char want[200];
	snprintf(want, sizeof want, "read %zu bytes of the stream; the daemon sent %zu", cut,
		 f->len);
	ASSERT_STREQ(g.lr->problem[0], want);
	ASSERT_STREQ(g.lr->problem[1], "framed 4 blocks; the daemon sent 5 whole");
	ASSERT_STREQ(g.lr->problem[2], "the stream ended inside a block (20 bytes): the daemon "
				       "stopped before it could send it whole");
	rlog_live_close(g.lr);

	/* Not a stream; a stream whose second block header is wrong. */
	uint8_t junk[200];
	memset(junk, 'x', sizeof junk);
	rc = consume(stream_of(junk, sizeof junk, -1), &g);
	ASSERT_EQ(rc, -EBADMSG);
	ASSERT_STREQ(rlog_live_error(g.lr),
		     "not a ringlog stream (no file header at offset 0)");
	rlog_live_close(g.lr);
	uint8_t *bad = malloc(f->len);
	ok(bad != NULL, "%s", "bad != NULL");
	memcpy(bad, f->buf, f->len);
	size_t at = f->blk[1].end; /* the loss block's header */
	bad[at + 4] = 52;          /* header_size 52 */
	rc = consume(stream_of(bad, f->len, -1), &g);
	ASSERT_EQ(rc, -EBADMSG);
	snprintf(want, sizeof want, "bad block header at stream offset %zu (the stream cannot be "
		 "followed past it)", at);
	ASSERT_STREQ(rlog_live_error(g.lr), want);
	ok(g.seen == (all & ((1ull << 11) - 1)) && g.deliveries == 1,
	   "what came before the bad header is delivered: seq 1..10");
	rlog_live_close(g.lr);
	free(bad);
}

int main(void)
{
	const char *md = getenv("RINGLOG_FORMAT_MD");
	if (md == NULL)
		skip_all("RINGLOG_FORMAT_MD not set");
	end_account(md);
	struct rlog__live_frame f;
	memset(&f, 0, sizeof f);
	struct rlog_file_header fh;
	frames(md, &f, &fh);
	streams(&f);
	rlog__live_frame_free(&f);
	return done_testing();
}
