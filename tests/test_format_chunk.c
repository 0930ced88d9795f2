/*
 * test_format_chunk.c - the chunk a multi-host sink publishes
 * (src/format/chunk.c) against docs/FORMAT.md, "Chunks":
 *   1. a chunk built of block 0, a thread block of 5 events and a daemon
 *      block with a DATA_LOSS: every row of FORMAT.md's table of struct
 *      rlog_chunk_header at its offset with the value the rules give
 *      (counts, time range, sizes, the CRC-32C computed here
 *      independently), the names and zero padding, then the blocks byte
 *      for byte;
 *   2. decoding it gives back every field, the names and the blocks;
 *   3. corrupt input: every truncation, bad magic, another major version,
 *      bad sizes, names past the header, a wrong checksum, data_size and
 *      block_count that do not match, a bad block header: an error that
 *      says what is wrong (exact text), never a crash or a read out of
 *      bounds (the suite runs under ASan).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "format/block.h"
#include "format/chunk.h"
#include "format/logfile.h"
#include "format/loss.h"
#include "md_table.h"
#include "record.h"
#include "tap.h"

#define BASE 1000u

/* A whole block at out: header (seq, flags, pid, tid, base) and data. */
static size_t block(uint8_t *out, uint16_t flags, uint64_t seq, uint32_t pid, uint64_t base,
		    const uint8_t *data, uint32_t size, uint32_t records)
{
	struct rlog_block_header h;
	rlog__block_header_make(&h, RLOG_FILE_VERSION_MAJOR, flags, seq, pid, pid, base, data, size,
				records);
	rlog__block_encode(out, &h);
	memcpy(out + RLOG__BLOCK_HDR_SIZE, data, size);
	return RLOG__BLOCK_HDR_SIZE + size;
}

/* The header's CRC-32C as FORMAT.md says: header_size bytes, +100..103 as 0. */
static uint32_t doc_crc(const uint8_t *p)
{
	uint32_t hs = (uint32_t)md_le(p + 12, 4);
	uint8_t *c = malloc(hs);
	memcpy(c, p, hs);
	memset(c + 100, 0, 4);
	uint32_t crc = rlog__crc32c(0, c, hs);
	free(c);
	return crc;
}

static void recrc(uint8_t *p)
{
	rlog__put32(p + 100, doc_crc(p));
}

/* Decoding the n bytes at p fails with rc and exactly the text want. */
static void refused(const uint8_t *p, size_t n, int rc, const char *want)
{
	struct rlog__chunk c;
	char err[200] = "";
	ASSERT_EQ(rlog__chunk_decode(p, n, &c, err, sizeof err), rc);
	ASSERT_STREQ(err, want);
}

int main(void)
{
	const char *md = getenv("RINGLOG_FORMAT_MD");
	if (md == NULL)
		skip_all("RINGLOG_FORMAT_MD not set");

	/* The blocks. */
	uint8_t blocks[3][512];
	size_t bsize[3];
	struct rlog_log_marker m;
	memset(&m, 0, sizeof m);
	m.tick_freq_hz = 1000000000u;
	m.sync_ticks = BASE;
	uint8_t rec[256];
	uint32_t n = rlog__marker_record(rec, &m);
	bsize[0] = block(blocks[0], RLOG_BLOCK_FLAG_DAEMON, 0, 7, BASE, rec, n, 1);
	for (uint32_t i = 0; i < 5; i++) {
		rlog__put32(rec + 24 * i, rlog__hdr_make(1031, 16, true));
		rlog__put32(rec + 24 * i + 4, BASE + 10 * i);
		rlog__put64(rec + 24 * i + 8, 1);
		rlog__put64(rec + 24 * i + 16, i + 1);
	}
	bsize[1] = block(blocks[1], 0, 1, 100, BASE, rec, 5 * 24, 5);
	struct rlog_data_loss dl = { .events = 7, .bytes = 112, .cause = RLOG_LOSS_NO_BUFFER };
	n = rlog__loss_record(rec, BASE + 2000, &dl, sizeof dl);
	bsize[2] = block(blocks[2], RLOG_BLOCK_FLAG_DAEMON, 2, 100, BASE + 2000, rec, n, 1);

	/* 1. The chunk, byte by byte. */
	struct rlog__chunk_writer w;
	memset(&w, 0, sizeof w);
	uint8_t id[16];
	for (int i = 0; i < 16; i++)
		id[i] = (uint8_t)(0x10 + i);
	ASSERT_EQ(rlog__chunk_begin(&w, id, "", "chunky", 0, 0), -EINVAL);
	ASSERT_EQ(rlog__chunk_begin(&w, id, "host-a.example", "chunky", 0x0102030405060708ull,
				    RLOG_CHUNK_FLAG_METADATA), 0);
	w.h.run_id = 0x1112131415161718ull;
	w.h.events_before = 1000;
	w.h.event_bytes_before = 24000;
	w.h.blocks_before = 9;
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(rlog__chunk_add_block(&w, blocks[i], bsize[i]), 0);
	ASSERT_EQ(rlog__chunk_add_block(&w, blocks[1], bsize[1] - 4), -EBADMSG);
	size_t len;
	const uint8_t *ch = rlog__chunk_finish(&w, &len);
	size_t data = bsize[0] + bsize[1] + bsize[2];
	ASSERT_EQ_U64(len, 160 + data); /* 136 + 14 + 6 = 156, to 160 */

	struct md_field rows[32];
	unsigned long long total = 0, tiled = 0;
	int nr = md_struct_rows(md, "#### struct rlog_chunk_header", rows, 32, &total);
	ASSERT_EQ(nr, 22);
	ASSERT_EQ_U64(total, RLOG_CHUNK_HEADER_MIN);
	struct {
		const char *field;
		unsigned long long v;
	} want[] = {
		{ "version_major", 2 }, { "version_minor", 0 }, { "header_size", 160 },
		{ "seq", 0x0102030405060708ull }, { "first_time", BASE }, { "last_time", BASE + 40 },
		{ "events", 5 }, { "event_bytes", 120 }, { "lost_events", 7 }, { "data_size", data },
		{ "block_count", 3 }, { "flags", RLOG_CHUNK_FLAG_METADATA }, { "host_name_len", 14 },
		{ "session_name_len", 6 }, { "reserved", 0 }, { "crc32", doc_crc(ch) },
		{ "run_id", 0x1112131415161718ull }, { "events_before", 1000 },
		{ "event_bytes_before", 24000 }, { "blocks_before", 9 },
	};
	for (int i = 0; i < nr; i++) {
		ok(rows[i].off == tiled, "%s at +%llu follows the row before", rows[i].field,
		   rows[i].off);
		tiled = rows[i].off + rows[i].size;
		if (!strcmp(rows[i].field, "magic")) {
			ok(memcmp(ch, "RLOGCHNK", 8) == 0, "magic: \"RLOGCHNK\" at +0");
			continue;
		}
		if (!strcmp(rows[i].field, "host_id")) {
			ok(rows[i].size == 16 && memcmp(ch + rows[i].off, id, 16) == 0,
			   "host_id: its 16 bytes at +%llu", rows[i].off);
			continue;
		}
		size_t k = 0;
		while (k < sizeof want / sizeof want[0] && strcmp(want[k].field, rows[i].field))
			k++;
		ok(k < sizeof want / sizeof want[0] &&
		   md_le(ch + rows[i].off, rows[i].size) == want[k].v,
		   "%s: %llu bytes at +%llu hold %llu", rows[i].field, rows[i].size, rows[i].off,
		   k < sizeof want / sizeof want[0] ? want[k].v : 0);
	}
	ASSERT_EQ_U64(tiled, RLOG_CHUNK_HEADER_MIN);
	const char *seed = getenv("RINGLOG_CHUNK_SEED"); /* tests/fuzz/corpus/chunk/ */
	if (seed) {
		FILE *f = fopen(seed, "wb");
		if (f) {
			fwrite(ch, 1, len, f);
			fclose(f);
		}
	}
	ok(memcmp(ch + 136, "host-a.examplechunky", 20) == 0, "the names at +136, no NUL");
	ok(memcmp(ch + 156, "\0\0\0\0", 4) == 0, "zeros to header_size");
	ok(memcmp(ch + 160, blocks[0], bsize[0]) == 0 &&
	   memcmp(ch + 160 + bsize[0], blocks[1], bsize[1]) == 0 &&
	   memcmp(ch + 160 + bsize[0] + bsize[1], blocks[2], bsize[2]) == 0,
	   "the blocks follow, byte for byte as given");

	/* 2. Decoded. */
	struct rlog__chunk c;
	char err[200] = "";
	ASSERT_EQ(rlog__chunk_decode(ch, len, &c, err, sizeof err), 0);
	ok(c.h.seq == 0x0102030405060708ull && c.h.events == 5 && c.h.event_bytes == 120 &&
	   c.h.lost_events == 7 && c.h.first_time == BASE && c.h.last_time == BASE + 40 &&
	   c.h.block_count == 3 && c.h.data_size == data && c.h.flags == 1 &&
	   memcmp(c.h.host_id, id, 16) == 0 && c.h.run_id == 0x1112131415161718ull &&
	   c.h.events_before == 1000 && c.h.event_bytes_before == 24000 &&
	   c.h.blocks_before == 9, "decode gives back every field");
	ASSERT_STREQ(c.host_name, "host-a.example");
	ASSERT_STREQ(c.session_name, "chunky");
	size_t off = 0, bs;
	const uint8_t *b;
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(rlog__chunk_next_block(&c, &off, &b, &bs), 1);
		ok(bs == bsize[i] && memcmp(b, blocks[i], bs) == 0, "block %d of the chunk", i);
	}
	ASSERT_EQ(rlog__chunk_next_block(&c, &off, &b, &bs), 0);

	/* 3. Corrupt input. */
	int refused_all = 1;
	for (size_t k = 0; k < len; k++) {
		uint8_t *t = malloc(k ? k : 1); /* exactly k bytes: ASan sees a read past them */
		memcpy(t, ch, k);
		if (rlog__chunk_decode(t, k, &c, err, sizeof err) == 0)
			refused_all = 0;
		free(t);
	}
	ok(refused_all, "every truncation (0 to %zu bytes) is refused", len - 1);
	refused(ch, 50, -EBADMSG, "a chunk of 50 bytes: shorter than its 136-byte header");
	uint8_t *t = malloc(len + 8);
	memcpy(t, ch, len);
	t[0] = 'X';
	refused(t, len, -EBADMSG, "not a ringlog chunk (no \"RLOGCHNK\" at +0)");
	t[0] = 'R';
	rlog__put32(t + 8, 3 | 2u << 16);
	recrc(t);
	refused(t, len, -EPROTO, "a chunk of version 3.2: this reader reads version 2");
	rlog__put32(t + 8, 1);
	recrc(t);
	refused(t, len, -EPROTO, "a chunk of version 1.0: this reader reads version 2");
	rlog__put32(t + 8, 2);
	rlog__put32(t + 12, 156);
	char msg[200];
	snprintf(msg, sizeof msg, "bad header_size 156 (a multiple of 8, at least 156 for its "
		 "names, at most the chunk's %zu bytes)", len);
	refused(t, len, -EBADMSG, msg);
	rlog__put32(t + 12, 160);
	t[96] = 255;
	snprintf(msg, sizeof msg, "bad header_size 160 (a multiple of 8, at least 397 for its "
		 "names, at most the chunk's %zu bytes)", len);
	refused(t, len, -EBADMSG, msg);
	rlog__put32(t + 12, (uint32_t)len + 8);
	t[96] = 14;
	snprintf(msg, sizeof msg, "bad header_size %zu (a multiple of 8, at least 156 for its "
		 "names, at most the chunk's %zu bytes)", len + 8, len);
	refused(t, len, -EBADMSG, msg);
	rlog__put32(t + 12, 160);
	t[97] = 0;
	recrc(t);
	refused(t, len, -EBADMSG, "a chunk without a host name or a session name");
	t[97] = 6;
	recrc(t);
	t[142] ^= 1; /* a byte of the host name */
	ASSERT_EQ(rlog__chunk_decode(t, len, &c, err, sizeof err), -EBADMSG);
	ASSERT_CONTAINS(err, "bad header checksum (crc32 0x");
	t[142] ^= 1;
	memset(t + len, 0, 8); /* 8 bytes more than data_size says */
	snprintf(msg, sizeof msg, "data_size %zu but %zu bytes follow the header", data, data + 8);
	refused(t, len + 8, -EBADMSG, msg);
	rlog__put32(t + 72, 4);
	recrc(t);
	refused(t, len, -EBADMSG, "block_count 4 but 3 blocks follow the header");
	rlog__put32(t + 72, 3);
	recrc(t);
	t[160 + bsize[0]] ^= 0xff; /* the thread block's magic */
	snprintf(msg, sizeof msg, "bad block header at chunk offset %zu", 160 + bsize[0]);
	refused(t, len, -EBADMSG, msg);
	t[160 + bsize[0]] ^= 0xff;
	rlog__put32(t + 160 + bsize[0] + 32, 4 * 1000); /* its data_size past the chunk */
	snprintf(msg, sizeof msg, "a block cut short at chunk offset %zu (%zu of 4000 data bytes)",
		 160 + bsize[0], data - bsize[0] - 48);
	refused(t, len, -EBADMSG, msg);
	ASSERT_EQ(rlog__chunk_decode(ch, len, &c, err, sizeof err), 0);
	free(t);
	rlog__chunk_writer_free(&w);
	return done_testing();
}
