/*
 * test_signal_storm - writes from signal handlers never wedge a thread and
 * never make a thread hold a slot past its exit.
 *
 * Part 1: two writer threads write as fast as they can
 * while a third thread sends them SIGUSR1 as fast as it can; the handler
 * writes an event big enough that it often changes buffers (the slow
 * path), so it lands in every step of the interrupted write.  Afterwards,
 * with the storm over, each writer's next write must return 1 (a thread
 * whose in-write flag stayed set would get -EBUSY forever), `ringlog stop`
 * must exit 0 with no producer reported stuck, and the identity must hold.
 *
 * Part 2: short-lived threads (writing, exiting) under a
 * SIGUSR1 storm.  A handler that runs during a thread's exit must not bind
 * the thread again: once every thread has exited, no slot and no buffer
 * may stay held, so a fresh process can write a pool's worth of events
 * with every write returning 1.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

#include "harness.h"
#include "tap.h"

#define STORM_NS 2000000000ull

static struct h_atomic_tally tl;

static void tally(int r)
{
	h_atomic_tally_add(&tl, r);
}

static void tally_reset(void)
{
	h_atomic_tally_reset(&tl);
}

static void on_usr1(int sig)
{
	(void)sig;
	int saved = errno;
	static const uint8_t big[1500];
	tally(rlog_write(1031, big, sizeof big));
	errno = saved;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void block_usr1(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
}

static atomic_int storm_on;
static _Atomic int last_write[2];

static void *writer(void *arg)
{
	int k = (int)(intptr_t)arg;
	uint64_t v[2] = { 0, 0 };
	while (atomic_load(&storm_on)) {
		v[0]++;
		tally(rlog_write(1024, v, sizeof v));
	}
	/* The storm is over: this thread's next write must go through. */
	block_usr1();
	atomic_store(&last_write[k], rlog_write(1024, v, sizeof v));
	tally(atomic_load(&last_write[k]));
	return NULL;
}

static void storm(pthread_t *targets, int n)
{
	/* Only this thread sends; it never takes the signal itself. */
	block_usr1();
	uint64_t end = mono_ns() + STORM_NS;
	while (mono_ns() < end)
		for (int i = 0; i < n; i++)
			pthread_kill(targets[i], SIGUSR1);
}

static void check_stop(const char *name, const char *path)
{
	struct h_run r;
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	if (r.status != 0)
		diag("stop: %s", r.err);
	uint64_t w = atomic_load(&tl.written), l = atomic_load(&tl.lost);
	diag("written %" PRIu64 ", lost %" PRIu64 ", not recorded %" PRIu64, w, l,
	     (uint64_t)atomic_load(&tl.off));
	ASSERT_EQ_U64(atomic_load(&tl.other), 0);
	h_check_identity(&r, path, w, l);
	unlink(path);
}

static void part1(void)
{
	const char *name = h_session("storm1");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("storm1"));
	h_start(name, path, "4", "64");
	ASSERT_EQ(rlog_attach(name), 0);
	tally_reset();
	atomic_store(&storm_on, 1);
	pthread_t w[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&w[i], NULL, writer, (void *)(intptr_t)i);
	storm(w, 2);
	atomic_store(&storm_on, 0);
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	for (int i = 0; i < 2; i++)
		ok(atomic_load(&last_write[i]) != -EBUSY,
		   "writer %d: its write after the storm is not refused as nested (got %d)", i,
		   atomic_load(&last_write[i]));
	rlog_detach();
	check_stop(name, path);
}

static void *short_lived(void *arg)
{
	(void)arg;
	for (uint64_t i = 1; i <= 20; i++) {
		uint64_t v[2] = { i, 0 };
		tally(rlog_write(1024, v, sizeof v));
	}
	return NULL;
}

static atomic_int churn_on;

static void *churner(void *arg)
{
	(void)arg;
	while (atomic_load(&churn_on)) {
		pthread_t th[4];
		for (int i = 0; i < 4; i++)
			pthread_create(&th[i], NULL, short_lived, NULL);
		for (int i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
	}
	return NULL;
}

static void part2(void)
{
	const char *name = h_session("storm2");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("storm2"));
	h_start(name, path, "4", "64");
	ASSERT_EQ(rlog_attach(name), 0);
	tally_reset();
	block_usr1(); /* the main thread only sends */
	atomic_store(&churn_on, 1);
	pthread_t c;
	pthread_create(&c, NULL, churner, NULL);
	/* Signal the whole process: the kernel picks a thread that does not
	 * block SIGUSR1, so the short-lived threads take them, in every
	 * state from creation to exit. */
	uint64_t end = mono_ns() + STORM_NS;
	while (mono_ns() < end)
		kill(getpid(), SIGUSR1);
	atomic_store(&churn_on, 0);
	pthread_join(c, NULL);
	rlog_detach();

	/* Give the daemon time to reap the exited slots (it does so on its
	 * passes, at least every 10 ms); then a fresh process writes. */
	struct timespec ts = { 0, 300000000 };
	nanosleep(&ts, NULL);
	struct h_run q;
	h_ringlog(&q, "query", name, NULL);
	ASSERT_EQ(q.status, 0);
	ASSERT_EQ_U64(h_kv(q.out, "producer_threads"), 0);
	ASSERT_EQ_U64(h_kv(q.out, "free_buffers"), h_kv(q.out, "number_of_buffers"));
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		if (rlog_attach(name) != 0)
			_exit(3);
		int bad = 0;
		/* 64 buffers of 4 KiB hold 16 K records of 16 bytes; write a
		 * quarter of that, slowly enough for the daemon to keep up. */
		for (uint64_t i = 1; i <= 4000; i++) {
			uint64_t v = i;
			if (rlog_write(1026, &v, sizeof v) != 1)
				bad++;
		}
		rlog_detach();
		_exit(bad ? 4 : 0);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "a fresh process writes 4000 events, every one returning 1 (status %d)", st);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		atomic_fetch_add(&tl.written, 4000);
	check_stop(name, path);
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	part1();
	part2();
	return done_testing();
}
