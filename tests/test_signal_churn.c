/*
 * test_signal_churn - the accounting identity with signal handlers that
 * write while threads come and go (docs/DECISIONS.md, "One guard per thread").
 *
 * 4 worker threads, re-created ROUNDS times, each write PER_THREAD 16-byte
 * events with rlog_write, while an interval timer (setitimer, every 200 us)
 * raises SIGALRM and its handler writes one event from whichever thread it
 * interrupts: the first write of a thread (binding), a buffer change, the
 * thread-exit hook, a write on the fast path.  The pool is tiny (16 buffers
 * of 4 KiB), so most writes are lost.  Every return value is counted, and
 * the session's statistics and its file must agree exactly:
 *   events_written == writes that returned 1 == events in the file
 *   events_lost    == writes that returned -ENOBUFS or -EBUSY
 *                  == events in the file's DATA_LOSS records
 * over every one of several sessions, and `ringlog stop` exits 0.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/time.h>

#include "harness.h"
#include "tap.h"

#ifndef SESSIONS
#define SESSIONS 3
#endif
#ifndef ROUNDS
#define ROUNDS 200
#endif
#define WORKERS 4
#define PER_THREAD 2000

static struct h_atomic_tally tl;

static void tally(int r)
{
	h_atomic_tally_add(&tl, r);
}

static void on_alarm(int sig)
{
	(void)sig;
	int saved = errno;
	uint64_t v[2] = { 0xa1a1, 0 };
	tally(rlog_write(1030, v, sizeof v));
	errno = saved;
}

static void *worker(void *arg)
{
	(void)arg;
	for (uint64_t i = 1; i <= PER_THREAD; i++) {
		uint64_t v[2] = { i, 0 };
		tally(rlog_write(1024, v, sizeof v));
	}
	return NULL;
}

static void timer_set(long usec)
{
	struct itimerval it = { { 0, usec }, { 0, usec } };
	setitimer(ITIMER_REAL, &it, NULL);
}

static void one_session(int k)
{
	char tag[32];
	snprintf(tag, sizeof tag, "churn%d", k);
	char name[64], path[256];
	snprintf(name, sizeof name, "%s", h_session(tag));
	snprintf(path, sizeof path, "%s", h_path(tag));
	h_start(name, path, "4", "16");
	ASSERT_EQ(rlog_attach(name), 0);
	h_atomic_tally_reset(&tl);

	timer_set(200);
	for (int round = 0; round < ROUNDS; round++) {
		pthread_t th[WORKERS];
		for (int i = 0; i < WORKERS; i++)
			pthread_create(&th[i], NULL, worker, NULL);
		for (int i = 0; i < WORKERS; i++)
			pthread_join(th[i], NULL);
	}
	timer_set(0);
	/* The main thread took alarms too (it was in pthread_join): its
	 * binding ends here, outside any handler. */
	rlog_detach();

	struct h_run r;
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	if (r.status != 0)
		diag("stop: %s", r.err);
	uint64_t o = atomic_load(&tl.written), l = atomic_load(&tl.lost);
	diag("session %d: returns of 1: %" PRIu64 ", -ENOBUFS/-EBUSY: %" PRIu64 ", 0: %" PRIu64,
	     k, o, l, (uint64_t)atomic_load(&tl.off));
	ok(o + l >= (uint64_t)ROUNDS * WORKERS * PER_THREAD, "every worker write was emitted");
	ASSERT_EQ_U64(atomic_load(&tl.other), 0);
	h_check_identity(&r, path, o, l);
	unlink(path);
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	for (int k = 0; k < SESSIONS; k++)
		one_session(k);
	return done_testing();
}
