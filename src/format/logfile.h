/*
 * logfile.h - writing a ringlog log file: the file header, the LOG_MARKER
 * block, then blocks of records (docs/FORMAT.md).
 *
 * Blocks are staged and written with writev(2) in large pieces: block
 * headers and the data of daemon blocks are copied into a staging buffer,
 * the data of a producer's block is written from where it is (the session
 * region, rlog__logfile_block_ref), so that its bytes are copied once, by
 * the kernel.
 * If the file cannot take them (a full disk, an I/O error) the blocks not
 * written whole are counted as lost (events, bytes, LogBuffersLost), the
 * file is cut back to the last whole block so it stays readable, and later
 * blocks are tried again.
 */
#ifndef RLOG_FORMAT_LOGFILE_H
#define RLOG_FORMAT_LOGFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/uio.h>

#include "format/block.h"
#include "io.h" /* rlog__file_name */
#include "region_abi.h"

/* The least bytes a log file's stage holds (a block header and its data
 * together): a block larger is refused and counted lost.  The system
 * events' writers bound their blocks below it (src/system/source.c,
 * rundown_rec.c: _Static_assert). */
#define RLOG__LOGFILE_STAGE_MIN (1u << 20)

struct rlog__staged {
	uint32_t end;        /* offset in the bytes staged just past the block */
	uint32_t events;     /* application events in it */
	uint32_t bytes;      /* their record bytes */
	bool thread;         /* a producer thread's block (not daemon records) */
};

struct rlog__logfile {
	int fd;
	uint8_t *stage;            /* headers and copied data */
	size_t stage_used;         /* bytes of stage in use */
	size_t used, cap;          /* bytes staged (copied or referenced), and the most
	                              staged before a flush */
	struct iovec *iov;         /* what the flush writes, in order: pieces of stage
	                              and referenced data */
	size_t niov, iov_cap;
	struct rlog__staged *staged;
	size_t nstaged, staged_cap;
	uint64_t seq;              /* next block sequence number */
	uint64_t file_bytes;       /* bytes in the file, all whole blocks */
	uint64_t marker_offset;    /* where the LOG_MARKER block starts */
	uint32_t marker_pid, marker_tid;
	/* Confirmed by write(2): */
	uint64_t events_written, bytes_written, buffers_written;
	/* Not written (full disk, I/O error): */
	uint64_t lost_events, lost_bytes, lost_blocks;
	uint64_t unreported_events, unreported_bytes; /* not yet in a DATA_LOSS */
	int last_errno;            /* 0, or the errno of the last failed write */
	unsigned major;            /* the file's format major: which checksum (crc32c.h) */
	uint32_t pre_crc, pre_len; /* the next block's (rlog__logfile_pre_crc), then 0 */
	bool keep_size;            /* a partial write is not cut off with ftruncate (a
	                              preallocated file, or a circular one that has
	                              wrapped: bytes past the write position are
	                              still in use); the position goes back instead */
};

/* Invariant checker (docs/CONTRIBUTING.md), for assert(): what is staged
 * for the next write holds together.  The staged blocks' ends increase by
 * at least a block header each and the last is the bytes staged (used);
 * the pieces to write (iov) add up to the same bytes; the copied bytes
 * (stage_used) are among them; no count passes its capacity.  Asserted
 * before a flush writes (so that a staging error never reaches the file)
 * and after it. */
bool rlog__logfile_sane(const struct rlog__logfile *lf);

/* Starts a file on fd (positioned at 0): the file header, which holds a
 * copy of the LOG_MARKER (version 1.1), and the LOG_MARKER block.
 * Returns 0 or -errno. */
int rlog__logfile_open(struct rlog__logfile *lf, int fd, size_t max_block,
		       const struct rlog_log_marker *marker, uint32_t pid, uint32_t tid);

/* rlog__logfile_open with RLOG_FILE_FLAG_* bits besides MARKER in the file
 * header (CIRCULAR, PREALLOCATED).  Returns 0 or -errno. */
int rlog__logfile_open_flags(struct rlog__logfile *lf, int fd, size_t max_block,
			     const struct rlog_log_marker *marker, uint32_t pid, uint32_t tid,
			     uint32_t file_flags);

/* Stages nothing and writes nothing: takes over an open file of format
 * major version major whose blocks are already written (ringlog stop
 * --force), to append at byte pos with sequence number seq; block 0 (the
 * LOG_MARKER) is at marker_offset.  Returns 0 or -ENOMEM. */
int rlog__logfile_resume(struct rlog__logfile *lf, int fd, size_t max_block, unsigned major,
			 uint64_t pos, uint64_t seq, uint64_t marker_offset, uint32_t marker_pid,
			 uint32_t marker_tid);

/* Appends one block.  events/event_bytes are the application events it
 * carries (0 for daemon blocks).  Returns 0 or -errno (the block is then
 * counted lost). */
int rlog__logfile_block(struct rlog__logfile *lf, uint16_t flags, uint32_t pid, uint32_t tid,
			uint64_t base_time, const void *data, uint32_t size, uint32_t records,
			uint32_t events, uint32_t event_bytes);

/* rlog__logfile_block, but the data is not copied: it is written from
 * data by the next flush, so it must stay as it is until then (the
 * checksum is computed now).  Returns 0 or -errno. */
int rlog__logfile_block_ref(struct rlog__logfile *lf, uint16_t flags, uint32_t pid, uint32_t tid,
			    uint64_t base_time, const void *data, uint32_t size, uint32_t records,
			    uint32_t events, uint32_t event_bytes);

/* The next block's data: its first len bytes have CRC-32C crc (from 0),
 * computed by a drain thread (rlog__block_header_make_pre). */
static inline void rlog__logfile_pre_crc(struct rlog__logfile *lf, uint32_t crc, uint32_t len)
{
	lf->pre_crc = crc;
	lf->pre_len = len;
}

/* Writes what is staged.  Returns 0 or -errno. */
int rlog__logfile_flush(struct rlog__logfile *lf);

/* Rewrites the LOG_MARKER block in place (same size), e.g. with a refined
 * tick frequency, then the file header's copy.  Returns 0 or -errno. */
int rlog__logfile_rewrite_marker(struct rlog__logfile *lf, const struct rlog_log_marker *m);

/* The file header of a new file of this version (RLOG_FILE_VERSION_*),
 * or of a real-time stream: the LOG_MARKER's copy with its checksum,
 * flags RLOG_FILE_FLAG_MARKER | file_flags, created now. */
void rlog__file_header_make(struct rlog_file_header *fh, uint32_t file_flags,
			    const struct rlog_log_marker *marker);

/* Encodes a LOG_MARKER record (header, timestamp, payload) into out
 * (8 + sizeof marker bytes) and returns its size. */
uint32_t rlog__marker_record(uint8_t *out, const struct rlog_log_marker *m);

void rlog__logfile_close(struct rlog__logfile *lf);


#endif
