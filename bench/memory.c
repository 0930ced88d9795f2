/*
 * memory.c - the memory figures (docs/PERFORMANCE.md, "Memory"): what the
 * daemon and an attached producer keep resident, what the session's
 * shared-memory object holds (pages allocated, from SEEK_DATA/SEEK_HOLE),
 * at the start, after --runs runs of bursts (1 and 2 threads, --events
 * events each) and once the idle pool is trimmed (src/daemon/trim.c), and
 * what touching fresh pool pages costs.
 *
 *   build/bench/bench_memory [--runs N] [--events N] [--quick]
 *
 * --quick: 1 run (the test suite's); the wait for the trim stays (1 s).
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

#include "bench/loops.h"
#include "bench/session.h"
#include "procstat.h"
#include "prog.h"
#include "ringlog.h"
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

/* What a session costs in memory at one moment. */
struct bench_memory {
	uint64_t daemon_rss_kb, daemon_anon_kb; /* /proc/DAEMON/status */
	uint64_t daemon_shmem_kb;               /* of which the session's object (smaps) */
	uint64_t self_rss_kb, self_shmem_kb;    /* the same for this (attached) process */
	uint64_t object_kb;  /* pages the session's object has allocated */
	uint64_t pool_kb;    /* of which in the buffer space */
};

static void bench_memory_sample(const char *session, pid_t daemon, struct bench_memory *m)
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

static void bench_memory_print(const char *when, const struct bench_memory *m)
{
	printf("mem_%s_daemon_rss_kb: %" PRIu64 "\n", when, m->daemon_rss_kb);
	printf("mem_%s_daemon_anon_kb: %" PRIu64 "\n", when, m->daemon_anon_kb);
	printf("mem_%s_daemon_session_kb: %" PRIu64 "\n", when, m->daemon_shmem_kb);
	printf("mem_%s_producer_rss_kb: %" PRIu64 "\n", when, m->self_rss_kb);
	printf("mem_%s_producer_session_kb: %" PRIu64 "\n", when, m->self_shmem_kb);
	printf("mem_%s_object_kb: %" PRIu64 "\n", when, m->object_kb);
	printf("mem_%s_pool_kb: %" PRIu64 "\n", when, m->pool_kb);
}

/* First touch of bytes of fresh shared memory, one write per page: ns per
 * page; *retouch_ns gets the same writes once the pages are resident. */
static double bench_page_touch(size_t bytes, double *retouch_ns)
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

int main(int argc, char **argv)
{
	struct prog_opts o = { .runs = 11, .events = 250000 };
	prog_args(argc, argv, &o);
	prog_quick(&o, 1, 250000);
	struct rlog__region_params p;
	rlog__props_default(&p);
	struct bench_session s;
	struct bench_memory start, busy, idle;
	if (prog_session_open(&s, NULL, &p) < 0)
		return 1;
	pid_t daemon = s.started.daemon_pid;
	bench_memory_sample(s.name, daemon, &start);
	for (unsigned r = 0; r < o.runs; r++) {
		bench_write16(1, o.events, false);
		bench_settle();
		bench_write16(2, o.events, false);
		bench_settle();
	}
	/* After the bursts, and once the idle pool is trimmed (the
	 * daemon waits RLOG_TRIM_IDLE_MS, 1 s, after its last drained
	 * buffer). */
	bench_memory_sample(s.name, daemon, &busy);
	uint64_t t0 = bench_now_ns();
	for (int i = 0; i < 100; i++) {
		struct timespec ts = { 0, 50 * 1000000L };
		nanosleep(&ts, NULL);
		bench_memory_sample(s.name, daemon, &idle);
		if (idle.pool_kb == 0)
			break;
	}
	double trim_wait_ms = (double)(bench_now_ns() - t0) / 1e6, retouch_ns = 0;
	double touch_ns = bench_page_touch((size_t)p.buffer_size * p.max_buffers, &retouch_ns);
	prog_session_close(&s, NULL);
	bench_memory_print("start", &start);
	bench_memory_print("busy", &busy);
	bench_memory_print("idle", &idle);
	printf("mem_trim_wait_ms: %.0f\n", trim_wait_ms);
	printf("page_touch_ns: %.0f\n", touch_ns);
	printf("page_retouch_ns: %.1f\n", retouch_ns);
	printf("pool_first_touch_ms: %.2f\n",
	       touch_ns * ((double)p.buffer_size * p.max_buffers / 4096) / 1e6);
	printf("pool_first_touch_ns_per_event: %.2f\n",
	       touch_ns / (4096.0 / BENCH_RECORD_BYTES));
	return 0;
}
