/*
 * shm_pages.h - what a session's shared-memory object holds in memory:
 * the pages a tmpfs object has allocated in a byte range (SEEK_DATA and
 * SEEK_HOLE), for the tests of the daemon's trimming (src/daemon/trim.c).
 */
#ifndef RLOG_TEST_SHM_PAGES_H
#define RLOG_TEST_SHM_PAGES_H

#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shm.h"

#define SHM_PAGE 4096u

/* Opens session name's object read-only, or -1. */
static inline int shm_pages_open(const char *name)
{
	char shm[128];
	if (rlog__shm_name(name, shm, sizeof shm) < 0)
		return -1;
	return shm_open(shm, O_RDONLY, 0);
}

/* Pages of [from, to) that the object has allocated. */
static inline uint64_t shm_pages_allocated(int fd, uint64_t from, uint64_t to)
{
	return (rlog__shm_allocated(fd, from, to) + SHM_PAGE - 1) / SHM_PAGE;
}

#endif
