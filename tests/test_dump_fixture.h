/*
 * test_dump_fixture.h - the trace that test_dump_fields and test_dump_json
 * read: schema'd events of every field type, a span, a counter, a payload
 * that does not match its schema, a schema without fields, doubles that
 * are not finite, raw events, a second thread of the same process, a
 * process without schemas, names and a DATA_LOSS record.  1 tick = 1 ns,
 * so an event at START + t has time_ns t.
 *
 *   time_ns  pid/tid    record
 *         0  1/1        LOG_MARKER (session "fields")
 *         1  4242/4243  PROCESS_NAME "server"
 *         2             THREAD_NAME "worker-1"
 *        10             EVENT_SCHEMA 1025 http.request (status u16, bytes u32, path string), category 1
 *       100             1025 200 5120 "/index"
 *       200             EVENT_SCHEMA 1026 all.types (every type)
 *       300             1026 maximum values, x 1.5, s ""
 *       400             1026 minimum values, x -0.0, s "q\"n\n✓\xff\x01"
 *       500             EVENT_SCHEMA 1027 db.query, a span (rows u32)
 *       600             1027 flag 1, rows 5
 *       700             1027 flag 2
 *       800             EVENT_SCHEMA 1028 queue.depth, a counter (depth i64)
 *       900             1028 -3
 *      1000             1025 "abc" (does not match)
 *      1100             EVENT_SCHEMA 1029 tick (no fields)
 *      1150             1029
 *      1200             1025 flag 9: 404 0 ""
 *      1300             EVENT_SCHEMA 1030 doubles (x y z w f64)
 *      1400             1030 0.1 1e300 NaN -inf
 *      1500             1031 01 02 03 04 05 (no schema)
 *      1250  4242/4244  1025 500 1 "/x"
 *      1600  5000/5001  1025 1 2 3 4 (u32; process 5000 has no schema)
 *      1700  4242/4243  DATA_LOSS 5 events, 80 bytes, no_buffer (daemon block)
 */
#ifndef RLOG_TESTS_DUMP_FIXTURE_H
#define RLOG_TESTS_DUMP_FIXTURE_H

#include <math.h>

#include "filegen.h"

#define FX_START 1000000ull
#define FX_REALTIME 1795341600123456789ull /* 2026-11-22T10:00:00.123456789Z */

/* Where things are in the fixture file. */
struct fx {
	size_t block_a;         /* file offset of thread 4243's block */
	uint32_t block_a_count; /* its records */
	size_t block_loss;      /* file offset of the daemon block */
};

static inline void fx_1025(struct fg_block *b, uint64_t t, int flag, uint16_t status,
			   uint32_t bytes, const char *path)
{
	struct fg_buf p = { 0 };
	fg_u16(&p, status);
	fg_u32(&p, bytes);
	fg_str(&p, path, strlen(path));
	fg_event(b, 1025, flag, true, (uint32_t)(FX_START + t), p.p, (unsigned)p.len);
	free(p.p);
}

static inline void fx_all_types(struct fg_block *b, uint64_t t, bool max)
{
	struct fg_buf p = { 0 };
	fg_u8(&p, max ? 255 : 0);
	fg_u16(&p, max ? 65535 : 0);
	fg_u32(&p, max ? 4294967295u : 0);
	fg_u64(&p, max ? UINT64_MAX : 0);
	fg_u8(&p, max ? 127 : 0x80);
	fg_u16(&p, max ? 32767 : 0x8000);
	fg_u32(&p, max ? 2147483647u : 0x80000000u);
	fg_u64(&p, max ? UINT64_C(0x7fffffffffffffff) : UINT64_C(0x8000000000000000));
	fg_f64(&p, max ? 1.5 : -0.0);
	fg_bytes(&p, "\x01\xfe\x00", 3);
	if (max)
		fg_str(&p, "", 0);
	else
		fg_str(&p, "q\"n\n\xe2\x9c\x93\xff\x01", 9);
	fg_event(b, 1026, -1, true, (uint32_t)(FX_START + t), p.p, (unsigned)p.len);
	free(p.p);
}

static inline void fx_build(struct fg_file *f, struct fx *x)
{
	static const struct fg_field http[] = {
		{ RLOG_FIELD_U16, 0, "status" }, { RLOG_FIELD_U32, 0, "bytes" },
		{ RLOG_FIELD_STRING, 0, "path" },
	};
	static const struct fg_field all[] = {
		{ RLOG_FIELD_U8, 0, "a" },   { RLOG_FIELD_U16, 0, "b" }, { RLOG_FIELD_U32, 0, "c" },
		{ RLOG_FIELD_U64, 0, "d" },  { RLOG_FIELD_I8, 0, "e" },  { RLOG_FIELD_I16, 0, "f" },
		{ RLOG_FIELD_I32, 0, "g" },  { RLOG_FIELD_I64, 0, "h" }, { RLOG_FIELD_F64, 0, "x" },
		{ RLOG_FIELD_BYTES, 3, "y" }, { RLOG_FIELD_STRING, 0, "s" },
	};
	static const struct fg_field rows[] = { { RLOG_FIELD_U32, 0, "rows" } };
	static const struct fg_field depth[] = { { RLOG_FIELD_I64, 0, "depth" } };
	static const struct fg_field dbl[] = {
		{ RLOG_FIELD_F64, 0, "x" }, { RLOG_FIELD_F64, 0, "y" }, { RLOG_FIELD_F64, 0, "z" },
		{ RLOG_FIELD_F64, 0, "w" },
	};
	struct fg_block b;
	struct fg_buf p = { 0 };
	const uint64_t S = FX_START;

	fg_file_init(f);
	fg_marker_block(f, 1, 1, 1000000000u, S, FX_REALTIME, RLOG_TICK_TSC, 16384, 8, "fields");

	fg_block_begin(&b, 4242, 4243, S, 0);
	fg_process_name(&b, S + 1, "server");
	fg_thread_name(&b, S + 2, "worker-1");
	fg_schema(&b, S + 10, 1025, RLOG_KIND_EVENT, 1, "http.request", http, 3);
	fx_1025(&b, 100, -1, 200, 5120, "/index");
	fg_schema(&b, S + 200, 1026, RLOG_KIND_EVENT, 0, "all.types", all, 11);
	fx_all_types(&b, 300, true);
	fx_all_types(&b, 400, false);
	fg_schema(&b, S + 500, 1027, RLOG_KIND_SPAN, 0, "db.query", rows, 1);
	uint32_t five = 5;
	fg_event(&b, 1027, RLOG_SPAN_BEGIN, true, S + 600, &five, 4);
	fg_event(&b, 1027, RLOG_SPAN_END, true, S + 700, NULL, 0);
	fg_schema(&b, S + 800, 1028, RLOG_KIND_COUNTER, 0, "queue.depth", depth, 1);
	int64_t m3 = -3;
	fg_event(&b, 1028, -1, true, S + 900, &m3, 8);
	fg_event(&b, 1025, -1, true, S + 1000, "abc", 3);
	fg_schema(&b, S + 1100, 1029, RLOG_KIND_EVENT, 0, "tick", NULL, 0);
	fg_event(&b, 1029, -1, true, S + 1150, NULL, 0);
	fx_1025(&b, 1200, 9, 404, 0, "");
	fg_schema(&b, S + 1300, 1030, RLOG_KIND_EVENT, 0, "doubles", dbl, 4);
	fg_f64(&p, 0.1);
	fg_f64(&p, 1e300);
	fg_f64(&p, NAN);
	fg_f64(&p, -INFINITY);
	fg_event(&b, 1030, -1, true, S + 1400, p.p, (unsigned)p.len);
	fg_event(&b, 1031, -1, true, S + 1500, "\x01\x02\x03\x04\x05", 5);
	x->block_a_count = b.count;
	x->block_a = fg_block_end(f, &b);
	free(p.p);

	fg_block_begin(&b, 4242, 4244, S, 0);
	fx_1025(&b, 1250, -1, 500, 1, "/x");
	fg_block_end(f, &b);

	fg_block_begin(&b, 5000, 5001, S, 0);
	uint32_t four[4] = { 1, 2, 3, 4 };
	fg_event(&b, 1025, -1, true, S + 1600, four, 16);
	fg_block_end(f, &b);

	fg_block_begin(&b, 4242, 4243, S + 1500, 0x0001);
	fg_data_loss(&b, (uint32_t)(S + 1700), 5, 80, RLOG_LOSS_NO_BUFFER);
	x->block_loss = fg_block_end(f, &b);
}

#endif
