/*
 * test_system_wake - the daemon reads the kernel's rings when they fill,
 * not only at its poll (src/daemon/system_ctl.h: the reader thread, woken
 * by each ring's wakeup_watermark, a quarter of it).  The test hook
 * RINGLOG_TEST_SYS_POLL_MS makes the reader's timeout a minute, so that
 * only the watermark can wake it; then a burst of system calls about
 * twice as large as a CPU's ring (4 MiB) is written whole: numbered
 * calls, getpgid(BASE + i) (arg0 is the number; no such process, so each
 * returns at once), each one's sys_enter in the file exactly once, none
 * lost, and the identity handed_over = written + lost + filtered exact,
 * the file agreeing with `ringlog stop`.  Needs root and tracefs.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "sys_stats.h"
#include "ringlog/reader.h"
#include "tap.h"

/* 50,000 calls of 184 bytes in the kernel's ring (sys_enter 112, sys_exit
 * 72): 9.2 MB, 2.2 rings, in chunks with a pause after each (the
 * reader's time to convert under a sanitizer), none read but for the
 * watermark's wake-ups. */
#define CALLS 50000
#define CHUNK 500
#define BASE 0x3f000000L

static uint32_t burst_tid;

static void *burst(void *arg)
{
	(void)arg;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	pthread_setaffinity_np(pthread_self(), sizeof set, &set);
	burst_tid = (uint32_t)syscall(SYS_gettid);
	for (long i = 0; i < CALLS; i++) {
		syscall(SYS_getpgid, BASE + i);
		if ((i + 1) % CHUNK == 0) {
			struct timespec ts = { 0, 3 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

int main(void)
{
	h_sys_require();
	/* Inherited by the daemon `ringlog start` starts. */
	setenv("RINGLOG_TEST_SYS_POLL_MS", "60000", 1);
	const char *name = h_session("syswake");
	const char *path = h_path("syswake");
	char pid[32];
	snprintf(pid, sizeof pid, "%d", (int)getpid());
	struct h_run r;
	h_ringlog(&r, "start", name, "-o", path, "--system", "syscall", "--system-pid", pid, NULL);
	BAIL_IF(r.status != 0, "start --system syscall: %s", r.err);
	pthread_t t;
	pthread_create(&t, NULL, burst, NULL);
	pthread_join(t, NULL);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	uint64_t sw = h_kv(r.out, "sys_written"), sl = h_kv(r.out, "sys_lost"),
		 sf = h_kv(r.out, "sys_filtered"), sh = h_kv(r.out, "sys_handed_over");
	diag("stop: sys_written %llu sys_lost %llu sys_filtered %llu sys_handed_over %llu",
	     (unsigned long long)sw, (unsigned long long)sl, (unsigned long long)sf,
	     (unsigned long long)sh);
	ASSERT_EQ_U64(sh, sw + sl + sf);

	/* The file: each numbered call's sys_enter once; the kernel's
	 * records and DATA_LOSS counts as `stop` says. */
	static uint8_t seen[CALLS];
	uint64_t sys = 0, lost = 0, extra = 0;
	struct rlog_reader *rd;
	BAIL_IF(rlog_reader_open(path, &rd) < 0, "cannot open %s", path);
	struct rlog_event ev;
	int rc;
	while ((rc = rlog_reader_next(rd, &ev)) > 0) {
		if (ev.from_daemon && ev.id == RLOG_ID_DATA_LOSS) {
			struct rlog_loss l;
			if (rlog_event_loss(&ev, &l) == 0 && l.cause == RLOG_LOSS_KERNEL)
				lost += l.events;
			continue;
		}
		/* The rundown's records (their own tid) are not the kernel's. */
		if (!ev.from_daemon || ev.id < 64 || ev.id > 127 || ev.tid == 0xffffffffu)
			continue;
		sys++;
		const struct rlog_schema *s = rlog_reader_schema(rd, &ev);
		if (ev.id != 80 || s == NULL || strcmp(s->name, "sys_enter") != 0)
			continue;
		/* pid, tid, id, name (u16 length, bytes), arg0 */
		const uint8_t *p = ev.payload;
		uint32_t tid;
		int64_t id;
		uint16_t len;
		memcpy(&tid, p + 4, 4);
		memcpy(&id, p + 8, 8);
		memcpy(&len, p + 16, 2);
		if (tid != burst_tid || id != SYS_getpgid || 18u + len + 8u > ev.length)
			continue;
		int64_t a0;
		memcpy(&a0, p + 18 + len, 8);
		if (a0 >= BASE && a0 < BASE + CALLS && seen[a0 - BASE] == 0)
			seen[a0 - BASE] = 1;
		else
			extra++;
	}
	ASSERT_EQ(rc, 0);
	rlog_reader_close(rd);
	int found = 0;
	for (int i = 0; i < CALLS; i++)
		found += seen[i];
	diag("file: %llu kernel records, %llu lost in DATA_LOSS, %d of %d calls", (unsigned long long)sys,
	     (unsigned long long)lost, found, CALLS);
	ASSERT_EQ_U64(sys, sw);
	ASSERT_EQ_U64(lost, sl);
	ASSERT_EQ_U64(extra, 0);
	/* Twice a ring, the reader woken only by the watermark: nothing
	 * lost, every call there.  Under ThreadSanitizer (GCC defines
	 * __SANITIZE_THREAD__) the reader runs several times slower and the
	 * kernel may overrun a ring before it is read: the losses are then
	 * counted exactly (checked above), and these two are TODO points. */
#ifdef __SANITIZE_THREAD__
	const char *why = sl > 0 ? "under TSan the reader is too slow for the rings (counted)" : NULL;
#else
	const char *why = NULL;
#endif
	if (why) {
		todo_ok(sl == 0, why, "nothing lost (%llu)", (unsigned long long)sl);
		todo_ok(found == CALLS, why, "every call there (%d of %d)", found, CALLS);
	} else {
		ASSERT_EQ_U64(sl, 0);
		ASSERT_EQ(found, CALLS);
	}
	unlink(path);
	return done_testing();
}
