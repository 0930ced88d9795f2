/*
 * io.h - writing a whole buffer to a file descriptor.
 */
#ifndef RLOG_COMMON_IO_H
#define RLOG_COMMON_IO_H

#include <stddef.h>
#include <sys/uio.h>

/* Writes n bytes, retrying after EINTR and short writes.  If done is not
 * NULL it receives the bytes written (all of them on success).  Returns 0,
 * or -errno of the write that failed (-EIO if write returned 0). */
int rlog__write_all(int fd, const void *p, size_t n, size_t *done);

/* The same for the n pieces of iov, in order, with writev (1024 at a
 * time).  iov is changed (what was written is stepped over).  Returns 0 or
 * -errno; *done (if not NULL) the bytes written. */
int rlog__writev_all(int fd, struct iovec *iov, size_t n, size_t *done);

#endif
