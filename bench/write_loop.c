/*
 * write_loop.c - 200,000 16-byte events from one thread, timed
 * (rlog_write) or untimed (rlog_write_untimed): a program to count the
 * write path's instructions with valgrind (docs/PERFORMANCE.md):
 *
 *   cc -O2 -I include bench/write_loop.c -L build/src/lib \
 *      -Wl,-rpath,$PWD/build/src/lib -lringlog -o /tmp/write_loop
 *   build/src/cli/ringlog start wl -o /dev/shm/wl.rlog --buffers 1024
 *   RINGLOG_SESSION=wl valgrind --tool=callgrind /tmp/write_loop 1   # untimed
 *   RINGLOG_SESSION=wl valgrind --tool=callgrind /tmp/write_loop 0   # timed
 *   build/src/cli/ringlog stop wl
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, used by ringlog.h, under -std=c11 */
#include <stdio.h>
#include <stdlib.h>

#include "ringlog.h"

int main(int argc, char **argv)
{
	int untimed = argc > 1 && atoi(argv[1]) != 0;
	if (rlog_attach(NULL) < 0) {
		fprintf(stderr, "write_loop: no session (set RINGLOG_SESSION)\n");
		return 1;
	}
	uint64_t v[2] = { 0, 0 }, lost = 0;
	for (uint64_t i = 0; i < 200000; i++) {
		v[0] = i;
		int r = untimed ? rlog_write_untimed(1024, v, 16) : rlog_write(1024, v, 16);
		lost += r < 0;
	}
	printf("lost: %llu\n", (unsigned long long)lost);
	return 0;
}
