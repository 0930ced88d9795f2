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
 *
 * The open pass keeps no list of blocks, only a table of threads (the
 * first and last block of each), the damaged regions and the metadata
 * records (schema.c).  Valid blocks and damaged regions tile the file from
 * the end of the file header to its end, so rlog__block_at() finds the
 * valid blocks again by hopping headers, stepping over each damaged region
 * by its length:
 *
 *   | hdr | blk A | blk B | damaged ......... | blk C | blk A | trunc. |
 *         ^ pos   ^ pos+48+data_size          ^ offset+length
 */
#define _DEFAULT_SOURCE /* madvise(MADV_DONTNEED) */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
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

/* What walking a block's records found. */
struct walk {
	uint32_t count;       /* well-formed records */
	uint32_t bytes;       /* the bytes they take */
	enum verdict why;     /* BLK_OK: all bytes walked; else BLK_RECORD or BLK_TIME */
	uint64_t first_ticks; /* time of the first and last record walked */
	uint64_t last_ticks;
	bool meta;            /* an EVENT_SCHEMA, THREAD_NAME or PROCESS_NAME seen */
};

struct check {
	enum verdict v;
	uint32_t data_size;
	uint32_t record_count;
	uint32_t walked;      /* records walked (BLK_COUNT) */
	size_t bad_offset;    /* file offset of the bad record (BLK_RECORD, BLK_TIME) */
	struct walk w;        /* BLK_OK: the walk */
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

static bool is_meta(const struct rlog__record *rec)
{
	return !rec->flagged && (rec->id == RLOG_ID_EVENT_SCHEMA || rec->id == RLOG_ID_THREAD_NAME ||
				 rec->id == RLOG_ID_PROCESS_NAME);
}

/*
 * Walks the records in d[0..len) from time base.  Stops at the first record
 * that is malformed, incomplete or jumps in time.  Fills *w: the well-formed
 * records before it, their bytes, why it stopped (BLK_OK if all len bytes
 * were walked, else BLK_RECORD or BLK_TIME, the record at fault at offset
 * w->bytes in d), their first and last times, whether any is metadata.
 */
static void walk_records(const uint8_t *d, uint32_t len, uint64_t base, struct walk *w)
{
	uint64_t cursor = base;
	uint32_t pos = 0, n = 0;
	bool meta = false;

	w->why = BLK_OK;
	w->first_ticks = base;
	while (pos < len) {
		struct rlog__record rec;
		int sz = rlog__record_decode(d + pos, len - pos, &rec);
		if (sz < 0) {
			w->why = BLK_RECORD;
			break;
		}
		if (rlog__time_apply(&cursor, &rec) < 0) {
			/* TIME_SYNC with a bad payload is a malformed record;
			 * anything else here is a jump in time. */
			w->why = (rec.id == RLOG_ID_TIME_SYNC && !rec.flagged) ? BLK_RECORD : BLK_TIME;
			break;
		}
		if (n == 0)
			w->first_ticks = cursor;
		meta |= is_meta(&rec);
		pos += (uint32_t)sz;
		n++;
	}
	w->bytes = pos;
	w->count = n;
	w->last_ticks = cursor;
	w->meta = meta;
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
	walk_records(p + RLOG__BLOCK_HDR_SIZE, h.data_size, h.base_time, &c->w);
	if (c->w.why != BLK_OK) {
		c->v = c->w.why;
		c->bad_offset = pos + RLOG__BLOCK_HDR_SIZE + c->w.bytes;
		return;
	}
	if (c->w.count != h.record_count) {
		c->v = BLK_COUNT;
		c->walked = c->w.count;
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

static uint32_t thread_hash(uint32_t pid, uint32_t tid)
{
	uint64_t k = ((uint64_t)pid << 32 | tid) * UINT64_C(0x9e3779b97f4a7c15);
	return (uint32_t)(k >> 32);
}

static int thread_hash_rebuild(struct rlog_reader *r, size_t cap)
{
	uint32_t *h = calloc(cap, sizeof(*h));
	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < r->nthreads; i++) {
		size_t j = thread_hash(r->threads[i].pid, r->threads[i].tid) & (cap - 1);
		while (h[j])
			j = (j + 1) & (cap - 1);
		h[j] = (uint32_t)i + 1;
	}
	free(r->thread_hash);
	r->thread_hash = h;
	r->thread_hash_cap = cap;
	return 0;
}

struct rlog__thread *rlog__thread_find(const struct rlog_reader *r, uint32_t pid, uint32_t tid)
{
	if (r->thread_hash_cap == 0)
		return NULL;
	size_t mask = r->thread_hash_cap - 1;
	for (size_t j = thread_hash(pid, tid) & mask; r->thread_hash[j]; j = (j + 1) & mask) {
		struct rlog__thread *t = &r->threads[r->thread_hash[j] - 1];
		if (t->pid == pid && t->tid == tid)
			return t;
	}
	return NULL;
}

/* The thread (pid, tid), added with its first block at offset if new. */
static struct rlog__thread *thread_get(struct rlog_reader *r, uint32_t pid, uint32_t tid,
				       size_t offset)
{
	struct rlog__thread *t = rlog__thread_find(r, pid, tid);
	if (t)
		return t;
	if (r->nthreads >= UINT32_MAX - 1)
		return NULL;
	if (r->nthreads == r->threads_cap) {
		size_t cap = r->threads_cap ? r->threads_cap * 2 : 16;
		t = realloc(r->threads, cap * sizeof(*t));
		if (!t)
			return NULL;
		r->threads = t;
		r->threads_cap = cap;
	}
	t = &r->threads[r->nthreads++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	t->first_block = offset;
	t->last_block = offset;
	/* Keep the table at most half full. */
	if (2 * r->nthreads > r->thread_hash_cap) {
		if (thread_hash_rebuild(r, r->thread_hash_cap ? 2 * r->thread_hash_cap : 64) < 0) {
			r->nthreads--;
			return NULL;
		}
	} else {
		size_t mask = r->thread_hash_cap - 1;
		size_t j = thread_hash(pid, tid) & mask;
		while (r->thread_hash[j])
			j = (j + 1) & mask;
		r->thread_hash[j] = (uint32_t)r->nthreads;
	}
	return t;
}

static int thread_cmp(const void *a, const void *b)
{
	const struct rlog__thread *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
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

/* Hands the metadata records of a valid block to schema.c. */
static int meta_walk(struct rlog_reader *r, struct rlog__thread *t, const struct rlog__block *b)
{
	const uint8_t *d = r->data + b->offset + RLOG__BLOCK_HDR_SIZE;
	uint64_t cursor = b->base_time;
	uint32_t pos = 0;

	while (pos < b->walk_size) {
		struct rlog__record rec;
		int sz = rlog__record_decode(d + pos, b->walk_size - pos, &rec);
		if (sz < 0 || rlog__time_apply(&cursor, &rec) < 0)
			return 0; /* walked before: cannot happen */
		if (is_meta(&rec)) {
			int rc = rlog__meta_record(r, t, &rec, cursor,
						   b->offset + RLOG__BLOCK_HDR_SIZE + pos);
			if (rc < 0)
				return rc;
		}
		pos += (uint32_t)sz;
	}
	return 0;
}

/*
 * A valid block (or the readable part of the truncated last block) at pos,
 * walked as w: counts it, files it under its thread, takes its LOG_MARKER
 * and metadata, and shows it to the visitor.  Returns 0, -ENOMEM or the
 * visitor's value.
 */
static int block_found(struct rlog_reader *r, size_t pos, uint32_t data_size,
		       const struct walk *w, bool truncated)
{
	struct block_hdr h;
	struct rlog__block b;
	int rc;

	block_hdr_get(r->data + pos, &h);
	b.offset = pos;
	b.base_time = h.base_time;
	b.pid = h.pid;
	b.tid = h.tid;
	b.data_size = data_size;
	b.walk_size = w->bytes;
	b.record_count = w->count;
	b.flags = h.flags;

	struct rlog__thread *t = thread_get(r, h.pid, h.tid, pos);
	if (!t)
		return -ENOMEM;
	t->last_block = pos;
	r->info.block_count++;
	marker_find(r, &b);
	if (w->meta && (rc = meta_walk(r, t, &b)) < 0)
		return rc;
	if (r->visit) {
		struct rlog_block vb = {
			.offset = pos,
			.pid = h.pid,
			.tid = h.tid,
			.flags = h.flags,
			.truncated = truncated,
			.record_count = w->count,
			.size = w->bytes,
			.data = r->data + pos + RLOG__BLOCK_HDR_SIZE,
			.base_time = h.base_time,
			.first_ticks = w->first_ticks,
			.last_ticks = w->last_ticks,
		};
		rc = r->visit(r->visit_arg, &vb);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static size_t page_size(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	return pg > 0 ? (size_t)pg : 4096;
}

void rlog__drop_range(struct rlog_reader *r, size_t from, size_t to)
{
	size_t page = page_size();

	if (!r->map)
		return;
	from = (from + page - 1) / page * page;
	to = to / page * page;
	if (to > r->map_size)
		to = r->map_size / page * page;
	/* Clean pages of a read-only private file mapping: dropping them
	 * loses nothing, a later read faults them back in from the file. */
	if (from < to)
		(void)madvise((uint8_t *)r->map + from, to - from, MADV_DONTNEED);
}

void rlog__drop_behind(struct rlog_reader *r, size_t upto)
{
	static const size_t step = (size_t)16 << 20;

	if (!r->map || upto < r->dropped + step)
		return;
	size_t to = upto / page_size() * page_size();
	rlog__drop_range(r, r->dropped, to);
	r->dropped = to;
}

int rlog__block_at(const struct rlog_reader *r, size_t pos, size_t *damage,
		   struct rlog__block *b)
{
	for (;;) {
		if (pos >= r->size)
			return 0;
		size_t i = *damage;
		while (i < r->ndamage_open && r->damage[i]->offset < pos)
			i++;
		*damage = i;
		if (i < r->ndamage_open && r->damage[i]->offset == pos) {
			const struct rlog__damage *d = r->damage[i];
			if (d->kind == RLOG_DAMAGE_TRUNCATED) {
				if (r->trunc_walk == 0 || r->trunc_offset != pos)
					return 0;
				struct block_hdr h;
				block_hdr_get(r->data + pos, &h);
				b->offset = pos;
				b->base_time = h.base_time;
				b->pid = h.pid;
				b->tid = h.tid;
				/* Its extent runs to the end of the file. */
				b->data_size = (uint32_t)(r->size - pos - RLOG__BLOCK_HDR_SIZE);
				b->walk_size = r->trunc_walk;
				b->record_count = r->trunc_count;
				b->flags = h.flags;
				return 1;
			}
			if (d->length == 0)
				return 0;
			pos += d->length;
			continue;
		}
		struct block_hdr h;
		b->offset = pos; /* where it failed, if it does */
		if (r->size - pos < RLOG__BLOCK_HDR_SIZE)
			return -EBADMSG;
		block_hdr_get(r->data + pos, &h);
		if (h.magic != RLOG_BLOCK_MAGIC || !block_hdr_sane(&h) ||
		    h.data_size > r->size - pos - RLOG__BLOCK_HDR_SIZE)
			return -EBADMSG;
		b->offset = pos;
		b->base_time = h.base_time;
		b->pid = h.pid;
		b->tid = h.tid;
		b->data_size = h.data_size;
		b->walk_size = h.data_size;
		b->record_count = h.record_count;
		b->flags = h.flags;
		return 1;
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
	struct walk w;
	char skipped[64];
	int rc;

	/* avail < data_size, a uint32_t */
	walk_records(d, (uint32_t)avail, rlog__get64(r->data + pos + 24), &w);
	uint32_t n = w.count, used = w.bytes;
	if (n > 0) {
		r->trunc_offset = pos;
		r->trunc_walk = used;
		r->trunc_count = n;
		rc = block_found(r, pos, used, &w, true);
		if (rc < 0)
			return rc;
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
	r->first_block = hsize;
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
			rc = block_found(r, pos, c.data_size, &c.w, false);
			if (rc < 0)
				return rc;
			pos += RLOG__BLOCK_HDR_SIZE + c.data_size;
			rlog__drop_behind(r, pos);
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
	r->ndamage_open = r->ndamage;
	if (!r->have_marker)
		return -ENODATA;
	/* Threads in (pid, tid) order, for rlog_reader_thread(). */
	if (r->nthreads > 1) {
		qsort(r->threads, r->nthreads, sizeof(*r->threads), thread_cmp);
		rc = thread_hash_rebuild(r, r->thread_hash_cap);
		if (rc < 0)
			return rc;
	}
	r->info.thread_count = r->nthreads;
	return 0;
}
