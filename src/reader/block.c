/*
 * block.c - one block of a log file: its header, its checks and its
 * records; resynchronising after damage; and the walk over the valid
 * blocks that the merge uses (docs/FORMAT.md, "Log files").
 *
 *   +0   block header (48 bytes): magic, header_size, flags, seq, pid, tid,
 *        base_time, data_size, record_count, crc32, reserved (decoded and
 *        checked for sanity by src/format/block.c)
 *   +48  data_size bytes of records
 *
 * A block is valid when its header is sane (magic, header_size 48,
 * data_size a multiple of 4 and at most RLOG_BLOCK_DATA_MAX, record_count
 * possible), it fits in the file, its crc32 matches, and its records decode
 * back to back to exactly data_size bytes, record_count of them, each
 * allowed in its kind of block, with a time cursor that never jumps 2^31
 * ticks or more without a TIME_SYNC and never passes 2^64 - 1.
 *
 * The walk (rlog__block_at) finds the valid blocks again without a list:
 * valid blocks and the regions the open pass recorded tile the file, so it
 * hops from header to header, stepping over each region by its length:
 *
 *   | hdr | blk A | blk B | damaged ......... | blk C | dup of A | trunc. |
 *         ^ pos   ^ pos+48+data_size          ^ offset+length
 */
#include <errno.h>

#include "internal.h"

void rlog__block_walk(const uint8_t *d, uint32_t len, uint64_t base, uint16_t flags,
		      struct rlog__walk *w)
{
	uint64_t cursor = base;
	uint32_t pos = 0, n = 0;
	bool meta = false;

	w->why = BLK_OK;
	w->first_ticks = base;
	w->marker_first = false;
	bool events = !(flags & RLOG_BLOCK_FLAG_METADATA);
	while (pos < len) {
		struct rlog__record rec;
		/* The common records, events (unflagged or FLAGGED), in a few
		 * instructions each: what the full rules below accept of them,
		 * their kind an event's (record.h); any other, and the last
		 * bytes of a cut block (fewer than a header word), the full
		 * way. */
		uint32_t hw, fw, psz;
		while (events && len - pos >= 4 &&
		       ((psz = rlog__record_plain(d + pos, len - pos, &cursor, &hw)) ||
			(psz = rlog__record_flagged_plain(d + pos, len - pos, &cursor, &hw, &fw)))) {
			if (n == 0)
				w->first_ticks = cursor;
			pos += psz;
			n++;
		}
		if (pos >= len)
			break;
		int sz = rlog__record_decode(d + pos, len - pos, &rec);
		/* The block's kind decides what it may hold (a copy: metadata
		 * only; record.h). */
		if (sz < 0 || rlog__record_check(&rec, flags) < 0) {
			w->why = BLK_RECORD;
			break;
		}
		int kind = rlog__record_kind(rec.id, rec.flagged);
		if (rlog__time_apply(&cursor, &rec) < 0) {
			/* TIME_SYNC with a bad payload is a malformed record;
			 * anything else here is a jump in time, or past 2^64 - 1. */
			if (kind == RLOG_RECORD_TIME_SYNC)
				w->why = BLK_RECORD;
			else if ((uint32_t)(rec.time_low - (uint32_t)cursor) < RLOG_TIME_SYNC_TICKS)
				w->why = BLK_WRAP;
			else
				w->why = BLK_TIME;
			break;
		}
		if (n == 0) {
			w->first_ticks = cursor;
			w->marker_first = kind == RLOG_RECORD_MARKER;
		}
		meta |= kind == RLOG_RECORD_METADATA;
		pos += (uint32_t)sz;
		n++;
	}
	w->bytes = pos;
	w->count = n;
	w->last_ticks = cursor;
	w->meta = meta;
}

void rlog__block_check(const struct rlog_reader *r, size_t pos, struct rlog__check *c)
{
	size_t avail = r->seg_end - pos;
	const uint8_t *p = r->data + pos;
	struct rlog_block_header *h = &c->h;

	memset(c, 0, sizeof(*c));
	if (avail < RLOG__BLOCK_HDR_SIZE) {
		c->v = BLK_SHORT;
		return;
	}
	rlog__block_decode(p, h);
	if (h->magic != RLOG_BLOCK_MAGIC) {
		c->v = BLK_MAGIC;
		return;
	}
	if (!rlog__block_sane(h)) {
		c->v = BLK_HEADER;
		return;
	}
	if (h->data_size > avail - RLOG__BLOCK_HDR_SIZE) {
		c->v = BLK_PAST_EOF;
		return;
	}
	if (rlog__block_checksum(r->info.version_major, p, h->data_size) != h->crc32) {
		c->v = BLK_CRC;
		return;
	}
	rlog__block_walk(p + RLOG__BLOCK_HDR_SIZE, h->data_size, h->base_time, h->flags, &c->w);
	if (c->w.why != BLK_OK) {
		c->v = c->w.why;
		c->bad_offset = pos + RLOG__BLOCK_HDR_SIZE + c->w.bytes;
		return;
	}
	if (c->w.count != h->record_count) {
		c->v = BLK_COUNT;
		c->walked = c->w.count;
		return;
	}
	c->v = BLK_OK;
}

size_t rlog__resync(const struct rlog_reader *r, size_t from, bool *verified)
{
	*verified = false;
	for (size_t p = from; p + 4 <= r->seg_end; p += 4) {
		if (rlog__get32(r->data + p) != RLOG_BLOCK_MAGIC)
			continue;
		struct rlog__check c;
		rlog__block_check(r, p, &c);
		switch (c.v) {
		case BLK_OK:
		case BLK_RECORD:
		case BLK_TIME:
		case BLK_WRAP:
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
	return r->seg_end;
}

int rlog__block_at(const struct rlog_reader *r, size_t pos, size_t *region,
		   struct rlog__block *b)
{
	struct rlog_block_header h;

	for (;;) {
		if (pos >= r->size)
			return 0;
		size_t i = *region;
		while (i < r->nregions && r->regions[i].offset < pos)
			i++;
		*region = i;
		if (i < r->nregions && r->regions[i].offset == pos) {
			const struct rlog__region *g = &r->regions[i];
			if (g->kind == RLOG_DAMAGE_TRUNCATED && r->trunc_walk != 0 &&
			    r->trunc_offset == pos) {
				rlog__block_decode(r->data + pos, &h);
				b->offset = pos;
				b->base_time = h.base_time;
				b->pid = h.pid;
				b->tid = h.tid;
				/* Its extent runs to the end of its region. */
				b->data_size = (uint32_t)(g->length - RLOG__BLOCK_HDR_SIZE);
				b->walk_size = r->trunc_walk;
				b->record_count = r->trunc_count;
				b->flags = h.flags;
				return 1;
			}
			if (g->length == 0)
				return 0; /* cannot happen: regions are never empty */
			pos += g->length;
			continue;
		}
		b->offset = pos; /* where it failed, if it does */
		if (r->size - pos < RLOG__BLOCK_HDR_SIZE)
			return -EBADMSG;
		rlog__block_decode(r->data + pos, &h);
		if (h.magic != RLOG_BLOCK_MAGIC || !rlog__block_sane(&h) ||
		    h.data_size > r->size - pos - RLOG__BLOCK_HDR_SIZE)
			return -EBADMSG;
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
