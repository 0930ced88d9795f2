/*
 * test_roundtrip - every payload length 0..64, plain and flagged, through
 * the real path: rlog_write in this process, the daemon, the log file, the
 * reader.  Exact IDs, flags, lengths, payload bytes, record sizes (header,
 * timestamp, flag word, payload, fill to 4 bytes) and alignment.
 */
#include "harness.h"
#include "tap.h"

static void fill(uint8_t *p, unsigned len, unsigned salt)
{
	for (unsigned i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + salt);
}

int main(void)
{
	const char *name = h_session("rt");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("rt"));
	h_start(name, path, NULL, NULL);
	ASSERT_EQ(rlog_attach(name), 0);

	uint8_t p[64];
	for (unsigned len = 0; len <= 64; len++) {
		fill(p, len, len);
		ASSERT_EQ(rlog_write(1024 + len, p, len), 1);
		fill(p, len, len + 100);
		ASSERT_EQ(rlog_write_flagged(2048 + len, (uint16_t)(len * 3 + 1), p, len), 1);
	}
	/* Caller errors are refused and not counted. */
	ASSERT_EQ(rlog_write(3, p, 4), -EINVAL);
	ASSERT_EQ(rlog_write(16384, p, 4), -EINVAL);
	ASSERT_EQ(rlog_write(1024, NULL, 70000), -EMSGSIZE);
	rlog_detach();

	struct h_run r;
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 130);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), 0);

	struct rlog_reader *rd;
	ASSERT_EQ(rlog_reader_open(path, &rd), 0);
	struct rlog_event ev;
	unsigned n = 0, bad = 0;
	uint64_t last_ticks = 0;
	while (rlog_reader_next(rd, &ev) == 1) {
		if (ev.from_daemon || h_is_metadata(&ev))
			continue;
		unsigned len = n / 2;
		bool flagged = n % 2;
		uint8_t want[64];
		fill(want, len, flagged ? len + 100 : len);
		uint32_t size = (4 + 4 + (flagged ? 4 : 0) + len + 3) & ~3u;
		if (ev.id != (flagged ? 2048 : 1024) + len || ev.flagged != flagged ||
		    ev.flag != (flagged ? len * 3 + 1 : 0) || ev.length != len || !ev.has_time ||
		    ev.size != size || ev.offset % 4 != 0 || memcmp(ev.payload, want, len) != 0 ||
		    ev.ticks < last_ticks) {
			bad++;
			diag("event %u: id %u flag %u length %u size %u (want %u) offset %llu", n, ev.id,
			     ev.flag, ev.length, ev.size, size, (unsigned long long)ev.offset);
		}
		last_ticks = ev.ticks;
		n++;
	}
	ASSERT_EQ(n, 130);
	ASSERT_EQ(bad, 0);
	ASSERT_EQ_U64(rlog_reader_damage_count(rd), 0);
	rlog_reader_close(rd);

	/* The fill bytes are zero in the file (never stale buffer bytes). */
	FILE *f = fopen(path, "rb");
	static uint8_t file[1 << 20];
	size_t fsz = f ? fread(file, 1, sizeof file, f) : 0;
	if (f)
		fclose(f);
	ASSERT_EQ(rlog_reader_open(path, &rd), 0);
	unsigned fill_bad = 0;
	while (rlog_reader_next(rd, &ev) == 1) {
		uint32_t used = 4 + 4 + (ev.flagged ? 4 : 0) + ev.length;
		for (uint32_t k = used; k < ev.size; k++)
			if (ev.offset + k < fsz && file[ev.offset + k] != 0)
				fill_bad++;
	}
	rlog_reader_close(rd);
	ASSERT_EQ(fill_bad, 0);
	unlink(path);
	return done_testing();
}
