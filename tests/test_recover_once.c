/*
 * test_recover_once - a session whose daemon died, recovered, holds every
 * event once and says so in its statistics (docs/SESSIONS.md, "Orphans"),
 * with numbered events (tests/numbered.h) from four threads:
 *
 *   1. the daemon dies in the middle of a write (RINGLOG_TEST_DIE_IN_WRITE,
 *      src/format/logfile.c), leaving half a block at the end of the file;
 *      `ringlog recover NAME -o F2`: the records the session's file keeps
 *      of that block are not in F2 again, F2 starts where the file ends;
 *      across both, no event twice, none extra, none missing, and the
 *      statistics are what the two files hold;
 *   2. the same, then `ringlog stop --force`: the half block is cut off
 *      and written again whole; the statistics are the file's;
 *   3. the daemon dies in a write, `start --resume`, the new daemon dies in
 *      a write too, `start --resume` again, `stop`: the statistics are the
 *      file's, every event once;
 *   4. a flight recorder: a `snapshot --since-last`, the daemon killed,
 *      `recover -o F2`: the snapshot and F2 hold every event or count it
 *      lost exactly once, and emitted = written + lost exactly; also with
 *      a thread gone before the snapshot and one gone after it (its
 *      losses, which no snapshot reported, are F2's: the journal's
 *      ledger, src/daemon/journal.c);
 *   5. the same flight recorder, then `stop --force`, or `start --resume`,
 *      another snapshot and `stop`, or `--resume`, a snapshot, killed
 *      again and `recover -o`: emitted = written + lost exactly.
 */
#include "harness.h"
#include "numbered.h"

#include <pthread.h>

#define WRITERS 4
#define CAP (1u << 22)

static struct h_run r;
static struct num_set *set;
static _Atomic bool stop_writers;
static _Atomic bool stop_one[WRITERS];

/* Writes until told to stop, about a million events a second in all: the
 * pool fills quickly without a daemon. */
static void *writer_main(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg;
	while (!atomic_load(&stop_writers) && !atomic_load(&stop_one[w]) &&
	       set->w[w].seq + 2 < CAP) {
		num_write(set, w);
		if ((set->w[w].seq & 255) == 0)
			proc_sleep_ms(1);
	}
	return NULL;
}

static pthread_t th[WRITERS];

static void writers_start(void)
{
	set = num_new(WRITERS, CAP);
	atomic_store(&stop_writers, false);
	for (unsigned i = 0; i < WRITERS; i++)
		atomic_store(&stop_one[i], false);
	for (unsigned i = 0; i < WRITERS; i++)
		BAIL_IF(pthread_create(&th[i], NULL, writer_main, (void *)(uintptr_t)i) != 0,
			"pthread_create");
}

static void writers_stop(void)
{
	atomic_store(&stop_writers, true);
	for (unsigned i = 0; i < WRITERS; i++)
		if (!atomic_load(&stop_one[i]))
			pthread_join(th[i], NULL);
	ASSERT_EQ_U64(num_written(set) + num_lost(set), num_attempts(set));
}

/* Waits until session name is orphaned (its daemon died). */
static void wait_orphaned(const char *name)
{
	bool orphaned = false;
	for (int i = 0; i < 1000 && !orphaned; i++) {
		h_ringlog(&r, "query", name, NULL);
		orphaned = strstr(r.out, "state: orphaned\n") != NULL;
		if (!orphaned)
			proc_sleep_ms(10);
	}
	ok(orphaned, "%s: the daemon died in its write", name);
}

/* Starts a session (tagged tag, its file's path in path) with a daemon
 * that dies in its third write of events, and writers; returns its name
 * once the daemon died. */
static const char *start_and_die(const char *tag, char *path, size_t n)
{
	const char *name = h_session(tag);
	snprintf(path, n, "%s", h_path(tag));
	unlink(path);
	setenv("RINGLOG_TEST_DIE_IN_WRITE", "3", 1);
	h_ringlog(&r, "start", name, "-o", path, "--buffer-size", "4", "--buffers", "32", NULL);
	unsetenv("RINGLOG_TEST_DIE_IN_WRITE");
	BAIL_IF(r.status != 0, "ringlog start");
	ASSERT_EQ(rlog_attach(name), 0);
	writers_start();
	wait_orphaned(name);
	return name;
}

/* The statistics' bytes are the files' (their events' and DATA_LOSS
 * records' bytes). */
static void check_bytes(const char *const *paths, size_t n)
{
	uint64_t bytes = 0, lost = 0;
	for (size_t i = 0; i < n; i++) {
		struct rlog_reader *rd;
		struct rlog_count c;
		ASSERT_EQ(rlog_reader_open_count(paths[i], &rd), 0);
		ASSERT_EQ(rlog_reader_count(rd, &c), 0);
		bytes += c.bytes;
		lost += c.lost_bytes;
		rlog_reader_close(rd);
	}
	ASSERT_EQ_U64(h_kv(r.out, "bytes_written"), bytes);
	ASSERT_EQ_U64(h_kv(r.out, "bytes_lost"), lost);
}

/* The files hold every event whose write returned 1 once, none other,
 * with DATA_LOSS records for the writes that returned a loss, undamaged
 * but for damage regions; the statistics just printed (r) say the same. */
static void check_files(const char *const *paths, size_t n, size_t damage, const char *what)
{
	struct num_check c;
	num_check_files(set, paths, n, &c);
	ASSERT_EQ(c.open_err, 0);
	ASSERT_EQ_U64(c.damage, damage);
	num_assert_once(set, &c, 0, what);
	ASSERT_EQ_U64(c.loss_events, num_lost(set));
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), num_written(set));
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), num_lost(set));
	check_bytes(paths, n);
}

/* The file ends in a block cut short, whose first records it still holds. */
static void check_cut(const char *path)
{
	struct rlog_reader *rd;
	ASSERT_EQ(rlog_reader_open(path, &rd), 0);
	size_t n = rlog_reader_damage_count(rd);
	struct rlog_damage dm = { .message = "no damage" };
	if (n)
		rlog_reader_damage(rd, n - 1, &dm);
	ok(n == 1 && dm.kind == RLOG_DAMAGE_TRUNCATED && strstr(dm.message, "recovered ") &&
	   !strstr(dm.message, "recovered 0 records"),
	   "the session's file ends in a block cut short, part of it readable: %s", dm.message);
	rlog_reader_close(rd);
}

static void recover_new_file(void)
{
	char path[256], out[256];
	snprintf(out, sizeof out, "%s", h_path("rco-out"));
	unlink(out);
	const char *name = start_and_die("rco", path, sizeof path);
	proc_sleep_ms(50); /* on without a daemon: the pool fills */
	writers_stop();
	ok(num_lost(set) > 0, "%" PRIu64 " writes lost while the daemon was dead", num_lost(set));
	check_cut(path);

	h_ringlog(&r, "recover", name, "-o", out, NULL);
	ASSERT_EQ(r.status, 0);
	rlog_detach();
	const char *files[2] = { path, out };
	/* The session's file keeps its cut block (one damage region). */
	check_files(files, 2, 1, "recover -o after a death in a write");
	struct h_summary s;
	h_summarize(out, &s);
	ASSERT_EQ_U64(s.damage, 0);
	unlink(path);
	unlink(out);
}

static void stop_force(void)
{
	char path[256];
	const char *name = start_and_die("rcf", path, sizeof path);
	proc_sleep_ms(50);
	writers_stop();
	check_cut(path);
	h_ringlog(&r, "stop", name, "--force", NULL);
	ASSERT_EQ(r.status, 0);
	rlog_detach();
	/* The cut block is cut off, and written again whole. */
	check_files((const char *const[]){ path }, 1, 0, "stop --force after a death in a write");
	unlink(path);
}

static void resume_twice(void)
{
	char path[256];
	const char *name = start_and_die("rcr", path, sizeof path);
	/* The new daemon dies in its third write too. */
	setenv("RINGLOG_TEST_DIE_IN_WRITE", "3", 1);
	h_ringlog(&r, "start", name, "--resume", NULL);
	unsetenv("RINGLOG_TEST_DIE_IN_WRITE");
	ASSERT_EQ(r.status, 0);
	wait_orphaned(name);
	check_cut(path);
	h_ringlog(&r, "start", name, "--resume", NULL);
	ASSERT_EQ(r.status, 0);
	proc_sleep_ms(50);
	writers_stop();
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	rlog_detach();
	check_files((const char *const[]){ path }, 1, 0, "two deaths in a write, two resumes");
	unlink(path);
}

/* Writer w's thread ends (its slot is freed once its buffers are
 * overwritten). */
static void writer_end(unsigned w)
{
	atomic_store(&stop_one[w], true);
	pthread_join(th[w], NULL);
}

/* Starts a flight recorder (overwrite mode, no file, 16 buffers of 4 KiB)
 * named name, attaches, and starts the writers. */
static void start_flight_recorder(const char *name)
{
	h_ringlog(&r, "start", name, "--mode", "overwrite", "--buffer-size", "4", "--buffers",
		  "16", NULL);
	BAIL_IF(r.status != 0, "ringlog start");
	ASSERT_EQ(rlog_attach(name), 0);
	writers_start();
}

/* still: the writers end before the snapshot, which then holds all the
 * ring does; gone: threads end before and after it. */
static void flight_recorder(bool gone, bool still)
{
	const char *name = h_session(gone ? "rcfrg" : still ? "rcfrs" : "rcfr");
	char snap[256], out[256];
	snprintf(snap, sizeof snap, "%s", h_path("rcfr-snap"));
	snprintf(out, sizeof out, "%s", h_path("rcfr-out"));
	unlink(snap);
	unlink(out);
	start_flight_recorder(name);
	proc_sleep_ms(100); /* many laps of the ring */
	if (gone) {
		/* A thread gone before the snapshot, whose losses it reports. */
		writer_end(3);
		proc_sleep_ms(60);
	}
	if (still)
		writers_stop();
	h_ringlog(&r, "snapshot", name, "-o", snap, "--since-last", NULL);
	ASSERT_EQ(r.status, 0);
	/* A snapshot's events_lost: the events of its DATA_LOSS records,
	 * overwritten ones included (docs/SESSIONS.md, "Statistics"). */
	uint64_t snap_lost = h_kv(r.out, "events_lost");
	struct num_check c;
	num_check_file(set, snap, &c);
	ASSERT_EQ_U64(snap_lost, c.loss_events);
	ok(c.loss_by_cause[RLOG_LOSS_OVERWRITTEN] > 0, "the snapshot counts overwritten events");
	if (gone) {
		/* One gone after it: its losses no snapshot reported (the
		 * journal's third part). */
		proc_sleep_ms(50);
		writer_end(2);
	}
	if (!still)
		proc_sleep_ms(100);
	h_kill_daemon(name);
	if (!still) {
		proc_sleep_ms(20);
		writers_stop();
	}
	h_ringlog(&r, "recover", name, "-o", out, NULL);
	ASSERT_EQ(r.status, 0);
	rlog_detach();
	uint64_t written = h_kv(r.out, "events_written"), lost = h_kv(r.out, "events_lost");
	uint64_t overwritten = h_kv(r.out, "events_overwritten");
	const char *files[2] = { snap, out };
	num_check_files(set, files, 2, &c);
	ASSERT_EQ(c.open_err, 0);
	ASSERT_EQ_U64(c.damage, 0);
	ASSERT_EQ_U64(c.extras, 0);
	/* The recovered file takes each buffer from where the snapshot
	 * left it. */
	ASSERT_EQ_U64(c.duplicates, 0);
	ok(c.missing > 0, "%" PRIu64 " events overwritten", c.missing);
	if (still) {
		struct h_summary s;
		h_summarize(out, &s);
		ASSERT_EQ_U64(s.events, 0); /* the snapshot took them all */
	}
	ASSERT_EQ_U64(c.loss_by_cause[RLOG_LOSS_OVERWRITTEN], c.missing);
	ASSERT_EQ_U64(c.loss_events, c.missing + num_lost(set));
	ASSERT_EQ_U64(written, c.present);
	ASSERT_EQ_U64(lost, c.missing + num_lost(set));
	ASSERT_EQ_U64(overwritten, c.missing);
	ASSERT_EQ_U64(written + lost, num_attempts(set));
	unlink(snap);
	unlink(out);
}

/* A flight recorder, a --since-last snapshot, its daemon killed, then
 * stop --force (its buffers counted lost: nowhere to put them) or
 * start --resume, another --since-last snapshot and stop. */
static void flight_recorder_other(bool resume)
{
	const char *name = h_session(resume ? "rcfres" : "rcfstop");
	char snap[256], snap2[256];
	snprintf(snap, sizeof snap, "%s", h_path(resume ? "rcfres-1" : "rcfstop-1"));
	snprintf(snap2, sizeof snap2, "%s", h_path(resume ? "rcfres-2" : "rcfstop-2"));
	unlink(snap);
	unlink(snap2);
	start_flight_recorder(name);
	proc_sleep_ms(100);
	h_ringlog(&r, "snapshot", name, "-o", snap, "--since-last", NULL);
	ASSERT_EQ(r.status, 0);
	proc_sleep_ms(50);
	h_kill_daemon(name);
	proc_sleep_ms(20);
	size_t nfiles = 1;
	if (resume) {
		h_ringlog(&r, "start", name, "--resume", NULL);
		ASSERT_EQ(r.status, 0);
		proc_sleep_ms(50);
		h_ringlog(&r, "snapshot", name, "-o", snap2, "--since-last", NULL);
		ASSERT_EQ(r.status, 0);
		nfiles = 2;
		proc_sleep_ms(20);
		writers_stop();
		h_ringlog(&r, "stop", name, NULL);
	} else {
		writers_stop();
		h_ringlog(&r, "stop", name, "--force", NULL);
	}
	ASSERT_EQ(r.status, 0);
	rlog_detach();
	uint64_t written = h_kv(r.out, "events_written"), lost = h_kv(r.out, "events_lost");
	uint64_t overwritten = h_kv(r.out, "events_overwritten");
	uint64_t discarded = h_kv(r.out, "events_discarded");
	const char *files[2] = { snap, snap2 };
	struct num_check c;
	num_check_files(set, files, nfiles, &c);
	ASSERT_EQ(c.open_err, 0);
	ASSERT_EQ_U64(c.extras, 0);
	ASSERT_EQ_U64(c.duplicates, 0);
	ASSERT_EQ_U64(written, c.present);
	ASSERT_EQ_U64(lost, c.missing + num_lost(set));
	ASSERT_EQ_U64(written + lost, num_attempts(set));
	diag("overwritten %" PRIu64 " (in records %" PRIu64 "), discarded %" PRIu64
	     ", missing %" PRIu64, overwritten, c.loss_by_cause[RLOG_LOSS_OVERWRITTEN], discarded,
	     c.missing);
	/* Every overwritten event is in a snapshot's record but those
	 * overwritten after the last snapshot (in the statistics only). */
	ok(c.loss_by_cause[RLOG_LOSS_OVERWRITTEN] <= overwritten,
	   "records count no more overwritten events than events_overwritten");
	if (resume)
		ASSERT_EQ_U64(overwritten + discarded, c.missing);
	unlink(snap);
	unlink(snap2);
}

/* A flight recorder whose daemon dies twice: a thread gone before the
 * first snapshot (its losses in it), the daemon killed, --resume, a second
 * snapshot, killed again, recover -o: the resumed daemon's journal keeps
 * the first one's ledger, so the count is exact over the three files. */
static void flight_recorder_twice(void)
{
	const char *name = h_session("rcf2");
	char s1[256], s2[256], out[256];
	snprintf(s1, sizeof s1, "%s", h_path("rcf2-1"));
	snprintf(s2, sizeof s2, "%s", h_path("rcf2-2"));
	snprintf(out, sizeof out, "%s", h_path("rcf2-out"));
	unlink(s1);
	unlink(s2);
	unlink(out);
	start_flight_recorder(name);
	proc_sleep_ms(100);
	writer_end(3);
	proc_sleep_ms(60);
	h_ringlog(&r, "snapshot", name, "-o", s1, "--since-last", NULL);
	ASSERT_EQ(r.status, 0);
	proc_sleep_ms(50);
	h_kill_daemon(name);
	proc_sleep_ms(20);
	h_ringlog(&r, "start", name, "--resume", NULL);
	ASSERT_EQ(r.status, 0);
	proc_sleep_ms(50);
	h_ringlog(&r, "snapshot", name, "-o", s2, "--since-last", NULL);
	ASSERT_EQ(r.status, 0);
	proc_sleep_ms(50);
	h_kill_daemon(name);
	proc_sleep_ms(20);
	writers_stop();
	h_ringlog(&r, "recover", name, "-o", out, NULL);
	ASSERT_EQ(r.status, 0);
	rlog_detach();
	uint64_t written = h_kv(r.out, "events_written"), lost = h_kv(r.out, "events_lost");
	const char *files[3] = { s1, s2, out };
	struct num_check c;
	num_check_files(set, files, 3, &c);
	ASSERT_EQ(c.open_err, 0);
	ASSERT_EQ_U64(c.extras, 0);
	ASSERT_EQ_U64(c.duplicates, 0);
	ASSERT_EQ_U64(c.loss_by_cause[RLOG_LOSS_OVERWRITTEN], c.missing);
	ASSERT_EQ_U64(written, c.present);
	ASSERT_EQ_U64(lost, c.missing + num_lost(set));
	ASSERT_EQ_U64(h_kv(r.out, "events_overwritten"), c.missing);
	ASSERT_EQ_U64(written + lost, num_attempts(set));
	unlink(s1);
	unlink(s2);
	unlink(out);
}

/* One word for one thing: the help says overwritten events are losses. */
static void help_words(void)
{
	h_ringlog(&r, "help", "snapshot", NULL);
	ASSERT_EQ(r.status, 0);
	ok(strstr(r.out, "are not losses") == NULL, "help snapshot: overwritten events are losses");
	ASSERT_CONTAINS(r.out, "events_lost (the events its\nDATA_LOSS records count, "
			       "overwritten ones included");
}

int main(void)
{
	help_words();
	flight_recorder_other(false);
	flight_recorder_other(true);
	flight_recorder_twice();
	flight_recorder(false, false);
	flight_recorder(true, false);
	flight_recorder(false, true);
	recover_new_file();
	stop_force();
	resume_twice();
	return done_testing();
}
