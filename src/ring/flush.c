#define _GNU_SOURCE
#include "flush.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "atomics.h"
#include "format/loss.h"
#include "record.h"

#define WRAP (UINT64_C(1) << 32)

/* A record too far from the previous one for a 32-bit delta in a block
 * (docs/FORMAT.md, Time): a TIME_SYNC goes before it. */
#define SYNC_TICKS RLOG_TIME_SYNC_TICKS

/* A TIME_SYNC record: header, timestamp, u64 time. */
#define TIME_SYNC_SIZE 16u

/* The 64-bit step from a record with timestamp a to the next, with b: a
 * 32-bit delta within RLOG_RING_BACKSTEP below a wrap is a small step back
 * (a signal handler that wrote between its thread's clock read and its
 * write), any other is forward (docs/FORMAT.md, "Times"). */
static int64_t step(uint32_t a, uint32_t b)
{
	uint32_t d = b - a;
	if (d > UINT32_MAX - RLOG_RING_BACKSTEP + 1)
		return -(int64_t)(uint32_t)(a - b);
	return (int64_t)d;
}

/* The time of a record with timestamp t after one at time cursor. */
static uint64_t ext(uint64_t cursor, uint32_t t)
{
	int64_t d = step((uint32_t)cursor, t);
	if (d < 0 && (uint64_t)-d > cursor)
		return t; /* before time 0: only the low bits are known */
	return cursor + (uint64_t)d;
}

/* The latest time <= now whose low bits are t, or a time at most 2^30
 * ticks after now (a producer's clock a little ahead of ours: another
 * CPU). */
static uint64_t back(uint64_t now, uint32_t t)
{
	uint32_t ahead = t - (uint32_t)now;
	if (ahead < (UINT32_C(1) << 30))
		return now + ahead;
	uint32_t d = (uint32_t)now - t;
	return now >= d ? now - d : t;
}

uint64_t rlog__ring_first_time(bool have_cursor, uint64_t cursor, bool readable, uint64_t now,
			       uint32_t t_first, uint32_t t_last, int64_t span)
{
	if (!readable)
		return have_cursor ? ext(cursor, t_first) : t_first;
	uint64_t last = back(now, t_last);
	uint64_t b = span <= 0 ? last + (uint64_t)-span
		     : last >= (uint64_t)span ? last - (uint64_t)span : t_first;
	if (!have_cursor)
		return b;
	uint64_t f = ext(cursor, t_first);
	if (f > now + (UINT64_C(1) << 30) && f >= WRAP)
		f -= WRAP; /* never in the future: a larger step back */
	if (now <= cursor || now - cursor < WRAP)
		return f; /* the window since the cursor is less than a wrap: exact */
	/* b has t_first's low bits too; at or after the cursor it is after
	 * f by a whole number of wraps that going forward could not see. */
	return b >= cursor ? b : f;
}

/* The time of a record with timestamp t after one at time cursor, in a
 * drain whose clock read was now (readable clocks): never in the future. */
static uint64_t rec_time(struct rlog__ring_flush *f, uint64_t cursor, uint32_t t, uint64_t now)
{
	uint64_t x = ext(cursor, t);
	if (f->readable && x > now + (UINT64_C(1) << 30) && x >= WRAP)
		x -= WRAP;
	return x;
}

/* The flush side's own state holds together (its private read offset is an
 * offset of the ring).  Checked in assert(), on in test builds; absent
 * with NDEBUG (a release build). */
#ifndef NDEBUG
static bool flush_sane(const struct rlog__ring_flush *f)
{
	return f->v != NULL && f->copy != NULL && f->block != NULL && f->read_off < f->v->size &&
	       (f->read_off & 3u) == 0 && f->block_used <= RLOG_RING_BLOCK_MAX;
}
#endif

static uint32_t ring_pid(struct rlog__ring_flush *f)
{
	return f->v->hdr->pid;
}

static uint32_t ring_tid(struct rlog__ring_flush *f)
{
	return f->v->hdr->tid;
}

static void corrupt(struct rlog__ring_flush *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->error, sizeof f->error, fmt, ap);
	va_end(ap);
	f->corrupt_count++;
}

/* A daemon block holding one DATA_LOSS record. */
static void loss_block(struct rlog__ring_flush *f, uint32_t pid, uint32_t tid, uint64_t time,
		       uint64_t events, uint64_t bytes, uint32_t cause)
{
	uint8_t rec[RLOG__LOSS_RECORD_MAX];
	struct rlog_data_loss dl = { .events = events, .bytes = bytes, .cause = cause };
	uint32_t n = rlog__loss_record(rec, time, &dl, sizeof dl);
	rlog__logfile_block(&f->lf, RLOG_BLOCK_FLAG_DAEMON, pid, tid, time, rec, n, 1, 0, 0);
}

int rlog__ring_flush_init(struct rlog__ring_flush *f, struct rlog__ring_view *v, int fd,
			  const char *name)
{
	memset(f, 0, sizeof *f);
	f->v = v;
	f->fd = fd;
	snprintf(f->name, sizeof f->name, "%s", name ? name : "");
	uint32_t r = load_relaxed(&v->hdr->read_off);
	if (r >= v->size || (r & 3u) != 0)
		return -EBADMSG;
	f->read_off = r;
	/* What earlier flush applications reported; losses past these are
	 * ours to report. */
	f->rep[0] = load_relaxed(&v->hdr->reported_lost_events);
	f->rep[1] = load_relaxed(&v->hdr->reported_lost_bytes);
	f->rep[2] = load_relaxed(&v->hdr->reported_nested_events);
	f->rep[3] = load_relaxed(&v->hdr->reported_nested_bytes);
	f->copy = malloc(v->size);
	f->block = malloc(RLOG_RING_BLOCK_MAX);
	if (f->copy == NULL || f->block == NULL) {
		rlog__ring_flush_free(f);
		return -ENOMEM;
	}
	struct rlog_log_marker *m = &f->marker;
	m->tick_source = v->tick_source;
	m->buffer_size = v->size;
	m->buffer_count = 1;
	rlog__clock_error(&m->clock_esterror_us, &m->clock_maxerror_us);
	memcpy(m->session_name, f->name, strnlen(f->name, sizeof m->session_name));
	switch (v->tick_source) {
	case RLOG_TICK_TSC:
		f->readable = true;
		m->tick_freq_hz = rlog__clock_calibrate(RLOG_TICK_TSC, 20, &f->start);
		break;
	case RLOG_TICK_MONOTONIC:
		f->readable = true;
		rlog__clock_sync_now(RLOG_TICK_MONOTONIC, &f->start);
		m->tick_freq_hz = 1000000000u;
		break;
	default:
		/* A counter only the producer reads: its tick 0 is placed at the
		 * start of the flush, for want of anything better (FORMAT.md). */
		rlog__clock_sync_now(RLOG_TICK_MONOTONIC, &f->start);
		f->start.ticks = 0;
		m->tick_freq_hz = v->tick_freq_hz;
		break;
	}
	return 0;
}

/* The LOG_MARKER's clock pair: sync_ticks at or before every record, so
 * that no time in the file is before the start. */
static void marker_sync(struct rlog__ring_flush *f, uint64_t sync_ticks)
{
	struct rlog_log_marker *m = &f->marker;
	uint64_t back_ns = f->start.ticks > sync_ticks
				   ? rlog__ticks_to_ns(f->start.ticks - sync_ticks, m->tick_freq_hz)
				   : 0;
	m->sync_ticks = sync_ticks;
	m->sync_realtime_ns = f->start.realtime_ns - back_ns;
	m->sync_monotonic_ns = f->start.monotonic_raw_ns - back_ns;
}

static int open_file(struct rlog__ring_flush *f, uint64_t sync_ticks)
{
	marker_sync(f, sync_ticks);
	int err = rlog__logfile_open(&f->lf, f->fd, RLOG_RING_BLOCK_MAX, &f->marker,
				     (uint32_t)getpid(), (uint32_t)syscall(SYS_gettid));
	if (err < 0) {
		/* Its buffers, which a failed write of the header leaves. */
		rlog__logfile_close(&f->lf);
		return err;
	}
	f->lf_open = true;
	return 0;
}

static void block_start(struct rlog__ring_flush *f, uint64_t base)
{
	f->block_used = 0;
	f->block_records = 0;
	f->block_events = 0;
	f->block_event_bytes = 0;
	f->block_base = base;
}

static void block_end(struct rlog__ring_flush *f)
{
	if (f->block_used > 0)
		rlog__logfile_block(&f->lf, 0, ring_pid(f), ring_tid(f), f->block_base, f->block,
				    f->block_used, f->block_records, f->block_events,
				    f->block_event_bytes);
}

/* Appends a TIME_SYNC with time t to the block. */
static void block_sync(struct rlog__ring_flush *f, uint64_t t)
{
	uint32_t hw[2] = { rlog__hdr_make(RLOG_ID_TIME_SYNC, 8, true), (uint32_t)t };
	memcpy(f->block + f->block_used, hw, 8);
	memcpy(f->block + f->block_used + 8, &t, 8);
	f->block_used += TIME_SYNC_SIZE;
	f->block_records++;
	f->time_syncs++;
}

/*
 * Decodes and checks the record at p (avail bytes).  Returns its size, or
 * -EBADMSG: malformed (record.h's rules), or an ID the producer API never
 * writes (ringlog's own records: a ring holds none of them).
 */
static int ring_record(const uint8_t *p, uint32_t avail, struct rlog__record *rec)
{
	int sz = rlog__record_decode(p, avail, rec);
	if (sz < 0 || !rlog_ring__id_ok(rec->id))
		return -EBADMSG;
	return sz;
}

/* Reports the losses counted past what was reported: NO_BUFFER and NESTED
 * DATA_LOSS records with the ring's pid and tid, at the cursor's time. */
static void report_losses(struct rlog__ring_flush *f)
{
	struct rlog_ring *h = f->v->hdr;
	/* (3) Acquire: pairs with the writer's release stores of its
	 * counters (ringlog/ring.h). */
	uint32_t now[4] = {
		load_acquire(&h->lost_events), load_acquire(&h->lost_bytes),
		load_acquire(&h->nested_events), load_acquire(&h->nested_bytes),
	};
	uint64_t t = f->have_cursor ? f->cursor : f->marker.sync_ticks;
	for (int c = 0; c < 2; c++) {
		/* Free-running counters: the unsigned difference. */
		uint32_t e = now[2 * c] - f->rep[2 * c], b = now[2 * c + 1] - f->rep[2 * c + 1];
		if (e == 0 && b == 0)
			continue;
		loss_block(f, ring_pid(f), ring_tid(f), t, e, b,
			   c == 0 ? RLOG_LOSS_NO_BUFFER : RLOG_LOSS_NESTED);
		if (c == 0) {
			f->lost_events += e;
			f->lost_bytes += b;
		} else {
			f->nested_events += e;
			f->nested_bytes += b;
		}
		f->rep[2 * c] = now[2 * c];
		f->rep[2 * c + 1] = now[2 * c + 1];
	}
	store_relaxed(&h->reported_lost_events, f->rep[0]);
	store_relaxed(&h->reported_lost_bytes, f->rep[1]);
	store_relaxed(&h->reported_nested_events, f->rep[2]);
	store_relaxed(&h->reported_nested_bytes, f->rep[3]);
	/* Blocks the file could not take (a full disk), once it takes one
	 * again: as the daemon does. */
	if (f->lf.unreported_events || f->lf.unreported_bytes) {
		loss_block(f, 0, 0, t, f->lf.unreported_events, f->lf.unreported_bytes,
			   RLOG_LOSS_LOG_WRITE);
		f->lf.unreported_events = 0;
		f->lf.unreported_bytes = 0;
	}
}

int rlog__ring_flush_drain(struct rlog__ring_flush *f)
{
	assert(flush_sane(f));
	struct rlog__ring_view *v = f->v;
	const uint32_t size = v->size;
	/* (1) Acquire: pairs with the writer's store_release(write_off) after
	 * it stored the record bytes below it. */
	uint32_t w = load_acquire(&v->hdr->write_off);
	uint64_t now = f->readable ? rlog__ticks(v->tick_source) : 0;
	f->drains++;
	if (w >= size || (w & 3u) != 0) {
		int err = 0;
		if (!f->lf_open)
			err = open_file(f, f->have_cursor ? f->cursor : 0);
		if (!f->write_off_bad && err == 0) {
			f->write_off_bad = true;
			corrupt(f, "write offset %u is not an offset in the %u-byte ring: "
				"nothing read", w, size);
			loss_block(f, ring_pid(f), ring_tid(f),
				   f->have_cursor ? f->cursor : f->marker.sync_ticks, 0, 0,
				   RLOG_LOSS_CORRUPT);
		}
		if (err == 0) {
			report_losses(f);
			err = rlog__logfile_flush(&f->lf);
		}
		return err < 0 ? err : -EBADMSG;
	}
	f->write_off_bad = false;
	const uint32_t r = f->read_off;
	const uint32_t n = w >= r ? w - r : size - r + w;
	if (n <= size - r) {
		memcpy(f->copy, v->ring + r, n);
	} else {
		memcpy(f->copy, v->ring + r, size - r);
		memcpy(f->copy + (size - r), v->ring, n - (size - r));
	}

	/* Pass 1: check the records of the private copy; the first bad one
	 * ends the good part.  Collect what the times need. */
	uint32_t good = 0, nts = 0, t_first = 0, t_last = 0;
	int64_t span = 0;
	struct rlog__record rec;
	while (good < n) {
		int sz = ring_record(f->copy + good, n - good, &rec);
		if (sz < 0)
			break;
		if (rec.has_time) {
			if (nts++ == 0)
				t_first = rec.time_low;
			else
				span += step(t_last, rec.time_low);
			t_last = rec.time_low;
		}
		good += (uint32_t)sz;
	}
	uint64_t first = 0;
	if (nts > 0)
		first = rlog__ring_first_time(f->have_cursor, f->cursor, f->readable, now, t_first,
					      t_last, span);
	if (!f->lf_open) {
		uint64_t sync = f->readable ? f->start.ticks : 0;
		if (nts > 0 && first < sync)
			sync = first;
		int err = open_file(f, sync);
		if (err < 0)
			return err;
	}

	/* Pass 2: the blocks, with their 64-bit times. */
	uint64_t cur = f->have_cursor ? f->cursor : nts > 0 ? first : f->marker.sync_ticks;
	bool first_ts = true;
	block_start(f, cur);
	for (uint32_t off = 0; off < good;) {
		int sz = ring_record(f->copy + off, good - off, &rec);
		uint64_t t = cur;
		if (rec.has_time) {
			t = first_ts ? first : rec_time(f, cur, rec.time_low, now);
			first_ts = false;
		}
		/* A step back, or 2^31 ticks or more forward: a TIME_SYNC first. */
		bool sync = t < cur || t - cur >= SYNC_TICKS;
		uint32_t need = (uint32_t)sz + (sync ? TIME_SYNC_SIZE : 0);
		if (f->block_used + need > RLOG_RING_BLOCK_MAX) {
			block_end(f);
			block_start(f, cur);
		}
		if (sync)
			block_sync(f, t);
		cur = t;
		memcpy(f->block + f->block_used, f->copy + off, (size_t)sz);
		f->block_used += (uint32_t)sz;
		f->block_records++;
		f->block_events++;
		f->block_event_bytes += (uint32_t)sz;
		off += (uint32_t)sz;
	}
	block_end(f);
	if (nts > 0) {
		f->cursor = cur;
		f->have_cursor = true;
	}
	if (good < n) {
		uint32_t hw = good + 4 <= n ? rlog__get32(f->copy + good) : 0;
		corrupt(f, "malformed record at ring offset %u (header 0x%08x): %u bytes skipped",
			(r + good) % size, hw, n - good);
		f->corrupt_bytes += n - good;
		loss_block(f, ring_pid(f), ring_tid(f), cur, 0, n - good, RLOG_LOSS_CORRUPT);
	}
	/* Every byte up to w is copied out (and written or counted): (2)
	 * release, pairs with the writer's load_acquire(read_off). */
	f->read_off = w;
	store_release(&v->hdr->read_off, w);
	assert(flush_sane(f));
	report_losses(f);
	int err = rlog__logfile_flush(&f->lf);
	return err < 0 ? err : (int)n;
}

bool rlog__ring_flush_below_mark(struct rlog__ring_flush *f)
{
	uint32_t w = load_acquire(&f->v->hdr->write_off);
	if (w >= f->v->size || (w & 3u) != 0)
		return false;
	return rlog_ring__free(f->v->size, w, f->read_off) < f->v->min_free;
}

int rlog__ring_flush_finish(struct rlog__ring_flush *f)
{
	if (!f->lf_open) {
		int err = open_file(f, f->have_cursor ? f->cursor : 0);
		if (err < 0)
			return err;
	}
	int err = rlog__logfile_flush(&f->lf);
	if (err == 0 && (f->lf.unreported_events || f->lf.unreported_bytes)) {
		loss_block(f, 0, 0, f->have_cursor ? f->cursor : f->marker.sync_ticks,
			   f->lf.unreported_events, f->lf.unreported_bytes, RLOG_LOSS_LOG_WRITE);
		f->lf.unreported_events = 0;
		f->lf.unreported_bytes = 0;
		err = rlog__logfile_flush(&f->lf);
	}
	if (f->v->tick_source == RLOG_TICK_TSC) {
		/* The frequency over the whole flush, as the daemon does at stop. */
		struct rlog__clock_sync end;
		rlog__clock_sync_now(RLOG_TICK_TSC, &end);
		uint64_t hz = rlog__tick_freq(RLOG_TICK_TSC, &f->start, &end);
		if (hz > 0) {
			f->marker.tick_freq_hz = hz;
			rlog__clock_error(&f->marker.clock_esterror_us,
					  &f->marker.clock_maxerror_us);
			marker_sync(f, f->marker.sync_ticks);
			int e2 = rlog__logfile_rewrite_marker(&f->lf, &f->marker);
			if (err == 0)
				err = e2;
		}
	}
	return err;
}

void rlog__ring_flush_free(struct rlog__ring_flush *f)
{
	if (f->lf_open)
		rlog__logfile_close(&f->lf);
	f->lf_open = false;
	free(f->copy);
	free(f->block);
	f->copy = NULL;
	f->block = NULL;
}
