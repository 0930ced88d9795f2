/*
 * filegen.h - a test-side writer of ringlog log files, header only.
 *
 * It crafts files byte by byte from the layout in docs/FORMAT.md and
 * include/ringlog/format.h (offsets written out here, not taken from the
 * structs), independently of the daemon's writer and of the reader, so that
 * tests can build exact files, valid or damaged on purpose:
 *
 *   struct fg_file f;
 *   struct fg_block b;
 *   fg_file_init(&f);
 *   fg_marker_block(&f, 1, 1, 3000000000u, start, realtime, RLOG_TICK_TSC, 16384, 8, "demo");
 *   fg_block_begin(&b, 100, 101, start, 0);
 *   size_t rec = fg_event(&b, 1025, -1, true, (uint32_t)(start + 10), "abc", 3);
 *   size_t blk = fg_block_end(&f, &b);   // file offset of the block header
 *   // record's file offset: blk + 48 + rec
 *   fg_write(&f, path);
 *   fg_file_free(&f);
 *
 * Every function aborts on allocation failure: these are tests.
 */
#ifndef RLOG_TESTS_FILEGEN_H
#define RLOG_TESTS_FILEGEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crc32c.h"
#include "region_abi.h"

#define FG_FILE_HDR 64u   /* file header bytes */
#define FG_BLOCK_HDR 48u  /* block header bytes */

struct fg_buf {
	uint8_t *p;
	size_t len, cap;
};

static inline void fg_bytes(struct fg_buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n)
			cap *= 2;
		b->p = realloc(b->p, cap);
		if (!b->p)
			abort();
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
}

static inline void fg_zero(struct fg_buf *b, size_t n)
{
	static const uint8_t z[64];
	while (n > 0) {
		size_t k = n < sizeof(z) ? n : sizeof(z);
		fg_bytes(b, z, k);
		n -= k;
	}
}

/* Little-endian, byte by byte (the file format is little-endian). */
static inline void fg_u8(struct fg_buf *b, uint8_t v) { fg_bytes(b, &v, 1); }
static inline void fg_u16(struct fg_buf *b, uint16_t v)
{
	fg_u8(b, (uint8_t)v);
	fg_u8(b, (uint8_t)(v >> 8));
}
static inline void fg_u32(struct fg_buf *b, uint32_t v)
{
	fg_u16(b, (uint16_t)v);
	fg_u16(b, (uint16_t)(v >> 16));
}
static inline void fg_u64(struct fg_buf *b, uint64_t v)
{
	fg_u32(b, (uint32_t)v);
	fg_u32(b, (uint32_t)(v >> 32));
}
static inline void fg_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

struct fg_file {
	struct fg_buf b;
	uint64_t seq;   /* next block sequence number */
	uint16_t major; /* the file's major version: its checksum (CRC-32C from 2.0) */
};

/* File header: "RLOGFILE", version major.minor, header_size (>= 64, bytes
 * past 64 filled with 0xee), created_realtime_ns, flags 0, reserved 0. */
static inline void fg_file_init_ex(struct fg_file *f, uint16_t major, uint16_t minor,
				   uint32_t header_size, uint64_t created_ns)
{
	memset(f, 0, sizeof(*f));
	f->major = major;
	fg_bytes(&f->b, "RLOGFILE", 8);    /* +0 magic */
	fg_u16(&f->b, major);              /* +8 */
	fg_u16(&f->b, minor);              /* +10 */
	fg_u32(&f->b, header_size);        /* +12 */
	fg_u64(&f->b, created_ns);         /* +16 */
	fg_u32(&f->b, 0);                  /* +24 flags */
	fg_u32(&f->b, 0);                  /* +28 reserved0 */
	fg_zero(&f->b, 32);                /* +32 reserved */
	while (f->b.len < header_size)
		fg_u8(&f->b, 0xee);
}

/* A version 2.0 file header of 64 bytes (blocks checked by CRC-32C). */
static inline void fg_file_init(struct fg_file *f)
{
	fg_file_init_ex(f, 2, 0, FG_FILE_HDR, 1700000000000000000ull);
}

static inline void fg_file_free(struct fg_file *f)
{
	free(f->b.p);
	memset(f, 0, sizeof(*f));
}

struct fg_block {
	struct fg_buf d;  /* the records */
	uint32_t pid, tid;
	uint64_t base_time;
	uint16_t flags;
	uint32_t count;   /* records written */
};

static inline void fg_block_begin(struct fg_block *b, uint32_t pid, uint32_t tid,
				  uint64_t base_time, uint16_t flags)
{
	memset(b, 0, sizeof(*b));
	b->pid = pid;
	b->tid = tid;
	b->base_time = base_time;
	b->flags = flags;
}

/* The record size the format prescribes, computed here independently. */
static inline uint32_t fg_record_size(bool flagged, bool ts, unsigned len)
{
	uint32_t n = 4 + (ts ? 4 : 0) + (flagged ? 4 : 0) + len;
	return (n + 3) / 4 * 4;
}

/*
 * Appends one record.  flag < 0: header ID id; flag >= 0: header ID
 * FLAGGED, then u16 id, u16 flag.  ts: a timestamp word time_low follows the
 * header.  The fill to 4 bytes is zeroed.  Returns the record's offset in
 * the block's data.
 */
static inline size_t fg_record_raw(struct fg_block *b, uint32_t hdr_word, int real_id, int flag,
				   bool ts, uint32_t time_low, const void *payload, unsigned len)
{
	size_t at = b->d.len;
	fg_u32(&b->d, hdr_word);
	if (ts)
		fg_u32(&b->d, time_low);
	if (flag >= 0) {
		fg_u16(&b->d, (uint16_t)real_id);
		fg_u16(&b->d, (uint16_t)flag);
	}
	fg_bytes(&b->d, payload, len);
	while (b->d.len % 4)
		fg_u8(&b->d, 0);
	b->count++;
	return at;
}

static inline size_t fg_event(struct fg_block *b, unsigned id, int flag, bool ts,
			      uint32_t time_low, const void *payload, unsigned len)
{
	unsigned hid = flag >= 0 ? 3u /* FLAGGED */ : id;
	uint32_t h = (len & 0xffffu) | ((uint32_t)(hid & 0x3fffu) << 16) | (ts ? 0x80000000u : 0u);
	return fg_record_raw(b, h, (int)id, flag, ts, time_low, payload, len);
}

/* TIME_SYNC: timestamped with the low half, payload the full u64. */
static inline size_t fg_time_sync(struct fg_block *b, uint64_t t)
{
	uint8_t p[8];
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(t >> (8 * i));
	return fg_event(b, 4, -1, true, (uint32_t)t, p, 8);
}

/* DATA_LOSS payload: u64 events, u64 bytes, u32 cause, u32 reserved. */
static inline size_t fg_data_loss(struct fg_block *b, uint32_t time_low, uint64_t events,
				  uint64_t bytes, uint32_t cause)
{
	struct fg_buf p = { 0 };
	fg_u64(&p, events);
	fg_u64(&p, bytes);
	fg_u32(&p, cause);
	fg_u32(&p, 0);
	size_t at = fg_event(b, 2, -1, true, time_low, p.p, (unsigned)p.len);
	free(p.p);
	return at;
}

/* ------------------------------------------------------------------ */
/* Metadata records: EVENT_SCHEMA, THREAD_NAME, PROCESS_NAME           */
/* ------------------------------------------------------------------ */

/* One field of a schema, as fg_schema() writes it. */
struct fg_field {
	uint8_t type;      /* RLOG_FIELD_* */
	uint16_t count;    /* RLOG_FIELD_BYTES: array length; else 0 */
	const char *name;
};

/*
 * An EVENT_SCHEMA payload, byte by byte (include/ringlog/format.h):
 *   +0 u16 event_id, +2 u8 kind, +3 u8 category, +4 u8 name_len,
 *   +5 u8 field_count, +6 name; then per field u8 type, u8 name_len,
 *   u16 count, name.
 * Lengths are written as given (truncated to a byte), so that tests can
 * write malformed schemas too.
 */
static inline void fg_schema_payload(struct fg_buf *p, uint16_t id, uint8_t kind,
				     uint8_t category, const char *name,
				     const struct fg_field *f, unsigned n)
{
	fg_u16(p, id);
	fg_u8(p, kind);
	fg_u8(p, category);
	fg_u8(p, (uint8_t)strlen(name));
	fg_u8(p, (uint8_t)n);
	fg_bytes(p, name, strlen(name));
	for (unsigned i = 0; i < n; i++) {
		fg_u8(p, f[i].type);
		fg_u8(p, (uint8_t)strlen(f[i].name));
		fg_u16(p, f[i].count);
		fg_bytes(p, f[i].name, strlen(f[i].name));
	}
}

/* A timestamped EVENT_SCHEMA record.  Returns its offset in the block. */
static inline size_t fg_schema(struct fg_block *b, uint32_t time_low, uint16_t id, uint8_t kind,
			       uint8_t category, const char *name, const struct fg_field *f,
			       unsigned n)
{
	struct fg_buf p = { 0 };
	fg_schema_payload(&p, id, kind, category, name, f, n);
	size_t at = fg_event(b, RLOG_ID_EVENT_SCHEMA, -1, true, time_low, p.p, (unsigned)p.len);
	free(p.p);
	return at;
}

/* A timestamped THREAD_NAME or PROCESS_NAME record (payload: the bytes
 * of name, no terminator). */
static inline size_t fg_thread_name(struct fg_block *b, uint32_t time_low, const char *name)
{
	return fg_event(b, RLOG_ID_THREAD_NAME, -1, true, time_low, name, (unsigned)strlen(name));
}

static inline size_t fg_process_name(struct fg_block *b, uint32_t time_low, const char *name)
{
	return fg_event(b, RLOG_ID_PROCESS_NAME, -1, true, time_low, name, (unsigned)strlen(name));
}

/* ------------------------------------------------------------------ */
/* Sampled counters: COUNTER, COUNTER_NAME                              */
/* ------------------------------------------------------------------ */

/* A COUNTER record: u32 counter_id, u16 flags, u16 seq, u64 delta, and
 * with flags bit 0 (VALUE) u64 value; len_override > 0 writes that Length
 * (payload cut or zero-padded to it), for malformed records. */
static inline size_t fg_counter(struct fg_block *b, uint32_t time_low, uint32_t id, uint16_t flags,
				uint16_t seq, uint64_t delta, uint64_t value, unsigned len_override)
{
	struct fg_buf p = { 0 };
	fg_u32(&p, id);
	fg_u16(&p, flags);
	fg_u16(&p, seq);
	fg_u64(&p, delta);
	if (flags & 1)
		fg_u64(&p, value);
	unsigned len = len_override ? len_override : (unsigned)p.len;
	if (len > p.len)
		fg_zero(&p, len - p.len);
	size_t at = fg_event(b, RLOG_ID_COUNTER, -1, true, time_low, p.p, len);
	free(p.p);
	return at;
}

/* A COUNTER_NAME record: u32 counter_id, u8 source, u8 unit, u8 name_len
 * (as given: tests write wrong ones), u8 flags, then the name's bytes. */
static inline size_t fg_counter_name(struct fg_block *b, uint32_t time_low, uint32_t id,
				     uint8_t source, uint8_t unit, uint8_t name_len, uint8_t flags,
				     const char *name)
{
	struct fg_buf p = { 0 };
	fg_u32(&p, id);
	fg_u8(&p, source);
	fg_u8(&p, unit);
	fg_u8(&p, name_len);
	fg_u8(&p, flags);
	fg_bytes(&p, name, strlen(name));
	size_t at = fg_event(b, RLOG_ID_COUNTER_NAME, -1, true, time_low, p.p, (unsigned)p.len);
	free(p.p);
	return at;
}

/* Field values of a schema'd payload: little-endian at their natural
 * size, F64 as its IEEE bits, STRING as u16 length + bytes. */
static inline void fg_f64(struct fg_buf *p, double v)
{
	uint64_t u;
	memcpy(&u, &v, 8);
	fg_u64(p, u);
}

static inline void fg_str(struct fg_buf *p, const void *s, size_t len)
{
	fg_u16(p, (uint16_t)len);
	fg_bytes(p, s, len);
}

/*
 * Appends the block with its header (seq, the checksum of the file's major
 * version over header bytes 0..39 and the data) and frees its data.
 * Returns the block's file offset.
 */
static inline size_t fg_block_end_ex(struct fg_file *f, struct fg_block *b, uint32_t record_count)
{
	size_t at = f->b.len;
	fg_u32(&f->b, 0x4b424c52u);               /* +0 magic "RLBK" */
	fg_u16(&f->b, FG_BLOCK_HDR);              /* +4 header_size */
	fg_u16(&f->b, b->flags);                  /* +6 flags */
	fg_u64(&f->b, f->seq++);                  /* +8 seq */
	fg_u32(&f->b, b->pid);                    /* +16 */
	fg_u32(&f->b, b->tid);                    /* +20 */
	fg_u64(&f->b, b->base_time);              /* +24 */
	fg_u32(&f->b, (uint32_t)b->d.len);        /* +32 data_size */
	fg_u32(&f->b, record_count);              /* +36 record_count */
	uint32_t crc = rlog__block_crc(f->major, f->b.p + at, b->d.p, (uint32_t)b->d.len);
	fg_u32(&f->b, crc);                       /* +40 crc32 */
	fg_u32(&f->b, 0);                         /* +44 reserved */
	fg_bytes(&f->b, b->d.p, b->d.len);
	free(b->d.p);
	memset(b, 0, sizeof(*b));
	return at;
}

static inline size_t fg_block_end(struct fg_file *f, struct fg_block *b)
{
	return fg_block_end_ex(f, b, b->count);
}

/* Recomputes the checksum of the block at file offset at (after an edit). */
static inline void fg_block_recrc(struct fg_file *f, size_t at)
{
	const uint8_t *p = f->b.p + at;
	uint32_t ds = (uint32_t)p[32] | (uint32_t)p[33] << 8 | (uint32_t)p[34] << 16 |
		      (uint32_t)p[35] << 24;
	fg_put32(f->b.p + at + 40, rlog__block_crc(f->major, p, p + FG_BLOCK_HDR, ds));
}

/* LOG_MARKER payload (112 bytes), its clock error word (+44: esterror
 * us in the low half, maxerror us in the high half) given. */
static inline void fg_marker_payload_clock(struct fg_buf *p, uint64_t freq, uint64_t sync_ticks,
					   uint64_t realtime_ns, uint32_t source, uint32_t buf_size,
					   uint32_t buf_count, const char *name, uint32_t clock)
{
	char n[64] = { 0 };
	memcpy(n, name, strnlen(name, sizeof(n)));
	fg_u64(p, freq);                  /* +0 tick_freq_hz */
	fg_u64(p, sync_ticks);            /* +8 */
	fg_u64(p, realtime_ns);           /* +16 */
	fg_u64(p, 5000000000ull);         /* +24 sync_monotonic_ns */
	fg_u32(p, source);                /* +32 */
	fg_u32(p, buf_size);              /* +36 */
	fg_u32(p, buf_count);             /* +40 */
	fg_u32(p, clock);                 /* +44 clock_esterror_us, +46 clock_maxerror_us */
	fg_bytes(p, n, sizeof(n));        /* +48 session_name */
}

/* LOG_MARKER payload (112 bytes), its clock error not recorded. */
static inline void fg_marker_payload(struct fg_buf *p, uint64_t freq, uint64_t sync_ticks,
				     uint64_t realtime_ns, uint32_t source, uint32_t buf_size,
				     uint32_t buf_count, const char *name)
{
	fg_marker_payload_clock(p, freq, sync_ticks, realtime_ns, source, buf_size, buf_count, name,
				0);
}

/* The daemon block that starts every file: one timestamped LOG_MARKER at
 * sync_ticks (base_time sync_ticks), with the clock error word clock
 * (fg_marker_payload_clock).  Returns the block's file offset. */
static inline size_t fg_marker_block_clock(struct fg_file *f, uint32_t pid, uint32_t tid,
					   uint64_t freq, uint64_t sync_ticks, uint64_t realtime_ns,
					   uint32_t source, uint32_t buf_size, uint32_t buf_count,
					   const char *name, uint32_t clock)
{
	struct fg_block b;
	struct fg_buf p = { 0 };
	fg_marker_payload_clock(&p, freq, sync_ticks, realtime_ns, source, buf_size, buf_count, name,
				clock);
	fg_block_begin(&b, pid, tid, sync_ticks, 0x0001 /* daemon */);
	fg_event(&b, 1, -1, true, (uint32_t)sync_ticks, p.p, (unsigned)p.len);
	free(p.p);
	return fg_block_end(f, &b);
}

/* fg_marker_block_clock with the clock error not recorded. */
static inline size_t fg_marker_block(struct fg_file *f, uint32_t pid, uint32_t tid, uint64_t freq,
				     uint64_t sync_ticks, uint64_t realtime_ns, uint32_t source,
				     uint32_t buf_size, uint32_t buf_count, const char *name)
{
	return fg_marker_block_clock(f, pid, tid, freq, sync_ticks, realtime_ns, source, buf_size,
				     buf_count, name, 0);
}

/*
 * A version 1.1 file header (176 bytes): flags RLOG_FILE_FLAG_MARKER,
 * marker_crc32 over the copy of the LOG_MARKER payload at +64 (written as
 * fg_marker_payload() writes it).  Starts the file, as fg_file_init().
 */
static inline void fg_file_init_marker(struct fg_file *f, uint64_t freq, uint64_t sync_ticks,
				       uint64_t realtime_ns, uint32_t source, uint32_t buf_size,
				       uint32_t buf_count, const char *name)
{
	struct fg_buf m = { 0 };
	fg_marker_payload(&m, freq, sync_ticks, realtime_ns, source, buf_size, buf_count, name);
	memset(f, 0, sizeof(*f));
	f->major = 1;
	fg_bytes(&f->b, "RLOGFILE", 8);    /* +0 magic */
	fg_u16(&f->b, 1);                  /* +8 major */
	fg_u16(&f->b, 1);                  /* +10 minor */
	fg_u32(&f->b, 176);                /* +12 header_size */
	fg_u64(&f->b, 1700000000000000000ull); /* +16 created_realtime_ns */
	fg_u32(&f->b, 1);                  /* +24 flags: MARKER */
	fg_u32(&f->b, rlog__file_crc(1, 0, m.p, m.len)); /* +28 marker_crc32 (zlib's, in 1.x) */
	fg_zero(&f->b, 32);                /* +32 reserved */
	fg_bytes(&f->b, m.p, m.len);       /* +64 marker */
	free(m.p);
}

/* Cuts bytes [from, to) out of the file (to splice it at block boundaries). */
static inline void fg_cut(struct fg_file *f, size_t from, size_t to)
{
	memmove(f->b.p + from, f->b.p + to, f->b.len - to);
	f->b.len -= to - from;
}

/* Inserts a copy of the file's bytes [from, to) at offset at. */
static inline void fg_insert_copy(struct fg_file *f, size_t at, size_t from, size_t to)
{
	size_t n = to - from;
	uint8_t *tmp = malloc(n ? n : 1);
	if (!tmp)
		abort();
	memcpy(tmp, f->b.p + from, n);
	fg_zero(&f->b, n); /* room at the end */
	memmove(f->b.p + at + n, f->b.p + at, f->b.len - n - at);
	memcpy(f->b.p + at, tmp, n);
	free(tmp);
}

/* n bytes of value v between blocks (damage). */
static inline size_t fg_garbage(struct fg_file *f, size_t n, uint8_t v)
{
	size_t at = f->b.len;
	for (size_t i = 0; i < n; i++)
		fg_u8(&f->b, v);
	return at;
}

/* Writes the first len bytes of the file (all of it if len is SIZE_MAX). */
static inline int fg_write_len(const struct fg_file *f, const char *path, size_t len)
{
	FILE *fp = fopen(path, "wb");
	if (!fp)
		return -1;
	if (len > f->b.len)
		len = f->b.len;
	size_t w = len ? fwrite(f->b.p, 1, len, fp) : 0;
	int rc = fclose(fp);
	return (w == len && rc == 0) ? 0 : -1;
}

static inline int fg_write(const struct fg_file *f, const char *path)
{
	return fg_write_len(f, path, SIZE_MAX);
}

/* A fresh temporary path (the file is created empty); path[64]. */
static inline void fg_tmpname(char *path, const char *tag)
{
	const char *dir = getenv("TMPDIR");
	snprintf(path, 64, "%s/rlog_%s_XXXXXX", dir && strlen(dir) < 30 ? dir : "/tmp", tag);
	int fd = mkstemp(path);
	if (fd < 0)
		abort();
	close(fd);
}

#ifdef RINGLOG_READER_H
/* With <ringlog/reader.h> included first: writes the file (its first len
 * bytes) to a temporary path and opens a reader on it; the path is
 * unlinked (the reader keeps its mapping).  Returns rlog_reader_open()'s
 * result. */
static inline int fg_open_len(const struct fg_file *f, size_t len, struct rlog_reader **r)
{
	char path[64];
	fg_tmpname(path, "rd");
	if (fg_write_len(f, path, len) < 0)
		abort();
	int rc = rlog_reader_open(path, r);
	unlink(path);
	return rc;
}

static inline int fg_open(const struct fg_file *f, struct rlog_reader **r)
{
	return fg_open_len(f, SIZE_MAX, r);
}
#endif

#endif
