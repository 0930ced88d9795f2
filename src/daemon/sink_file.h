/*
 * sink_file.h - the log file sink: ETW's file modes (docs/SESSIONS.md,
 * docs/FORMAT.md "Circular files").
 *
 *   sequential   one file, front to back; with a maximum size, a block
 *                that would pass it is refused and so is every later one
 *                (LogBuffersLost, its events in EventsLost), except one
 *                LOG_WRITE DATA_LOSS at stop, in room kept for it
 *   circular     one file of at most the maximum size: block 0 (the
 *                LOG_MARKER) stays, the rest is a ring that restarts
 *                just after it, keeping the newest blocks; after each
 *                wrap the metadata copies come first
 *   newfile      a new file (the pattern's %d = 1, 2, 3, ...) whenever
 *                the next block would pass the maximum size; each starts
 *                with its own file header, LOG_MARKER and metadata copies
 *   preallocate  each file is allocated to the maximum size up front
 *                (posix_fallocate); the zeros after its last block are
 *                unused space (RLOG_FILE_FLAG_PREALLOCATED)
 */
#ifndef RLOG_DAEMON_SINK_FILE_H
#define RLOG_DAEMON_SINK_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sink.h"

/* Room a sequential file with a maximum size keeps for the one LOG_WRITE
 * DATA_LOSS of stop: a block header and the record. */
#define RLOG__FILE_RESERVE (48u + 8u + 24u)

/* Gives the LOG_MARKER for a new file (newfile), the tick frequency
 * measured so far; called once per file. */
typedef void rlog__marker_fn(void *arg, struct rlog_log_marker *m);

struct rlog__file_opts {
	int fd;                   /* the first file, open for writing and empty
	                             (ringlog start created it); owned by the sink */
	uint32_t mode;            /* RLOG_MODE_* bits */
	uint64_t max_size;        /* MaximumFileSize in bytes; 0: no maximum */
	const char *pattern;      /* NEWFILE: the absolute name with one %d */
	bool force;               /* NEWFILE: overwrite files that exist */
	size_t max_block;         /* the largest block's data (the buffer size) */
	uint32_t pid, tid;        /* the daemon's: block 0's pid and tid */
	rlog__marker_fn *marker;  /* the LOG_MARKER of each new file */
	void *marker_arg;
	uint64_t index;           /* NEWFILE: fd's file's number; 0: 1 */
};

/* Where an existing file continues (ringlog stop --force): what
 * reading it found.  See rlog__sink_file_resume. */
struct rlog__file_resume {
	uint64_t pos;             /* the end of its last whole block, in write order */
	uint64_t next_seq;        /* one past the highest block sequence number */
	uint64_t marker_offset;   /* block 0 */
	uint32_t marker_pid, marker_tid;
	uint64_t ring_start;      /* CIRCULAR: the end of block 0 */
	uint64_t data_end;        /* CIRCULAR: where the older lap's data ends
	                             (the file's data size) */
	bool wrapped;             /* CIRCULAR: it has wrapped */
	uint64_t index;           /* NEWFILE: the file's number */
	unsigned major;           /* its format major version (its checksum) */
};

/* Starts the file sink on opts->fd: writes the file header and block 0
 * (opts->marker gives the LOG_MARKER).  Returns 0, -ENOMEM, or the -errno of allocating (preallocate)
 * or writing the file. */
int rlog__sink_file_open(const struct rlog__file_opts *opts, struct rlog__sink **out);

/* Stages the metadata copies of output from's cache in file sink s (a
 * snapshot's file, which belongs to no output). */
void rlog__sink_file_copies(struct rlog__sink *s, struct rlog__output *from);

/* Starts the file sink on an existing file opts->fd (open for reading and
 * writing), to append after what rs says it holds.  Returns 0 or -ENOMEM,
 * or the -errno of positioning the file. */
int rlog__sink_file_resume(const struct rlog__file_opts *opts, const struct rlog__file_resume *rs,
			   struct rlog__sink **out);

#endif
