/*
 * live.c - the reader on a live stream (ringlog/reader.h's rlog_live_*,
 * live.h): deliveries of a session's real-time stream as readers, and the
 * stream's end account.
 */
#include "reader/live.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "record.h"

/* Bytes read at a time, and the batch past which a delivery is made even
 * while more is arriving (the memory a delivery takes is bounded). */
#define READ_CHUNK (1u << 20)
#define BATCH_SHOW (8u << 20)

int rlog_live_open_fd(int fd, struct rlog_live **out)
{
	if (fd < 0 || !out)
		return -EINVAL;
	struct rlog_live *lr = calloc(1, sizeof *lr);
	uint8_t *buf = malloc(READ_CHUNK);
	if (!lr || !buf) {
		free(lr);
		free(buf);
		close(fd);
		return -ENOMEM;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	lr->fd = fd;
	lr->endfd = -1;
	lr->buf = buf;
	rlog__live_init(&lr->s);
	*out = lr;
	return 0;
}

void rlog_live_close(struct rlog_live *lr)
{
	if (!lr)
		return;
	rlog_reader_close(lr->cur);
	if (lr->fd >= 0)
		close(lr->fd);
	if (lr->endfd >= 0)
		close(lr->endfd);
	rlog__live_free(&lr->s);
	free(lr->buf);
	free(lr);
}

int rlog_live_open(const char *name, struct rlog_live **out)
{
	if (!name || !out)
		return -EINVAL;
	uint32_t peer;
	int fd = rlog__live_connect(name, &peer);
	if (fd < 0)
		return fd;
	return rlog_live_open_fd(fd, out);
}

int rlog_live_fd(const struct rlog_live *lr)
{
	return lr ? lr->fd : -EINVAL;
}

const char *rlog_live_error(const struct rlog_live *lr)
{
	return lr ? lr->s.error : "";
}

int rlog_live_status(const struct rlog_live *lr, struct rlog_live_status *out)
{
	if (!lr || !out)
		return -EINVAL;
	*out = (struct rlog_live_status){
		.deliveries = lr->deliveries,
		.missed_blocks = lr->told_blocks,
		.missed_events = lr->told_events,
		.missed_bytes = lr->told_bytes,
		.ended = lr->ended,
		.problems = lr->nproblems,
	};
	return 0;
}

const char *rlog_live_problem(const struct rlog_live *lr, unsigned i)
{
	return lr && i < lr->nproblems ? lr->problem[i] : NULL;
}

static void problem(struct rlog_live *lr, const char *fmt, ...)
{
	if (lr->nproblems == RLOG__LIVE_PROBLEMS)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(lr->problem[lr->nproblems++], sizeof lr->problem[0], fmt, ap);
	va_end(ap);
}

/* A REAL_TIME DATA_LOSS record: what the stream told the consumer. */
static int told_record(void *arg, const struct rlog__record *rec, uint64_t ticks, uint32_t off)
{
	(void)ticks;
	(void)off;
	struct rlog_live *lr = arg;
	struct rlog_loss l;
	if (rec->flagged || rec->id != RLOG_ID_DATA_LOSS ||
	    rlog__loss_decode(rec->payload, rec->length, &l) < 0 ||
	    l.cause != RLOG_LOSS_REAL_TIME || !(l.fields & RLOG_LOSS_HAS_BLOCKS))
		return 0;
	lr->told_blocks += l.blocks;
	lr->told_events += l.events;
	lr->told_bytes += l.bytes;
	return 0;
}

/* Each valid daemon block of a delivery: its DATA_LOSS records. */
static int told_visit(void *arg, const struct rlog_block *b)
{
	if ((b->flags & RLOG_BLOCK_FLAG_DAEMON) && !(b->flags & RLOG_BLOCK_FLAG_METADATA))
		(void)rlog__records_walk(b->data, b->size, b->base_time, told_record, arg);
	return 0;
}

/* The image of a delivery as the reader handed out; the previous one
 * is closed (its counters carried over first). */
static int deliver(struct rlog_live *lr, const uint8_t *img, size_t len,
		   struct rlog_reader **out)
{
	struct rlog_reader *r;
	int rc = rlog_reader_open_mem_visit(img, len, told_visit, lr, &r);
	if (rc < 0)
		return rc;
	/* A counter's record follows from its last one in the previous
	 * delivery, as within one file (only the counters are read from the
	 * previous reader: its image is gone). */
	if (lr->cur && rlog_reader_counters_from(r, lr->cur) < 0) {
		rlog_reader_close(r);
		return -ENOMEM;
	}
	rlog_reader_close(lr->cur);
	lr->cur = r;
	lr->deliveries++;
	*out = r;
	return 1;
}

/*
 * The stream ended (end of file): what the daemon's end account says the
 * consumer missed beyond the DATA_LOSS records it was sent becomes one
 * more (docs/FORMAT.md, "The real-time stream"), and the bytes and blocks
 * read are checked against what the daemon sent.
 */
static int end_account(struct rlog_live *lr)
{
	struct rlog_rt_end e;
	if (lr->deliveries == 0) {
		problem(lr, "the stream ended before its LOG_MARKER");
		return 0;
	}
	if (lr->endfd < 0 || rlog__rt_end_read(lr->endfd, &e) < 0 ||
	    e.state != RLOG_RT_END_FINAL) {
		problem(lr, "the stream ended without the daemon's end account: what this "
			    "consumer missed at its end is not known");
		return 0;
	}
	uint64_t pending = rlog__live_pending(&lr->s);
	uint64_t read_bytes = lr->s.offset + pending;
	if (read_bytes != e.stream_bytes)
		problem(lr, "read %" PRIu64 " bytes of the stream; the daemon sent %" PRIu64,
			read_bytes, e.stream_bytes);
	if (e.lost_blocks < lr->told_blocks || e.lost_events < lr->told_events ||
	    e.lost_bytes < lr->told_bytes) {
		problem(lr, "the daemon's end account counts fewer missed blocks (%" PRIu64
			    ") than the stream told (%" PRIu64 ")", e.lost_blocks, lr->told_blocks);
		return 0;
	}
	if (lr->s.blocks != e.blocks_whole)
		problem(lr, "framed %" PRIu64 " blocks; the daemon sent %" PRIu64 " whole",
			lr->s.blocks, e.blocks_whole);
	uint64_t blocks = e.lost_blocks - lr->told_blocks;
	if (blocks == 0 && e.lost_events == lr->told_events) {
		if (pending > 0)
			problem(lr, "the stream ended inside a block (%" PRIu64 " bytes): the daemon "
				    "stopped before it could send it whole", pending);
		return 0;
	}
	return rlog__live_end_loss(&lr->s, blocks, e.lost_events - lr->told_events,
				   e.lost_bytes - lr->told_bytes, e.last_time);
}

/* Reads what the socket has (up to a batch).  Returns 1 if something
 * came (bytes, or the end), 0 if nothing did, or -errno. */
static int read_some(struct rlog_live *lr)
{
	int got = 0;
	while (lr->s.batch_len < BATCH_SHOW) {
		long n = rlog__live_recv(lr->fd, lr->buf, READ_CHUNK, &lr->endfd);
		if (n == -EAGAIN || n == -EINTR)
			break;
		if (n < 0)
			return (int)n;
		got = 1;
		if (n == 0) {
			lr->eof = true;
			break;
		}
		int rc = rlog__live_feed(&lr->s, lr->buf, (size_t)n);
		if (rc < 0)
			return rc;
	}
	return got;
}

int rlog_live_next(struct rlog_live *lr, struct rlog_reader **r)
{
	if (!lr || !r)
		return -EINVAL;
	*r = NULL;
	for (;;) {
		const uint8_t *img;
		size_t len;
		/* What was framed before an error is delivered first. */
		int rc = rlog__live_image(&lr->s, &img, &len);
		if (rc > 0)
			return deliver(lr, img, len, r);
		if (rc < 0)
			return rc;
		if (lr->s.error[0])
			return -EBADMSG;
		if (lr->ended)
			return 0;
		if (lr->eof) {
			lr->ended = true;
			rc = end_account(lr);
			if (rc < 0)
				return rc;
			continue;
		}
		rc = read_some(lr);
		if (rc == 0)
			return -EAGAIN;
		if (rc < 0 && rc != -EBADMSG)
			return rc;
	}
}
