/*
 * test_protocol_signals - a signal handler's write at each named step of
 * the producer protocol (src/lib/thread.c draws the states), forced with
 * the library's test hook (rlog__test_hook), plus re-attaching with bound
 * threads (docs/FORMAT.md, "A thread's states and its guard").  Every case checks the return
 * values against the session's statistics and its file: emitted = written
 * + lost, exactly, and `ringlog stop` exits 0.
 *
 *   1. A handler whose write takes the slow path runs just after an outer
 *      slow-path write released its guard (the old code left the busy flag
 *      set for good there): the thread's later writes return 1.
 *   1b. A handler lands while the guard is held, bound: -EBUSY, counted
 *      in the slot.
 *   2. A handler lands while the thread binds and no slot is free (the
 *      signal is held while signals are blocked and delivered when the bind
 *      has failed): -EBUSY, counted in the process entry (the old code
 *      parked it and never counted it).
 *   3. Then the process forks: the child's writes are counted once, the
 *      parent's nested loss is not counted again.
 *   4. A handler lands while the thread-exit hook unbinds (held, then
 *      delivered at the unblock): its write returns 0 and does not bind the
 *      thread again, so no slot and no buffer stays held after the exit.
 *  10. After rlog_attach(B), a thread bound to A writes its next events
 *      into B.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>

#include "harness.h"
#include "lib/producer.h"
#include "tap.h"

static struct h_atomic_tally tl;

static void tally(int r)
{
	h_atomic_tally_add(&tl, r);
}

static void tally_reset(void)
{
	h_atomic_tally_reset(&tl);
}

/* What the handler's write returned, and how many handlers ran. */
static _Atomic int handler_ret, handler_runs;
static _Atomic size_t handler_len = 16;

static void on_usr1(int sig)
{
	(void)sig;
	static uint8_t buf[3000];
	int r = rlog_write(1040, buf, atomic_load(&handler_len));
	atomic_store(&handler_ret, r);
	atomic_fetch_add(&handler_runs, 1);
	tally(r);
}

/* The hook raises SIGUSR1 once, at hook_point, on the thread armed. */
static _Atomic int hook_point;
static _Thread_local bool hook_armed;

static void hook(int point)
{
	if (!hook_armed || point != atomic_load(&hook_point))
		return;
	hook_armed = false;
	raise(SIGUSR1);
}

static void arm(int point)
{
	atomic_store(&hook_point, point);
	hook_armed = true;
}

static void start(const char *tag, const char *kb, const char *buffers, char *name, char *path)
{
	snprintf(name, 64, "%s", h_session(tag));
	snprintf(path, 256, "%s", h_path(tag));
	h_start(name, path, kb, buffers);
	tally_reset();
}

/* Stops the session and checks the identity against the tally. */
static void stop_check(const char *name, const char *path, uint64_t extra_written)
{
	struct h_run r;
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	if (r.status != 0)
		diag("stop: %s", r.err);
	uint64_t w = atomic_load(&tl.written) + extra_written, l = atomic_load(&tl.lost);
	ASSERT_EQ_U64(atomic_load(&tl.other), 0);
	h_check_identity(&r, path, w, l);
	unlink(path);
}

static int write16(uint64_t v)
{
	uint64_t p[2] = { v, 0 };
	int r = rlog_write(1024, p, sizeof p);
	tally(r);
	return r;
}

/* 1: the guard released, then a handler whose write changes buffers. */
static void case_leave(void)
{
	char name[64], path[256];
	/* 4 KiB buffers: 3000-byte records change buffers often; 256 of
	 * them: the pool never runs out here. */
	start("leave", "4", "256", name, path);
	ASSERT_EQ(rlog_attach(name), 0);
	write16(1); /* binds */
	atomic_store(&handler_len, 3000); /* the handler's write needs a new buffer */
	int runs = atomic_load(&handler_runs);
	for (int i = 0; i < 20; i++) {
		arm(RLOG__HOOK_LEAVE);
		/* Each 3000-byte write changes buffers every other time: the
		 * slow path, whose guard release is where the hook fires. */
		static uint8_t big[3000];
		tally(rlog_write(1041, big, sizeof big));
	}
	ok(atomic_load(&handler_runs) > runs, "handlers ran at the guard's release (%d)",
	   atomic_load(&handler_runs) - runs);
	hook_armed = false;
	atomic_store(&handler_len, 16);
	int bad = 0;
	for (uint64_t i = 2; i < 100; i++)
		bad += write16(i) != 1;
	ASSERT_EQ(bad, 0);
	rlog_detach();
	stop_check(name, path, 0);
}

/* 1b: a handler while the guard is held by a bound thread. */
static void case_held_bound(void)
{
	char name[64], path[256];
	start("held", "16", "16", name, path);
	ASSERT_EQ(rlog_attach(name), 0);
	write16(1);
	/* A TIME_SYNC or a buffer change sends a write to the slow path; a
	 * full buffer is the easy one: fill it. */
	int runs = atomic_load(&handler_runs), nested = 0;
	for (int i = 0; i < 3000 && atomic_load(&handler_runs) == runs; i++) {
		arm(RLOG__HOOK_SLOW);
		write16(2 + (uint64_t)i);
	}
	hook_armed = false;
	ok(atomic_load(&handler_runs) == runs + 1, "one handler ran inside a slow-path write");
	nested = atomic_load(&handler_ret);
	ASSERT_EQ(nested, -EBUSY);
	ASSERT_EQ(write16(9999), 1);
	rlog_detach();
	stop_check(name, path, 0);
}

/* 2 and 3: no free slot while binding; a handler at the failed bind; a
 * fork after it. */
static pthread_barrier_t bound, release;

static void *holder(void *arg)
{
	(void)arg;
	write16(1);
	pthread_barrier_wait(&bound);
	pthread_barrier_wait(&release);
	return NULL;
}

static void *unlucky(void *arg)
{
	(void)arg;
	arm(RLOG__HOOK_BIND);
	int r = write16(1); /* no slot: -ENOBUFS; the handler's write: -EBUSY */
	atomic_store((_Atomic int *)arg, r);
	return NULL;
}

static void case_no_slot(void)
{
	char name[64], path[256];
	start("noslot", "4", "2", name, path); /* 2 buffers: 66 slots */
	ASSERT_EQ(rlog_attach(name), 0);
	enum { HOLDERS = 66 };
	pthread_t th[HOLDERS];
	pthread_barrier_init(&bound, NULL, HOLDERS + 1);
	pthread_barrier_init(&release, NULL, HOLDERS + 1);
	for (int i = 0; i < HOLDERS; i++)
		pthread_create(&th[i], NULL, holder, NULL);
	pthread_barrier_wait(&bound);
	_Atomic int r = 99;
	int runs = atomic_load(&handler_runs);
	pthread_t u;
	pthread_create(&u, NULL, unlucky, (void *)&r);
	pthread_join(u, NULL);
	ASSERT_EQ(atomic_load(&r), -ENOBUFS);
	ASSERT_EQ(atomic_load(&handler_runs), runs + 1);
	ASSERT_EQ(atomic_load(&handler_ret), -EBUSY);
	pthread_barrier_wait(&release);
	for (int i = 0; i < HOLDERS; i++)
		pthread_join(th[i], NULL);

	/* 3: a fork now.  The child's writes count once; nothing of the
	 * parent's is counted again.  First the daemon drains the holders'
	 * buffers (ringlog flush returns once it has), so that the child
	 * finds one of the two free. */
	struct h_run fl;
	h_ringlog(&fl, "flush", name, NULL);
	ASSERT_EQ(fl.status, 0);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int bad = 0;
		for (uint64_t i = 1; i <= 10; i++) {
			uint64_t p[2] = { i, 0 };
			bad += rlog_write(1025, p, sizeof p) != 1;
		}
		_exit(bad);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the fork child's 10 writes returned 1");
	rlog_detach();
	pthread_barrier_destroy(&bound);
	pthread_barrier_destroy(&release);
	stop_check(name, path, 10);
}

/* 4: a handler during the thread-exit hook's unbind. */
static void *exits_with_signal(void *arg)
{
	(void)arg;
	write16(1);
	arm(RLOG__HOOK_UNBIND); /* fires inside the exit hook */
	return NULL;
}

static void case_exit(void)
{
	char name[64], path[256];
	start("exit", "4", "16", name, path);
	ASSERT_EQ(rlog_attach(name), 0);
	int runs = atomic_load(&handler_runs);
	for (int i = 0; i < 20; i++) {
		pthread_t th;
		pthread_create(&th, NULL, exits_with_signal, NULL);
		pthread_join(th, NULL);
	}
	ASSERT_EQ(atomic_load(&handler_runs), runs + 20);
	ASSERT_EQ(atomic_load(&handler_ret), 0);
	/* Every exited thread released its slot and buffer: once the daemon
	 * has reaped them (it does on its passes, every 10 ms at least). */
	uint64_t threads = UINT64_MAX, free_buffers = 0;
	for (int tries = 0; tries < 200; tries++) {
		struct h_run q;
		h_ringlog(&q, "query", name, NULL);
		threads = h_kv(q.out, "producer_threads");
		free_buffers = h_kv(q.out, "free_buffers");
		if (threads == 0 && free_buffers == 16)
			break;
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	ASSERT_EQ_U64(threads, 0);
	ASSERT_EQ_U64(free_buffers, 16);
	rlog_detach();
	stop_check(name, path, 0);
}

/* 10: re-attach with a bound thread. */
static pthread_barrier_t step;

static void *bound_writer(void *arg)
{
	(void)arg;
	write16(1);                  /* binds to A */
	pthread_barrier_wait(&step); /* main attaches to B */
	pthread_barrier_wait(&step);
	for (uint64_t i = 2; i <= 21; i++)
		write16(i);
	return NULL;
}

static void case_reattach(void)
{
	char a[64], pa[256], b[64], pb[256];
	snprintf(a, sizeof a, "%s", h_session("reA"));
	snprintf(pa, sizeof pa, "%s", h_path("reA"));
	snprintf(b, sizeof b, "%s", h_session("reB"));
	snprintf(pb, sizeof pb, "%s", h_path("reB"));
	h_start(a, pa, NULL, NULL);
	h_start(b, pb, NULL, NULL);
	ASSERT_EQ(rlog_attach(a), 0);
	pthread_barrier_init(&step, NULL, 2);
	pthread_t th;
	pthread_create(&th, NULL, bound_writer, NULL);
	pthread_barrier_wait(&step);
	ASSERT_EQ(rlog_attach(b), 0);
	pthread_barrier_wait(&step);
	pthread_join(th, NULL);
	rlog_detach();
	pthread_barrier_destroy(&step);
	struct h_run r;
	h_ringlog(&r, "stop", a, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 1);
	h_ringlog(&r, "stop", b, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 20);
	struct h_summary sa, sb;
	h_summarize(pa, &sa);
	h_summarize(pb, &sb);
	ASSERT_EQ_U64(sa.events, 1);
	ASSERT_EQ_U64(sb.events, 20);
	unlink(pa);
	unlink(pb);
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	atomic_store(&rlog__test_hook, hook);
	case_leave();
	case_held_bound();
	case_no_slot();
	case_exit();
	case_reattach();
	return done_testing();
}
