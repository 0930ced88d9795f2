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
 */
#include <signal.h>

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

/* Every file of the series: events, their sequences once each, losses. */
static void files_hold(const char *pattern_fmt, uint64_t written, uint64_t lost, const char *what)
{
	uint64_t events = 0, losses = 0, order = 0, last = 0;
	int files = 0;
	for (int i = 1; i < 64; i++) {
		char p[256];
		snprintf(p, sizeof p, pattern_fmt, i);
		if (access(p, F_OK) != 0)
			break;
		struct h_summary s;
		h_summarize(p, &s);
		files++;
		events += s.events;
		losses += s.loss_events;
		for (size_t k = 0; k < s.nthreads; k++) {
			order += s.th[k].order_errors + (s.th[k].events && s.th[k].last_seq <= last);
			if (s.th[k].events)
				last = s.th[k].last_seq;
		}
	}
	ok(files >= 3 && events == written && losses == lost && order == 0,
	   "%s: %d files hold %llu events (written %llu), each once and in order (%llu out), "
	   "and report %llu lost (lost %llu)",
	   what, files, (unsigned long long)events, (unsigned long long)written,
	   (unsigned long long)order, (unsigned long long)losses, (unsigned long long)lost);
}

static void one(bool resume)
{
	char name[64], pattern[256], fmt[256];
	snprintf(name, sizeof name, "%s", h_session(resume ? "nlr" : "nlf"));
	snprintf(pattern, sizeof pattern, "/tmp/rlog-test-nl%d-%d-%%d.rlog", resume, (int)getpid());
	snprintf(fmt, sizeof fmt, "/tmp/rlog-test-nl%d-%d-%%d.rlog", resume, (int)getpid());
	h_ringlog(&r, "start", name, "-o", pattern, "--mode", "newfile", "--max-file-size", "1",
		  "--buffer-size", "4", "--buffers", "16", "--force", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ(rlog_attach(name), 0);
	memset(&t, 0, sizeof t);
	seq = 0;
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
	if (resume) {
		h_ringlog(&r, "start", name, "--resume", NULL);
		ASSERT_EQ(r.status, 0);
		h_ringlog(&r, "stop", name, NULL);
	} else {
		h_ringlog(&r, "stop", name, "--force", NULL);
	}
	ok(r.status == 0 && h_kv(r.out, "events_written") == t.written &&
		   h_kv(r.out, "events_lost") == t.lost,
	   "%s: events_written %llu, events_lost %llu: the producer's %llu and %llu",
	   resume ? "start --resume, stop" : "stop --force",
	   (unsigned long long)h_kv(r.out, "events_written"),
	   (unsigned long long)h_kv(r.out, "events_lost"), (unsigned long long)t.written,
	   (unsigned long long)t.lost);
	files_hold(fmt, t.written, t.lost, resume ? "after --resume" : "after stop --force");
	for (int i = 1; i < 64; i++) {
		char p[256];
		snprintf(p, sizeof p, fmt, i);
		unlink(p);
	}
}

int main(void)
{
	one(false);
	one(true);
	return done_testing();
}
