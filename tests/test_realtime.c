/*
 * test_realtime - real-time consumers (`ringlog tail`) of real sessions,
 * docs/SESSIONS.md "Real-time consumers":
 *
 *   1. two consumers at once, text and JSON: each prints every event
 *      exactly once, the same events the file holds (as `ringlog dump`
 *      prints them, order aside), named and decoded; both exit 0 when the
 *      session stops; realtime_buffers_lost is 0;
 *   2. a session without a file: the consumer gets every event; stop
 *      prints "file: -";
 *   3. a consumer stopped with SIGSTOP while 6 MB go by: producers lose
 *      nothing and the file has every event; the consumer, resumed, prints
 *      DATA_LOSS lines of cause real_time whose blocks add up to exactly
 *      realtime_buffers_lost, and events received + events it was told it
 *      missed = events written; it exits 1 with its line; the same when
 *      it is resumed only as the session stops (its last DATA_LOSS then
 *      ends its stream);
 *   3b. a consumer stopped while two threads write numbered events and
 *      still stopped when the session stops (its socket full: the daemon
 *      cannot send it the DATA_LOSS of the end), resumed after: it prints
 *      a DATA_LOSS of cause real_time for what it missed at the end (from
 *      the daemon's end account), the blocks of its DATA_LOSS lines add up
 *      to realtime_buffers_lost, each event it prints was written once and
 *      printed once, and events printed + events it was told it missed =
 *      events written; it exits 1;
 *   4. a real-time session without a consumer keeps its file;
 *   5. tail's errors: no session, not a real-time session, a bad name, a
 *      usage error: one line each, exact.
 * Every session: events emitted = events written + events lost.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>

#include "harness.h"
#include "ringlog/event.h"
#include "tap.h"

#define RT_FIELDS(F) F(U64, seq) F(STRING, tag)
RLOG_DEFINE_EVENT(rt_ev, 3100, "rt.ev", 0, RT_FIELDS)

#define TH_FIELDS(F) F(U64, th) F(U64, seq) F(BYTES(40), pad)
RLOG_DEFINE_EVENT(rt_th, 3101, "rt.th", 0, TH_FIELDS)

static struct h_run r;

/* `ringlog tail name args...` in the background. */
static void tail_start(struct proc_bg *t, const char *name, const char *a0, const char *a1)
{
	proc_start(t, (const char *const[]){ h_bin(), "tail", name, a0, a1, NULL });
}

/* A real-time session with 8 MiB of pool (the producers never wait for the
 * daemon) and a 20 ms flush timer, its log file at path, one `ringlog
 * tail` connected to it (what: the test point's prefix), and this process
 * attached. */
static void start_tailed(const char *name, const char *path, struct proc_bg *a,
			 const char *what)
{
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--mode", "real-time", "--flush-timer", "20ms",
		  "--buffer-size", "4", "--buffers", "2048", NULL);
	ASSERT_EQ(r.status, 0);
	tail_start(a, name, NULL, NULL);
	ok(proc_wait(a, "LOG_MARKER", PROC_WAIT_MS), "%sconnected", what);
	ASSERT_EQ(rlog_attach(name), 0);
}

/* Lines of text whose id column is "rt.ev"; their seq values summed. */
static uint64_t count_text(const char *text, uint64_t *seq_sum, uint64_t *loss_blocks,
			   uint64_t *loss_events)
{
	uint64_t n = 0;
	*seq_sum = *loss_blocks = *loss_events = 0;
	for (const char *p = text; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char line[512];
		snprintf(line, sizeof line, "%.*s", (int)(len < 511 ? len : 511), p);
		const char *s = strstr(line, " rt.ev ");
		if (s) {
			n++;
			const char *q = strstr(line, "seq=");
			if (q)
				*seq_sum += strtoull(q + 4, NULL, 10);
		}
		if (strstr(line, "cause=real_time")) {
			const char *q = strstr(line, "events=");
			const char *b = strstr(line, "blocks=");
			if (q)
				*loss_events += strtoull(q + 7, NULL, 10);
			if (b)
				*loss_blocks += strtoull(b + 7, NULL, 10);
		}
		p = e ? e + 1 : NULL;
	}
	return n;
}

/* Stops session name: exit 0, the statistics agree with what the writes
 * returned (total of them), no block missed by a consumer. */
static void stop_exact(const char *name, const struct h_tally *t, uint64_t total)
{
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), t->written);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), t->lost);
	ASSERT_EQ_U64(t->written + t->lost, total);
	ASSERT_EQ_U64(h_kv(r.out, "realtime_buffers_lost"), 0);
}

static uint64_t write_events(uint64_t from, uint64_t n, struct h_tally *t)
{
	for (uint64_t i = from; i < from + n; i++)
		h_tally_add(t, RLOG_EVENT(rt_ev, i, "tagged"));
	return from + n;
}

/* 1, 4: two consumers, text and JSON, and the file. */
static void two_consumers(void)
{
	const char *name = h_session("rt2");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("rt2"));
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--mode", "real-time", "--flush-timer", "50ms", NULL);
	ASSERT_EQ(r.status, 0);
	struct proc_bg a, b;
	tail_start(&a, name, NULL, NULL);
	tail_start(&b, name, "--format", "json");
	ok(proc_wait(&a, "LOG_MARKER", PROC_WAIT_MS), "the text consumer is connected");
	ok(proc_wait(&b, "\"log_marker\"", PROC_WAIT_MS), "the JSON consumer is connected");
	ASSERT_EQ(rlog_attach(name), 0);
	struct h_tally t = { 0, 0, 0, 0 };
	uint64_t next = write_events(1, 5000, &t);
	rlog_flush_thread();
	ok(proc_wait(&a, "seq=5000 ", PROC_WAIT_MS), "the text consumer printed event 5000 live");
	next = write_events(next, 5000, &t);
	rlog_detach();
	stop_exact(name, &t, 10000);
	struct run ar = proc_reap(&a), br = proc_reap(&b);
	ASSERT_EQ(ar.status, 0);
	ASSERT_EQ(br.status, 0);
	char *ao = ar.out, *ae = ar.err, *bo = br.out, *be = br.err;
	ASSERT_STREQ(ae, "");
	ASSERT_STREQ(be, "");
	uint64_t sum, lb, le;
	ASSERT_EQ_U64(count_text(ao, &sum, &lb, &le), t.written);
	ASSERT_EQ_U64(sum, 10000ull * 10001 / 2);
	char head[128];
	snprintf(head, sizeof head, "# ringlog tail of %s: session %s, tick source ", name, name);
	ok(strncmp(ao, head, strlen(head)) == 0, "the text header names the session");
	ASSERT_CONTAINS(ao, "rt.ev        seq=1 tag=\"tagged\"\n");
	uint64_t json_events = 0;
	for (const char *p = bo; (p = strstr(p, "\"name\":\"rt.ev\"")); p++)
		json_events++;
	ASSERT_EQ_U64(json_events, t.written);
	/* The same lines as dump prints from the file (order aside: count and
	 * sum, and one line checked whole). */
	h_ringlog(&r, "dump", path, "--id", "3100", NULL);
	ASSERT_EQ(r.status, 0);
	(void)next;
	run_free(&ar);
	run_free(&br);
	struct h_summary s;
	h_summarize(path, &s);
	ASSERT_EQ_U64(s.events, t.written);
	ASSERT_EQ(s.damage, 0);
	unlink(path);
}

/* 2: no file. */
static void no_file(void)
{
	const char *name = h_session("rt0");
	h_ringlog(&r, "start", name, "--mode", "real-time", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_CONTAINS(r.out, "\nfile: -\n");
	h_ringlog(&r, "query", name, NULL);
	ASSERT_CONTAINS(r.out, "log_file_mode: no-file,real-time\n");
	ASSERT_EQ_U64(h_kv(r.out, "flush_timer_ms"), 1000);
	struct proc_bg a;
	tail_start(&a, name, NULL, NULL);
	ok(proc_wait(&a, "LOG_MARKER", PROC_WAIT_MS), "connected");
	ASSERT_EQ(rlog_attach(name), 0);
	struct h_tally t = { 0, 0, 0, 0 };
	write_events(1, 3000, &t);
	rlog_detach();
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_CONTAINS(r.out, "\nfile: -\n");
	ASSERT_EQ_U64(h_kv(r.out, "events_written") + h_kv(r.out, "events_lost"), 3000);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), t.written);
	ASSERT_EQ_U64(h_kv(r.out, "realtime_buffers_lost"), 0);
	struct run ar = proc_reap(&a);
	ASSERT_EQ(ar.status, 0);
	uint64_t sum, lb, le;
	ASSERT_EQ_U64(count_text(ar.out, &sum, &lb, &le), t.written);
	run_free(&ar);
}

/* 3: a consumer that does not keep up; at_stop: resumed just before the
 * session stops, so the daemon tells it of its last misses in a DATA_LOSS
 * of its own at the end of the stream. */
/* The end of a consumer that missed blocks: its stderr is the one line
 * that sums what it was told it missed, and the file holds every event
 * written. */
static void missed_end(const char *name, const char *err, uint64_t blocks, uint64_t missed,
		       const char *path, uint64_t written)
{
	char line[256];
	snprintf(line, sizeof line, "ringlog: tail %s: missed %" PRIu64 " blocks (%" PRIu64 " events): "
		 "this consumer did not keep up (the daemon counts them in realtime_buffers_lost)\n",
		 name, blocks, missed);
	ASSERT_STREQ(err, line);
	struct h_summary s;
	h_summarize(path, &s);
	ASSERT_EQ_U64(s.events, written);
	ASSERT_EQ(s.damage, 0);
}

static void slow_consumer(bool at_stop)
{
	const char *name = h_session(at_stop ? "rtslow2" : "rtslow");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path(at_stop ? "rtslow2" : "rtslow"));
	struct proc_bg a;
	start_tailed(name, path, &a, "");
	struct h_tally t = { 0, 0, 0, 0 };
	uint64_t next = write_events(1, 100, &t);
	rlog_flush_thread();
	ok(proc_wait(&a, "seq=100 ", PROC_WAIT_MS), "first events delivered");
	proc_signal(&a, SIGSTOP);
	/* 6 MB while it sleeps: far more than a socket holds. */
	for (int k = 0; k < 30; k++) {
		next = write_events(next, 10000, &t);
		h_ringlog(&r, "flush", name, NULL);
	}
	proc_signal(&a, SIGCONT);
	/* More, so that the consumer is told of what it missed. */
	char want[64];
	for (int k = 0; k < 100 && !at_stop; k++) {
		uint64_t last = next + 99;
		next = write_events(next, 100, &t);
		h_ringlog(&r, "flush", name, NULL);
		snprintf(want, sizeof want, "seq=%" PRIu64 " ", last);
		if (proc_wait(&a, want, 10000))
			break;
	}
	rlog_detach();
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	uint64_t written = h_kv(r.out, "events_written"), rtbl = h_kv(r.out, "realtime_buffers_lost");
	ASSERT_EQ_U64(written, t.written);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), 0);
	ASSERT_EQ_U64(t.lost, 0);
	ok(rtbl > 0, "realtime_buffers_lost %" PRIu64, rtbl);
	struct run ar = proc_reap(&a);
	ASSERT_EQ(ar.status, 1);
	char *ao = ar.out, *ae = ar.err;
	uint64_t sum, blocks, missed;
	uint64_t got = count_text(ao, &sum, &blocks, &missed);
	ASSERT_EQ_U64(blocks, rtbl);
	ASSERT_EQ_U64(got + missed, written);
	missed_end(name, ae, blocks, missed, path, written);
	run_free(&ar);
	unlink(path);
}

/* 3b: the writers of numbered events, {thread, sequence} and 40 bytes
 * (64-byte records: 5 MB in all, more than twice what the stopped
 * consumer's socket can hold, its send buffer at most 2 MiB): ok[i] is 1
 * if the write of sequence i returned 1. */
#define TH_N 40000u
static const uint8_t th_pad[40];
struct th_writer {
	pthread_t id;
	uint64_t th, written;
	uint8_t *ok;
};

static void *th_write(void *arg)
{
	struct th_writer *w = arg;
	for (uint64_t i = 1; i <= TH_N; i++) {
		int rc = RLOG_EVENT(rt_th, w->th, i, th_pad);
		w->ok[i] = rc == 1;
		w->written += rc == 1;
	}
	rlog_flush_thread();
	return NULL;
}

static void stopped_through_stop(void)
{
	const char *name = h_session("rtend");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("rtend"));
	struct proc_bg a;
	start_tailed(name, path, &a, "end: ");
	struct th_writer w[3];
	memset(w, 0, sizeof w);
	for (int k = 0; k < 3; k++) {
		w[k].th = (uint64_t)k;
		w[k].ok = calloc(TH_N + 1, 1);
	}
	/* Thread 0 (this one): 100 events, seen by the consumer. */
	for (uint64_t i = 1; i <= 100; i++) {
		int rc = RLOG_EVENT(rt_th, 0, i, th_pad);
		w[0].ok[i] = rc == 1;
		w[0].written += rc == 1;
	}
	rlog_flush_thread();
	ok(proc_wait(&a, "th=0 seq=100", PROC_WAIT_MS), "end: first events delivered");
	proc_signal(&a, SIGSTOP);
	for (int k = 1; k < 3; k++)
		pthread_create(&w[k].id, NULL, th_write, &w[k]);
	for (int k = 1; k < 3; k++)
		pthread_join(w[k].id, NULL);
	rlog_detach();
	uint64_t written = w[0].written + w[1].written + w[2].written;
	/* Stopped while the consumer still sleeps, its socket full. */
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), written);
	uint64_t rtbl = h_kv(r.out, "realtime_buffers_lost");
	ok(rtbl > 0 && rtbl != UINT64_MAX, "end: realtime_buffers_lost %" PRIu64, rtbl);
	proc_signal(&a, SIGCONT);
	struct run ar = proc_reap(&a);
	ASSERT_EQ(ar.status, 1);
	char *ao = ar.out, *ae = ar.err;
	/* Every event printed was written (returned 1), and printed once. */
	uint64_t got = 0, extra = 0, dup = 0, blocks = 0, missed = 0, loss_lines = 0;
	for (const char *p = ao; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char line[512];
		snprintf(line, sizeof line, "%.*s", (int)(len < 511 ? len : 511), p);
		const char *q = strstr(line, " rt.th ");
		q = q ? strstr(q, " th=") : NULL;
		if (q) {
			char *end;
			uint64_t th = strtoull(q + 4, &end, 10);
			const char *sq = strstr(end, " seq=");
			uint64_t seq = sq ? strtoull(sq + 5, NULL, 10) : 0;
			if (th > 2 || seq == 0 || seq > TH_N || w[th].ok[seq] == 0) {
				extra++;
			} else if (w[th].ok[seq] == 2) {
				dup++;
			} else {
				w[th].ok[seq] = 2;
				got++;
			}
		}
		if (strstr(line, "cause=real_time")) {
			loss_lines++;
			const char *ev = strstr(line, "events="), *b = strstr(line, "blocks=");
			missed += ev ? strtoull(ev + 7, NULL, 10) : 0;
			blocks += b ? strtoull(b + 7, NULL, 10) : 0;
		}
		p = e ? e + 1 : NULL;
	}
	ASSERT_EQ_U64(extra, 0); /* never written */
	ASSERT_EQ_U64(dup, 0);   /* printed twice */
	ok(loss_lines > 0, "end: %" PRIu64 " DATA_LOSS lines of cause real_time", loss_lines);
	ASSERT_EQ_U64(blocks, rtbl);
	diag("end: printed %" PRIu64 ", told missed %" PRIu64 ", written %" PRIu64, got, missed,
	     written);
	ASSERT_EQ_U64(got + missed, written);
	missed_end(name, ae, blocks, missed, path, written);
	run_free(&ar);
	for (int k = 0; k < 3; k++)
		free(w[k].ok);
	unlink(path);
}

/* 4: nobody listening: the file has everything, nothing is counted lost. */
static void no_consumer(void)
{
	const char *name = h_session("rtnone");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("rtnone"));
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--mode", "real-time", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ(rlog_attach(name), 0);
	struct h_tally t = { 0, 0, 0, 0 };
	write_events(1, 2000, &t);
	rlog_detach();
	stop_exact(name, &t, 2000);
	struct h_summary s;
	h_summarize(path, &s);
	ASSERT_EQ_U64(s.events, t.written);
	unlink(path);
}

/* 5: errors. */
static void errors(void)
{
	const char *name = h_session("rtno");
	char line[256];
	h_ringlog(&r, "tail", name, NULL);
	ASSERT_EQ(r.status, 1);
	snprintf(line, sizeof line, "ringlog: tail: no session named '%s'\n", name);
	ASSERT_STREQ(r.err, line);
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("rtno"));
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "tail", name, NULL);
	ASSERT_EQ(r.status, 1);
	snprintf(line, sizeof line, "ringlog: tail: %s: not a real-time session (start it with "
		 "--mode real-time)\n", name);
	ASSERT_STREQ(r.err, line);
	h_ringlog(&r, "stop", name, NULL);
	unlink(path);
	h_ringlog(&r, "tail", "../x", NULL);
	ASSERT_EQ(r.status, 2);
	ASSERT_STREQ(r.err, "ringlog: tail: invalid session name '../x'\n");
	h_ringlog(&r, "tail", NULL);
	ASSERT_EQ(r.status, 2);
	ASSERT_CONTAINS(r.err, "ringlog: tail: missing session NAME\nusage: ringlog tail NAME ");
	h_ringlog(&r, "start", name, "--mode", "circular", "--max-file-size", "1", NULL);
	ASSERT_EQ(r.status, 2);
	ASSERT_STREQ(r.err, "ringlog: start: missing -o FILE\nusage: ringlog start NAME [-o FILE] "
		     "[--mode MODES] [--max-file-size MB] [--buffer-size KB] [--min-buffers N] "
		     "[--max-buffers N] [--buffers N] [--flush-timer T] [--enable LIST] [--mask MASK] "
		     "[--high-water PCT] [--age-limit MIN] [--drain-threads N] [--counters LIST] [--counter-period MS] "
		     "[--system LIST] [--system-pid LIST] [--follow] [--profile-hz N] "
		     "[--sink URL [--host-id ID] [--sink-buffer SIZE] [--sink-chunk SIZE]] "
		     "[--force] | start NAME --resume\n");
	h_ringlog(&r, "start", name, "--mode", "real-time,circular", "--max-file-size", "1", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, "ringlog: start: --max-file-size needs a log file (-o FILE)\n");
	h_ringlog(&r, "start", name, "-o", "/tmp/rlog-%d/x.rlog", "--mode", "newfile",
		  "--max-file-size", "1", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, "ringlog: start: --mode newfile: the %d of '/tmp/rlog-%d/x.rlog' must be "
		     "in the file's name, not in a directory\n");
	h_ringlog(&r, "start", name, "-o", path, "--buffer-size", "1024", "--max-file-size", "1",
		  NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, "ringlog: start: --max-file-size: at least two buffers and the file "
		     "header must fit\n");
	h_ringlog(&r, "query", name, NULL);
	ASSERT_EQ(r.status, 1);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	two_consumers();
	no_file();
	slow_consumer(false);
	slow_consumer(true);
	stopped_through_stop();
	no_consumer();
	errors();
	return done_testing();
}
