/*
 * sink_chunks.c - chunks for the multi-host sinks (sink_chunks.h;
 * docs/FORMAT.md, "Chunks").
 *
 * The blocks are numbered as the file sink numbers them (block 0 the
 * LOG_MARKER, then 1, 2, ... in the order drained), so that a collector
 * that appends a session's chunks' blocks after a file header writes the
 * bytes the session's local file holds.  What a METADATA chunk repeats
 * (block 0 and the metadata copies) carries seq 0: not part of the file's
 * sequence, a collector drops it unless it starts a file with it.
 */
#define _GNU_SOURCE
#include "sink_chunks.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "atomics.h"
#include "format/block.h"
#include "format/logfile.h"
#include "format/loss.h"
#include "sink_kafka.h"
#include "sink_nats.h"
#include "test_hooks.h"
#include "vec.h"

#define BLOCK_HDR RLOG__BLOCK_HDR_SIZE

/* Numbers a block (header made for seq) and appends it to the chunk.
 * Returns 0 or -errno. */
static int put_block(struct rlog__chunk_sink *c, uint16_t flags, uint64_t seq, uint32_t pid,
		     uint32_t tid, uint64_t base_time, const void *data, uint32_t size,
		     uint32_t records)
{
	size_t need = BLOCK_HDR + (size_t)size;
	if (rlog__bytes_room(&c->tmp, &c->tmp_cap, need) < 0)
		return -ENOMEM;
	struct rlog_block_header h;
	rlog__block_header_make(&h, RLOG_FILE_VERSION_MAJOR, flags, seq, pid, tid, base_time, data,
				size, records);
	rlog__block_encode(c->tmp, &h);
	memcpy(c->tmp + BLOCK_HDR, data, size);
	return rlog__chunk_add_block(&c->w, c->tmp, need);
}

static int put_copy(void *arg, uint32_t pid, uint32_t tid, uint64_t base_time, const void *data,
		    uint32_t size, uint32_t records)
{
	return put_block(arg, RLOG_BLOCK_FLAG_METADATA, 0, pid, tid, base_time, data, size,
			 records);
}

/* The header fields of a chunk begun that say which run it is and what
 * the chunks published before it carried. */
static void chunk_run(struct rlog__chunk_sink *c)
{
	c->w.h.run_id = c->run_id;
	c->w.h.events_before = c->events_pub;
	c->w.h.event_bytes_before = c->event_bytes_pub;
	c->w.h.blocks_before = c->blocks_pub;
}

/* Begins the next chunk: METADATA (block 0 and, after the first chunk,
 * the copies) when the rule says so, then the DATA_LOSS of what was lost
 * since the last chunk published.  Returns 0 or -errno. */
static int chunk_begin(struct rlog__chunk_sink *c)
{
	const struct rlog__metacache *m = &c->base.out->meta;
	bool meta = c->need_meta || c->next_chunk == 0 || c->since_meta + 1 >= RLOG_CHUNK_META_EVERY ||
		    m->version != c->meta_version;
	int err = rlog__chunk_begin(&c->w, c->host_id, c->host_name, c->session, c->next_chunk,
				    meta ? RLOG_CHUNK_FLAG_METADATA : 0);
	if (err < 0)
		return err;
	chunk_run(c);
	memset(&c->cur, 0, sizeof c->cur);
	/* building is set only once the chunk holds what its flags say: a
	 * METADATA chunk whose block 0 found no memory must not be taken
	 * for one begun (the next block would start it, block 0 missing). */
	if (meta) {
		/* tests/test_sink_nats.c: the Nth chunk's block 0 finds no memory. */
		if (RLOG_TEST_HOOKS && c->test_nomem && ++c->test_begins == c->test_nomem)
			return -ENOMEM;
		err = put_block(c, RLOG_BLOCK_FLAG_DAEMON, 0, c->pid, c->tid, c->marker_ticks,
				c->marker_rec, c->marker_size, 1);
		/* The first chunk is the file's start: its copies are those the
		 * file sink wrote when it opened (none yet). */
		if (err == 0 && c->next_chunk > 0)
			err = rlog__output_copies(c->base.out, put_copy, c);
		if (err < 0)
			return err;
	}
	if (c->unreported_events || c->unreported_blocks) {
		uint8_t blk[BLOCK_HDR + RLOG__LOSS_RECORD_MAX];
		uint32_t n = rlog__loss_block(blk, RLOG_FILE_VERSION_MAJOR, c->next_block, c->last_time,
					      RLOG_LOSS_SINK, c->unreported_blocks,
					      c->unreported_events, c->unreported_bytes);
		err = rlog__chunk_add_block(&c->w, blk, BLOCK_HDR + n);
		if (err < 0)
			return err;
		c->next_block++;
		c->cur.numbered++;
		c->cur.told_events = c->unreported_events;
		c->cur.told_bytes = c->unreported_bytes;
		c->cur.told_blocks = c->unreported_blocks;
		c->unreported_events = c->unreported_bytes = c->unreported_blocks = 0;
	}
	if (meta)
		c->meta_version = m->version;
	c->building = true;
	return 0;
}

/* Counts the chunk being built as lost (its events told in the next one),
 * and gives its block numbers to the next blocks. */
static void chunk_drop(struct rlog__chunk_sink *c, uint64_t first_block)
{
	c->lost++;
	c->lost_events += c->cur.events;
	c->lost_bytes += c->cur.event_bytes;
	c->unreported_events += c->cur.events + c->cur.told_events;
	c->unreported_bytes += c->cur.event_bytes + c->cur.told_bytes;
	c->unreported_blocks += c->cur.blocks + c->cur.told_blocks;
	c->next_block = first_block;
	c->need_meta = true;
}

/* Publishes the chunk being built (if it has blocks). */
static void chunk_publish(struct rlog__chunk_sink *c)
{
	if (!c->building)
		return;
	c->building = false;
	size_t len;
	const uint8_t *p = rlog__chunk_finish(&c->w, &len);
	c->cur.seq = c->next_chunk;
	c->cur.bytes = len;
	uint64_t first_block = c->next_block - c->cur.numbered;
	if (c->queued_bytes + len > c->bound ||
	    c->tr->publish(c, p, len, c->key, c->key_len, &c->cur) < 0) {
		chunk_drop(c, first_block);
		return;
	}
	c->queued++;
	c->queued_bytes += len;
	c->queued_events += c->cur.events;
	c->queued_event_bytes += c->cur.event_bytes;
	c->next_chunk++;
	c->events_pub += c->cur.events;
	c->event_bytes_pub += c->cur.event_bytes;
	c->blocks_pub += c->cur.blocks;
	bool meta = (c->w.h.flags & RLOG_CHUNK_FLAG_METADATA) != 0;
	c->since_meta = meta ? 0 : c->since_meta + 1;
	if (meta)
		c->need_meta = false;
}

void rlog__chunks_acked(struct rlog__chunk_sink *c, const struct rlog__chunk_ticket *t, bool ok)
{
	/* A report after rlog__chunks_abandon: its chunk is counted lost. */
	if (c->abandoned)
		return;
	c->queued--;
	c->queued_bytes -= t->bytes;
	c->queued_events -= t->events;
	c->queued_event_bytes -= t->event_bytes;
	if (ok) {
		c->acked++;
		c->acked_bytes += t->bytes;
		c->acked_events += t->events;
		return;
	}
	/* Given up on after the engine took it: at stop, no chunk follows to
	 * tell it; the counts say it. */
	c->lost++;
	c->lost_events += t->events;
	c->lost_bytes += t->event_bytes;
}

void rlog__chunks_join(struct rlog__sink *s, const struct rlog__sink_stats *before)
{
	struct rlog__chunk_sink *c = (struct rlog__chunk_sink *)s;
	c->next_chunk = 1;
	c->need_meta = true;
	c->events_pub = before->events_written;
	c->event_bytes_pub = before->bytes_written;
	c->blocks_pub = before->buffers_written;
}

void rlog__chunks_abandon(struct rlog__chunk_sink *c)
{
	if (c->abandoned)
		return;
	c->lost += c->queued;
	c->lost_events += c->queued_events;
	c->lost_bytes += c->queued_event_bytes;
	c->queued = c->queued_bytes = c->queued_events = c->queued_event_bytes = 0;
	c->abandoned = true;
}

void rlog__sink_threads_mask(sigset_t *old)
{
	/* Signals stay the daemon's thread's (rlog__daemon_signals): a
	 * thread created now inherits this mask. */
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, old);
}

void rlog__sink_threads_unmask(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* The counts, for query (docs/FORMAT.md, the request page). */
static void publish_stats(struct rlog__chunk_sink *c)
{
	struct rlog_shm_ctl *x = c->ctl;
	if (x == NULL)
		return;
	store_relaxed(&x->sink_chunks_acked, c->acked);
	store_relaxed(&x->sink_bytes_acked, c->acked_bytes);
	store_relaxed(&x->sink_events_acked, c->acked_events);
	store_relaxed(&x->sink_chunks_queued, c->queued);
	store_relaxed(&x->sink_bytes_queued, c->queued_bytes);
	store_relaxed(&x->sink_retries, c->tr->retries(c));
	store_relaxed(&x->sink_chunks_lost, c->lost);
	store_relaxed(&x->sink_events_lost, c->lost_events);
}

static void ck_block(struct rlog__sink *s, const struct rlog__out_block *b)
{
	struct rlog__chunk_sink *c = (struct rlog__chunk_sink *)s;
	bool thread = !(b->flags & (RLOG_BLOCK_FLAG_DAEMON | RLOG_BLOCK_FLAG_METADATA));
	c->last_time = b->base_time;
	int err = c->building ? 0 : chunk_begin(c);
	if (err == 0)
		err = put_block(c, b->flags, c->next_block, b->pid, b->tid, b->base_time, b->data,
				b->size, b->records);
	if (err < 0) {
		/* Out of memory: this block is lost (told in the next chunk),
		 * its number goes to the next block. */
		c->lost_events += b->events;
		c->lost_bytes += b->event_bytes;
		c->unreported_events += b->events;
		c->unreported_bytes += b->event_bytes;
		c->unreported_blocks += thread;
		return;
	}
	c->next_block++;
	c->cur.numbered++;
	c->cur.events += b->events;
	c->cur.event_bytes += b->event_bytes;
	c->cur.blocks += thread;
	if (c->w.len >= c->target)
		chunk_publish(c);
}

static int ck_flush(struct rlog__sink *s)
{
	struct rlog__chunk_sink *c = (struct rlog__chunk_sink *)s;
	chunk_publish(c);
	c->tr->poll(c);
	publish_stats(c);
	return 0;
}

static void ck_poll(struct rlog__sink *s)
{
	struct rlog__chunk_sink *c = (struct rlog__chunk_sink *)s;
	c->tr->poll(c);
	publish_stats(c);
}

static int ck_finish(struct rlog__sink *s, const struct rlog_log_marker *refined)
{
	struct rlog__chunk_sink *c = (struct rlog__chunk_sink *)s;
	chunk_publish(c);
	/* A loss at the very end has no chunk after it: one carries it. */
	if (c->unreported_events || c->unreported_blocks) {
		if (chunk_begin(c) == 0)
			chunk_publish(c);
	}
	if (refined) {
		uint8_t rec[8 + sizeof(struct rlog_log_marker)];
		uint32_t n = rlog__marker_record(rec, refined);
		int err = rlog__chunk_begin(&c->w, c->host_id, c->host_name, c->session,
					    c->next_chunk, RLOG_CHUNK_FLAG_FINAL);
		if (err == 0)
			chunk_run(c);
		if (err == 0 &&
		    put_block(c, RLOG_BLOCK_FLAG_DAEMON, 0, c->pid, c->tid, refined->sync_ticks, rec, n,
			      1) == 0) {
			memset(&c->cur, 0, sizeof c->cur);
			c->building = true;
			chunk_publish(c);
		}
	}
	/* tests/test_sink_kafka.c: a shorter wait, brokers down at stop. */
	unsigned long ms = RLOG__TEST_ENV(RINGLOG_TEST_SINK_DRAIN_MS);
	c->tr->drain(c, ms ? (int)ms : RLOG__SINK_DRAIN_MS);
	publish_stats(c);
	return 0;
}

static void ck_free(struct rlog__sink *s)
{
	struct rlog__chunk_sink *c = (struct rlog__chunk_sink *)s;
	c->tr->free(c);
	rlog__chunk_writer_free(&c->w);
	free(c->tmp);
	free(c);
}

static const struct rlog__sink_ops chunk_ops = {
	.name = "chunks",
	.block = ck_block,
	.flush = ck_flush,
	.poll = ck_poll,
	.finish = ck_finish,
	.free = ck_free,
};

int rlog__chunks_init(struct rlog__chunk_sink *c, const struct rlog__chunk_transport *tr,
		      const struct rlog__sink_spec *spec, const char *session,
		      const struct rlog_log_marker *marker, uint32_t pid, uint32_t tid,
		      struct rlog_shm_ctl *ctl)
{
	c->base.ops = &chunk_ops;
	c->tr = tr;
	size_t sn = strlen(session);
	if (sn == 0 || sn > RLOG_NAME_MAX || spec->host_name[0] == '\0')
		return -EINVAL;
	c->ctl = ctl;
	memcpy(c->host_id, spec->host_id, 16);
	snprintf(c->host_name, sizeof c->host_name, "%s", spec->host_name);
	memcpy(c->session, session, sn + 1);
	c->bound = spec->buffer ? spec->buffer : RLOG__SINK_BUFFER_DEFAULT;
	c->target = spec->chunk ? spec->chunk : RLOG__CHUNK_TARGET;
	/* Published at target or more: the block that crossed it is at most
	 * a buffer (the header's room: 4 KiB covers the chunk's and the
	 * block's). */
	c->max_chunk = c->target + marker->buffer_size + 4096;
	c->next_block = 1;
	c->test_nomem = (uint32_t)RLOG__TEST_ENV(RINGLOG_TEST_SINK_NOMEM);
	/* A session started again under its name publishes into the same
	 * topic with its sequence from 0: the run id tells the runs apart. */
	if (getrandom(&c->run_id, sizeof c->run_id, GRND_NONBLOCK) != (ssize_t)sizeof c->run_id) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		c->run_id = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^
			    ((uint64_t)getpid() << 40);
	}
	if (c->run_id == 0)
		c->run_id = 1;
	c->marker_size = rlog__marker_record(c->marker_rec, marker);
	c->marker_ticks = marker->sync_ticks;
	c->pid = pid;
	c->tid = tid;
	/* The key keeps one host's session in one partition (Kafka) and
	 * names it (NATS's subject token is the host id). */
	memcpy(c->key, c->host_id, 16);
	memcpy(c->key + 16, session, sn);
	c->key_len = 16 + sn;
	return 0;
}

int rlog__chunks_new(const struct rlog__chunk_transport *tr, size_t state_size,
		     const struct rlog__sink_spec *spec, const char *session,
		     const struct rlog_log_marker *marker, uint32_t pid, uint32_t tid,
		     struct rlog_shm_ctl *ctl, struct rlog__chunk_sink **out, char *why,
		     size_t whyn)
{
	struct rlog__chunk_sink *c = calloc(1, sizeof *c);
	void *state = calloc(1, state_size);
	if (c == NULL || state == NULL) {
		free(c);
		free(state);
		snprintf(why, whyn, "no memory");
		return -ENOMEM;
	}
	int err = rlog__chunks_init(c, tr, spec, session, marker, pid, tid, ctl);
	if (err < 0) {
		free(c);
		free(state);
		snprintf(why, whyn, "no host name, or a bad session name");
		return err;
	}
	c->tr_state = state;
	*out = c;
	return 0;
}

/* A topic or subject: tokens of [A-Za-z0-9_-] between single dots (what
 * both engines take as a name to publish to: no space, control byte or
 * wildcard, no empty token, so not "." or ".."). */
static bool name_ok(const char *s)
{
	bool token = false;
	for (; *s; s++) {
		char ch = *s;
		if (ch == '.') {
			if (!token)
				return false;
			token = false;
		} else if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			   (ch >= '0' && ch <= '9') || ch == '_' || ch == '-') {
			token = true;
		} else {
			return false;
		}
	}
	return token;
}

/* Servers: host:port,... with no space, control byte or '/'. */
static bool servers_ok(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!isgraph((unsigned char)s[i]))
			return false;
	return true;
}

int rlog__sink_url_split(const char *url, const char *scheme, char *servers, char *name, size_t n)
{
	size_t k = strlen(scheme);
	if (strncmp(url, scheme, k) != 0 || strncmp(url + k, "://", 3) != 0)
		return -EINVAL;
	const char *p = url + k + 3;
	const char *slash = strchr(p, '/');
	if (slash == NULL || slash == p || slash[1] == '\0' || (size_t)(slash - p) >= n ||
	    strlen(slash + 1) >= n || !name_ok(slash + 1) || !servers_ok(p, (size_t)(slash - p)))
		return -EINVAL;
	memcpy(servers, p, (size_t)(slash - p));
	servers[slash - p] = '\0';
	strcpy(name, slash + 1);
	return 0;
}

int rlog__host_id_parse(const char *s, uint8_t id[16])
{
	unsigned k = 0;
	for (; *s; s++) {
		if (*s == '-')
			continue;
		if (!isxdigit((unsigned char)*s) || k == 32)
			return -EINVAL;
		unsigned v = isdigit((unsigned char)*s) ? (unsigned)(*s - '0')
							: (unsigned)(tolower((unsigned char)*s) - 'a' + 10);
		if (k % 2 == 0)
			id[k / 2] = (uint8_t)(v << 4);
		else
			id[k / 2] |= (uint8_t)v;
		k++;
	}
	return k == 32 ? 0 : -EINVAL;
}

int rlog__sink_spec_host(struct rlog__sink_spec *spec)
{
	if (gethostname(spec->host_name, sizeof spec->host_name - 1) < 0)
		return -errno;
	spec->host_name[sizeof spec->host_name - 1] = '\0';
	int fd = open("/etc/machine-id", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	char buf[64];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -ENODATA;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return rlog__host_id_parse(buf, spec->host_id) < 0 ? -ENODATA : 0;
}

int rlog__sink_url_check(const char *url, char *why, size_t whyn)
{
	char servers[512], name[512];
	if (strncmp(url, "kafka://", 8) == 0) {
		if (rlog__sink_url_split(url, "kafka", servers, name, sizeof servers) < 0) {
			snprintf(why, whyn,
				 "expected kafka://BROKERS/TOPIC (TOPIC of [A-Za-z0-9_-] and dots)");
			return -EINVAL;
		}
#ifndef RLOG_HAVE_RDKAFKA
		snprintf(why, whyn, "not built: librdkafka missing");
		return -ENOTSUP;
#endif
#ifdef RLOG_RDKAFKA_TSAN
		snprintf(why, whyn, "not in a ThreadSanitizer build (librdkafka's threads are "
			 "not seen by it)");
		return -ENOTSUP;
#endif
		return 0;
	}
	if (strncmp(url, "nats://", 7) == 0) {
		if (rlog__sink_url_split(url, "nats", servers, name, sizeof servers) < 0) {
			snprintf(why, whyn,
				 "expected nats://SERVERS/SUBJECT (SUBJECT of [A-Za-z0-9_-] and dots)");
			return -EINVAL;
		}
#ifndef RLOG_HAVE_NATS
		snprintf(why, whyn, "not built: libnats missing");
		return -ENOTSUP;
#endif
		return 0;
	}
	snprintf(why, whyn, "expected kafka://BROKERS/TOPIC or nats://SERVERS/SUBJECT");
	return -EINVAL;
}

int rlog__sink_net_open(const struct rlog__sink_spec *spec, const char *session,
			const struct rlog_log_marker *marker, uint32_t pid, uint32_t tid,
			struct rlog_shm_ctl *ctl, struct rlog__sink **out, char *why, size_t whyn)
{
	int err = rlog__sink_url_check(spec->url, why, whyn);
	if (err < 0)
		return err;
#ifdef RLOG_HAVE_RDKAFKA
	if (strncmp(spec->url, "kafka://", 8) == 0)
		return rlog__sink_kafka_open(spec, session, marker, pid, tid, ctl, out, why, whyn);
#endif
#ifdef RLOG_HAVE_NATS
	if (strncmp(spec->url, "nats://", 7) == 0)
		return rlog__sink_nats_open(spec, session, marker, pid, tid, ctl, out, why, whyn);
#endif
	(void)session, (void)marker, (void)pid, (void)tid, (void)ctl, (void)out;
	return -ENOTSUP;
}
