#include "io.h"

#include <errno.h>
#include <unistd.h>

int rlog__write_all(int fd, const void *data, size_t n, size_t *done)
{
	const char *p = data;
	size_t off = 0;
	int err = 0;
	while (off < n) {
		ssize_t w = write(fd, p + off, n - off);
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
	}
	if (done)
		*done = off;
	return err;
}
