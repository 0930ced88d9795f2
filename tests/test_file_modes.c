/*
 * test_file_modes - ETW's log file modes, through the real path (this
 * process's producers, a real daemon, the reader), docs/SESSIONS.md "Log file modes":
 *
 *   1. sequential with a maximum size: the file stops at it; every block it
 *      could not take counts in log_buffers_lost and its events in
 *      events_lost; the one LOG_WRITE DATA_LOSS at the end of the file says
 *      exactly how many; the events in it are the first ones, contiguous;
 *      stop exits 1 with its line;
 *   2. circular: the file never exceeds its maximum and, after many wraps,
 *      holds exactly the newest blocks (each thread left in it: a
 *      contiguous run of its events ending at its last), in time order,
 *      with every event's schema and every thread's name, and no damage;
 *      a single writer's events are exactly its newest;
 *   3. newfile: the numbered files, each at most the maximum, each with
 *      its own LOG_MARKER, schemas and names, no damage; across them every
 *      event exactly once, in order; file_index is the last number;
 *   4. preallocate: the file's size is the maximum from the start (on disk
 *      too), its unused end is no damage; with circular, wraps keep it so;
 *      with newfile, every file;
 *   5. several sessions at once, in different modes; a name that differs
 *      only in case is refused.
 * Every session: events emitted = events written + events lost, and the
 * files agree with the statistics.
 */
#include <pthread.h>
#include <sys/stat.h>

#include "harness.h"
#include "ringlog/event.h"
#include "tap.h"

#define EV_FIELDS(F) F(U64, seq) F(U32, who)
RLOG_DEFINE_EVENT(mode_ev, 3000, "mode.ev", 0, EV_FIELDS)

#define MAX_THREADS 3
static const char *const names[MAX_THREADS] = { "alpha", "beta", "gamma" };

struct writer {
	uint32_t who;
	uint64_t n;             /* events to write */
	struct h_tally t;
};

/* The writers go in step, 1000 events at a time, so that the newest part
 * of a circular file holds every thread. */
static pthread_barrier_t step;

static void *write_thread(void *arg)
{
	struct writer *w = arg;
	rlog_thread_name(names[w->who]);
	for (uint64_t i = 1; i <= w->n; i++) {
		h_tally_add(&w->t, RLOG_EVENT(mode_ev, i, w->who));
		if (i % 1000 == 0)
			pthread_barrier_wait(&step);
	}
	return NULL;
}

/* nthreads threads write n events each into the attached session. */
static void run_writers(struct writer *w, int nthreads, uint64_t n)
{
	pthread_t th[MAX_THREADS];
	pthread_barrier_init(&step, NULL, (unsigned)nthreads);
	for (int i = 0; i < nthreads; i++) {
		memset(&w[i], 0, sizeof w[i]);
		w[i].who = (uint32_t)i;
		w[i].n = n;
		pthread_create(&th[i], NULL, write_thread, &w[i]);
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&step);
}

static struct h_run r;

static void start(const char *name, const char *path, const char *a0, const char *a1,
		  const char *a2, const char *a3, const char *a4, const char *a5)
{
	h_ringlog(&r, "start", name, "-o", path, "--buffer-size", "4", "--buffers", "2048", a0, a1,
		  a2, a3, a4, a5, NULL);
	if (r.status != 0) {
		printf("Bail out! start %s: %s", name, r.err);
		exit(1);
	}
}

/* What a file holds, per writer thread. */
struct per_thread {
	uint64_t events, first, last;
	bool contiguous;        /* seq first..last, each once, in order */
	bool named;             /* the reader knows its thread's name */
	uint64_t schemaless;    /* events without the schema */
};

struct file_sum {
	int open_err;
	size_t damage;
	uint64_t events, markers, log_write_events, loss_records, other_records;
	uint64_t time_errors;
	bool loss_last;         /* the LOG_WRITE record is the last record */
	struct per_thread th[MAX_THREADS];
};

static void file_sum(const char *path, struct file_sum *s)
{
	memset(s, 0, sizeof *s);
	struct rlog_reader *rd;
	s->open_err = rlog_reader_open(path, &rd);
	if (s->open_err < 0)
		return;
	struct rlog_event ev;
	int64_t last_time = INT64_MIN;
	for (int i = 0; i < MAX_THREADS; i++)
		s->th[i].contiguous = true;
	while (rlog_reader_next(rd, &ev) == 1) {
		if (ev.time_ns < last_time)
			s->time_errors++;
		last_time = ev.time_ns;
		s->loss_last = false;
		if (ev.from_daemon && ev.id == RLOG_ID_LOG_MARKER) {
			s->markers++;
			continue;
		}
		if (ev.from_daemon && ev.id == RLOG_ID_DATA_LOSS) {
			struct rlog_loss l;
			rlog_event_loss(&ev, &l);
			s->loss_records++;
			if (l.cause == RLOG_LOSS_LOG_WRITE) {
				s->log_write_events += l.events;
				s->loss_last = true;
			}
			continue;
		}
		if (h_is_metadata(&ev))
			continue;
		if (ev.id != 3000 || ev.length != 12) {
			s->other_records++;
			continue;
		}
		uint64_t seq;
		uint32_t who;
		memcpy(&seq, ev.payload, 8);
		memcpy(&who, (const uint8_t *)ev.payload + 8, 4);
		if (who >= MAX_THREADS) {
			s->other_records++;
			continue;
		}
		struct per_thread *t = &s->th[who];
		const struct rlog_schema *sc = rlog_reader_schema(rd, &ev);
		if (!sc || strcmp(sc->name, "mode.ev") != 0)
			t->schemaless++;
		const char *tn = rlog_reader_thread_name(rd, ev.pid, ev.tid);
		t->named = tn && strcmp(tn, names[who]) == 0;
		if (t->events == 0)
			t->first = seq;
		else if (seq != t->last + 1)
			t->contiguous = false;
		t->last = seq;
		t->events++;
		s->events++;
	}
	s->damage = rlog_reader_damage_count(rd);
	rlog_reader_close(rd);
}

static uint64_t file_size(const char *path, uint64_t *on_disk)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return UINT64_MAX;
	if (on_disk)
		*on_disk = (uint64_t)st.st_blocks * 512;
	return (uint64_t)st.st_size;
}

static uint64_t sum_written(const struct writer *w, int n)
{
	uint64_t s = 0;
	for (int i = 0; i < n; i++)
		s += w[i].t.written;
	return s;
}

/* One writer thread writes n events into session name, which then stops:
 * exit 0, every event written, none lost. */
static void write_stop(const char *name, uint64_t n)
{
	ASSERT_EQ(rlog_attach(name), 0);
	struct writer w[1];
	run_writers(w, 1, n);
	rlog_detach();
	ASSERT_EQ_U64(w[0].t.written, n);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), n);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), 0);
}

/* 1. sequential, 1 MiB at most; 3 MiB written. */
static void sequential_cap(void)
{
	const char *name = h_session("seqcap");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("seqcap"));
	start(name, path, "--max-file-size", "1", NULL, NULL, NULL, NULL);
	ASSERT_EQ(rlog_attach(name), 0);
	struct writer w[1];
	run_writers(w, 1, 150000); /* 20-byte records: 3 MB, within the 8 MiB pool */
	rlog_detach();
	ASSERT_EQ_U64(w[0].t.written, 150000);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 1);
	char line[256];
	snprintf(line, sizeof line, "ringlog: stop: %s: the log file reached --max-file-size; later "
		 "blocks were not written (log_buffers_lost): File too large\n", name);
	ASSERT_STREQ(r.err, line);
	uint64_t written = h_kv(r.out, "events_written"), lost = h_kv(r.out, "events_lost");
	ASSERT_EQ_U64(written + lost, 150000);
	ok(lost > 0 && h_kv(r.out, "log_buffers_lost") > 0, "blocks refused: %" PRIu64
	   " events in %" PRIu64 " blocks", lost, h_kv(r.out, "log_buffers_lost"));
	/* A refused block is a full buffer (at most 204 events of 20 bytes),
	 * or the last, partial one. */
	uint64_t blocks = h_kv(r.out, "log_buffers_lost");
	ok(lost <= blocks * 204 && lost > (blocks - 1) * 204 - 204,
	   "events lost fit the blocks refused");
	uint64_t size = file_size(path, NULL);
	ok(size <= 1u << 20 && size > (1u << 20) - 4096 - 80, "file size %" PRIu64 " <= 1 MiB", size);
	ASSERT_EQ_U64(h_kv(r.out, "file_bytes"), size);
	struct file_sum s;
	file_sum(path, &s);
	ASSERT_EQ(s.damage, 0);
	ASSERT_EQ_U64(s.events, written);
	ASSERT_EQ_U64(s.loss_records, 1);
	ASSERT_EQ_U64(s.log_write_events, lost);
	ok(s.loss_last, "the LOG_WRITE record is the file's last");
	ok(s.th[0].contiguous && s.th[0].first == 1 && s.th[0].last == written,
	   "the file holds the first events, 1..%" PRIu64, written);
	unlink(path);
}

/* 2. circular, 1 MiB at most; 6 MB written by three threads. */
static void circular(const char *tag, bool prealloc)
{
	const char *name = h_session(tag);
	char path[256];
	snprintf(path, sizeof path, "%s", h_path(tag));
	start(name, path, "--mode", prealloc ? "circular,preallocate" : "circular",
	      "--max-file-size", "1", NULL, NULL);
	ASSERT_EQ(rlog_attach(name), 0);
	struct writer w[MAX_THREADS];
	run_writers(w, MAX_THREADS, 100000);
	rlog_detach();
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), sum_written(w, MAX_THREADS));
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), 0);
	ASSERT_EQ_U64(h_kv(r.out, "log_buffers_lost"), 0);
	uint64_t disk = 0, size = file_size(path, &disk);
	if (prealloc) {
		ASSERT_EQ_U64(size, 1u << 20);
		ok(disk >= 1u << 20, "allocated on disk: %" PRIu64, disk);
	} else {
		ok(size <= 1u << 20, "file size %" PRIu64 " <= 1 MiB", size);
		ASSERT_EQ_U64(h_kv(r.out, "file_bytes"), size);
	}
	struct file_sum s;
	file_sum(path, &s);
	ASSERT_EQ(s.open_err, 0);
	ASSERT_EQ(s.damage, 0);
	ASSERT_EQ_U64(s.markers, 1);
	ASSERT_EQ_U64(s.time_errors, 0);
	ASSERT_EQ_U64(s.other_records, 0);
	ok(s.events < 60000, "many wraps: %" PRIu64 " of 300000 events left", s.events);
	/* The newest blocks in the order the daemon wrote them: each thread's
	 * blocks in its own order, so every thread left in the file holds a
	 * run of its events that ends with its last.  (Which threads are left
	 * depends on how the daemon's passes interleaved them.) */
	int present = 0;
	for (int i = 0; i < MAX_THREADS; i++) {
		const struct per_thread *t = &s.th[i];
		if (t->events == 0)
			continue;
		present++;
		ok(t->contiguous && t->last == 100000 && t->first > 1 &&
		   t->events == t->last - t->first + 1,
		   "%s: the newest events, %" PRIu64 "..%" PRIu64 ", contiguous", names[i], t->first,
		   t->last);
		ASSERT_EQ_U64(t->schemaless, 0);
		ok(t->named, "%s: named after the wraps", names[i]);
	}
	ok(present > 0, "%d threads left in the file", present);
	unlink(path);
}

/* 3. newfile, 1 MiB each; 3.6 MB written by two threads. */
static void newfile(const char *tag, bool prealloc)
{
	const char *name = h_session(tag);
	char pat[256], path[300];
	snprintf(pat, sizeof pat, "/tmp/rlog-test-%s-%d.%%d.rlog", tag, (int)getpid());
	for (int i = 1; i < 10; i++) {
		snprintf(path, sizeof path, "/tmp/rlog-test-%s-%d.%d.rlog", tag, (int)getpid(), i);
		unlink(path);
	}
	start(name, pat, "--mode", prealloc ? "newfile,preallocate" : "newfile", "--max-file-size",
	      "1", NULL, NULL);
	ASSERT_EQ(rlog_attach(name), 0);
	struct writer w[2];
	run_writers(w, 2, 90000);
	rlog_detach();
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	snprintf(path, sizeof path, "file: /tmp/rlog-test-%s-%d.%%d.rlog\n", tag, (int)getpid());
	ASSERT_CONTAINS(r.out, path);
	uint64_t written = h_kv(r.out, "events_written"), files = h_kv(r.out, "file_index");
	ASSERT_EQ_U64(written, sum_written(w, 2));
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), 0);
	ok(files == 4, "file_index %" PRIu64 " (3.6 MB in files of 1 MiB)", files);
	uint64_t total = 0, next[2] = { 1, 1 }, bytes = 0;
	bool order = true;
	for (uint64_t i = 1; i <= files; i++) {
		snprintf(path, sizeof path, "/tmp/rlog-test-%s-%d.%" PRIu64 ".rlog", tag, (int)getpid(), i);
		uint64_t disk = 0, size = file_size(path, &disk);
		if (prealloc)
			ok(size == 1u << 20 && disk >= 1u << 20, "file %" PRIu64 ": %" PRIu64
			   " bytes, %" PRIu64 " on disk", i, size, disk);
		else
			ok(size <= 1u << 20, "file %" PRIu64 ": %" PRIu64 " <= 1 MiB", i, size);
		bytes += size;
		struct file_sum s;
		file_sum(path, &s);
		ok(s.open_err == 0 && s.damage == 0 && s.markers == 1,
		   "file %" PRIu64 " decodes alone: its LOG_MARKER, no damage", i);
		for (int k = 0; k < 2; k++) {
			const struct per_thread *t = &s.th[k];
			if (t->events == 0)
				continue;
			order &= t->contiguous && t->first == next[k];
			next[k] = t->last + 1;
			ok(t->schemaless == 0 && t->named, "file %" PRIu64 ": %s's schema and name", i,
			   names[k]);
		}
		total += s.events;
		unlink(path);
	}
	ok(order && next[0] == 90001 && next[1] == 90001, "every event once, in order, across files");
	ASSERT_EQ_U64(total, written);
	if (!prealloc)
		ASSERT_EQ_U64(h_kv(r.out, "file_bytes"), bytes);
	snprintf(path, sizeof path, "/tmp/rlog-test-%s-%d.%" PRIu64 ".rlog", tag, (int)getpid(),
		 files + 1);
	ok(access(path, F_OK) != 0, "no file past file_index");
}

/* 4. preallocate, sequential: the size at once. */
static void preallocated(void)
{
	const char *name = h_session("pre");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("pre"));
	start(name, path, "--mode", "preallocate", "--max-file-size", "2", NULL, NULL);
	uint64_t disk = 0, size = file_size(path, &disk);
	ASSERT_EQ_U64(size, 2u << 20);
	ok(disk >= 2u << 20, "allocated on disk at start: %" PRIu64, disk);
	write_stop(name, 1000);
	ASSERT_EQ_U64(file_size(path, NULL), 2u << 20);
	struct file_sum s;
	file_sum(path, &s);
	ASSERT_EQ(s.damage, 0);
	ASSERT_EQ_U64(s.events, 1000);
	h_ringlog(&r, "dump", path, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");
	unlink(path);
}

/* 5. three sessions at once; names are case-insensitive. */
static void several(void)
{
	char na[64], nb[64], nc[64], pa[256], pb[256], pc[256];
	snprintf(na, sizeof na, "%s", h_session("multi-a"));
	snprintf(nb, sizeof nb, "%s", h_session("multi-b"));
	snprintf(nc, sizeof nc, "%s", h_session("multi-c"));
	snprintf(pa, sizeof pa, "%s", h_path("multi-a"));
	snprintf(pb, sizeof pb, "%s", h_path("multi-b"));
	snprintf(pc, sizeof pc, "%s", h_path("multi-c"));
	start(na, pa, NULL, NULL, NULL, NULL, NULL, NULL);
	start(nb, pb, "--mode", "circular", "--max-file-size", "1", NULL, NULL);
	start(nc, pc, "--mode", "real-time", NULL, NULL, NULL, NULL);
	char upper[64];
	snprintf(upper, sizeof upper, "%s", nb);
	for (char *p = upper; *p; p++)
		if (*p >= 'a' && *p <= 'z')
			*p = (char)(*p - 'a' + 'A');
	char other[300];
	snprintf(other, sizeof other, "%s.x", pb);
	h_ringlog(&r, "start", upper, "-o", other, NULL);
	ASSERT_EQ(r.status, 1);
	char line[256];
	snprintf(line, sizeof line, "ringlog: start: session '%s' already exists\n", upper);
	ASSERT_STREQ(r.err, line);
	ok(access(other, F_OK) != 0, "the refused start left no file");
	const char *sess[3] = { na, nb, nc }, *paths[3] = { pa, pb, pc };
	uint64_t n[3] = { 1000, 2000, 3000 };
	for (int i = 0; i < 3; i++) {
		/* In turn: the first while all three run. */
		write_stop(sess[i], n[i]);
		struct file_sum s;
		file_sum(paths[i], &s);
		ok(s.damage == 0 && s.events == n[i], "session %d's file: %" PRIu64 " events", i,
		   s.events);
		unlink(paths[i]);
	}
}

/* 2b. one writer: the file holds exactly its newest events. */
static void circular_one(void)
{
	const char *name = h_session("circ1");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("circ1"));
	start(name, path, "--mode", "circular", "--max-file-size", "1", NULL, NULL);
	write_stop(name, 300000);
	struct file_sum s;
	file_sum(path, &s);
	ASSERT_EQ(s.damage, 0);
	const struct per_thread *t = &s.th[0];
	ok(t->contiguous && t->last == 300000 && t->events == s.events && t->first > 200000 &&
	   t->events == t->last - t->first + 1, "the newest %" PRIu64 " events, %" PRIu64 "..300000",
	   t->events, t->first);
	/* About a MiB of 20-byte records: the file less block 0, the copies
	 * and block headers. */
	ok(t->events > 45000 && t->events < 52429, "%" PRIu64 " events of 20 bytes in 1 MiB",
	   t->events);
	ok(t->named && t->schemaless == 0, "named, every event with its schema");
	unlink(path);
}

int main(void)
{
	sequential_cap();
	circular_one();
	circular("circ", false);
	circular("circpre", true);
	newfile("newf", false);
	newfile("newfpre", true);
	preallocated();
	several();
	return done_testing();
}
