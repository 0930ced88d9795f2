/*
 * file.c - the log file's header, its block index, validation and resync.
 *
 * A log file (docs/FORMAT.md, include/ringlog/abi.h):
 *
 *   +0            file header (64 bytes; blocks start at its header_size)
 *   header_size   block 0: 48-byte block header, data_size bytes of records
 *                 block 1: ...
 *
 * Indexing walks the file once, block by block.  A block is valid when its
 * header is sane (magic, header_size 48, data_size a multiple of 4 that fits
 * in the file, record_count possible), its crc32 matches, and its records
 * decode back to back to exactly data_size bytes, record_count of them, with
 * a time cursor that never jumps 2^31 ticks or more without a TIME_SYNC.
 *
 * A block that fails is skipped whole and recorded as one damaged region.
 * When the failure leaves its extent in doubt (bad magic, insane header,
 * checksum mismatch) the reader scans forward 4 bytes at a time from just
 * past the bad header for the next plausible block (magic, sane header and
 * checksum correct, or a sane header running into the end of the file) and
 * goes on from there; everything in between is part of the damaged region.
 * A block with a correct checksum but bad records has a trustworthy extent:
 * reading goes on right after it.
 *
 * A sane block header whose data runs past the end of the file, with no
 * valid block after it, is a truncated last block (the daemon died while
 * writing, or the file is still being written): its complete, well-formed
 * records are kept, though its checksum cannot be verified.
 *
 * The first valid LOG_MARKER record in a daemon block (normally the only
 * record of block 0) gives the tick frequency and the start of the trace.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "internal.h"

#define FILE_HDR_MIN 64u

/* What check_block() found at a file offset. */
enum verdict {
	BLK_OK,       /* a valid block */
	BLK_SHORT,    /* fewer than 48 bytes left in the file */
	BLK_MAGIC,    /* no block magic */
	BLK_HEADER,   /* magic, but an impossible header */
	BLK_PAST_EOF, /* a sane header whose data runs past the end of the file */
	BLK_CRC,      /* checksum mismatch */
	BLK_RECORD,   /* checksum correct, a malformed record */
	BLK_TIME,     /* checksum correct, a time jump of 2^31 ticks or more */
	BLK_COUNT,    /* checksum correct, record_count disagrees with the data */
};

struct check {
	enum verdict v;
	uint32_t data_size;
	uint32_t record_count;
	uint32_t walked;      /* records walked (BLK_COUNT) */
	size_t bad_offset;    /* file offset of the bad record (BLK_RECORD, BLK_TIME) */
};

struct block_hdr {
	uint32_t magic;
	uint16_t header_size;
	uint16_t flags;
	uint64_t seq;
	uint32_t pid;
	uint32_t tid;
	uint64_t base_time;
	uint32_t data_size;
	uint32_t record_count;
	uint32_t crc32;
};

/* Field by field at the offsets of struct rlog_block_header, so that the
 * reader depends on the documented layout only.  Needs 48 readable bytes. */
static void block_hdr_get(const uint8_t *p, struct block_hdr *h)
{
	h->magic = rlog__get32(p + 0);
	h->header_size = (uint16_t)(rlog__get32(p + 4) & 0xffffu);
	h->flags = (uint16_t)(rlog__get32(p + 4) >> 16);
	h->seq = rlog__get64(p + 8);
	h->pid = rlog__get32(p + 16);
	h->tid = rlog__get32(p + 20);
	h->base_time = rlog__get64(p + 24);
	h->data_size = rlog__get32(p + 32);
	h->record_count = rlog__get32(p + 36);
	h->crc32 = rlog__get32(p + 40);
}

static bool block_hdr_sane(const struct block_hdr *h)
{
	return h->header_size == RLOG__BLOCK_HDR_SIZE && h->data_size % 4 == 0 &&
	       h->record_count <= h->data_size / 4;
}

/*
 * Walks the records in d[0..len) from time base.  Stops at the first record
 * that is malformed, incomplete or jumps in time.  Returns the bytes taken
 * by the well-formed records before it and their count in *count; *why is
 * BLK_OK if all len bytes were walked, else BLK_RECORD or BLK_TIME, with
 * the offset in d of the record at fault in *bad.
 */
static uint32_t walk_records(const uint8_t *d, uint32_t len, uint64_t base, uint32_t *count,
			     enum verdict *why, uint32_t *bad)
{
	uint64_t cursor = base;
	uint32_t pos = 0, n = 0;

	*why = BLK_OK;
	while (pos < len) {
		struct rlog__record rec;
		int sz = rlog__record_decode(d + pos, len - pos, &rec);
		if (sz < 0) {
			*why = BLK_RECORD;
			break;
		}
		if (rlog__time_apply(&cursor, &rec) < 0) {
			/* TIME_SYNC with a bad payload is a malformed record;
			 * anything else here is a jump in time. */
			*why = (rec.id == RLOG_ID_TIME_SYNC && !rec.flagged) ? BLK_RECORD : BLK_TIME;
			break;
		}
		pos += (uint32_t)sz;
		n++;
	}
	*bad = pos;
	*count = n;
	return pos;
}

/* Everything about the block at file offset pos; see enum verdict. */
static void check_block(const struct rlog_reader *r, size_t pos, struct check *c)
{
	size_t avail = r->size - pos;
	const uint8_t *p = r->data + pos;
	struct block_hdr h;

	memset(c, 0, sizeof(*c));
	if (avail < RLOG__BLOCK_HDR_SIZE) {
		c->v = BLK_SHORT;
		return;
	}
	block_hdr_get(p, &h);
	c->data_size = h.data_size;
	c->record_count = h.record_count;
	if (h.magic != RLOG_BLOCK_MAGIC) {
		c->v = BLK_MAGIC;
		return;
	}
	if (!block_hdr_sane(&h)) {
		c->v = BLK_HEADER;
		return;
	}
	if (h.data_size > avail - RLOG__BLOCK_HDR_SIZE) {
		c->v = BLK_PAST_EOF;
		return;
	}
	/* zlib's crc32 takes uInt lengths; data_size is a uint32_t. */
	uLong crc = crc32(0L, p, 40);
	crc = crc32(crc, p + RLOG__BLOCK_HDR_SIZE, (uInt)h.data_size);
	if ((uint32_t)crc != h.crc32) {
		c->v = BLK_CRC;
		return;
	}
	uint32_t n, bad;
	enum verdict why;
	walk_records(p + RLOG__BLOCK_HDR_SIZE, h.data_size, h.base_time, &n, &why, &bad);
	if (why != BLK_OK) {
		c->v = why;
		c->bad_offset = pos + RLOG__BLOCK_HDR_SIZE + bad;
		return;
	}
	if (n != h.record_count) {
		c->v = BLK_COUNT;
		c->walked = n;
		return;
	}
	c->v = BLK_OK;
}

/* The first offset at or after from (in 4-byte steps) where a block could
 * start: a valid block, a block with a correct checksum but bad records, a
 * sane header running into the end of the file, or the block magic in the
 * last 47 bytes.  r->size if none.  *verified tells whether the block
 * found has a correct checksum. */
static size_t resync(const struct rlog_reader *r, size_t from, bool *verified)
{
	*verified = false;
	for (size_t p = from; p + 4 <= r->size; p += 4) {
		if (rlog__get32(r->data + p) != RLOG_BLOCK_MAGIC)
			continue;
		struct check c;
		check_block(r, p, &c);
		switch (c.v) {
		case BLK_OK:
		case BLK_RECORD:
		case BLK_TIME:
		case BLK_COUNT:
			*verified = true;
			return p;
		case BLK_PAST_EOF:
		case BLK_SHORT:
			return p;
		case BLK_MAGIC:
		case BLK_HEADER:
		case BLK_CRC:
			break;
		}
	}
	return r->size;
}

int rlog__damage_add(struct rlog_reader *r, uint64_t offset, uint64_t length, int kind,
		     int64_t records_skipped, const char *fmt, ...)
{
	if (r->ndamage == r->damage_cap) {
		size_t cap = r->damage_cap ? r->damage_cap * 2 : 8;
		struct rlog__damage **d = realloc(r->damage, cap * sizeof(*d));
		if (!d)
			return -ENOMEM;
		r->damage = d;
		r->damage_cap = cap;
	}
	/* One allocation per region, so that messages handed out stay put
	 * when the list grows. */
	struct rlog__damage *e = malloc(sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->offset = offset;
	e->length = length;
	e->kind = kind;
	e->records_skipped = records_skipped;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	r->damage[r->ndamage++] = e;
	return 0;
}

static int block_add(struct rlog_reader *r, size_t pos, uint32_t walk_size, uint32_t count)
{
	struct block_hdr h;

	if (r->nblocks == r->blocks_cap) {
		size_t cap = r->blocks_cap ? r->blocks_cap * 2 : 64;
		struct rlog__block *b = realloc(r->blocks, cap * sizeof(*b));
		if (!b)
			return -ENOMEM;
		r->blocks = b;
		r->blocks_cap = cap;
	}
	block_hdr_get(r->data + pos, &h);
	struct rlog__block *b = &r->blocks[r->nblocks++];
	b->offset = pos;
	b->next = RLOG__NO_BLOCK;
	b->base_time = h.base_time;
	b->pid = h.pid;
	b->tid = h.tid;
	b->walk_size = walk_size;
	b->record_count = count;
	b->flags = h.flags;
	return 0;
}

/* Takes the clock and session from the first usable LOG_MARKER record of a
 * daemon block. */
static void marker_find(struct rlog_reader *r, const struct rlog__block *b)
{
	const uint8_t *d = r->data + b->offset + RLOG__BLOCK_HDR_SIZE;
	uint32_t pos = 0;

	if (r->have_marker || !(b->flags & RLOG_BLOCK_FLAG_DAEMON))
		return;
	while (pos < b->walk_size) {
		struct rlog__record rec;
		int sz = rlog__record_decode(d + pos, b->walk_size - pos, &rec);
		if (sz < 0)
			return;
		pos += (uint32_t)sz;
		if (rec.id != RLOG_ID_LOG_MARKER || rec.flagged ||
		    rec.length < sizeof(struct rlog_log_marker))
			continue;
		const uint8_t *m = rec.payload;
		uint64_t freq = rlog__get64(m + 0);
		if (freq == 0)
			continue; /* no use: nothing could be converted to ns */
		r->info.tick_freq_hz = freq;
		r->info.start_ticks = rlog__get64(m + 8);
		r->info.sync_realtime_ns = rlog__get64(m + 16);
		r->info.sync_monotonic_ns = rlog__get64(m + 24);
		r->info.tick_source = rlog__get32(m + 32);
		r->info.buffer_size = rlog__get32(m + 36);
		r->info.buffer_count = rlog__get32(m + 40);
		memcpy(r->info.session_name, m + 48, 64);
		r->info.session_name[64] = '\0';
		r->have_marker = true;
		return;
	}
}

/* "(skipped ...)" for a damaged region [pos, next) whose header said
 * record_count records in an extent ending at end (0: header not sane). */
static void skipped_text(char *buf, size_t n, const struct rlog_reader *r, size_t pos,
			 size_t end, size_t next, bool sane, uint32_t record_count)
{
	char to[64];

	if (next >= r->size)
		snprintf(to, sizeof(to), "the end of the file");
	else
		snprintf(to, sizeof(to), "the next block at offset %zu", next);
	if (sane && next == end)
		snprintf(buf, n, "skipped %" PRIu32 " records", record_count);
	else if (sane)
		snprintf(buf, n, "skipped %" PRIu32 " records and %zu bytes up to %s",
			 record_count, next - pos, to);
	else
		snprintf(buf, n, "skipped %zu bytes up to %s", next - pos, to);
}

/* The block at pos failed with c; records the damage and returns where
 * reading goes on (r->size: nowhere), or -ENOMEM. */
static int64_t damaged(struct rlog_reader *r, size_t pos, const struct check *c)
{
	const char *reason = NULL;
	char why[96], skipped[128];
	bool sane = c->v >= BLK_PAST_EOF;
	size_t end = sane && c->v != BLK_PAST_EOF ? pos + RLOG__BLOCK_HDR_SIZE + c->data_size : 0;
	size_t next;
	bool verified;

	switch (c->v) {
	case BLK_RECORD:
	case BLK_TIME:
	case BLK_COUNT:
		/* The checksum vouches for the extent. */
		next = end;
		break;
	default:
		next = resync(r, pos + 4, &verified);
		break;
	}
	switch (c->v) {
	case BLK_MAGIC:
		reason = "no block header";
		break;
	case BLK_HEADER:
		snprintf(why, sizeof(why), "bad block header (data_size %" PRIu32
			 ", record_count %" PRIu32 ")", c->data_size, c->record_count);
		reason = why;
		break;
	case BLK_PAST_EOF:
		snprintf(why, sizeof(why), "bad block header (data_size %" PRIu32
			 " runs past the end of the file)", c->data_size);
		reason = why;
		break;
	case BLK_CRC:
		reason = "checksum mismatch";
		break;
	case BLK_RECORD:
		snprintf(why, sizeof(why), "malformed record at offset %zu", c->bad_offset);
		reason = why;
		break;
	case BLK_TIME:
		snprintf(why, sizeof(why), "record at offset %zu is 2^31 ticks or more "
			 "after the previous one, without a TIME_SYNC", c->bad_offset);
		reason = why;
		break;
	case BLK_COUNT:
		snprintf(why, sizeof(why), "header says %" PRIu32 " records, data holds %" PRIu32,
			 c->record_count, c->walked);
		reason = why;
		break;
	case BLK_OK:
	case BLK_SHORT:
		break;
	}
	/* The header's count, unless the checksum vouches for the data and the
	 * data says otherwise. */
	uint32_t lost = c->v == BLK_COUNT ? c->walked : c->record_count;
	skipped_text(skipped, sizeof(skipped), r, pos, end, next, sane, lost);
	int rc = rlog__damage_add(r, pos, next - pos, RLOG_DAMAGE_BLOCK,
				  sane ? (int64_t)lost : -1,
				  "damaged block at offset %zu: %s (%s)", pos, reason, skipped);
	return rc < 0 ? rc : (int64_t)next;
}

/* The last block at pos runs past the end of the file: keeps its readable
 * records.  Returns 0 or -ENOMEM. */
static int truncated(struct rlog_reader *r, size_t pos, const struct check *c)
{
	size_t avail = r->size - pos - RLOG__BLOCK_HDR_SIZE;
	const uint8_t *d = r->data + pos + RLOG__BLOCK_HDR_SIZE;
	uint32_t n, bad;
	enum verdict why;
	char skipped[64];
	int rc;

	/* avail < data_size, a uint32_t */
	uint32_t used = walk_records(d, (uint32_t)avail, rlog__get64(r->data + pos + 24), &n,
				     &why, &bad);
	if (n > 0) {
		rc = block_add(r, pos, used, n);
		if (rc < 0)
			return rc;
		marker_find(r, &r->blocks[r->nblocks - 1]);
	}
	int64_t lost = c->record_count >= n ? (int64_t)(c->record_count - n) : -1;
	if (lost >= 0)
		snprintf(skipped, sizeof(skipped), "skipped %" PRId64 " records", lost);
	else
		snprintf(skipped, sizeof(skipped), "skipped an unknown number of records");
	return rlog__damage_add(r, pos, r->size - pos - RLOG__BLOCK_HDR_SIZE - used,
				RLOG_DAMAGE_TRUNCATED, lost,
				"truncated block at offset %zu: %zu of %" PRIu32
				" data bytes present, checksum not verifiable "
				"(recovered %" PRIu32 " records, %s)",
				pos, avail, c->data_size, n, skipped);
}

static int file_header(struct rlog_reader *r, size_t *first_block)
{
	const uint8_t *p = r->data;

	if (r->size < FILE_HDR_MIN || memcmp(p, RLOG_FILE_MAGIC, 8) != 0)
		return -EBADMSG;
	uint32_t v = rlog__get32(p + 8);
	uint16_t major = (uint16_t)(v & 0xffffu), minor = (uint16_t)(v >> 16);
	if (major != RLOG_FILE_VERSION_MAJOR)
		return -EPROTO;
	uint32_t hsize = rlog__get32(p + 12);
	if (hsize < FILE_HDR_MIN || hsize > r->size)
		return -EBADMSG;
	r->info.version_major = major;
	r->info.version_minor = minor;
	r->info.created_realtime_ns = rlog__get64(p + 16);
	r->info.file_size = r->size;
	*first_block = hsize;
	return 0;
}

int rlog__file_index(struct rlog_reader *r)
{
	size_t pos;
	int rc = file_header(r, &pos);
	if (rc < 0)
		return rc;

	while (pos < r->size) {
		struct check c;
		check_block(r, pos, &c);
		if (c.v == BLK_OK) {
			rc = block_add(r, pos, c.data_size, c.record_count);
			if (rc < 0)
				return rc;
			marker_find(r, &r->blocks[r->nblocks - 1]);
			pos += RLOG__BLOCK_HDR_SIZE + c.data_size;
			continue;
		}
		if (c.v == BLK_SHORT) {
			size_t avail = r->size - pos;
			if (avail >= 4 && rlog__get32(r->data + pos) == RLOG_BLOCK_MAGIC)
				rc = rlog__damage_add(r, pos, avail, RLOG_DAMAGE_TRUNCATED, -1,
						      "truncated block at offset %zu: %zu of 48 "
						      "header bytes present (skipped an unknown "
						      "number of records)", pos, avail);
			else
				rc = rlog__damage_add(r, pos, avail, RLOG_DAMAGE_BLOCK, -1,
						      "damaged block at offset %zu: no block header "
						      "(skipped %zu bytes up to the end of the file)",
						      pos, avail);
			if (rc < 0)
				return rc;
			break;
		}
		bool verified = true;
		if (c.v == BLK_PAST_EOF)
			resync(r, pos + 4, &verified);
		if (!verified) {
			/* Nothing with a checksum after it: the last block, cut
			 * short (a header-like pattern in its data is no block). */
			rc = truncated(r, pos, &c);
			if (rc < 0)
				return rc;
			break;
		}
		int64_t next = damaged(r, pos, &c);
		if (next < 0)
			return (int)next;
		pos = (size_t)next;
	}
	r->info.block_count = r->nblocks;
	return r->have_marker ? 0 : -ENODATA;
}
