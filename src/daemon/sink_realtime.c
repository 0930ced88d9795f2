/*
 * sink_realtime.c - delivering blocks to real-time consumers (sink_realtime.h,
 * docs/FORMAT.md "The real-time stream").
 *
 * Each consumer's stream is a log file of its own: the file header (with
 * the LOG_MARKER copy), block 0, the metadata copies, then every block the
 * daemon drains, numbered on for that consumer (each block's header, and
 * its crc32, made for it).  Sends never block:
 *
 *   block drained ──► consumer has bytes of an earlier frame unsent?
 *                       yes: send them; still some left: this block is
 *                            missed (counted)
 *                       no:  frame = [DATA_LOSS REAL_TIME + copies, if it
 *                            missed anything] + the block; sendmsg
 *                            (MSG_DONTWAIT): all sent: done; some sent:
 *                            the rest is kept and sent first next time
 *                            (the frame is delivered); none sent: missed
 *
 * so a consumer that does not keep up costs the daemon one failed sendmsg
 * per block and at most one frame of memory, and never slows the file or
 * the producers.  A consumer that misses blocks is told how many before
 * the next block it gets, and receives the metadata copies again (it may
 * have missed a schema or a name).  At stop the daemon gives consumers up
 * to RT_GRACE_MS in all to take what they have pending; blocks still not
 * sent whole are counted as missed, and the streams are closed.
 *
 * A consumer that is not reading at the stop (stopped, its socket full)
 * cannot be told in its stream what it missed at the end: each consumer
 * gets, with the first bytes of its stream, the descriptor of its end
 * account (struct rlog_rt_end, a memfd), which the daemon writes just
 * before it closes the stream: every thread block the consumer missed,
 * told in the stream or not, and the stream's length.  What the account
 * counts beyond the DATA_LOSS records the consumer read, it missed
 * without being told (docs/FORMAT.md, "The real-time stream").
 */
#define _GNU_SOURCE
#include "sink_realtime.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "format/logfile.h"
#include "record.h"
#include "shm.h"
#include "vec.h"

/* How long stop waits, in all, for consumers to take what is pending. */
#define RT_GRACE_MS 2000

struct consumer {
	int fd;
	uint64_t seq;                /* the next block number of its stream */
	uint8_t *pend;               /* bytes of frames not yet sent */
	size_t pend_len, pend_off, pend_cap;
	struct rlog__live_fblock *blk; /* the blocks in pend (end: offset in pend just past
					  it): what is lost if the stream closes first */
	size_t nblk, blk_cap;
	bool missed_any;             /* it missed a block since the last it got */
	uint64_t missed_blocks;      /* thread blocks missed since then ... */
	uint64_t missed_events, missed_bytes; /* ... and their events */
	bool dead;
	int endfd;                   /* its end account (memfd), or -1 */
	uint64_t sent;               /* bytes of its stream the socket took */
	uint64_t lost_blocks;        /* thread blocks it missed since its stream began ... */
	uint64_t lost_events, lost_bytes; /* ... and their events: its end account */
};

/* One metadata copy block, rendered once per change of the cache. */
struct copy {
	uint32_t pid, tid, size, records;
	uint64_t base_time;
	size_t off;                  /* its data in copies */
};

struct rtsink {
	struct rlog__sink base;
	int lfd;                     /* the listening socket */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	uid_t uid;
	struct consumer *c;
	size_t nc, cap;
	struct rlog_file_header fh;  /* every stream's file header */
	uint8_t marker[8 + sizeof(struct rlog_log_marker)]; /* block 0's record */
	uint32_t marker_size, pid, tid;
	/* The copies: rendered from the cache at version copies_version. */
	uint8_t *copies;
	size_t copies_len, copies_cap;
	struct copy *copy;
	size_t ncopy, copy_cap;
	uint64_t copies_version;
	bool copies_valid;
	struct rlog__live_frame frame; /* a frame being assembled (format/live.h) */
	uint64_t last_time;          /* base time of the last block drained */
};


/* ---------------------------------------------------------------- */
/* Frames                                                            */
/* ---------------------------------------------------------------- */


static int copy_add(void *arg, uint32_t pid, uint32_t tid, uint64_t base_time, const void *data,
		    uint32_t size, uint32_t records)
{
	struct rtsink *rt = arg;
	if (rlog__vec_room(&rt->copy, rt->ncopy, &rt->copy_cap, sizeof *rt->copy, 16) < 0 ||
	    rlog__bytes_room(&rt->copies, &rt->copies_cap, rt->copies_len + size) < 0)
		return -ENOMEM;
	memcpy(rt->copies + rt->copies_len, data, size);
	rt->copy[rt->ncopy++] = (struct copy){ pid, tid, size, records, base_time, rt->copies_len };
	rt->copies_len += size;
	return 0;
}

/* The copies, rendered again if the cache changed.  Returns 0 or -ENOMEM. */
static int copies_fresh(struct rtsink *rt)
{
	const struct rlog__metacache *m = &rt->base.out->meta;
	if (rt->copies_valid && rt->copies_version == m->version)
		return 0;
	rt->ncopy = 0;
	rt->copies_len = 0;
	int err = rlog__output_copies(rt->base.out, copy_add, rt);
	rt->copies_valid = err == 0;
	rt->copies_version = m->version;
	return err;
}

/* Appends the copies to the frame, numbered from *seq on. */
static int frame_copies(struct rtsink *rt, uint64_t *seq)
{
	if (copies_fresh(rt) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < rt->ncopy; i++) {
		const struct copy *c = &rt->copy[i];
		if (rlog__live_frame_block(&rt->frame, RLOG_BLOCK_FLAG_METADATA, (*seq)++, c->pid,
					   c->tid, c->base_time, rt->copies + c->off, c->size,
					   c->records, 0, 0) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* ---------------------------------------------------------------- */
/* Consumers                                                         */
/* ---------------------------------------------------------------- */

static void consumer_close(struct consumer *c);

/* Counts a thread block of c's stream that was not sent whole: missed. */
static void lost_block(struct rtsink *rt, struct consumer *c, const struct rlog__live_fblock *b)
{
	if (!b->thread)
		return;
	c->lost_blocks++;
	c->lost_events += b->events;
	c->lost_bytes += b->event_bytes;
	rt->base.st.realtime_buffers_lost++;
}

/* Writes c's end account, whole (the consumer reads it after the end of
 * its stream, so one pwrite before the close suffices). */
static void end_write(const struct rtsink *rt, const struct consumer *c, uint32_t state,
		      uint64_t blocks_whole)
{
	if (c->endfd < 0)
		return;
	struct rlog_rt_end e = {
		.magic = RLOG_RT_END_MAGIC,
		.version = RLOG_RT_END_VERSION,
		.state = state,
		.stream_bytes = c->sent,
		.blocks_whole = blocks_whole,
		.lost_blocks = c->lost_blocks,
		.lost_events = c->lost_events,
		.lost_bytes = c->lost_bytes,
		.last_time = rt->last_time,
	};
	/* A consumer that cannot be told reads an OPEN or missing account:
	 * "not known", which is what it is. */
	(void)rlog__rt_end_write(c->endfd, &e);
}

/* Ends c's stream: the blocks of its pending bytes not sent whole are
 * missed, its end account says so, and its socket is closed. */
static void consumer_end(struct rtsink *rt, struct consumer *c)
{
	uint64_t cut = 0;
	for (size_t k = 0; !c->dead && k < c->nblk; k++)
		if (c->blk[k].end > c->pend_off) {
			cut++;
			lost_block(rt, c, &c->blk[k]);
		}
	end_write(rt, c, RLOG_RT_END_FINAL, c->seq - cut);
	consumer_close(c);
}

static void consumer_close(struct consumer *c)
{
	if (c->endfd >= 0)
		close(c->endfd);
	c->endfd = -1;
	if (c->fd >= 0) {
		shutdown(c->fd, SHUT_RDWR);
		close(c->fd);
	}
	c->fd = -1;
	free(c->pend);
	free(c->blk);
	c->pend = NULL;
	c->blk = NULL;
	c->dead = true;
}

static bool would_block(int err)
{
	return err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS;
}

/* Sends what c has pending.  Returns true if nothing is left. */
static bool pend_send(struct consumer *c)
{
	while (c->pend_off < c->pend_len) {
		ssize_t n = send(c->fd, c->pend + c->pend_off, c->pend_len - c->pend_off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (!would_block(errno))
				consumer_close(c);
			return false;
		}
		c->pend_off += (size_t)n;
		c->sent += (size_t)n;
	}
	c->pend_len = c->pend_off = 0;
	c->nblk = 0;
	return true;
}

/* Keeps bytes [sent, len) of frame as c's pending bytes, with the blocks
 * they hold.  Returns 0 or -ENOMEM. */
static int pend_keep(struct consumer *c, const uint8_t *frame, size_t len, size_t sent,
		     const struct rlog__live_fblock *blk, size_t nblk)
{
	size_t n = len - sent;
	if (n > c->pend_cap) {
		uint8_t *p = realloc(c->pend, n);
		if (!p)
			return -ENOMEM;
		c->pend = p;
		c->pend_cap = n;
	}
	memcpy(c->pend, frame + sent, n);
	c->pend_len = n;
	c->pend_off = 0;
	c->nblk = 0;
	for (size_t i = 0; i < nblk; i++) {
		if (blk[i].end <= sent)
			continue;
		if (rlog__vec_room(&c->blk, c->nblk, &c->blk_cap, sizeof *c->blk, 16) < 0)
			return -ENOMEM;
		c->blk[c->nblk] = blk[i];
		c->blk[c->nblk++].end = blk[i].end - sent;
	}
	return 0;
}

/* Sends the frame to c.  Returns 1 (delivered, perhaps partly pending), 0
 * (nothing sent: c missed it) or -1 (c is gone). */
static int frame_send(struct rtsink *rt, struct consumer *c)
{
	uint64_t seq0 = c->seq;
	size_t sent = 0;
	while (sent < rt->frame.len) {
		ssize_t n = send(c->fd, rt->frame.buf + sent, rt->frame.len - sent,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (!would_block(errno)) {
				consumer_close(c);
				return -1;
			}
			break;
		}
		sent += (size_t)n;
		c->sent += (size_t)n;
	}
	if (sent == 0 && rt->frame.len > 0)
		return 0;
	if (sent < rt->frame.len &&
	    pend_keep(c, rt->frame.buf, rt->frame.len, sent, rt->frame.blk, rt->frame.nblk) < 0) {
		/* Its stream ends cut here: the blocks not sent whole are
		 * missed, and its end account tells it. */
		uint64_t whole = 0;
		c->nblk = 0;
		for (size_t k = 0; k < rt->frame.nblk; k++) {
			if (rt->frame.blk[k].end <= sent)
				whole++;
			else
				lost_block(rt, c, &rt->frame.blk[k]);
		}
		end_write(rt, c, RLOG_RT_END_FINAL, seq0 + whole);
		consumer_close(c);
		return -1;
	}
	return 1;
}

/* A DATA_LOSS (REAL_TIME) record for what c missed, in a daemon block. */
static int frame_loss(struct rtsink *rt, struct consumer *c, uint64_t time, uint64_t *seq)
{
	return rlog__live_frame_loss(&rt->frame, (*seq)++, time, c->missed_blocks,
				     c->missed_events, c->missed_bytes);
}

static void missed(struct rtsink *rt, struct consumer *c, const struct rlog__out_block *b)
{
	c->missed_any = true;
	if (b->flags & (RLOG_BLOCK_FLAG_DAEMON | RLOG_BLOCK_FLAG_METADATA))
		return;
	c->missed_blocks++;
	c->missed_events += b->events;
	c->missed_bytes += b->event_bytes;
	c->lost_blocks++;
	c->lost_events += b->events;
	c->lost_bytes += b->event_bytes;
	rt->base.st.realtime_buffers_lost++;
}

/* Sends c's first bytes with its end account's descriptor (SCM_RIGHTS).
 * Returns false if the socket took nothing (c is closed then). */
static bool first_send(struct consumer *c)
{
	long n = rlog__live_send_first(c->fd, c->pend, c->pend_len, c->endfd);
	if (n <= 0) {
		consumer_close(c);
		return false;
	}
	c->pend_off = (size_t)n;
	c->sent = (uint64_t)n;
	return true;
}

/* A new consumer on fd: the start of its stream. */
static void consumer_add(struct rtsink *rt, int fd)
{
	struct ucred cr;
	socklen_t len = sizeof cr;
	/* Same user only: the socket is 0600, and the peer is checked too
	 * (a descriptor passed on by another process). */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || cr.uid != rt->uid ||
	    rlog__vec_room(&rt->c, rt->nc, &rt->cap, sizeof *rt->c, 4) < 0) {
		close(fd);
		return;
	}
	int sz = RLOG_RT_SNDBUF;
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz); /* the kernel may cap it */
	struct consumer *c = &rt->c[rt->nc++];
	memset(c, 0, sizeof *c);
	c->fd = fd;
	c->endfd = memfd_create("ringlog-rt-end", MFD_CLOEXEC);
	uint64_t seq = 0;
	rlog__live_frame_reset(&rt->frame);
	if (c->endfd < 0 || rlog__live_frame_header(&rt->frame, &rt->fh) < 0 ||
	    rlog__live_frame_block(&rt->frame, RLOG_BLOCK_FLAG_DAEMON, seq++, rt->pid, rt->tid,
				   rt->fh.marker.sync_ticks, rt->marker, rt->marker_size, 1, 0,
				   0) < 0 ||
	    frame_copies(rt, &seq) < 0 ||
	    pend_keep(c, rt->frame.buf, rt->frame.len, 0, rt->frame.blk, rt->frame.nblk) < 0) {
		consumer_close(c);
		return;
	}
	c->seq = seq;
	/* Open until the stream ends: a consumer that finds it so at the end
	 * of its stream knows the daemon did not close it (it died). */
	end_write(rt, c, RLOG_RT_END_OPEN, 0);
	if (first_send(c))
		pend_send(c);
}

/* Drops the consumers that are gone. */
static void sweep(struct rtsink *rt)
{
	size_t k = 0;
	for (size_t i = 0; i < rt->nc; i++)
		if (!rt->c[i].dead)
			rt->c[k++] = rt->c[i];
	rt->nc = k;
}

/* ---------------------------------------------------------------- */
/* The sink                                                          */
/* ---------------------------------------------------------------- */

static void rt_block(struct rlog__sink *s, const struct rlog__out_block *b)
{
	struct rtsink *rt = (struct rtsink *)s;
	bool thread = !(b->flags & (RLOG_BLOCK_FLAG_DAEMON | RLOG_BLOCK_FLAG_METADATA));
	rt->last_time = b->base_time;
	if (s->primary) {
		/* A session without a file: written means handed to the
		 * consumers (those that keep up get it); with none connected,
		 * no consumer got it. */
		s->st.events_written += b->events;
		s->st.bytes_written += b->event_bytes;
		s->st.buffers_written += thread;
		if (thread && rt->nc == 0)
			s->st.realtime_buffers_lost++;
	}
	for (size_t i = 0; i < rt->nc; i++) {
		struct consumer *c = &rt->c[i];
		if (c->dead)
			continue;
		if (c->pend_len > c->pend_off && !pend_send(c)) {
			if (!c->dead)
				missed(rt, c, b);
			continue;
		}
		uint64_t seq = c->seq;
		rlog__live_frame_reset(&rt->frame);
		int err = 0;
		if (c->missed_any) {
			if (c->missed_blocks > 0)
				err = frame_loss(rt, c, b->base_time, &seq);
			if (err == 0)
				err = frame_copies(rt, &seq);
		}
		if (err == 0)
			err = rlog__live_frame_block(&rt->frame, b->flags, seq++, b->pid, b->tid,
						     b->base_time, b->data, b->size, b->records,
						     b->events, b->event_bytes);
		if (err < 0) {
			missed(rt, c, b); /* out of memory: the next frame tells it */
			continue;
		}
		int rc = frame_send(rt, c);
		if (rc == 1) {
			c->seq = seq;
			c->missed_any = false;
			c->missed_blocks = c->missed_events = c->missed_bytes = 0;
		} else if (rc == 0) {
			missed(rt, c, b);
		}
	}
	sweep(rt);
}

static void rt_poll(struct rlog__sink *s)
{
	struct rtsink *rt = (struct rtsink *)s;
	for (;;) {
		int fd = accept4(rt->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			break; /* EAGAIN: nobody waiting; anything else: next time */
		}
		consumer_add(rt, fd);
	}
	for (size_t i = 0; i < rt->nc; i++)
		if (!rt->c[i].dead && rt->c[i].pend_len > rt->c[i].pend_off)
			pend_send(&rt->c[i]);
	sweep(rt);
}

static int rt_flush(struct rlog__sink *s)
{
	rt_poll(s);
	return 0;
}

/* Waits until every consumer has taken what is pending, or the deadline. */
static void grace(struct rtsink *rt, uint64_t deadline)
{
	for (;;) {
		struct pollfd p[64];
		nfds_t n = 0;
		for (size_t i = 0; i < rt->nc && n < 64; i++)
			if (!rt->c[i].dead && rt->c[i].pend_len > rt->c[i].pend_off)
				p[n++] = (struct pollfd){ rt->c[i].fd, POLLOUT, 0 };
		if (n == 0 || rlog__monotonic_ns() >= deadline)
			return;
		(void)poll(p, n, 20);
		for (size_t i = 0; i < rt->nc; i++)
			if (!rt->c[i].dead && rt->c[i].pend_len > rt->c[i].pend_off)
				pend_send(&rt->c[i]);
	}
}

static int rt_finish(struct rlog__sink *s, const struct rlog_log_marker *refined)
{
	(void)refined;
	struct rtsink *rt = (struct rtsink *)s;
	rt_poll(s);
	uint64_t deadline = rlog__monotonic_ns() + (uint64_t)RT_GRACE_MS * 1000000u;
	grace(rt, deadline);
	/* A consumer that missed the last blocks has had no block since to
	 * carry the DATA_LOSS that tells it: its stream ends with one. */
	for (size_t i = 0; i < rt->nc; i++) {
		struct consumer *c = &rt->c[i];
		uint64_t seq = c->seq;
		if (c->dead || c->missed_blocks == 0 || c->pend_len > c->pend_off)
			continue;
		rlog__live_frame_reset(&rt->frame);
		if (frame_loss(rt, c, rt->last_time, &seq) == 0 &&
		    pend_keep(c, rt->frame.buf, rt->frame.len, 0, rt->frame.blk, rt->frame.nblk) == 0) {
			c->seq = seq;
			c->missed_blocks = c->missed_events = c->missed_bytes = 0;
		}
	}
	grace(rt, deadline);
	/* Blocks not sent whole: missed, and the stream ends cut; the end
	 * account says what the stream could not. */
	for (size_t i = 0; i < rt->nc; i++)
		if (!rt->c[i].dead)
			consumer_end(rt, &rt->c[i]);
	rt->nc = 0;
	if (rt->lfd >= 0) {
		close(rt->lfd);
		rt->lfd = -1;
		unlink(rt->path);
	}
	return 0;
}

static void rt_free(struct rlog__sink *s)
{
	struct rtsink *rt = (struct rtsink *)s;
	for (size_t i = 0; i < rt->nc; i++)
		consumer_close(&rt->c[i]);
	if (rt->lfd >= 0) {
		close(rt->lfd);
		unlink(rt->path);
	}
	free(rt->c);
	free(rt->copies);
	free(rt->copy);
	rlog__live_frame_free(&rt->frame);
	free(rt);
}

static const struct rlog__sink_ops realtime_ops = {
	.name = "real-time",
	.block = rt_block,
	.flush = rt_flush,
	.poll = rt_poll,
	.finish = rt_finish,
	.free = rt_free,
};

/* Creates the listening socket at path.  Returns the fd or -errno. */
static int listen_at(const char *path)
{
	struct sockaddr_un a;
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A socket left by a daemon that died refuses connections: replace
	 * it.  One that accepts belongs to a live daemon: leave it. */
	int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe >= 0) {
		if (connect(probe, (struct sockaddr *)&a, sizeof a) == 0) {
			close(probe);
			close(fd);
			return -EADDRINUSE;
		}
		close(probe);
	}
	unlink(path);
	/* Same user only: created 0600 (the umask applies to bind). */
	mode_t old = umask(077);
	int rc = bind(fd, (struct sockaddr *)&a, sizeof a);
	int err = errno;
	umask(old);
	if (rc < 0 || listen(fd, 16) < 0) {
		if (rc == 0)
			err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

int rlog__sink_realtime_open(const char *name, const struct rlog_log_marker *marker, uint32_t pid,
			     uint32_t tid, struct rlog__sink **out)
{
	struct rtsink *rt = calloc(1, sizeof *rt);
	if (!rt)
		return -ENOMEM;
	rt->base.ops = &realtime_ops;
	rt->lfd = -1;
	rt->uid = geteuid();
	rt->pid = pid;
	rt->tid = tid;
	int err = rlog__rt_path(name, rt->path, sizeof rt->path);
	if (err < 0)
		goto fail;
	err = listen_at(rt->path);
	if (err < 0)
		goto fail;
	rt->lfd = err;
	rlog__file_header_make(&rt->fh, 0, marker);
	rt->marker_size = rlog__marker_record(rt->marker, marker);
	*out = &rt->base;
	return 0;
fail:
	free(rt);
	return err;
}
