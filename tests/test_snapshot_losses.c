/*
 * test_snapshot_losses - where a snapshot puts a thread's OVERWRITTEN
 * losses (docs/FORMAT.md, "struct rlog_data_loss_range": "the record sits
 * at first_time, before the thread's next block").  Two threads write
 * numbered events (tests/numbered.h) flat out into a small overwrite pool,
 * so that producers reuse buffers while snapshots are taken:
 *
 *   1. a flight recorder: a snapshot, six --since-last snapshots; its
 *      daemon killed (SIGKILL), the session resumed (start --resume),
 *      a snapshot and a --since-last one; killed again, then recover -o;
 *   2. overwrite mode with a file: a snapshot.
 *
 * In every file, per thread: its records' times never go back, each
 * OVERWRITTEN record is timed (its time is its first_time, non-zero) and
 * lies between the thread's records it says it lies between; no event is
 * twice, none that was not written; the --since-last snapshots of one
 * daemon hold each event once between them.
 */
#include "harness.h"
#include "numbered.h"

#include <pthread.h>
#include <time.h>

#define THREADS 2
#define CAP (1ull << 26)
#define SINCE 6 /* --since-last snapshots in a row */

static struct num_set *set;
static _Atomic int running;

static void *produce(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg;
	while (atomic_load_explicit(&running, memory_order_relaxed))
		for (int i = 0; i < 64; i++)
			num_write(set, w);
	return NULL;
}

/* Per thread of a file, in the reader's order (each thread's records in
 * file order): times do not go back, and each OVERWRITTEN record sits at
 * its first_time. */
static void check_order(const char *path, const char *what)
{
	struct rlog_reader *rd;
	int rc = rlog_reader_open(path, &rd);
	ok(rc == 0, "%s: opened (%d)", what, rc);
	if (rc < 0)
		return;
	struct { uint32_t tid; uint64_t last, seq, tseq, cover; bool loss; } th[64];
	unsigned nth = 0;
	uint64_t back = 0, gaps = 0, untimed = 0, wrong_time = 0, records = 0, ow_events = 0;
	struct rlog_event ev;
	while (rlog_reader_next(rd, &ev) == 1) {
		if (ev.tid == 0)
			continue; /* the daemon's own (LOG_MARKER, counters) */
		unsigned k = 0;
		while (k < nth && th[k].tid != ev.tid)
			k++;
		if (k == nth) {
			if (nth == 64)
				continue;
			th[nth].tid = ev.tid;
			th[nth].seq = th[nth].tseq = th[nth].cover = 0;
			th[nth].loss = false;
			th[nth++].last = 0;
		}
		if (ev.from_daemon && ev.id == RLOG_ID_DATA_LOSS)
			th[k].loss = true;
		if (!ev.from_daemon && ev.id == NUM_ID && ev.length == 16) {
			/* A gap in a writer's numbers is a loss, reported
			 * before it: by a record between the events around
			 * it, or by an OVERWRITTEN record before it whose
			 * range of time reaches past the event before it. */
			uint64_t v[2];
			memcpy(v, ev.payload, sizeof v);
			if (th[k].seq && v[1] != th[k].seq + 1 && !th[k].loss &&
			    th[k].cover < th[k].tseq) {
				if (gaps++ < 4)
					diag("%s: tid %u: seq %" PRIu64 " after %" PRIu64
					     " with no loss record between", what, ev.tid, v[1],
					     th[k].seq);
			}
			th[k].seq = v[1];
			th[k].tseq = ev.ticks;
			th[k].loss = false;
		}
		bool ow = false;
		if (ev.from_daemon && !ev.flagged && ev.id == RLOG_ID_DATA_LOSS &&
		    ev.length >= sizeof(struct rlog_data_loss_range)) {
			struct rlog_data_loss_range dl;
			memcpy(&dl, ev.payload, sizeof dl);
			if (dl.loss.cause == RLOG_LOSS_OVERWRITTEN) {
				ow = true;
				if (dl.last_time > th[k].cover)
					th[k].cover = dl.last_time;
				records++;
				ow_events += dl.loss.events;
				if (!ev.has_time || ev.ticks == 0)
					untimed++;
				if (ev.ticks != dl.first_time || dl.last_time < dl.first_time) {
					if (wrong_time++ < 4)
						diag("%s: tid %u: OVERWRITTEN at %" PRIu64 ", first_time %"
						     PRIu64, what, ev.tid, ev.ticks, dl.first_time);
				}
			}
		}
		if (ev.ticks < th[k].last) {
			if (back++ < 4)
				diag("%s: tid %u: time goes back from %" PRIu64 " to %" PRIu64 " (%s)",
				     what, ev.tid, th[k].last, ev.ticks,
				     ow ? "an OVERWRITTEN record" : "a record");
		}
		if (ev.ticks > th[k].last)
			th[k].last = ev.ticks;
	}
	diag("%s: %" PRIu64 " OVERWRITTEN records, %" PRIu64 " events", what, records, ow_events);
	ASSERT_EQ_U64(rlog_reader_damage_count(rd), 0);
	ok(back == 0, "%s: no thread's time goes back (%" PRIu64 " times)", what, back);
	ok(gaps == 0, "%s: every gap in a thread's events has its loss record there (%" PRIu64
	   " not)", what, gaps);
	ok(untimed == 0, "%s: every OVERWRITTEN record is timed (%" PRIu64 " not)", what, untimed);
	ok(wrong_time == 0, "%s: every OVERWRITTEN record sits at its first_time (%" PRIu64
	   " not)", what, wrong_time);
	rlog_reader_close(rd);
}

/* Each event once, none extra, in the files together. */
static void check_once(const char *const *paths, size_t n, const char *what)
{
	struct num_check c;
	num_check_files(set, paths, n, &c);
	ASSERT_EQ(c.open_err, 0);
	ASSERT_EQ_U64(c.damage, 0);
	ok(c.duplicates == 0, "%s: no event twice (%" PRIu64 ")", what, c.duplicates);
	ok(c.extras == 0, "%s: no extra event (%" PRIu64 ")", what, c.extras);
	diag("%s: %" PRIu64 " events", what, c.present);
}

static void snapshot(const char *name, const char *path, bool since_last)
{
	struct h_run r;
	unlink(path);
	if (since_last)
		h_ringlog(&r, "snapshot", name, "-o", path, "--since-last", NULL);
	else
		h_ringlog(&r, "snapshot", name, "-o", path, NULL);
	ok(r.status == 0, "snapshot %s%s: %s", path, since_last ? " --since-last" : "", r.err);
}

static void writers_start(pthread_t *th)
{
	atomic_store(&running, 1);
	for (unsigned i = 0; i < THREADS; i++)
		BAIL_IF(pthread_create(&th[i], NULL, produce, (void *)(uintptr_t)i) != 0,
			"pthread_create");
}

/* Starts session name in overwrite mode, 16 buffers of 4 KiB, with file
 * (or none: a flight recorder), and the writers writing into it. */
static void start_writing(const char *name, const char *file, pthread_t *th)
{
	struct h_run r;
	if (file)
		h_ringlog(&r, "start", name, "-o", file, "--mode", "overwrite", "--buffer-size",
			  "4", "--buffers", "16", NULL);
	else
		h_ringlog(&r, "start", name, "--mode", "overwrite", "--buffer-size", "4",
			  "--buffers", "16", NULL);
	BAIL_IF(r.status != 0, "ringlog start: %s", r.err);
	ASSERT_EQ(rlog_attach(name), 0);
	set = num_new(THREADS, CAP);
	writers_start(th);
}

static void writers_stop(pthread_t *th)
{
	atomic_store(&running, 0);
	for (unsigned i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
}

static void path_of(char *out, size_t n, const char *tag)
{
	snprintf(out, n, "/tmp/rlog-test-snl-%s-%d.rlog", tag, (int)getpid());
}

static void flight_recorder(void)
{
	const char *name = h_session("snl");
	char a[128], d[128], e[128], f[128];
	path_of(a, sizeof a, "a");
	path_of(d, sizeof d, "d");
	path_of(e, sizeof e, "e");
	path_of(f, sizeof f, "f");
	struct h_run r;
	pthread_t th[THREADS];
	start_writing(name, NULL, th);
	proc_sleep_ms(150);
	snapshot(name, a, false);
	/* Several: a buffer taken over in the middle of a thread's ones
	 * while a snapshot goes through the pool is likely, not certain, in
	 * each. */
	char sl[SINCE][128];
	for (int i = 0; i < SINCE; i++) {
		char tag[16];
		snprintf(tag, sizeof tag, "sl%d", i);
		path_of(sl[i], sizeof sl[i], tag);
		proc_sleep_ms(40);
		snapshot(name, sl[i], true);
	}
	proc_sleep_ms(50);
	h_kill_daemon(name);
	proc_sleep_ms(100);
	h_ringlog(&r, "start", name, "--resume", NULL);
	ok(r.status == 0, "start --resume: %s", r.err);
	proc_sleep_ms(100);
	snapshot(name, d, false);
	proc_sleep_ms(100);
	snapshot(name, e, true);
	proc_sleep_ms(50);
	h_kill_daemon(name);
	proc_sleep_ms(50);
	writers_stop(th);
	unlink(f);
	h_ringlog(&r, "recover", name, "-o", f, NULL);
	ok(r.status == 0, "recover -o: %s", r.err);
	ASSERT_EQ(rlog_detach(), 0);

	check_order(a, "snapshot");
	check_once((const char *const[]){ a }, 1, "snapshot");
	const char *since[SINCE];
	for (int i = 0; i < SINCE; i++) {
		char what[32];
		snprintf(what, sizeof what, "--since-last %d", i + 1);
		check_order(sl[i], what);
		since[i] = sl[i];
	}
	check_once(since, SINCE, "the --since-last snapshots together");
	check_order(d, "resumed: snapshot");
	check_once((const char *const[]){ d }, 1, "resumed: snapshot");
	check_order(e, "resumed: --since-last");
	check_once((const char *const[]){ d, e }, 2, "resumed: snapshot, then --since-last");
	check_order(f, "recovered");
	check_once((const char *const[]){ f }, 1, "recovered");
	unlink(a);
	for (int i = 0; i < SINCE; i++)
		unlink(sl[i]);
	unlink(d);
	unlink(e);
	unlink(f);
}

static void with_file(void)
{
	const char *name = h_session("snlf");
	char file[128], a[128];
	path_of(file, sizeof file, "file");
	path_of(a, sizeof a, "fa");
	unlink(file);
	struct h_run r;
	pthread_t th[THREADS];
	start_writing(name, file, th);
	proc_sleep_ms(200);
	snapshot(name, a, false);
	proc_sleep_ms(50);
	writers_stop(th);
	ASSERT_EQ(rlog_detach(), 0);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	check_order(a, "with a file: snapshot");
	check_once((const char *const[]){ a }, 1, "with a file: snapshot");
	check_order(file, "with a file: the file");
	unlink(file);
	unlink(a);
}

int main(void)
{
	flight_recorder();
	with_file();
	return done_testing();
}
