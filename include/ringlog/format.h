/*
 * ringlog/format.h - the log file's layouts (file version 2.0:
 * RLOG_FILE_VERSION_*): the event record, the record IDs and kinds, the
 * daemon's records (LOG_MARKER, DATA_LOSS, COUNTER, COUNTER_NAME), the
 * event schema, the file and block headers.  What the public API reads and
 * writes: <ringlog.h>'s write path, <ringlog/reader.h>, <ringlog/ring.h>.
 *
 * The session region's layout (shared memory between ringlog's library and
 * its daemon) is not here: no public function takes it.  It is private to
 * ringlog (src/common/region_abi.h) and documented in docs/FORMAT.md for
 * other implementations.
 *
 * Everything here is a fixed-width, little-endian layout written to disk.
 * Every struct is static-asserted to the size and offsets documented byte
 * by byte in docs/FORMAT.md; tests/test_abi.c checks the same numbers
 * against that document.  Change a layout only together with
 * RLOG_FILE_VERSION_MAJOR/MINOR and docs/FORMAT.md.
 *
 * The event record (CeLog's CEL_HEADER, kept bit for bit):
 *
 *   bit 31        30        29 ............ 16   15 ............ 0
 *   +-----------+---------+-------------------+------------------+
 *   | fTimeStamp| reserved|  ID (14 bits)     |  Length (16 bits)|
 *   +-----------+---------+-------------------+------------------+
 *   +4  u32 timestamp            only if fTimeStamp
 *   +.. u16 real ID, u16 flag    only if ID == RLOG_ID_FLAGGED
 *   +.. payload, Length bytes
 *   +.. 0-3 fill bytes to the next 4-byte boundary
 *
 * Length counts the payload only.
 */
#ifndef RINGLOG_FORMAT_H
#define RINGLOG_FORMAT_H

#include <stdint.h>
#include <stddef.h>

/* ------------------------------------------------------------------ */
/* Event record header                                                 */
/* ------------------------------------------------------------------ */

#define RLOG_HDR_LENGTH_MASK   0x0000ffffu  /* bits 0-15: payload bytes */
#define RLOG_HDR_ID_SHIFT      16           /* bits 16-29: event ID */
#define RLOG_HDR_ID_MASK       0x3fffu
#define RLOG_HDR_RESERVED_BIT  0x40000000u  /* bit 30: must be 0 */
#define RLOG_HDR_TIMESTAMP_BIT 0x80000000u  /* bit 31: fTimeStamp */

#define RLOG_MAX_PAYLOAD       0xffffu      /* Length is 16 bits */

/* Reserved event IDs.  IDs below RLOG_ID_USER_MIN are ringlog's own. */
#define RLOG_ID_INVALID        0     /* never written: catches zeroed memory */
#define RLOG_ID_LOG_MARKER     1     /* tick frequency + wall clock; first in every file */
#define RLOG_ID_DATA_LOSS      2     /* written by the daemon only (seed 000) */
#define RLOG_ID_FLAGGED        3     /* real ID and flag follow the timestamp */
#define RLOG_ID_TIME_SYNC      4     /* full 64-bit tick time */
#define RLOG_ID_RAW_U8         16    /* RAW_*: payload is an array of one C type */
#define RLOG_ID_RAW_I8         17
#define RLOG_ID_RAW_U16        18
#define RLOG_ID_RAW_I16        19
#define RLOG_ID_RAW_U32        20
#define RLOG_ID_RAW_I32        21
#define RLOG_ID_RAW_U64        22
#define RLOG_ID_RAW_I64        23
#define RLOG_ID_RAW_DOUBLE     24
#define RLOG_ID_RAW_STRING     25    /* UTF-8 bytes, no terminator */
#define RLOG_ID_COUNTER        32    /* a sampled counter's delta (daemon blocks; below) */
#define RLOG_ID_EVENT_SCHEMA   33    /* an event type's name, kind and fields (below) */
#define RLOG_ID_THREAD_NAME    34    /* payload: the writing thread's name, UTF-8 */
#define RLOG_ID_PROCESS_NAME   35    /* payload: the writing process's name, UTF-8 */
#define RLOG_ID_SPAN_BEGIN     36    /* reserved, unused: spans are flagged records (below) */
#define RLOG_ID_SPAN_END       37    /* reserved, unused */
#define RLOG_ID_COUNTER_NAME   38    /* a sampled counter's name (daemon blocks; metadata) */
#define RLOG_ID_USER_MIN       1024  /* first application ID */
#define RLOG_ID_MAX            16383 /* last ID that fits in 14 bits */

/*
 * Record kinds (docs/FORMAT.md, "Record kinds"): what a record is, from
 * its real ID and whether it is FLAGGED.  The accounting identity
 * (emitted = written + lost) counts RLOG_RECORD_EVENT records only.
 */
#define RLOG_RECORD_EVENT      0  /* an application event (every FLAGGED record is one) */
#define RLOG_RECORD_TIME_SYNC  1  /* TIME_SYNC, unflagged */
#define RLOG_RECORD_METADATA   2  /* EVENT_SCHEMA, THREAD_NAME, PROCESS_NAME, COUNTER_NAME */
#define RLOG_RECORD_MARKER     3  /* LOG_MARKER, unflagged: daemon blocks only */
#define RLOG_RECORD_LOSS       4  /* DATA_LOSS, unflagged: daemon blocks only */
#define RLOG_RECORD_COUNTER    5  /* COUNTER, unflagged: daemon blocks only */

/* LOG_MARKER payload (Length >= 112; readers ignore bytes past 112). */
struct rlog_log_marker {
	uint64_t tick_freq_hz;      /* ticks per second of the timestamps */
	uint64_t sync_ticks;        /* a 64-bit tick time ... */
	uint64_t sync_realtime_ns;  /* ... and CLOCK_REALTIME at that moment, ns since 1970 */
	uint64_t sync_monotonic_ns; /* ... and CLOCK_MONOTONIC_RAW at that moment */
	uint32_t tick_source;       /* RLOG_TICK_* */
	uint32_t buffer_size;       /* session buffer size in bytes */
	uint32_t buffer_count;      /* session buffers in the pool */
	uint16_t clock_esterror_us; /* adjtimex(2) esterror, us, at most 65535 */
	uint16_t clock_maxerror_us; /* adjtimex(2) maxerror, us: RLOG_CLOCK_ERROR_* */
	char session_name[64];      /* NUL-padded, not necessarily NUL-terminated */
};
_Static_assert(sizeof(struct rlog_log_marker) == 112, "LOG_MARKER payload is 112 bytes");

#define RLOG_TICK_TSC        1  /* x86 time-stamp counter (constant and nonstop) */
#define RLOG_TICK_MONOTONIC  2  /* CLOCK_MONOTONIC in nanoseconds (tick_freq_hz 1e9) */
#define RLOG_TICK_COUNTER    3  /* a single ring's producer's own counter (ringlog/ring.h) */

/* clock_maxerror_us: 0 is "not recorded" (files written before the field,
 * once a reserved 0, and writers that do not ask the kernel); 65535 is
 * "the kernel says CLOCK_REALTIME is not synchronized"; 1..65534 is
 * maxerror in us (65534: that or more).  docs/FORMAT.md, LOG_MARKER. */
#define RLOG_CLOCK_ERROR_NOT_RECORDED 0u
#define RLOG_CLOCK_ERROR_UNSYNC       65535u
#define RLOG_CLOCK_ERROR_MAX          65534u

/* DATA_LOSS payload (Length >= 24). */
struct rlog_data_loss {
	uint64_t events;   /* events lost */
	uint64_t bytes;    /* record bytes those events would have taken */
	uint32_t cause;    /* RLOG_LOSS_* */
	uint32_t reserved; /* 0 */
};
_Static_assert(sizeof(struct rlog_data_loss) == 24, "DATA_LOSS payload is 24 bytes");

#define RLOG_LOSS_NO_BUFFER  1  /* no free buffer in the pool (discard mode) */
#define RLOG_LOSS_NESTED     2  /* a write interrupted a write (signal handler) */
#define RLOG_LOSS_CORRUPT    3  /* a buffer in shared memory failed validation */
#define RLOG_LOSS_LOG_WRITE  4  /* the log file could not be written (full disk) */
#define RLOG_LOSS_NO_SLOT    5  /* no producer slot left for the thread */
#define RLOG_LOSS_REAL_TIME  6  /* a real-time consumer missed blocks (file 1.2; Length 32) */

/*
 * DATA_LOSS payload with a block count (file 1.2): Length 32.  The daemon
 * writes it for RLOG_LOSS_REAL_TIME, in a real-time consumer's stream
 * before the first block it gets after missing some.  A reader that knows
 * only struct rlog_data_loss reads the first 24 bytes.
 */
struct rlog_data_loss_blocks {
	struct rlog_data_loss loss; /* events and bytes in the blocks missed, cause */
	uint64_t blocks;            /* thread blocks (buffers) missed */
};
_Static_assert(sizeof(struct rlog_data_loss_blocks) == 32, "DATA_LOSS with blocks is 32 bytes");

#define RLOG_LOSS_OVERWRITTEN 7  /* overwrite mode: full buffers reused before their events
                                    were delivered (file 1.3; Length 48) */
#define RLOG_LOSS_KERNEL     8  /* system events the kernel dropped: its ring of the CPU (the
                                   system block's tid) was full (PERF_RECORD_LOST) */
#define RLOG_LOSS_SINK       9  /* a multi-host sink (Kafka, NATS) dropped chunks: its buffer
                                   was full, or a collector found chunks missing */

/*
 * DATA_LOSS payload with a time range (file 1.3): Length 48, for
 * RLOG_LOSS_OVERWRITTEN.  The events lost lie after first_time and at or
 * before last_time (64-bit ticks, as TIME_SYNC's).  A reader that knows
 * only the shorter payloads reads their bytes.
 */
struct rlog_data_loss_range {
	struct rlog_data_loss loss; /* events and bytes overwritten, cause */
	uint64_t blocks;            /* buffers overwritten */
	uint64_t first_time;        /* ticks: after the thread's last record delivered before */
	uint64_t last_time;         /* ticks: the last overwritten record's time */
};
_Static_assert(sizeof(struct rlog_data_loss_range) == 48, "DATA_LOSS with a range is 48 bytes");

/*
 * Sampled counters (docs/FORMAT.md, "COUNTER and COUNTER_NAME").  The
 * daemon samples monotonically increasing counters (the application's, a
 * process's figures from /proc, the kernel's performance counters) and,
 * as CeLog's event tracking library did with dwCeLogTLBMiss, writes a
 * COUNTER record only when a counter changed: its delta since the
 * previous record, wrap-safe (unsigned, modulo 2^64).  Every
 * RLOG_COUNTER_KEY_EVERY-th record of a counter (seq a multiple of it),
 * and every reset, also carries the absolute value (flag VALUE, Length
 * 24; else Length 16), so that a reader that lost records (a gap in seq)
 * knows the value again at the next one.  A COUNTER_NAME record, metadata,
 * names a counter before its first COUNTER record.  Both are written in
 * daemon blocks whose pid is the counted process (0: the whole system),
 * tid 0.
 */
struct rlog_counter_delta {
	uint32_t counter_id; /* the counter, unique in the session (never 0) */
	uint16_t flags;      /* RLOG_COUNTER_FLAG_* */
	uint16_t seq;        /* this counter's records: 0, 1, 2, ... modulo 2^16 */
	uint64_t delta;      /* increase since the previous record (RESET: the value) */
	uint64_t value;      /* the absolute value; present only with FLAG_VALUE */
};
_Static_assert(sizeof(struct rlog_counter_delta) == 24, "COUNTER payload is 24 bytes");

#define RLOG_COUNTER_FLAG_VALUE  0x0001u /* value is present (Length 24) */
#define RLOG_COUNTER_FLAG_RESET  0x0002u /* the counter went backwards: delta = value */
#define RLOG_COUNTER_KEY_EVERY   16      /* records with seq % 16 == 0 carry the value */

/* COUNTER_NAME payload: this head, then name_len bytes of name. */
struct rlog_counter_name {
	uint32_t counter_id; /* the counter named (in the block's pid) */
	uint8_t source;      /* RLOG_COUNTER_SRC_* */
	uint8_t unit;        /* RLOG_COUNTER_UNIT_* */
	uint8_t name_len;    /* 1..255 */
	uint8_t flags;       /* RLOG_COUNTER_INFO_* */
};
_Static_assert(sizeof(struct rlog_counter_name) == 8, "COUNTER_NAME head is 8 bytes");

#define RLOG_COUNTER_SRC_APP     1 /* rlog_counter_register: the application's counter */
#define RLOG_COUNTER_SRC_PROC    2 /* /proc/PID: the process's figures */
#define RLOG_COUNTER_SRC_PERF    3 /* perf_event_open on the process's threads */
#define RLOG_COUNTER_SRC_SYSTEM  4 /* perf_event_open on every CPU (pid 0 blocks) */
#define RLOG_COUNTER_UNIT_COUNT  0 /* events */
#define RLOG_COUNTER_UNIT_NS     1 /* nanoseconds */
#define RLOG_COUNTER_INFO_USER   0x01u /* counts user space only (perf_event_paranoid) */

/* TIME_SYNC payload: one u64, the full 64-bit tick time of the record. */

/*
 * EVENT_SCHEMA payload: byte-packed, little-endian, no padding.
 *   +0  u16 event_id      the ID described (RAW_U8 .. RLOG_ID_MAX, not 32..38)
 *   +2  u8  kind          RLOG_KIND_*
 *   +3  u8  category      0..63
 *   +4  u8  name_len      1..255
 *   +5  u8  field_count   0..RLOG_SCHEMA_MAX_FIELDS
 *   +6  name              name_len bytes, printable ASCII, no '"' or '\'
 *   then field_count fields, each:
 *   +0  u8  type          RLOG_FIELD_*
 *   +1  u8  name_len      1..255, a C identifier
 *   +2  u16 count         RLOG_FIELD_BYTES: the array length (1..4096); else 0
 *   +4  name              name_len bytes
 * A schema applies to records of its event_id written by the same process
 * (pid) from the schema record's time on.
 *
 * The payload of an event with a schema is its fields in order, packed:
 * integers and F64 (IEEE double) little-endian at their natural size,
 * BYTES as count bytes, STRING as a u16 length then that many bytes of
 * UTF-8 (no terminator, at most RLOG_STRING_MAX).
 *
 * Spans: an event type of kind SPAN is written as FLAGGED records, flag
 * RLOG_SPAN_BEGIN with the fields, flag RLOG_SPAN_END with none; per
 * thread, an END closes the innermost open BEGIN of the same ID.
 */
#define RLOG_KIND_EVENT    0  /* an instant event */
#define RLOG_KIND_SPAN     1  /* a begin and an end: a duration */
#define RLOG_KIND_COUNTER  2  /* each field is a counter track's new value */

#define RLOG_FIELD_U8      1
#define RLOG_FIELD_U16     2
#define RLOG_FIELD_U32     3
#define RLOG_FIELD_U64     4
#define RLOG_FIELD_I8      5
#define RLOG_FIELD_I16     6
#define RLOG_FIELD_I32     7
#define RLOG_FIELD_I64     8
#define RLOG_FIELD_F64     9
#define RLOG_FIELD_BYTES   10 /* fixed-size byte array */
#define RLOG_FIELD_STRING  11 /* u16 length + UTF-8 bytes */

#define RLOG_SCHEMA_MAX_FIELDS 32
#define RLOG_BYTES_MAX         4096
#define RLOG_STRING_MAX        1024 /* longer strings are cut at this many bytes */

#define RLOG_SPAN_BEGIN 1
#define RLOG_SPAN_END   2

/* ------------------------------------------------------------------ */
/* Log file                                                            */
/* ------------------------------------------------------------------ */

#define RLOG_FILE_MAGIC          "RLOGFILE"   /* 8 bytes, no NUL */
#define RLOG_FILE_VERSION_MAJOR  2           /* 2.0: checksums are CRC-32C (1.x: zlib's crc32) */
#define RLOG_FILE_VERSION_MINOR  1           /* 1.1: the LOG_MARKER copy in the file header;
                                                1.2: circular and preallocated files, metadata
                                                copies, the REAL_TIME loss cause;
                                                1.3: the OVERWRITTEN loss cause, with a
                                                time range;
                                                1.4: COUNTER and COUNTER_NAME records;
                                                2.0 has all of 1.4;
                                                2.1: system blocks (FLAG_SYSTEM), IDs
                                                64..127, the KERNEL loss cause */

#define RLOG_FILE_FLAG_MARKER    0x0001u     /* the file header holds a copy of the LOG_MARKER */
#define RLOG_FILE_FLAG_CIRCULAR  0x0002u     /* a circular file: it may have wrapped (1.2) */
#define RLOG_FILE_FLAG_PREALLOCATED 0x0004u  /* zeros after the last block are unused space (1.2) */

struct rlog_file_header {
	char magic[8];          /* "RLOGFILE" */
	uint16_t version_major; /* readers refuse another major */
	uint16_t version_minor; /* additive changes only */
	uint32_t header_size;   /* bytes to the first block, >= 64, a multiple of 4 */
	uint64_t created_realtime_ns; /* when the daemon created the file */
	uint32_t flags;         /* RLOG_FILE_FLAG_* */
	uint32_t marker_crc32;  /* RLOG_FILE_FLAG_MARKER: the checksum of marker (CRC-32C;
	                           1.x: zlib crc32); else 0 */
	uint8_t reserved[32];   /* 0 */
	/* +64, version 1.1: present when flags has RLOG_FILE_FLAG_MARKER (and
	 * then header_size >= 176): the payload of block 0's LOG_MARKER, so
	 * that a file whose first block is damaged can still be timed. */
	struct rlog_log_marker marker;
};
_Static_assert(sizeof(struct rlog_file_header) == 176, "file header is 176 bytes");
_Static_assert(offsetof(struct rlog_file_header, marker) == 64, "marker copy at +64");

#define RLOG_BLOCK_MAGIC        0x4b424c52u  /* "RLBK" in file byte order */
#define RLOG_BLOCK_FLAG_DAEMON  0x0001u      /* records synthesised by the daemon */
#define RLOG_BLOCK_FLAG_SYSTEM  0x0004u      /* with DAEMON: system events of one CPU
                                                (pid 0, tid the CPU; docs/FORMAT.md) */
#define RLOG_BLOCK_FLAG_METADATA 0x0002u     /* the daemon's copy of metadata records written
                                                before: read for schemas and names only (1.2) */
#define RLOG_BLOCK_DATA_MAX     16777216u    /* largest data_size: one buffer of the largest size */

struct rlog_block_header {
	uint32_t magic;       /* RLOG_BLOCK_MAGIC */
	uint16_t header_size; /* 48 */
	uint16_t flags;       /* RLOG_BLOCK_FLAG_* */
	uint64_t seq;         /* 0, 1, 2, ... in file order */
	uint32_t pid;         /* producer process */
	uint32_t tid;         /* producer thread */
	uint64_t base_time;   /* 64-bit ticks: the time reference before the first record */
	uint32_t data_size;   /* record bytes after this header, a multiple of 4 */
	uint32_t record_count;/* records in the data, TIME_SYNC included */
	uint32_t crc32;       /* CRC-32C (1.x: zlib crc32) of bytes 0..39 of this header, then
	                         the data */
	uint32_t reserved;    /* 0 */
};
_Static_assert(sizeof(struct rlog_block_header) == 48, "block header is 48 bytes");
_Static_assert(offsetof(struct rlog_block_header, crc32) == 40, "crc32 at +40");

#endif /* RINGLOG_FORMAT_H */
