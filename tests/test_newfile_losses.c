/*
 * test_newfile_losses - a newfile session whose daemon died, recovered
 * (`stop --force`, then again with `start --resume` and `stop`): the
 * losses its earlier files already report are not reported again in the
 * last one (docs/SESSIONS.md, "Orphans").  A pool of 16 buffers of 4 KiB
 * loses events while its daemon is stopped (SIGSTOP), in the first file
 * and in a later one; the files rotate at 1 MB.  After the recovery the
 * statistics and the files hold exactly what the producer was told:
 * events_written = its writes that returned 1, events_lost = those that
 * returned a loss, the DATA_LOSS records of all the files add up to it,
 * and every written event (payload: its sequence) is in the files once.
 * Then three times each way: the daemon killed (SIGKILL) while a thread
 * writes 3 million events at full speed, once the session writes its
 * third file (it may die in a rotation: the file it had begun, without a
 * whole block 0, is begun again; a buffer it wrote into the file before
 * and had not given back is not written again).
 */
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "atomics.h"
#include "harness.h"
#include "tap.h"

static struct h_run r;
static struct h_tally t;
static uint64_t seq;

static pid_t daemon_of(const char *name)
{
	h_ringlog(&r, "query", name, NULL);
	return (pid_t)h_kv(r.out, "daemon_pid");
}

/* n numbered events, the daemon stopped while they are written (lossy). */
static void burst(const char *name, uint64_t n, bool stopped)
{
	pid_t d = daemon_of(name);
	if (stopped)
		kill(d, SIGSTOP);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t v = ++seq;
		h_tally_add(&t, rlog_write(1024, &v, sizeof v));
	}
	if (stopped)
		kill(d, SIGCONT);
	rlog_flush_thread();
	ASSERT_EQ(h_ringlog(&r, "flush", name, NULL), 0);
}

/* Every file of the series: each written event (its sequence) exactly
 * once across the files, nothing else, and their DATA_LOSS records. */
static void files_hold(const char *pattern_fmt, uint64_t written, uint64_t lost, const char *what)
{
	static uint8_t seen[3000001 / 8 + 1];
	memset(seen, 0, sizeof seen);
	uint64_t events = 0, twice = 0, outside = 0, losses = 0;
	int files = 0;
	for (int i = 1; i < 64; i++) {
		char p[256];
		snprintf(p, sizeof p, pattern_fmt, i);
		struct rlog_reader *rd;
		if (access(p, F_OK) != 0 || rlog_reader_open(p, &rd) < 0)
			break;
		files++;
		struct rlog_event ev;
		while (rlog_reader_next(rd, &ev) == 1) {
			if (ev.from_daemon && !ev.flagged && ev.id == RLOG_ID_DATA_LOSS) {
				struct rlog_data_loss dl;
				memcpy(&dl, ev.payload, sizeof dl);
				losses += dl.events;
				continue;
			}
			if (ev.from_daemon || ev.id != 1024 || ev.length != 8)
				continue;
			uint64_t v;
			memcpy(&v, ev.payload, 8);
			events++;
			if (v == 0 || v > 3000000) {
				outside++;
				continue;
			}
			twice += (seen[v / 8] >> (v % 8)) & 1;
			seen[v / 8] |= (uint8_t)(1u << (v % 8));
		}
		rlog_reader_close(rd);
	}
	ok(files >= 3 && events == written && twice == 0 && outside == 0 && losses == lost,
	   "%s: %d files hold %llu events (written %llu), %llu of them twice, %llu unknown, "
	   "and report %llu lost (lost %llu)",
	   what, files, (unsigned long long)events, (unsigned long long)written,
	   (unsigned long long)twice, (unsigned long long)outside, (unsigned long long)losses,
	   (unsigned long long)lost);
}

/* Starts newfile session name, files pattern of 1 MB, a pool of buffers
 * x 4 KiB; attaches, the producer's counts at 0. */
static void start_series(const char *name, const char *pattern, const char *buffers)
{
	h_ringlog(&r, "start", name, "-o", pattern, "--mode", "newfile", "--max-file-size", "1",
		  "--buffer-size", "4", "--buffers", buffers, "--force", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ(rlog_attach(name), 0);
	memset(&t, 0, sizeof t);
	seq = 0;
}

static void remove_series(const char *pattern)
{
	for (int i = 1; i < 64; i++) {
		char p[256];
		snprintf(p, sizeof p, pattern, i);
		unlink(p);
	}
}

/* Recovers the orphan name: `stop --force`, or `start --resume` and
 * `stop`; then its statistics are the producer's and the files hold
 * them (files_hold); the files removed. */
static void recovered(const char *name, const char *pattern, bool resume, const char *what)
{
	if (resume) {
		h_ringlog(&r, "start", name, "--resume", NULL);
		ok(r.status == 0, "%s: start --resume (%s)", what, r.err);
		h_ringlog(&r, "stop", name, NULL);
	} else {
		h_ringlog(&r, "stop", name, "--force", NULL);
	}
	if (r.status != 0)
		diag("stop: %s", r.err);
	ok(r.status == 0 && h_kv(r.out, "events_written") == t.written &&
		   h_kv(r.out, "events_lost") == t.lost,
	   "%s, %s: events_written %llu, events_lost %llu: the producer's %llu and %llu", what,
	   resume ? "start --resume, stop" : "stop --force",
	   (unsigned long long)h_kv(r.out, "events_written"),
	   (unsigned long long)h_kv(r.out, "events_lost"), (unsigned long long)t.written,
	   (unsigned long long)t.lost);
	files_hold(pattern, t.written, t.lost, what);
	remove_series(pattern);
}

/* A thread writing numbered events while the daemon is killed. */
static _Atomic int writing;
static void *writer(void *arg)
{
	(void)arg;
	for (uint64_t i = 0; i < 3000000; i++) {
		uint64_t v = ++seq;
		h_tally_add(&t, rlog_write(1024, &v, sizeof v));
		if ((i & 1023) == 0)
			for (volatile int k = 0; k < 2000; k++)
				;
	}
	rlog_flush_thread();
	atomic_store(&writing, 0);
	return NULL;
}

/* The daemon killed in the middle of a writer's run, once the session
 * has reached its third file. */
static void killed_while_writing(bool resume, int round)
{
	char name[64], pattern[256], tag[16], what[64];
	snprintf(tag, sizeof tag, "nk%c%d", resume ? 'r' : 'f', round);
	snprintf(name, sizeof name, "%s", h_session(tag));
	snprintf(pattern, sizeof pattern, "/tmp/rlog-test-nk%d-%d-%%d.rlog", resume, (int)getpid());
	start_series(name, pattern, "64");
	atomic_store(&writing, 1);
	pthread_t th;
	ASSERT_EQ(pthread_create(&th, NULL, writer, NULL), 0);
	for (int i = 0; i < 5000; i++) {
		h_ringlog(&r, "query", name, NULL);
		if (h_kv(r.out, "file_index") >= 3 || !atomic_load(&writing))
			break;
		nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
	}
	h_kill_daemon(name);
	pthread_join(th, NULL);
	rlog_detach();
	snprintf(what, sizeof what, "killed while writing, round %d", round);
	recovered(name, pattern, resume, what);
}

/* The daemon died right after it created the next file of the series
 * (here: the current file emptied after the kill): recovery begins that
 * file again, with its file header, block 0 and the metadata copies of
 * the files before it, instead of refusing it ("Bad message"). */
static void begun_again(void)
{
	char name[64], pattern[256], cur[256];
	snprintf(name, sizeof name, "%s", h_session("nlb"));
	snprintf(pattern, sizeof pattern, "/tmp/rlog-test-nlb-%d-%%d.rlog", (int)getpid());
	start_series(name, pattern, "64");
	h_ringlog(&r, "query", name, NULL);
	for (int k = 0; k < 40 && h_kv(r.out, "file_index") < 3; k++) {
		burst(name, 5000, false);
		h_ringlog(&r, "query", name, NULL);
	}
	uint64_t n = h_kv(r.out, "file_index");
	ok(n >= 3 && n < 64, "the session writes its file %llu", (unsigned long long)n);
	h_kill_daemon(name);
	/* 1,000 more, held in the buffers for the recovery to drain. */
	uint64_t before = t.written;
	for (int i = 0; i < 1000; i++) {
		uint64_t v = ++seq;
		h_tally_add(&t, rlog_write(1024, &v, sizeof v));
	}
	rlog_flush_thread();
	rlog_detach();
	ok(t.written - before == 1000, "1000 events held with the daemon dead");
	snprintf(cur, sizeof cur, pattern, (int)n);
	ASSERT_EQ(truncate(cur, 0), 0);
	h_ringlog(&r, "stop", name, "--force", NULL);
	ok(r.status == 0, "stop --force with the current file empty: exit %d (%s)", r.status, r.err);
	struct h_summary sm;
	h_summarize(cur, &sm);
	ok(sm.open_err == 0 && sm.damage == 0 && sm.markers == 1 && sm.events == 1000,
	   "file %llu begun again: it reads (%d), undamaged (%zu), its block 0, the 1000 events "
	   "held (%llu)", (unsigned long long)n, sm.open_err, sm.damage,
	   (unsigned long long)sm.events);
	/* Self-contained: the thread's and process's names copied into it. */
	char comm[32] = "", line[64];
	FILE *f = fopen("/proc/self/comm", "r");
	if (f) {
		if (fgets(comm, sizeof comm, f) == NULL)
			comm[0] = '\0';
		fclose(f);
	}
	comm[strcspn(comm, "\n")] = '\0';
	h_ringlog(&r, "stats", cur, NULL);
	snprintf(line, sizeof line, "  %s  %s", comm, comm);
	ok(r.status == 0 && comm[0] && strstr(r.out, line) != NULL,
	   "file %llu names the thread and the process (%s): %s", (unsigned long long)n, comm, r.out);
	remove_series(pattern);
}

static void one(bool resume)
{
	char name[64], pattern[256];
	snprintf(name, sizeof name, "%s", h_session(resume ? "nlr" : "nlf"));
	snprintf(pattern, sizeof pattern, "/tmp/rlog-test-nl%d-%d-%%d.rlog", resume, (int)getpid());
	start_series(name, pattern, "16");
	burst(name, 20000, true);  /* losses in file 1 */
	for (int k = 0; k < 40; k++)
		burst(name, 10000, false); /* some lost too: the pool holds 2,700 */
	burst(name, 20000, true);  /* losses in the last file */
	burst(name, 1000, false);
	ok(t.lost > 0 && t.other == 0 && t.off == 0, "%s: %llu written, %llu lost", name,
	   (unsigned long long)t.written, (unsigned long long)t.lost);
	h_ringlog(&r, "query", name, NULL);
	ok(h_kv(r.out, "file_index") >= 3, "the session writes its file %llu",
	   (unsigned long long)h_kv(r.out, "file_index"));
	rlog_detach();
	h_kill_daemon(name);
	recovered(name, pattern, resume, "losses in the first and the last file");
}

int main(void)
{
	one(false);
	one(true);
	begun_again();
	for (int round = 1; round <= 3; round++) {
		killed_while_writing(false, round);
		killed_while_writing(true, round);
	}
	return done_testing();
}
