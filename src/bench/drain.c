/*
 * drain.c - the daemon's cost per event against the producer's (drain.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/drain.h"
#include "bench/loops.h"
#include "ringlog.h"

/* From /proc/PID/stat (fields 14 and 15, after the command's
 * parenthesis), in clock ticks (10 ms here): < 0 if it cannot be read. */
static double stat_cpu_s(pid_t pid)
{
	char path[64], line[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	bool got = fgets(line, sizeof line, f) != NULL;
	fclose(f);
	char *p = got ? strrchr(line, ')') : NULL;
	unsigned long long ut, st;
	/* ") S ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime" */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
			 &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* The run time of each of pid's threads, in ns (the first field of
 * /proc/PID/task/TID/schedstat, with CONFIG_SCHEDSTATS): the ticks of
 * /proc/PID/stat are too coarse for a run of a few milliseconds of the
 * daemon's CPU.  < 0 if it cannot be read. */
static double schedstat_cpu_s(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *dir = opendir(path);
	if (!dir)
		return -1;
	double sum = 0;
	int tasks = 0;
	struct dirent *e;
	while ((e = readdir(dir)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char p2[128];
		unsigned long long ns;
		snprintf(p2, sizeof p2, "/proc/%d/task/%.20s/schedstat", (int)pid, e->d_name);
		FILE *f = fopen(p2, "r");
		if (!f)
			continue; /* the thread exited meanwhile */
		if (fscanf(f, "%llu", &ns) == 1) {
			sum += (double)ns / 1e9;
			tasks++;
		}
		fclose(f);
	}
	closedir(dir);
	return tasks ? sum : -1;
}

double bench_proc_cpu_s(pid_t pid)
{
	double s = schedstat_cpu_s(pid);
	return s >= 0 ? s : stat_cpu_s(pid);
}

/* A kernel thread that does a file's writes for it: a buffered file's
 * writeback (kworker, the "flush" threads of older kernels), the
 * journal's (jbd2), and the device's completions (ksoftirqd, irq/). */
static bool io_kthread(const char *comm)
{
	static const char *const names[] = { "kworker", "jbd2", "ksoftirqd", "irq/", "flush-" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strncmp(comm, names[i], strlen(names[i])) == 0)
			return true;
	return false;
}

double bench_kthreads_cpu_s(void)
{
	DIR *proc = opendir("/proc");
	if (!proc)
		return -1;
	double sum = 0;
	struct dirent *e;
	while ((e = readdir(proc)) != NULL) {
		char path[64], comm[64] = "";
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end != '\0' || pid <= 0)
			continue;
		snprintf(path, sizeof path, "/proc/%ld/comm", pid);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		bool got = fgets(comm, sizeof comm, f) != NULL;
		fclose(f);
		/* Kernel threads have one task each: its schedstat. */
		double s = got && io_kthread(comm) ? schedstat_cpu_s((pid_t)pid) : -1;
		if (s > 0)
			sum += s;
	}
	closedir(proc);
	return sum;
}

struct bench_paced bench_write_paced(double rate, unsigned ms, pid_t daemon)
{
	struct bench_paced res = { .achieved = rate };
	uint64_t total = (uint64_t)(rate * ms / 1000.0), lost = 0, v[2] = { 0, 0 };
	double cpu0 = bench_proc_cpu_s(daemon);
	uint64_t t0 = bench_now_ns();
	for (uint64_t i = 0; i < total;) {
		for (uint64_t k = 0; k < 1000 && i < total; k++, i++) {
			v[0] = i;
			lost += rlog_write(1024, v, sizeof v) < 0;
		}
		uint64_t due = t0 + (uint64_t)((double)i / rate * 1e9);
		while (bench_now_ns() < due)
			;
	}
	rlog_flush_thread();
	uint64_t t1 = bench_now_ns();
	if (t1 > t0)
		res.achieved = (double)total / ((double)(t1 - t0) / 1e9);
	/* The daemon drains what is left within its 10 ms poll. */
	struct timespec ts = { 0, 50 * 1000000L };
	nanosleep(&ts, NULL);
	double cpu1 = bench_proc_cpu_s(daemon);
	res.daemon_cpu_s = cpu0 >= 0 && cpu1 >= cpu0 ? cpu1 - cpu0 : -1;
	res.events = total;
	res.lost = lost;
	return res;
}

#define REF_CHUNK (1u << 20)
#define REF_MB 64 /* the reference file of each run */

static double thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* mb MiB in 1 MiB write(2)s into fd from its offset 0: MB/s, and MB per
 * second of this thread's CPU time in *cpu_mb_per_s (0 if a write fails). */
static double timed_writes(int fd, const char *buf, unsigned mb, double *cpu_mb_per_s)
{
	*cpu_mb_per_s = 0;
	if (lseek(fd, 0, SEEK_SET) != 0)
		return 0;
	double c0 = thread_cpu_s();
	uint64_t t0 = bench_now_ns();
	for (unsigned i = 0; i < mb; i++)
		if (write(fd, buf, REF_CHUNK) != (ssize_t)REF_CHUNK)
			return 0;
	uint64_t t1 = bench_now_ns();
	double c1 = thread_cpu_s(), bytes = (double)mb * REF_CHUNK;
	if (c1 > c0)
		*cpu_mb_per_s = bytes / (c1 - c0) / 1e6;
	return bytes / ((double)(t1 - t0) / 1e9) / 1e6;
}

double bench_ref_tmpfs_write(const char *path, unsigned mb, bool rewrite, double *cpu_mb_per_s)
{
	*cpu_mb_per_s = 0;
	char *buf = malloc(REF_CHUNK);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
	double mbs = 0;
	if (buf != NULL && fd >= 0) {
		memset(buf, 0x5a, REF_CHUNK);
		/* rewrite: the file's pages exist first, so the timed writes
		 * only copy (a disk's page cache in its steady state). */
		double unused;
		if (!rewrite || timed_writes(fd, buf, mb, &unused) > 0)
			mbs = timed_writes(fd, buf, mb, cpu_mb_per_s);
	}
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	free(buf);
	return mbs;
}

/* A paced run (bench_write_paced) counted in f: the daemon's CPU per
 * event, in ns; < 0 if unknown.  With kt, the I/O kernel threads' CPU
 * per event into *kt: the file system synced (syncfs(2) of dirfd) before
 * the run and after it, so that the run's bytes are written back within
 * it, and only they (the kernel threads serve the whole machine: what
 * else runs is counted too). */
static double paced_ns(struct bench_drain_figures *f, double rate, unsigned ms, pid_t daemon,
		       int dirfd, double *kt)
{
	double k0 = -1;
	if (kt) {
		syncfs(dirfd);
		k0 = bench_kthreads_cpu_s();
	}
	struct bench_paced pr = bench_write_paced(rate, ms, daemon);
	f->emitted += pr.events;
	f->lost += pr.lost;
	if (kt) {
		syncfs(dirfd);
		double k1 = bench_kthreads_cpu_s();
		*kt = k0 >= 0 && k1 >= k0 && pr.events ? (k1 - k0) * 1e9 / (double)pr.events : -1;
	}
	return pr.daemon_cpu_s >= 0 && pr.events ? pr.daemon_cpu_s * 1e9 / (double)pr.events : -1;
}

/* The reference's CPU time per event's bytes (BENCH_RECORD_BYTES), in ns:
 * write(2) of mb MiB into a new tmpfs file, or over one (rewrite). */
static double ref_ns(const char *path, unsigned mb, bool rewrite)
{
	double cpu_mb_per_s = 0;
	bench_ref_tmpfs_write(path, mb, rewrite, &cpu_mb_per_s);
	return cpu_mb_per_s > 0 ? BENCH_RECORD_BYTES / cpu_mb_per_s * 1e3 : 0;
}

/* Starts and attaches session s (tag, properties p), its file in dir. */
static int open_session(struct bench_session *s, const char *tag,
			const struct rlog__region_params *p, const char *dir)
{
	int err = bench_session_start_in(s, tag, p, dir);
	if (err == 0 && (err = rlog_attach(s->name)) < 0) {
		struct rlog__stop_result res;
		bench_session_stop(s, &res);
	}
	return err;
}

/* Detaches and stops s, adding its final counts to f. */
static int close_session(struct bench_session *s, struct bench_drain_figures *f)
{
	struct rlog__stop_result res;
	rlog_detach();
	int err = bench_session_stop(s, &res);
	f->written += res.stats.events_written;
	f->session_lost += res.stats.events_lost;
	return err;
}

int bench_drain_session(struct bench_session *s, const struct rlog__region_params *p,
			const char *dir, unsigned runs, uint64_t events, double rate, unsigned ms,
			unsigned circular_mb, struct bench_drain_figures *f)
{
	memset(f, 0, sizeof *f);
	f->rate = rate;
	double *w1 = calloc(runs, sizeof *w1), *dc = calloc(runs, sizeof *dc);
	double *cc = calloc(runs, sizeof *cc), *rw = calloc(runs, sizeof *rw);
	double *rr = calloc(runs, sizeof *rr), *kt = calloc(runs, sizeof *kt);
	char ref[4200];
	snprintf(ref, sizeof ref, "%s/ringlog-bench-ref-%d", dir, (int)getpid());
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	int err = dirfd < 0			       ? -errno
		  : w1 && dc && cc && rw && rr && kt ? open_session(s, NULL, p, dir)
						       : -ENOMEM;
	if (err < 0)
		goto out;
	pid_t daemon = s->started.daemon_pid;
	/* A first burst grows the pool from MinimumBuffers (docs/SESSIONS.md):
	 * the runs then measure the drain, not the growth. */
	struct bench_result br = bench_write16(1, events, false);
	f->emitted += events;
	f->lost += br.lost;
	bench_settle();
	for (unsigned r = 0; r < runs; r++) {
		br = bench_write16(1, events, false);
		w1[r] = br.ns;
		f->emitted += events;
		f->lost += br.lost;
		bench_settle();
		dc[r] = paced_ns(f, rate, ms, daemon, dirfd, &kt[r]);
		rw[r] = ref_ns(ref, REF_MB, false);
	}
	f->write_1t = bench_median(w1, (int)runs);
	f->drain_cpu_ns = bench_median(dc, (int)runs);
	f->kthreads_cpu_ns = bench_median(kt, (int)runs);
	f->ref_write_ns = bench_median(rw, (int)runs);
	err = close_session(s, f);
	if (err < 0 || circular_mb == 0)
		goto out;

	/* A circular file, preallocated: written over lap after lap, the
	 * kernel copies into pages that exist, as into a disk's page cache
	 * in its steady state, instead of allocating new ones. */
	struct rlog__region_params pc = *p;
	pc.log_file_mode = RLOG_MODE_CIRCULAR | RLOG_MODE_PREALLOCATE;
	pc.max_file_size = (uint64_t)circular_mb << 20;
	if ((err = open_session(s, "circ", &pc, dir)) < 0)
		goto out;
	daemon = s->started.daemon_pid;
	/* One lap and a fifth first: a preallocated tmpfs page is only
	 * reserved, and its first write costs what a new page's does. */
	uint64_t lap = ((uint64_t)circular_mb << 20) / BENCH_RECORD_BYTES * 6 / 5;
	paced_ns(f, rate, (unsigned)(lap * 1000 / (uint64_t)rate) + 1, daemon, dirfd, NULL);
	for (unsigned r = 0; r < runs; r++) {
		cc[r] = paced_ns(f, rate, ms, daemon, dirfd, NULL);
		rr[r] = ref_ns(ref, REF_MB, true);
	}
	f->circular_cpu_ns = bench_median(cc, (int)runs);
	f->ref_rewrite_ns = bench_median(rr, (int)runs);
	err = close_session(s, f);
out:
	if (dirfd >= 0)
		close(dirfd);
	free(kt);
	free(w1);
	free(dc);
	free(cc);
	free(rw);
	free(rr);
	return err;
}
