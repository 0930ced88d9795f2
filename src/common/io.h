/*
 * io.h - writing a whole buffer to a file descriptor.
 */
#ifndef RLOG_COMMON_IO_H
#define RLOG_COMMON_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* Writes n bytes, retrying after EINTR and short writes.  If done is not
 * NULL it receives the bytes written (all of them on success).  Returns 0,
 * or -errno of the write that failed (-EIO if write returned 0). */
int rlog__write_all(int fd, const void *p, size_t n, size_t *done);

/* The same for the n pieces of iov, in order, with writev (1024 at a
 * time).  iov is changed (what was written is stepped over).  Returns 0 or
 * -errno; *done (if not NULL) the bytes written. */
int rlog__writev_all(int fd, struct iovec *iov, size_t n, size_t *done);

/* rlog__create_output's flags. */
#define RLOG_OUT_FORCE 1u  /* an existing file may be replaced (--force) */
#define RLOG_OUT_OWN   4u  /* with FORCE: a file of ringlog's own naming (a journal's
                              temporary), never a session's log file: not looked for */
#define RLOG_OUT_KEEP  2u  /* with FORCE: an existing regular file is opened as it is,
                              not truncated (the caller truncates it when it is sure) */

/*
 * Opens an output file (a log file, a snapshot, a converted trace) for
 * writing, the one way every writer does: created with O_EXCL and
 * O_NOFOLLOW, mode 0600 whatever the umask (its user may widen it later;
 * the session region and socket are 0600 too).  Never through a symbolic
 * link: without RLOG_OUT_FORCE an existing path (a link included) is
 * -EEXIST; with it a link is removed and a new file created in its place
 * (its target untouched), and so is a regular file with more than one
 * name (a hard link) or another owner; any other existing regular file is truncated (or kept,
 * with RLOG_OUT_KEEP) and set to 0600, unless it is a session's log file
 * (inuse.h: -ETXTBSY, the file untouched), and anything else (a device, a
 * FIFO) is opened as it is.  *created (if not NULL) says whether the file
 * is new: the caller's to remove if it gives up.  Returns the descriptor
 * (close-on-exec), or -errno of open, lstat or unlink (-EEXIST, -ELOOP if
 * a link appeared meanwhile, -EISDIR, -EACCES, -ETXTBSY, ...).
 */
int rlog__create_output(const char *path, unsigned flags, bool *created);

/* Removes an output that a failed write left half written (half a trace
 * helps nobody), if it is a regular file: never a device or a FIFO that
 * --force wrote into (as root, removing /dev/full would leave the next
 * writer of that name a regular file). */
void rlog__output_discard(const char *path);

/* The same in directory dirfd (openat, unlinkat): for the files of a CTF
 * trace directory. */
int rlog__create_output_at(int dirfd, const char *path, unsigned flags, bool *created);

/* What went wrong creating an output, for a message: strerror(err), but
 * for ETXTBSY (rlog__create_output: a session's log file) what that means. */
const char *rlog__output_strerror(int err);

/* The name of file index (1, 2, 3, ...) of a newfile session
 * (docs/FORMAT.md, "Files of a newfile session"): pattern with %d
 * replaced by index ("%%" by "%"), into out (n bytes).  Returns 0 or
 * -ENAMETOOLONG. */
int rlog__file_name(const char *pattern, uint64_t index, char *out, size_t n);

#endif
