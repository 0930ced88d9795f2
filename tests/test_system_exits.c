/*
 * test_system_exits - process-counters' exit records (docs/FORMAT.md,
 * "Process counters") through the daemon, while `update` reopens the
 * engine again and again without a gap (docs/SESSIONS.md, "System
 * events").  A thread forks short-lived children (each _exit()s at once)
 * while the selection goes between process-counters and
 * process-counters,disk-io EXIT_UPDATES times.  Then:
 *
 *   - each child's exit record (kind 1) is in the file at most once (two
 *     engines listening to taskstats at once both got the exits of the
 *     overlap), and at least once unless the kernel lost some (sys_lost);
 *   - the file's system events (IDs 64..127) are exactly sys_written +
 *     sys_rundown_written (the exit records are in sys_written), and
 *     sys_handed_over = sys_written + sys_lost + sys_filtered.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "sys_stats.h"
#include "ringlog/reader.h"
#include "tap.h"

#define EXIT_UPDATES 12
#define MAX_CHILDREN 3000
#define PCOUNTERS_ID 76

static atomic_bool quit;
static pid_t kids[MAX_CHILDREN];
static atomic_int nkids;

static void *forker(void *arg)
{
	(void)arg;
	while (!atomic_load(&quit) && atomic_load(&nkids) < MAX_CHILDREN) {
		pid_t p = fork();
		if (p == 0)
			_exit(0);
		if (p < 0)
			break;
		waitpid(p, NULL, 0);
		kids[atomic_load(&nkids)] = p;
		atomic_fetch_add(&nkids, 1);
		if (atomic_load(&nkids) % 16 == 0) {
			struct timespec ts = { 0, 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return x < y ? -1 : x > y;
}

int main(void)
{
	h_sys_require();
	char path[256];
	const char *name = h_sys_session("sysexits", path, sizeof path);
	struct h_run r;
	h_ringlog(&r, "start", name, "-o", path, "--system", "process-counters", NULL);
	BAIL_IF(r.status != 0, "start --system: %s", r.err);
	pthread_t t;
	BAIL_IF(pthread_create(&t, NULL, forker, NULL) != 0, "pthread_create");
	for (int i = 0; i < EXIT_UPDATES; i++) {
		h_msleep(30);
		h_sys_update(name, i % 2 == 0 ? "process-counters,disk-io" : "process-counters");
	}
	h_msleep(30);
	atomic_store(&quit, true);
	pthread_join(t, NULL);
	/* The last exits read by the daemon (within a poll) before stop. */
	h_msleep(50);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	struct h_sys st = h_sys_stats(&r);
	uint64_t rw = h_kv(r.out, "sys_rundown_written");
	int n = atomic_load(&nkids);
	qsort(kids, (size_t)n, sizeof *kids, pid_cmp);
	int *seen = calloc((size_t)n + 1, sizeof *seen);
	BAIL_IF(seen == NULL, "calloc");

	struct rlog_reader *rd;
	struct rlog_event ev;
	int rc;
	uint64_t sys = 0, exits = 0;
	BAIL_IF(rlog_reader_open(path, &rd) < 0, "open %s", path);
	while ((rc = rlog_reader_next(rd, &ev)) > 0) {
		if (!ev.from_daemon || ev.id < 64 || ev.id > 127)
			continue;
		sys++;
		uint32_t pid, kind;
		if (ev.id != PCOUNTERS_ID || ev.length < 12)
			continue;
		memcpy(&pid, ev.payload, 4);
		memcpy(&kind, (const uint8_t *)ev.payload + 8, 4);
		if (kind != 1)
			continue;
		exits++;
		pid_t key = (pid_t)pid;
		pid_t *k = bsearch(&key, kids, (size_t)n, sizeof *kids, pid_cmp);
		if (k)
			seen[k - kids]++;
	}
	ASSERT_EQ(rc, 0);
	rlog_reader_close(rd);
	int twice = 0, missing = 0;
	for (int i = 0; i < n; i++) {
		twice += seen[i] > 1;
		missing += seen[i] == 0;
		if (seen[i] > 1 && twice <= 5)
			diag("child %d: %d exit records", (int)kids[i], seen[i]);
	}
	diag("%d children, %d updates: exit records of the machine %llu, children twice %d, "
	     "missing %d; system events in the file %llu, sys_written %llu + "
	     "sys_rundown_written %llu",
	     n, EXIT_UPDATES, (unsigned long long)exits, twice, missing, (unsigned long long)sys,
	     (unsigned long long)st.written, (unsigned long long)rw);
	if (exits == 0) {
		free(seen);
		unlink(path);
		skip_all("no exit records: no taskstats here (CONFIG_TASKSTATS, CAP_NET_ADMIN)");
	}
	ok(n >= 100, "the children ran (%d)", n);
	ASSERT_EQ(twice, 0);
	ok((uint64_t)missing <= st.lost, "every child's exit is there (%d missing) but for the "
	   "kernel's losses (%llu)", missing, (unsigned long long)st.lost);
	ASSERT_EQ_U64(sys, st.written + rw);
	free(seen);
	unlink(path);
	return done_testing();
}
