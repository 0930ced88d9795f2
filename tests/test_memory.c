/*
 * test_memory - an idle session gives its pool's pages back (docs/FORMAT.md,
 * "Trimming an idle pool"; src/daemon/trim.c).  Page counts, not times:
 *
 *   1. A new session with the default pool (16 KiB buffers, 32 growing to
 *      1024) has no page of its buffer space allocated in its
 *      shared-memory object (SEEK_DATA/SEEK_HOLE on the object).
 *   2. After writes that take every buffer of the grown pool at least
 *      once, exactly 1024 x 4 pages of it are allocated.
 *   3. Once the producer has handed its buffer over and the pool is idle,
 *      none is: the daemon removed them.  The daemon's and this (still
 *      attached) process's resident shared memory (RssShmem) are then
 *      within the region's metadata pages.
 *   4. Writes after the trim land whole: two threads write bursts with
 *      pauses around the idle time, so that trims and buffer takes meet;
 *      every event is read back in order, exact counts, no corrupt buffer.
 */
#include "harness.h"

#include <pthread.h>

#include "procstat.h"
#include "shm_pages.h"
#include "tap.h"

#define PAGE SHM_PAGE

struct geometry {
	uint64_t buffers_offset, region_size;
	uint32_t buffer_size, daemon_pid;
};

static bool read_geometry(int fd, struct geometry *g)
{
	struct rlog_shm_header h;
	if (pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h)
		return false;
	g->buffers_offset = h.buffers_offset;
	g->region_size = h.region_size;
	g->buffer_size = h.buffer_size;
	g->daemon_pid = h.daemon_pid;
	return true;
}

/* Waits (at most 30 s) until the pool has no allocated page. */
static uint64_t wait_for_trim(int fd, const struct geometry *g)
{
	uint64_t n = 0;
	for (int i = 0; i < 300; i++) {
		n = shm_pages_allocated(fd, g->buffers_offset, g->region_size);
		if (n == 0)
			break;
		proc_sleep_ms(100);
	}
	return n;
}

struct burster {
	struct h_tally tally;
	unsigned pause_ms;
};

/* Bursts of 3000 events (a few buffers), each after a pause near the
 * daemon's idle time: some land while it trims. */
static void *bursts(void *arg)
{
	struct burster *b = arg;
	uint64_t seq = 0;
	for (int round = 0; round < 4; round++) {
		for (int k = 0; k < 3000; k++) {
			uint64_t p[2] = { ++seq, 0 };
			h_tally_add(&b->tally, rlog_write(1024, p, sizeof p));
		}
		rlog_flush_thread();
		proc_sleep_ms(b->pause_ms + (unsigned)round * 40);
	}
	return NULL;
}

int main(void)
{
	const char *name = h_session("mem");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("mem"));
	h_start(name, path, NULL, NULL);
	int fd = shm_pages_open(name);
	ok(fd >= 0, "the session's shared-memory object opens");
	struct geometry g = { 0, 0, 0, 0 };
	ASSERT_EQ(read_geometry(fd, &g), true);
	ASSERT_EQ(g.buffer_size, 16384);
	uint64_t meta_pages = g.buffers_offset / PAGE;
	diag("region %" PRIu64 " bytes, metadata %" PRIu64 " pages", g.region_size, meta_pages);
	ASSERT_EQ_U64(shm_pages_allocated(fd, g.buffers_offset, g.region_size), 0);

	ASSERT_EQ(rlog_attach(name), 0);
	/* 1.5 M events of 24 bytes, paced so that the daemon keeps up: about
	 * 2200 buffers taken, round robin over the pool grown to 1024. */
	struct h_tally t = { 0 };
	uint64_t seq = 0;
	for (int chunk = 0; chunk < 30; chunk++) {
		for (int k = 0; k < 50000; k++) {
			uint64_t p[2] = { ++seq, 0 };
			h_tally_add(&t, rlog_write(1024, p, sizeof p));
		}
		proc_sleep_ms(5);
	}
	rlog_flush_thread();
	proc_sleep_ms(100); /* less than the idle time: drained, not trimmed */
	uint64_t busy = shm_pages_allocated(fd, g.buffers_offset, g.region_size);
	diag("after the writes: %" PRIu64 " pages of the pool allocated, %" PRIu64 " events lost",
	     busy, t.lost);
	ASSERT_EQ_U64(busy, 1024u * 16384 / PAGE);

	uint64_t idle = wait_for_trim(fd, &g);
	ASSERT_EQ_U64(idle, 0);
	uint64_t meta_kb = meta_pages * PAGE / 1024;
	uint64_t daemon_kb = rlog__proc_status_kb((pid_t)g.daemon_pid, "RssShmem");
	uint64_t self_kb = rlog__proc_status_kb(getpid(), "RssShmem");
	diag("idle: daemon RssShmem %" PRIu64 " kB, producer RssShmem %" PRIu64
	     " kB, metadata %" PRIu64 " kB", daemon_kb, self_kb, meta_kb);
	ok(daemon_kb <= meta_kb, "the idle daemon maps no more than the metadata (%" PRIu64
				 " <= %" PRIu64 " kB)", daemon_kb, meta_kb);
	/* The producer also maps the wake registry (one page). */
	ok(self_kb <= meta_kb + 4, "the idle producer maps no more than the metadata and the "
				   "wake registry (%" PRIu64 " <= %" PRIu64 " kB)",
	   self_kb, meta_kb + 4);

	/* Writes after trims, racing with them. */
	pthread_t th[2];
	struct burster b[2] = { { .pause_ms = 950 }, { .pause_ms = 1010 } };
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(pthread_create(&th[i], NULL, bursts, &b[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	uint64_t written = t.written + b[0].tally.written + b[1].tally.written;
	uint64_t lost = t.lost + b[0].tally.lost + b[1].tally.lost;
	ASSERT_EQ_U64(b[0].tally.lost + b[1].tally.lost, 0);
	rlog_detach();

	struct h_run r;
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	h_check_identity(&r, path, written, lost);
	struct h_summary s;
	h_summarize(path, &s);
	uint64_t order_errors = 0;
	for (size_t i = 0; i < s.nthreads; i++)
		order_errors += s.th[i].order_errors;
	ASSERT_EQ_U64(order_errors, 0);
	close(fd);
	unlink(path);
	return done_testing();
}
