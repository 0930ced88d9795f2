/*
 * test_reader_marker - the copy of the LOG_MARKER in the file header
 * (format 1.1; docs/FORMAT.md, "struct rlog_file_header"):
 *  1. the daemon's writer (logfile.c) puts it there, version 2.1, header
 *     176 bytes, the CRC-32C right, and rewrites it after block 0 at stop;
 *  2. a file whose block 0 is damaged is timed by the copy: block 0's
 *     damage is reported and every other block is read;
 *  3. block 0 wins over a copy that disagrees; a copy whose checksum fails
 *     is damage even when block 0 is fine; with both gone the file cannot
 *     be timed (-ENODATA); the flag means nothing in a 1.0 file; a header
 *     that claims the copy without room for it, or whose size is not a
 *     multiple of 4, is no ringlog file;
 *  4. FORMAT.md's example header: marker_crc32 0x51ee738d (zlib's, 1.x);
 *  5. a 1.1 file continued by the daemon's writer (stop --force) keeps
 *     zlib's crc32 in its new blocks and its rewritten LOG_MARKER.
 */
#include <errno.h>
#include <fcntl.h>
#include <zlib.h>

#include "crc32c.h"
#include "ringlog/reader.h"
#include "format/logfile.h"
#include "filegen.h"
#include "tap.h"

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static uint8_t *slurp_fd(int fd, size_t *len)
{
	off_t n = lseek(fd, 0, SEEK_END);
	uint8_t *p = malloc((size_t)n);
	if (!p || pread(fd, p, (size_t)n, 0) != n)
		abort();
	*len = (size_t)n;
	return p;
}

/* The daemon's writer, through a temporary file. */
static void test_logfile(void)
{
	char path[64];
	struct rlog__logfile lf;
	struct rlog_log_marker m = {
		.tick_freq_hz = 2500000000u, .sync_ticks = 5000, .sync_realtime_ns = 1700000000000000000u,
		.sync_monotonic_ns = 77, .tick_source = RLOG_TICK_TSC, .buffer_size = 16384,
		.buffer_count = 8, .session_name = "copy",
	};
	fg_tmpname(path, "lf");
	int fd = open(path, O_RDWR | O_TRUNC);
	BAIL_IF(fd < 0, "cannot open %s", path);
	unlink(path);
	ASSERT_EQ(rlog__logfile_open(&lf, fd, 16384, &m, 1, 2), 0);
	/* One thread block: a time-stamped event at 5010. */
	uint8_t rec[8] = { 0 };
	fg_put32(rec, 0x84000000u); /* Length 0, ID 1024, fTimeStamp */
	fg_put32(rec + 4, 5010);
	ASSERT_EQ(rlog__logfile_block(&lf, 0, 10, 11, 5000, rec, 8, 1, 1, 8), 0);
	ASSERT_EQ(rlog__logfile_flush(&lf), 0);

	size_t len;
	uint8_t *p = slurp_fd(fd, &len);
	ASSERT_EQ(get32(p + 8), 2 | 1 << 16);             /* version 2.1 */
	ASSERT_EQ(get32(p + 12), 176);                     /* header_size */
	ASSERT_EQ(get32(p + 24), RLOG_FILE_FLAG_MARKER);   /* flags */
	ASSERT_EQ(get32(p + 28), rlog__crc32c(0, p + 64, 112)); /* CRC-32C since 2.0 */
	ok(memcmp(p + 64, &m, 112) == 0, "the copy is the marker");
	ok(memcmp(p + 176 + 48 + 8, &m, 112) == 0, "block 0 holds the same marker");
	free(p);

	/* At stop: block 0 and the copy get the refined frequency. */
	m.tick_freq_hz = 2500000123u;
	ASSERT_EQ(rlog__logfile_rewrite_marker(&lf, &m), 0);
	p = slurp_fd(fd, &len);
	ASSERT_EQ_U64(get64(p + 64), 2500000123u);
	ASSERT_EQ(get32(p + 28), rlog__crc32c(0, p + 64, 112)); /* CRC-32C since 2.0 */
	ASSERT_EQ_U64(get64(p + 176 + 48 + 8), 2500000123u);

	struct rlog_reader *r;
	struct rlog_event ev;
	ASSERT_EQ(rlog_reader_open_mem(p, len, &r), 0);
	ASSERT_EQ_U64(rlog_reader_info(r)->tick_freq_hz, 2500000123u);
	ok(!rlog_reader_info(r)->marker_copy, "timed by block 0");
	ASSERT_EQ(rlog_reader_info(r)->version_minor, RLOG_FILE_VERSION_MINOR);
	rlog_reader_close(r);

	/* Block 0 damaged: the copy times the file, the thread block is read. */
	p[176 + 48 + 20] ^= 0xff; /* in the marker's sync_realtime_ns */
	ASSERT_EQ(rlog_reader_open_mem(p, len, &r), 0);
	const struct rlog_reader_info *info = rlog_reader_info(r);
	ok(info->marker_copy, "timed by the header's copy");
	ASSERT_EQ_U64(info->tick_freq_hz, 2500000123u);
	ASSERT_EQ_U64(info->start_ticks, 5000);
	ASSERT_STREQ(info->session_name, "copy");
	ASSERT_EQ(rlog_reader_damage_count(r), 1);
	struct rlog_damage d;
	ASSERT_EQ(rlog_reader_damage(r, 0, &d), 0);
	ASSERT_STREQ(d.message, "damaged block at offset 176: checksum mismatch (skipped 1 records)");
	ASSERT_EQ(rlog_reader_next(r, &ev), 1);
	ASSERT_EQ(ev.id, 1024);
	ASSERT_EQ(ev.time_ns, 3); /* 10 ticks at 2.500000123 GHz: 3.9999998 ns, rounded down */
	ASSERT_EQ(rlog_reader_next(r, &ev), 0);
	rlog_reader_close(r);
	free(p);
	rlog__logfile_close(&lf);
	close(fd);
}

/* Marker block + one thread block, with a 1.1 header whose copy says
 * freq/name. */
static void build(struct fg_file *f, uint64_t copy_freq, const char *copy_name)
{
	struct fg_block b;
	fg_file_init_marker(f, copy_freq, 1000, 0, RLOG_TICK_MONOTONIC, 16384, 4, copy_name);
	fg_marker_block(f, 1, 1, 1000000000u, 1000, 0, RLOG_TICK_MONOTONIC, 16384, 4, "block0");
	fg_block_begin(&b, 10, 11, 1000, 0);
	fg_event(&b, 2000, -1, true, 1500, NULL, 0);
	fg_block_end(f, &b);
}

static void test_rules(void)
{
	struct fg_file f;
	struct rlog_reader *r;
	struct rlog_damage d;

	/* Block 0 and the copy disagree: block 0 wins. */
	build(&f, 2000000000u, "copy");
	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_STREQ(rlog_reader_info(r)->session_name, "block0");
	ASSERT_EQ_U64(rlog_reader_info(r)->tick_freq_hz, 1000000000u);
	ASSERT_EQ(rlog_reader_damage_count(r), 0);
	rlog_reader_close(r);

	/* A copy whose checksum fails: damage, though block 0 times the file. */
	f.b.p[64 + 50] ^= 1;
	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_STREQ(rlog_reader_info(r)->session_name, "block0");
	ASSERT_EQ(rlog_reader_damage_count(r), 1);
	ASSERT_EQ(rlog_reader_damage(r, 0, &d), 0);
	ASSERT_STREQ(d.message, "damaged file header at offset 64: the copy of the LOG_MARKER "
		     "fails its checksum");
	ASSERT_EQ_U64(d.offset, 64);
	ASSERT_EQ_U64(d.length, 112);
	rlog_reader_close(r);
	/* Damage, but no loss: the totals count it as a report, not under the
	 * cause "damaged". */
	struct rlog_count c;
	ASSERT_EQ(rlog_reader_open_mem_count(f.b.p, f.b.len, &r), 0);
	ASSERT_EQ(rlog_reader_count(r, &c), 0);
	ASSERT_EQ_U64(c.damage, 1);
	ASSERT_EQ_U64(c.damaged, 0);
	ASSERT_EQ_U64(c.events, 1);
	rlog_reader_close(r);

	/* ... and block 0 damaged too: nothing to time the file by. */
	f.b.p[176 + 48 + 10] ^= 1;
	ASSERT_EQ(fg_open(&f, &r), -ENODATA);
	f.b.p[64 + 50] ^= 1;
	ASSERT_EQ(fg_open(&f, &r), 0);
	ok(rlog_reader_info(r)->marker_copy, "the copy, when block 0 is damaged");
	ASSERT_STREQ(rlog_reader_info(r)->session_name, "copy");
	ASSERT_EQ_U64(rlog_reader_info(r)->tick_freq_hz, 2000000000u);
	rlog_reader_close(r);

	/* The flag in a 1.0 file means nothing (bytes past 64 are not read). */
	f.b.p[10] = 0;
	ASSERT_EQ(fg_open(&f, &r), -ENODATA);
	f.b.p[10] = 1;

	/* A copy of tick_freq_hz 0 is no use. */
	fg_file_free(&f);
	build(&f, 0, "zero");
	f.b.p[176 + 48 + 10] ^= 1;
	ASSERT_EQ(fg_open(&f, &r), -ENODATA);

	/* The flag with a header too small for the copy; a header_size not a
	 * multiple of 4. */
	f.b.p[12] = 172;
	ASSERT_EQ(fg_open(&f, &r), -EBADMSG);
	f.b.p[12] = 178;
	ASSERT_EQ(fg_open(&f, &r), -EBADMSG);
	fg_file_free(&f);

	/* FORMAT.md's example: the crc of that marker. */
	struct fg_buf m = { 0 };
	fg_marker_payload(&m, 3000000000u, 0x1000000000ull, 1700000000123456789ull, RLOG_TICK_TSC,
			  16384, 1024, "demo");
	ASSERT_EQ_U64(crc32(0L, m.p, (uInt)m.len), 0x51ee738du);
	free(m.p);
}

/* A 1.1 file continued by the daemon's writer, as `ringlog stop --force`
 * continues a file written before 2.0: its new blocks and its rewritten
 * LOG_MARKER keep zlib's crc32, and a reader reads it whole. */
static void test_resume_1x(void)
{
	struct fg_file f;
	build(&f, 1000000000u, "old");
	char path[64];
	fg_tmpname(path, "r1");
	ASSERT_EQ(fg_write(&f, path), 0);
	int fd = open(path, O_RDWR);
	BAIL_IF(fd < 0, "cannot open %s", path);
	unlink(path);
	BAIL_IF(lseek(fd, (off_t)f.b.len, SEEK_SET) < 0, "lseek");
	struct rlog__logfile lf;
	ASSERT_EQ(rlog__logfile_resume(&lf, fd, 16384, 1, f.b.len, 2, 176, 1, 1), 0);
	uint8_t rec[8];
	fg_put32(rec, 0x84000000u); /* Length 0, ID 1024, fTimeStamp */
	fg_put32(rec + 4, 1600);
	ASSERT_EQ(rlog__logfile_block(&lf, 0, 10, 11, 1500, rec, 8, 1, 1, 8), 0);
	ASSERT_EQ(rlog__logfile_flush(&lf), 0);
	struct rlog_log_marker m;
	memset(&m, 0, sizeof m);
	m.tick_freq_hz = 1000000007u;
	m.sync_ticks = 1000;
	m.tick_source = RLOG_TICK_MONOTONIC;
	ASSERT_EQ(rlog__logfile_rewrite_marker(&lf, &m), 0);
	rlog__logfile_close(&lf);

	size_t len;
	uint8_t *p = slurp_fd(fd, &len);
	close(fd);
	ASSERT_EQ(get32(p + 8), 1 | 1 << 16); /* still version 1.1 */
	ASSERT_EQ(get32(p + 28), (uint32_t)crc32(0L, p + 64, 112));
	ASSERT_EQ(get32(p + f.b.len + 40), (uint32_t)crc32(crc32(0L, p + f.b.len, 40),
							    p + f.b.len + 48, 8));
	struct rlog_reader *r;
	struct rlog_event ev;
	ASSERT_EQ(rlog_reader_open_mem(p, len, &r), 0);
	ASSERT_EQ(rlog_reader_info(r)->version_major, 1);
	ASSERT_EQ_U64(rlog_reader_info(r)->tick_freq_hz, 1000000007u);
	ASSERT_EQ(rlog_reader_damage_count(r), 0);
	unsigned n = 0;
	uint64_t last = 0;
	while (rlog_reader_next(r, &ev) == 1)
		if (!ev.from_daemon) {
			n++;
			last = ev.ticks;
		}
	ASSERT_EQ(n, 2);
	ASSERT_EQ_U64(last, 1600);
	rlog_reader_close(r);
	free(p);
	fg_file_free(&f);
}

int main(void)
{
	test_logfile();
	test_rules();
	test_resume_1x();
	return done_testing();
}
