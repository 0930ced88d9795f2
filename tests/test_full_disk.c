/*
 * test_full_disk - the log file cannot take the data.
 *  (a) /dev/full: `ringlog start` fails with one line, and no session is
 *      left behind.
 *  (b) a daemon with RLIMIT_FSIZE = 256 KiB (set with prlimit once it
 *      runs; SIGXFSZ ignored, inherited through exec and fork) gets EFBIG after ~256 KiB of a
 *      ~1 MB session: the blocks the file could not take are counted
 *      (log_buffers_lost, events_lost), the file is cut back to whole
 *      blocks (no damage), and emitted = written + lost still holds.
 *  (c) a full tmpfs of 1 MiB under a circular file of 2 MiB that wraps
 *      while writes fail part way: the file still ends on a whole block,
 *      its size the file_bytes stop reports, and reads without damage.
 */
#include "harness.h"

#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "tap.h"

#define LIMIT (256u * 1024u)
#define EVENTS 45000u /* 24-byte records: 1.08 MB */
#define RECORD 24u

static void dev_full(void)
{
	const char *name = h_session("fdfull");
	char line[512], shm[128];
	struct h_run r;
	if (access("/dev/full", W_OK) != 0) {
		diag("no writable /dev/full: part (a) not run");
		return;
	}
	h_ringlog(&r, "start", name, "-o", "/dev/full", "--force", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.out, "");
	snprintf(line, sizeof line,
		 "ringlog: start: %s: writing the log file header: No space left on device\n", name);
	ASSERT_STREQ(r.err, line);
	h_ringlog(&r, "list", NULL);
	ASSERT_EQ(r.status, 0);
	ok(strstr(r.out, name) == NULL, "list does not show %s", name);
	snprintf(shm, sizeof shm, "/dev/shm/ringlog.%s", name);
	ok(access(shm, F_OK) != 0 && errno == ENOENT, "%s is gone", shm);
	h_ringlog(&r, "query", name, NULL);
	ASSERT_EQ(r.status, 1);
	snprintf(line, sizeof line, "ringlog: query: no session named '%s'\n", name);
	ASSERT_STREQ(r.err, line);
}

static void file_limit(void)
{
	const char *name = h_session("fdlim");
	char path[256], line[512];
	snprintf(path, sizeof path, "%s", h_path("fdlim"));

	/* The daemon inherits the ignored SIGXFSZ (through exec and fork).
	 * The limit is set on the daemon alone, after start: under it,
	 * `ringlog start` could not size the 16 MiB region (ftruncate of a
	 * shared-memory object is subject to RLIMIT_FSIZE too). */
	struct sigaction ign, oldsa;
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigaction(SIGXFSZ, &ign, &oldsa);
	struct h_run r;
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--buffer-size", "16", "--buffers", "1024", NULL);
	sigaction(SIGXFSZ, &oldsa, NULL);
	BAIL_IF(r.status != 0, "ringlog start failed: %s", r.err);
	pid_t daemon = (pid_t)h_kv(r.out, "daemon_pid");
	struct rlimit lim = { LIMIT, LIMIT };
	BAIL_IF(prlimit(daemon, RLIMIT_FSIZE, &lim, NULL) != 0, "prlimit: %s", strerror(errno));

	ASSERT_EQ(rlog_attach(name), 0);
	struct h_tally tl = { 0 };
	for (uint64_t i = 1; i <= EVENTS; i++) {
		uint64_t v[2] = { i, 0 };
		h_tally_add(&tl, rlog_write(1024, v, sizeof v));
	}
	uint64_t ones = tl.written, lost = tl.lost, other = tl.off + tl.other;
	/* 16 MiB of buffers: the producer itself loses nothing. */
	ASSERT_EQ_U64(ones, EVENTS);
	ASSERT_EQ_U64(lost, 0);
	ASSERT_EQ_U64(other, 0);

	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 1);
	snprintf(line, sizeof line, "ringlog: stop: %s: writing the log file: File too large\n", name);
	ASSERT_STREQ(r.err, line);
	uint64_t w = h_kv(r.out, "events_written"), l = h_kv(r.out, "events_lost");
	uint64_t fb = h_kv(r.out, "file_bytes");
	diag("events_written %" PRIu64 " events_lost %" PRIu64 " log_buffers_lost %" PRIu64
	     " file_bytes %" PRIu64, w, l, h_kv(r.out, "log_buffers_lost"), fb);
	ok(h_kv(r.out, "log_buffers_lost") > 0 && h_kv(r.out, "log_buffers_lost") != UINT64_MAX,
	   "log_buffers_lost > 0");
	ASSERT_EQ_U64(w + l, ones);
	ok(l > 0 && l != UINT64_MAX, "events lost to the file limit: %" PRIu64, l);
	ASSERT_EQ_U64(h_kv(r.out, "bytes_lost"), l * RECORD);
	ASSERT_EQ_U64(h_kv(r.out, "bytes_written"), w * RECORD);

	struct stat st;
	ASSERT_EQ(stat(path, &st), 0);
	ok((uint64_t)st.st_size <= LIMIT, "file size %lld <= 256 KiB", (long long)st.st_size);
	ASSERT_EQ_U64((uint64_t)st.st_size, fb);

	struct h_summary s;
	h_summarize(path, &s);
	ASSERT_EQ(s.open_err, 0);
	ASSERT_EQ_U64(s.damage, 0);
	ASSERT_EQ_U64(s.markers, 1);
	ASSERT_EQ_U64(s.events, w);
	ASSERT_EQ_U64(s.time_errors, 0);
	ASSERT_EQ((int)s.nthreads <= 2, 1); /* ours, and maybe the daemon's LOG_WRITE record */
	/* The file holds a prefix of the thread's events: 1..w, in order. */
	for (size_t i = 0; i < s.nthreads; i++)
		if (s.th[i].pid == (uint32_t)getpid()) {
			ASSERT_EQ_U64(s.th[i].order_errors, 0);
			ASSERT_EQ_U64(s.th[i].last_seq, w);
		}
	/* The daemon writes the loss record after the data, in a write of its
	 * own, so it fits where the data did not: the file itself says what it
	 * is missing, exactly. */
	ASSERT_EQ_U64(s.loss_by_cause[RLOG_LOSS_LOG_WRITE], l);
	diag("DATA_LOSS in the file: %" PRIu64 " records, %" PRIu64 " events", s.loss_records, s.loss_events);
	ASSERT_EQ_U64(s.loss_events, s.loss_by_cause[RLOG_LOSS_LOG_WRITE]);
	rlog_detach();
	unlink(path);
}

/* (c) A full file system, mounted for it (tmpfs of 1 MiB; root only),
 * under a circular file of 2 MiB: writes fail part way after wraps. */
static void circular_full(void)
{
	char dir[] = "/tmp/rlog-fdcirc-XXXXXX", path[64];
	BAIL_IF(mkdtemp(dir) == NULL, "mkdtemp");
	if (geteuid() != 0 || mount("none", dir, "tmpfs", 0, "size=1m") != 0) {
		diag("no tmpfs of 1 MiB could be mounted (%s): part (c) not run", strerror(errno));
		rmdir(dir);
		return;
	}
	snprintf(path, sizeof path, "%s/c.rlog", dir);
	const char *name = h_session("fdcirc");
	struct h_run r;
	h_ringlog(&r, "start", name, "-o", path, "--mode", "circular", "--max-file-size", "2",
		  "--buffer-size", "4", NULL);
	BAIL_IF(r.status != 0, "ringlog start failed: %s", r.err);
	ASSERT_EQ(rlog_attach(name), 0);
	struct h_tally tl = { 0 };
	for (uint64_t i = 1; i <= 400000; i++) {
		uint64_t v[2] = { i, 0 };
		h_tally_add(&tl, rlog_write(1024, v, sizeof v));
		for (volatile int k = 0; k < 50; k++)
			;
	}
	rlog_detach();
	h_ringlog(&r, "stop", name, NULL);
	uint64_t w = h_kv(r.out, "events_written"), l = h_kv(r.out, "events_lost");
	uint64_t fb = h_kv(r.out, "file_bytes");
	ASSERT_EQ_U64(w + l, tl.written + tl.lost);
	struct stat st;
	ASSERT_EQ(stat(path, &st), 0);
	ok((uint64_t)st.st_size == fb, "circular, disk full: the file's size %lld is file_bytes %llu",
	   (long long)st.st_size, (unsigned long long)fb);
	struct h_summary s;
	h_summarize(path, &s);
	ok(s.open_err == 0 && s.damage == 0, "circular, disk full: the file reads without damage "
	   "(%zu)", s.damage);
	unlink(path);
	umount(dir);
	rmdir(dir);
}

int main(void)
{
	dev_full();
	file_limit();
	circular_full();
	return done_testing();
}
