/*
 * test_sane.c - the invariant checkers of the daemon and the reader
 * (docs/CONTRIBUTING.md, "Invariant checkers and asserts") say true of a
 * good state and false of each kind of broken one, and in a build with
 * asserts a broken state trips the assert at its transition (the process
 * dies of SIGABRT) instead of reaching a file or a caller:
 *
 *   rlog__logfile_sane (src/format/logfile.h): the blocks staged for the
 *     daemon's next write, asserted when a flush starts and ends;
 *   rlog__regions_sane (src/reader/internal.h): the reader's list of the
 *     regions it steps over, asserted when one is added and at the end of
 *     the open pass.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "format/logfile.h"
#include "filegen.h"
#include "reader/internal.h"
#include "ringlog/reader.h"
#include "tap.h"

#ifndef NDEBUG
/* Runs fn(arg) in a child with stderr closed; returns the signal that
 * ended it, or 0 if it exited. */
static int child_signal(void (*fn)(void *), void *arg)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0)
			dup2(devnull, 2);
		fn(arg);
		_exit(0);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFSIGNALED(st) ? WTERMSIG(st) : 0;
}

static void flush_it(void *lf)
{
	rlog__logfile_flush(lf);
}
#endif

static void logfile_checks(void)
{
	char path[] = "/tmp/rlog-sane-XXXXXX";
	int fd = mkstemp(path);
	BAIL_IF(fd < 0, "mkstemp");
	unlink(path);
	struct rlog_log_marker m;
	memset(&m, 0, sizeof m);
	m.tick_freq_hz = 1000000000u;
	m.tick_source = RLOG_TICK_MONOTONIC;
	struct rlog__logfile lf;
	BAIL_IF(rlog__logfile_open(&lf, fd, 4096, &m, 1, 2) < 0, "rlog__logfile_open");
	ok(rlog__logfile_sane(&lf), "logfile: sane after open (nothing staged)");

	uint32_t data[8] = { 0 };
	ASSERT_EQ(rlog__logfile_block(&lf, 0, 10, 11, 0, data, sizeof data, 0, 0, 0), 0);
	ASSERT_EQ(rlog__logfile_block_ref(&lf, 0, 10, 11, 0, data, 16, 0, 0, 0), 0);
	ASSERT_EQ(lf.nstaged, 2);
	ASSERT_EQ(lf.used, 48 + 32 + 48 + 16);
	ok(rlog__logfile_sane(&lf), "logfile: sane with two blocks staged (one copied, one referenced)");

	/* Each field broken alone, then put back. */
	lf.staged[1].end += 4;
	ok(!rlog__logfile_sane(&lf), "logfile: the last block's end past the bytes staged");
	lf.staged[1].end -= 4;
	uint32_t end0 = lf.staged[0].end;
	lf.staged[0].end = 40;
	ok(!rlog__logfile_sane(&lf), "logfile: a block shorter than its header");
	lf.staged[0].end = end0;
	lf.iov[0].iov_len -= 4;
	ok(!rlog__logfile_sane(&lf), "logfile: the pieces to write 4 bytes short of the blocks");
	lf.iov[0].iov_len += 4;
	size_t n = lf.nstaged;
	lf.nstaged = lf.staged_cap + 1;
	ok(!rlog__logfile_sane(&lf), "logfile: more blocks staged than their array holds");
	lf.nstaged = n;
	lf.stage_used = lf.used + 1;
	ok(!rlog__logfile_sane(&lf), "logfile: more bytes copied than staged");
	lf.stage_used = 48 + 32 + 48;
	ok(rlog__logfile_sane(&lf), "logfile: sane again once put back");

#ifdef NDEBUG
	ok(1, "asserts are off (NDEBUG): no abort to check");
#else
	lf.staged[1].end += 4;
	ASSERT_EQ(child_signal(flush_it, &lf), SIGABRT);
	lf.staged[1].end -= 4;
#endif
	/* The state put back writes as it should. */
	ASSERT_EQ(rlog__logfile_flush(&lf), 0);
	ASSERT_EQ(lf.buffers_written, 2);
	ok(rlog__logfile_sane(&lf), "logfile: sane after the flush");
	rlog__logfile_close(&lf);
}

#ifndef NDEBUG
struct add_arg {
	struct rlog_reader *r;
	uint64_t offset, length;
};

static void add_it(void *p)
{
	struct add_arg *a = p;
	rlog__region_add(a->r, a->offset, a->length, RLOG_DAMAGE_BLOCK);
}
#endif

static void reader_checks(void)
{
	/* A file with two damaged places: 100 bytes of garbage between
	 * blocks, and 64 at the end. */
	struct fg_file f;
	struct fg_block b;
	fg_file_init_marker(&f, 1000000000u, 1000, 0, RLOG_TICK_MONOTONIC, 4096, 8, "sane");
	uint64_t t = 1000;
	size_t gb = 0;
	for (int i = 0; i < 3; i++) {
		if (i == 1)
			gb = fg_garbage(&f, 100, 0x5a);
		fg_block_begin(&b, 10, 11, t, 0);
		for (int e = 0; e < 4; e++) {
			t += 10;
			fg_event(&b, 3000, -1, true, (uint32_t)t, &e, 4);
		}
		fg_block_end(&f, &b);
	}
	size_t gz = fg_garbage(&f, 64, 0);
	struct rlog_reader *r = NULL;
	BAIL_IF(rlog_reader_open_mem(f.b.p, f.b.len, &r) < 0, "rlog_reader_open_mem");
	ASSERT_EQ(r->nregions, 2);
	ASSERT_EQ_U64(r->regions[0].offset, gb);
	ASSERT_EQ_U64(r->regions[1].offset, gz);
	ok(rlog__regions_sane(r, 0), "regions: sane after the open pass");

	struct rlog__region keep = r->regions[1];
	r->regions[1].length = 0;
	ok(!rlog__regions_sane(r, 0), "regions: an empty region");
	r->regions[1] = keep;
	r->regions[1].length = 65;
	ok(!rlog__regions_sane(r, 0), "regions: a region past the end of the file");
	r->regions[1] = keep;
	r->regions[1].offset = gb + 50;
	ok(!rlog__regions_sane(r, 1), "regions: a region inside the one before");
	ok(rlog__regions_sane(r, 2), "regions: the checker looks only from index from on");
	r->regions[1] = keep;
	ok(rlog__regions_sane(r, 0), "regions: sane again once put back");

#ifdef NDEBUG
	ok(1, "asserts are off (NDEBUG): no abort to check");
#else
	/* A region added before the end of the last one (a walk gone
	 * backwards) trips the assert in rlog__region_add. */
	struct add_arg a = { r, gb, 10 };
	ASSERT_EQ(child_signal(add_it, &a), SIGABRT);
#endif
	rlog_reader_close(r);
	fg_file_free(&f);
}

int main(void)
{
	logfile_checks();
	reader_checks();
	return done_testing();
}
