/*
 * recover.c - `ringlog stop NAME --force` on an orphaned session: the
 * final drain its dead daemon never ran, into its log file.
 *
 *   take the daemon lock (daemon/lock.h): nobody else drains it now
 *   read the file (reader/layout.h): where its last whole block ends, the
 *     next block number, the DATA_LOSS records it holds per thread and
 *     cause, its metadata (for the copies of a wrap or a new file), and,
 *     for every buffer still OWNED or FULL, how much of it the dead daemon
 *     had written already (its blocks are byte-for-byte copies of the
 *     buffer: the longest prefix that matches, block by block)
 *   cut a partly written last block off (a sequential file)
 *   the daemon's own stop sequence (rlog__daemon_stop): producers quiesced,
 *     every buffer drained from where the file ends, the losses not in the
 *     file reported, block numbers going on, the file closed, the region
 *     removed
 *
 * So the file ends as if the daemon had stopped the session itself, and
 * the statistics are the file's: events written are the events of the
 * session's file(s), events lost the events of their DATA_LOSS records
 * (docs/SESSIONS.md, "Orphans", says what a circular file cannot count).
 */
#define _GNU_SOURCE
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomics.h"
#include "daemon/daemon.h"
#include "daemon/drain.h"
#include "daemon/lock.h"
#include "daemon/sink_file.h"
#include "daemon/sink_realtime.h"
#include "metacache.h"
#include "procstat.h"
#include "reader/layout.h"
#include "record.h"
#include "vec.h"

/* A buffer the dead daemon may have written in part. */
struct cand {
	uint32_t idx, slot, pid, tid;
	uint64_t base_time;
	uint32_t committed;      /* write_off when recovery began */
	uint32_t matched;        /* bytes of it found in the file */
};

/* DATA_LOSS records of the file, per thread and cause. */
struct lossum {
	uint32_t pid, tid, cause;
	uint64_t events, bytes;
};

/* The last time of a thread's records in the file. */
struct last {
	uint32_t pid, tid;
	uint64_t ticks;
};

struct rctx {
	struct rlog__region *r;
	struct rlog__metacache *meta;
	struct cand *c;
	size_t nc, ccap;
	struct lossum *l;
	size_t nl, lcap;
	struct last *t;
	size_t nt, tcap;
	uint64_t events, lost;   /* events and lost events the file holds */
	int err;
};

static struct lossum *lossum_of(struct rctx *x, uint32_t pid, uint32_t tid, uint32_t cause)
{
	for (size_t i = 0; i < x->nl; i++)
		if (x->l[i].pid == pid && x->l[i].tid == tid && x->l[i].cause == cause)
			return &x->l[i];
	if (rlog__vec_room(&x->l, x->nl, &x->lcap, sizeof *x->l, 16) < 0)
		return NULL;
	x->l[x->nl] = (struct lossum){ pid, tid, cause, 0, 0 };
	return &x->l[x->nl++];
}

static void last_set(struct rctx *x, uint32_t pid, uint32_t tid, uint64_t ticks)
{
	for (size_t i = 0; i < x->nt; i++)
		if (x->t[i].pid == pid && x->t[i].tid == tid) {
			if (ticks > x->t[i].ticks)
				x->t[i].ticks = ticks;
			return;
		}
	if (rlog__vec_room(&x->t, x->nt, &x->tcap, sizeof *x->t, 16) < 0)
		return;
	x->t[x->nt++] = (struct last){ pid, tid, ticks };
}

static uint64_t last_of(const struct rctx *x, uint32_t pid, uint32_t tid)
{
	for (size_t i = 0; i < x->nt; i++)
		if (x->t[i].pid == pid && x->t[i].tid == tid)
			return x->t[i].ticks;
	return 0;
}

struct count_walk {
	struct rctx *x;
	const struct rlog_block *b;
};

/* The events and the DATA_LOSS records of a block of the file. */
static int count_record(void *arg, const struct rlog__record *rec, uint64_t ticks, uint32_t off)
{
	struct count_walk *w = arg;
	struct rctx *x = w->x;
	(void)ticks;
	(void)off;
	int kind = rlog__record_kind(rec->id, rec->flagged);
	if (kind == RLOG_RECORD_EVENT && !(w->b->flags & RLOG_BLOCK_FLAG_DAEMON))
		x->events++;
	if (kind != RLOG_RECORD_LOSS || rec->length < sizeof(struct rlog_data_loss))
		return 0;
	struct rlog_data_loss dl;
	memcpy(&dl, rec->payload, sizeof dl);
	struct lossum *s = lossum_of(x, w->b->pid, w->b->tid, dl.cause);
	if (!s) {
		x->err = -ENOMEM;
		return -ENOMEM;
	}
	s->events += dl.events;
	s->bytes += dl.bytes;
	x->lost += dl.events;
	return 0;
}

/* Every block of the file, in the order it was written (rlog_block_fn). */
static int visit(void *arg, const struct rlog_block *b)
{
	struct rctx *x = arg;
	const uint8_t *d = b->data;
	if (b->flags & RLOG_BLOCK_FLAG_METADATA) {
		if (rlog__metacache_block(x->meta, b->pid, b->tid, b->base_time, d, b->size) < 0)
			x->err = -ENOMEM;
		return 0;
	}
	rlog__records_walk(d, b->size, b->base_time, count_record, &(struct count_walk){ x, b });
	if (x->err < 0)
		return 0;
	if (b->flags & RLOG_BLOCK_FLAG_DAEMON)
		return 0;
	if (rlog__metacache_block(x->meta, b->pid, b->tid, b->base_time, d, b->size) < 0)
		x->err = -ENOMEM;
	last_set(x, b->pid, b->tid, b->last_ticks);
	if (b->truncated)
		return 0; /* cut off below: it is not in the file any more */
	/* The buffer it came from, if still held: a prefix that goes on. */
	for (size_t i = 0; i < x->nc; i++) {
		struct cand *c = &x->c[i];
		if (c->pid != b->pid || c->tid != b->tid || c->matched + b->size > c->committed)
			continue;
		if (c->matched == 0 && b->base_time != c->base_time)
			continue;
		const uint8_t *buf = rlog__region_buffer(x->r, c->idx) + c->matched;
		if (memcmp(buf, d, b->size) == 0)
			c->matched += b->size;
	}
	return 0;
}

/* The buffers still OWNED or FULL. */
static int candidates(struct rctx *x, uint32_t pool)
{
	struct rlog__region *r = x->r;
	for (uint32_t i = 0; i < pool; i++) {
		struct rlog_shm_desc *d = &r->desc[i];
		uint32_t st = load_acquire(&d->state);
		if ((st != RLOG_BUF_OWNED && st != RLOG_BUF_FULL) || !rlog__desc_sane(r, d))
			continue;
		if (rlog__vec_room(&x->c, x->nc, &x->ccap, sizeof *x->c, 16) < 0)
			return -ENOMEM;
		x->c[x->nc++] = (struct cand){ i, d->slot, d->pid, d->tid, d->base_time,
					       load_acquire(&d->write_off), 0 };
	}
	return 0;
}

static int last_time(void *arg, const struct rlog__record *r, uint64_t ticks, uint32_t off)
{
	(void)r;
	(void)off;
	*(uint64_t *)arg = ticks;
	return 0;
}

/* The time cursor after the bytes of buffer c the file holds. */
static uint64_t cursor_after(const struct rlog__region *r, const struct cand *c)
{
	uint64_t cursor = c->base_time;
	rlog__records_walk(rlog__region_buffer(r, c->idx), c->matched, c->base_time, last_time,
			   &cursor);
	return cursor;
}

/* The losses the file already reports for every slot and process entry,
 * for the drain to report only the rest. */
static void losses_known(struct rctx *x, struct rlog__drain *d)
{
	struct rlog__region *r = x->r;
	static const uint32_t slot_cause[2] = { RLOG_LOSS_NO_BUFFER, RLOG_LOSS_NESTED };
	static const uint32_t proc_cause[2] = { RLOG_LOSS_NO_SLOT, RLOG_LOSS_NESTED };
	for (uint32_t i = 0; i < r->slot_count; i++) {
		struct rlog_shm_slot *sl = &r->slots[i];
		uint32_t st = load_acquire(&sl->state);
		if (st != RLOG_SLOT_ACTIVE && st != RLOG_SLOT_EXITED)
			continue;
		uint64_t ev[2] = { 0, 0 }, by[2] = { 0, 0 };
		for (int c = 0; c < 2; c++) {
			struct lossum *s = lossum_of(x, sl->pid, sl->tid, slot_cause[c]);
			if (s) {
				ev[c] = s->events;
				by[c] = s->bytes;
			}
		}
		rlog__drain_resume_slot(d, i, ev, by, last_of(x, sl->pid, sl->tid));
	}
	for (uint32_t i = 0; i < r->slot_count; i++) {
		struct rlog_shm_proc *p = &r->procs[i];
		uint32_t st = load_acquire(&p->state);
		/* One the dead daemon was freeing: its report may not have
		 * reached the file; the final reports look at it again. */
		if (st == RLOG_PROC_REAPING)
			atomic_compare_exchange_strong(&p->state, &st, RLOG_PROC_EXITED);
		if (st != RLOG_PROC_ACTIVE && st != RLOG_PROC_EXITED && st != RLOG_PROC_REAPING)
			continue;
		uint32_t pid = load_relaxed(&p->pid);
		uint64_t ev[2] = { 0, 0 }, by[2] = { 0, 0 };
		for (int c = 0; c < 2; c++) {
			struct lossum *s = lossum_of(x, pid, 0, proc_cause[c]);
			if (s) {
				ev[c] = s->events;
				by[c] = s->bytes;
			}
		}
		rlog__drain_resume_proc(d, i, ev, by);
	}
}

static void marker_now(void *arg, struct rlog_log_marker *m)
{
	rlog__daemon_marker(arg, m);
}

/* A sink for a session without a file: every block is counted lost (its
 * consumers are gone with the daemon). */
static void null_block(struct rlog__sink *s, const struct rlog__out_block *b)
{
	s->st.lost_events += b->events;
	s->st.lost_bytes += b->event_bytes;
	s->st.lost_blocks++;
}
static int null_flush(struct rlog__sink *s)
{
	(void)s;
	return 0;
}
static int null_finish(struct rlog__sink *s, const struct rlog_log_marker *m)
{
	(void)s;
	(void)m;
	return 0;
}
static void null_free(struct rlog__sink *s)
{
	free(s);
}
static const struct rlog__sink_ops null_ops = { "none", null_block, null_flush, NULL,
					       null_finish, null_free };

/* Events and lost events of the newfile files before the current one. */
static void count_earlier(const char *pattern, uint64_t index, uint64_t *events, uint64_t *lost)
{
	for (uint64_t i = 1; i < index; i++) {
		char name[RLOG_PATH_MAX + 24];
		struct rlog_reader *rd;
		struct rlog_count c;
		if (rlog__file_name(pattern, i, name, sizeof name) < 0 ||
		    rlog_reader_open_count(name, &rd) < 0)
			continue;
		if (rlog_reader_count(rd, &c) == 0) {
			*events += c.events;
			*lost += c.lost_events;
		}
		rlog_reader_close(rd);
	}
}

int rlog__session_recover(const char *name, struct rlog__stop_result *out)
{
	memset(out, 0, sizeof *out);
	if (rlog__name_validate(name) < 0)
		return -EINVAL;
	struct rlog__region r;
	int err = rlog__region_open(name, &r);
	if (err < 0)
		return err;
	struct rlog_shm_header *h = r.hdr;
	out->daemon_pid = (pid_t)h->daemon_pid;
	snprintf(out->name, sizeof out->name, "%.*s", RLOG_NAME_MAX, h->name);
	snprintf(out->log_file, sizeof out->log_file, "%.*s", RLOG_PATH_MAX - 1, h->log_file);
	int lock = rlog__daemon_lock(name);
	if (lock < 0) {
		rlog__region_close(&r);
		return lock == -EWOULDBLOCK ? -EBUSY : lock;
	}
	uint32_t pid = h->daemon_pid;
	err = -EBUSY;
	if (pid && pid <= INT32_MAX && !rlog__process_dead((pid_t)pid, 0))
		goto out_lock; /* a daemon of an earlier ringlog, without the lock */
	uint32_t state = load_acquire(&h->state);
	if (state != RLOG_STATE_ACTIVE && state != RLOG_STATE_STOPPING) {
		/* It never started, or finished all but removing its region. */
		rlog__stats_copy(h, &out->stats);
		rlog__region_unlink(name);
		err = 0;
		goto out_lock;
	}

	uint32_t mode = h->log_file_mode;
	uint64_t max = h->max_file_size;
	struct rlog__stats before;
	rlog__stats_copy(h, &before);
	size_t meta = RLOG__META_LIMIT;
	if (max && (mode & (RLOG_MODE_CIRCULAR | RLOG_MODE_NEWFILE)) && max / 4 < meta)
		meta = (size_t)(max / 4);
	struct rlog__output o;
	rlog__output_init(&o, meta);
	struct rctx x = { .r = &r, .meta = &o.meta };
	uint32_t pool = load_relaxed(&h->number_of_buffers);
	if (pool > r.buffer_count || pool < r.min_buffers)
		pool = r.buffer_count; /* a scribbled count: look at them all */
	err = candidates(&x, pool);
	if (err < 0)
		goto out_output;

	/* The file, as the dead daemon left it. */
	char path[RLOG_PATH_MAX + 24];
	uint64_t index = before.file_index ? before.file_index : 1;
	struct rlog__sink *sink = NULL;
	if (mode & RLOG_MODE_NO_FILE) {
		sink = calloc(1, sizeof *sink);
		if (!sink) {
			err = -ENOMEM;
			goto out_output;
		}
		sink->ops = &null_ops;
	} else {
		if (mode & RLOG_MODE_NEWFILE) {
			/* The daemon may have opened the next file after its last
			 * statistics. */
			char next[sizeof path];
			while (rlog__file_name(h->log_file, index + 1, next, sizeof next) == 0 &&
			       access(next, F_OK) == 0)
				index++;
			if (rlog__file_name(h->log_file, index, path, sizeof path) < 0) {
				err = -ENAMETOOLONG;
				goto out_output;
			}
		} else {
			snprintf(path, sizeof path, "%.*s", RLOG_PATH_MAX - 1, h->log_file);
		}
		int fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			err = -errno;
			goto out_output;
		}
		struct rlog_reader *rd;
		struct rlog__layout lay;
		err = rlog__reader_open_layout(path, visit, &x, &rd, &lay);
		if (err == 0)
			rlog_reader_close(rd);
		if (err == 0 && x.err < 0)
			err = x.err;
		if (err == 0 && !lay.have_block0)
			err = -ENODATA;
		if (err < 0) {
			close(fd);
			goto out_output;
		}
		/* A block cut short, or damage, after the last whole block:
		 * cut off (a preallocated or wrapped file keeps its size; the
		 * next blocks overwrite it). */
		if (!lay.wrapped && !lay.prealloc && lay.append_at < lay.file_size &&
		    ftruncate(fd, (off_t)lay.append_at) < 0) {
			err = -errno;
			close(fd);
			goto out_output;
		}
		struct rlog__file_opts fo = {
			.fd = fd, .mode = mode, .max_size = max, .pattern = h->log_file, .force = true,
			.max_block = r.buffer_size, .pid = lay.block0_pid, .tid = lay.block0_tid,
			.marker = marker_now, .marker_arg = &r,
		};
		struct rlog__file_resume rs = {
			.pos = lay.append_at, .next_seq = lay.next_seq, .marker_offset = lay.block0,
			.marker_pid = lay.block0_pid, .marker_tid = lay.block0_tid,
			.ring_start = lay.ring_start, .data_end = lay.file_size, .wrapped = lay.wrapped,
			.index = index,
		};
		err = rlog__sink_file_resume(&fo, &rs, &sink);
		if (err < 0) {
			close(fd);
			goto out_output;
		}
	}
	rlog__output_add(&o, sink, !(mode & RLOG_MODE_NO_FILE));

	struct rlog__drain d;
	err = rlog__drain_init(&d, &r, &o, h->tick_source);
	if (err < 0)
		goto out_output;
	d.pool = pool;
	for (size_t i = 0; i < x.nc; i++)
		if (x.c[i].matched > 0)
			rlog__drain_resume_buffer(&d, x.c[i].idx, x.c[i].slot, x.c[i].matched,
						  cursor_after(&r, &x.c[i]));
	losses_known(&x, &d);
	if (x.err < 0) {
		err = x.err;
		rlog__drain_free(&d);
		goto out_output;
	}

	/* The daemon's stop sequence, from here: the region is removed.  So is
	 * the dead daemon's real-time socket (its consumers are gone). */
	h->last_error[0] = '\0';
	rlog__daemon_stop(&r, &d, &o, name);
	char sock[128];
	if ((mode & RLOG_MODE_REAL_TIME) && rlog__rt_path(name, sock, sizeof sock) == 0)
		unlink(sock);
	const struct rlog__sink_stats *st = rlog__output_stats(&o);
	struct rlog_shm_stats *hs = &h->stats;
	uint64_t written = st->events_written, lost = load_relaxed(&hs->events_lost);
	if (!(mode & (RLOG_MODE_CIRCULAR | RLOG_MODE_NO_FILE))) {
		/* What the files hold: the dead daemon's part counted there. */
		uint64_t ev = x.events, ls = x.lost;
		if (mode & RLOG_MODE_NEWFILE)
			count_earlier(h->log_file, index, &ev, &ls);
		written += ev;
		lost += ls;
	} else {
		/* A circular file has lost its oldest part, a session without
		 * a file has none: the dead daemon's last statistics. */
		written += before.events_written;
		lost += before.events_lost;
	}
	store_relaxed(&hs->events_written, written);
	store_relaxed(&hs->events_lost, lost);
	store_relaxed(&hs->buffers_written, load_relaxed(&hs->buffers_written) + before.buffers_written);
	store_relaxed(&hs->bytes_written, load_relaxed(&hs->bytes_written) + before.bytes_written);
	store_relaxed(&hs->log_buffers_lost,
		      load_relaxed(&hs->log_buffers_lost) + before.log_buffers_lost);
	store_relaxed(&hs->realtime_buffers_lost,
		      load_relaxed(&hs->realtime_buffers_lost) + before.realtime_buffers_lost);
	store_relaxed(&hs->corrupt_buffers, load_relaxed(&hs->corrupt_buffers) + before.corrupt_buffers);
	rlog__stats_copy(h, &out->stats);
	snprintf(out->last_error, sizeof out->last_error, "%.*s", 255, h->last_error);
	rlog__drain_free(&d);
	err = 0;

out_output:
	rlog__output_free(&o);
	free(x.c);
	free(x.l);
	free(x.t);
out_lock:
	close(lock);
	rlog__region_close(&r);
	return err;
}
