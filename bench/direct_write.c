/*
 * direct_write.c - the kernel's part of writing a log file around the page
 * cache (O_DIRECT) against write(2) through it, on a disk's file system
 * (docs/PERFORMANCE.md, "What the daemon costs": the direct-I/O
 * prototype).  Writes 512 MiB from a hot buffer into DIR/ringlog-direct-PID
 * and prints the writer's CPU time (user and system) per 24 bytes (one
 * 16-byte event's record), for pieces of 256 KiB, 1 MiB and 4 MiB, in
 * rounds that alternate the modes:
 *
 *   copy      memcpy of the pieces into an aligned buffer, alone (what the
 *             daemon adds to stage a direct write)
 *   write     pwrite(2) into a new file, through the page cache (its
 *             writeback runs later, in the kernel's threads: not counted;
 *             sync(2) before each run, outside the clock)
 *   direct    pwrite(2) of the same into a new file opened O_DIRECT
 *
 *   cc -O2 -std=c11 bench/direct_write.c -o /tmp/direct_write
 *   /tmp/direct_write /work/tmp 3     # a directory on a disk, 3 rounds
 *
 * On tmpfs O_DIRECT is a buffered write: use a directory on a disk.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TOTAL (512u << 20)
#define RECORD 24.0

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* TOTAL bytes in pieces of piece bytes from buf into a new file (direct:
 * O_DIRECT), or into buf itself from src (path NULL): CPU ns per 24
 * bytes; < 0 if a write fails. */
static double run(const char *path, uint8_t *buf, const uint8_t *src, size_t piece, bool direct)
{
	int fd = -1;
	/* The previous run's dirty pages written back first, outside the
	 * clock, so that this one is not throttled for them. */
	sync();
	if (path) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | (direct ? O_DIRECT : 0),
			  0600);
		if (fd < 0) {
			perror(path);
			return -1;
		}
	}
	double c0 = cpu_s();
	for (size_t off = 0; off < TOTAL; off += piece) {
		if (fd < 0) {
			memcpy(buf, src, piece);
			__asm__ volatile("" : : "r"(buf) : "memory"); /* GCC: keep the copy */
		} else if (pwrite(fd, buf, piece, (off_t)off) != (ssize_t)piece) {
			perror("pwrite");
			close(fd);
			unlink(path);
			return -1;
		}
	}
	double c1 = cpu_s();
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	return (c1 - c0) * 1e9 / (TOTAL / RECORD);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: direct_write DIR ROUNDS\n");
		return 2;
	}
	int rounds = atoi(argv[2]);
	char path[4096];
	snprintf(path, sizeof path, "%s/ringlog-direct-%d", argv[1], (int)getpid());
	const size_t pieces[] = { 256u << 10, 1u << 20, 4u << 20 };
	uint8_t *buf = aligned_alloc(4096, 4u << 20), *src = malloc(4u << 20);
	if (!buf || !src)
		return 1;
	memset(buf, 0x5a, 4u << 20);
	memset(src, 0xa5, 4u << 20);
	for (int r = 0; r < rounds; r++) {
		for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
			double copy = run(NULL, buf, src, pieces[i], false);
			double write = run(path, buf, src, pieces[i], false);
			double direct = run(path, buf, src, pieces[i], true);
			printf("round %d piece %zu KiB: copy %.2f  write %.2f  direct %.2f ns per 24 "
			       "bytes\n",
			       r + 1, pieces[i] >> 10, copy, write, direct);
		}
	}
	free(buf);
	free(src);
	return 0;
}
