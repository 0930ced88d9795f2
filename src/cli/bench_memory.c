/*
 * bench_memory.c - the memory figures of `ringlog bench --memory`: what
 * the daemon and an attached producer keep resident, what the session's
 * shared-memory object holds (pages allocated, from SEEK_DATA/SEEK_HOLE),
 * before and after a burst and once the idle pool is trimmed
 * (src/daemon/trim.c), and what touching fresh pool pages costs.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "procstat.h"
#include "shm.h"

#define PAGE 4096u

/* kB of process pid's mappings of the object whose /dev/shm path ends
 * with shm (its Rss lines in /proc/PID/smaps): the session's share of the
 * process's memory, whatever else it maps (the bench's single ring). */
static uint64_t mapping_kb(pid_t pid, const char *shm)
{
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/%d/smaps", (int)pid);
	FILE *f = fopen(path, "r");
	uint64_t kb = 0;
	bool in = false;
	size_t sl = strlen(shm);
	while (f && fgets(line, sizeof line, f)) {
		size_t n = strcspn(line, "\n");
		line[n] = '\0';
		if (strchr(line, '-') && strchr(line, '-') < strchr(line, ' ')) /* a mapping's line */
			in = n >= sl && strcmp(line + n - sl, shm) == 0;
		else if (in && strncmp(line, "Rss:", 4) == 0)
			kb += strtoull(line + 4, NULL, 10);
	}
	if (f)
		fclose(f);
	return kb;
}

void bench_memory_sample(const char *session, pid_t daemon, struct bench_memory *m)
{
	memset(m, 0, sizeof *m);
	m->daemon_rss_kb = rlog__proc_status_kb(daemon, "VmRSS");
	m->daemon_anon_kb = rlog__proc_status_kb(daemon, "RssAnon");
	m->self_rss_kb = rlog__proc_status_kb(getpid(), "VmRSS");
	char shm[128];
	int fd = rlog__shm_name(session, shm, sizeof shm) < 0 ? -1 : shm_open(shm, O_RDONLY, 0);
	if (fd >= 0) {
		m->daemon_shmem_kb = mapping_kb(daemon, shm);
		m->self_shmem_kb = mapping_kb(getpid(), shm);
	}
	struct rlog_shm_header h;
	if (fd >= 0 && pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h) {
		m->object_kb = rlog__shm_allocated(fd, 0, h.region_size) / 1024;
		m->pool_kb = rlog__shm_allocated(fd, h.buffers_offset, h.region_size) / 1024;
	}
	if (fd >= 0)
		close(fd);
}

void bench_memory_print(const char *when, const struct bench_memory *m)
{
	printf("mem_%s_daemon_rss_kb: %" PRIu64 "\n", when, m->daemon_rss_kb);
	printf("mem_%s_daemon_anon_kb: %" PRIu64 "\n", when, m->daemon_anon_kb);
	printf("mem_%s_daemon_session_kb: %" PRIu64 "\n", when, m->daemon_shmem_kb);
	printf("mem_%s_producer_rss_kb: %" PRIu64 "\n", when, m->self_rss_kb);
	printf("mem_%s_producer_session_kb: %" PRIu64 "\n", when, m->self_shmem_kb);
	printf("mem_%s_object_kb: %" PRIu64 "\n", when, m->object_kb);
	printf("mem_%s_pool_kb: %" PRIu64 "\n", when, m->pool_kb);
}

double bench_page_touch(size_t bytes, double *retouch_ns)
{
	char name[64];
	snprintf(name, sizeof name, "/ringlog-bench-touch-%d", (int)getpid());
	int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return 0;
	shm_unlink(name);
	void *p = MAP_FAILED;
	if (ftruncate(fd, (off_t)bytes) == 0)
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return 0;
	volatile uint8_t *b = p;
	/* First touch: a fault and a zeroed page each. */
	uint64_t t0 = bench_now_ns();
	for (size_t i = 0; i < bytes; i += PAGE)
		b[i] = 1;
	uint64_t t1 = bench_now_ns();
	/* The same pages again: resident now. */
	for (size_t i = 0; i < bytes; i += PAGE)
		b[i] = 2;
	uint64_t t2 = bench_now_ns();
	munmap(p, bytes);
	*retouch_ns = (double)(t2 - t1) / (double)(bytes / PAGE);
	return (double)(t1 - t0) / (double)(bytes / PAGE);
}
