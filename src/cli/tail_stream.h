/*
 * tail_stream.h - the consumer's side of a real-time stream (ringlog
 * tail): bytes from the daemon's socket in, memory images of log files
 * out, one per delivery, for the reader (docs/FORMAT.md, "The real-time
 * stream").
 *
 *   stream   file header | block 0 | copies | block | block | ...
 *   feed()   frames it: the header and block 0 are kept, copy blocks go
 *            to a metadata cache (as do the metadata records of every
 *            block), every other block joins the batch
 *   image()  file header | block 0 | the cache as copies | the batch's
 *            blocks: a log file that decodes on its own, numbered 0, 1,
 *            2, ... (a block whose checksum was correct gets a new one;
 *            one that was not keeps its wrong one, and the reader reports
 *            it as damaged)
 *
 * The stream is untrusted input (tests/fuzz/fuzz_stream.c): a header or
 * block header that cannot be framed ends it with an error; nothing is
 * read out of bounds, memory is bounded by one block and the batch.
 */
#ifndef RLOG_CLI_TAIL_STREAM_H
#define RLOG_CLI_TAIL_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metacache.h"

/* The largest file header a stream may start with. */
#define TAIL_HEADER_MAX 4096u

struct tail_stream {
	uint8_t *in;             /* bytes received, not framed yet */
	size_t in_len, in_cap;
	uint64_t offset;         /* stream offset of in[0] */
	uint8_t header[TAIL_HEADER_MAX];
	size_t header_size;      /* 0 until the file header is in */
	unsigned major;          /* the stream's format major version (its checksum) */
	uint8_t *block0;         /* the stream's first block (its LOG_MARKER) */
	size_t block0_size;
	struct rlog__metacache meta;
	uint8_t *batch;          /* blocks since the last image */
	size_t batch_len, batch_cap;
	size_t batch_blocks;
	uint8_t *img;            /* the last image */
	size_t img_cap;
	bool imaged;             /* an image was made (the first comes without blocks) */
	uint64_t blocks;         /* blocks framed (block 0 included) */
	char error[160];         /* why the stream cannot be read, after -EBADMSG */
};

void tail_stream_init(struct tail_stream *t);
void tail_stream_free(struct tail_stream *t);

/*
 * Takes n more bytes of the stream.  Returns 0, -EBADMSG (the stream
 * cannot be framed: t->error says why; nothing more can be read from it)
 * or -ENOMEM.
 */
int tail_stream_feed(struct tail_stream *t, const void *p, size_t n);

/*
 * The image of the blocks framed since the last call (see the top of
 * this file).  Returns 1 with *img and *len set (valid until the next
 * call), 0 if there is nothing to show yet (no block 0, or no block since
 * the last image; the first image needs block 0 only), or -ENOMEM.
 */
int tail_stream_image(struct tail_stream *t, const uint8_t **img, size_t *len);

/*
 * The end of a stream that its daemon's end account (struct rlog_rt_end)
 * says missed blocks after the last DATA_LOSS it held: drops the bytes of
 * a block cut short, and adds a daemon block (pid 0, tid 0, base time
 * time) holding one DATA_LOSS of cause RLOG_LOSS_REAL_TIME (Length 32,
 * struct rlog_data_loss_blocks), as the daemon would have sent it, to the
 * batch.  Returns 0 or -ENOMEM.
 */
int tail_stream_end_loss(struct tail_stream *t, uint64_t blocks, uint64_t events, uint64_t bytes,
			 uint64_t time);

/* Bytes received that do not make a whole block yet (at the end of the
 * stream: a block cut short). */
static inline size_t tail_stream_pending(const struct tail_stream *t)
{
	return t->in_len;
}

#endif
