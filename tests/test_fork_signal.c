/*
 * test_fork_signal - a producer that forks, and a producer interrupted by a
 * signal handler that writes too.
 *  (a) The parent writes, forks, the child writes M events under its own
 *      pid/tid and exits, the parent writes more: both streams are whole,
 *      in order, and separate.
 *  (b) A thread writes in a loop while another sends it SIGUSR1 over and
 *      over; the handler writes an event.  A handler write that lands
 *      inside a write of the thread returns -EBUSY and is counted lost
 *      (cause NESTED); every other returns 1.  The file says exactly that.
 */
#include "harness.h"

#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>

#include "tap.h"

#define PARENT_BEFORE 1000u
#define PARENT_AFTER 1500u
#define CHILD_EVENTS 2000u

static void fork_case(void)
{
	const char *name = h_session("fork");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("fork"));
	h_start(name, path, "16", "64");
	ASSERT_EQ(rlog_attach(name), 0);

	uint64_t seq = 0, ones = 0;
	for (unsigned i = 0; i < PARENT_BEFORE; i++) {
		uint64_t v[2] = { ++seq, 1 };
		ones += rlog_write(1024, v, sizeof v) == 1;
	}
	fflush(NULL);
	pid_t child = fork();
	BAIL_IF(child < 0, "fork");
	if (child == 0) {
		/* The child's thread binds anew: its own slot and buffers. */
		uint64_t n = 0;
		for (uint64_t i = 1; i <= CHILD_EVENTS; i++) {
			uint64_t v[2] = { i, 2 };
			n += rlog_write(1024, v, sizeof v) == 1;
		}
		struct rlog_thread_stats st;
		rlog_thread_stats(&st);
		exit(n == CHILD_EVENTS && st.events_written == CHILD_EVENTS ? 0 : 3);
	}
	for (unsigned i = 0; i < PARENT_AFTER; i++) {
		uint64_t v[2] = { ++seq, 1 };
		ones += rlog_write(1024, v, sizeof v) == 1;
	}
	int st;
	waitpid(child, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child wrote %u events (status 0x%x)",
	   CHILD_EVENTS, st);
	ASSERT_EQ_U64(ones, PARENT_BEFORE + PARENT_AFTER);

	struct h_run r;
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");
	uint64_t total = PARENT_BEFORE + PARENT_AFTER + CHILD_EVENTS;
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), total);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), 0);
	ASSERT_EQ_U64(h_kv(r.out, "bytes_written"), total * 24);

	struct h_summary s;
	h_summarize(path, &s);
	ASSERT_EQ(s.open_err, 0);
	ASSERT_EQ_U64(s.damage, 0);
	ASSERT_EQ_U64(s.events, total);
	ASSERT_EQ_U64(s.time_errors, 0);
	ASSERT_EQ((int)s.nthreads, 2);
	struct h_thread *pt = NULL, *ct = NULL;
	for (size_t i = 0; i < s.nthreads; i++) {
		if (s.th[i].pid == (uint32_t)getpid() && s.th[i].tid == (uint32_t)getpid())
			pt = &s.th[i];
		if (s.th[i].pid == (uint32_t)child && s.th[i].tid == (uint32_t)child)
			ct = &s.th[i];
	}
	if (ok(pt != NULL, "the parent's stream is in the file")) {
		ASSERT_EQ_U64(pt->events, PARENT_BEFORE + PARENT_AFTER);
		ASSERT_EQ_U64(pt->last_seq, PARENT_BEFORE + PARENT_AFTER);
		ASSERT_EQ_U64(pt->order_errors, 0);
	}
	if (ok(ct != NULL, "the child's stream is in the file under its pid")) {
		ASSERT_EQ_U64(ct->events, CHILD_EVENTS);
		ASSERT_EQ_U64(ct->last_seq, CHILD_EVENTS);
		ASSERT_EQ_U64(ct->order_errors, 0);
	}

	/* Payload check: the second word says who wrote it. */
	struct rlog_reader *rd;
	ASSERT_EQ(rlog_reader_open(path, &rd), 0);
	struct rlog_event ev;
	uint64_t mismatched = 0;
	while (rlog_reader_next(rd, &ev) == 1) {
		if (ev.from_daemon || h_is_metadata(&ev))
			continue;
		uint64_t v[2];
		memcpy(v, ev.payload, sizeof v);
		if (v[1] != (ev.pid == (uint32_t)child ? 2u : 1u))
			mismatched++;
	}
	rlog_reader_close(rd);
	ASSERT_EQ_U64(mismatched, 0);
	rlog_detach();
	unlink(path);
}

#define SIGNALS 3000u

static _Atomic uint64_t h_ones, h_busy, h_zero, h_other, h_calls;
static _Atomic int loop_done, writer_ready;

static void on_usr1(int sig)
{
	(void)sig;
	int saved = errno;
	uint32_t v = (uint32_t)atomic_fetch_add(&h_calls, 1);
	int r = rlog_write(1025, &v, sizeof v);
	if (r == 1)
		atomic_fetch_add(&h_ones, 1);
	else if (r == -EBUSY || r == -ENOBUFS)
		atomic_fetch_add(&h_busy, 1); /* nested, or the pool full under load */
	else if (r == 0)
		atomic_fetch_add(&h_zero, 1);
	else
		atomic_fetch_add(&h_other, 1);
	errno = saved;
}

struct loop {
	uint32_t tid;
	uint64_t iterations;
	struct h_tally t;
	struct rlog_thread_stats st;
};

static void *writer(void *arg)
{
	struct loop *l = arg;
	l->tid = (uint32_t)syscall(SYS_gettid);
	atomic_store(&writer_ready, 1);
	volatile unsigned spin = 0;
	while (!atomic_load_explicit(&loop_done, memory_order_relaxed)) {
		uint64_t seq = ++l->iterations;
		h_tally_add(&l->t, rlog_write(1024, &seq, sizeof seq));
		/* Vary where the signal lands: inside a write (nested), in
		 * this loop, or at the return of a syscall (not nested). */
		for (unsigned k = 0; k < (unsigned)(seq % 61); k++)
			spin++;
		if (seq % 512 == 0)
			sched_yield();
	}
	/* Block the signal before reading the stats: they must not move. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	rlog_thread_stats(&l->st);
	return NULL;
}

static void signal_case(void)
{
	const char *name = h_session("sig");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("sig"));
	/* 16 MiB: room for a million events if the daemon falls behind (on a
	 * loaded machine the loop can outrun it: those losses are counted). */
	h_start(name, path, "16", "1024");
	ASSERT_EQ(rlog_attach(name), 0);

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	/* Only the writer takes SIGUSR1. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	struct loop l;
	memset(&l, 0, sizeof l);
	pthread_t th;
	sigset_t none;
	sigemptyset(&none);
	pthread_sigmask(SIG_SETMASK, &none, NULL); /* the writer inherits this */
	BAIL_IF(pthread_create(&th, NULL, writer, &l) != 0, "pthread_create");
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	while (!atomic_load(&writer_ready))
		;
	/* One signal at a time: each is handled before the next is sent. */
	uint64_t sent = 0;
	/* The wait yields: on a loaded 2-core machine a spinning sender took
	 * the core the writer needed to run its handler (2,998 of 3,000 in
	 * 10 s once). */
	uint64_t deadline = (uint64_t)time(NULL) + 30;
	while (sent < SIGNALS && (uint64_t)time(NULL) < deadline) {
		if (pthread_kill(th, SIGUSR1) != 0)
			break;
		sent++;
		while (atomic_load(&h_calls) < sent && (uint64_t)time(NULL) < deadline)
			sched_yield();
	}
	atomic_store(&loop_done, 1);
	pthread_join(th, NULL);
	uint64_t hones = atomic_load(&h_ones), hbusy = atomic_load(&h_busy);
	diag("signals %" PRIu64 ", loop writes %" PRIu64 ": handler writes %" PRIu64
	     ", lost (-EBUSY, -ENOBUFS) %" PRIu64, sent, l.iterations, hones, hbusy);
	ASSERT_EQ_U64(sent, SIGNALS);
	ASSERT_EQ_U64(atomic_load(&h_calls), SIGNALS);
	ASSERT_EQ_U64(hones + hbusy, SIGNALS); /* hbusy: -EBUSY, or -ENOBUFS */
	ok(hones > 0, "some handler writes were not nested (%" PRIu64 ")", hones);
	ASSERT_EQ_U64(atomic_load(&h_zero), 0);
	ASSERT_EQ_U64(atomic_load(&h_other), 0);
	ASSERT_EQ_U64(l.t.written + l.t.lost, l.iterations);
	ASSERT_EQ_U64(l.t.off + l.t.other, 0);
	ASSERT_EQ_U64(l.st.events_written, l.t.written + hones);
	ASSERT_EQ_U64(l.st.events_lost, l.t.lost + hbusy);

	struct h_run r;
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), l.t.written + hones);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), l.t.lost + hbusy);
	ASSERT_EQ_U64(h_kv(r.out, "bytes_lost"), l.t.lost * 16 + hbusy * 12);
	ASSERT_EQ_U64(h_kv(r.out, "bytes_written"), l.t.written * 16 + hones * 12);
	ASSERT_EQ_U64(h_kv(r.out, "corrupt_buffers"), 0);

	struct h_summary s;
	h_summarize(path, &s);
	ASSERT_EQ(s.open_err, 0);
	ASSERT_EQ_U64(s.damage, 0);
	ASSERT_EQ_U64(s.time_errors, 0);
	ASSERT_EQ_U64(s.events, l.t.written + hones);
	ASSERT_EQ_U64(s.loss_events, l.t.lost + hbusy);
	ASSERT_EQ_U64(s.loss_by_cause[RLOG_LOSS_NESTED], hbusy);
	ASSERT_EQ_U64(s.loss_by_cause[RLOG_LOSS_NO_BUFFER], l.t.lost);
	ASSERT_EQ_U64(s.loss_bytes, l.t.lost * 16 + hbusy * 12);
	ASSERT_EQ((int)s.nthreads, 1);
	ASSERT_EQ_U64(s.th[0].tid, l.tid);
	ASSERT_EQ_U64(s.th[0].events, l.t.written + hones);
	ASSERT_EQ_U64(s.th[0].order_errors, 0); /* loop events, in order around the handler's */
	ASSERT_EQ_U64(s.th[0].loss_events, l.t.lost + hbusy);

	/* Handler events: exactly the ones that returned 1, each once. */
	struct rlog_reader *rd;
	ASSERT_EQ(rlog_reader_open(path, &rd), 0);
	struct rlog_event ev;
	uint64_t hev = 0, bad = 0;
	while (rlog_reader_next(rd, &ev) == 1)
		if (!ev.from_daemon && ev.id == 1025)
			hev += ev.length == 4 ? 1 : (bad++, 0);
	rlog_reader_close(rd);
	ASSERT_EQ_U64(hev, hones);
	ASSERT_EQ_U64(bad, 0);
	rlog_detach();
	unlink(path);
}

int main(void)
{
	fork_case();
	signal_case();
	return done_testing();
}
