/*
 * lock.c - the daemon lock of a session (lock.h).
 */
#define _GNU_SOURCE
#include "lock.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shm.h"

int rlog__daemon_lock(const char *name)
{
	char shm[96];
	if (rlog__shm_name(name, shm, sizeof shm) < 0)
		return -EINVAL;
	/* O_RDONLY: a lock needs no write access, and the object stays as it
	 * is.  shm_open gives FD_CLOEXEC. */
	int fd = shm_open(shm, O_RDONLY, 0);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int err = errno == EWOULDBLOCK ? EWOULDBLOCK : errno;
		close(fd);
		return -err;
	}
	return fd;
}
