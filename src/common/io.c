#include "io.h"

#include <errno.h>
#include <unistd.h>

/* Pieces per writev: Linux's IOV_MAX (UIO_MAXIOV), which POSIX leaves to
 * <limits.h> under XSI only. */
#define IOV_BATCH 1024

int rlog__write_all(int fd, const void *data, size_t n, size_t *done)
{
	struct iovec iov = { .iov_base = (void *)data, .iov_len = n };
	return rlog__writev_all(fd, &iov, 1, done);
}

int rlog__writev_all(int fd, struct iovec *iov, size_t n, size_t *done)
{
	size_t off = 0, i = 0;
	int err = 0;
	while (i < n) {
		if (iov[i].iov_len == 0) {
			i++;
			continue;
		}
		int cnt = n - i < IOV_BATCH ? (int)(n - i) : IOV_BATCH;
		ssize_t w = writev(fd, iov + i, cnt);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (w == 0) {
			err = -EIO;
			break;
		}
		off += (size_t)w;
		/* Step over what was written: whole pieces, then part of one. */
		for (size_t k = (size_t)w; k > 0;) {
			if (k >= iov[i].iov_len) {
				k -= iov[i].iov_len;
				iov[i].iov_len = 0;
				i++;
			} else {
				iov[i].iov_base = (char *)iov[i].iov_base + k;
				iov[i].iov_len -= k;
				k = 0;
			}
		}
	}
	if (done)
		*done = off;
	return err;
}
