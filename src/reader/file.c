/*
 * file.c - the open pass: the file header, then every block in file order
 * (docs/FORMAT.md, "Log files").
 *
 *   +0            file header (64 bytes in version 1.0; 176 with the copy
 *                 of the LOG_MARKER of version 1.1; blocks start at its
 *                 header_size)
 *   header_size   block 0: the daemon's, its LOG_MARKER first
 *                 block 1: ...
 *
 * Each block is checked (block.c).  A valid one is checked against the
 * block sequence (seq.c), filed under its thread (pid, tid), and its
 * metadata records go to schema.c; block 0 gives the clock; a visitor and
 * the counts of rlog_reader_open_count() see it while it is in the cache.
 *
 * A block that fails is skipped whole and recorded as a damaged region.
 * When the failure leaves its extent in doubt (bad magic, insane header,
 * checksum mismatch) the pass resynchronises: it scans forward 4 bytes at
 * a time from just past the bad header for the next plausible block
 * (rlog__resync); everything in between is the damaged region.  A block
 * with a correct checksum but a bad record has a trustworthy extent: the
 * pass goes on right after it.  A sane block header whose data runs past
 * the end of the file, with no valid block after it, is the truncated last
 * block: its complete, well-formed records are kept, though its checksum
 * cannot be verified.
 *
 * The clock is block 0's LOG_MARKER; if block 0 cannot be read, the copy
 * in the file header (version 1.1); without either the file cannot be
 * timed (-ENODATA).
 *
 * Nothing is kept per block: one entry per thread, per damage report and
 * region, per gap in the block sequence and per schema change.
 */
#define _DEFAULT_SOURCE /* madvise(MADV_DONTNEED) */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "crc32c.h"
#include "internal.h"
#include "vec.h"

/* ---------------------------------------------------------------- */
/* Threads                                                          */
/* ---------------------------------------------------------------- */

static uint64_t thread_key(uint32_t pid, uint32_t tid)
{
	return (uint64_t)pid << 32 | tid;
}

struct rlog__thread *rlog__thread_find(const struct rlog_reader *r, uint32_t pid, uint32_t tid)
{
	uint32_t i = rlog__map_get(&r->thread_map, thread_key(pid, tid));
	return i == RLOG__MAP_NONE ? NULL : &r->threads[i];
}

/* The thread (pid, tid), added with its first block at offset if new;
 * NULL: out of memory. */
static struct rlog__thread *thread_get(struct rlog_reader *r, uint32_t pid, uint32_t tid,
				       size_t offset)
{
	struct rlog__thread *t = rlog__thread_find(r, pid, tid);
	if (t)
		return t;
	if (r->nthreads >= RLOG__MAP_NONE - 1)
		return NULL;
	if (rlog__vec_room(&r->threads, r->nthreads, &r->threads_cap, sizeof(*r->threads), 16) < 0)
		return NULL;
	if (rlog__map_put(&r->thread_map, thread_key(pid, tid), (uint32_t)r->nthreads) < 0)
		return NULL;
	t = &r->threads[r->nthreads++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	t->first_block = offset;
	t->last_block = offset;
	return t;
}

static int thread_cmp(const void *a, const void *b)
{
	const struct rlog__thread *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Threads in (pid, tid) order, for rlog_reader_thread().  Returns 0 or
 * -ENOMEM. */
static int threads_sort(struct rlog_reader *r)
{
	if (r->nthreads < 2)
		return 0;
	qsort(r->threads, r->nthreads, sizeof(*r->threads), thread_cmp);
	rlog__map_clear(&r->thread_map);
	for (size_t i = 0; i < r->nthreads; i++)
		if (rlog__map_put(&r->thread_map, thread_key(r->threads[i].pid, r->threads[i].tid),
				  (uint32_t)i) < 0)
			return -ENOMEM;
	return 0;
}

/* ---------------------------------------------------------------- */
/* The clock                                                        */
/* ---------------------------------------------------------------- */

/* The LOG_MARKER's clock error (+44, docs/FORMAT.md), which struct
 * rlog_marker does not carry (its callers allocate it). */
static uint32_t marker_clock_word(const uint8_t *payload)
{
	return rlog__get32(payload + offsetof(struct rlog_log_marker, clock_esterror_us));
}

static void info_set_marker(struct rlog_reader *r, const struct rlog_marker *m, uint32_t clock)
{
	r->info.clock_esterror_us = (uint16_t)clock;
	r->info.clock_maxerror_us = (uint16_t)(clock >> 16);
	r->info.tick_freq_hz = m->tick_freq_hz;
	r->info.start_ticks = m->sync_ticks;
	r->info.sync_realtime_ns = m->sync_realtime_ns;
	r->info.sync_monotonic_ns = m->sync_monotonic_ns;
	r->info.tick_source = m->tick_source;
	r->info.buffer_size = m->buffer_size;
	r->info.buffer_count = m->buffer_count;
	memcpy(r->info.session_name, m->session_name, sizeof(r->info.session_name));
}

/* Block 0's LOG_MARKER, its first record (checked by the walk). */
static void marker_take(struct rlog_reader *r, const uint8_t *data, uint32_t size)
{
	struct rlog__record rec;
	struct rlog_marker m;
	if (rlog__record_decode(data, size, &rec) < 0 ||
	    rlog__marker_decode(rec.payload, rec.length, &m) < 0)
		return; /* checked by the walk: cannot happen */
	info_set_marker(r, &m, marker_clock_word(rec.payload));
	r->have_marker = true;
}

/* ---------------------------------------------------------------- */
/* Blocks                                                           */
/* ---------------------------------------------------------------- */

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
		if (rlog__record_kind(rec.id, rec.flagged) == RLOG_RECORD_METADATA) {
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
 * and metadata, and shows it to the visitor and the counts.  Returns 0,
 * -ENOMEM or the visitor's value.
 */
static int block_found(struct rlog_reader *r, size_t pos, uint32_t data_size,
		       const struct rlog__walk *w, bool truncated)
{
	struct rlog_block_header h;
	struct rlog__block b;
	int rc;

	rlog__block_decode(r->data + pos, &h);
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
	if (!truncated && !r->have_marker && h.seq == 0 && w->marker_first &&
	    (h.flags & RLOG_BLOCK_FLAG_DAEMON)) {
		marker_take(r, r->data + pos + RLOG__BLOCK_HDR_SIZE, w->bytes);
		r->block0 = pos;
		r->block0_pid = h.pid;
		r->block0_tid = h.tid;
	}
	if (w->meta && (rc = meta_walk(r, t, &b)) < 0)
		return rc;
	if (!r->visit && !r->count)
		return 0;
	struct rlog_block vb = {
		.offset = rlog__foff(r, pos),
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
	if (r->count && !(truncated && r->count_no_cut) && (rc = rlog__count_block(r, &vb)) < 0)
		return rc;
	return r->visit ? r->visit(r->visit_arg, &vb) : 0;
}

static size_t page_size(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	return pg > 0 ? (size_t)pg : 4096;
}

/* The whole pages of [from, to) given back now. */
static void give_back(struct rlog_reader *r, size_t from, size_t to)
{
	size_t page = page_size();

	from = (from + page - 1) / page * page;
	to = to / page * page;
	if (to > r->map_size)
		to = r->map_size / page * page;
	/* Clean pages of a read-only private file mapping: dropping them
	 * loses nothing, a later read faults them back in from the file. */
	if (from < to) {
		(void)madvise((uint8_t *)r->map + from, to - from, MADV_DONTNEED);
		r->give_backs++;
	}
}

/*
 * The ranges are gathered while they touch (a stream's blocks, then the
 * next stream's after them: the threads' blocks interleave in the file
 * and are read in about that order) and given back DROP_BATCH at a time,
 * or when one that does not touch comes.  Each madvise() flushes the
 * TLB of every CPU the process runs on (an interprocessor interrupt per
 * call, and per huge page it splits, with the converter's writer thread
 * on the other core), which cost a block-sized give-back per block
 * about 40 % of a conversion's time (docs/PERFORMANCE.md, "Converting").
 * The resident set grows by DROP_BATCH at most.
 */
#define DROP_BATCH ((size_t)2 << 20)

void rlog__drop_range(struct rlog_reader *r, size_t from, size_t to)
{
	if (!r->map || from >= to)
		return;
	if (r->drop_lo < r->drop_hi && from <= r->drop_hi && to >= r->drop_lo) {
		if (from < r->drop_lo)
			r->drop_lo = from;
		if (to > r->drop_hi)
			r->drop_hi = to;
	} else {
		give_back(r, r->drop_lo, r->drop_hi);
		r->drop_lo = from;
		r->drop_hi = to;
	}
	if (r->drop_hi - r->drop_lo >= DROP_BATCH) {
		/* Up to an address that is a multiple of DROP_BATCH, a huge
		 * page's boundary: where the kernel maps the file with huge
		 * pages, whole ones are unmapped, none split (a flush each);
		 * the rest stays gathered (the range next to it may come). */
		uintptr_t a = (uintptr_t)r->map + r->drop_hi;
		size_t end = r->drop_hi - (size_t)(a % DROP_BATCH);
		give_back(r, r->drop_lo, end);
		r->drop_lo = end;
	}
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

/* "(skipped ...)" for a damaged region [pos, next) whose header said
 * record_count records in an extent ending at end (sane: the header is). */
static void skipped_text(char *buf, size_t n, const struct rlog_reader *r, size_t pos,
			 size_t end, size_t next, bool sane, uint32_t record_count)
{
	char to[64];

	if (next >= r->seg_end)
		snprintf(to, sizeof(to), "the end of the file");
	else
		snprintf(to, sizeof(to), "the next block at offset %" PRIu64, rlog__foff(r, next));
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
static int64_t damaged(struct rlog_reader *r, size_t pos, const struct rlog__check *c)
{
	const char *reason = NULL;
	char why[96], skipped[128];
	bool sane = c->v >= BLK_PAST_EOF;
	bool verified = c->v == BLK_RECORD || c->v == BLK_TIME || c->v == BLK_WRAP ||
			c->v == BLK_COUNT;
	size_t end = sane && c->v != BLK_PAST_EOF ? pos + RLOG__BLOCK_HDR_SIZE + c->h.data_size : 0;
	size_t next;

	if (verified) {
		/* The checksum vouches for the extent and the sequence number. */
		next = end;
		r->last_end = end;
		int rc = rlog__seq_block(r, pos, c->h.seq, end - pos, c->h.record_count, false);
		if (rc < 0)
			return rc;
	} else {
		bool found;
		next = rlog__resync(r, pos + 4, &found);
		rlog__seq_unverified(r);
	}
	switch (c->v) {
	case BLK_MAGIC:
		reason = "no block header";
		break;
	case BLK_HEADER:
		snprintf(why, sizeof(why), "bad block header (data_size %" PRIu32
			 ", record_count %" PRIu32 ")", c->h.data_size, c->h.record_count);
		reason = why;
		break;
	case BLK_PAST_EOF:
		snprintf(why, sizeof(why), "bad block header (data_size %" PRIu32
			 " runs past the end of the file)", c->h.data_size);
		reason = why;
		break;
	case BLK_CRC:
		reason = "checksum mismatch";
		break;
	case BLK_RECORD:
		snprintf(why, sizeof(why), "malformed record at offset %" PRIu64,
			 rlog__foff(r, c->bad_offset));
		reason = why;
		break;
	case BLK_TIME:
		snprintf(why, sizeof(why), "record at offset %" PRIu64 " is 2^31 ticks or more "
			 "after the previous one, without a TIME_SYNC", rlog__foff(r, c->bad_offset));
		reason = why;
		break;
	case BLK_WRAP:
		snprintf(why, sizeof(why), "record at offset %" PRIu64 " would take the time past "
			 "2^64 - 1", rlog__foff(r, c->bad_offset));
		reason = why;
		break;
	case BLK_COUNT:
		snprintf(why, sizeof(why), "header says %" PRIu32 " records, data holds %" PRIu32,
			 c->h.record_count, c->walked);
		reason = why;
		break;
	case BLK_OK:
	case BLK_SHORT:
		break;
	}
	/* The header's count, unless the checksum vouches for the data and the
	 * data says otherwise. */
	uint32_t lost = c->v == BLK_COUNT ? c->walked : c->h.record_count;
	skipped_text(skipped, sizeof(skipped), r, pos, end, next, sane, lost);
	if (rlog__region_add(r, pos, next - pos, RLOG_DAMAGE_BLOCK) < 0 ||
	    !rlog__damage_add(r, pos, next - pos, RLOG_DAMAGE_BLOCK, sane ? (int64_t)lost : -1,
			      "damaged block at offset %" PRIu64 ": %s (%s)", rlog__foff(r, pos),
			      reason, skipped))
		return -ENOMEM;
	return (int64_t)next;
}

/* The last block at pos runs past the end of the file (or, in a
 * preallocated file, was written in part and only unused space follows):
 * keeps its readable records.  Returns 0, -ENOMEM or the visitor's value. */
static int truncated(struct rlog_reader *r, size_t pos, const struct rlog__check *c)
{
	size_t avail = r->seg_end - pos - RLOG__BLOCK_HDR_SIZE;
	const uint8_t *d = r->data + pos + RLOG__BLOCK_HDR_SIZE;
	struct rlog__walk w;
	char skipped[64];
	int rc;
	bool part = avail >= c->h.data_size; /* preallocated: written in part */
	bool copy = (c->h.flags & RLOG_BLOCK_FLAG_METADATA) != 0;

	/* the smaller of avail and data_size, a uint32_t */
	rlog__block_walk(d, part ? c->h.data_size : (uint32_t)avail, c->h.base_time, c->h.flags,
			 &w);
	uint32_t n = copy ? 0 : w.count, used = w.bytes;
	if (rlog__region_add(r, pos, r->seg_end - pos, RLOG_DAMAGE_TRUNCATED) < 0)
		return -ENOMEM;
	if (n > 0) {
		r->trunc_offset = pos;
		r->trunc_walk = used;
		r->trunc_count = n;
		rc = block_found(r, pos, used, &w, true);
		if (rc < 0)
			return rc;
	}
	int64_t lost = c->h.record_count >= n ? (int64_t)(c->h.record_count - n) : -1;
	if (lost >= 0)
		snprintf(skipped, sizeof(skipped), "skipped %" PRId64 " records", lost);
	else
		snprintf(skipped, sizeof(skipped), "skipped an unknown number of records");
	if (part)
		return rlog__damage_add(r, pos, r->seg_end - pos - RLOG__BLOCK_HDR_SIZE - used,
					RLOG_DAMAGE_TRUNCATED, lost,
					"truncated block at offset %" PRIu64 ": written in part (its "
					"checksum does not match, and only unused space follows) "
					"(recovered %" PRIu32 " records, %s)",
					rlog__foff(r, pos), n, skipped) ? 0 : -ENOMEM;
	return rlog__damage_add(r, pos, r->seg_end - pos - RLOG__BLOCK_HDR_SIZE - used,
				RLOG_DAMAGE_TRUNCATED, lost,
				"truncated block at offset %" PRIu64 ": %zu of %" PRIu32
				" data bytes present, checksum not verifiable "
				"(recovered %" PRIu32 " records, %s)",
				rlog__foff(r, pos), avail, c->h.data_size, n, skipped) ? 0 : -ENOMEM;
}

/* Fewer than 48 bytes at pos, the end of the file.  Returns 0 or -ENOMEM. */
static int short_tail(struct rlog_reader *r, size_t pos)
{
	size_t avail = r->seg_end - pos;
	bool magic = avail >= 4 && rlog__get32(r->data + pos) == RLOG_BLOCK_MAGIC;
	int kind = magic ? RLOG_DAMAGE_TRUNCATED : RLOG_DAMAGE_BLOCK;
	if (rlog__region_add(r, pos, avail, kind) < 0)
		return -ENOMEM;
	if (magic)
		return rlog__damage_add(r, pos, avail, kind, -1,
					"truncated block at offset %" PRIu64 ": %zu of 48 header "
					"bytes present (skipped an unknown number of records)",
					rlog__foff(r, pos), avail) ? 0 : -ENOMEM;
	return rlog__damage_add(r, pos, avail, kind, -1,
				"damaged block at offset %" PRIu64 ": no block header (skipped %zu "
				"bytes up to the end of the file)", rlog__foff(r, pos), avail)
		       ? 0 : -ENOMEM;
}

/* ---------------------------------------------------------------- */
/* The file                                                         */
/* ---------------------------------------------------------------- */

/* The file header; the copy of the LOG_MARKER in it (version 1.1).
 * Returns 0, -EBADMSG, -EPROTO or -ENOMEM. */
static int file_header(struct rlog_reader *r)
{
	const uint8_t *p = r->data;

	if (r->size < RLOG__FILE_HDR_MIN || memcmp(p, RLOG_FILE_MAGIC, 8) != 0)
		return -EBADMSG;
	uint32_t v = rlog__get32(p + 8);
	uint16_t major = (uint16_t)(v & 0xffffu), minor = (uint16_t)(v >> 16);
	/* 2.0 changed only the checksum (docs/FORMAT.md, "Versioning"): a
	 * 2.x reader reads 1.x files with theirs. */
	if (major < 1 || major > RLOG_FILE_VERSION_MAJOR)
		return -EPROTO;
	uint32_t hsize = rlog__get32(p + 12), flags = rlog__get32(p + 24);
	bool copy = (major >= 2 || minor >= 1) && (flags & RLOG_FILE_FLAG_MARKER);
	bool v12 = major >= 2 || minor >= 2; /* circular and preallocated files */
	if (hsize < RLOG__FILE_HDR_MIN || hsize % 4 != 0 || hsize > r->size ||
	    (copy && hsize < RLOG__FILE_HDR_MARKER))
		return -EBADMSG;
	r->info.version_major = major;
	r->info.version_minor = minor;
	r->circular = v12 && (flags & RLOG_FILE_FLAG_CIRCULAR);
	r->prealloc = v12 && (flags & RLOG_FILE_FLAG_PREALLOCATED);
	r->seq.ring = r->circular;
	r->info.created_realtime_ns = rlog__get64(p + 16);
	r->info.file_size = r->size;
	r->first_block = hsize;
	if (!copy)
		return 0;
	const uint8_t *m = p + 64;
	uint32_t crc = rlog__file_crc(major, 0, m, sizeof(struct rlog_log_marker));
	if (crc == rlog__get32(p + 28) &&
	    rlog__marker_decode(m, sizeof(struct rlog_log_marker), &r->header_marker) == 0) {
		r->have_header_marker = true;
		r->header_clock = marker_clock_word(m);
		info_set_marker(r, &r->header_marker, r->header_clock); /* until block 0 says */
		return 0;
	}
	return rlog__damage_add(r, 64, sizeof(struct rlog_log_marker), RLOG_DAMAGE_BLOCK, 0,
				"damaged file header at offset 64: the copy of the LOG_MARKER "
				"fails its checksum") ? 0 : -ENOMEM;
}

/* A copy block (RLOG_BLOCK_FLAG_METADATA) at pos, valid: its records give
 * schemas and names; the walk steps over it.  Returns 0 or -ENOMEM. */
static int copy_found(struct rlog_reader *r, size_t pos, const struct rlog__check *c)
{
	size_t size = RLOG__BLOCK_HDR_SIZE + c->h.data_size;
	r->info.block_count++;
	if (rlog__region_add(r, pos, size, RLOG__REGION_SKIP) < 0)
		return -ENOMEM;
	int rc = rlog__meta_copy_block(r, c->h.pid, c->h.tid, pos, c->h.base_time, c->h.data_size);
	if (rc < 0 || !r->visit || !r->visit_copies)
		return rc;
	struct rlog_block vb = {
		.offset = rlog__foff(r, pos), .pid = c->h.pid, .tid = c->h.tid, .flags = c->h.flags,
		.record_count = c->w.count, .size = c->w.bytes,
		.data = r->data + pos + RLOG__BLOCK_HDR_SIZE, .base_time = c->h.base_time,
		.first_ticks = c->w.first_ticks, .last_ticks = c->w.last_ticks,
	};
	return r->visit(r->visit_arg, &vb);
}

/* True if a preallocated file's unused space starts at pos: a zero word
 * where a block would start (docs/FORMAT.md, "Preallocated files"). */
static bool unused_space(const struct rlog_reader *r, size_t pos)
{
	if (!r->prealloc)
		return false;
	for (size_t i = pos; i < pos + 4 && i < r->seg_end; i++)
		if (r->data[i] != 0)
			return false;
	return true;
}

/* Reads the blocks of [pos, r->seg_end).  Returns 0 or -errno. */
static int read_part(struct rlog_reader *r, size_t pos)
{
	int rc;
	while (pos < r->seg_end) {
		if (unused_space(r, pos))
			return rlog__region_add(r, pos, r->seg_end - pos, RLOG__REGION_SKIP);
		struct rlog__check c;
		rlog__block_check(r, pos, &c);
		if (c.v == BLK_OK) {
			size_t size = RLOG__BLOCK_HDR_SIZE + c.h.data_size;
			rc = rlog__seq_block(r, pos, c.h.seq, size, c.h.record_count, true);
			if (rc < 0)
				return rc;
			r->last_end = pos + size;
			if (rc != SEQ_DUPLICATE) {
				if (c.h.flags & RLOG_BLOCK_FLAG_METADATA)
					rc = copy_found(r, pos, &c);
				else
					rc = block_found(r, pos, c.h.data_size, &c.w, false);
				if (rc < 0)
					return rc;
			}
			pos += size;
			rlog__drop_behind(r, pos);
			continue;
		}
		if (c.v == BLK_SHORT)
			return short_tail(r, pos);
		bool verified = true;
		if (c.v == BLK_PAST_EOF || (r->prealloc && c.v == BLK_CRC))
			rlog__resync(r, pos + 4, &verified);
		if (!verified) {
			/* Nothing with a checksum after it: the last block, cut
			 * short (a header-like pattern in its data is no block),
			 * or, preallocated, written in part. */
			return truncated(r, pos, &c);
		}
		int64_t next = damaged(r, pos, &c);
		if (next < 0)
			return (int)next;
		pos = (size_t)next;
	}
	return 0;
}

int rlog__file_index(struct rlog_reader *r)
{
	int rc = file_header(r);
	if (rc < 0)
		return rc;
	r->seg_end = r->size;
	if (r->circular && (rc = rlog__circular_prepare(r)) < 0)
		return rc;

	/* The parts of the file in time order (one, unless a circular file
	 * wrapped: struct rlog__wrap), and the skips between them. */
	struct { size_t start, end; } part[3];
	int nparts = 1;
	part[0].start = r->first_block;
	part[0].end = r->size;
	if (r->wrap.on) {
		const struct rlog__wrap *w = &r->wrap;
		part[0].end = w->ring_start;
		part[1].start = w->oldest;
		part[1].end = r->info.file_size;
		part[2].start = w->base2 + w->ring_start;
		part[2].end = w->base2 + w->newest_end;
		nparts = 3;
	}
	for (int i = 0; i < nparts; i++) {
		if (i > 0 && part[i].start > part[i - 1].end &&
		    (rc = rlog__region_add(r, part[i - 1].end, part[i].start - part[i - 1].end,
					   RLOG__REGION_SKIP)) < 0)
			return rc;
		r->seg_end = part[i].end;
		if (part[i].start < part[i].end && (rc = read_part(r, part[i].start)) < 0)
			return rc;
	}
	r->seg_end = r->size;
	if ((rc = rlog__seq_finish(r)) < 0)
		return rc;
	rlog__damage_sort(r);
	if (!r->have_marker) {
		if (!r->have_header_marker)
			return -ENODATA;
		info_set_marker(r, &r->header_marker, r->header_clock);
		r->info.marker_copy = true;
		r->have_marker = true;
	}
	if ((rc = threads_sort(r)) < 0 || (rc = rlog__meta_copy_finish(r)) < 0)
		return rc;
	r->info.thread_count = r->nthreads;
	if (r->count && (rc = rlog__count_finish(r)) < 0)
		return rc;
	assert(rlog__regions_sane(r, 0));
	return 0;
}
