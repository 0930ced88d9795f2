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
 * has the time of the previous record of its thread.
 *
 * Each stream keeps only its position and one decoded event, so memory is
 * O(blocks + threads) however many events the file holds.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "clock.h"
#include "internal.h"

/* A block's thread, for sorting blocks into per-thread streams. */
struct thread_key {
	uint32_t pid;
	uint32_t tid;
	size_t block;
};

static int key_cmp(const void *a, const void *b)
{
	const struct thread_key *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->block < y->block ? -1 : x->block > y->block;
}

static int64_t time_ns(const struct rlog_reader *r, uint64_t ticks)
{
	uint64_t start = r->info.start_ticks, freq = r->info.tick_freq_hz;
	uint64_t ns;

	if (ticks >= start) {
		ns = rlog__ticks_to_ns(ticks - start, freq);
		return ns > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)ns;
	}
	ns = rlog__ticks_to_ns(start - ticks, freq);
	return ns > (uint64_t)INT64_MAX ? -INT64_MAX : -(int64_t)ns;
}

/*
 * Moves stream s to its next event to return.  Returns 1 (s->rec and the
 * rest describe it), 0 (the stream is done) or -ENOMEM.
 */
static int stream_advance(struct rlog_reader *r, struct rlog__stream *s)
{
	for (;;) {
		if (s->block == RLOG__NO_BLOCK)
			return 0;
		const struct rlog__block *b = &r->blocks[s->block];
		if (s->pos >= b->walk_size) {
			s->block = b->next;
			s->pos = 0;
			if (s->block != RLOG__NO_BLOCK)
				s->cursor = r->blocks[s->block].base_time;
			continue;
		}
		size_t off = b->offset + RLOG__BLOCK_HDR_SIZE + s->pos;
		int sz = rlog__record_decode(r->data + off, b->walk_size - s->pos, &s->rec);
		if (sz < 0 || rlog__time_apply(&s->cursor, &s->rec) < 0) {
			/* Validated at open: the file changed under the reader. */
			int rc = rlog__damage_add(r, b->offset, b->walk_size - s->pos,
						  RLOG_DAMAGE_BLOCK, -1,
						  "damaged block at offset %zu: record at offset %zu "
						  "changed since the file was opened (skipped the rest "
						  "of the block)", b->offset, off);
			s->pos = b->walk_size;
			if (rc < 0)
				return rc;
			continue;
		}
		s->pos += (uint32_t)sz;
		if (s->rec.id == RLOG_ID_TIME_SYNC && !s->rec.flagged &&
		    !(r->flags & RLOG_READER_TIME_SYNC))
			continue;
		s->ticks = s->cursor;
		s->rec_offset = off;
		return 1;
	}
}

static bool heap_less(const struct rlog_reader *r, size_t a, size_t b)
{
	const struct rlog__stream *x = &r->streams[a], *y = &r->streams[b];
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

int rlog__merge_build(struct rlog_reader *r)
{
	struct thread_key *keys = NULL;
	size_t n = r->nblocks, nstreams = 0;
	int rc;

	if (n == 0)
		return 0;
	keys = malloc(n * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		keys[i].pid = r->blocks[i].pid;
		keys[i].tid = r->blocks[i].tid;
		keys[i].block = i;
	}
	qsort(keys, n, sizeof(*keys), key_cmp);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || keys[i].pid != keys[i - 1].pid || keys[i].tid != keys[i - 1].tid)
			nstreams++;

	r->streams = calloc(nstreams, sizeof(*r->streams));
	r->heap = malloc(nstreams * sizeof(*r->heap));
	if (!r->streams || !r->heap) {
		rc = -ENOMEM;
		goto fail_alloc;
	}
	r->nstreams = 0;
	for (size_t i = 0; i < n; i++) {
		bool first = i == 0 || keys[i].pid != keys[i - 1].pid ||
			     keys[i].tid != keys[i - 1].tid;
		if (first) {
			struct rlog__stream *s = &r->streams[r->nstreams++];
			s->block = keys[i].block;
			s->pos = 0;
			s->cursor = r->blocks[keys[i].block].base_time;
		} else {
			r->blocks[keys[i - 1].block].next = keys[i].block;
		}
	}
	free(keys);
	return 0;

fail_alloc:
	free(keys);
	return rc;
}

int rlog__merge_start(struct rlog_reader *r)
{
	int rc;

	r->nheap = 0;
	for (size_t i = 0; i < r->nstreams; i++) {
		rc = stream_advance(r, &r->streams[i]);
		if (rc < 0)
			return rc;
		if (rc > 0)
			r->heap[r->nheap++] = i;
	}
	for (size_t i = r->nheap / 2; i-- > 0;)
		sift_down(r, i);
	return 0;
}

int rlog__merge_next(struct rlog_reader *r, struct rlog_event *ev)
{
	if (r->nheap == 0)
		return 0;
	size_t si = r->heap[0];
	struct rlog__stream *s = &r->streams[si];
	const struct rlog__block *b = &r->blocks[s->block];

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
	ev->offset = s->rec_offset;
	ev->size = s->rec.size;
	ev->block_offset = b->offset;

	/* ev points into the file, not into s: advancing is safe. */
	int rc = stream_advance(r, s);
	if (rc <= 0)
		r->heap[0] = r->heap[--r->nheap];
	sift_down(r, 0);
	return rc < 0 ? rc : 1;
}
