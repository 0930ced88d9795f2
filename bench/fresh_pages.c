/*
 * fresh_pages.c - what write(2) into a growing tmpfs file costs, segment by
 * segment: on a virtual machine whose balloon reports free pages to the
 * host, memory the guest has not written for a while costs the host's page
 * faults, and a file that grows by gigabytes reaches it
 * (docs/PERFORMANCE.md, "Drain throughput").  Writes SEGMENTS segments of
 * 256 MiB (1 MiB writes) into /dev/shm/ringlog-fresh-PID, prints the MB
 * per second of CPU time of each, and deletes the file.
 *
 *   cc -O2 -std=c11 bench/fresh_pages.c -o /tmp/fresh_pages
 *   /tmp/fresh_pages 16
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int segs = argc > 1 ? atoi(argv[1]) : 0;
	if (segs < 1 || segs > 1024) {
		fprintf(stderr, "usage: fresh_pages SEGMENTS (1 to 1024, of 256 MiB)\n");
		return 2;
	}
	enum { CHUNK = 1 << 20, PER_SEG = 256 };
	char *buf = malloc(CHUNK), path[64];
	snprintf(path, sizeof path, "/dev/shm/ringlog-fresh-%d", (int)getpid());
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (buf == NULL || fd < 0) {
		perror("fresh_pages");
		return 1;
	}
	memset(buf, 0x5a, CHUNK);
	int rc = 0;
	for (int s = 0; s < segs && rc == 0; s++) {
		double c0 = cpu_s();
		for (int i = 0; i < PER_SEG; i++)
			if (write(fd, buf, CHUNK) != CHUNK) {
				perror("fresh_pages: write");
				rc = 1;
				break;
			}
		double c1 = cpu_s();
		if (rc == 0)
			printf("segment %d: %.0f MB per CPU-second\n", s,
			       (double)PER_SEG * CHUNK / 1e6 / (c1 - c0));
	}
	close(fd);
	unlink(path);
	free(buf);
	return rc;
}
