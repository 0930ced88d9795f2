/*
 * test_reader_damage - damaged files: a checksum mismatch in a middle block,
 * a truncated last block (in its data and in its header), garbage between
 * blocks, a malformed record under a good checksum, a record count that
 * disagrees, and files that are no ringlog file at all.  Exact recovered
 * event counts, exact damage messages and offsets, exact -errno.  Last, a
 * few thousand random mutations of a valid file must read without fault
 * (run under AddressSanitizer).
 */
#include <errno.h>

#include "ringlog/reader.h"
#include "filegen.h"
#include "tap.h"

#define NB 5   /* thread blocks */
#define K 10   /* events per block */

static size_t blk[NB];   /* file offsets of the thread blocks */
static size_t recs[K];   /* record offsets in a block's data (same for all) */

/* Marker + NB blocks of K events (12-byte payloads) of thread 10/11. */
static void build(struct fg_file *f)
{
	uint64_t t = 1000;
	fg_file_init(f);
	fg_marker_block(f, 1, 1, 1000000000u, 1000, 0, RLOG_TICK_MONOTONIC, 16384, 4, "damage");
	for (int i = 0; i < NB; i++) {
		struct fg_block b;
		fg_block_begin(&b, 10, 11, t, 0);
		for (int e = 0; e < K; e++) {
			uint32_t p[3] = { (uint32_t)i, (uint32_t)e, 0xabababab };
			t += 10;
			recs[e] = fg_event(&b, 3000, -1, true, (uint32_t)t, p, sizeof(p));
		}
		blk[i] = fg_block_end(f, &b);
	}
}

/* Events read (LOG_MARKER excluded); -1 on a read error. */
static int count_events(struct rlog_reader *r, int *first_block_seen)
{
	struct rlog_event ev;
	int n = 0, rc;
	uint64_t last = 0;
	while ((rc = rlog_reader_next(r, &ev)) == 1) {
		if (ev.id == RLOG_ID_LOG_MARKER)
			continue;
		if (ev.ticks < last)
			return -1;
		last = ev.ticks;
		if (first_block_seen && n == 0) {
			uint32_t p[3];
			memcpy(p, ev.payload, sizeof(p));
			*first_block_seen = (int)p[0];
		}
		n++;
	}
	return rc < 0 ? rc : n;
}

static const char *damage_msg(struct rlog_reader *r, size_t i, struct rlog_damage *d)
{
	if (rlog_reader_damage(r, i, d) < 0)
		return "(none)";
	return d->message;
}

int main(void)
{
	struct fg_file f;
	struct rlog_reader *r;
	struct rlog_damage d;
	char want[256];

	/* 0. The clean file. */
	build(&f);
	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_EQ(count_events(r, NULL), NB * K);
	ASSERT_EQ(rlog_reader_damage_count(r), 0);
	rlog_reader_close(r);

	/* 1. A flipped payload byte in block 2: its checksum fails, it is skipped
	 * whole, the others are read. */
	f.b.p[blk[2] + FG_BLOCK_HDR + recs[3] + 9] ^= 0x40;
	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_EQ(count_events(r, NULL), (NB - 1) * K);
	ASSERT_EQ(rlog_reader_damage_count(r), 1);
	snprintf(want, sizeof(want), "damaged block at offset %zu: checksum mismatch (skipped %d records)",
		 blk[2], K);
	ASSERT_STREQ(damage_msg(r, 0, &d), want);
	ASSERT_EQ_U64(d.offset, blk[2]);
	ASSERT_EQ_U64(d.length, blk[3] - blk[2]);
	ASSERT_EQ(d.records_skipped, K);
	ASSERT_EQ(d.kind, RLOG_DAMAGE_BLOCK);
	rlog_reader_close(r);
	f.b.p[blk[2] + FG_BLOCK_HDR + recs[3] + 9] ^= 0x40;

	/* 1b. A flipped bit in block 2's data_size: the header no longer
	 * matches its checksum, and the reader finds block 3 by scanning. */
	f.b.p[blk[2] + 33] ^= 0x01; /* data_size += 256 */
	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_EQ(count_events(r, NULL), (NB - 1) * K);
	ASSERT_EQ(rlog_reader_damage_count(r), 1);
	snprintf(want, sizeof(want), "damaged block at offset %zu: checksum mismatch (skipped %d "
		 "records and %zu bytes up to the next block at offset %zu)", blk[2], K,
		 blk[3] - blk[2], blk[3]);
	ASSERT_STREQ(damage_msg(r, 0, &d), want);
	rlog_reader_close(r);
	f.b.p[blk[2] + 33] ^= 0x01;

	/* 1c. Block magic destroyed in block 1. */
	f.b.p[blk[1]] = 'X';
	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_EQ(count_events(r, NULL), (NB - 1) * K);
	snprintf(want, sizeof(want), "damaged block at offset %zu: no block header (skipped %zu "
		 "bytes up to the next block at offset %zu)", blk[1], blk[2] - blk[1], blk[2]);
	ASSERT_STREQ(damage_msg(r, 0, &d), want);
	ASSERT_EQ(d.records_skipped, -1);
	rlog_reader_close(r);
	f.b.p[blk[1]] = 'R';

	/* 2. Truncated inside the 7th record of the last block: 6 records are
	 * complete. */
	size_t cut = blk[NB - 1] + FG_BLOCK_HDR + recs[6] + 5;
	ASSERT_EQ(fg_open_len(&f, cut, &r), 0);
	ASSERT_EQ(count_events(r, NULL), (NB - 1) * K + 6);
	ASSERT_EQ(rlog_reader_damage_count(r), 1);
	snprintf(want, sizeof(want), "truncated block at offset %zu: %zu of %zu data bytes present, "
		 "checksum not verifiable (recovered 6 records, skipped 4 records)",
		 blk[NB - 1], recs[6] + 5, f.b.len - blk[NB - 1] - FG_BLOCK_HDR);
	ASSERT_STREQ(damage_msg(r, 0, &d), want);
	ASSERT_EQ(d.kind, RLOG_DAMAGE_TRUNCATED);
	ASSERT_EQ(d.records_skipped, 4);
	ASSERT_EQ_U64(rlog_reader_info(r)->block_count, 1 + NB);
	rlog_reader_close(r);

	/* 2b. Truncated right after the header: nothing to recover. */
	ASSERT_EQ(fg_open_len(&f, blk[NB - 1] + FG_BLOCK_HDR, &r), 0);
	ASSERT_EQ(count_events(r, NULL), (NB - 1) * K);
	snprintf(want, sizeof(want), "truncated block at offset %zu: 0 of %zu data bytes present, "
		 "checksum not verifiable (recovered 0 records, skipped %d records)",
		 blk[NB - 1], f.b.len - blk[NB - 1] - FG_BLOCK_HDR, K);
	ASSERT_STREQ(damage_msg(r, 0, &d), want);
	ASSERT_EQ_U64(rlog_reader_info(r)->block_count, NB);
	rlog_reader_close(r);

	/* 2c. Truncated inside the last block's header. */
	ASSERT_EQ(fg_open_len(&f, blk[NB - 1] + 20, &r), 0);
	ASSERT_EQ(count_events(r, NULL), (NB - 1) * K);
	snprintf(want, sizeof(want), "truncated block at offset %zu: 20 of 48 header bytes present "
		 "(skipped an unknown number of records)", blk[NB - 1]);
	ASSERT_STREQ(damage_msg(r, 0, &d), want);
	rlog_reader_close(r);

	/* 2d. Cut exactly at a block boundary: a clean, shorter file. */
	ASSERT_EQ(fg_open_len(&f, blk[NB - 1], &r), 0);
	ASSERT_EQ(count_events(r, NULL), (NB - 1) * K);
	ASSERT_EQ(rlog_reader_damage_count(r), 0);
	rlog_reader_close(r);
	fg_file_free(&f);

	/* 3. Garbage between blocks 1 and 2 (100 bytes, some looking like a
	 * block magic), and 64 zero bytes at the end. */
	{
		struct fg_file g;
		struct fg_block b;
		uint64_t t = 1000;
		size_t gb = 0, gz, after;
		fg_file_init(&g);
		fg_marker_block(&g, 1, 1, 1000000000u, 1000, 0, RLOG_TICK_MONOTONIC, 16384, 4, "x");
		for (int i = 0; i < 4; i++) {
			if (i == 2) {
				gb = fg_garbage(&g, 100, 0x5a);
				fg_put32(g.b.p + gb + 8, 0x4b424c52u); /* a false block magic */
			}
			fg_block_begin(&b, 10, 11, t, 0);
			for (int e = 0; e < K; e++) {
				t += 10;
				fg_event(&b, 3000, -1, true, (uint32_t)t, &e, 4);
			}
			after = fg_block_end(&g, &b);
			if (i == 2)
				ASSERT_EQ_U64(after, gb + 100);
		}
		gz = fg_garbage(&g, 64, 0);
		ASSERT_EQ(fg_open(&g, &r), 0);
		ASSERT_EQ(count_events(r, NULL), 4 * K);
		ASSERT_EQ(rlog_reader_damage_count(r), 2);
		snprintf(want, sizeof(want), "damaged block at offset %zu: no block header (skipped "
			 "100 bytes up to the next block at offset %zu)", gb, gb + 100);
		ASSERT_STREQ(damage_msg(r, 0, &d), want);
		snprintf(want, sizeof(want), "damaged block at offset %zu: no block header (skipped "
			 "64 bytes up to the end of the file)", gz);
		ASSERT_STREQ(damage_msg(r, 1, &d), want);
		ASSERT_EQ_U64(d.length, 64);
		rlog_reader_close(r);
		fg_file_free(&g);
	}

	/* 4. A malformed record (reserved bit) and a wrong record count, both
	 * under correct checksums: those blocks are skipped, their extent trusted. */
	build(&f);
	f.b.p[blk[1] + FG_BLOCK_HDR + recs[2] + 3] |= 0x40;
	fg_block_recrc(&f, blk[1]);
	f.b.p[blk[3] + 36] = K + 1;
	fg_block_recrc(&f, blk[3]);
	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_EQ(count_events(r, NULL), (NB - 2) * K);
	ASSERT_EQ(rlog_reader_damage_count(r), 2);
	snprintf(want, sizeof(want), "damaged block at offset %zu: malformed record at offset %zu "
		 "(skipped %d records)", blk[1], blk[1] + FG_BLOCK_HDR + recs[2], K);
	ASSERT_STREQ(damage_msg(r, 0, &d), want);
	snprintf(want, sizeof(want), "damaged block at offset %zu: header says %d records, data "
		 "holds %d (skipped %d records)", blk[3], K + 1, K, K);
	ASSERT_STREQ(damage_msg(r, 1, &d), want);
	rlog_reader_close(r);
	fg_file_free(&f);

	/* 5. Not a ringlog file, or not one we can read. */
	{
		static uint8_t zeros[4096];
		struct fg_file h;
		ASSERT_EQ(rlog_reader_open_mem(zeros, sizeof(zeros), &r), -EBADMSG);
		ASSERT_EQ(rlog_reader_open_mem(zeros, 0, &r), -EBADMSG);
		ASSERT_EQ(rlog_reader_open_mem(NULL, 0, &r), -EBADMSG);
		ASSERT_EQ(rlog_reader_open_mem(NULL, 1, &r), -EINVAL);
		ASSERT_EQ(rlog_reader_open("/nonexistent/ringlog.log", &r), -ENOENT);
		ASSERT_EQ(rlog_reader_open("/", &r), -EISDIR);

		build(&h);
		ASSERT_EQ(fg_open_len(&h, 0, &r), -EBADMSG);     /* an empty file */
		ASSERT_EQ(fg_open_len(&h, 63, &r), -EBADMSG);    /* half a header */
		ASSERT_EQ(fg_open_len(&h, 64, &r), -ENODATA);    /* a header, no block */
		h.b.p[3] = 'X';
		ASSERT_EQ(fg_open(&h, &r), -EBADMSG);            /* wrong magic */
		h.b.p[3] = 'G';
		h.b.p[8] = 3;
		ASSERT_EQ(fg_open(&h, &r), -EPROTO);             /* major 3 */
		h.b.p[8] = 0;
		ASSERT_EQ(fg_open(&h, &r), -EPROTO);             /* major 0 */
		/* Major 1: zlib's crc32, which the blocks (CRC-32C) fail: the
		 * marker block is damage, so nothing times the file. */
		h.b.p[8] = 1;
		ASSERT_EQ(fg_open(&h, &r), -ENODATA);
		h.b.p[8] = 2;
		h.b.p[10] = 7;
		ASSERT_EQ(fg_open(&h, &r), 0);                   /* minor 7: fine */
		ASSERT_EQ(rlog_reader_info(r)->version_minor, 7);
		rlog_reader_close(r);
		h.b.p[12] = 32;
		ASSERT_EQ(fg_open(&h, &r), -EBADMSG);            /* header_size < 64 */
		h.b.p[12] = 64;
		h.b.p[blk[0] - 100] ^= 1;                        /* the marker block damaged */
		ASSERT_EQ(fg_open(&h, &r), -ENODATA);
		fg_file_free(&h);

		/* A larger file header: blocks start at its header_size. */
		fg_file_init_ex(&h, 1, 3, 200, 0);
		fg_marker_block(&h, 1, 1, 1000000000u, 1000, 0, RLOG_TICK_MONOTONIC, 16384, 4, "big");
		ASSERT_EQ(fg_open(&h, &r), 0);
		ASSERT_EQ(count_events(r, NULL), 0);
		ASSERT_STREQ(rlog_reader_info(r)->session_name, "big");
		ASSERT_EQ(rlog_reader_damage_count(r), 0);
		rlog_reader_close(r);
		fg_file_free(&h);

		ASSERT_STREQ(rlog_reader_strerror(-EBADMSG), "not a ringlog log file (bad file header)");
		ASSERT_STREQ(rlog_reader_strerror(-ENOENT), "No such file or directory");
	}

	/* 6. Random mutations of a valid file: no fault, no hang, times in
	 * order per the reader's own rules. */
	{
		build(&f);
		uint8_t *copy = malloc(f.b.len);
		uint32_t seed = 12345;
		int opened = 0, errors = 0;
		for (int iter = 0; iter < 3000; iter++) {
			memcpy(copy, f.b.p, f.b.len);
			size_t len = f.b.len;
			int muts = 1 + iter % 8;
			for (int m = 0; m < muts; m++) {
				seed = seed * 1103515245u + 12345u;
				size_t at = (seed >> 8) % len;
				copy[at] = (uint8_t)(seed >> 3);
			}
			if (iter % 5 == 0) {
				seed = seed * 1103515245u + 12345u;
				len = (seed >> 4) % (len + 1);
			}
			if (rlog_reader_open_mem(copy, len, &r) == 0) {
				struct rlog_event ev;
				int rc;
				opened++;
				while ((rc = rlog_reader_next(r, &ev)) == 1) {
					/* the payload is inside the image */
					if ((const uint8_t *)ev.payload < copy ||
					    (const uint8_t *)ev.payload + ev.length > copy + len)
						errors++;
				}
				if (rc != 0)
					errors++;
				for (size_t i = 0; i < rlog_reader_damage_count(r); i++)
					if (rlog_reader_damage(r, i, &d) != 0 || d.offset >= len)
						errors++;
				rlog_reader_close(r);
			}
		}
		ok(opened > 1000, "%d of 3000 mutated files opened", opened);
		ASSERT_EQ(errors, 0);
		free(copy);
		fg_file_free(&f);
	}
	return done_testing();
}
