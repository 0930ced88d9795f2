/*
 * adopt.c - an orphaned session taken over (adopt.h): `ringlog stop NAME
 * --force` on it runs the final drain its dead daemon never ran, into its
 * log file (`recover -o FILE`: into a new file; `start --resume`: a
 * daemon that goes on).
 *
 *   take the daemon lock (common/lock.h): nobody else drains it now
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
#include "adopt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "atomics.h"
#include "daemon.h"
#include "drain.h"
#include "format/live.h"
#include "format/logfile.h"
#include "journal.h"
#include "lock.h"
#include "metacache.h"
#include "procstat.h"
#include "reader/layout.h"
#include "record.h"
#include "sink_file.h"
#include "vec.h"
#include "io.h"

/* A buffer the dead daemon may not have written whole (to adopt). */
struct unwritten {
	uint32_t idx, slot, pid, tid;
	uint64_t base_time;
	uint64_t seq;            /* its place in the slot's sequence */
	uint32_t committed;      /* write_off when recovery began */
	uint32_t matched;        /* bytes of it found in the file */
	bool past_snapshots;     /* a flight recorder's: taken from where its
				    snapshots left it (skip_delivered) */
};

/* DATA_LOSS records of the file, per thread and cause. */
struct file_loss {
	uint32_t pid, tid, cause;
	uint64_t events, bytes;
	uint64_t blocks;         /* OVERWRITTEN: buffers overwritten */
	uint64_t first, last;    /* the time of its first record; OVERWRITTEN: its range */
	bool live;               /* a live slot's or process entry's (losses_known) */
};

/* The last time of a thread's records in the file. */
struct last {
	uint32_t pid, tid;
	uint64_t ticks;
};

struct recovery {
	struct rlog__region *r;
	struct rlog__metacache *meta;
	struct unwritten *c;
	size_t nc, ccap;
	struct file_loss *l;
	size_t nl, lcap;
	struct last *t;
	size_t nt, tcap;
	uint64_t events, lost;   /* events and lost events the file holds */
	uint64_t bytes, lost_bytes; /* their record bytes */
	bool journal;            /* a flight recorder's journal was read (its ledger) */
	uint32_t jpid, jtid;     /* the journal's block 0: its losses of gone threads */
	bool keep_cut;           /* the file keeps its block cut short (recover -o):
				    its readable records are the file's */
	int err;
};

static struct file_loss *file_loss_of(struct recovery *x, uint32_t pid, uint32_t tid, uint32_t cause)
{
	for (size_t i = 0; i < x->nl; i++)
		if (x->l[i].pid == pid && x->l[i].tid == tid && x->l[i].cause == cause)
			return &x->l[i];
	if (rlog__vec_room(&x->l, x->nl, &x->lcap, sizeof *x->l, 16) < 0)
		return NULL;
	x->l[x->nl] = (struct file_loss){ .pid = pid, .tid = tid, .cause = cause };
	return &x->l[x->nl++];
}

static void last_set(struct recovery *x, uint32_t pid, uint32_t tid, uint64_t ticks)
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

static uint64_t last_of(const struct recovery *x, uint32_t pid, uint32_t tid)
{
	for (size_t i = 0; i < x->nt; i++)
		if (x->t[i].pid == pid && x->t[i].tid == tid)
			return x->t[i].ticks;
	return 0;
}

/* What a file holds, as the reader counted it (reader/count.c, the one
 * count of `ringlog stats` too): its events and losses, and its DATA_LOSS
 * records per thread and cause.  Returns 0 or -ENOMEM. */
/* The losses rd's file reports, thread by thread and cause by cause,
 * added to those of x.  Returns 0 or -ENOMEM. */
static int take_losses(struct recovery *x, const struct rlog_reader *rd)
{
	const struct rlog__thread_loss *tl;
	size_t n;
	if (rlog__count_thread_losses(rd, &tl, &n) < 0)
		return -ENOMEM; /* opened counting: cannot happen */
	for (size_t i = 0; i < n; i++) {
		struct file_loss *s = file_loss_of(x, tl[i].pid, tl[i].tid, tl[i].cause);
		if (!s)
			return -ENOMEM;
		s->events += tl[i].events;
		s->bytes += tl[i].bytes;
		s->blocks += tl[i].blocks;
		if (s->first == 0)
			s->first = tl[i].first;
		if (tl[i].last > s->last)
			s->last = tl[i].last;
	}
	return 0;
}

static int take_counts(struct recovery *x, const struct rlog_reader *rd)
{
	struct rlog_count c;
	if (rlog_reader_count(rd, &c) < 0)
		return -ENOMEM; /* opened counting: cannot happen */
	x->events += c.events;
	x->bytes += c.bytes;
	x->lost += c.lost_events;
	x->lost_bytes += c.lost_bytes;
	return take_losses(x, rd);
}

/* Every block of the file, in the order it was written (rlog_block_fn). */
static int visit(void *arg, const struct rlog_block *b)
{
	struct recovery *x = arg;
	const uint8_t *d = b->data;
	if (b->flags & RLOG_BLOCK_FLAG_METADATA) {
		if (rlog__metacache_block(x->meta, b->pid, b->tid, b->base_time, d, b->size) < 0)
			x->err = -ENOMEM;
		return 0;
	}
	/* A block cut short (a daemon killed in its write) is either the
	 * file's, its readable records counted (rlog__reader_open_layout's
	 * with_cut) and skipped in the buffer like any block's, or cut off
	 * below and written again whole: never both (docs/SESSIONS.md,
	 * "Orphans"). */
	if (b->truncated && !x->keep_cut)
		return 0;
	if (b->flags & RLOG_BLOCK_FLAG_DAEMON)
		return 0;
	if (rlog__metacache_block(x->meta, b->pid, b->tid, b->base_time, d, b->size) < 0)
		x->err = -ENOMEM;
	last_set(x, b->pid, b->tid, b->last_ticks);
	/* The buffer it came from, if still held: a prefix that goes on. */
	for (size_t i = 0; i < x->nc; i++) {
		struct unwritten *c = &x->c[i];
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
static int buffers_to_adopt(struct recovery *x, uint32_t pool)
{
	struct rlog__region *r = x->r;
	for (uint32_t i = 0; i < pool; i++) {
		struct rlog_shm_desc *d = &r->desc[i];
		uint32_t st = load_acquire(&d->state);
		if ((st != RLOG_BUF_OWNED && st != RLOG_BUF_FULL) || !rlog__desc_sane(r, d))
			continue;
		if (rlog__vec_room(&x->c, x->nc, &x->ccap, sizeof *x->c, 16) < 0)
			return -ENOMEM;
		x->c[x->nc++] = (struct unwritten){ i, d->slot, d->pid, d->tid, d->base_time, d->seq,
					       load_acquire(&d->write_off), 0, false };
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
static uint64_t cursor_after(const struct rlog__region *r, const struct unwritten *c)
{
	uint64_t cursor = c->base_time;
	rlog__records_walk(rlog__region_buffer(r, c->idx), c->matched, c->base_time, last_time,
			   &cursor);
	return cursor;
}

/* The losses the file already reports for every slot and process entry,
 * for the drain to report only the rest. */
static void losses_known(struct recovery *x, struct rlog__drain *d)
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
			struct file_loss *s = file_loss_of(x, sl->pid, sl->tid, slot_cause[c]);
			if (s) {
				ev[c] = s->events;
				by[c] = s->bytes;
				s->live = true;
			}
		}
		rlog__drain_resume_slot(d, i, ev, by, last_of(x, sl->pid, sl->tid));
		struct file_loss *ow = file_loss_of(x, sl->pid, sl->tid, RLOG_LOSS_OVERWRITTEN);
		if (ow) {
			rlog__drain_resume_overwritten(d, i, ow->events, ow->bytes, ow->blocks);
			ow->live = true;
		}
		if (x->journal) {
			/* A flight recorder's snapshots reported these: the next
			 * snapshot (--resume) reports only what came after. */
			struct rlog__snapshot_slot *ds = &d->snapshots.slots[i];
			for (int c = 0; c < 2; c++) {
				ds->reported.events[c] = ev[c];
				ds->reported.bytes[c] = by[c];
			}
			if (ow)
				ds->overwritten = (struct rlog__overwritten){ ow->events, ow->bytes, ow->blocks };
		}
		/* The next buffer of the slot to drain: its oldest one still
		 * held, or, if none, the next it takes. */
		uint64_t next = load_relaxed(&sl->buffers_taken);
		for (size_t k = 0; k < x->nc; k++)
			if (x->c[k].slot == i && x->c[k].seq < next)
				next = x->c[k].seq;
		rlog__drain_resume_seq(d, i, next);
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
			struct file_loss *s = file_loss_of(x, pid, 0, proc_cause[c]);
			if (s) {
				ev[c] = s->events;
				by[c] = s->bytes;
				s->live = true;
			}
		}
		rlog__procs_resume_entry(d, i, ev, by);
	}
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

/* Events and lost events of the newfile files before the current one,
 * and their bytes. */
static void count_earlier(const char *pattern, uint64_t index, uint64_t *events, uint64_t *lost,
			  uint64_t *bytes, uint64_t *lost_bytes)
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
			*bytes += c.bytes;
			*lost_bytes += c.lost_bytes;
		}
		rlog_reader_close(rd);
	}
}

/* An orphan taken over by this process: its region, its daemon lock, and
 * an output and a drain that go on from where the dead daemon left. */
struct adopt {
	struct rlog__region r;
	int lock;
	struct recovery x;
	struct rlog__output o;
	struct rlog__drain d;
	bool have_output, have_drain;
	struct rlog__stats before;       /* the dead daemon's last statistics */
	uint32_t mode, pool;
	uint64_t index;                  /* newfile: the file it was writing */
	bool file_read;                  /* the session's file was read (x counts it) */
};

/*
 * Opens session name's region and takes its daemon lock.  Returns 0, 1 if
 * the session is not running (it never started, or its daemon finished all
 * but removing the region: out_stats has its statistics), or -errno:
 * -EBUSY if a daemon runs.
 */
static int adopt_open(const char *name, struct adopt *a, struct rlog__stop_result *out)
{
	memset(a, 0, sizeof *a);
	a->lock = -1;
	if (rlog__name_validate(name) < 0)
		return -EINVAL;
	int err = rlog__region_open(name, &a->r);
	if (err < 0)
		return err;
	struct rlog_shm_header *h = a->r.hdr;
	out->daemon_pid = (pid_t)h->daemon_pid;
	snprintf(out->name, sizeof out->name, "%.*s", RLOG_NAME_MAX, h->name);
	snprintf(out->log_file, sizeof out->log_file, "%.*s", RLOG_PATH_MAX - 1, h->log_file);
	a->lock = rlog__daemon_lock(name);
	if (a->lock < 0)
		return a->lock == -EWOULDBLOCK ? -EBUSY : a->lock;
	uint32_t pid = h->daemon_pid;
	if (pid && pid <= INT32_MAX && !rlog__process_dead((pid_t)pid, 0))
		return -EBUSY; /* a daemon of an earlier ringlog, without the lock */
	uint32_t state = load_acquire(&h->state);
	if (state != RLOG_STATE_ACTIVE && state != RLOG_STATE_STOPPING) {
		rlog__stats_copy(h, &out->stats);
		return 1;
	}
	a->mode = h->log_file_mode;
	rlog__stats_copy(h, &a->before);
	a->pool = load_relaxed(&h->number_of_buffers);
	if (a->pool > a->r.buffer_count || a->pool < a->r.min_buffers)
		a->pool = a->r.buffer_count; /* a scribbled count: look at them all */
	a->x.r = &a->r;
	a->x.meta = &a->o.meta;
	return 0;
}

static void adopt_free(struct adopt *a)
{
	if (a->have_drain)
		rlog__drain_free(&a->d);
	if (a->have_output)
		rlog__output_free(&a->o);
	free(a->x.c);
	free(a->x.l);
	free(a->x.t);
	if (a->lock >= 0)
		close(a->lock);
	rlog__region_close(&a->r);
}

/* The name of the file the dead daemon was writing into path. */
static int current_file(struct adopt *a, char *path, size_t n)
{
	const char *pattern = a->r.hdr->log_file;
	a->index = a->before.file_index ? a->before.file_index : 1;
	if (!(a->mode & RLOG_MODE_NEWFILE)) {
		snprintf(path, n, "%.*s", RLOG_PATH_MAX - 1, pattern);
		return 0;
	}
	/* The daemon may have opened the next file after its last statistics. */
	char next[RLOG_PATH_MAX + 24];
	while (rlog__file_name(pattern, a->index + 1, next, sizeof next) == 0 &&
	       access(next, F_OK) == 0)
		a->index++;
	return rlog__file_name(pattern, a->index, path, n) < 0 ? -ENAMETOOLONG : 0;
}

/* A newfile session's files before the current one.  Their losses: the
 * drain must not report them again (their events and totals are
 * count_earlier's).  And the one just before it, walked as the current
 * one is: a buffer the dead daemon wrote there and died before giving
 * back (it rotates in the middle of a pass, and gives buffers back at its
 * end) is matched there, not written again.  Returns 0 or -ENOMEM. */
static int read_earlier(struct adopt *a)
{
	int err = 0;
	for (uint64_t i = 1; err == 0 && (a->mode & RLOG_MODE_NEWFILE) && i < a->index; i++) {
		char name[RLOG_PATH_MAX + 24];
		struct rlog_reader *rd;
		struct rlog__layout lay;
		if (rlog__file_name(a->r.hdr->log_file, i, name, sizeof name) < 0 ||
		    (i + 1 == a->index
			     ? rlog__reader_open_layout(name, visit, &a->x, false, &rd, &lay)
			     : rlog_reader_open_count(name, &rd)) < 0)
			continue;
		err = take_losses(&a->x, rd);
		rlog_reader_close(rd);
	}
	return err < 0 ? err : a->x.err;
}

/* Reads the session's file: its layout (lay), its metadata, events and
 * losses (a->x), how much of each held buffer it holds. */
static int read_file(struct adopt *a, const char *path, struct rlog__layout *lay)
{
	struct rlog_reader *rd;
	int err = read_earlier(a);
	if (err < 0)
		return err;
	err = rlog__reader_open_layout(path, visit, &a->x, a->x.keep_cut, &rd, lay);
	if (err == 0) {
		err = take_counts(&a->x, rd);
		rlog_reader_close(rd);
	}
	if (err == 0 && a->x.err < 0)
		err = a->x.err;
	if (err == 0 && !lay->have_block0)
		err = -ENODATA;
	if (err == 0)
		a->file_read = true;
	return err;
}

/* True if fd's file is too short to hold a block 0 whole (a file header,
 * a block header, the LOG_MARKER record), and then emptied for a new
 * start. */
static bool fresh_file(int fd)
{
	struct stat st;
	size_t least = sizeof(struct rlog_file_header) + RLOG__BLOCK_HDR_SIZE + 8 +
		       sizeof(struct rlog_log_marker);
	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size < least &&
	       ftruncate(fd, 0) == 0 && lseek(fd, 0, SEEK_SET) == 0;
}

/* The file sink going on in the session's own file, after its last whole
 * block. */
static int sink_session_file(struct adopt *a, struct rlog__sink **sink)
{
	char path[RLOG_PATH_MAX + 24];
	int err = current_file(a, path, sizeof path);
	if (err < 0)
		return err;
	/* O_NOFOLLOW: a link put in the file's place since the daemon died
	 * is not written through (rlog__create_output's rule). */
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct rlog__layout lay;
	err = read_file(a, path, &lay);
	/* A block cut short, or damage, after the last whole block: cut off
	 * (a preallocated or wrapped file keeps its size; the next blocks
	 * overwrite it). */
	if (err == 0 && !lay.wrapped && !lay.prealloc && lay.append_at < lay.file_size &&
	    ftruncate(fd, (off_t)lay.append_at) < 0)
		err = -errno;
	struct rlog_shm_header *h = a->r.hdr;
	struct rlog__file_opts fo = {
		.fd = fd, .mode = a->mode, .max_size = h->max_file_size, .pattern = h->log_file,
		.force = true, .max_block = a->r.buffer_size, .marker = rlog__daemon_marker_fn,
		.marker_arg = &a->r,
	};
	if (err < 0 && err != -ENOMEM && (a->mode & RLOG_MODE_NEWFILE) && fresh_file(fd)) {
		/* The dead daemon had begun this file of the series and died
		 * before its block 0 was whole: it holds nothing; begun again,
		 * its block 0 this process's. */
		a->file_read = true;
		fo.pid = fo.tid = (uint32_t)getpid();
		fo.index = a->index;
		err = rlog__sink_file_open(&fo, sink);
		if (err < 0) {
			close(fd);
			return err;
		}
		/* Its metadata copies: the names and schemas the files before
		 * it hold (read_file), which the buffers drained into it may
		 * not repeat. */
		rlog__sink_file_copies(*sink, &a->o);
		return 0;
	}
	if (err < 0) {
		close(fd);
		return err;
	}
	fo.pid = lay.block0_pid;
	fo.tid = lay.block0_tid;
	struct rlog__file_resume rs = {
		.pos = lay.append_at, .next_seq = lay.next_seq, .marker_offset = lay.block0,
		.marker_pid = lay.block0_pid, .marker_tid = lay.block0_tid,
		.ring_start = lay.ring_start, .data_end = lay.file_size, .wrapped = lay.wrapped,
		.index = a->index, .major = lay.major,
	};
	err = rlog__sink_file_resume(&fo, &rs, sink);
	if (err < 0)
		close(fd);
	return err;
}

/* The dead daemon's journal (journal.h): the names and schemas it had
 * seen, and, of a flight recorder, the ledger of what its snapshots
 * reported (x->journal). */
static void read_journal(struct adopt *a)
{
	char path[160];
	struct rlog_reader *rd;
	struct rlog__layout lay;
	if (rlog__journal_path(a->r.hdr->name, path, sizeof path) < 0 ||
	    rlog__reader_open_layout(path, visit, &a->x, a->x.keep_cut, &rd, &lay) < 0)
		return;
	int err = take_counts(&a->x, rd);
	rlog_reader_close(rd);
	if (err < 0)
		a->x.err = err;
	if (a->x.err < 0 || !a->r.overwrite) {
		/* Not a flight recorder: its names only. */
		a->x.nl = 0;
		a->x.lost = a->x.lost_bytes = 0;
		return;
	}
	a->x.journal = true;
	a->x.jpid = lay.block0_pid;
	a->x.jtid = lay.block0_tid;
}

/* Where the first `left` events of a buffer end (what snapshots took of
 * it), and the time after them. */
struct delivered_walk {
	uint32_t left, off;
	uint64_t cursor;
};

static int delivered_step(void *arg, const struct rlog__record *rec, uint64_t ticks, uint32_t off)
{
	struct delivered_walk *w = arg;
	if (w->left == 0)
		return 1;
	if (rlog__record_kind(rec->id, rec->flagged) == RLOG_RECORD_EVENT)
		w->left--;
	w->off = off + rec->size;
	w->cursor = ticks;
	return 0;
}

/*
 * A flight recorder's buffers: what its snapshots took of each (the
 * descriptor's delivered_events, overwrite.c: its first events) is written
 * and counted already, in the snapshots.  The drain takes each buffer from
 * there (recover -o: FILE does not repeat them; stop --force: they are not
 * counted lost); a daemon that goes on (--resume) knows it as a snapshot's
 * position, for the next --since-last and for what is discarded at stop.
 */
static void skip_delivered(struct adopt *a)
{
	struct rlog__region *r = &a->r;
	for (size_t i = 0; i < a->x.nc; i++) {
		struct unwritten *c = &a->x.c[i];
		struct rlog_shm_desc *desc = &r->desc[c->idx];
		uint32_t de = load_relaxed(&desc->delivered_events);
		if (de == 0 || c->matched > 0)
			continue;
		struct delivered_walk w = { de, 0, c->base_time };
		rlog__records_walk(rlog__region_buffer(r, c->idx), c->committed, c->base_time,
				   delivered_step, &w);
		if (w.left > 0)
			continue; /* not there (scribbled): the buffer goes whole */
		c->past_snapshots = true;
		if (a->d.recorder.on)
			a->d.bufs[c->idx].snapshot = (struct rlog__snapshot_mark){
				.gen = load_relaxed(&desc->gen), .off = w.off, .events = de,
				.event_bytes = load_relaxed(&desc->delivered_bytes), .cursor = w.cursor,
			};
		else
			rlog__drain_resume_buffer(&a->d, c->idx, c->slot, w.off, w.cursor);
	}
}

/* A flight recorder's losses of threads gone that no snapshot reported
 * (the journal's third part): reported now.  Returns their events and
 * bytes in gone[0], gone[1]. */
static void report_gone(struct adopt *a, uint64_t gone[2])
{
	struct recovery *x = &a->x;
	gone[0] = gone[1] = 0;
	for (size_t i = 0; x->journal && i < x->nl; i++) {
		struct file_loss *s = &x->l[i];
		if (s->live || (s->pid == x->jpid && s->tid == x->jtid) ||
		    (s->events == 0 && s->bytes == 0))
			continue;
		if (s->cause == RLOG_LOSS_OVERWRITTEN) {
			rlog__drain_range_block(&a->d, s->pid, s->tid, s->first, s->events, s->bytes,
						s->blocks, s->last);
		} else {
			rlog__drain_loss_block(&a->d, s->pid, s->tid, s->first, s->events, s->bytes,
					       s->cause);
		}
		gone[0] += s->events;
		gone[1] += s->bytes;
	}
}

/* A flight recorder's daemon that goes on (--resume): the ledger's losses,
 * those it reported for the gone threads too, are what snapshots and this
 * recovery counted; its own journal goes on from them (journal.c: what
 * is not a live slot's is the gone threads'). */
static void seed_ledger(struct adopt *a)
{
	struct rlog__drain *d = &a->d;
	for (size_t i = 0; i < a->x.nl; i++) {
		const struct file_loss *s = &a->x.l[i];
		if (s->cause == RLOG_LOSS_OVERWRITTEN) {
			d->snapshots.total_overwritten.events += s->events;
			d->snapshots.total_overwritten.bytes += s->bytes;
			d->snapshots.total_overwritten.buffers += s->blocks;
		} else if (s->cause == RLOG_LOSS_NO_BUFFER || s->cause == RLOG_LOSS_NESTED) {
			int c = s->cause == RLOG_LOSS_NESTED;
			d->snapshots.total.events[c] += s->events;
			d->snapshots.total.bytes[c] += s->bytes;
		}
	}
}

/* A new sequential file at to->path for what the session's own output
 * does not hold: the session's file, if it reads, says what that is. */
static int sink_new_file(struct adopt *a, const struct rlog__recover_to *to,
			 struct rlog__sink **sink)
{
	if (!(a->mode & RLOG_MODE_NO_FILE)) {
		char path[RLOG_PATH_MAX + 24];
		struct rlog__layout lay;
		a->x.keep_cut = true; /* the session's file stays as it is */
		if (current_file(a, path, sizeof path) == 0 && read_file(a, path, &lay) < 0) {
			/* Unreadable: the new file holds every buffer whole. */
			a->x.nl = a->x.nt = 0;
			a->x.events = a->x.lost = 0;
			for (size_t i = 0; i < a->x.nc; i++)
				a->x.c[i].matched = 0;
		}
	}
	int fd = rlog__create_output(to->path, to->force ? RLOG_OUT_FORCE : 0, NULL);
	if (fd < 0)
		return fd;
	struct rlog__file_opts fo = {
		.fd = fd, .mode = RLOG_MODE_SEQUENTIAL, .max_block = a->r.buffer_size,
		.pid = (uint32_t)getpid(), .tid = (uint32_t)getpid(), .marker = rlog__daemon_marker_fn,
		.marker_arg = &a->r,
	};
	int err = rlog__sink_file_open(&fo, sink);
	if (err < 0)
		return err;
	/* The names and schemas the session's file holds, which the parts of
	 * buffers it wrote are not here to repeat. */
	rlog__sink_file_copies(*sink, &a->o);
	return 0;
}

/* What the dead daemon wrote and lost, which this process's output does
 * not hold: the drain adds it to its statistics. */
static void set_base(struct adopt *a, bool new_file, const uint64_t gone[2])
{
	struct rlog__drain_base *b = &a->d.base;
	const struct rlog__stats *s = &a->before;
	/* Overwritten events of threads without a live slot: the live ones'
	 * the drain counts from their slots (overwrite.c). */
	for (size_t i = 0; i < a->x.nl; i++)
		if (!a->x.l[i].live && a->x.l[i].cause == RLOG_LOSS_OVERWRITTEN)
			b->events_overwritten += a->x.l[i].events;
	if (a->x.journal) {
		/* A flight recorder: what its snapshots reported (the
		 * journal's ledger), the drain the rest, each once; gone's
		 * losses are the drain's, reported by report_gone. */
		b->events = s->events_written;
		b->bytes = s->bytes_written;
		b->lost_events = a->x.lost - gone[0];
		b->lost_bytes = a->x.lost_bytes - gone[1];
	} else if (a->file_read && !(a->mode & RLOG_MODE_CIRCULAR)) {
		/* What the files hold: the dead daemon's part counted there. */
		uint64_t ev = a->x.events, ls = a->x.lost, by = a->x.bytes, lb = a->x.lost_bytes;
		if (a->mode & RLOG_MODE_NEWFILE)
			count_earlier(a->r.hdr->log_file, a->index, &ev, &ls, &by, &lb);
		b->events = ev;
		b->lost_events = ls;
		b->bytes = by;
		b->lost_bytes = lb;
	} else {
		/* A circular file has lost its oldest part, a session without
		 * a file has none: the dead daemon's last statistics. */
		b->events = s->events_written;
		b->lost_events = s->events_lost;
		b->bytes = s->bytes_written;
		b->lost_bytes = s->bytes_lost;
	}
	if (new_file && (a->mode & RLOG_MODE_NO_FILE)) {
		/* A buffer that goes to the new file whole although a snapshot
		 * took events of it (skip_delivered could not find them): those
		 * are written already. */
		for (size_t i = 0; i < a->x.nc; i++) {
			if (a->x.c[i].past_snapshots)
				continue;
			uint32_t de = load_relaxed(&a->r.desc[a->x.c[i].idx].delivered_events);
			uint32_t db = load_relaxed(&a->r.desc[a->x.c[i].idx].delivered_bytes);
			b->events -= de < b->events ? de : b->events;
			b->bytes -= db < b->bytes ? db : b->bytes;
		}
	}
	b->buffers = s->buffers_written;
	b->log_buffers_lost = s->log_buffers_lost;
	b->realtime_buffers_lost = s->realtime_buffers_lost;
	b->corrupt_buffers = s->corrupt_buffers;
}

/*
 * Sets up the output (the session's own, or, with to, a new file) and a
 * drain that goes on from where the dead daemon left: what its output
 * holds of each buffer skipped, the losses it reports not reported again,
 * its counts in the drain's base.  realtime: a real-time session's socket
 * is created again (a daemon that goes on); otherwise its consumers are
 * gone with the daemon.
 */
static int adopt_prepare(struct adopt *a, const struct rlog__recover_to *to, bool realtime,
			 uint32_t tid)
{
	struct rlog_shm_header *h = a->r.hdr;
	rlog__output_init(&a->o, rlog__output_meta_limit(a->mode, h->max_file_size));
	a->have_output = true;
	int err = buffers_to_adopt(&a->x, a->pool);
	if (err < 0)
		return err;
	if (a->mode & RLOG_MODE_NO_FILE)
		read_journal(a);
	struct rlog__sink *sink = NULL;
	bool primary = true;
	if (to) {
		err = sink_new_file(a, to, &sink);
	} else if (!(a->mode & RLOG_MODE_NO_FILE)) {
		err = sink_session_file(a, &sink);
	} else if (!realtime) {
		/* stop --force without a file: nowhere to put the buffers. */
		sink = calloc(1, sizeof *sink);
		err = sink ? 0 : -ENOMEM;
		if (sink)
			sink->ops = &null_ops;
		primary = false;
	}
	if (err < 0)
		return err;
	if (sink)
		rlog__output_add(&a->o, sink, primary);
	if (realtime) {
		/* The dead daemon's socket refuses connections: the real-time
		 * sink replaces it (sink_realtime.c). */
		err = rlog__daemon_realtime_open(&a->r, h->name, tid, &a->o);
		if (err < 0)
			return err;
	}
	err = rlog__drain_init(&a->d, &a->r, &a->o, h->tick_source);
	if (err < 0)
		return err;
	a->have_drain = true;
	a->d.pool = a->pool;
	for (size_t i = 0; i < a->x.nc; i++)
		if (a->x.c[i].matched > 0)
			rlog__drain_resume_buffer(&a->d, a->x.c[i].idx, a->x.c[i].slot,
						  a->x.c[i].matched, cursor_after(&a->r, &a->x.c[i]));
	if (a->x.journal)
		skip_delivered(a);
	losses_known(&a->x, &a->d);
	if (a->x.err < 0)
		return a->x.err;
	uint64_t gone[2];
	report_gone(a, gone);
	if (a->x.journal && a->d.recorder.on)
		seed_ledger(a);
	/* A buffer the dead daemon was reading (overwrite mode) is nobody's
	 * now: producers may take it again. */
	for (uint32_t i = 0; i < a->r.buffer_count; i++)
		if (load_relaxed(&a->r.desc[i].reader))
			store_release(&a->r.desc[i].reader, 0);
	set_base(a, to != NULL, gone);
	return 0;
}

int rlog__daemon_recover(const char *name, const struct rlog__recover_to *to,
			  struct rlog__stop_result *out)
{
	memset(out, 0, sizeof *out);
	struct adopt a;
	int err = adopt_open(name, &a, out);
	if (err == 1) {
		/* It never started, or finished all but removing its region. */
		rlog__region_unlink(name);
		adopt_free(&a);
		return 0;
	}
	if (err < 0 || (err = adopt_prepare(&a, to, false, 0)) < 0) {
		adopt_free(&a);
		return err;
	}
	struct rlog_shm_header *h = a.r.hdr;
	uint32_t mode = a.mode;
	/* The daemon's stop sequence, from here: the region is removed.  So is
	 * the dead daemon's real-time socket (its consumers are gone). */
	h->last_error[0] = '\0';
	rlog__daemon_stop(&a.r, &a.d, &a.o, name);
	char sock[128];
	if ((mode & RLOG_MODE_REAL_TIME) && rlog__rt_path(name, sock, sizeof sock) == 0)
		unlink(sock);
	rlog__stats_copy(h, &out->stats);
	snprintf(out->last_error, sizeof out->last_error, "%.*s", 255, h->last_error);
	adopt_free(&a);
	return 0;
}

int rlog__daemon_adopt_serve(const char *name, int report_fd)
{
	struct rlog__stop_result res;
	struct adopt a;
	uint32_t tid = (uint32_t)syscall(SYS_gettid);
	int err = adopt_open(name, &a, &res);
	if (err == 1)
		err = -ESRCH; /* not running: nothing to go on with */
	struct rlog_shm_header *h = a.r.hdr;
	if (err == 0) {
		h->daemon_pid = (uint32_t)getpid();
		h->last_error[0] = '\0';
		err = adopt_prepare(&a, NULL, true, tid);
	}
	char msg[sizeof h->last_error + sizeof err];
	memcpy(msg, &err, sizeof err);
	snprintf(msg + sizeof err, sizeof msg - sizeof err, "%s",
		 err < 0 && h && h->last_error[0] ? h->last_error : "");
	if (write(report_fd, msg, sizeof msg) < 0)
		err = err < 0 ? err : -EPIPE;
	close(report_fd);
	if (err < 0) {
		adopt_free(&a);
		return err;
	}
	char own[RLOG_NAME_MAX + 1];
	snprintf(own, sizeof own, "%.*s", RLOG_NAME_MAX, h->name);
	/* The drain and output are the loop's now; it frees them. */
	a.have_drain = a.have_output = false;
	rlog__daemon_serve(&a.r, &a.d, &a.o, own, tid, NULL);
	adopt_free(&a);
	return 0;
}
