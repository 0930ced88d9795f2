/*
 * test_format_block.c - the block header codec (src/format/block.c)
 * against docs/FORMAT.md's table of struct rlog_block_header: every
 * field the table lists is at its offset with its size in the encoded
 * bytes, the checksum is the one "Block checksum" describes for each
 * major version, and decoding gives back what was encoded.  Then the
 * DATA_LOSS record (src/format/loss.c) of each payload length, byte by
 * byte as FORMAT.md's "DATA_LOSS" lays it out, and the file header the
 * log file writer and the real-time stream start with
 * (src/format/logfile.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "crc32c.h"
#include "format/block.h"
#include "format/logfile.h"
#include "format/loss.h"
#include "md_table.h"
#include "record.h"
#include "tap.h"

static unsigned long long field_value(const struct rlog_block_header *h, const char *name)
{
	if (!strcmp(name, "magic")) return h->magic;
	if (!strcmp(name, "header_size")) return h->header_size;
	if (!strcmp(name, "flags")) return h->flags;
	if (!strcmp(name, "seq")) return h->seq;
	if (!strcmp(name, "pid")) return h->pid;
	if (!strcmp(name, "tid")) return h->tid;
	if (!strcmp(name, "base_time")) return h->base_time;
	if (!strcmp(name, "data_size")) return h->data_size;
	if (!strcmp(name, "record_count")) return h->record_count;
	if (!strcmp(name, "crc32")) return h->crc32;
	if (!strcmp(name, "reserved")) return h->reserved;
	return ~0ull;
}

int main(void)
{
	const char *md = getenv("RINGLOG_FORMAT_MD");
	if (md == NULL)
		skip_all("RINGLOG_FORMAT_MD not set");

	const uint8_t data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct rlog_block_header h;
	rlog__block_header_make(&h, 2, RLOG_BLOCK_FLAG_DAEMON | RLOG_BLOCK_FLAG_METADATA,
				0x0807060504030201ull, 0x11121314u, 0x21222324u,
				0x3132333435363738ull, data, sizeof data, 2);
	uint8_t b[RLOG__BLOCK_HDR_SIZE + sizeof data];
	memset(b, 0xee, sizeof b);
	rlog__block_encode(b, &h);
	memcpy(b + RLOG__BLOCK_HDR_SIZE, data, sizeof data);

	/* Every row of the table, at its offset, little-endian. */
	struct md_field rows[32];
	unsigned long long total = 0;
	int n = md_struct_rows(md, "### struct rlog_block_header", rows, 32, &total);
	ASSERT_EQ(n, 11);
	ASSERT_EQ_U64(total, RLOG__BLOCK_HDR_SIZE);
	unsigned long long tiled = 0;
	for (int i = 0; i < n; i++) {
		ok(rows[i].off == tiled, "%s at +%llu follows the row before", rows[i].field,
		   rows[i].off);
		tiled = rows[i].off + rows[i].size;
		ok(md_le(b + rows[i].off, rows[i].size) == field_value(&h, rows[i].field),
		   "%s: %llu bytes at +%llu hold 0x%llx", rows[i].field, rows[i].size, rows[i].off,
		   field_value(&h, rows[i].field));
	}
	ASSERT_EQ_U64(tiled, RLOG__BLOCK_HDR_SIZE);
	/* The table's own words: the magic's bytes, header_size 48, reserved 0. */
	ok(memcmp(b, "\x52\x4c\x42\x4b", 4) == 0, "magic is the bytes 52 4c 42 4b (\"RLBK\")");
	ASSERT_EQ(md_le(b + 4, 2), 48);
	ASSERT_EQ(md_le(b + 44, 4), 0);

	/* The checksum: header bytes 0..39, then the data; CRC-32C in 2.x,
	 * zlib's CRC-32 in 1.x. */
	uint32_t c2 = rlog__crc32c(rlog__crc32c(0, b, 40), data, sizeof data);
	ASSERT_EQ(h.crc32, c2);
	ASSERT_EQ(rlog__block_checksum(2, b, sizeof data), c2);
	uint32_t c1 = (uint32_t)crc32(crc32(0, b, 40), data, sizeof data);
	ASSERT_EQ(rlog__block_checksum(1, b, sizeof data), c1);
	struct rlog_block_header h1;
	rlog__block_header_make(&h1, 1, h.flags, h.seq, h.pid, h.tid, h.base_time, data,
				sizeof data, 2);
	ASSERT_EQ(h1.crc32, c1);

	/* Decoding gives back every field. */
	struct rlog_block_header d;
	memset(&d, 0x5a, sizeof d);
	rlog__block_decode(b, &d);
	ok(memcmp(&d, &h, sizeof d) == 0, "decode(encode(h)) == h");
	ok(rlog__block_sane(&d), "the header made is sane");
	b[44] = 7; /* reserved is not covered by the checksum; it is read as it is */
	rlog__block_decode(b, &d);
	ASSERT_EQ(d.reserved, 7);
	b[44] = 0;

	/* What is not sane (the magic is the caller's to check). */
	struct rlog_block_header s = h;
	s.header_size = 52;
	ok(!rlog__block_sane(&s), "header_size 52 is not sane");
	s = h;
	s.data_size = 6;
	ok(!rlog__block_sane(&s), "data_size 6 (not a multiple of 4) is not sane");
	s = h;
	s.data_size = RLOG_BLOCK_DATA_MAX + 4;
	ok(!rlog__block_sane(&s), "data_size past RLOG_BLOCK_DATA_MAX is not sane");
	s = h;
	s.record_count = 3;
	ok(!rlog__block_sane(&s), "3 records in 8 bytes are not sane");

	/* Renumbering: a correct checksum is made again, a wrong one kept. */
	rlog__block_renumber(2, b, sizeof data, 9);
	rlog__block_decode(b, &d);
	ASSERT_EQ_U64(d.seq, 9);
	ASSERT_EQ(d.crc32, rlog__block_checksum(2, b, sizeof data));
	b[40] ^= 1;
	uint32_t wrong = d.crc32 ^ 1;
	rlog__block_renumber(2, b, sizeof data, 10);
	rlog__block_decode(b, &d);
	ASSERT_EQ_U64(d.seq, 10);
	ASSERT_EQ(d.crc32, wrong);

	/* DATA_LOSS: header word Length | ID 2 << 16 | fTimeStamp, the low 32
	 * bits of the time, then the payload as given. */
	struct rlog_data_loss_range dr = {
		.loss = { .events = 11, .bytes = 176, .cause = RLOG_LOSS_OVERWRITTEN },
		.blocks = 3, .first_time = 0x100000005ull, .last_time = 0x100000009ull,
	};
	const uint32_t lens[3] = { 24, 32, 48 };
	for (int i = 0; i < 3; i++) {
		uint8_t rec[RLOG__LOSS_RECORD_MAX + 4];
		memset(rec, 0xee, sizeof rec);
		uint32_t n = rlog__loss_record(rec, 0x700000042ull, &dr, lens[i]);
		ASSERT_EQ(n, 8 + lens[i]);
		ASSERT_EQ(md_le(rec, 4), lens[i] | 2u << 16 | 0x80000000u);
		ASSERT_EQ(md_le(rec + 4, 4), 0x00000042u);
		ok(memcmp(rec + 8, &dr, lens[i]) == 0, "the %u-byte payload follows", lens[i]);
		ASSERT_EQ(rec[n], 0xee);
		struct rlog__record r;
		memset(&r, 0, sizeof r);
		ASSERT_EQ(rlog__record_decode(rec, n, &r), (int)n);
		ok(r.id == RLOG_ID_DATA_LOSS && !r.flagged && r.has_time && r.length == lens[i],
		   "decodes as an unflagged, timestamped DATA_LOSS of Length %u", lens[i]);
	}

	/* The file header: "RLOGFILE", this version, 176 bytes, the marker's
	 * copy at +64 with its CRC-32C at +28, the flags at +24. */
	struct rlog_log_marker mk;
	memset(&mk, 0, sizeof mk);
	mk.tick_freq_hz = 1000000000u;
	mk.sync_ticks = 77;
	strcpy(mk.session_name, "fh");
	struct rlog_file_header fh;
	rlog__file_header_make(&fh, RLOG_FILE_FLAG_CIRCULAR, &mk);
	const uint8_t *q = (const uint8_t *)&fh;
	ok(memcmp(q, "RLOGFILE", 8) == 0, "file header magic");
	ASSERT_EQ(md_le(q + 8, 2), RLOG_FILE_VERSION_MAJOR);
	ASSERT_EQ(md_le(q + 10, 2), RLOG_FILE_VERSION_MINOR);
	ASSERT_EQ(md_le(q + 12, 4), 176);
	ok(md_le(q + 16, 8) > 0, "created_realtime_ns set");
	ASSERT_EQ(md_le(q + 24, 4), RLOG_FILE_FLAG_MARKER | RLOG_FILE_FLAG_CIRCULAR);
	ASSERT_EQ(md_le(q + 28, 4), rlog__crc32c(0, &mk, sizeof mk));
	ok(memcmp(q + 64, &mk, sizeof mk) == 0, "the LOG_MARKER's copy at +64");
	return done_testing();
}
