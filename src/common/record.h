/*
 * record.h - encoding and decoding of one event record (CeLog's format).
 *
 * Shared by the producer's slow path, the daemon (which validates every
 * record it drains from shared memory) and the reader.  The byte layout is
 * drawn in include/ringlog/format.h and specified in docs/FORMAT.md.
 */
#ifndef RLOG_COMMON_RECORD_H
#define RLOG_COMMON_RECORD_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "region_abi.h"

/* Time-stamped records must be less than this many ticks after the previous
 * record of the same thread; otherwise the producer writes a TIME_SYNC. */
#define RLOG_TIME_SYNC_TICKS (UINT64_C(1) << 31)

static inline uint32_t rlog__hdr_make(unsigned id, unsigned length, bool timestamp)
{
	return (uint32_t)(length & RLOG_HDR_LENGTH_MASK) |
	       ((uint32_t)(id & RLOG_HDR_ID_MASK) << RLOG_HDR_ID_SHIFT) |
	       (timestamp ? RLOG_HDR_TIMESTAMP_BIT : 0u);
}

static inline unsigned rlog__hdr_length(uint32_t h) { return h & RLOG_HDR_LENGTH_MASK; }
static inline unsigned rlog__hdr_id(uint32_t h) { return (h >> RLOG_HDR_ID_SHIFT) & RLOG_HDR_ID_MASK; }
static inline bool rlog__hdr_has_time(uint32_t h) { return (h & RLOG_HDR_TIMESTAMP_BIT) != 0; }

/* Bytes a record takes: header, timestamp, flag word, payload, fill. */
static inline uint32_t rlog__record_size(unsigned id, unsigned length, bool timestamp)
{
	uint32_t n = 4u + (timestamp ? 4u : 0u) + (id == RLOG_ID_FLAGGED ? 4u : 0u) + length;
	return (n + 3u) & ~3u;
}

static inline uint32_t rlog__get32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4); /* the formats are little-endian; so is every target we build for */
	return v;
}

static inline uint64_t rlog__get64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static inline void rlog__put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static inline void rlog__put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* One decoded record; payload points into the caller's bytes. */
struct rlog__record {
	uint32_t hdr;        /* the raw header word */
	uint16_t id;         /* the real ID (after FLAGGED is resolved) */
	uint16_t flag;       /* flag value if flagged, else 0 */
	bool flagged;        /* header ID was FLAGGED */
	bool has_time;       /* fTimeStamp */
	uint32_t time_low;   /* the 32-bit timestamp if has_time */
	uint16_t length;     /* payload bytes */
	const uint8_t *payload;
	uint32_t size;       /* bytes the whole record takes, fill included */
};

/*
 * Decode the record at p, of which avail bytes are readable.
 * Returns the record size (> 0), or -EBADMSG if the record is malformed
 * (reserved bit set, ID 0, a flagged record whose real ID is below RAW_U8)
 * or does not fit in avail bytes.  Never reads past p + avail.
 */
static inline int rlog__record_decode(const uint8_t *p, size_t avail, struct rlog__record *r)
{
	if (avail < 4)
		return -EBADMSG;
	uint32_t h = rlog__get32(p);
	unsigned id = rlog__hdr_id(h);
	unsigned len = rlog__hdr_length(h);
	bool ts = rlog__hdr_has_time(h);
	if ((h & RLOG_HDR_RESERVED_BIT) || id == RLOG_ID_INVALID)
		return -EBADMSG;
	uint32_t size = rlog__record_size(id, len, ts);
	if (size > avail)
		return -EBADMSG;
	size_t off = 4;
	r->hdr = h;
	r->has_time = ts;
	r->time_low = 0;
	if (ts) {
		r->time_low = rlog__get32(p + off);
		off += 4;
	}
	r->flagged = (id == RLOG_ID_FLAGGED);
	r->flag = 0;
	if (r->flagged) {
		uint32_t fw = rlog__get32(p + off);
		off += 4;
		id = fw & 0xffffu;
		r->flag = (uint16_t)(fw >> 16);
		/* ringlog's own records (LOG_MARKER, DATA_LOSS, FLAGGED,
		 * TIME_SYNC and the reserved IDs below RAW_U8) are never flagged. */
		if (id < RLOG_ID_RAW_U8 || id > RLOG_ID_MAX)
			return -EBADMSG;
	}
	r->id = (uint16_t)id;
	r->length = (uint16_t)len;
	r->payload = p + off;
	r->size = size;
	return (int)size;
}

/*
 * Advance a block's 64-bit time cursor by one record's 32-bit timestamp.
 * Returns -EBADMSG if the timestamp is 2^31 or more ticks past the cursor
 * (a conforming producer writes a TIME_SYNC first) or would take the
 * cursor past 2^64 - 1, else 0.
 */
static inline int rlog__time_advance(uint64_t *cur, uint32_t low)
{
	uint32_t d = low - (uint32_t)*cur;
	if (d >= (uint32_t)RLOG_TIME_SYNC_TICKS || *cur + d < *cur)
		return -EBADMSG; /* a jump, or past 2^64 - 1: tick times never wrap */
	*cur += d;
	return 0;
}

/*
 * Apply a record to the time cursor: TIME_SYNC sets it (its payload must be
 * 8 bytes whose low half matches the timestamp), any other time-stamped
 * record advances it.  Returns 0 or -EBADMSG.
 */
static inline int rlog__time_apply(uint64_t *cur, const struct rlog__record *r)
{
	if (r->id == RLOG_ID_TIME_SYNC && !r->flagged) {
		if (r->length != 8 || !r->has_time)
			return -EBADMSG;
		uint64_t t = rlog__get64(r->payload);
		if ((uint32_t)t != r->time_low)
			return -EBADMSG;
		*cur = t;
		return 0;
	}
	if (r->has_time)
		return rlog__time_advance(cur, r->time_low);
	return 0;
}

/*
 * The 4-aligned word at p, loaded exactly once: a volatile read, which the
 * compiler may neither repeat nor split.  The daemon reads producer
 * buffers in place, and a broken or hostile producer may change them
 * meanwhile: every value it checks must be the value it then uses.
 */
static inline uint32_t rlog__load32_once(const uint8_t *p)
{
	return *(const volatile uint32_t *)(const void *)p;
}

/*
 * The common record, in a few instructions, from bytes that may change
 * under the caller (each word is read once, rlog__load32_once): not
 * FLAGGED, reserved bit clear, a header ID that is an application's
 * (RLOG_ID_USER_MIN and above) or a RAW_* type (16..31; none of ringlog's
 * own records, the metadata and the daemon's, which are below 16 or from
 * 32 to 1023), fitting in avail bytes, and either without a timestamp or
 * with one less than 2^31 ticks past *cur.  Such a record is an event (RLOG_RECORD_EVENT) that
 * rlog__record_decode, rlog__record_check (in any block) and
 * rlog__time_apply all accept: this returns its size and advances *cur as
 * they would.  For any other record it returns 0 and leaves *cur alone:
 * the caller then applies the full rules.  *hdr gets the header word it
 * read (rlog__record_plain_run's shape).  p is 4-aligned and avail >= 4.
 */
static inline uint32_t rlog__record_plain(const uint8_t *p, size_t avail, uint64_t *cur,
					  uint32_t *hdr)
{
	uint32_t h = rlog__load32_once(p);
	*hdr = h;
	/* The ID with the reserved bit above it: 0x4000 and up is reserved. */
	uint32_t idr = (h >> RLOG_HDR_ID_SHIFT) & 0x7fffu;
	if (idr - RLOG_ID_RAW_U8 >= 16u && idr - RLOG_ID_USER_MIN >= 0x4000u - RLOG_ID_USER_MIN)
		return 0;
	if (!(h & RLOG_HDR_TIMESTAMP_BIT)) {
		uint32_t size = (4u + rlog__hdr_length(h) + 3u) & ~3u;
		return size <= avail ? size : 0;
	}
	uint32_t size = (8u + rlog__hdr_length(h) + 3u) & ~3u;
	if (size > avail)
		return 0;
	uint32_t d = rlog__load32_once(p + 4) - (uint32_t)*cur;
	if (d >= (uint32_t)RLOG_TIME_SYNC_TICKS || *cur + d < *cur)
		return 0;
	*cur += d;
	return size;
}

/*
 * A FLAGGED record (a span's begin or end, an event with a flag) in a
 * block that is not a metadata block: what rlog__record_decode,
 * rlog__record_check and rlog__time_apply accept of it (a real ID of
 * RAW_U8 and up, an event in any such block, its timestamp a step of the
 * cursor): returns its size, *cur advanced, *hdr its header word and *fw
 * its flag word (the real ID in the low half, the flag in the high).
 * Any other record: 0, *cur untouched (the full rules then apply).  p is
 * 4-aligned.
 */
static inline uint32_t rlog__record_flagged_plain(const uint8_t *p, size_t avail, uint64_t *cur,
						  uint32_t *hdr, uint32_t *fw)
{
	if (avail < 8)
		return 0;
	uint32_t h = rlog__get32(p);
	if (rlog__hdr_id(h) != RLOG_ID_FLAGGED || (h & RLOG_HDR_RESERVED_BIT))
		return 0;
	bool ts = rlog__hdr_has_time(h);
	uint32_t size = rlog__record_size(RLOG_ID_FLAGGED, rlog__hdr_length(h), ts);
	if (size > avail)
		return 0;
	uint32_t low = ts ? rlog__get32(p + 4) : 0;
	uint32_t w = rlog__get32(p + (ts ? 8 : 4));
	unsigned id = w & 0xffffu;
	if (id < RLOG_ID_RAW_U8 || id > RLOG_ID_MAX || (ts && rlog__time_advance(cur, low) < 0))
		return 0;
	*hdr = h;
	*fw = w;
	return size;
}

/* rlog__record_plain_run's rules for one header word of the run's shape:
 * 1 if it has it and its ID is one rlog__record_plain accepts. */
static inline uint32_t rlog__run_hdr_ok(uint32_t h, uint32_t shape)
{
	const uint32_t shape_mask = RLOG_HDR_LENGTH_MASK | RLOG_HDR_TIMESTAMP_BIT;
	uint32_t idr = (h >> RLOG_HDR_ID_SHIFT) & 0x7fffu;
	return ((h & shape_mask) == shape) & ((idr - RLOG_ID_RAW_U8 < 16u) |
					      (idr - RLOG_ID_USER_MIN < 0x4000u - RLOG_ID_USER_MIN));
}

/*
 * A run of common records of one shape, after rlog__record_plain accepted
 * one (its header word h0): records of h0's payload length and timestamp
 * bit, so of one size, one after the other from p.  They are checked four
 * at a time from words loaded independently (each once): a record's
 * address does not wait for the load of the header before it, as it does
 * in a walk, so the loads of bytes the producer wrote on another core
 * overlap instead of following each other (docs/PERFORMANCE.md, "What the
 * daemon costs").  Accepts exactly what as many rlog__record_plain calls
 * would, and advances *cur as they would: the ID rule per record, and per
 * timed record a step below 2^31 ticks from the one before (the low half
 * of *cur after a record is that record's timestamp), the 64-bit cursor
 * not passing 2^64 - 1 (the steps are not negative, so the group's sum
 * passes it if and only if one of its partial sums does).  Stops before
 * the first group of four holding any record that differs, which the
 * caller then takes one at a time (and, if none was accepted, a while
 * longer: a failed attempt costs a mispredicted branch).  Returns the
 * records accepted, a multiple of 4.  p is 4-aligned.
 */
static inline uint32_t rlog__record_plain_run(const uint8_t *p, size_t avail, uint32_t h0,
					      uint64_t *cur)
{
	uint32_t shape = h0 & (RLOG_HDR_LENGTH_MASK | RLOG_HDR_TIMESTAMP_BIT);
	bool timed = (h0 & RLOG_HDR_TIMESTAMP_BIT) != 0;
	size_t size = ((timed ? 8u : 4u) + rlog__hdr_length(h0) + 3u) & ~(size_t)3;
	uint64_t c = *cur;
	size_t off = 0;
	uint32_t n = 0;
	/* The next header alone first: in a buffer of mixed shapes this is
	 * where a run ends, at the cost of one load (if it passes, the group
	 * reads the word again, and that read is the one checked). */
	if (avail < 4 * size || !rlog__run_hdr_ok(rlog__load32_once(p), shape))
		return 0;
	/* Written out four times, not as a loop over k: the loads must be
	 * issued together, and the compiler kept a loop of volatile loads
	 * as one. */
	while (avail - off >= 4 * size) {
		const uint8_t *q = p + off;
		uint32_t good = rlog__run_hdr_ok(rlog__load32_once(q), shape) &
				rlog__run_hdr_ok(rlog__load32_once(q + size), shape) &
				rlog__run_hdr_ok(rlog__load32_once(q + 2 * size), shape) &
				rlog__run_hdr_ok(rlog__load32_once(q + 3 * size), shape);
		uint64_t sum = 0;
		if (timed) {
			uint32_t t0 = rlog__load32_once(q + 4), t1 = rlog__load32_once(q + size + 4);
			uint32_t t2 = rlog__load32_once(q + 2 * size + 4);
			uint32_t t3 = rlog__load32_once(q + 3 * size + 4);
			uint32_t d0 = t0 - (uint32_t)c, d1 = t1 - t0, d2 = t2 - t1, d3 = t3 - t2;
			const uint32_t lim = (uint32_t)RLOG_TIME_SYNC_TICKS;
			good &= (d0 < lim) & (d1 < lim) & (d2 < lim) & (d3 < lim);
			sum = (uint64_t)d0 + d1 + d2 + d3;
		}
		if (!good || c + sum < c)
			break;
		c += sum;
		off += 4 * size;
		n += 4;
	}
	*cur = c;
	return n;
}

/* Called by rlog__records_walk for each record: its 64-bit time and its
 * offset in the data; non-zero stops the walk. */
typedef int rlog__record_fn(void *arg, const struct rlog__record *r, uint64_t ticks,
			    uint32_t off);

/*
 * Walks the records of a block's data (size bytes at d) from time base:
 * calls fn for each, in order, and stops at the first record that does
 * not decode or time (validated before, by the caller: the walk only
 * needs their times), or when fn returns non-zero.  Returns 0 or fn's
 * value.
 */
static inline int rlog__records_walk(const uint8_t *d, uint32_t size, uint64_t base,
				     rlog__record_fn *fn, void *arg)
{
	uint64_t cursor = base;
	for (uint32_t off = 0; off < size;) {
		struct rlog__record r;
		int sz = rlog__record_decode(d + off, size - off, &r);
		if (sz < 0 || rlog__time_apply(&cursor, &r) < 0)
			return 0;
		int rc = fn(arg, &r, cursor, off);
		if (rc != 0)
			return rc;
		off += (uint32_t)sz;
	}
	return 0;
}

/*
 * What a record is (RLOG_RECORD_*, docs/FORMAT.md "Record kinds"): the one
 * definition behind the accounting identity, used by the daemon's count of
 * events written, the reader's counts and every tool.  A FLAGGED record is
 * always an application event, whatever its real ID.
 */
static inline int rlog__record_kind(unsigned id, bool flagged)
{
	if (flagged)
		return RLOG_RECORD_EVENT;
	switch (id) {
	case RLOG_ID_TIME_SYNC:
		return RLOG_RECORD_TIME_SYNC;
	case RLOG_ID_EVENT_SCHEMA:
	case RLOG_ID_THREAD_NAME:
	case RLOG_ID_PROCESS_NAME:
	case RLOG_ID_COUNTER_NAME:
		return RLOG_RECORD_METADATA;
	case RLOG_ID_COUNTER:
		return RLOG_RECORD_COUNTER;
	case RLOG_ID_LOG_MARKER:
		return RLOG_RECORD_MARKER;
	case RLOG_ID_DATA_LOSS:
		return RLOG_RECORD_LOSS;
	default:
		return RLOG_RECORD_EVENT;
	}
}

/* Payload bytes a COUNTER record needs: 24 with its value, else 16. */
static inline unsigned rlog__counter_len(uint16_t flags)
{
	return flags & RLOG_COUNTER_FLAG_VALUE ? 24u : 16u;
}

/*
 * The decoding rules that depend on a record's kind and on the block it is
 * in (docs/FORMAT.md "Decoding rules"), for a record rlog__record_decode()
 * accepted, in a block of flags block_flags (RLOG_BLOCK_FLAG_*):
 *   - a copy block (METADATA) holds metadata and TIME_SYNC only;
 *   - LOG_MARKER, DATA_LOSS and COUNTER only in daemon blocks (DAEMON), and
 *     at least as long as their payloads, a LOG_MARKER's tick frequency
 *     not 0;
 *   - of the metadata, COUNTER_NAME (the daemon's) only in daemon blocks,
 *     the producers' never there, except EVENT_SCHEMA in a system block
 *     (DAEMON and SYSTEM): the daemon's schemas of the system events.
 * The daemon checks the records of producer buffers as a thread block's
 * (flags 0).  Returns 0 or -EBADMSG.
 */
static inline int rlog__record_check(const struct rlog__record *r, uint16_t block_flags)
{
	bool daemon = (block_flags & RLOG_BLOCK_FLAG_DAEMON) != 0;
	int kind = rlog__record_kind(r->id, r->flagged);
	if (block_flags & RLOG_BLOCK_FLAG_METADATA)
		return kind == RLOG_RECORD_METADATA || kind == RLOG_RECORD_TIME_SYNC ? 0 : -EBADMSG;
	switch (kind) {
	case RLOG_RECORD_MARKER:
		return daemon && r->length >= sizeof(struct rlog_log_marker) &&
		       rlog__get64(r->payload) != 0 ? 0 : -EBADMSG;
	case RLOG_RECORD_LOSS:
		return daemon && r->length >= sizeof(struct rlog_data_loss) ? 0 : -EBADMSG;
	case RLOG_RECORD_COUNTER: {
		if (!daemon || r->length < 16)
			return -EBADMSG;
		uint16_t flags;
		memcpy(&flags, r->payload + 4, 2);
		return r->length >= rlog__counter_len(flags) ? 0 : -EBADMSG;
	}
	case RLOG_RECORD_METADATA:
		if (daemon && (block_flags & RLOG_BLOCK_FLAG_SYSTEM) && r->id == RLOG_ID_EVENT_SCHEMA)
			return 0;
		return daemon == (r->id == RLOG_ID_COUNTER_NAME) ? 0 : -EBADMSG;
	default:
		return 0;
	}
}

#endif
