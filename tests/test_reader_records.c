/*
 * test_reader_records - every record header variant (timestamp or not,
 * flagged or not) with every payload length 0..64 goes through a generated
 * file and comes back out of the reader exactly: IDs, flags, lengths,
 * payload bytes, times, file offsets and sizes (fill included).
 */
#include <errno.h>
#include <stdbool.h>

#include "ringlog/reader.h"
#include "filegen.h"
#include "tap.h"

#define START 1000000ull
#define PID 4242u
#define TID 4243u
#define MAXLEN 64

struct expect {
	unsigned id;
	int flag;
	bool ts;
	unsigned len;
	uint64_t ticks;
	size_t offset; /* file offset of the record */
	uint32_t size;
};

static uint8_t pattern(unsigned len, unsigned i)
{
	return (uint8_t)(len * 31u + i * 7u + 1u);
}

int main(void)
{
	static struct expect exp[4 * (MAXLEN + 1)];
	struct fg_file f;
	struct rlog_reader *r;
	struct rlog_event ev;
	size_t n = 0;
	uint64_t t = START;

	fg_file_init(&f);
	size_t marker_at = fg_marker_block(&f, 7, 8, 2000000000u, START, 1790000000123456789ull,
					   RLOG_TICK_TSC, 16384, 8, "records");

	/* One block per variant, so every block boundary is crossed too. */
	for (int variant = 0; variant < 4; variant++) {
		bool ts = variant & 1, flagged = variant & 2;
		struct fg_block b;
		size_t recs[MAXLEN + 1];
		fg_block_begin(&b, PID, TID, t, 0);
		for (unsigned len = 0; len <= MAXLEN; len++) {
			uint8_t payload[MAXLEN];
			for (unsigned i = 0; i < len; i++)
				payload[i] = pattern(len, i);
			unsigned id = 1024 + len * 100 + (unsigned)variant;
			int flag = flagged ? (int)(len * 1000 + 7) : -1;
			if (ts)
				t += 3;
			recs[len] = fg_event(&b, id, flag, ts, (uint32_t)t, payload, len);
			exp[n + len] = (struct expect){ id, flag, ts, len, t, 0,
							fg_record_size(flagged, ts, len) };
		}
		size_t at = fg_block_end(&f, &b);
		for (unsigned len = 0; len <= MAXLEN; len++)
			exp[n + len].offset = at + FG_BLOCK_HDR + recs[len];
		n += MAXLEN + 1;
	}

	int rc = fg_open(&f, &r);
	BAIL_IF(rc != 0, "open: %d", rc);

	const struct rlog_reader_info *info = rlog_reader_info(r);
	ASSERT_EQ(info->version_major, 2);
	ASSERT_EQ(info->version_minor, 0);
	ASSERT_EQ_U64(info->tick_freq_hz, 2000000000u);
	ASSERT_EQ_U64(info->start_ticks, START);
	ASSERT_EQ_U64(info->sync_realtime_ns, 1790000000123456789ull);
	ASSERT_EQ_U64(info->sync_monotonic_ns, 5000000000ull);
	ASSERT_EQ_U64(info->created_realtime_ns, 1700000000000000000ull);
	ASSERT_EQ(info->tick_source, RLOG_TICK_TSC);
	ASSERT_EQ(info->buffer_size, 16384);
	ASSERT_EQ(info->buffer_count, 8);
	ASSERT_STREQ(info->session_name, "records");
	ASSERT_EQ_U64(info->file_size, f.b.len);
	ASSERT_EQ_U64(info->block_count, 5);
	ASSERT_EQ_U64(info->thread_count, 2);

	/* The LOG_MARKER comes first: it is the start of the trace. */
	ASSERT_EQ(rlog_reader_next(r, &ev), 1);
	ASSERT_EQ(ev.id, RLOG_ID_LOG_MARKER);
	ASSERT_EQ(ev.time_ns, 0);
	ASSERT_EQ_U64(ev.ticks, START);
	ASSERT_EQ(ev.from_daemon, true);
	ASSERT_EQ(ev.length, 112);
	ASSERT_EQ(ev.pid, 7);
	ASSERT_EQ(ev.tid, 8);
	ASSERT_EQ_U64(ev.offset, marker_at + FG_BLOCK_HDR);
	ASSERT_EQ_U64(ev.block_offset, marker_at);
	ASSERT_EQ(ev.size, 4 + 4 + 112);

	size_t got = 0, bad = 0;
	while ((rc = rlog_reader_next(r, &ev)) == 1 && got < n) {
		const struct expect *e = &exp[got++];
		bool same = ev.id == e->id && ev.flagged == (e->flag >= 0) &&
			    ev.flag == (e->flag >= 0 ? e->flag : 0) && ev.has_time == e->ts &&
			    ev.length == e->len && ev.ticks == e->ticks &&
			    ev.time_ns == (int64_t)(e->ticks - START) / 2 && ev.pid == PID &&
			    ev.tid == TID && !ev.from_daemon && ev.offset == e->offset &&
			    ev.size == e->size;
		for (unsigned i = 0; same && i < e->len; i++)
			same = ((const uint8_t *)ev.payload)[i] == pattern(e->len, i);
		/* The fill after the payload is in the file, zeroed. */
		size_t fill = e->offset + 4 + (e->ts ? 4 : 0) + (e->flag >= 0 ? 4 : 0) + e->len;
		same = same && e->offset + e->size - fill < 4;
		for (size_t i = fill; same && i < e->offset + e->size; i++)
			same = f.b.p[i] == 0;
		if (!same) {
			bad++;
			diag("event %zu: id %u/%u flagged %d ts %d len %u ticks %llu off %llu size %u",
			     got - 1, ev.id, ev.flag, ev.flagged, ev.has_time, ev.length,
			     (unsigned long long)ev.ticks, (unsigned long long)ev.offset, ev.size);
		}
	}
	ASSERT_EQ(rc, 0);
	ASSERT_EQ(got, n);
	ASSERT_EQ(bad, 0);
	ASSERT_EQ(rlog_reader_next(r, &ev), 0);
	ASSERT_EQ(rlog_reader_damage_count(r), 0);

	/* Sizes: 4 header + 4 timestamp + 4 flag word + payload, to 4 bytes. */
	ASSERT_EQ(exp[0].size, 4);                       /* no ts, unflagged, len 0 */
	ASSERT_EQ(exp[1].size, 8);                       /* len 1: 3 fill bytes */
	ASSERT_EQ(exp[(MAXLEN + 1) + 8].size, 16);       /* ts, len 8: the common 16-byte event */
	ASSERT_EQ(exp[3 * (MAXLEN + 1) + 64].size, 76);  /* ts, flagged, len 64 */
	ASSERT_EQ(exp[3 * (MAXLEN + 1) + 61].size, 76);  /* ts, flagged, len 61: 3 fill */
	rlog_reader_close(r);
	fg_file_free(&f);
	return done_testing();
}
