/*
 * test_reader_decode - the reader's one decoder per ringlog record and its
 * one predicate: rlog_record_kind() for every ID, flagged or not (the
 * definition behind the accounting identity); rlog_event_marker(),
 * rlog_event_loss(), rlog_event_time_sync(), rlog_raw_field(),
 * rlog_event_raw_count() and rlog_event_raw_value() on the events of a
 * crafted file, exact values and every -errno; every field of the
 * DATA_LOSS payloads of 24, 32 and 48 bytes (struct rlog_loss); then the
 * totals of rlog_reader_open_count() on the same file, exact numbers.
 */
#include <errno.h>

#include "ringlog/reader.h"
#include "filegen.h"
#include "tap.h"

#define S 5000u

static void test_kinds(void)
{
	int bad = 0;
	for (unsigned id = 0; id <= RLOG_ID_MAX; id++) {
		int want = RLOG_RECORD_EVENT;
		switch (id) {
		case RLOG_ID_LOG_MARKER: want = RLOG_RECORD_MARKER; break;
		case RLOG_ID_DATA_LOSS: want = RLOG_RECORD_LOSS; break;
		case RLOG_ID_TIME_SYNC: want = RLOG_RECORD_TIME_SYNC; break;
		case RLOG_ID_EVENT_SCHEMA: case RLOG_ID_THREAD_NAME: case RLOG_ID_PROCESS_NAME:
		case RLOG_ID_COUNTER_NAME:
			want = RLOG_RECORD_METADATA;
			break;
		case RLOG_ID_COUNTER: want = RLOG_RECORD_COUNTER; break;
		default: break;
		}
		bad += rlog_record_kind((uint16_t)id, false) != want;
		bad += rlog_record_kind((uint16_t)id, true) != RLOG_RECORD_EVENT;
	}
	ASSERT_EQ(bad, 0);
	ASSERT_EQ(rlog_record_kind(RLOG_ID_THREAD_NAME, true), RLOG_RECORD_EVENT);
	ASSERT_EQ(rlog_record_kind(RLOG_ID_THREAD_NAME, false), RLOG_RECORD_METADATA);
	ASSERT_EQ(rlog_record_kind(1024, false), RLOG_RECORD_EVENT);
}

static void build(struct fg_file *f)
{
	struct fg_block b;
	fg_file_init(f);
	fg_marker_block(f, 7, 8, 2000000000u, S, 1790000000123456789ull, RLOG_TICK_TSC, 16384, 32,
			"decode-session");
	fg_block_begin(&b, 100, 101, S, 0);
	fg_process_name(&b, S + 1, "proc");
	fg_thread_name(&b, S + 1, "thr");
	int32_t i32[3] = { -1, 2, -2147483647 - 1 };
	fg_event(&b, RLOG_ID_RAW_I32, -1, true, S + 2, i32, sizeof(i32));
	double d[2] = { 0.5, -1e300 };
	fg_event(&b, RLOG_ID_RAW_DOUBLE, 9, true, S + 3, d, sizeof(d)); /* flagged */
	fg_event(&b, RLOG_ID_RAW_U16, -1, true, S + 4, "\x01\x02\x03", 3); /* not whole */
	uint8_t u8[2] = { 255, 7 };
	fg_event(&b, RLOG_ID_RAW_U8, -1, true, S + 5, u8, 2);
	fg_event(&b, RLOG_ID_RAW_STRING, -1, true, S + 6, "hi", 2);
	fg_time_sync(&b, S + 0x123456789ull);
	fg_event(&b, 1024, -1, true, (uint32_t)(S + 0x123456789ull + 1), "abcd", 4);
	fg_event(&b, RLOG_ID_THREAD_NAME, 3, true, (uint32_t)(S + 0x123456789ull + 2), "x", 1);
	fg_block_end(f, &b);
	fg_block_begin(&b, 100, 101, S + 0x123456789ull + 2, RLOG_BLOCK_FLAG_DAEMON);
	fg_data_loss(&b, (uint32_t)(S + 0x123456789ull + 3), 12, 192, RLOG_LOSS_NO_BUFFER);
	fg_data_loss(&b, (uint32_t)(S + 0x123456789ull + 3), 1, 16, 77);
	fg_block_end(f, &b);
	fg_block_begin(&b, 200, 201, S, 0);
	fg_event(&b, 1024, -1, true, S + 9, NULL, 0);
	fg_block_end(f, &b);
}

static void test_decoders(void)
{
	struct fg_file f;
	struct rlog_reader *r;
	struct rlog_event ev;
	struct rlog_marker m;
	struct rlog_loss l;
	struct rlog_value v;
	uint64_t ticks;
	int losses = 0;

	build(&f);
	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_EQ(rlog_reader_set_flags(r, RLOG_READER_TIME_SYNC), 0);
	while (rlog_reader_next(r, &ev) == 1) {
		int kind = rlog_record_kind(ev.id, ev.flagged);
		if (kind == RLOG_RECORD_MARKER) {
			ASSERT_EQ(rlog_event_marker(&ev, &m), 0);
			ASSERT_EQ_U64(m.tick_freq_hz, 2000000000u);
			ASSERT_EQ_U64(m.sync_ticks, S);
			ASSERT_EQ_U64(m.sync_realtime_ns, 1790000000123456789ull);
			ASSERT_EQ_U64(m.sync_monotonic_ns, 5000000000ull);
			ASSERT_EQ(m.tick_source, RLOG_TICK_TSC);
			ASSERT_EQ(m.buffer_size, 16384);
			ASSERT_EQ(m.buffer_count, 32);
			ASSERT_STREQ(m.session_name, "decode-session");
			ASSERT_EQ(rlog_event_loss(&ev, &l), -EINVAL);
			/* Too short (a caller's event, not the reader's). */
			struct rlog_event shortm = ev;
			shortm.length = 111;
			ASSERT_EQ(rlog_event_marker(&shortm, &m), -EBADMSG);
		} else if (kind == RLOG_RECORD_LOSS) {
			ASSERT_EQ(rlog_event_loss(&ev, &l), 0);
			if (losses++ == 0) {
				ASSERT_EQ_U64(l.events, 12);
				ASSERT_EQ_U64(l.bytes, 192);
				ASSERT_EQ(l.cause, RLOG_LOSS_NO_BUFFER);
			} else {
				ASSERT_EQ(l.cause, 77);
			}
			struct rlog_event shortl = ev;
			shortl.length = 23;
			ASSERT_EQ(rlog_event_loss(&shortl, &l), -EBADMSG);
			ASSERT_EQ(rlog_event_marker(&ev, &m), -EINVAL);
		} else if (kind == RLOG_RECORD_TIME_SYNC) {
			ASSERT_EQ(rlog_event_time_sync(&ev, &ticks), 0);
			ASSERT_EQ_U64(ticks, S + 0x123456789ull);
			ASSERT_EQ_U64(ticks, ev.ticks);
		} else if (ev.id == RLOG_ID_RAW_I32) {
			ASSERT_EQ(rlog_event_raw_count(&ev), 3);
			ASSERT_EQ(rlog_event_raw_value(&ev, 0, &v), 1);
			ASSERT_EQ(v.field->type, RLOG_FIELD_I32);
			ASSERT_EQ(v.v.i, -1);
			ASSERT_EQ(rlog_event_raw_value(&ev, 2, &v), 1);
			ASSERT_EQ(v.v.i, -2147483647LL - 1);
			ASSERT_EQ(rlog_event_raw_value(&ev, 3, &v), -EINVAL);
			ASSERT_EQ(rlog_event_time_sync(&ev, &ticks), -EINVAL);
		} else if (ev.id == RLOG_ID_RAW_DOUBLE) {
			ok(ev.flagged && ev.flag == 9, "a flagged RAW_DOUBLE");
			ASSERT_EQ(rlog_event_raw_count(&ev), 2);
			ASSERT_EQ(rlog_event_raw_value(&ev, 1, &v), 1);
			ok(v.field->type == RLOG_FIELD_F64 && v.v.f == -1e300, "-1e300");
		} else if (ev.id == RLOG_ID_RAW_U16) {
			ASSERT_EQ(rlog_event_raw_count(&ev), -EBADMSG);
			ASSERT_EQ(rlog_event_raw_value(&ev, 0, &v), -EINVAL);
		} else if (ev.id == RLOG_ID_RAW_U8) {
			ASSERT_EQ(rlog_event_raw_count(&ev), 2);
			ASSERT_EQ(rlog_event_raw_value(&ev, 0, &v), 1);
			ASSERT_EQ_U64(v.v.u, 255);
		} else if (ev.id == RLOG_ID_RAW_STRING || ev.id == 1024) {
			ASSERT_EQ(rlog_event_raw_count(&ev), -EINVAL);
		} else if (ev.id == RLOG_ID_THREAD_NAME && ev.flagged) {
			ASSERT_EQ(kind, RLOG_RECORD_EVENT);
		}
	}
	ASSERT_EQ(losses, 2);
	rlog_reader_close(r);

	ok(rlog_raw_field(RLOG_ID_RAW_STRING) == NULL && rlog_raw_field(1024) == NULL &&
	   rlog_raw_field(RLOG_ID_LOG_MARKER) == NULL, "no element type but for RAW_U8..RAW_DOUBLE");
	static const uint8_t types[] = { RLOG_FIELD_U8, RLOG_FIELD_I8, RLOG_FIELD_U16, RLOG_FIELD_I16,
					 RLOG_FIELD_U32, RLOG_FIELD_I32, RLOG_FIELD_U64, RLOG_FIELD_I64,
					 RLOG_FIELD_F64 };
	for (unsigned i = 0; i < 9; i++) {
		const struct rlog_field *fl = rlog_raw_field((uint16_t)(RLOG_ID_RAW_U8 + i));
		ok(fl && fl->type == types[i] && strcmp(fl->name, "value") == 0, "RAW %u's type", i);
	}
	ASSERT_EQ(rlog_event_marker(NULL, &m), -EINVAL);
	ASSERT_EQ(rlog_event_loss(NULL, &l), -EINVAL);
	ASSERT_EQ(rlog_event_time_sync(NULL, &ticks), -EINVAL);
	ASSERT_EQ(rlog_event_raw_count(NULL), -EINVAL);
	fg_file_free(&f);
}

/* A DATA_LOSS of len bytes (24, 32, 48 or more): events, bytes, cause,
 * reserved, then blocks, first_time, last_time, then 0xee bytes. */
static void loss_n(struct fg_block *b, uint32_t time_low, unsigned len, uint32_t cause,
		   uint64_t blocks, uint64_t first, uint64_t last)
{
	struct fg_buf p = { 0 };
	fg_u64(&p, 7000 + len);
	fg_u64(&p, 16 * (7000 + len));
	fg_u32(&p, cause);
	fg_u32(&p, 0);
	if (len >= 32)
		fg_u64(&p, blocks);
	if (len >= 48) {
		fg_u64(&p, first);
		fg_u64(&p, last);
	}
	while (p.len < len)
		fg_u32(&p, 0xeeeeeeeeu);
	fg_event(b, RLOG_ID_DATA_LOSS, -1, true, time_low, p.p, (unsigned)p.len);
	free(p.p);
}

static void test_loss_fields(void)
{
	struct fg_file f;
	struct fg_block b;
	fg_file_init(&f);
	fg_marker_block(&f, 7, 8, 1000000000u, S, 1790000000000000000ull, RLOG_TICK_TSC, 16384, 32,
			"loss-fields");
	fg_block_begin(&b, 100, 101, S, RLOG_BLOCK_FLAG_DAEMON);
	loss_n(&b, S + 1, 24, RLOG_LOSS_NO_BUFFER, 0, 0, 0);
	loss_n(&b, S + 2, 32, RLOG_LOSS_REAL_TIME, 0x0102030405060708ull, 0, 0);
	loss_n(&b, S + 3, 48, RLOG_LOSS_OVERWRITTEN, 9, 0x1111222233334444ull,
	       0x5555666677778888ull);
	loss_n(&b, S + 4, 56, RLOG_LOSS_OVERWRITTEN, 10, S - 5, S + 3);
	fg_block_end(&f, &b);

	struct rlog_reader *r;
	struct rlog_event ev;
	struct rlog_loss l;
	int n = 0;
	ASSERT_EQ(fg_open(&f, &r), 0);
	while (rlog_reader_next(r, &ev) == 1) {
		if (rlog_record_kind(ev.id, ev.flagged) != RLOG_RECORD_LOSS)
			continue;
		memset(&l, 0x5a, sizeof l);
		ASSERT_EQ(rlog_event_loss(&ev, &l), 0);
		ASSERT_EQ_U64(l.events, 7000 + ev.length);
		ASSERT_EQ_U64(l.bytes, 16 * (7000 + ev.length));
		switch (n++) {
		case 0:
			ASSERT_EQ(ev.length, 24);
			ASSERT_EQ(l.cause, RLOG_LOSS_NO_BUFFER);
			ASSERT_EQ(l.fields, 0);
			ok(l.blocks == 0 && l.first_time == 0 && l.last_time == 0,
			   "24 bytes: blocks and times 0");
			break;
		case 1:
			ASSERT_EQ(ev.length, 32);
			ASSERT_EQ(l.cause, RLOG_LOSS_REAL_TIME);
			ASSERT_EQ(l.fields, RLOG_LOSS_HAS_BLOCKS);
			ASSERT_EQ_U64(l.blocks, 0x0102030405060708ull);
			ok(l.first_time == 0 && l.last_time == 0, "32 bytes: times 0");
			break;
		case 2:
			ASSERT_EQ(ev.length, 48);
			ASSERT_EQ(l.cause, RLOG_LOSS_OVERWRITTEN);
			ASSERT_EQ(l.fields, RLOG_LOSS_HAS_BLOCKS | RLOG_LOSS_HAS_RANGE);
			ASSERT_EQ_U64(l.blocks, 9);
			ASSERT_EQ_U64(l.first_time, 0x1111222233334444ull);
			ASSERT_EQ_U64(l.last_time, 0x5555666677778888ull);
			break;
		case 3: /* longer than any payload defined: what is known */
			ASSERT_EQ(ev.length, 56);
			ASSERT_EQ(l.fields, RLOG_LOSS_HAS_BLOCKS | RLOG_LOSS_HAS_RANGE);
			ASSERT_EQ_U64(l.blocks, 10);
			ASSERT_EQ_U64(l.first_time, S - 5);
			ASSERT_EQ_U64(l.last_time, S + 3);
			ASSERT_EQ(rlog_reader_time_ns(r, l.last_time), 3);
			break;
		}
	}
	ASSERT_EQ(n, 4);
	rlog_reader_close(r);
	fg_file_free(&f);
}

static void test_count(void)
{
	struct fg_file f;
	struct rlog_reader *r;
	struct rlog_count c;
	struct rlog_count_id ci;
	struct rlog_count_thread ct;
	struct rlog_count_loss cl;

	build(&f);
	ASSERT_EQ(rlog_reader_open_mem(f.b.p, f.b.len, &r), 0);
	ASSERT_EQ(rlog_reader_count(r, &c), -ENODATA);
	ASSERT_EQ(rlog_reader_count_id(r, 0, &ci), -ENODATA);
	rlog_reader_close(r);

	ASSERT_EQ(rlog_reader_open_mem_count(f.b.p, f.b.len, &r), 0);
	ASSERT_EQ(rlog_reader_count(r, &c), 0);
	/* Events: RAW_I32 (20 bytes), RAW_DOUBLE flagged (28), RAW_U16 (12),
	 * RAW_U8 (12), RAW_STRING (12), 1024 (12), flagged THREAD_NAME (16),
	 * 1024 of 200/201 (8). */
	ASSERT_EQ_U64(c.events, 8);
	ASSERT_EQ_U64(c.bytes, 20 + 28 + 12 + 12 + 12 + 12 + 16 + 8);
	ASSERT_EQ_U64(c.metadata, 2);
	ASSERT_EQ_U64(c.loss_records, 2);
	ASSERT_EQ_U64(c.lost_events, 13);
	ASSERT_EQ_U64(c.lost_bytes, 208);
	ok(c.timed && c.first_ticks == S + 1 && c.last_ticks == S + 0x123456789ull + 2,
	   "first and last record of the thread blocks");
	ASSERT_EQ_U64(c.damage, 0);
	ASSERT_EQ_U64(c.damaged, 0);
	ASSERT_EQ(c.ids, 8);   /* (pid, ID) rows: 100 x 7, 200 x 1 */
	ASSERT_EQ(c.threads, 3);
	ASSERT_EQ(c.causes, 2);
	ASSERT_EQ(rlog_reader_count_id(r, 0, &ci), 0);
	ok(ci.pid == 100 && ci.id == RLOG_ID_RAW_U8 && ci.events == 1 && ci.bytes == 12,
	   "row 0: 100/RAW_U8 1 event 12 bytes");
	ASSERT_EQ(rlog_reader_count_id(r, 7, &ci), 0);
	ok(ci.pid == 200 && ci.id == 1024 && ci.events == 1 && ci.bytes == 8, "row 7: 200/1024");
	ASSERT_EQ(rlog_reader_count_id(r, 8, &ci), -ERANGE);
	ASSERT_EQ(rlog_reader_count_thread(r, 0, &ct), 0);
	ok(ct.pid == 7 && ct.tid == 8 && ct.events == 0 && !ct.timed, "thread 7/8: block 0 only");
	ASSERT_EQ(rlog_reader_count_thread(r, 1, &ct), 0);
	ok(ct.pid == 100 && ct.tid == 101 && ct.events == 7 && ct.metadata == 2 &&
	   ct.lost_events == 13 && ct.lost_bytes == 208, "thread 100/101");
	ASSERT_EQ(rlog_reader_count_thread(r, 3, &ct), -ERANGE);
	ASSERT_EQ(rlog_reader_count_loss(r, 0, &cl), 0);
	ok(cl.cause == RLOG_LOSS_NO_BUFFER && cl.records == 1 && cl.events == 12 && cl.bytes == 192,
	   "no_buffer");
	ASSERT_EQ(rlog_reader_count_loss(r, 1, &cl), 0);
	ASSERT_EQ(cl.cause, 77);
	ASSERT_EQ(rlog_reader_count_loss(r, 2, &cl), -ERANGE);
	ASSERT_EQ(rlog_reader_count(NULL, &c), -EINVAL);
	rlog_reader_close(r);

	/* Damage: block 200/201 damaged (8 bytes of records, 1 record). */
	f.b.p[f.b.len - 2] ^= 1;
	ASSERT_EQ(rlog_reader_open_mem_count(f.b.p, f.b.len, &r), 0);
	ASSERT_EQ(rlog_reader_count(r, &c), 0);
	ASSERT_EQ_U64(c.events, 7);
	ASSERT_EQ_U64(c.damage, 1);
	ASSERT_EQ_U64(c.skipped_records, 1);
	ASSERT_EQ_U64(c.damaged, 1);
	ASSERT_EQ_U64(c.damaged_records, 1);
	ASSERT_EQ_U64(c.damaged_bytes, 48 + 8);
	rlog_reader_close(r);
	fg_file_free(&f);
}

int main(void)
{
	test_kinds();
	test_decoders();
	test_loss_fields();
	test_count();
	return done_testing();
}
