/*
 * test_multi_session - one process recording into several sessions at once
 * (docs/SESSIONS.md, "Several sessions"; ETW lets a provider feed up to 8 sessions):
 *   - A enables category 2, B category 5: declared events of category 2
 *     reach A only, category 5 B only, raw writes both; each file has the
 *     schema and the thread and process names of what it holds;
 *   - under tiny pools and a signal storm, with several threads, each
 *     session's accounting is exact on its own: its events written + lost
 *     equal the writes of its category that returned 1, -ENOBUFS or -EBUSY;
 *   - a fork child records into both;
 *   - rlog_attach_add's limits (RLOG_MAX_SESSIONS, another clock),
 *     rlog_detach_session, and rlog_attach replacing the set.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>

#include "harness.h"
#include "ringlog/event.h"
#include "tap.h"

#define PING_FIELDS(F) F(U64, n)
RLOG_DEFINE_EVENT(ping_a, 1200, "ping.a", 2, PING_FIELDS)
RLOG_DEFINE_EVENT(ping_b, 1201, "ping.b", 5, PING_FIELDS)

static struct h_run r;

struct counts {
	uint64_t events, schema_a, schema_b, raw, pnames, tnames;
};

static void count_file(const char *path, struct counts *c, uint64_t *by_id, size_t nid)
{
	memset(c, 0, sizeof *c);
	struct rlog_reader *rd;
	if (rlog_reader_open(path, &rd) < 0)
		return;
	struct rlog_event ev;
	while (rlog_reader_next(rd, &ev) == 1) {
		if (ev.from_daemon)
			continue;
		if (!ev.flagged && ev.id == RLOG_ID_EVENT_SCHEMA && ev.length >= 2) {
			uint16_t id;
			memcpy(&id, ev.payload, 2);
			c->schema_a += id == 1200;
			c->schema_b += id == 1201;
			continue;
		}
		if (!ev.flagged && ev.id == RLOG_ID_PROCESS_NAME) {
			c->pnames++;
			continue;
		}
		if (!ev.flagged && ev.id == RLOG_ID_THREAD_NAME) {
			c->tnames++;
			continue;
		}
		c->events++;
		c->raw += ev.id == 1024;
		if (ev.id < nid)
			by_id[ev.id]++;
	}
	rlog_reader_close(rd);
}

/* Sessions tagged ta and tb started (names in a and b, 64 bytes; their
 * files in pa and pb, 256 bytes): A asks for category 2, B for 5; kb and
 * bufs, if given, their buffer size and pool. */
static void start2(const char *ta, const char *tb, char *a, char *pa, char *b, char *pb,
		   const char *kb, const char *bufs)
{
	snprintf(a, 64, "%s", h_session(ta));
	snprintf(pa, 256, "%s", h_path(ta));
	snprintf(b, 64, "%s", h_session(tb));
	snprintf(pb, 256, "%s", h_path(tb));
	unlink(pa);
	unlink(pb);
	if (kb)
		h_ringlog(&r, "start", a, "-o", pa, "--mask", "0x4", "--buffer-size", kb, "--buffers",
			  bufs, NULL);
	else
		h_ringlog(&r, "start", a, "-o", pa, "--mask", "0x4", NULL);
	BAIL_IF(r.status != 0, "start %s: %s", a, r.err);
	if (kb)
		h_ringlog(&r, "start", b, "-o", pb, "--mask", "0x20", "--buffer-size", kb, "--buffers",
			  bufs, NULL);
	else
		h_ringlog(&r, "start", b, "-o", pb, "--mask", "0x20", NULL);
	BAIL_IF(r.status != 0, "start %s: %s", b, r.err);
}

static uint64_t stopped_written, stopped_lost;

static void stop1(const char *name)
{
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	if (r.status)
		diag("%s", r.err);
	stopped_written = h_kv(r.out, "events_written");
	stopped_lost = h_kv(r.out, "events_lost");
}

static void routing(void)
{
	char a[64], pa[256], b[64], pb[256];
	start2("msA", "msB", a, pa, b, pb, NULL, NULL);
	ASSERT_EQ(rlog_attach(a), 0);
	ASSERT_EQ(rlog_attach_add(b), 0);
	ASSERT_EQ(rlog_attach_add(b), 0); /* already: nothing changes */
	rlog_thread_name("router");
	for (uint64_t i = 1; i <= 100; i++) {
		ASSERT_EQ(RLOG_EVENT(ping_a, i) == 1 ? 0 : 1, 0);
		ASSERT_EQ(RLOG_EVENT(ping_b, i) == 1 ? 0 : 1, 0);
	}
	uint64_t v = 7;
	for (int i = 0; i < 50; i++)
		ASSERT_EQ(rlog_write(1024, &v, sizeof v) == 1 ? 0 : 1, 0);
	/* A fork child records into both too, under its own pid. */
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int bad = 0;
		for (uint64_t i = 1; i <= 10; i++)
			bad += RLOG_EVENT(ping_a, i) != 1;
		bad += rlog_write(1024, &v, sizeof v) != 1;
		_exit(bad);
	}
	int st;
	waitpid(pid, &st, 0);
	ASSERT_EQ(WEXITSTATUS(st), 0);
	ASSERT_EQ(rlog_detach_session(a), 0);
	ASSERT_EQ(rlog_detach_session(a), -ENOENT);
	/* Only B now: the one-session fast path, category 2 off there. */
	ASSERT_EQ(RLOG_EVENT(ping_a, 999), 0);
	ASSERT_EQ(RLOG_EVENT(ping_b, 999), 1);
	rlog_detach();
	uint64_t ids_a[1300] = { 0 }, ids_b[1300] = { 0 };
	struct counts ca, cb;
	stop1(a);
	ASSERT_EQ_U64(stopped_written, 100 + 50 + 10 + 1);
	ASSERT_EQ_U64(stopped_lost, 0);
	stop1(b);
	ASSERT_EQ_U64(stopped_written, 100 + 50 + 1 + 1);
	ASSERT_EQ_U64(stopped_lost, 0);
	count_file(pa, &ca, ids_a, 1300);
	count_file(pb, &cb, ids_b, 1300);
	ASSERT_EQ_U64(ids_a[1200], 110);
	ASSERT_EQ_U64(ids_a[1201], 0);
	ASSERT_EQ_U64(ids_a[1024], 51);
	ASSERT_EQ_U64(ids_b[1200], 0);
	ASSERT_EQ_U64(ids_b[1201], 101);
	ASSERT_EQ_U64(ids_b[1024], 51);
	/* One schema per type and process in each file that has its events. */
	ASSERT_EQ_U64(ca.schema_a, 2); /* the parent's and the child's */
	ASSERT_EQ_U64(ca.schema_b, 0);
	ASSERT_EQ_U64(cb.schema_b, 1);
	ASSERT_EQ_U64(cb.schema_a, 0);
	ok(ca.pnames >= 2 && cb.pnames >= 2, "each file names both processes (%" PRIu64
	   ", %" PRIu64 ")", ca.pnames, cb.pnames);
	ok(ca.tnames >= 1 && cb.tnames >= 1, "each file names the thread");
	unlink(pa);
	unlink(pb);
}

/* Per-session identity under loss: category-2 writes are A's, category-5
 * writes B's. */
static _Atomic uint64_t emitted_a, emitted_b, written_a, written_b;

static void tally(int r, _Atomic uint64_t *emitted, _Atomic uint64_t *written)
{
	if (r == 1 || r == -ENOBUFS || r == -EBUSY)
		atomic_fetch_add(emitted, 1);
	if (r == 1)
		atomic_fetch_add(written, 1);
}

static void on_alarm(int sig)
{
	(void)sig;
	int saved = errno;
	tally(RLOG_EVENT(ping_a, 0xa1), &emitted_a, &written_a);
	tally(RLOG_EVENT(ping_b, 0xb1), &emitted_b, &written_b);
	errno = saved;
}

static void *worker(void *arg)
{
	(void)arg;
	for (uint64_t i = 1; i <= 20000; i++) {
		tally(RLOG_EVENT(ping_a, i), &emitted_a, &written_a);
		tally(RLOG_EVENT(ping_b, i), &emitted_b, &written_b);
	}
	return NULL;
}

static void loss(void)
{
	char a[64], pa[256], b[64], pb[256];
	start2("msC", "msD", a, pa, b, pb, "4", "8");
	ASSERT_EQ(rlog_attach(a), 0);
	ASSERT_EQ(rlog_attach_add(b), 0);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { { 0, 300 }, { 0, 300 } };
	setitimer(ITIMER_REAL, &it, NULL);
	for (int round = 0; round < 20; round++) {
		pthread_t th[3];
		for (int i = 0; i < 3; i++)
			pthread_create(&th[i], NULL, worker, NULL);
		for (int i = 0; i < 3; i++)
			pthread_join(th[i], NULL);
	}
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_IGN);
	rlog_detach();
	uint64_t ids[1300] = { 0 };
	struct counts c;
	stop1(a);
	diag("A: emitted %" PRIu64 " written %" PRIu64 " (stop: written %" PRIu64 " lost %" PRIu64 ")",
	     (uint64_t)emitted_a, (uint64_t)written_a, stopped_written, stopped_lost);
	ASSERT_EQ_U64(stopped_written, written_a);
	ASSERT_EQ_U64(stopped_written + stopped_lost, emitted_a);
	count_file(pa, &c, ids, 1300);
	ASSERT_EQ_U64(ids[1200], written_a);
	ASSERT_EQ_U64(ids[1201], 0);
	memset(ids, 0, sizeof ids);
	stop1(b);
	diag("B: emitted %" PRIu64 " written %" PRIu64 " (stop: written %" PRIu64 " lost %" PRIu64 ")",
	     (uint64_t)emitted_b, (uint64_t)written_b, stopped_written, stopped_lost);
	ASSERT_EQ_U64(stopped_written, written_b);
	ASSERT_EQ_U64(stopped_written + stopped_lost, emitted_b);
	count_file(pb, &c, ids, 1300);
	ASSERT_EQ_U64(ids[1201], written_b);
	ASSERT_EQ_U64(ids[1200], 0);
	unlink(pa);
	unlink(pb);
}

static void limits(void)
{
	char names[10][64], paths[10][256];
	for (int i = 0; i < 9; i++) {
		char tag[16];
		snprintf(tag, sizeof tag, "lim%d", i);
		snprintf(names[i], sizeof names[i], "%s", h_session(tag));
		snprintf(paths[i], sizeof paths[i], "%s", h_path(tag));
		h_start(names[i], paths[i], "4", "4");
	}
	ASSERT_EQ(rlog_attach(names[0]), 0);
	for (int i = 1; i < RLOG_MAX_SESSIONS; i++)
		ASSERT_EQ(rlog_attach_add(names[i]), 0);
	ASSERT_EQ(rlog_attach_add(names[8]), -E2BIG);
	uint64_t v = 1;
	ASSERT_EQ(rlog_write(1024, &v, sizeof v), 1);
	/* A session that keeps another clock. */
	char mono[64], pmono[256];
	snprintf(mono, sizeof mono, "%s", h_session("limmono"));
	snprintf(pmono, sizeof pmono, "%s", h_path("limmono"));
	unlink(pmono);
	setenv("RINGLOG_CLOCK", "monotonic", 1);
	h_ringlog(&r, "start", mono, "-o", pmono, NULL);
	unsetenv("RINGLOG_CLOCK");
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ(rlog_detach_session(names[7]), 0);
	ASSERT_EQ(rlog_attach_add(mono), -EXDEV);
	/* rlog_attach replaces the set: the list form too. */
	char two[140];
	snprintf(two, sizeof two, "%s,%s", names[1], names[2]);
	ASSERT_EQ(rlog_attach(two), 0);
	ASSERT_EQ(rlog_write(1024, &v, sizeof v), 1);
	ASSERT_EQ(rlog_attach("a,,b"), -EINVAL);
	rlog_detach();
	uint64_t want[9] = { 1, 2, 2, 1, 1, 1, 1, 1, 0 };
	for (int i = 0; i < 9; i++) {
		stop1(names[i]);
		ok(stopped_written == want[i], "session %d: %" PRIu64 " events (want %" PRIu64 ")", i,
		   stopped_written, want[i]);
		unlink(paths[i]);
	}
	h_ringlog(&r, "stop", mono, NULL);
	unlink(pmono);
}

/* A category one session enables after a declared type's first events
 * went to the other only: its file gets the type's schema before its
 * first event of it (each session's schema is its own, and a type
 * written while the process is in several sessions is never made
 * "registered" for the inline path, which would skip it). */
static void late_category(void)
{
	char a[64], pa[256], b[64], pb[256];
	start2("mlA", "mlB", a, pa, b, pb, NULL, NULL);
	ASSERT_EQ(rlog_attach(a), 0);
	ASSERT_EQ(rlog_attach_add(b), 0);
	for (uint64_t i = 1; i <= 100; i++)
		ASSERT_EQ(RLOG_EVENT(ping_a, i), 1);
	h_ringlog(&r, "update", b, "--mask", "0x24", NULL);
	ASSERT_EQ(r.status, 0);
	for (uint64_t i = 101; i <= 200; i++)
		ASSERT_EQ(RLOG_EVENT(ping_a, i), 1);
	rlog_detach();
	stop1(a);
	ASSERT_EQ_U64(stopped_written, 200);
	stop1(b);
	ASSERT_EQ_U64(stopped_written, 100);
	uint64_t ids_a[1300] = { 0 }, ids_b[1300] = { 0 };
	struct counts ca, cb;
	count_file(pa, &ca, ids_a, 1300);
	count_file(pb, &cb, ids_b, 1300);
	ASSERT_EQ_U64(ids_a[1200], 200);
	ASSERT_EQ_U64(ids_b[1200], 100);
	ASSERT_EQ_U64(ca.schema_a, 1);
	ASSERT_EQ_U64(cb.schema_a, 1); /* B's file can name its ping.a events */
	struct h_run d;
	h_ringlog(&d, "dump", pb, NULL);
	ok(strstr(d.out, "ping.a") != NULL, "dump of B names ping.a");
	unlink(pa);
	unlink(pb);
}

int main(void)
{
	routing();
	late_category();
	loss();
	limits();
	return done_testing();
}
