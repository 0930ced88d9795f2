/*
 * test_signal_exit - signal handlers that write while threads bind, exit
 * and unbind.  200 short-lived threads each write a few events and exit,
 * while another thread sends SIGUSR1 to the process as fast as it can; the
 * handler (run by whichever thread the kernel picks) writes an event too.
 * No crash, and the accounting is exact: events in the file == writes that
 * returned 1, losses in the file == writes that returned -ENOBUFS/-EBUSY.
 * A handler that runs on a thread after its exit hook gets 0 (not recorded,
 * not counted), as any write there does.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#include "harness.h"
#include "tap.h"

#define THREADS 200
#define PER_THREAD 50

static _Atomic uint64_t ones, lost, off, other;
static atomic_int stop_signals;

static void tally(int r)
{
	if (r == 1)
		atomic_fetch_add(&ones, 1);
	else if (r == -ENOBUFS || r == -EBUSY)
		atomic_fetch_add(&lost, 1);
	else if (r == 0)
		atomic_fetch_add(&off, 1); /* a handler on a thread past its exit hook */
	else
		atomic_fetch_add(&other, 1);
}

static void on_usr1(int sig)
{
	(void)sig;
	uint32_t v = 7;
	tally(rlog_write(1025, &v, sizeof v));
}

static void *short_lived(void *arg)
{
	(void)arg;
	for (uint64_t i = 1; i <= PER_THREAD; i++)
		tally(rlog_write(1024, &i, sizeof i));
	return NULL; /* unbinds in the thread-exit hook, with signals arriving */
}

static void *signaller(void *arg)
{
	(void)arg;
	/* Keep this thread out of the handler's way: it only sends. */
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	while (!atomic_load(&stop_signals))
		kill(getpid(), SIGUSR1);
	return NULL;
}

int main(void)
{
	const char *name = h_session("sigx");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("sigx"));
	h_start(name, path, "16", "256");
	ASSERT_EQ(rlog_attach(name), 0);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);

	pthread_t sig;
	pthread_create(&sig, NULL, signaller, NULL);
	for (int i = 0; i < THREADS; i += 4) {
		pthread_t th[4];
		for (int k = 0; k < 4; k++)
			pthread_create(&th[k], NULL, short_lived, NULL);
		for (int k = 0; k < 4; k++)
			pthread_join(th[k], NULL);
	}
	atomic_store(&stop_signals, 1);
	pthread_join(sig, NULL);
	/* The main thread took signals too; block them before stopping. */
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	rlog_detach();

	struct h_run r;
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	uint64_t o = atomic_load(&ones), l = atomic_load(&lost);
	diag("writes returning 1: %" PRIu64 ", lost: %" PRIu64 ", 0: %" PRIu64 ", other: %" PRIu64,
	     o, l, (uint64_t)atomic_load(&off), (uint64_t)atomic_load(&other));
	ok(o + l >= (uint64_t)THREADS * PER_THREAD, "the threads' own writes are all emitted");
	ASSERT_EQ_U64(atomic_load(&other), 0);
	h_check_identity(&r, path, o, l);
	unlink(path);
	return done_testing();
}
