/*
 * test_convert_fixture.h - the log file the converter tests convert,
 * crafted byte by byte with tests/filegen.h: every field type, spans
 * nested on two threads (one begin never ended, one end with no begin), a
 * counter, thread and process names, losses, and events without a schema.
 *
 * Clock: 1 GHz ticks, the LOG_MARKER at FX_START ticks, so an event's
 * time_ns is its tick offset t below (all distinct, so that every viewer
 * orders them the same way).  Wall clock at time 0: FX_REALTIME.
 *
 *   pid 100 tid 101 "main" (process "server")
 *     t=100 THREAD_NAME main, 110 PROCESS_NAME server, 120..123 EVENT_SCHEMA x4
 *     t=500 all.types (maximum values), 1000 work.span begin depth=0,
 *     1100 queue counter, 1200 io.span begin, 1500 io.span end,
 *     1600 work.span begin depth=1, 1700 work.span end, 1800 queue counter,
 *     2000 work.span end, 2100 all.types (minimum values, empty string),
 *     2150 all.types (escapes, UTF-8), 2160 all.types (a NUL in the string,
 *     a NaN), 2170 all.types with a 2-byte payload (does not match),
 *     2180 queue flagged 9 (matches: the flag is extra), 2185 queue with an
 *     infinite load, 2190 io.span end
 *     with a payload (does not match), 2800 DATA_LOSS corrupt (0 events,
 *     daemon)
 *   pid 100 tid 102 "worker-1"
 *     t=150 THREAD_NAME worker-1, 1050 work.span begin depth=7, 1900 work.span end,
 *     2200 DATA_LOSS no_buffer 5 events (daemon), 2500 io.span begin (never
 *     ended), 2600 work.span end (no begin open)
 *   pid 200 tid 201 (process "client")
 *     t=300 PROCESS_NAME client, 400 raw 1025 "abc", 410 raw 1026 flag 7,
 *     420 RAW_U32 [1, 2, 4294967295], 430 RAW_STRING "hi", 440 RAW_I16 of 3
 *     bytes (not a whole element), 450 ID 1100 (no schema in this process)
 *   pid 0 tid 0: t=2700 DATA_LOSS log_write 3 events (daemon)
 */
#ifndef RLOG_TEST_CONVERT_FIXTURE_H
#define RLOG_TEST_CONVERT_FIXTURE_H

#include <math.h>

#include "filegen.h"

#define FX_START 1000000000ull               /* LOG_MARKER ticks */
#define FX_REALTIME 1700000000123456789ull   /* wall clock at the LOG_MARKER */
#define FX_LOST_EVENTS 8u                    /* 5 + 3 (+ 0) */

#define FX_ALL 1100
#define FX_WORK 1101
#define FX_IO 1102
#define FX_QUEUE 1103

struct fx_field {
	uint8_t type;
	uint16_t count;
	const char *name;
};

/* An EVENT_SCHEMA record at time t (layout: include/ringlog/format.h). */
static inline void fx_schema(struct fg_block *b, uint64_t t, uint16_t id, uint8_t kind,
			     uint8_t cat, const char *name, const struct fx_field *f, unsigned n)
{
	struct fg_buf p = { 0 };
	fg_u16(&p, id);
	fg_u8(&p, kind);
	fg_u8(&p, cat);
	fg_u8(&p, (uint8_t)strlen(name));
	fg_u8(&p, (uint8_t)n);
	fg_bytes(&p, name, strlen(name));
	for (unsigned i = 0; i < n; i++) {
		fg_u8(&p, f[i].type);
		fg_u8(&p, (uint8_t)strlen(f[i].name));
		fg_u16(&p, f[i].count);
		fg_bytes(&p, f[i].name, strlen(f[i].name));
	}
	fg_event(b, RLOG_ID_EVENT_SCHEMA, -1, true, (uint32_t)(FX_START + t), p.p, (unsigned)p.len);
	free(p.p);
}

static inline void fx_rec(struct fg_block *b, uint64_t t, unsigned id, int flag, const void *p,
			  size_t n)
{
	fg_event(b, id, flag, true, (uint32_t)(FX_START + t), p, (unsigned)n);
}

static inline void fx_str(struct fg_buf *p, const char *s, size_t n)
{
	fg_u16(p, (uint16_t)n);
	fg_bytes(p, s, n);
}

/* all.types: a u8, b u16, c u32, d u64, e i8, f i16, g i32, h i64, x f64,
 * blob bytes[4], s string. */
static inline void fx_all(struct fg_block *b, uint64_t t, uint8_t a, uint16_t bb, uint32_t c,
			  uint64_t d, int8_t e, int16_t f, int32_t g, int64_t h, double x,
			  const uint8_t blob[4], const char *s, size_t sn)
{
	struct fg_buf p = { 0 };
	uint64_t xb;
	memcpy(&xb, &x, 8);
	fg_u8(&p, a);
	fg_u16(&p, bb);
	fg_u32(&p, c);
	fg_u64(&p, d);
	fg_u8(&p, (uint8_t)e);
	fg_u16(&p, (uint16_t)f);
	fg_u32(&p, (uint32_t)g);
	fg_u64(&p, (uint64_t)h);
	fg_u64(&p, xb);
	fg_bytes(&p, blob, 4);
	fx_str(&p, s, sn);
	fx_rec(b, t, FX_ALL, -1, p.p, p.len);
	free(p.p);
}

static inline void fx_work_begin(struct fg_block *b, uint64_t t, uint32_t depth)
{
	struct fg_buf p = { 0 };
	fg_u32(&p, depth);
	fx_rec(b, t, FX_WORK, RLOG_SPAN_BEGIN, p.p, p.len);
	free(p.p);
}

static inline void fx_io_begin(struct fg_block *b, uint64_t t, const char *what)
{
	struct fg_buf p = { 0 };
	fx_str(&p, what, strlen(what));
	fx_rec(b, t, FX_IO, RLOG_SPAN_BEGIN, p.p, p.len);
	free(p.p);
}

static inline void fx_queue_flag(struct fg_block *b, uint64_t t, int flag, uint32_t depth,
				 double load, int16_t delta)
{
	struct fg_buf p = { 0 };
	uint64_t lb;
	memcpy(&lb, &load, 8);
	fg_u32(&p, depth);
	fg_u64(&p, lb);
	fg_u16(&p, (uint16_t)delta);
	fx_rec(b, t, FX_QUEUE, flag, p.p, p.len);
	free(p.p);
}

static inline void fx_queue(struct fg_block *b, uint64_t t, uint32_t depth, double load,
			    int16_t delta)
{
	fx_queue_flag(b, t, -1, depth, load, delta);
}

static inline void fx_loss_block(struct fg_file *f, uint32_t pid, uint32_t tid, uint64_t t,
				 uint64_t events, uint64_t bytes, uint32_t cause)
{
	struct fg_block b;
	fg_block_begin(&b, pid, tid, FX_START + t, RLOG_BLOCK_FLAG_DAEMON);
	fg_data_loss(&b, (uint32_t)(FX_START + t), events, bytes, cause);
	fg_block_end(f, &b);
}

/* Builds the fixture (see the top of this file) into f. */
static inline void fx_build(struct fg_file *f)
{
	static const struct fx_field all[] = {
		{ RLOG_FIELD_U8, 0, "a" }, { RLOG_FIELD_U16, 0, "b" }, { RLOG_FIELD_U32, 0, "c" },
		{ RLOG_FIELD_U64, 0, "d" }, { RLOG_FIELD_I8, 0, "e" }, { RLOG_FIELD_I16, 0, "f" },
		{ RLOG_FIELD_I32, 0, "g" }, { RLOG_FIELD_I64, 0, "h" }, { RLOG_FIELD_F64, 0, "x" },
		{ RLOG_FIELD_BYTES, 4, "blob" }, { RLOG_FIELD_STRING, 0, "s" },
	};
	static const struct fx_field work[] = { { RLOG_FIELD_U32, 0, "depth" } };
	static const struct fx_field io[] = { { RLOG_FIELD_STRING, 0, "what" } };
	static const struct fx_field queue[] = {
		{ RLOG_FIELD_U32, 0, "depth" }, { RLOG_FIELD_F64, 0, "load" }, { RLOG_FIELD_I16, 0, "delta" },
	};
	static const uint8_t blob1[4] = { 0xde, 0xad, 0xbe, 0xef }, blob2[4] = { 0, 1, 2, 3 };
	static const char esc[] = "h\xc3\xa9llo \"q\" \\ \t\x01";
	struct fg_block b;

	fg_file_init(f);
	fg_marker_block(f, 1, 1, 1000000000u, FX_START, FX_REALTIME, RLOG_TICK_TSC, 16384, 8, "demo");

	/* pid 100 tid 101 */
	fg_block_begin(&b, 100, 101, FX_START, 0);
	fx_rec(&b, 100, RLOG_ID_THREAD_NAME, -1, "main", 4);
	fx_rec(&b, 110, RLOG_ID_PROCESS_NAME, -1, "server", 6);
	fx_schema(&b, 120, FX_ALL, RLOG_KIND_EVENT, 3, "all.types", all, 11);
	fx_schema(&b, 121, FX_WORK, RLOG_KIND_SPAN, 1, "work.span", work, 1);
	fx_schema(&b, 122, FX_IO, RLOG_KIND_SPAN, 2, "io.span", io, 1);
	fx_schema(&b, 123, FX_QUEUE, RLOG_KIND_COUNTER, 0, "queue", queue, 3);
	fx_all(&b, 500, 255, 65535, 4294967295u, UINT64_MAX, -128, -32768, INT32_MIN, INT64_MIN, 1.5,
	       blob1, "/index", 6);
	fx_work_begin(&b, 1000, 0);
	fx_queue(&b, 1100, 3, 0.25, -2);
	fx_io_begin(&b, 1200, "read \"cfg\"\n");
	fx_rec(&b, 1500, FX_IO, RLOG_SPAN_END, NULL, 0);
	fx_work_begin(&b, 1600, 1);
	fx_rec(&b, 1700, FX_WORK, RLOG_SPAN_END, NULL, 0);
	fx_queue(&b, 1800, 0, 0.001, 5);
	fx_rec(&b, 2000, FX_WORK, RLOG_SPAN_END, NULL, 0);
	fx_all(&b, 2100, 0, 0, 0, 0, 127, 32767, INT32_MAX, INT64_MAX, -2.75e-300, blob2, "", 0);
	fx_all(&b, 2150, 1, 2, 3, 4, -1, -2, -3, -4, 1e300, blob2, esc, sizeof(esc) - 1);
	fx_all(&b, 2160, 9, 9, 9, 9, 9, 9, 9, 9, NAN, blob2, "ab\0cd", 5);
	fx_rec(&b, 2170, FX_ALL, -1, "zz", 2);
	fx_queue_flag(&b, 2180, 9, 4, 2.5, -1);
	fx_queue(&b, 2185, 1, INFINITY, 0);
	fx_rec(&b, 2190, FX_IO, RLOG_SPAN_END, "x", 1);
	fg_block_end(f, &b);

	/* pid 100 tid 102, a loss, then more of it */
	fg_block_begin(&b, 100, 102, FX_START, 0);
	fx_rec(&b, 150, RLOG_ID_THREAD_NAME, -1, "worker-1", 8);
	fx_work_begin(&b, 1050, 7);
	fx_rec(&b, 1900, FX_WORK, RLOG_SPAN_END, NULL, 0);
	fg_block_end(f, &b);
	fx_loss_block(f, 100, 102, 2200, 5, 80, RLOG_LOSS_NO_BUFFER);
	fg_block_begin(&b, 100, 102, FX_START + 2200, 0);
	fx_io_begin(&b, 2500, "never ends");
	fx_rec(&b, 2600, FX_WORK, RLOG_SPAN_END, NULL, 0);
	fg_block_end(f, &b);

	/* pid 200 tid 201: events without a schema */
	fg_block_begin(&b, 200, 201, FX_START, 0);
	fx_rec(&b, 300, RLOG_ID_PROCESS_NAME, -1, "client", 6);
	fx_rec(&b, 400, 1025, -1, "abc", 3);
	fx_rec(&b, 410, 1026, 7, "\x01\x02\x03\x04\x05", 5);
	fx_rec(&b, 420, RLOG_ID_RAW_U32, -1, "\x01\0\0\0\x02\0\0\0\xff\xff\xff\xff", 12);
	fx_rec(&b, 430, RLOG_ID_RAW_STRING, -1, "hi", 2);
	fx_rec(&b, 440, RLOG_ID_RAW_I16, -1, "\x01\x02\x03", 3);
	fx_rec(&b, 450, FX_ALL, -1, "zz", 2);
	fg_block_end(f, &b);

	fx_loss_block(f, 0, 0, 2700, 3, 48, RLOG_LOSS_LOG_WRITE);
	fx_loss_block(f, 100, 101, 2800, 0, 64, RLOG_LOSS_CORRUPT);
}

#endif
