/*
 * collect.c - chunks back into log files (collect.h; docs/FORMAT.md,
 * "Chunks").  The engine's side is Kafka's consumer group through
 * librdkafka: offsets are committed by hand, only after the files they
 * cover and their state are on disk.
 */
#define _GNU_SOURCE
#include "collect/collect.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "format/block.h"
#include "format/chunk.h"
#include "format/logfile.h"
#include "format/loss.h"
#include "io.h"
#include "record.h"
#include "term.h"
#include "vec.h"

#ifdef RLOG_HAVE_RDKAFKA
#include <librdkafka/rdkafka.h>
#endif
#include "daemon/sink_nats.h"

#define BLOCK_HDR RLOG__BLOCK_HDR_SIZE

/* One host's session: its file in DIR. */
struct hfile {
	uint8_t host_id[16];
	char session[256];
	uint64_t run_id;              /* the session's run (docs/FORMAT.md, "Chunks") */
	int fd, dirfd;
	char name[600];               /* in DIR */
	uint64_t next_chunk;          /* the next chunk's seq */
	uint64_t next_block;          /* above the highest block seq written */
	uint64_t len;                 /* bytes in the file */
	uint64_t last_time;
	/* Added to the seq of the chunks' blocks: after chunks that are
	 * missing (a late start, a gap), so that the file's block sequence
	 * has no gap where a DATA_LOSS tells what is missing. */
	uint64_t shift;
	/* What the chunks up to the last one written carried (their headers'
	 * *_before and counts): a gap's DATA_LOSS is the difference. */
	uint64_t events_through, bytes_through, blocks_through;
	/* HF_*: what the next chunks owe the file after a gap. */
	uint32_t flags;
	/* DIR/.NAME.lock, flocked while this collector writes the file (a
	 * batch at most): -1 when not held, and fd is then closed too. */
	int lockfd;
	bool dirty;
	struct rlog__collect_file rep;
};

/* A gap was written since the last METADATA chunk: the next one's copies
 * go into the file (the schemas and names of the lost chunks). */
#define HF_NEED_META 0x1u
/* The next numbered block's seq sets the shift (a gap or copies just
 * written: the blocks after them numbered to follow). */
#define HF_RESHIFT 0x2u

struct collector {
	int dirfd;
	const char *dir;
	volatile int *stop;
	/* A chunk above its file's next is held (not yet a gap) unless the
	 * caller says it has waited long enough: several collectors share a
	 * JetStream durable, and the chunks before may be with another. */
	bool hold;
	struct hfile *f;
	size_t nf, cap;
	uint8_t *tmp;                 /* a block being renumbered */
	size_t tmp_cap;
	uint64_t commits_refused;     /* Kafka: commits refused by a rebalance */
};

/* [A-Za-z0-9._-] as they are, anything else '_': a name from a chunk
 * (untrusted) never leaves DIR. */
static void name_part(char *out, size_t n, const char *s)
{
	size_t k = 0;
	for (; *s && k + 1 < n; s++) {
		char ch = *s;
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			  (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_';
		out[k++] = ok ? ch : '_';
	}
	out[k] = '\0';
	if (out[0] == '.')
		out[0] = '_';
}

/* why: writing a chunk's session failed; the session's name is the
 * chunk's, escaped before it reaches a terminal. */
static void why_writing(char *why, size_t whyn, const struct rlog__chunk *c, int err)
{
	char sess[4 * 256 + 1];
	snprintf(why, whyn, "writing %s: %s", rlog__term_cstr(c->session_name, sess, sizeof sess),
		 strerror(-err));
}

/* The state beside a file: "next_chunk next_block len last_time shift
 * events_through bytes_through blocks_through flags" (a state of before
 * flags has 8 fields: flags 0). */
static int state_save(struct collector *co, struct hfile *h)
{
	char tmp[640], st[640], line[256];
	snprintf(tmp, sizeof tmp, ".%s.state.tmp", h->name);
	snprintf(st, sizeof st, ".%s.state", h->name);
	int n = snprintf(line, sizeof line,
			 "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
			 " %" PRIu64 " %" PRIu64 " %" PRIu32 "\n",
			 h->next_chunk, h->next_block, h->len, h->last_time, h->shift,
			 h->events_through, h->bytes_through, h->blocks_through, h->flags);
	int fd = openat(co->dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	size_t done;
	int err = rlog__write_all(fd, line, (size_t)n, &done);
	if (err == 0 && fsync(fd) < 0)
		err = -errno;
	close(fd);
	if (err == 0 && renameat(co->dirfd, tmp, co->dirfd, st) < 0)
		err = -errno;
	return err;
}

/* The file's state read again (the state on disk is the truth: another
 * collector of the group may have written the file since this one last
 * did) and the file cut back to it: what a collector killed after it
 * wrote past its last state was never committed.  No state, or a state
 * whose file is gone: a new file, nothing of the old state kept.  Returns
 * 0 or -errno. */
static int state_load(struct collector *co, struct hfile *h)
{
	char st[640], line[256];
	if (h->fd >= 0)
		close(h->fd);
	h->fd = -1;
	h->next_chunk = h->next_block = h->len = h->last_time = h->shift = 0;
	h->events_through = h->bytes_through = h->blocks_through = 0;
	h->flags = 0;
	snprintf(st, sizeof st, ".%s.state", h->name);
	int fd = openat(co->dirfd, st, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	ssize_t n = read(fd, line, sizeof line - 1);
	close(fd);
	if (n <= 0)
		return -EBADMSG;
	line[n] = '\0';
	int k = sscanf(line,
		       "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
		       " %" SCNu64 " %" SCNu64 " %" SCNu32,
		       &h->next_chunk, &h->next_block, &h->len, &h->last_time, &h->shift,
		       &h->events_through, &h->bytes_through, &h->blocks_through, &h->flags);
	if (k != 8 && k != 9)
		return -EBADMSG;
	h->fd = openat(co->dirfd, h->name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (h->fd < 0 && errno == ENOENT) {
		h->next_chunk = h->next_block = h->len = h->last_time = h->shift = 0;
		h->events_through = h->bytes_through = h->blocks_through = 0;
		h->flags = 0;
		return 0;
	}
	if (h->fd < 0)
		return -errno;
	if (ftruncate(h->fd, (off_t)h->len) < 0 || lseek(h->fd, (off_t)h->len, SEEK_SET) < 0)
		return -errno;
	return 0;
}

/* The files this collector holds: those written on disk (fsync), then
 * their state, then let go (closed, unlocked).  At the end of each batch,
 * before a lock it must wait for (so that two collectors never wait on
 * each other), and at the fd limit: a collector holds only the files of
 * one batch open, however many it has written.  keep (if not NULL) stays
 * held.  Returns 0 or -errno. */
static int release_all(struct collector *co, const struct hfile *keep)
{
	int err = 0;
	bool saved = false;
	for (size_t i = 0; i < co->nf; i++) {
		struct hfile *h = &co->f[i];
		if (h->lockfd < 0 || h == keep)
			continue;
		/* The file closed before its state is written: at the fd
		 * limit, that is the fd state_save needs. */
		if (err == 0 && h->dirty && fsync(h->fd) < 0)
			err = -errno;
		if (h->fd >= 0)
			close(h->fd);
		if (err == 0 && h->dirty) {
			if ((err = state_save(co, h)) == 0)
				saved = true;
			h->dirty = err < 0;
		}
		close(h->lockfd);
		h->fd = h->lockfd = -1;
	}
	if (err == 0 && saved && fsync(co->dirfd) < 0 && errno != EINVAL)
		err = -errno;
	return err;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* The file h taken for writing: its lock (DIR/.NAME.lock, flock), then
 * its state read again under it.  Another collector writing it: this one
 * lets its own files go, then waits.  Returns 0, -EINTR (stopped) or
 * -errno. */
static int file_take(struct collector *co, struct hfile *h)
{
	if (h->lockfd >= 0)
		return 0;
	char lk[640];
	snprintf(lk, sizeof lk, ".%s.lock", h->name);
	int fd;
	for (int tries = 0;; tries++) {
		fd = openat(co->dirfd, lk, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || tries > 0 || (errno != EMFILE && errno != ENFILE))
			break;
		/* At the fd limit: the files of the batch so far let go. */
		int err = release_all(co, NULL);
		if (err < 0)
			return err;
	}
	if (fd < 0)
		return -errno;
	bool waiting = false;
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;
		if (e != EWOULDBLOCK && e != EINTR) {
			close(fd);
			return -e;
		}
		if (co->stop && *co->stop) {
			close(fd);
			return -EINTR;
		}
		if (!waiting) {
			int err = release_all(co, NULL);
			if (err < 0) {
				close(fd);
				return err;
			}
			waiting = true;
		}
		sleep_ms(5);
	}
	h->lockfd = fd;
	int err = state_load(co, h);
	if ((err == -EMFILE || err == -ENFILE) && (err = release_all(co, h)) == 0)
		err = state_load(co, h);
	return err;
}

/* The file of chunk c, taken (file_take): the one already known, or a
 * new entry. */
static struct hfile *file_of(struct collector *co, const struct rlog__chunk *c, int *errp)
{
	struct hfile *h = NULL;
	for (size_t i = 0; i < co->nf && h == NULL; i++)
		if (memcmp(co->f[i].host_id, c->h.host_id, 16) == 0 &&
		    co->f[i].run_id == c->h.run_id && strcmp(co->f[i].session, c->session_name) == 0)
			h = &co->f[i];
	if (h == NULL) {
		if (rlog__vec_room(&co->f, co->nf, &co->cap, sizeof *co->f, 8) < 0) {
			*errp = -ENOMEM;
			return NULL;
		}
		h = &co->f[co->nf];
		memset(h, 0, sizeof *h);
		memcpy(h->host_id, c->h.host_id, 16);
		h->run_id = c->h.run_id;
		snprintf(h->session, sizeof h->session, "%s", c->session_name);
		/* 64 characters of each name at most: the file's name and its
		 * state's stay far below NAME_MAX whatever a chunk names. */
		char host[65], sess[65], id[33];
		name_part(host, sizeof host, c->host_name);
		name_part(sess, sizeof sess, c->session_name);
		for (int i = 0; i < 16; i++)
			snprintf(id + 2 * i, 3, "%02x", c->h.host_id[i]);
		/* Each run of a session its own file: one started again under its
		 * name does not overwrite, nor pass for duplicates of, the last. */
		snprintf(h->name, sizeof h->name, "%s_%s_%s_%016" PRIx64 ".rlog", host, sess, id,
			 c->h.run_id);
		snprintf(h->rep.path, sizeof h->rep.path, "%s/%s", co->dir, h->name);
		h->fd = h->lockfd = -1;
		co->nf++;
	}
	int err = file_take(co, h);
	if (err < 0) {
		*errp = err;
		return NULL;
	}
	return h;
}

static int append(struct hfile *h, const void *p, size_t n)
{
	size_t done;
	int err = rlog__write_all(h->fd, p, n, &done);
	h->len += done;
	h->rep.bytes += done;
	h->dirty = true;
	return err;
}

/* A FINAL chunk: block 0 and the file header's copy take its LOG_MARKER. */
static int final_marker(struct hfile *h, const uint8_t *blk, size_t size)
{
	struct rlog_block_header bh;
	rlog__block_decode(blk, &bh);
	if (size < BLOCK_HDR + 8 + sizeof(struct rlog_log_marker))
		return -EBADMSG;
	struct rlog_log_marker m;
	memcpy(&m, blk + BLOCK_HDR + 8, sizeof m);
	struct rlog__logfile lf;
	memset(&lf, 0, sizeof lf);
	lf.fd = h->fd;
	lf.major = RLOG_FILE_VERSION_MAJOR;
	lf.marker_offset = sizeof(struct rlog_file_header);
	lf.marker_pid = bh.pid;
	lf.marker_tid = bh.tid;
	h->dirty = true;
	return rlog__logfile_rewrite_marker(&lf, &m);
}

/* Appends the block at blk (size bytes) numbered seq: as it is if that
 * is its number, else a copy renumbered (its checksum made again). */
static int append_as(struct collector *co, struct hfile *h, const uint8_t *blk, size_t size,
		     uint64_t seq)
{
	struct rlog_block_header bh;
	rlog__block_decode(blk, &bh);
	if (bh.seq == seq)
		return append(h, blk, size);
	if (rlog__bytes_room(&co->tmp, &co->tmp_cap, size) < 0)
		return -ENOMEM;
	memcpy(co->tmp, blk, size);
	rlog__block_renumber(RLOG_FILE_VERSION_MAJOR, co->tmp, (uint32_t)(size - BLOCK_HDR), seq);
	return append(h, co->tmp, size);
}

/* The chunks before c that the file lacks (from the one after the last
 * written, or from the first): a DATA_LOSS of cause SINK, numbered next,
 * with what their headers say they held (docs/FORMAT.md, "Chunks"). */
static int gap_loss(struct hfile *h, const struct rlog__chunk *c, uint64_t time)
{
	uint8_t lb[BLOCK_HDR + RLOG__LOSS_RECORD_MAX];
	uint64_t ev = c->h.events_before - h->events_through;
	uint64_t by = c->h.event_bytes_before - h->bytes_through;
	uint64_t bl = c->h.blocks_before - h->blocks_through;
	/* Counts that go backwards are a producer's bug, not a loss. */
	if (c->h.events_before < h->events_through || c->h.event_bytes_before < h->bytes_through ||
	    c->h.blocks_before < h->blocks_through)
		ev = by = bl = 0;
	uint32_t n = rlog__loss_block(lb, RLOG_FILE_VERSION_MAJOR, h->next_block, time,
				      RLOG_LOSS_SINK, bl, ev, by);
	int err = append(h, lb, BLOCK_HDR + n);
	if (err < 0)
		return err;
	h->next_block++;
	h->rep.gaps++;
	return 0;
}

/* The seq of the first block of c numbered in the session's sequence
 * (not a repeat), from *off on; 0 if none. */
static uint64_t first_numbered(const struct rlog__chunk *c, size_t off)
{
	const uint8_t *blk;
	size_t size;
	while (rlog__chunk_next_block(c, &off, &blk, &size)) {
		struct rlog_block_header bh;
		rlog__block_decode(blk, &bh);
		if (bh.seq != 0)
			return bh.seq;
	}
	return 0;
}

/* Where the blocks a METADATA chunk repeats (block 0, the copy blocks:
 * seq 0) end in c; 0 in another chunk. */
static size_t repeats_end(const struct rlog__chunk *c)
{
	size_t off = 0, at = 0, size;
	const uint8_t *blk;
	if (!(c->h.flags & RLOG_CHUNK_FLAG_METADATA))
		return 0;
	while (rlog__chunk_next_block(c, &at, &blk, &size)) {
		struct rlog_block_header bh;
		rlog__block_decode(blk, &bh);
		if (bh.seq != 0 || (off > 0 && !(bh.flags & RLOG_BLOCK_FLAG_METADATA)))
			break;
		off = at;
	}
	return off;
}

/* The copy blocks of METADATA chunk c (its repeats but block 0, up to
 * end), numbered next in h's file: after a gap, the schemas and names the
 * lost chunks defined (docs/FORMAT.md, "Metadata copies"). */
static int append_copies(struct collector *co, struct hfile *h, const struct rlog__chunk *c,
			 size_t end)
{
	size_t off = 0, size;
	const uint8_t *blk;
	int err = 0;
	if (!rlog__chunk_next_block(c, &off, &blk, &size))
		return 0;
	while (off < end && rlog__chunk_next_block(c, &off, &blk, &size)) {
		if ((err = append_as(co, h, blk, size, h->next_block)) < 0)
			return err;
		h->next_block++;
	}
	return 0;
}

/* Writes chunk c into its file.  may_gap: the chunks before c the file
 * lacks are missing (else, with co->hold, c is held).  Returns 0, 1 (held:
 * to be delivered again later) or -errno. */
static int apply(struct collector *co, const struct rlog__chunk *c, bool may_gap)
{
	int err = 0;
	struct hfile *h = file_of(co, c, &err);
	if (h == NULL)
		return err;
	if (h->len > 0 && c->h.seq < h->next_chunk) {
		h->rep.duplicates++;
		return 0;
	}
	/* Chunks before c not in the file: with several collectors on one
	 * JetStream durable, another may be writing them; c waits (its
	 * engine delivers it again) until the caller says it waited past
	 * the bound. */
	if (co->hold && !may_gap && c->h.seq > (h->len > 0 ? h->next_chunk : 0))
		return 1;
	size_t off = 0, size;
	const uint8_t *blk;
	if (h->len == 0) {
		/* A file starts with a METADATA chunk: block 0's LOG_MARKER
		 * times it (the chunks before one cannot be decoded). */
		if (!(c->h.flags & RLOG_CHUNK_FLAG_METADATA) || !rlog__chunk_next_block(c, &off, &blk, &size) ||
		    size < BLOCK_HDR + 8 + sizeof(struct rlog_log_marker))
			return 0;
		/* Joined late (the engine's retention dropped the first
		 * chunks): the repeats need numbers of their own. */
		uint64_t first = c->h.seq > 0 ? first_numbered(c, 0) : 0;
		if (c->h.seq > 0 && first == 0)
			return 0;
		if (h->fd < 0) {
			/* A file without a state was begun by a collector killed
			 * before it saved one: nothing in it was committed, it
			 * is written again from here. */
			for (int tries = 0;; tries++) {
				h->fd = openat(co->dirfd, h->name,
					       O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
				if (h->fd >= 0 || tries > 0 || (errno != EMFILE && errno != ENFILE))
					break;
				if ((err = release_all(co, h)) < 0)
					return err;
			}
			if (h->fd < 0)
				return -errno;
		}
		struct rlog_log_marker m;
		memcpy(&m, blk + BLOCK_HDR + 8, sizeof m);
		struct rlog_file_header fh;
		rlog__file_header_make(&fh, 0, &m);
		if ((err = append(h, &fh, sizeof fh)) < 0)
			return err;
		off = 0;
		h->next_block = 0;
		if (c->h.seq > 0) {
			/* Block 0, the metadata copies numbered 1, 2, ... (as a
			 * new file's copies are), the DATA_LOSS of the chunks
			 * before, then the chunk's blocks renumbered to follow:
			 * a file a reader reads whole, with its schemas. */
			struct rlog_block_header b0;
			rlog__block_decode(blk, &b0);
			if ((err = append(h, blk, size)) < 0)
				return err;
			h->next_block = 1;
			off = repeats_end(c);
			if ((err = append_copies(co, h, c, off)) < 0)
				return err;
			uint64_t t = c->h.first_time ? c->h.first_time : b0.base_time;
			if ((err = gap_loss(h, c, t)) < 0)
				return err;
			h->shift = h->next_block - first;
		}
	} else {
		if (c->h.flags & RLOG_CHUNK_FLAG_FINAL) {
			/* Chunks missing just before the last: said, as anywhere. */
			if (c->h.seq > h->next_chunk && (err = gap_loss(h, c, h->last_time)) < 0)
				return err;
			if (rlog__chunk_next_block(c, &off, &blk, &size) &&
			    (err = final_marker(h, blk, size)) < 0)
				return err;
			h->next_chunk = c->h.seq + 1;
			h->rep.chunks++;
			return 0;
		}
		/* What a METADATA chunk repeats (block 0, the copies: seq 0)
		 * the file has. */
		off = repeats_end(c);
		if (c->h.seq > h->next_chunk) {
			/* Chunks missing (the engine's retention, a gap in
			 * what was published): said where they were, and
			 * the blocks after renumbered to follow. */
			if ((err = gap_loss(h, c, h->last_time)) < 0)
				return err;
			h->flags |= HF_NEED_META | HF_RESHIFT;
		}
		if ((h->flags & HF_NEED_META) && off > 0) {
			/* The first METADATA chunk after a gap: its copies
			 * written, so that the schemas and names the lost
			 * chunks defined reach the file (a reader decodes
			 * everything from the next METADATA chunk on). */
			if ((err = append_copies(co, h, c, off)) < 0)
				return err;
			h->flags = (h->flags & ~HF_NEED_META) | HF_RESHIFT;
		}
	}
	uint64_t thread_blocks = 0;
	while (rlog__chunk_next_block(c, &off, &blk, &size)) {
		struct rlog_block_header bh;
		rlog__block_decode(blk, &bh);
		thread_blocks += !(bh.flags & (RLOG_BLOCK_FLAG_DAEMON | RLOG_BLOCK_FLAG_METADATA));
		if ((h->flags & HF_RESHIFT) && bh.seq != 0) {
			h->shift = h->next_block - bh.seq;
			h->flags &= ~HF_RESHIFT;
		}
		uint64_t seq = bh.seq + h->shift;
		if ((err = append_as(co, h, blk, size, seq)) < 0)
			return err;
		if (seq + 1 > h->next_block)
			h->next_block = seq + 1;
		h->last_time = bh.base_time;
	}
	h->next_chunk = c->h.seq + 1;
	h->events_through = c->h.events_before + c->h.events;
	h->bytes_through = c->h.event_bytes_before + c->h.event_bytes;
	h->blocks_through = c->h.blocks_before + thread_blocks;
	h->rep.chunks++;
	return 0;
}

#ifdef RLOG_HAVE_RDKAFKA

/* The topic's partitions (0 if not known yet). */
static int partitions(rd_kafka_t *rk, const char *topic)
{
	const struct rd_kafka_metadata *md = NULL;
	rd_kafka_topic_t *t = rd_kafka_topic_new(rk, topic, NULL);
	int n = 0;
	if (t && rd_kafka_metadata(rk, 0, t, &md, 2000) == RD_KAFKA_RESP_ERR_NO_ERROR && md &&
	    md->topic_cnt == 1)
		n = md->topics[0].partition_cnt;
	if (md)
		rd_kafka_metadata_destroy(md);
	if (t)
		rd_kafka_topic_destroy(t);
	return n;
}

/* Every partition of the topic (nparts) is assigned to this collector and
 * has reached its end.  A group member that died holds its partitions
 * until its session times out: until then this one waits. */
static bool all_at_end(rd_kafka_t *rk, rd_kafka_topic_partition_list_t *eof, int nparts)
{
	rd_kafka_topic_partition_list_t *as = NULL;
	if (rd_kafka_assignment(rk, &as) != RD_KAFKA_RESP_ERR_NO_ERROR || as == NULL)
		return false;
	bool all = as->cnt > 0 && as->cnt >= nparts;
	for (int i = 0; all && i < as->cnt; i++)
		all = rd_kafka_topic_partition_list_find(eof, as->elems[i].topic,
							 as->elems[i].partition) != NULL;
	rd_kafka_topic_partition_list_destroy(as);
	return all;
}

static int kset(rd_kafka_conf_t *conf, const char *k, const char *v, char *why, size_t whyn)
{
	char e[256];
	if (rd_kafka_conf_set(conf, k, v, e, sizeof e) != RD_KAFKA_CONF_OK) {
		snprintf(why, whyn, "librdkafka: %s", e);
		return -EINVAL;
	}
	return 0;
}

/* A commit refused because the group is rebalancing (or this member was
 * dropped from it): expected, not fatal.  What it covered is on disk with
 * its state, so a redelivery to whichever member takes the partition is
 * dropped as duplicates. */
static bool commit_refused(rd_kafka_resp_err_t e)
{
	return e == RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS ||
	       e == RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION ||
	       e == RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID || e == RD_KAFKA_RESP_ERR__NO_OFFSET;
}

struct kafka {
	struct collector *co;
	rd_kafka_topic_partition_list_t *commit; /* the batch's offsets */
	rd_kafka_topic_partition_list_t *eof;    /* partitions at their end */
	int err;
	char *why;
	size_t whyn;
};

/* The end of a batch: the files on disk with their state and let go,
 * then the offsets committed (synchronously). */
static void kafka_batch_end(rd_kafka_t *rk, struct kafka *k)
{
	int err = release_all(k->co, NULL);
	if (err < 0) {
		snprintf(k->why, k->whyn, "writing the files: %s", strerror(-err));
		k->err = err;
		return;
	}
	if (k->commit->cnt == 0)
		return;
	rd_kafka_resp_err_t kerr = rd_kafka_commit(rk, k->commit, 0);
	if (commit_refused(kerr)) {
		k->co->commits_refused++;
	} else if (kerr) {
		snprintf(k->why, k->whyn, "committing offsets: %s", rd_kafka_err2str(kerr));
		k->err = -EPROTO;
	}
	rd_kafka_topic_partition_list_destroy(k->commit);
	k->commit = rd_kafka_topic_partition_list_new(8);
}

/* A rebalance (eager, librdkafka's default assignors): partitions revoked
 * are ended as a batch is (on disk, committed) before another member
 * takes them; nothing of a file is kept past it (file_take reads the
 * state again), so one assigned later, or again, starts from the disk. */
static void kafka_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t e,
			    rd_kafka_topic_partition_list_t *parts, void *opaque)
{
	struct kafka *k = opaque;
	if (e == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
		rd_kafka_assign(rk, parts);
		return;
	}
	if (k->err == 0)
		kafka_batch_end(rk, k);
	rd_kafka_topic_partition_list_destroy(k->eof);
	k->eof = rd_kafka_topic_partition_list_new(8);
	rd_kafka_assign(rk, NULL);
}

static int collect_kafka(struct collector *co, const struct rlog__collect_opts *o,
			 const char *brokers, const char *topic, char *why, size_t whyn)
{
	struct kafka k = { .co = co, .why = why, .whyn = whyn };
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	if (kset(conf, "bootstrap.servers", brokers, why, whyn) < 0 ||
	    kset(conf, "group.id", o->group ? o->group : "ringlog-collect", why, whyn) < 0 ||
	    kset(conf, "enable.auto.commit", "false", why, whyn) < 0 ||
	    kset(conf, "auto.offset.reset", "earliest", why, whyn) < 0 ||
	    kset(conf, "enable.partition.eof", "true", why, whyn) < 0 ||
	    /* A collector killed gives its partitions back this soon. */
	    kset(conf, "session.timeout.ms", "6000", why, whyn) < 0 ||
	    kset(conf, "heartbeat.interval.ms", "500", why, whyn) < 0 ||
	    kset(conf, "log_level", "0", why, whyn) < 0) {
		rd_kafka_conf_destroy(conf);
		return -EINVAL;
	}
	rd_kafka_conf_set_rebalance_cb(conf, kafka_rebalance);
	rd_kafka_conf_set_opaque(conf, &k);
	char e[256];
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, e, sizeof e);
	if (rk == NULL) {
		rd_kafka_conf_destroy(conf);
		snprintf(why, whyn, "librdkafka: %s", e);
		return -EINVAL;
	}
	rd_kafka_poll_set_consumer(rk);
	rd_kafka_topic_partition_list_t *sub = rd_kafka_topic_partition_list_new(1);
	rd_kafka_topic_partition_list_add(sub, topic, RD_KAFKA_PARTITION_UA);
	rd_kafka_resp_err_t kerr = rd_kafka_subscribe(rk, sub);
	rd_kafka_topic_partition_list_destroy(sub);
	if (kerr) {
		snprintf(why, whyn, "subscribing to %s: %s", topic, rd_kafka_err2str(kerr));
		k.err = -EPROTO;
	}
	k.eof = rd_kafka_topic_partition_list_new(8);
	k.commit = rd_kafka_topic_partition_list_new(8);
	int idle = 0, batch = 0, nparts = 0;
	while (k.err == 0 && !(o->stop && *o->stop)) {
		rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 200);
		if (m == NULL || batch >= 256) {
			/* The end of a batch: on disk, then committed. */
			kafka_batch_end(rk, &k);
			batch = 0;
		}
		if (m == NULL) {
			idle++;
			/* Not following: the end of what is there, or nothing
			 * assigned after 30 s. */
			if (!o->follow && nparts == 0)
				nparts = partitions(rk, topic);
			if (!o->follow && (all_at_end(rk, k.eof, nparts) || idle > 150))
				break;
			continue;
		}
		idle = 0;
		if (k.err) {
			/* The batch's end failed. */
		} else if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
			if (!rd_kafka_topic_partition_list_find(k.eof, rd_kafka_topic_name(m->rkt),
								m->partition))
				rd_kafka_topic_partition_list_add(k.eof, rd_kafka_topic_name(m->rkt),
								  m->partition);
		} else if (m->err) {
			/* Transient (a broker down): librdkafka goes on. */
		} else {
			rd_kafka_topic_partition_list_del(k.eof, rd_kafka_topic_name(m->rkt),
							  m->partition);
			struct rlog__chunk c;
			char cerr[200];
			int err = 0;
			/* One member per partition, in order: a chunk after
			 * missing ones is a gap at once. */
			if (rlog__chunk_decode(m->payload, m->len, &c, cerr, sizeof cerr) == 0 &&
			    (err = apply(co, &c, true)) < 0) {
				why_writing(why, whyn, &c, err);
				k.err = err;
			}
			rd_kafka_topic_partition_t *p = rd_kafka_topic_partition_list_find(
				k.commit, rd_kafka_topic_name(m->rkt), m->partition);
			if (p == NULL)
				p = rd_kafka_topic_partition_list_add(k.commit, rd_kafka_topic_name(m->rkt),
								      m->partition);
			p->offset = m->offset + 1;
			batch++;
		}
		rd_kafka_message_destroy(m);
	}
	if (k.err == 0)
		kafka_batch_end(rk, &k);
	rd_kafka_consumer_close(rk);
	rd_kafka_topic_partition_list_destroy(k.commit);
	rd_kafka_topic_partition_list_destroy(k.eof);
	rd_kafka_destroy(rk);
	return k.err;
}
#endif

#ifdef RLOG_HAVE_NATS
/* A held chunk delivered n times comes again after this many ms: 50,
 * 100, 200, ... up to 1 s.  Soon at first (the chunks before it are
 * usually being written by another collector of the durable), and few
 * redeliveries when they are truly missing. */
static uint64_t nak_delay_ms(uint64_t n)
{
	return n >= 6 ? 1000 : 50u << (n > 1 ? n - 1 : 0);
}

/* How long a chunk delivered n times has been held at least: the delays
 * of its n - 1 NAKs. */
static uint64_t nak_waited(uint64_t n)
{
	uint64_t ms = 0;
	for (uint64_t i = 1; i < n && ms < UINT64_MAX / 2; i++)
		ms += nak_delay_ms(i);
	return ms;
}

static int collect_nats(struct collector *co, const struct rlog__collect_opts *o,
			const char *servers, const char *subject, char *why, size_t whyn)
{
	natsConnection *nc = NULL;
	jsCtx *js = NULL;
	int err = rlog__nats_connect(servers, &nc, &js, why, whyn);
	if (err < 0)
		return err;
	/* libnats retries a first connection in its thread: a server that is
	 * down is one line after a few seconds, not a subscription's retries
	 * each waiting out JetStream's timeout. */
	for (int i = 0; i < 50 && natsConnection_Status(nc) != NATS_CONN_STATUS_CONNECTED &&
			!(o->stop && *o->stop);
	     i++)
		sleep_ms(100);
	if (natsConnection_Status(nc) != NATS_CONN_STATUS_CONNECTED) {
		snprintf(why, whyn, "cannot reach the NATS server %s", servers);
		jsCtx_Destroy(js);
		natsConnection_Destroy(nc);
		return -ECONNREFUSED;
	}
	char stream[300];
	rlog__nats_stream_name(subject, stream, sizeof stream);
	jsSubOptions so;
	jsSubOptions_Init(&so);
	so.Stream = stream;
	so.Config.AckPolicy = js_AckExplicit;
	so.Config.DeliverPolicy = js_DeliverAll;
	/* A collector killed: what it had not acknowledged comes again this
	 * soon (its files were cut back to their state). */
	so.Config.AckWait = 2000LL * 1000000LL;
	natsSubscription *sub = NULL;
	jsErrCode je = 0;
	natsStatus s = NATS_ERR;
	/* The server may be coming up: a few tries. */
	for (int i = 0; i < 50 && !(o->stop && *o->stop); i++) {
		s = js_PullSubscribe(&sub, js, subject, o->group ? o->group : "ringlog-collect", NULL,
				     &so, &je);
		if (s == NATS_OK)
			break;
		sleep_ms(100);
	}
	if (s != NATS_OK) {
		snprintf(why, whyn, "subscribing to %s (stream %s): %s", subject, stream,
			 natsStatus_GetText(s));
		err = -EPROTO;
	}
	/* Members of one durable share its messages: a chunk after ones its
	 * file lacks is held (NAKed: delivered again after nak_delay) until
	 * its deliveries have waited the gap wait (docs/DECISIONS.md). */
	uint64_t gap_wait_ms = o->gap_wait_ms ? o->gap_wait_ms : RLOG__COLLECT_GAP_WAIT_MS;
	co->hold = true;
	int idle = 0;
	struct timespec held_at = { 0, 0 };
	while (err == 0 && !(o->stop && *o->stop)) {
		natsMsgList list = { 0 };
		s = natsSubscription_Fetch(&list, sub, 64, 1000, &je);
		if (s != NATS_OK) {
			natsMsgList_Destroy(&list);
			/* The end of what is there (a timeout, none held that
			 * comes again), or the server away: following, go on;
			 * else stop after a time out (or 10 s of the server
			 * away). */
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			bool holding = now.tv_sec - held_at.tv_sec < 3;
			if (!o->follow && ((s == NATS_TIMEOUT && !holding) || ++idle > 10))
				break;
			continue;
		}
		idle = 0;
		bool *held = calloc((size_t)list.Count + 1, sizeof *held);
		if (held == NULL)
			err = -ENOMEM;
		for (int i = 0; i < list.Count && err == 0; i++) {
			natsMsg *m = list.Msgs[i];
			struct rlog__chunk c;
			char cerr[200];
			if (rlog__chunk_decode((const uint8_t *)natsMsg_GetData(m),
					       (size_t)natsMsg_GetDataLength(m), &c, cerr,
					       sizeof cerr) < 0)
				continue;
			jsMsgMetaData *md = NULL;
			uint64_t n = 1;
			if (natsMsg_GetMetaData(&md, m) == NATS_OK) {
				n = md->NumDelivered;
				jsMsgMetaData_Destroy(md);
			}
			int r = apply(co, &c, nak_waited(n) >= gap_wait_ms);
			if (r < 0) {
				why_writing(why, whyn, &c, r);
				err = r;
			}
			held[i] = r == 1;
			if (held[i])
				clock_gettime(CLOCK_MONOTONIC, &held_at);
		}
		/* On disk, then acknowledged (or held). */
		if (err == 0 && (err = release_all(co, NULL)) < 0)
			snprintf(why, whyn, "writing the files: %s", strerror(-err));
		for (int i = 0; i < list.Count && err == 0; i++) {
			jsMsgMetaData *md = NULL;
			uint64_t n = 1;
			if (held[i] && natsMsg_GetMetaData(&md, list.Msgs[i]) == NATS_OK) {
				n = md->NumDelivered;
				jsMsgMetaData_Destroy(md);
			}
			if (held[i])
				natsMsg_NakWithDelay(list.Msgs[i], (int64_t)nak_delay_ms(n), NULL);
			else
				natsMsg_Ack(list.Msgs[i], NULL);
		}
		free(held);
		natsMsgList_Destroy(&list);
	}
	if (sub) {
		natsSubscription_Destroy(sub);
	}
	jsCtx_Destroy(js);
	natsConnection_Destroy(nc);
	return err;
}
#endif

int rlog__collect(const struct rlog__collect_opts *o, rlog__collect_report_fn *report, void *arg,
		  char *why, size_t whyn)
{
	char servers[512], name[512];
	const char *p = o->url;
	const char *sep = strstr(p, "://");
	const char *slash = sep ? strchr(sep + 3, '/') : NULL;
	bool kafka = strncmp(p, "kafka://", 8) == 0, nats = strncmp(p, "nats://", 7) == 0;
	if (!(kafka || nats) || slash == NULL || slash == sep + 3 || !slash[1] ||
	    strchr(slash + 1, '/') || (size_t)(slash - sep - 3) >= sizeof servers ||
	    strlen(slash + 1) >= sizeof name) {
		snprintf(why, whyn, "expected kafka://BROKERS/TOPIC or nats://SERVERS/SUBJECT");
		return -EINVAL;
	}
	memcpy(servers, sep + 3, (size_t)(slash - sep - 3));
	servers[slash - sep - 3] = '\0';
	strcpy(name, slash + 1);
#ifndef RLOG_HAVE_RDKAFKA
	if (kafka) {
		snprintf(why, whyn, "not built: librdkafka missing");
		return -ENOTSUP;
	}
#endif
#ifdef RLOG_RDKAFKA_TSAN
	if (kafka) {
		snprintf(why, whyn, "not in a ThreadSanitizer build (librdkafka's threads are not "
			 "seen by it)");
		return -ENOTSUP;
	}
#endif
#ifndef RLOG_HAVE_NATS
	if (nats) {
		snprintf(why, whyn, "not built: libnats missing");
		return -ENOTSUP;
	}
#endif
	struct collector co;
	memset(&co, 0, sizeof co);
	co.dir = o->dir;
	co.stop = o->stop;
	co.dirfd = open(o->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (co.dirfd < 0) {
		snprintf(why, whyn, "%s: %s", o->dir, strerror(errno));
		return -errno;
	}
	int err = -ENOTSUP;
#ifdef RLOG_HAVE_RDKAFKA
	if (kafka)
		err = collect_kafka(&co, o, servers, name, why, whyn);
#endif
#ifdef RLOG_HAVE_NATS
	if (nats)
		err = collect_nats(&co, o, servers, name, why, whyn);
#endif
	for (size_t i = 0; i < co.nf; i++) {
		if (co.f[i].rep.chunks || co.f[i].rep.duplicates)
			report(&co.f[i].rep, arg);
		/* Still held after a failure: let go without a state (what
		 * was written since the last one is cut back next time). */
		if (co.f[i].fd >= 0)
			close(co.f[i].fd);
		if (co.f[i].lockfd >= 0)
			close(co.f[i].lockfd);
	}
	if (o->commits_refused)
		*o->commits_refused = co.commits_refused;
	free(co.f);
	free(co.tmp);
	close(co.dirfd);
	return err;
}
