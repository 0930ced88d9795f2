#define _GNU_SOURCE
#include "futex.h"

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int rlog__futex_wait(_Atomic uint32_t *word, uint32_t expected, int timeout_ms)
{
	struct timespec ts, *tp = NULL;
	if (timeout_ms >= 0) {
		ts.tv_sec = timeout_ms / 1000;
		ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
		tp = &ts;
	}
	long r = syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, expected, tp, NULL, 0);
	if (r == 0 || errno == EAGAIN)
		return 0;
	return -errno;
}

int rlog__futex_wake(_Atomic uint32_t *word, int n)
{
	long r = syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, n, NULL, NULL, 0);
	return r < 0 ? -errno : (int)r;
}
