/*
 * test_ring_process - the single ring with a real flush application
 * (`ringlog ring-flush`, running until SIGINT) and producers that cannot use
 * a session:
 *
 *   - a producer in another process, with the fill-event handshake: in 20
 *     rounds it writes until its write signals the fill event, then waits
 *     until ring-flush has drained and set the flag again.  ring-flush must
 *     count exactly 20 wake-ups (one per fill, while the producer wrote over
 *     a hundred events per fill), fill_signals must be 20, and after SIGINT
 *     the file holds every event (the last ones below the mark too, drained
 *     at the stop), in order, with the producer's pid and tid;
 *   - a producer in a signal handler: another process sends SIGUSR1 as fast
 *     as it can, the handler writes one event per call into a small ring
 *     that ring-flush drains (the handler's writes signal the fill event);
 *     events written + lost = handler calls, exactly, in the file;
 *   - a thread and its signal handler writing one ring: the handler's writes
 *     that interrupt the thread's are dropped and counted (-EBUSY, DATA_LOSS
 *     NESTED); every other write of either is in the file, in order, and
 *     the ring is never corrupt;
 *   - --flush-timer: events below the mark (no fill event) are drained by
 *     the timer while ring-flush runs; SIGTERM ends it as SIGINT does.
 */
#define _GNU_SOURCE
#include <time.h>

#include "ring_util.h"
#include "tap.h"

static uint32_t mono32(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint32_t)((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

/* ---------------------------------------------------------------- */

#define ROUNDS 20
#define TAIL 10

struct child_result {
	uint64_t written, lost, other, rounds_ok;
};

/* The producer process: maps the ring by its path and writes. */
static void producer(const char *path, int out_fd)
{
	struct child_result res = { 0 };
	int fd = open(path, O_RDWR);
	struct stat st;
	fstat(fd, &st);
	struct rlog_ring *r = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED,
				   fd, 0);
	close(fd);
	if (r == MAP_FAILED)
		_exit(3);
	r->pid = (uint32_t)getpid();
	r->tid = (uint32_t)gettid();
	uint64_t v[2] = { 0, 0 };
	for (int round = 0; round < ROUNDS; round++) {
		/* ring-flush has drained and is waiting for the next fill. */
		if (!t_wait_word(&r->set_event, 1))
			break;
		uint32_t before = atomic_load(&r->fill_signals);
		for (int i = 0; i < 1000000 && atomic_load(&r->fill_signals) == before; i++) {
			v[0]++;
			int rc = rlog_ring_write(r, 1024, v, 16, mono32());
			res.written += rc == 1;
			res.lost += rc == -ENOBUFS;
			res.other += rc != 1 && rc != -ENOBUFS;
		}
		res.rounds_ok += atomic_load(&r->fill_signals) == before + 1;
	}
	/* A few more, below the mark: only the stop drains them. */
	t_wait_word(&r->set_event, 1);
	for (int i = 0; i < TAIL; i++) {
		v[0]++;
		int rc = rlog_ring_write(r, 1024, v, 16, mono32());
		res.written += rc == 1;
		res.lost += rc == -ENOBUFS;
		res.other += rc != 1 && rc != -ENOBUFS;
	}
	if (write(out_fd, &res, sizeof res) != sizeof res)
		_exit(4);
	_exit(0);
}

static void test_other_process(void)
{
	struct t_ring t;
	t_ring_create(&t, "proc", 4096, RLOG_TICK_MONOTONIC, 0);
	const char *log = t_log("proc");
	unlink(log);
	struct proc_bg bg;
	proc_start(&bg, (const char *const[]){ h_bin(), "ring-flush", t.path, "-o", log, NULL });
	ok(t_wait_word(&t.r->set_event, 1), "ring-flush waits for the fill event");
	int pfd[2];
	BAIL_IF(pipe(pfd) < 0, "pipe");
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		producer(t.path, pfd[1]);
	}
	close(pfd[1]);
	struct child_result res;
	ssize_t got = read(pfd[0], &res, sizeof res);
	close(pfd[0]);
	int st;
	waitpid(pid, &st, 0);
	ASSERT_EQ(got, (ssize_t)sizeof res);
	ASSERT_EQ(WIFEXITED(st) && WEXITSTATUS(st) == 0, 1);
	struct run r = proc_stop(&bg, SIGINT);
	diag("producer: %" PRIu64 " written, %" PRIu64 " lost in %d rounds", res.written, res.lost,
	     ROUNDS);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");
	ASSERT_EQ_U64(res.rounds_ok, ROUNDS);
	ASSERT_EQ_U64(res.other, 0);
	ASSERT_EQ(atomic_load(&t.r->fill_signals), ROUNDS);
	ASSERT_EQ_U64(h_kv(r.out, "wakeups"), ROUNDS);
	ok(res.written > 50 * ROUNDS, "over 50 events per fill (%" PRIu64 " in %d fills)",
	   res.written, ROUNDS);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), res.written);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), res.lost);
	ASSERT_EQ(atomic_load(&t.r->set_event), 0); /* nobody waits after the stop */

	struct t_file tf;
	t_read(log, &tf, false);
	ASSERT_EQ(tf.open_err, 0);
	ASSERT_EQ(tf.damage, 0);
	ASSERT_EQ_U64(tf.events, res.written);
	ASSERT_EQ_U64(tf.loss[RLOG_LOSS_NO_BUFFER], res.lost);
	uint64_t last = 0, order = 0, who = 0;
	for (size_t i = 0; i < tf.n; i++) {
		struct rlog_event *ev = &tf.e[i].ev;
		if (ev->from_daemon)
			continue;
		uint64_t s;
		memcpy(&s, ev->payload, 8);
		order += s <= last;
		last = s;
		who += ev->pid != (uint32_t)pid || ev->tid != (uint32_t)pid;
	}
	ASSERT_EQ_U64(order, 0);
	ASSERT_EQ_U64(who, 0);
	ASSERT_EQ_U64(last, res.written + res.lost);
	t_file_free(&tf);
	unlink(log);
	run_free(&r);
	t_ring_destroy(&t);
}

/* ---------------------------------------------------------------- */

static struct rlog_ring *sig_ring;
static _Atomic uint64_t h_calls, h_ones, h_nobufs, h_busy, h_other;
static _Atomic uint64_t h_seq;

static void on_usr1(int sig)
{
	(void)sig;
	int saved = errno;
	uint64_t v[2] = { atomic_fetch_add(&h_seq, 1) + 1, 0 };
	atomic_fetch_add(&h_calls, 1);
	int rc = rlog_ring_write(sig_ring, 1025, v, 16, mono32());
	if (rc == 1)
		atomic_fetch_add(&h_ones, 1);
	else if (rc == -ENOBUFS)
		atomic_fetch_add(&h_nobufs, 1);
	else if (rc == -EBUSY)
		atomic_fetch_add(&h_busy, 1);
	else
		atomic_fetch_add(&h_other, 1);
	errno = saved;
}

/* A process that sends SIGUSR1 to target, count times or until killed. */
static pid_t start_sender(pid_t target, long count)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		for (long i = 0; count < 0 || i < count; i++)
			if (kill(target, SIGUSR1) < 0)
				_exit(1);
		_exit(0);
	}
	return pid;
}

static void install_handler(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
}

static void reset_tallies(void)
{
	atomic_store(&h_calls, 0);
	atomic_store(&h_ones, 0);
	atomic_store(&h_nobufs, 0);
	atomic_store(&h_busy, 0);
	atomic_store(&h_other, 0);
	atomic_store(&h_seq, 0);
}

/* Checks the file: per ID, payload sequences strictly increasing; returns
 * the events of each ID. */
static void per_id(struct t_file *tf, uint64_t *n1024, uint64_t *n1025, uint64_t *disorder)
{
	uint64_t last[2] = { 0, 0 };
	*n1024 = *n1025 = *disorder = 0;
	for (size_t i = 0; i < tf->n; i++) {
		struct rlog_event *ev = &tf->e[i].ev;
		if (ev->from_daemon)
			continue;
		uint64_t s;
		memcpy(&s, ev->payload, 8);
		int k = ev->id == 1025;
		*disorder += s <= last[k];
		last[k] = s;
		if (k)
			(*n1025)++;
		else
			(*n1024)++;
	}
}

/* A ring of size bytes of this thread, which the signal handler writes
 * into (sig_ring, tallies reset), drained by a ring-flush in the
 * background (bg) into the log file it returns, waiting for the fill
 * event; the handler installed. */
static const char *sig_ring_start(struct t_ring *t, const char *tag, uint32_t size,
				  struct proc_bg *bg)
{
	t_ring_create(t, tag, size, RLOG_TICK_MONOTONIC, 0);
	t->r->pid = (uint32_t)getpid();
	t->r->tid = (uint32_t)gettid();
	sig_ring = t->r;
	reset_tallies();
	const char *log = t_log(tag);
	unlink(log);
	proc_start(bg, (const char *const[]){ h_bin(), "ring-flush", t->path, "-o", log, NULL });
	ok(t_wait_word(&t->r->set_event, 1), "ring-flush waits for the fill event");
	install_handler();
	return log;
}

static void test_handler_only(void)
{
	struct t_ring t;
	struct proc_bg bg;
	const char *log = sig_ring_start(&t, "sig", 1024, &bg);
	pid_t sender = start_sender(getpid(), 20000);
	/* Busy, not asleep in waitpid: the handlers run between our own
	 * instructions (and ThreadSanitizer delivers signals at calls). */
	int st;
	pid_t w;
	while ((w = waitpid(sender, &st, WNOHANG)) == 0 || (w < 0 && errno == EINTR))
		for (volatile int spin = 0; spin < 1000; spin++)
			;
	ASSERT_EQ(WIFEXITED(st) && WEXITSTATUS(st) == 0, 1);
	/* ring-flush waits again (set_event 1) once it has taken the last
	 * fill event: a stop before that, on a loaded machine, would leave
	 * that fill counted by the producer and not in its wakeups. */
	t_wait_word(&t.r->set_event, 1);
	struct run r = proc_stop(&bg, SIGINT);
	uint64_t calls = atomic_load(&h_calls), ones = atomic_load(&h_ones),
		 nobufs = atomic_load(&h_nobufs);
	diag("handler: %" PRIu64 " calls, %" PRIu64 " written, %" PRIu64 " lost; %u fill events",
	     calls, ones, nobufs, atomic_load(&t.r->fill_signals));
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");
	ok(calls > 0, "the handler ran (%" PRIu64 " times)", calls);
	ASSERT_EQ_U64(atomic_load(&h_busy) + atomic_load(&h_other), 0);
	ASSERT_EQ_U64(ones + nobufs, calls);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), ones);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), nobufs);
	ASSERT_EQ_U64(h_kv(r.out, "wakeups"), atomic_load(&t.r->fill_signals));
	struct t_file tf;
	t_read(log, &tf, false);
	ASSERT_EQ(tf.open_err, 0);
	ASSERT_EQ(tf.damage, 0);
	uint64_t a, b, disorder;
	per_id(&tf, &a, &b, &disorder);
	ASSERT_EQ_U64(a, 0);
	ASSERT_EQ_U64(b, ones);
	ASSERT_EQ_U64(disorder, 0);
	ASSERT_EQ_U64(tf.loss[RLOG_LOSS_NO_BUFFER], nobufs);
	t_file_free(&tf);
	unlink(log);
	run_free(&r);
	t_ring_destroy(&t);
}

static void test_thread_and_handler(void)
{
	struct t_ring t;
	struct proc_bg bg;
	const char *log = sig_ring_start(&t, "nest", 65536, &bg);
	pid_t sender = start_sender(getpid(), -1);
	uint64_t ones = 0, nobufs = 0, other = 0, v[2] = { 0, 0 };
	for (int i = 0; i < 100000; i++) {
		v[0] = (uint64_t)i + 1;
		int rc = rlog_ring_write(t.r, 1024, v, 16, mono32());
		ones += rc == 1;
		nobufs += rc == -ENOBUFS;
		other += rc != 1 && rc != -ENOBUFS;
	}
	kill(sender, SIGKILL);
	int st;
	while (waitpid(sender, &st, 0) < 0 && errno == EINTR)
		;
	struct run r = proc_stop(&bg, SIGINT);
	uint64_t hones = atomic_load(&h_ones), hnobufs = atomic_load(&h_nobufs),
		 hbusy = atomic_load(&h_busy);
	diag("thread: %" PRIu64 " written, %" PRIu64 " lost; handler: %" PRIu64 " calls, %" PRIu64
	     " written, %" PRIu64 " lost, %" PRIu64 " nested",
	     ones, nobufs, atomic_load(&h_calls), hones, hnobufs, hbusy);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");
	ASSERT_EQ_U64(other + atomic_load(&h_other), 0);
	ASSERT_EQ_U64(hones + hnobufs + hbusy, atomic_load(&h_calls));
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), ones + hones);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), nobufs + hnobufs + hbusy);
	ASSERT_EQ_U64(h_kv(r.out, "corrupt_bytes"), 0);
	struct t_file tf;
	t_read(log, &tf, false);
	ASSERT_EQ(tf.open_err, 0);
	ASSERT_EQ(tf.damage, 0);
	uint64_t a, b, disorder;
	per_id(&tf, &a, &b, &disorder);
	ASSERT_EQ_U64(a, ones);
	ASSERT_EQ_U64(b, hones);
	ASSERT_EQ_U64(disorder, 0);
	ASSERT_EQ_U64(tf.loss[RLOG_LOSS_NESTED], hbusy);
	ASSERT_EQ_U64(tf.loss[RLOG_LOSS_NO_BUFFER], nobufs + hnobufs);
	t_file_free(&tf);
	unlink(log);
	run_free(&r);
	t_ring_destroy(&t);
}

static void test_flush_timer(void)
{
	struct t_ring t;
	t_ring_create(&t, "timer", 4096, RLOG_TICK_MONOTONIC, 0);
	const char *log = t_log("timer");
	unlink(log);
	struct proc_bg bg;
	proc_start(&bg, (const char *const[]){ h_bin(), "ring-flush", t.path, "-o", log,
					       "--flush-timer", "20", NULL });
	ok(t_wait_word(&t.r->set_event, 1), "ring-flush waits for the fill event");
	uint64_t v[2] = { 1, 0 };
	for (int i = 0; i < 3; i++) {
		v[0] = (uint64_t)i + 1;
		ASSERT_EQ(rlog_ring_write(t.r, 1024, v, 16, mono32()), 1);
	}
	/* Far below the mark: only the timer drains them. */
	ok(t_wait_word(&t.r->read_off, 72), "the timer drained the 3 events (read_off 72)");
	ASSERT_EQ(atomic_load(&t.r->fill_signals), 0);
	struct run r = proc_stop(&bg, SIGTERM);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 3);
	ASSERT_EQ_U64(h_kv(r.out, "wakeups"), 0);
	ok(h_kv(r.out, "drains") >= 3, "the timer drained (%" PRIu64 " drains)",
	   h_kv(r.out, "drains"));
	struct t_file tf;
	t_read(log, &tf, false);
	ASSERT_EQ(tf.open_err, 0);
	ASSERT_EQ_U64(tf.events, 3);
	t_file_free(&tf);
	unlink(log);
	run_free(&r);
	t_ring_destroy(&t);
}

int main(void)
{
	test_flush_timer();
	test_other_process();
	test_handler_only();
	test_thread_and_handler();
	return done_testing();
}
