/*
 * merge.c - the time merge: per-thread streams and a binary min-heap.
 *
 *   blocks (file order)   A0 B0 A1 C0 B1 A2 ...
 *   streams               A: A0 -> A1 -> A2    B: B0 -> B1    C: C0
 *   heap                  one head event per stream, least (ticks, offset) on top
 *
 * The daemon writes each thread's blocks (its own and the daemon blocks
 * carrying its DATA_LOSS records) in time order, so each stream is sorted
 * and a k-way merge yields all events in time order.  The heap is keyed by
 * (ticks, file offset of the record): events of equal ticks come out in
 * file order, which keeps the merge stable.  A record without a timestamp
 * has the time of the previous record of its thread.  The daemon writes
 * a thread's records in blocks, so the thread on top mostly stays there
 * for a run of its records: the least head of the others (which do not
 * move meanwhile) is kept as the run's bound, one comparison an event, and
 * the heap is sifted when the run ends.
 *
 * No list of blocks is kept (internal.h).  The valid blocks are found
 * again, in file order, by the frontier: a scan of block headers that
 * hops from block to block (rlog__block_at steps over the damaged regions)
 * and files each block it passes in a small queue of its thread:
 *
 *   file      A5 B3 B4 A6 C1 B5 A7 | B6 ...
 *   streams   A: reading A5, queue A6 A7     B: reading B3, queue B4 B5
 *             C: reading C1, queue -         frontier ^
 *
 * A stream that has read its block takes the next one from its queue; with
 * the queue empty it moves the frontier on until a block of its thread
 * turns up.  Every block header is read about once, however many threads
 * interleave.  The queues hold the blocks between the streams and the
 * frontier, so they are bounded: past RLOG__QUEUE_MAX offsets in all, a block
 * that would be queued is not, and its thread is no longer "synced" with
 * the frontier; it finds its next block by hopping headers itself, from
 * that block on (known_end), and rejoins the frontier when it reaches it.
 * This happens only when a thread writes so rarely that the frontier has
 * to run a long way ahead for it; memory stays O(threads) plus the bound.
 *
 * The resident set stays flat too.  The daemon writes a thread's blocks in
 * runs (one drain pass takes every full buffer), so the streams read
 * different parts of the file at a time, up to a pool's worth apart.  Each
 * stream gives back the pages of its run of adjacent blocks once it has read
 * them (RUN_DROP at a time); every few thousand events the pages behind the
 * earliest stream are given back (rlog__drop_behind); and the frontier, or
 * a stream hopping on its own, gives back the header pages it crossed more
 * than a few MiB back (the streams that read those blocks later fault them
 * in again).  The pages stay in the page cache.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>

#include "batch.h"
#include "clock.h"
#include "internal.h"

/* merge_one's parts, which the runs share (rlog__merge_run,
 * rlog__merge_run_take): inlined into each caller all the same, as when
 * merge_one was their only one (rlog_reader_next's path is every
 * reader's: callgrind counted 22 instructions an event more with them
 * called).  A GCC and Clang attribute. */
#if defined(__GNUC__)
#define MERGE_INLINE __attribute__((always_inline)) inline
#else
#define MERGE_INLINE inline
#endif

/* Header pages this far behind a scan of headers are given back. */
#define FAR_HOP ((size_t)8 << 20)
/* A stream gives back the run of blocks it has read in pieces this large. */
#define RUN_DROP ((size_t)4 << 20)
/* rlog__merge_next() calls between two looks at the earliest stream. */
#define DROP_EVERY 4096u

static inline int64_t time_ns(const struct rlog_reader *r, uint64_t ticks)
{
	uint64_t start = r->info.start_ticks;
	/* Ticks of a nanosecond (the monotonic clock's, and crafted files')
	 * in line; 0 before a LOG_MARKER was seen (a visitor during the
	 * open). */
	if (r->info.tick_freq_hz == 1000000000u && ticks >= start && ticks - start <= INT64_MAX)
		return (int64_t)(ticks - start);
	return rlog__ticks_since_ns(ticks, start, r->info.tick_freq_hz);
}

int64_t rlog__time_ns(const struct rlog_reader *r, uint64_t ticks)
{
	return time_ns(r, ticks);
}

/* The stream is done: its thread's blocks are all read. */
static void stream_end(struct rlog__stream *s)
{
	s->blk.offset = RLOG__NO_BLOCK;
}

/* Thread t's stream takes block b (its thread's next). */
static void stream_enter(struct rlog_reader *r, struct rlog__stream *s,
			 const struct rlog__block *b)
{
	/* Give back the run read so far, unless it goes on; a page shared
	 * with the next block is kept. */
	size_t end = s->blk.offset + RLOG__BLOCK_HDR_SIZE + s->blk.data_size;
	if (b->offset != end || end - s->run >= RUN_DROP) {
		rlog__drop_range(r, s->run, end);
		s->run = b->offset;
	}
	s->blk = *b;
	s->pos = 0;
	s->cursor = b->base_time;
	/* Not synced, a block from the queue: known_end (the first block of
	 * the thread the queue did not take) is still ahead. */
	size_t b_end = b->offset + RLOG__BLOCK_HDR_SIZE + b->data_size;
	if (s->known_end < b_end)
		s->known_end = b_end;
}

/* The file changed under the reader at offset where: t's stream ends and
 * the region is recorded.  Returns 0 or -ENOMEM. */
static int changed(struct rlog_reader *r, struct rlog__thread *t, size_t where)
{
	stream_end(&t->s);
	return rlog__damage_add(r, where, 0, RLOG_DAMAGE_BLOCK, -1,
				"damaged block at offset %" PRIu64 ": not what the file held "
				"when it was opened (the rest of thread %u/%u is not read)",
				rlog__foff(r, where), (unsigned)t->pid, (unsigned)t->tid)
		       ? 0 : -ENOMEM;
}

static int queue_push(struct rlog__stream *s, size_t off)
{
	if (s->qlen == s->qcap) {
		uint32_t cap = s->qcap ? 2 * s->qcap : 8;
		size_t *q = malloc(cap * sizeof(*q));
		if (!q)
			return -ENOMEM;
		for (uint32_t i = 0; i < s->qlen; i++)
			q[i] = s->q[(s->qhead + i) % s->qcap];
		free(s->q);
		s->q = q;
		s->qcap = cap;
		s->qhead = 0;
	}
	s->q[(s->qhead + s->qlen) % s->qcap] = off;
	s->qlen++;
	return 0;
}

static size_t queue_pop(struct rlog__stream *s)
{
	size_t off = s->q[s->qhead];
	s->qhead = (s->qhead + 1) % s->qcap;
	if (--s->qlen == 0 && s->qcap > 64) {
		free(s->q); /* a burst is over: do not keep its memory */
		s->q = NULL;
		s->qcap = 0;
		s->qhead = 0;
	}
	return off;
}

/*
 * Moves the frontier over one block and files it.  Returns 1, 0 at the end
 * of the file, or -ENOMEM.  A block that is not what the open pass saw
 * ends the frontier (and t's stream, with a damage entry).
 */
static int frontier_step(struct rlog_reader *r, struct rlog__thread *t)
{
	struct rlog__block b;
	int rc = rlog__block_at(r, r->frontier, &r->frontier_region, &b);
	if (rc == 0) {
		r->frontier = r->size;
		return 0;
	}
	struct rlog__thread *o = rc == 1 ? rlog__thread_find(r, b.pid, b.tid) : NULL;
	if (!o) {
		r->frontier = r->size;
		rc = changed(r, t, b.offset);
		return rc < 0 ? rc : 0;
	}
	r->frontier = b.offset + RLOG__BLOCK_HDR_SIZE + b.data_size;
	/* Header pages far behind the frontier: their streams fault them
	 * back when they get there. */
	if (r->frontier > r->frontier_kept + 2 * FAR_HOP) {
		rlog__drop_range(r, r->frontier_kept, r->frontier - FAR_HOP);
		r->frontier_kept = r->frontier - FAR_HOP;
	}
	struct rlog__stream *os = &o->s;
	if (os->blk.offset == RLOG__NO_BLOCK || !os->synced || b.offset <= os->blk.offset)
		return 1;
	if (r->queued >= r->queue_max) {
		os->synced = false; /* it hops on its own from this block */
		os->known_end = b.offset;
		return 1;
	}
	if (queue_push(os, b.offset) < 0)
		return -ENOMEM;
	r->queued++;
	return 1;
}

/*
 * Moves thread t's stream to the next block of its thread.  Returns 1, 0
 * (no more blocks) or -ENOMEM.
 */
static int next_block(struct rlog_reader *r, struct rlog__thread *t)
{
	struct rlog__stream *s = &t->s;
	struct rlog__block b;
	int rc;

	for (;;) {
		if (s->blk.offset >= t->last_block) {
			stream_end(s);
			return 0;
		}
		if (s->qlen > 0) {
			size_t off = queue_pop(s);
			r->queued--;
			rc = rlog__block_at(r, off, &s->region, &b);
			if (rc != 1 || b.offset != off || b.pid != t->pid || b.tid != t->tid) {
				rc = changed(r, t, off);
				return rc < 0 ? rc : 0;
			}
			stream_enter(r, s, &b);
			return 1;
		}
		if (s->synced) {
			rc = frontier_step(r, t);
			if (rc < 0)
				return rc;
			if (rc == 0 || s->blk.offset == RLOG__NO_BLOCK) {
				stream_end(s);
				return 0;
			}
			continue;
		}
		/* On its own, from known_end up to the frontier. */
		size_t pos = s->known_end, kept = pos + FAR_HOP;
		while (pos < r->frontier) {
			rc = rlog__block_at(r, pos, &s->region, &b);
			if (rc == 0)
				break;
			if (rc < 0) {
				rc = changed(r, t, b.offset);
				return rc < 0 ? rc : 0;
			}
			if (b.pid == t->pid && b.tid == t->tid) {
				stream_enter(r, s, &b);
				return 1;
			}
			pos = b.offset + RLOG__BLOCK_HDR_SIZE + b.data_size;
			if (pos > kept + FAR_HOP) {
				rlog__drop_range(r, kept, pos);
				kept = pos;
			}
		}
		if (pos < r->frontier) { /* the end of the file */
			stream_end(s);
			return 0;
		}
		s->synced = true; /* nothing of its own up to the frontier */
	}
}

/* rlog__record_flagged_plain into *rec: its size, or 0 (*cur untouched). */
static inline uint32_t flagged_plain(const uint8_t *p, size_t avail, uint64_t *cur,
				     struct rlog__record *rec)
{
	uint32_t h, fw;
	uint32_t size = rlog__record_flagged_plain(p, avail, cur, &h, &fw);
	if (!size)
		return 0;
	bool ts = rlog__hdr_has_time(h);
	rec->hdr = h;
	rec->id = (uint16_t)(fw & 0xffffu);
	rec->flag = (uint16_t)(fw >> 16);
	rec->flagged = true;
	rec->has_time = ts;
	rec->time_low = ts ? (uint32_t)*cur : 0;
	rec->length = (uint16_t)rlog__hdr_length(h);
	rec->payload = p + (ts ? 12 : 8);
	rec->size = size;
	return size;
}

/*
 * Moves thread t's stream to its next event to return.  Returns 1 (s->rec
 * and the rest describe it), 0 (the stream is done) or -ENOMEM.
 */
static int stream_advance(struct rlog_reader *r, struct rlog__thread *t)
{
	struct rlog__stream *s = &t->s;

	for (;;) {
		if (s->blk.offset == RLOG__NO_BLOCK)
			return 0;
		const struct rlog__block *b = &s->blk;
		if (s->pos >= b->walk_size) {
			int rc = next_block(r, t);
			if (rc <= 0)
				return rc;
			continue;
		}
		size_t off = b->offset + RLOG__BLOCK_HDR_SIZE + s->pos;
		/* The common record (an unflagged event), in a few
		 * instructions: what the full rules below accept of it. */
		uint32_t h;
		uint32_t psz = b->flags & RLOG_BLOCK_FLAG_METADATA
				       ? 0
				       : rlog__record_plain(r->data + off, b->walk_size - s->pos,
							    &s->cursor, &h);
		if (psz) {
			bool timed = rlog__hdr_has_time(h);
			s->rec.hdr = h;
			s->rec.id = (uint16_t)rlog__hdr_id(h);
			s->rec.flag = 0;
			s->rec.flagged = false;
			s->rec.has_time = timed;
			s->rec.time_low = timed ? (uint32_t)s->cursor : 0;
			s->rec.length = (uint16_t)rlog__hdr_length(h);
			s->rec.payload = r->data + off + (timed ? 8 : 4);
			s->rec.size = psz;
			s->pos += psz;
			s->ticks = s->cursor;
			s->rec_offset = off;
			return 1;
		}
		if (!(b->flags & RLOG_BLOCK_FLAG_METADATA) &&
		    (psz = flagged_plain(r->data + off, b->walk_size - s->pos, &s->cursor, &s->rec))) {
			s->pos += psz;
			s->ticks = s->cursor;
			s->rec_offset = off;
			return 1;
		}
		int sz = rlog__record_decode(r->data + off, b->walk_size - s->pos, &s->rec);
		if (sz < 0 || rlog__record_check(&s->rec, b->flags) < 0 ||
		    rlog__time_apply(&s->cursor, &s->rec) < 0) {
			/* Validated at open: the file changed under the reader. */
			bool added = rlog__damage_add(r, b->offset, b->walk_size - s->pos,
						      RLOG_DAMAGE_BLOCK, -1,
						      "damaged block at offset %" PRIu64 ": record at "
						      "offset %" PRIu64 " changed since the file was "
						      "opened (skipped the rest of the block)",
						      rlog__foff(r, b->offset), rlog__foff(r, off));
			s->pos = b->walk_size;
			if (!added)
				return -ENOMEM;
			continue;
		}
		s->pos += (uint32_t)sz;
		if (rlog__record_kind(s->rec.id, s->rec.flagged) == RLOG_RECORD_TIME_SYNC &&
		    !(r->flags & RLOG_READER_TIME_SYNC))
			continue;
		s->ticks = s->cursor;
		s->rec_offset = off;
		return 1;
	}
}

static inline bool heap_less(const struct rlog_reader *r, size_t a, size_t b)
{
	const struct rlog__stream *x = &r->threads[a].s, *y = &r->threads[b].s;
	if (x->ticks != y->ticks)
		return x->ticks < y->ticks;
	return x->rec_offset < y->rec_offset;
}

static void sift_down(struct rlog_reader *r, size_t i)
{
	size_t n = r->nheap;
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < n && heap_less(r, r->heap[l], r->heap[m]))
			m = l;
		if (l + 1 < n && heap_less(r, r->heap[l + 1], r->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		size_t t = r->heap[i];
		r->heap[i] = r->heap[m];
		r->heap[m] = t;
		i = m;
	}
}

/*
 * Whether thread ti, on top of the heap, stays there with its next event:
 * it is before both children of the root (the second-best head is one of
 * them).  The daemon writes a thread's records in blocks, so the merge
 * mostly takes runs of one thread's events: this one test per event
 * replaces the sift's.
 */
static inline bool run_goes_on(const struct rlog_reader *r, size_t ti)
{
	size_t n = r->nheap;
	return (n < 2 || heap_less(r, ti, r->heap[1])) && (n < 3 || heap_less(r, ti, r->heap[2]));
}

void rlog__merge_queue_max(struct rlog_reader *r, size_t max)
{
	r->queue_max = max;
}

int rlog__merge_start(struct rlog_reader *r)
{
	int rc;

	r->nheap = 0;
	r->bound_top = SIZE_MAX;
	r->dropped = 0; /* the merge reads from the start again */
	if (r->nthreads == 0)
		return 0;
	r->heap = malloc(r->nthreads * sizeof(*r->heap));
	if (!r->heap)
		return -ENOMEM;
	r->frontier = r->first_block;
	r->frontier_kept = r->first_block;
	r->frontier_region = 0;
	r->queued = 0;
	for (size_t i = 0; i < r->nthreads; i++) {
		struct rlog__thread *t = &r->threads[i];
		struct rlog__stream *s = &t->s;
		s->region = 0;
		rc = rlog__block_at(r, t->first_block, &s->region, &s->blk);
		if (rc != 1 || s->blk.offset != t->first_block || s->blk.pid != t->pid ||
		    s->blk.tid != t->tid) {
			stream_end(s);
			if ((rc < 0 || rc == 1) &&
			    !rlog__damage_add(r, t->first_block, 0, RLOG_DAMAGE_BLOCK, -1,
					      "damaged block at offset %" PRIu64 ": not what the "
					      "file held when it was opened (thread %u/%u is not "
					      "read)", rlog__foff(r, t->first_block),
					      (unsigned)t->pid, (unsigned)t->tid))
				return -ENOMEM;
			continue;
		}
		s->pos = 0;
		s->cursor = s->blk.base_time;
		s->run = s->blk.offset;
		s->synced = true; /* nothing of it is before the frontier but blk */
		s->known_end = s->blk.offset + RLOG__BLOCK_HDR_SIZE + s->blk.data_size;
	}
	/* Only now that every stream is in place: loading a head event can
	 * move the frontier, which files blocks in the streams' queues. */
	for (size_t i = 0; i < r->nthreads; i++) {
		if (r->threads[i].s.blk.offset == RLOG__NO_BLOCK)
			continue;
		rc = stream_advance(r, &r->threads[i]);
		if (rc < 0)
			return rc;
		if (rc > 0)
			r->heap[r->nheap++] = i;
	}
	for (size_t i = r->nheap / 2; i-- > 0;)
		sift_down(r, i);
	return 0;
}

/* Gives back the pages behind the earliest block any stream still reads. */
static void drop_behind(struct rlog_reader *r)
{
	size_t low = SIZE_MAX;
	for (size_t i = 0; i < r->nheap; i++) {
		size_t o = r->threads[r->heap[i]].s.blk.offset;
		if (o < low)
			low = o;
	}
	if (low != SIZE_MAX)
		rlog__drop_behind(r, low);
}

/*
 * The thread ti on top of the heap with its next event: whether it stays
 * there (run_goes_on).  The first time for a thread on top, the least
 * head of the others is kept as the bound of its run; then, as the others'
 * heads do not move while it runs, one comparison an event.
 */
static MERGE_INLINE bool stays_on_top(struct rlog_reader *r, size_t ti)
{
	const struct rlog__stream *s = &r->threads[ti].s;
	if (r->bound_top == ti)
		return s->ticks < r->bound_ticks ||
		       (s->ticks == r->bound_ticks && s->rec_offset < r->bound_off);
	if (!run_goes_on(r, ti))
		return false;
	r->bound_top = ti;
	r->bound_ticks = UINT64_MAX;
	r->bound_off = SIZE_MAX;
	for (size_t k = 1; k < 3 && k < r->nheap; k++) {
		const struct rlog__stream *o = &r->threads[r->heap[k]].s;
		if (o->ticks < r->bound_ticks ||
		    (o->ticks == r->bound_ticks && o->rec_offset < r->bound_off)) {
			r->bound_ticks = o->ticks;
			r->bound_off = o->rec_offset;
		}
	}
	return true;
}

/* Moves thread ti, on top of the heap, to its next event, and the heap
 * after it.  Returns stream_advance's answer. */
static MERGE_INLINE int top_advance(struct rlog_reader *r, size_t ti)
{
	int rc = stream_advance(r, &r->threads[ti]);
	if (rc <= 0) {
		r->heap[0] = r->heap[--r->nheap];
		sift_down(r, 0);
		r->bound_top = SIZE_MAX;
	} else if (!stays_on_top(r, ti)) {
		sift_down(r, 0);
		r->bound_top = SIZE_MAX;
	}
	return rc;
}

/* The head event of thread ti's stream as ev. */
static MERGE_INLINE void head_event(const struct rlog_reader *r, size_t ti, struct rlog_event *ev)
{
	const struct rlog__stream *s = &r->threads[ti].s;
	const struct rlog__block *b = &s->blk;
	ev->ticks = s->ticks;
	ev->time_ns = time_ns(r, s->ticks);
	ev->pid = b->pid;
	ev->tid = b->tid;
	ev->id = s->rec.id;
	ev->flag = s->rec.flag;
	ev->length = s->rec.length;
	ev->flagged = s->rec.flagged;
	ev->has_time = s->rec.has_time;
	ev->from_daemon = (b->flags & RLOG_BLOCK_FLAG_DAEMON) != 0;
	ev->payload = s->rec.payload;
	ev->offset = rlog__foff(r, s->rec_offset);
	ev->size = s->rec.size;
	ev->block_offset = rlog__foff(r, b->offset);
}

static inline int merge_one(struct rlog_reader *r, struct rlog_event *ev)
{
	if (r->nheap == 0)
		return 0;
	if (r->map && ++r->next_calls % DROP_EVERY == 0)
		drop_behind(r);
	size_t ti = r->heap[0];
	head_event(r, ti, ev);

	/* ev points into the file, not into s: advancing is safe. */
	int rc = top_advance(r, ti);
	return rc < 0 ? rc : 1;
}

int rlog__merge_next(struct rlog_reader *r, struct rlog_event *ev)
{
	return merge_one(r, ev);
}

int rlog__merge_batch(struct rlog_reader *r, struct rlog_event *ev, size_t max, int *err)
{
	size_t n = 0;
	while (n < max) {
		int rc = merge_one(r, &ev[n]);
		if (rc < 0) {
			if (n == 0)
				return rc;
			*err = rc;
			break;
		}
		if (rc == 0)
			break;
		const struct rlog_event *e = &ev[n++];
		if (!e->flagged && e->id == RLOG_ID_COUNTER) {
			rlog__counter_follow(r, e);
			break;
		}
	}
	return (int)n;
}

int rlog__merge_run(struct rlog_reader *r, struct rlog__run *run)
{
	if (r->nheap == 0)
		return 0;
	size_t ti = r->heap[0];
	const struct rlog__stream *s = &r->threads[ti].s;
	const struct rlog__block *b = &s->blk;
	head_event(r, ti, &run->head);
	size_t pv = b->offset + RLOG__BLOCK_HDR_SIZE + s->pos;
	run->p = r->data + pv;
	run->avail = b->flags & RLOG_BLOCK_FLAG_METADATA || s->pos >= b->walk_size
			     ? 0 : b->walk_size - s->pos;
	run->cursor = s->cursor;
	run->foff = rlog__foff(r, pv);
	/* The least head of the others (the second-best head is a child of
	 * the root), as stays_on_top keeps it. */
	run->bound_ticks = UINT64_MAX;
	run->bound_k = UINT64_MAX;
	size_t bound_off = SIZE_MAX;
	for (size_t k = 1; k < 3 && k < r->nheap; k++) {
		const struct rlog__stream *o = &r->threads[r->heap[k]].s;
		if (o->ticks < run->bound_ticks ||
		    (o->ticks == run->bound_ticks && o->rec_offset < bound_off)) {
			run->bound_ticks = o->ticks;
			bound_off = o->rec_offset;
		}
	}
	if (bound_off != SIZE_MAX)
		run->bound_k = bound_off > pv ? bound_off - pv : 0;
	return 1;
}

int rlog__merge_run_take(struct rlog_reader *r, uint32_t used, uint64_t cursor, uint32_t events)
{
	size_t ti = r->heap[0];
	struct rlog__stream *s = &r->threads[ti].s;
	if (r->map) {
		uint64_t before = r->next_calls;
		r->next_calls += 1u + events;
		if (before / DROP_EVERY != r->next_calls / DROP_EVERY)
			drop_behind(r);
	}
	s->pos += used;
	s->cursor = cursor;
	int rc = top_advance(r, ti);
	return rc < 0 ? rc : 0;
}
