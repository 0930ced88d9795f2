/*
 * drain.c - the daemon's pass over the buffer pool.
 *
 * The region is hostile input: a producer may be buggy, dead, or a process
 * writing garbage on purpose.  So nothing read from it is trusted:
 *   - descriptor fields are copied once and checked (slot < slot_count,
 *     write_off <= buffer_size and 4-aligned and not going backwards);
 *   - every record of the committed bytes is decoded in place, with bounds
 *     checks on lengths the daemon keeps privately, and its time checked
 *     (record.h): each word it checks is read once (rlog__load32_once) and
 *     is the value it uses, and any record but the common one is copied
 *     out before it is decoded; a bad record poisons the rest of its
 *     buffer, which is counted (corrupt_buffers, bytes lost) and reported
 *     in a DATA_LOSS record, and the buffer is recycled;
 *   - the output checksums the bytes the decode accepted where they are,
 *     and the file writes them from there (or copies them, when the buffer
 *     may change before the write: drain_buffer's stable).  Their extent,
 *     kind and times, not their contents, are what the daemon vouches for:
 *     a producer that changes committed bytes after the check (only a
 *     broken or hostile one can: committed bytes never change until the
 *     buffer is FREE) gets a block that fails its checksum or its records,
 *     which the reader reports as damage, since it checks both again
 *     (docs/DECISIONS.md, "Drain throughput", "Validating in place").
 *
 * Order: each thread's buffers are drained in the order it took them
 * (slot, seq); a buffer whose predecessor is not yet drained waits for the
 * next pass.  The file then holds every thread's blocks in time order, and
 * a reader can merge threads with one pending event each.
 *
 * Losses: a producer counts its lost events in its slot (cumulative, per
 * cause) and copies the counters into each buffer descriptor it takes.  The
 * daemon remembers, per slot, what it has reported; a descriptor whose
 * snapshot is higher gets a DATA_LOSS block (the thread's pid/tid, the
 * buffer's base time) just before its first block.  What is left when the
 * thread exits or the session stops is reported then.  So every loss is
 * reported once, by the daemon, as the seed requires.
 */
#define _GNU_SOURCE
#include "drain.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "atomics.h"
#include "clock.h"
#include "drain_workers.h"
#include "format/loss.h"
#include "overwrite.h"
#include "pool.h"
#include "snapshot.h"
#include "record.h"
#include "test_hooks.h"
#include "trim.h"

/* The pass's scratch arrays; false if one could not be had. */
static bool scratch_init(struct rlog__pass_scratch *p, const struct rlog__region *r)
{
	p->order = malloc(r->buffer_count * sizeof *p->order);
	p->scan_slot = calloc(r->buffer_count, sizeof *p->scan_slot);
	p->scan_seq = calloc(r->buffer_count, sizeof *p->scan_seq);
	p->pending = calloc(r->slot_count, sizeof *p->pending);
	p->exited = calloc(r->slot_count, sizeof *p->exited);
	p->held_seq = malloc(r->slot_count * sizeof *p->held_seq);
	if (!p->order || !p->scan_slot || !p->scan_seq || !p->pending || !p->exited || !p->held_seq)
		return false;
	for (uint32_t i = 0; i < r->slot_count; i++)
		p->held_seq[i] = UINT64_MAX;
	return true;
}

static void scratch_free(struct rlog__pass_scratch *p)
{
	free(p->order);
	free(p->scan_slot);
	free(p->scan_seq);
	free(p->pending);
	free(p->exited);
	free(p->held_seq);
	memset(p, 0, sizeof *p);
}

int rlog__drain_init(struct rlog__drain *d, struct rlog__region *r, struct rlog__output *out,
		     uint32_t tick_source)
{
	memset(d, 0, sizeof *d);
	d->r = r;
	d->out = out;
	d->tick_source = tick_source;
	d->pool = r->min_buffers;
	d->overwrite.on = r->overwrite;
	d->recorder.on = r->overwrite && out->n == 0;
	d->start_ticks = r->hdr->sync_ticks;
	/* tests/test_overwrite.c: the daemon stops itself (SIGSTOP) when it
	 * holds the Nth full buffer in overwrite mode, before reading it. */
	d->test_hold_stop = (uint32_t)RLOG__TEST_ENV(RINGLOG_TEST_HOLD_STOP);
	d->pass.budget = r->buffer_size < RLOG__PASS_BYTES ? RLOG__PASS_BYTES / r->buffer_size : 1;
	d->bufs = calloc(r->buffer_count, sizeof *d->bufs);
	d->slots = calloc(r->slot_count, sizeof *d->slots);
	d->copy = malloc(r->buffer_size);
	d->release.idx = malloc(r->buffer_count * sizeof *d->release.idx);
	bool ok = d->bufs && d->slots && d->copy && d->release.idx &&
		  scratch_init(&d->scratch, r);
	/* The header's DrainThreads (0: this machine's default). */
	uint32_t threads = r->hdr->drain_threads ? r->hdr->drain_threads : RLOG__DRAIN_THREADS_DEFAULT;
	if (threads > RLOG__DRAIN_THREADS_MAX)
		threads = RLOG__DRAIN_THREADS_MAX;
	ok = ok && rlog__drain_workers_start(&d->workers, threads, r->buffer_count) == 0;
	/* Those running, for query (and `ringlog start`, which says so when
	 * fewer than asked): read after the session is ACTIVE. */
	if (ok)
		r->ctl->drain_running = d->workers.n + 1;
	ok = rlog__reaping_init(&d->reaping, r) == 0 && ok;
	ok = rlog__trim_init(&d->trim, r) == 0 && ok;
	ok = rlog__snapshots_init(&d->snapshots, r) == 0 && ok;
	if (!ok) {
		rlog__drain_free(d);
		return -ENOMEM;
	}
	return 0;
}

void rlog__drain_free(struct rlog__drain *d)
{
	free(d->bufs);
	free(d->slots);
	free(d->copy);
	free(d->release.idx);
	d->bufs = NULL;
	d->slots = NULL;
	d->copy = NULL;
	d->release.idx = NULL;
	scratch_free(&d->scratch);
	rlog__drain_workers_stop(&d->workers);
	rlog__reaping_free(&d->reaping);
	rlog__trim_free(&d->trim);
	rlog__snapshots_free(&d->snapshots);
}

struct rlog_data_loss rlog__loss_block_make(struct rlog__loss_rec *rec, uint32_t pid, uint32_t tid,
					    uint64_t time, const void *pl, uint32_t len,
					    struct rlog__out_block *b)
{
	struct rlog_data_loss dl;
	memcpy(&dl, pl, sizeof dl);
	uint32_t n = rlog__loss_record(rec->bytes, time, pl, len);
	*b = (struct rlog__out_block){
		.flags = RLOG_BLOCK_FLAG_DAEMON, .pid = pid, .tid = tid, .base_time = time,
		.data = rec->bytes, .size = n, .records = 1, .cause = dl.cause,
	};
	return dl;
}

/* Writes a daemon block of one DATA_LOSS record whose payload is len
 * bytes at pl (struct rlog_data_loss first), and counts it as reported. */
static void loss_record(struct rlog__drain *d, uint32_t pid, uint32_t tid, uint64_t time,
			const void *pl, uint32_t len)
{
	struct rlog__loss_rec rec;
	struct rlog__out_block b;
	struct rlog_data_loss dl = rlog__loss_block_make(&rec, pid, tid, time, pl, len, &b);
	/* A LOG_WRITE loss is the file's own: the real-time consumers got
	 * those events. */
	if (dl.cause == RLOG_LOSS_LOG_WRITE)
		rlog__output_file_block(d->out, &b);
	else
		rlog__output_block(d->out, &b);
	d->reported_events += dl.events;
	d->reported_bytes += dl.bytes;
}

void rlog__drain_loss_block(struct rlog__drain *d, uint32_t pid, uint32_t tid, uint64_t time,
			    uint64_t events, uint64_t bytes, uint32_t cause)
{
	/* A CORRUPT record may count nothing it can name (a skipped sequence
	 * number): it is still written, so the file says something is wrong. */
	if (events == 0 && bytes == 0 && cause != RLOG_LOSS_CORRUPT)
		return;
	struct rlog_data_loss dl = { .events = events, .bytes = bytes, .cause = cause };
	loss_record(d, pid, tid, time, &dl, sizeof dl);
}

void rlog__drain_range_block(struct rlog__drain *d, uint32_t pid, uint32_t tid, uint64_t first,
			     uint64_t events, uint64_t bytes, uint64_t blocks, uint64_t last)
{
	struct rlog_data_loss_range dl = {
		.loss = { .events = events, .bytes = bytes, .cause = RLOG_LOSS_OVERWRITTEN },
		.blocks = blocks, .first_time = first, .last_time = last,
	};
	loss_record(d, pid, tid, first, &dl, sizeof dl);
}

static const uint32_t loss_cause[2] = { RLOG_LOSS_NO_BUFFER, RLOG_LOSS_NESTED };

void rlog__drain_report_increase(struct rlog__drain *d, uint32_t pid, uint32_t tid, uint64_t time,
				 const uint64_t ev[2], const uint64_t by[2],
				 struct rlog__reported *rep, const uint32_t causes[2])
{
	for (int c = 0; c < 2; c++) {
		if (ev[c] <= rep->events[c] && by[c] <= rep->bytes[c])
			continue;
		uint64_t e = ev[c] > rep->events[c] ? ev[c] - rep->events[c] : 0;
		uint64_t b = by[c] > rep->bytes[c] ? by[c] - rep->bytes[c] : 0;
		rlog__drain_loss_block(d, pid, tid, time, e, b, causes[c]);
		if (ev[c] > rep->events[c])
			rep->events[c] = ev[c];
		if (by[c] > rep->bytes[c])
			rep->bytes[c] = by[c];
	}
}

void rlog__drain_add_increase(const _Atomic uint64_t ev[2], const _Atomic uint64_t by[2],
			      const struct rlog__reported *rep, uint64_t *events, uint64_t *bytes)
{
	for (int c = 0; c < 2; c++) {
		uint64_t e = load_relaxed(&ev[c]), b = load_relaxed(&by[c]);
		if (e > rep->events[c])
			*events += e - rep->events[c];
		if (b > rep->bytes[c])
			*bytes += b - rep->bytes[c];
	}
}

uint64_t rlog__drain_now(struct rlog__drain *d)
{
	return rlog__ticks(d->tick_source);
}

/* Records walked one by one after a failed run before the next try: in a
 * buffer of mixed shapes a try costs about three records' walk (a
 * mispredicted branch), so 1 in 32 keeps that under a tenth. */
#define RUN_RETRY 32

uint32_t rlog__drain_plain(const uint8_t *data, uint32_t size, uint32_t n, uint64_t *cursor_io,
			   uint32_t *count_io, uint32_t *bytes_io)
{
	/* In locals: the stores through the pointers would be reloads (they
	 * may alias the bytes, for all the compiler knows). */
	uint64_t cursor = *cursor_io;
	uint32_t plain, count = 0, bytes = 0, h0, walk = 0;
	while (size < n && (plain = rlog__record_plain(data + size, n - size, &cursor, &h0)) != 0) {
		count++;
		bytes += plain;
		size += plain;
		if (walk > 0) {
			walk--;
			continue;
		}
		/* Then the records of its shape that follow, four at a time
		 * (record.h); where there are none, records of mixed shapes
		 * are walked one by one for a while before the next try. */
		uint32_t run = rlog__record_plain_run(data + size, n - size, h0, &cursor);
		count += run;
		bytes += run * plain;
		size += run * plain;
		walk = run == 0 ? RUN_RETRY : 0;
	}
	*cursor_io = cursor;
	*count_io += count;
	*bytes_io += bytes;
	return size;
}

void rlog__drain_decode(struct rlog__drain *d, const uint8_t *data, uint32_t n, uint32_t pid,
			uint32_t tid, uint64_t cursor, struct rlog__chunk *c)
{
	memset(c, 0, sizeof *c);
	c->start = cursor;
	/* The common record is checked in place; a watched event needs its
	 * ID looked at, so a trigger sends every record the long way. */
	bool fast = d->watch.id == 0;
	uint32_t size = 0;
	while (size < n) {
		if (fast) {
			uint32_t count = 0, bytes = 0;
			size = rlog__drain_plain(data, size, n, &cursor, &count, &bytes);
			c->records += count;
			c->events += count;
			c->event_bytes += bytes;
			if (size == n)
				break;
		}
		/* Any other record is copied out first, as its header word
		 * (read once) sizes it, and decoded from the copy: the rules
		 * below read some bytes more than once. */
		const uint8_t *p = data + size;
		uint32_t avail = n - size;
		uint32_t h = rlog__load32_once(p);
		uint32_t want = rlog__record_size(rlog__hdr_id(h), rlog__hdr_length(h),
						  rlog__hdr_has_time(h));
		struct rlog__record rec;
		int sz = -EBADMSG;
		if (want <= avail) {
			memcpy(d->copy, p, want);
			sz = rlog__record_decode(d->copy, want, &rec);
		}
		/* The reader's rules for a producer's block (flags 0): no
		 * LOG_MARKER, DATA_LOSS, COUNTER or COUNTER_NAME (the
		 * daemon's own), well-formed times.  A copy that differs in
		 * size from its header word was changed under us. */
		if (sz != (int)want || rlog__record_check(&rec, 0) < 0 ||
		    rlog__time_apply(&cursor, &rec) < 0) {
			c->bad = true;
			break;
		}
		c->records++;
		/* Events are the application's records: TIME_SYNC and the
		 * metadata the library writes on its own (schemas, names) are
		 * neither emitted nor counted (include/ringlog.h); the one
		 * definition, shared with the reader. */
		int kind = rlog__record_kind(rec.id, rec.flagged);
		if (kind == RLOG_RECORD_EVENT) {
			c->events++;
			c->event_bytes += (uint32_t)sz;
			if (d->watch.id && rec.id == d->watch.id &&
			    (!d->watch.flagged || (rec.flagged && rec.flag == d->watch.flag)))
				d->watch.hit = true;
		} else if (kind == RLOG_RECORD_METADATA) {
			/* Kept, to be written again where a reader needs it
			 * (a new file, a wrap, a consumer's stream, a
			 * snapshot). */
			rlog__output_meta(d->out, pid, tid, cursor, d->copy, (uint32_t)sz);
		}
		size += (uint32_t)sz;
	}
	c->size = size;
	c->cursor = cursor;
}

/* The first chunk of buffer idx's contents: who wrote it, and the losses
 * its owner counted before (reported ahead of its first block). */
static void start_buffer(struct rlog__drain *d, uint32_t idx, uint32_t slot)
{
	struct rlog_shm_desc *desc = &d->r->desc[idx];
	struct rlog__buffer_view *b = &d->bufs[idx];
	b->started = true;
	b->read_off = 0;
	b->poisoned = false;
	b->cursor = desc->base_time;
	b->pid = desc->pid;
	b->tid = desc->tid;
	b->slot = slot; /* the scan's checked copy, never desc->slot again */
	b->events_read = b->bytes_read = 0;
	struct rlog__slot_view *s = &d->slots[b->slot];
	if (!s->seen) {
		s->seen = true;
		s->pid = b->pid;
		s->tid = b->tid;
	}
	uint64_t ev[2], by[2];
	for (int c = 0; c < 2; c++) {
		ev[c] = desc->lost_events[c];
		by[c] = desc->lost_bytes[c];
	}
	rlog__drain_report_increase(d, b->pid, b->tid, b->cursor, ev, by, &s->reported, loss_cause);
	/* Overwritten events go right before the thread's first block after
	 * them (docs/FORMAT.md, "struct rlog_data_loss_range").  Before its
	 * first buffer, or right after one drained whole, none of this
	 * thread's was lost: what its counters gained was lost further on,
	 * and waits for the block after that gap. */
	uint64_t seq = d->scratch.scan_seq[idx];
	if (seq != 0 && seq != s->drained_whole)
		rlog__overwrite_report(d, slot, b->pid, b->tid, s->last_time ? s->last_time : d->start_ticks);
}

/*
 * Writes the committed, not yet written bytes of buffer idx.  The caller
 * has seen state OWNED or FULL with load_acquire (and holds it, in
 * overwrite mode).  stable: the buffer's committed bytes stay as they are
 * until the output's next flush (it is given back, or no longer held, only
 * after it), so a sink may write them from the region (sink.h).
 */
static void drain_buffer(struct rlog__drain *d, uint32_t idx, uint32_t slot, uint32_t limit,
			 bool stable)
{
	struct rlog__region *r = d->r;
	struct rlog_shm_desc *desc = &r->desc[idx];
	struct rlog__buffer_view *b = &d->bufs[idx];
	if (!b->started)
		start_buffer(d, idx, slot);
	/* Pairs with the producer's store_release(write_off) after it stored
	 * the record bytes. */
	uint32_t wo = load_acquire(&desc->write_off);
	if (b->poisoned) {
		if (wo > b->read_off && wo <= r->buffer_size)
			b->read_off = wo;
		return;
	}
	if (wo > r->buffer_size || (wo & 3) || wo < b->read_off) {
		b->poisoned = true;
		d->corrupt_buffers++;
		rlog__drain_loss_block(d, b->pid, b->tid, b->cursor, 0, r->buffer_size - b->read_off,
			   RLOG_LOSS_CORRUPT);
		return;
	}
	limit &= ~3u; /* meta_end comes from the region: records start 4-aligned */
	if (wo > limit)
		wo = limit > b->read_off ? limit : b->read_off;
	uint32_t n = wo - b->read_off;
	if (n == 0)
		return;
	/* Decoded in place, not copied first (see the top of this file). */
	const uint8_t *src = rlog__region_buffer(r, idx) + b->read_off;
	struct rlog__chunk c;
	uint32_t pre_crc = 0, pre_len = 0;
	/* A drain thread walked its common records this pass (drain_workers.h):
	 * the decode goes on from there, if the walk saw what this read sees. */
	struct rlog__walk_job *j = rlog__drain_workers_job(&d->workers, idx);
	if (j && b->read_off == 0 && j->wo == wo && j->base == b->cursor && j->size <= n) {
		rlog__drain_decode(d, src + j->size, n - j->size, b->pid, b->tid, j->cursor, &c);
		c.start = b->cursor;
		c.size += j->size;
		c.records += j->count;
		c.events += j->count;
		c.event_bytes += j->bytes;
		pre_crc = j->crc;
		pre_len = j->size;
	} else {
		rlog__drain_decode(d, src, n, b->pid, b->tid, b->cursor, &c);
	}
	if (c.size > 0) {
		struct rlog__out_block ob = {
			.flags = 0, .pid = b->pid, .tid = b->tid, .base_time = c.start,
			.data = src, .size = c.size, .records = c.records, .events = c.events,
			.event_bytes = c.event_bytes, .stable = stable,
			.pre_crc = pre_crc, .pre_len = pre_len <= c.size ? pre_len : 0,
		};
		rlog__output_block(d->out, &ob);
	}
	b->cursor = c.cursor;
	d->slots[b->slot].last_time = c.cursor;
	b->read_off = wo;
	b->events_read += c.events;
	b->bytes_read += c.event_bytes;
	if (c.bad) {
		b->poisoned = true;
		d->corrupt_buffers++;
		rlog__drain_loss_block(d, b->pid, b->tid, c.cursor, 0, n - c.size, RLOG_LOSS_CORRUPT);
	}
}

/*
 * Gives buffer idx back to the producers at once.  Returns false if it
 * cannot yet: in overwrite mode a producer may have CASed it FULL ->
 * TAKING while the daemon holds it, and, seeing reader = 1, be about to
 * store FULL back (src/lib/thread.c, take_overwritten).  A FREE stored over
 * that TAKING would be overwritten by that FULL: a free buffer in state
 * FULL, which one producer takes from the bitmap while another takes it
 * from FULL, and the drain, finding it FULL, writes again (events twice
 * in the file, others overwritten uncounted, blocks that change under the
 * write).  So FREE replaces, by CAS, only a state that is not TAKING; a
 * buffer found TAKING stays held (reader = 1, so that producer steps back)
 * and is given back at the next commit.
 */
static bool release_buffer(struct rlog__drain *d, uint32_t idx)
{
	struct rlog__region *r = d->r;
	if (d->overwrite.on) {
		uint32_t st = load_seq_cst(&r->desc[idx].state);
		do {
			if (st == RLOG_BUF_TAKING)
				return false;
		} while (!atomic_compare_exchange_weak(&r->desc[idx].state, &st, RLOG_BUF_FREE));
	} else {
		store_relaxed(&r->desc[idx].state, RLOG_BUF_FREE);
	}
	d->bufs[idx].started = false;
	d->bufs[idx].poisoned = false;
	d->bufs[idx].giving_back = false;
	if (d->bufs[idx].held) {
		/* FREE first: a producer that then sees reader 0 also sees
		 * FREE, not FULL, and does not take it from there. */
		d->bufs[idx].held = false;
		store_release(&r->desc[idx].reader, 0);
	}
	rlog__trim_dirty(&d->trim, idx);
	/* Release: the state store and every read of the buffer happen before
	 * a producer's acquire CAS can take the bit (src/lib/thread.c). */
	atomic_fetch_or_explicit(&r->free_bits[idx / 64], UINT64_C(1) << (idx % 64),
				 memory_order_release);
	return true;
}

/* Gives the buffers of the release list back (their blocks are written);
 * one that cannot be yet stays in the list (release_buffer). */
static void give_back(struct rlog__drain *d)
{
	uint32_t kept = 0;
	for (uint32_t k = 0; k < d->release.n; k++)
		if (!release_buffer(d, d->release.idx[k]))
			d->release.idx[kept++] = d->release.idx[k];
	d->release.n = kept;
}

/* qsort has no context argument in C11. */
static struct {
	const uint32_t *slot;
	const uint64_t *seq;
} sort_ctx;

static int by_slot_seq(const void *a, const void *b)
{
	/* Private copies only: values in the region may change mid-sort. */
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	uint32_t xs = sort_ctx.slot[i], ys = sort_ctx.slot[j];
	if (xs != ys)
		return xs < ys ? -1 : 1;
	uint64_t xq = sort_ctx.seq[i], yq = sort_ctx.seq[j];
	if (xq != yq)
		return xq < yq ? -1 : 1;
	return i < j ? -1 : (i > j);
}

/*
 * A slot whose buffers were held back for order waits for the buffer with
 * seq next_seq.  If no descriptor holds it (OWNED or FULL), it never will:
 * the held buffer's OWNED store (which the scan acquired) came after its
 * predecessor's FULL store, and only the daemon frees a FULL buffer.  So a
 * fresh look that finds no predecessor is decisive: a writer skipped a
 * sequence number (a bug or a hostile region).  The gap is counted as a
 * corrupt buffer and the slot moves on, instead of its buffers waiting
 * (and the daemon spinning on them) forever.
 */
static void skip_gaps(struct rlog__drain *d)
{
	struct rlog__region *r = d->r;
	for (uint32_t i = 0; i < r->slot_count; i++) {
		uint64_t held = d->scratch.held_seq[i];
		if (held == UINT64_MAX)
			continue;
		d->scratch.held_seq[i] = UINT64_MAX;
		struct rlog__slot_view *s = &d->slots[i];
		bool found = false;
		for (uint32_t b = 0; b < d->pool && !found; b++) {
			uint32_t st = load_acquire(&r->desc[b].state);
			/* The descriptor's slot, not the daemon's copy: a buffer
			 * read in part and then taken over holds another
			 * thread's buffer now, maybe this slot's missing one
			 * (only compared, never an index). */
			uint32_t slot = r->desc[b].slot;
			found = (st == RLOG_BUF_OWNED || st == RLOG_BUF_FULL ||
				 (d->overwrite.on && st == RLOG_BUF_TAKING)) &&
				slot == i && r->desc[b].seq >= s->next_seq && r->desc[b].seq < held;
		}
		if (found)
			continue;
		if (d->overwrite.on) {
			/* The missing buffers were overwritten: their owner's
			 * ow_* counters say so, reported before its next block. */
			s->next_seq = held;
			continue;
		}
		d->corrupt_buffers++;
		rlog__drain_loss_block(d, s->pid, s->tid, s->last_time ? s->last_time : rlog__drain_now(d), 0, 0,
			   RLOG_LOSS_CORRUPT);
		s->next_seq = held;
	}
}

void rlog__sort_by_slot_seq(uint32_t *order, uint32_t n, const uint32_t *slot,
			   const uint64_t *seq)
{
	sort_ctx.slot = slot;
	sort_ctx.seq = seq;
	qsort(order, n, sizeof *order, by_slot_seq);
}

/*
 * Overwrite mode: holds buffer idx for reading if it still holds what the
 * scan saw (slot, seq): a producer may have taken it since (TAKING), or
 * taken and made it its own (OWNED, another gen).  The scan's fields were
 * read without the hold; under it they cannot change.
 */
bool rlog__drain_hold_scanned(struct rlog__drain *d, uint32_t idx, uint32_t slot, uint64_t seq)
{
	if (!rlog__overwrite_hold(d, idx))
		return false;
	struct rlog_shm_desc *desc = &d->r->desc[idx];
	if (!d->bufs[idx].started && (desc->slot != slot || desc->seq != seq)) {
		rlog__overwrite_release(d, idx);
		return false;
	}
	return true;
}

/* What each kind of pass does (docs/FORMAT.md, "The daemon's drain"). */
struct pass_rules {
	bool budget;         /* stops after pass.budget buffers drained whole, and starts
	                        at pass.next_slot */
	bool in_order;       /* a thread's buffer waits until its predecessors are drained */
	bool owned;          /* also drains the committed part of buffers still OWNED */
	bool give_back_half; /* overwrite mode: with half the pool held, writes it and
	                        gives it back at once */
};

static const struct pass_rules pass_rules[] = {
	[RLOG_DRAIN_FULL] = { .budget = true, .in_order = true, .give_back_half = true },
	[RLOG_DRAIN_FLUSH] = { .in_order = true, .owned = true, .give_back_half = true },
	[RLOG_DRAIN_FINAL] = { .owned = true },
};

/* The pass's first step: marks the slots that had exited, and lists the
 * buffers to look at in d->scratch.order, sorted.  Returns how many. */
static uint32_t collect(struct rlog__drain *d)
{
	struct rlog__region *r = d->r;
	bool *pending = d->scratch.pending, *exited = d->scratch.exited;
	uint32_t n = 0;
	memset(pending, 0, r->slot_count * sizeof *pending);
	/* Slots that had exited before the scan: their buffers were handed
	 * over first (release), so the scan below sees them. */
	for (uint32_t i = 0; i < r->slot_count; i++)
		exited[i] = load_seq_cst(&r->slots[i].state) == RLOG_SLOT_EXITED ||
			    rlog__procs_slot_dead(d, i);

	/* Buffers producers added to the pool since the last pass. */
	rlog__pool_sync(r, &d->pool);
	for (uint32_t i = 0; i < d->pool; i++) {
		if (d->bufs[i].giving_back)
			continue; /* drained whole: only its give-back is left */
		uint32_t st = load_acquire(&r->desc[i].state);
		if (st == RLOG_BUF_TAKING && d->overwrite.on) {
			/* Being overwritten: its old owner's counts are being
			 * added; the slot is not freed under them. */
			uint32_t v = r->desc[i].slot;
			if (v < r->slot_count)
				pending[v] = true;
			continue;
		}
		if (st != RLOG_BUF_OWNED && st != RLOG_BUF_FULL)
			continue;
		rlog__overwrite_forget_replaced(d, i);
		uint32_t slot = d->bufs[i].started ? d->bufs[i].slot : r->desc[i].slot;
		if (slot >= r->slot_count || (!d->bufs[i].started && !rlog__desc_sane(r, &r->desc[i]))) {
			/* Not a slot of ours, or out-of-range fields: a hostile
			 * descriptor. */
			d->corrupt_buffers++;
			rlog__drain_loss_block(d, r->desc[i].pid, r->desc[i].tid, rlog__drain_now(d), 0, r->buffer_size,
				   RLOG_LOSS_CORRUPT);
			release_buffer(d, i);
			continue;
		}
		d->scratch.scan_slot[i] = slot;
		d->scratch.scan_seq[i] = r->desc[i].seq;
		d->scratch.order[n++] = i;
	}
	rlog__sort_by_slot_seq(d->scratch.order, n, d->scratch.scan_slot, d->scratch.scan_seq);
	return n;
}

/* Whether buffer idx (slot, seq, as scanned) waits for its thread's
 * earlier buffers: then its slot is pending and the lowest seq held back
 * noted (skip_gaps looks for what it waits for).  A seq below next_seq (a
 * duplicate, from a hostile writer) is drained at once. */
static bool waits(struct rlog__drain *d, uint32_t idx, uint32_t slot, uint64_t seq)
{
	if (d->bufs[idx].started || seq <= d->slots[slot].next_seq)
		return false;
	d->scratch.pending[slot] = true;
	if (seq < d->scratch.held_seq[slot])
		d->scratch.held_seq[slot] = seq;
	return true;
}

/* A flight recorder: nothing is written; the drain reads the metadata
 * records (up to meta_end), or every record while a snapshot trigger
 * watches for an event, and lets go of the buffer. */
static void read_metadata(struct rlog__drain *d, uint32_t idx, uint32_t slot, uint64_t seq,
			  uint32_t st)
{
	struct rlog__slot_view *s = &d->slots[slot];
	uint32_t limit = d->watch.id ? UINT32_MAX : load_acquire(&d->r->desc[idx].meta_end);
	drain_buffer(d, idx, slot, limit, false);
	if (st == RLOG_BUF_FULL && seq >= s->next_seq)
		s->next_seq = seq + 1;
	d->scratch.pending[slot] = true;
	rlog__overwrite_release(d, idx);
}

/* Drains buffer idx whole (FULL, or its owner is gone): given back once
 * its blocks are written (commit), held until then in overwrite mode. */
static void drain_whole(struct rlog__drain *d, uint32_t idx, uint32_t slot, uint64_t seq,
			const struct pass_rules *rules)
{
	struct rlog__slot_view *s = &d->slots[slot];
	if (RLOG_TEST_HOOKS && d->test_hold_stop && d->overwrite.on && --d->test_hold_stop == 0)
		raise(SIGSTOP); /* test hook: stopped holding a full buffer */
	drain_buffer(d, idx, slot, UINT32_MAX, true);
	d->release.idx[d->release.n++] = idx;
	d->bufs[idx].giving_back = true;
	if (seq >= s->next_seq)
		s->next_seq = seq + 1;
	s->drained_whole = seq + 1;
	if (!d->overwrite.on)
		return;
	rlog__overwrite_publish(d, idx);
	/* A held buffer is not reused: one pass holding the whole pool until
	 * its write would leave the producers none to take (-ENOBUFS).  Half
	 * the pool held: written and given back now (docs/FORMAT.md,
	 * "Overwrite mode"). */
	uint32_t half = d->pool / 2 > 0 ? d->pool / 2 : 1;
	if (rules->give_back_half && d->release.n >= half) {
		if (rlog__output_flush(d->out) < 0)
			d->flush_failed = true;
		give_back(d);
	}
}

/* Buffer idx is still its thread's (OWNED): its committed part, if the
 * pass drains those.  Committed bytes never change while the buffer is
 * not FREE, except that in overwrite mode a producer may take it once it
 * is FULL and no longer held: copied then (stable false). */
static void drain_owned(struct rlog__drain *d, uint32_t idx, uint32_t slot,
			const struct pass_rules *rules)
{
	if (rules->owned)
		drain_buffer(d, idx, slot, UINT32_MAX, !d->overwrite.on);
	d->scratch.pending[slot] = true;
	rlog__overwrite_release(d, idx);
}

/* The pass's last step: slots whose predecessors are gone for good move
 * on (skip_gaps), slots and process entries that ended are reaped. */
static void finish_pass(struct rlog__drain *d)
{
	skip_gaps(d);
	for (uint32_t i = 0; i < d->r->slot_count; i++)
		if (d->scratch.exited[i])
			rlog__procs_reap_slot(d, i, d->scratch.pending);
	rlog__procs_reap(d);
}

/* With several drain threads: the FULL buffers this pass will drain first
 * (in its order, up to its budget) have their common records walked by
 * every thread at once (drain_workers.h).  Not in overwrite mode (a held
 * buffer's contents are settled only under the hold), nor for a flight
 * recorder or while a trigger watches for an event (those read every
 * record the long way). */
static void post_walks(struct rlog__drain *d, enum rlog__drain_mode mode, uint32_t k0, uint32_t n)
{
	struct rlog__drain_workers *w = &d->workers;
	if (w->n == 0 || mode == RLOG_DRAIN_FINAL || d->overwrite.on || d->recorder.on || d->watch.id)
		return;
	struct rlog__region *r = d->r;
	uint32_t limit = pass_rules[mode].budget ? d->pass.budget : n;
	for (uint32_t j = 0; j < n && w->njobs < limit; j++) {
		uint32_t idx = d->scratch.order[(k0 + j) % n];
		if (d->bufs[idx].started || load_acquire(&r->desc[idx].state) != RLOG_BUF_FULL)
			continue;
		/* Pairs with the producer's store_release(write_off), as in
		 * drain_buffer, which compares its own load with this one. */
		uint32_t wo = load_acquire(&r->desc[idx].write_off);
		if (wo > r->buffer_size || (wo & 3))
			continue; /* drain_buffer reports it */
		w->jobs[w->njobs] = (struct rlog__walk_job){
			.data = rlog__region_buffer(r, idx), .idx = idx, .wo = wo,
			.base = r->desc[idx].base_time,
		};
		w->by_buffer[idx] = ++w->njobs;
	}
	rlog__drain_workers_run(w);
}

int rlog__drain_pass(struct rlog__drain *d, enum rlog__drain_mode mode)
{
	const struct pass_rules *rules = &pass_rules[mode];
	struct rlog__pass_scratch *p = &d->scratch;
	uint32_t released = 0;
	d->pass.count++;
	uint32_t n = collect(d);
	/* A pass with a budget starts at the slot where the last one stopped,
	 * so that one busy thread's buffers do not keep the others' waiting:
	 * each slot's buffers stay together and in order. */
	uint32_t k0 = 0;
	if (rules->budget)
		while (k0 < n && p->scan_slot[p->order[k0]] < d->pass.next_slot)
			k0++;
	post_walks(d, mode, k0, n);

	for (uint32_t j = 0; j < n; j++) {
		uint32_t idx = p->order[(k0 + j) % n];
		if (rules->budget && released >= d->pass.budget) {
			/* The rest waits for the next pass, which comes at once
			 * while a pass's worth is FULL (daemon.c):
			 * their slots are not reaped meanwhile. */
			d->pass.next_slot = p->scan_slot[idx];
			for (; j < n; j++)
				p->pending[p->scan_slot[p->order[(k0 + j) % n]]] = true;
			break;
		}
		uint32_t slot = p->scan_slot[idx];
		uint64_t seq = p->scan_seq[idx];
		if (rules->in_order && waits(d, idx, slot, seq))
			continue;
		if (d->overwrite.on) {
			if (!rlog__drain_hold_scanned(d, idx, slot, seq)) {
				p->pending[slot] = true;
				continue;
			}
			/* The hold found other contents than the ones a read
			 * in part had started (overwrite.c): a newer buffer of
			 * the thread, which waits for its predecessors too. */
			if (rules->in_order && waits(d, idx, slot, seq)) {
				rlog__overwrite_release(d, idx);
				continue;
			}
		}
		/* Re-read: it may have become FULL since the scan. */
		uint32_t st = load_acquire(&d->r->desc[idx].state);
		/* Held, a buffer is TAKING only for a moment: the producer
		 * that CASed it sees reader = 1 and puts FULL back
		 * (overwrite.c).  Its contents are the owner's, whole. */
		if (st == RLOG_BUF_TAKING && d->overwrite.on)
			st = RLOG_BUF_FULL;
		bool owner_dead = rlog__procs_slot_dead(d, slot) ||
				  (p->exited[slot] && st == RLOG_BUF_OWNED);
		if (d->recorder.on) {
			read_metadata(d, idx, slot, seq, st);
		} else if (st == RLOG_BUF_FULL || owner_dead) {
			drain_whole(d, idx, slot, seq, rules);
			released++;
		} else if (st == RLOG_BUF_OWNED) {
			drain_owned(d, idx, slot, rules);
		}
	}
	rlog__drain_workers_clear(&d->workers);
	finish_pass(d);
	return (int)released;
}

void rlog__drain_final_losses(struct rlog__drain *d)
{
	struct rlog__region *r = d->r;
	for (uint32_t i = 0; i < r->slot_count; i++) {
		struct rlog_shm_slot *sl = &r->slots[i];
		uint32_t st = load_acquire(&sl->state);
		struct rlog__slot_view *s = &d->slots[i];
		if ((st != RLOG_SLOT_ACTIVE && st != RLOG_SLOT_EXITED) || s->reaped)
			continue;
		uint64_t ev[2], by[2];
		for (int c = 0; c < 2; c++) {
			ev[c] = load_acquire(&sl->lost_events[c]);
			by[c] = load_acquire(&sl->lost_bytes[c]);
		}
		uint64_t t = s->last_time ? s->last_time : rlog__drain_now(d);
		rlog__drain_report_increase(d, sl->pid, sl->tid, t, ev, by, &s->reported, loss_cause);
		rlog__overwrite_report(d, i, sl->pid, sl->tid, s->last_time ? s->last_time : d->start_ticks);
	}
	rlog__procs_final_losses(d);
	rlog__drain_report_log_losses(d, true);
}

void rlog__drain_report_log_losses(struct rlog__drain *d, bool final)
{
	struct rlog__sink *f = d->out->file;
	if (f == NULL || (f->st.unreported_events == 0 && f->st.unreported_bytes == 0))
		return;
	/* A sequential file at its maximum takes one LOG_WRITE record, at
	 * stop, in the room it kept: it says everything the file missed. */
	if (f->st.full && !final)
		return;
	uint64_t e = f->st.unreported_events, b = f->st.unreported_bytes;
	f->st.unreported_events = f->st.unreported_bytes = 0;
	/* These events were counted when the file refused them: the record
	 * says where they went without counting them twice. */
	rlog__drain_loss_block(d, 0, 0, rlog__drain_now(d), e, b, RLOG_LOSS_LOG_WRITE);
	d->reported_events -= e;
	d->reported_bytes -= b;
}

void rlog__drain_publish(struct rlog__drain *d)
{
	struct rlog__region *r = d->r;
	struct rlog_shm_stats *st = &r->hdr->stats;
	/* Losses: what DATA_LOSS records reported, plus what producers have
	 * counted and the daemon has not reported yet, plus what the session's
	 * primary output (its file) refused. */
	const struct rlog__sink_stats *o = rlog__output_stats(d->out);
	uint64_t ev = d->reported_events + o->lost_events;
	uint64_t by = d->reported_bytes + o->lost_bytes;
	for (uint32_t i = 0; i < r->slot_count; i++) {
		struct rlog_shm_slot *sl = &r->slots[i];
		uint32_t s = load_relaxed(&sl->state);
		if ((s != RLOG_SLOT_ACTIVE && s != RLOG_SLOT_EXITED) || d->slots[i].reaped)
			continue;
		rlog__drain_add_increase(sl->lost_events, sl->lost_bytes, &d->slots[i].reported, &ev, &by);
	}
	rlog__procs_unreported_losses(d, &ev, &by);
	rlog__overwrite_unreported(d, &ev, &by);
	struct rlog__recorder_stats fr = rlog__recorder_stats(d);
	ev += fr.discarded_events;
	by += fr.discarded_bytes;
	/* A flight recorder writes what snapshots took, each event once. */
	const struct rlog__drain_base *b = &d->base;
	store_relaxed(&st->events_written, b->events + o->events_written + fr.delivered_events);
	store_relaxed(&st->bytes_written, b->bytes + o->bytes_written + fr.delivered_bytes);
	store_relaxed(&st->buffers_written, b->buffers + o->buffers_written);
	store_relaxed(&st->events_overwritten, b->events_overwritten + rlog__overwrite_total(d));
	store_relaxed(&st->events_discarded, fr.discarded_events);
	store_relaxed(&st->events_lost, b->lost_events + ev);
	store_relaxed(&st->bytes_lost, b->lost_bytes + by);
	store_relaxed(&st->log_buffers_lost,
		      b->log_buffers_lost + (d->out->file ? d->out->file->st.lost_blocks : 0));
	store_relaxed(&st->corrupt_buffers, b->corrupt_buffers + d->corrupt_buffers);
	store_relaxed(&st->file_bytes, d->out->file ? d->out->file->st.file_bytes : 0);
	store_relaxed(&st->file_index, d->out->file ? d->out->file->st.file_index : 0);
	store_relaxed(&st->realtime_buffers_lost,
		      b->realtime_buffers_lost + rlog__output_realtime_lost(d->out));
	store_relaxed(&st->passes, d->pass.count);
}

void rlog__drain_commit(struct rlog__drain *d)
{
	give_back(d);
	rlog__procs_free_reaped(d);
}

int rlog__drain_resume_buffer(struct rlog__drain *d, uint32_t idx, uint32_t slot,
			      uint32_t read_off, uint64_t cursor)
{
	struct rlog__region *r = d->r;
	if (idx >= r->buffer_count || slot >= r->slot_count || read_off > r->buffer_size ||
	    (read_off & 3))
		return -EINVAL;
	struct rlog__buffer_view *b = &d->bufs[idx];
	b->started = true;
	b->poisoned = false;
	b->read_off = read_off;
	b->cursor = cursor;
	b->pid = r->desc[idx].pid;
	b->tid = r->desc[idx].tid;
	b->slot = slot;
	/* Overwrite mode: these contents, not a later producer's (overwrite.c). */
	b->gen = load_relaxed(&r->desc[idx].gen);
	struct rlog__slot_view *s = &d->slots[slot];
	if (!s->seen) {
		s->seen = true;
		s->pid = b->pid;
		s->tid = b->tid;
	}
	s->last_time = cursor;
	return 0;
}

void rlog__drain_resume_slot(struct rlog__drain *d, uint32_t i, const uint64_t events[2],
			     const uint64_t bytes[2], uint64_t last_time)
{
	struct rlog__slot_view *s = &d->slots[i];
	for (int c = 0; c < 2; c++) {
		s->reported.events[c] = events[c];
		s->reported.bytes[c] = bytes[c];
	}
	if (last_time > s->last_time)
		s->last_time = last_time;
}

void rlog__drain_resume_seq(struct rlog__drain *d, uint32_t i, uint64_t next_seq)
{
	d->slots[i].next_seq = next_seq;
}

void rlog__drain_resume_overwritten(struct rlog__drain *d, uint32_t i, uint64_t events, uint64_t bytes,
			   uint64_t buffers)
{
	d->slots[i].overwritten = (struct rlog__overwritten){ .events = events, .bytes = bytes,
						     .buffers = buffers };
}

bool rlog__drain_full_at_least(struct rlog__drain *d, uint32_t n)
{
	uint32_t full = 0;
	for (uint32_t i = 0; i < d->pool && full < n; i++)
		full += load_seq_cst(&d->r->desc[i].state) == RLOG_BUF_FULL;
	return full >= n;
}
