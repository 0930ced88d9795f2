/*
 * tmpfs_mmap.c - a log file written through a shared mapping against
 * write(2), on tmpfs: what the kernel's part of the daemon's work would
 * cost if the daemon copied each block into mapped file pages itself
 * (docs/PERFORMANCE.md, "What the daemon costs").  Writes 512 MiB in
 * 1 MiB pieces from a hot buffer into /dev/shm/ringlog-mmap-PID (or
 * $TMPFS_MMAP_DIR) and prints the writer's CPU time (user and system) per
 * 24 bytes (one 16-byte event's record), mode by mode:
 *
 *   write          write(2) into a new file (ref_tmpfs_write_cpu_ns_per_event)
 *   map W          a new file through MAP_SHARED windows of W MiB, each
 *                  allocated with fallocate(2) and pre-faulted with
 *                  MADV_POPULATE_WRITE, then unmapped
 *   map-lazy W     the same without the pre-fault (the copy's faults)
 *   rewrite        pwrite(2) over the pages of an existing file
 *                  (ref_tmpfs_rewrite_cpu_ns_per_event)
 *   rewrite-map 0  memcpy into a mapping of the whole existing file,
 *                  mapped and pre-faulted once, before the clock starts
 *                  (a circular, preallocated file mapped once)
 *   rewrite-map W  the same through windows of W MiB, each mapped,
 *                  pre-faulted and unmapped in turn (no fallocate: the
 *                  pages exist)
 *
 *   cc -O2 -std=c11 bench/tmpfs_mmap.c -o /tmp/tmpfs_mmap
 *   /tmp/tmpfs_mmap 3      # 3 rounds of every mode, alternated
 *   /tmp/tmpfs_mmap 3 map 64   # one mode (to profile it: perf record -g)
 *   TMPFS_MMAP_DIR=/mnt/x /tmp/tmpfs_mmap 3   # another directory than /dev/shm
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

enum { CHUNK = 1 << 20, TOTAL = 512 << 20 };

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The file through windows of win bytes, allocated first if alloc.
 * Returns 0 or -1. */
static int map_windows(int fd, const char *buf, size_t win, int populate, int alloc)
{
	char *m = NULL;
	size_t at = 0;
	for (size_t o = 0; o < TOTAL; o += CHUNK) {
		if (m == NULL || o + CHUNK > at + win) {
			if (m)
				munmap(m, win);
			at = o;
			if (alloc && fallocate(fd, 0, (off_t)at, (off_t)win) < 0)
				return -1;
			m = mmap(NULL, win, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)at);
			if (m == MAP_FAILED)
				return -1;
			if (populate)
				(void)madvise(m, win, MADV_POPULATE_WRITE);
		}
		memcpy(m + (o - at), buf, CHUNK);
	}
	munmap(m, win);
	return 0;
}

/* One mode; returns ns per 24 bytes, or < 0. */
static double run(const char *path, const char *buf, const char *mode, size_t win)
{
	unlink(path);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return -1;
	char *whole = NULL;
	int rewrite = strncmp(mode, "rewrite", 7) == 0, rc = 0;
	if (rewrite) { /* the file's pages exist, written once */
		for (size_t o = 0; o < TOTAL && rc == 0; o += CHUNK)
			rc = write(fd, buf, CHUNK) == CHUNK ? 0 : -1;
		if (strcmp(mode, "rewrite-map") == 0 && win == 0) {
			whole = mmap(NULL, TOTAL, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			if (whole == MAP_FAILED)
				rc = -1;
			else
				(void)madvise(whole, TOTAL, MADV_POPULATE_WRITE);
		}
	}
	double c0 = cpu_s();
	if (rc < 0) {
	} else if (strcmp(mode, "write") == 0) {
		for (size_t o = 0; o < TOTAL && rc == 0; o += CHUNK)
			rc = write(fd, buf, CHUNK) == CHUNK ? 0 : -1;
	} else if (strcmp(mode, "rewrite") == 0) {
		for (size_t o = 0; o < TOTAL && rc == 0; o += CHUNK)
			rc = pwrite(fd, buf, CHUNK, (off_t)o) == CHUNK ? 0 : -1;
	} else if (whole) {
		for (size_t o = 0; o < TOTAL; o += CHUNK)
			memcpy(whole + o, buf, CHUNK);
	} else {
		rc = map_windows(fd, buf, win, strcmp(mode, "map-lazy") != 0, !rewrite);
	}
	double t = cpu_s() - c0;
	if (whole)
		munmap(whole, TOTAL);
	close(fd);
	unlink(path);
	return rc < 0 ? -1 : t * 1e9 / (TOTAL / 24.0);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1;
	static const struct { const char *mode; size_t win_mb; } modes[] = {
		{ "write", 0 },   { "map", 4 },     { "map", 64 },         { "map", 512 },
		{ "map-lazy", 64 }, { "rewrite", 0 }, { "rewrite-map", 0 }, { "rewrite-map", 64 },
	};
	char path[64];
	const char *dir = getenv("TMPFS_MMAP_DIR");
	snprintf(path, sizeof path, "%.40s/ringlog-mmap-%d", dir ? dir : "/dev/shm", (int)getpid());
	char *buf = malloc(CHUNK);
	if (buf == NULL || rounds < 1)
		return 2;
	memset(buf, 0x5a, CHUNK);
	const char *only = argc > 3 ? argv[2] : NULL;
	size_t only_win = argc > 3 ? (size_t)atoi(argv[3]) : 0;
	for (int r = 0; r < rounds; r++)
		for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
			if (only && (strcmp(only, modes[i].mode) != 0 || only_win != modes[i].win_mb))
				continue;
			double ns = run(path, buf, modes[i].mode, (size_t)modes[i].win_mb << 20);
			if (ns < 0) {
				perror(modes[i].mode);
				return 1;
			}
			printf("round %d %-11s %3zu MiB: %6.2f ns per 24 bytes\n", r + 1,
			       modes[i].mode, modes[i].win_mb, ns);
		}
	free(buf);
	return 0;
}
