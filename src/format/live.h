/*
 * live.h - the real-time stream (docs/FORMAT.md, "The real-time
 * stream"): the socket a session's consumers connect to, the end account
 * the daemon hands them, and the consumer's side of the stream (ringlog
 * tail): bytes from the daemon's socket in, memory images of log files
 * out, one per delivery, for the reader.  The daemon's side frames its
 * blocks here too (struct rlog__live_frame) and sends them from
 * src/daemon/sink_realtime.c; the end account and the exchange of its
 * descriptor (struct rlog_rt_end) are encoded and decoded here for both.
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
#ifndef RLOG_FORMAT_LIVE_H
#define RLOG_FORMAT_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metacache.h"
#include "ringlog/format.h"

/* The directory and prefix of the sockets: the session's lower-case name
 * follows. */
#define RLOG_RT_PREFIX "/dev/shm/ringlog-rt."

/* The socket path of session name (any case) into out (n bytes, at least
 * 108).  Returns 0 or -EINVAL (not a session name). */
int rlog__rt_path(const char *name, char *out, size_t n);

/*
 * Connects to the real-time stream of session name (the consumer's side):
 * its socket (rlog__rt_path), whose server must be this process's user,
 * as the daemon checks its consumers (a socket another user's process
 * listens on is not this session's stream).  Returns the connected
 * socket (close-on-exec, blocking), -EINVAL (not a session name), -errno
 * of socket or connect, or -EPERM (served by another user: *peer_uid
 * says whom).
 */
int rlog__live_connect(const char *name, uint32_t *peer_uid);

/*
 * The end account (docs/FORMAT.md, "The real-time stream"): a small file
 * (memfd) the daemon passes to each consumer with the first bytes of its
 * stream (SCM_RIGHTS) and writes whole (pwrite) just before it closes the
 * stream.  It says what the stream itself may not have been able to: a
 * consumer that was not reading at the end (its socket full) learns from
 * it what it missed after the last DATA_LOSS it got, and that the bytes it
 * read are all the daemon sent.  Little-endian, 64 bytes.
 */
#define RLOG_RT_END_MAGIC "RLOGRTE"  /* 8 bytes with its NUL */
#define RLOG_RT_END_VERSION 1
#define RLOG_RT_END_OPEN 0           /* state: the stream is still open */
#define RLOG_RT_END_FINAL 1          /* state: the daemon closed the stream */

struct rlog_rt_end {
	char magic[8];          /* RLOG_RT_END_MAGIC */
	uint32_t version;       /* RLOG_RT_END_VERSION */
	uint32_t state;         /* RLOG_RT_END_OPEN or RLOG_RT_END_FINAL */
	uint64_t stream_bytes;  /* bytes of the stream the socket took, in all */
	uint64_t blocks_whole;  /* blocks among them sent whole (seq 0 .. this - 1) */
	uint64_t lost_blocks;   /* thread blocks this consumer missed since its stream began,
	                           told in the stream or not */
	uint64_t lost_events;   /* the application events of those blocks */
	uint64_t lost_bytes;    /* and their record bytes */
	uint64_t last_time;     /* base time (ticks) of the last block the daemon drained */
};
_Static_assert(sizeof(struct rlog_rt_end) == 64, "the end account is 64 bytes");

/* The size of an end account of version RLOG_RT_END_VERSION. */
#define RLOG__RT_END_SIZE 64u

/* Writes e field by field at its documented offsets, little-endian, into
 * the RLOG__RT_END_SIZE bytes at out. */
void rlog__rt_end_encode(uint8_t *out, const struct rlog_rt_end *e);

/*
 * Reads an end account from the n bytes at p.  Returns 0, -ENODATA
 * (fewer than RLOG__RT_END_SIZE bytes: no account) or -EBADMSG (not an
 * end account: its magic, or a version before RLOG_RT_END_VERSION).  A
 * later version's longer account is read for the fields this one knows.
 */
int rlog__rt_end_decode(const uint8_t *p, size_t n, struct rlog_rt_end *e);

/* The daemon's side: writes e whole at offset 0 of fd (one pwrite, as
 * docs/FORMAT.md says).  Returns 0 or -errno (-EIO: written short). */
int rlog__rt_end_write(int fd, const struct rlog_rt_end *e);

/* The consumer's side: reads the account at offset 0 of fd.  Returns 0,
 * -errno of pread, or what rlog__rt_end_decode returns. */
int rlog__rt_end_read(int fd, struct rlog_rt_end *e);

/*
 * The daemon's side: sends the first n bytes of a stream at p to the
 * socket fd without waiting (MSG_DONTWAIT), with endfd, the end account's
 * descriptor, in an SCM_RIGHTS control message.  Returns the bytes the
 * socket took (> 0), or -errno (-EAGAIN: it took none now).
 */
long rlog__live_send_first(int fd, const void *p, size_t n, int endfd);

/*
 * The consumer's side: reads up to n bytes of the stream from fd into
 * buf, as read(2) does; a descriptor passed with them (the end account)
 * is kept in *endfd if that is -1, and closed otherwise (only the first
 * counts).  Returns the bytes read (0: the end of the stream) or -errno.
 */
long rlog__live_recv(int fd, void *buf, size_t n, int *endfd);

/*
 * The daemon's side of the framing: one or more whole blocks to send to a
 * consumer, assembled here (each block's header made for it, with its
 * sequence number and checksum), with what each block counts, so that
 * the daemon knows what a consumer missed if a frame is sent in part.
 */
struct rlog__live_fblock {
	size_t end;          /* offset just past it in the frame's bytes */
	uint32_t events;     /* application events in it */
	uint32_t event_bytes;/* their record bytes */
	bool thread;         /* a thread block (neither DAEMON nor METADATA) */
};

struct rlog__live_frame {
	uint8_t *buf;
	size_t len, cap;
	struct rlog__live_fblock *blk; /* its blocks, in order */
	size_t nblk, blk_cap;
};

/* Empties f (its memory is kept for the next frame). */
void rlog__live_frame_reset(struct rlog__live_frame *f);
void rlog__live_frame_free(struct rlog__live_frame *f);

/* Appends the stream's file header (its sizeof bytes as the log file
 * writer has them, format/logfile.h).  Returns 0 or -ENOMEM. */
int rlog__live_frame_header(struct rlog__live_frame *f, const struct rlog_file_header *fh);

/*
 * Appends a block of format major version RLOG_FILE_VERSION_MAJOR: its
 * header (flags, seq, pid, tid, base_time, size bytes of data, records
 * records; the checksum over them) and the data.  events and event_bytes
 * are what it counts if it is missed.  Returns 0 or -ENOMEM.
 */
int rlog__live_frame_block(struct rlog__live_frame *f, uint16_t flags, uint64_t seq, uint32_t pid,
			   uint32_t tid, uint64_t base_time, const void *data, uint32_t size,
			   uint32_t records, uint32_t events, uint32_t event_bytes);

/*
 * Appends a daemon block (pid 0, tid 0, base time time, seq) holding one
 * DATA_LOSS record of cause RLOG_LOSS_REAL_TIME (Length 32, struct
 * rlog_data_loss_blocks): blocks thread blocks missed, holding events
 * application events of bytes record bytes.  Returns 0 or -ENOMEM.
 */
int rlog__live_frame_loss(struct rlog__live_frame *f, uint64_t seq, uint64_t time,
			  uint64_t blocks, uint64_t events, uint64_t bytes);

/* The largest file header a stream may start with. */
#define RLOG__LIVE_HEADER_MAX 4096u

struct rlog__live {
	uint8_t *in;             /* bytes received, not framed yet */
	size_t in_len, in_cap;
	uint64_t offset;         /* stream offset of in[0] */
	uint8_t header[RLOG__LIVE_HEADER_MAX];
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

void rlog__live_init(struct rlog__live *t);
void rlog__live_free(struct rlog__live *t);

/*
 * Takes n more bytes of the stream.  Returns 0, -EBADMSG (the stream
 * cannot be framed: t->error says why; nothing more can be read from it)
 * or -ENOMEM.
 */
int rlog__live_feed(struct rlog__live *t, const void *p, size_t n);

/*
 * The image of the blocks framed since the last call (see the top of
 * this file).  Returns 1 with *img and *len set (valid until the next
 * call), 0 if there is nothing to show yet (no block 0, or no block since
 * the last image; the first image needs block 0 only), or -ENOMEM.
 */
int rlog__live_image(struct rlog__live *t, const uint8_t **img, size_t *len);

/*
 * The end of a stream that its daemon's end account (struct rlog_rt_end)
 * says missed blocks after the last DATA_LOSS it held: drops the bytes of
 * a block cut short, and adds a daemon block (pid 0, tid 0, base time
 * time) holding one DATA_LOSS of cause RLOG_LOSS_REAL_TIME (Length 32,
 * struct rlog_data_loss_blocks), as the daemon would have sent it, to the
 * batch.  Returns 0 or -ENOMEM.
 */
int rlog__live_end_loss(struct rlog__live *t, uint64_t blocks, uint64_t events, uint64_t bytes,
			 uint64_t time);

/* Bytes received that do not make a whole block yet (at the end of the
 * stream: a block cut short). */
static inline size_t rlog__live_pending(const struct rlog__live *t)
{
	return t->in_len;
}

#endif
