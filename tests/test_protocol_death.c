/*
 * test_protocol_death - producers that die, fork, or scribble, at named
 * steps of the protocol (forced with rlog__test_hook) and at random.
 * docs/FORMAT.md, "Dead processes" and "Stop".  In every case `ringlog stop` exits promptly
 * (well under its 10 s limit for a producer stuck in a write), the pool
 * gets every buffer back, and the survivors' accounting is exact.
 *
 *   5. A process dies with its process entry's gate raised (inside a loss
 *      count without a slot); another forks and exits mid-storm.
 *   6. A process dies between clearing a buffer's free bit and making the
 *      buffer OWNED, and another just after OWNED: no buffer leaks, none is
 *      freed twice.
 *      A process dies having grown the pool by the buffer it needed, before
 *      that buffer is OWNED: the daemon gives it back.
 *   7. Fork while another thread attaches and detaches in a loop: the
 *      child's rlog_attach never hangs.
 *   8. A session whose header magic was scribbled can still be stopped: its
 *      daemon ends and removes it, and `stop` says the header was damaged.
 *   9. A producer killed inside a write and left a zombie (not reaped) does
 *      not stall stop, and its committed events are in the file.
 *   A storm: producers SIGKILLed at random moments; the pool is whole
 *   afterwards and stop is prompt.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "harness.h"
#include "lib/producer.h"
#include "procstat.h"
#include "tap.h"

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* `ringlog stop`, timed: well under the daemon's 10 s wait for a producer
 * stuck in a write is prompt; the old code waited out the 10 s. */
static void stop_prompt(const char *name, struct h_run *r)
{
	uint64_t t0 = mono_ms();
	h_ringlog(r, "stop", name, NULL);
	uint64_t ms = mono_ms() - t0;
	ASSERT_EQ(r->status, 0);
	if (r->status != 0)
		diag("stop: %s", r->err);
	ok(ms < 5000, "stop returned in %" PRIu64 " ms", ms);
}

/* Waits until the daemon has reaped the dead and the pool is whole. */
static void pool_whole(const char *name, uint64_t buffers)
{
	uint64_t threads = UINT64_MAX, free_buffers = 0;
	for (int tries = 0; tries < 400; tries++) {
		struct h_run q;
		h_ringlog(&q, "query", name, NULL);
		threads = h_kv(q.out, "producer_threads");
		free_buffers = h_kv(q.out, "free_buffers");
		if (threads == 0 && free_buffers == buffers)
			break;
		if (tries == 399)
			diag("query after %d tries:\n%s", tries + 1, q.out);
		proc_sleep_ms(10);
	}
	ASSERT_EQ_U64(threads, 0);
	ASSERT_EQ_U64(free_buffers, buffers);
}

static _Atomic int die_at;

static void die_hook(int point)
{
	if (point == atomic_load(&die_at))
		raise(SIGKILL);
}

static void on_usr1(int sig)
{
	(void)sig;
	uint64_t v = 1;
	rlog_write(1050, &v, sizeof v);
}

static _Atomic int raise_at;

static void raise_then_exit_hook(int point)
{
	if (point == atomic_load(&raise_at)) {
		atomic_store(&raise_at, 0);
		raise(SIGUSR1);
	} else if (point == RLOG__HOOK_GATE) {
		_exit(0); /* dies with the gate raised */
	}
}

/* A child that attaches and writes until its hook kills it. */
static pid_t child_dies_at(const char *name, void (*hook)(int), int point)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		if (rlog_attach(name) != 0)
			_exit(3);
		atomic_store(&die_at, point);
		atomic_store(&rlog__test_hook, hook);
		for (uint64_t i = 1; i < 100000000; i++) {
			uint64_t v[2] = { i, 0 };
			rlog_write(1024, v, sizeof v);
		}
		_exit(4);
	}
	return pid;
}

static void case_gate(void)
{
	const char *name = h_session("gate");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("gate"));
	h_start(name, path, "4", "16");
	/* The child's first write is interrupted (SLOW: guard held, no slot
	 * yet) by a handler whose write is nested: counted in the process
	 * entry under its gate, where the child dies. */
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_usr1;
		sigaction(SIGUSR1, &sa, NULL);
		if (rlog_attach(name) != 0)
			_exit(3);
		atomic_store(&raise_at, RLOG__HOOK_SLOW);
		atomic_store(&rlog__test_hook, raise_then_exit_hook);
		uint64_t v = 1;
		rlog_write(1024, &v, sizeof v);
		_exit(5);
	}
	int st;
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child died with its gate raised (status %d)",
	   st);
	/* Fork storm: children that exit while binding or writing. */
	for (int i = 0; i < 40; i++) {
		fflush(NULL);
		pid_t c = fork();
		if (c == 0) {
			if (rlog_attach(name) != 0)
				_exit(3);
			uint64_t v = 7;
			for (int k = 0; k < i * 10; k++)
				rlog_write(1024, &v, sizeof v);
			_exit(0);
		}
	}
	while (wait(NULL) > 0)
		;
	struct h_run r;
	stop_prompt(name, &r);
	ASSERT_STREQ(r.err, "");
	unlink(path);
}

static void case_taking(int point, const char *tag)
{
	const char *name = h_session(tag);
	char path[256];
	snprintf(path, sizeof path, "%s", h_path(tag));
	h_start(name, path, "4", "8");
	pid_t pid = child_dies_at(name, die_hook, point);
	int st;
	waitpid(pid, &st, 0);
	ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "%s: the child died in the take", tag);
	pool_whole(name, 8);
	/* The pool really is whole: a fresh process writes 2000 16-byte
	 * records (and its two name records), which need all 8 buffers of 256
	 * record slots even if the daemon drains none meanwhile. */
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		if (rlog_attach(name) != 0)
			_exit(3);
		int ones = 0;
		for (uint64_t i = 1; i <= 2000; i++)
			ones += rlog_write(1024, &i, sizeof i) == 1; /* a 16-byte record */
		_exit(ones == 2000 ? 0 : 6);
	}
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: a fresh process wrote 2000 events, all 1 "
	   "(status %d)", tag, st);
	struct h_run r;
	stop_prompt(name, &r);
	ASSERT_EQ_U64(h_kv(r.out, "corrupt_buffers"), 0);
	unlink(path);
}

/* A producer that found no free buffer (the daemon stopped) grows the pool
 * by one buffer itself (src/lib/thread.c) and dies before that buffer is
 * OWNED: the buffer is in the pool, FREE, its free bit clear; the daemon
 * gives it back from the dead slot's taking mark, and grows the rest of
 * the way: the pool is whole at its maximum. */
static void case_grown(void)
{
	const char *name = h_session("grown");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("grown"));
	struct h_run r;
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--buffer-size", "4", "--min-buffers", "4",
		  "--max-buffers", "8", NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "query", name, NULL);
	pid_t daemon = (pid_t)h_kv(r.out, "daemon_pid");
	ASSERT_EQ(daemon > 0, 1);
	ASSERT_EQ(kill(daemon, SIGSTOP), 0);
	pid_t pid = child_dies_at(name, die_hook, RLOG__HOOK_GROWN);
	int st;
	waitpid(pid, &st, 0);
	ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "grown: the child died growing the pool");
	h_ringlog(&r, "query", name, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "number_of_buffers"), 5);
	ASSERT_EQ(kill(daemon, SIGCONT), 0);
	pool_whole(name, 8);
	h_ringlog(&r, "query", name, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "number_of_buffers"), 8);
	stop_prompt(name, &r);
	ASSERT_EQ_U64(h_kv(r.out, "corrupt_buffers"), 0);
	unlink(path);
}

/* A producer killed between claiming a slot and storing its pid there:
 * the slot is ACTIVE with pid 0, stamped with the claimer's pid; the
 * daemon finds that process dead and frees the slot (procs.c). */
static void case_claim(void)
{
	const char *name = h_session("claim");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("claim"));
	h_start(name, path, "4", "16");
	pid_t pid = child_dies_at(name, die_hook, RLOG__HOOK_SLOT_CLAIMED);
	int st;
	waitpid(pid, &st, 0);
	ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "claim: the child died with its slot "
	   "claimed, no pid in it");
	pool_whole(name, 16);
	struct h_run r;
	stop_prompt(name, &r);
	ASSERT_STREQ(r.err, "");
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), 0);
	unlink(path);
}

/* The slots and process entries of region r stamped by process pid. */
static int stamped_by(struct rlog__region *r, pid_t pid)
{
	int n = 0;
	for (uint32_t i = 0; i < r->slot_count; i++)
		n += (atomic_load(&r->slots[i].claimer) == (uint32_t)pid) +
		     (atomic_load(&r->procs[i].claimer) == (uint32_t)pid);
	return n;
}

/*
 * The same kill (point RLOG__HOOK_SLOT_CLAIMED: slot ACTIVE, pid 0), the
 * one before it (RLOG__HOOK_SLOT_STAMPED: slot FREE, claimer stamped,
 * which no other thread may claim), and the same for the process entry
 * (RLOG__HOOK_PROC_CLAIMED), while this process stays attached and writes
 * numbered events: the daemon frees the slot and entry (or clears the
 * stamp) within a few liveness checks, not only once the session is empty;
 * every event written is in the file once.  stamped: the slots and
 * entries the child left stamped (its entry is stamped too, but at
 * PROC_CLAIMED, where it has no slot yet).
 */
static void case_claim_attached(int point, const char *tag, int stamped)
{
	const char *name = h_session(tag);
	char path[256];
	snprintf(path, sizeof path, "%s", h_path(tag));
	h_start(name, path, "4", "16");
	ASSERT_EQ(rlog_attach(name), 0);
	uint64_t seq = 0, ones = 0;
	for (int k = 0; k < 100; k++) {
		++seq;
		ones += rlog_write(1024, &seq, sizeof seq) == 1;
	}
	pid_t pid = child_dies_at(name, die_hook, point);
	int st;
	waitpid(pid, &st, 0);
	ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "%s: the child died in its claim", tag);
	struct rlog__region reg;
	ASSERT_EQ(rlog__region_open(name, &reg), 0);
	ASSERT_EQ(stamped_by(&reg, pid), stamped);
	/* Bounded: the daemon checks liveness once a second. */
	uint64_t t0 = mono_ms(), threads = UINT64_MAX;
	int left = 1;
	while (mono_ms() - t0 < 6000) {
		++seq;
		ones += rlog_write(1024, &seq, sizeof seq) == 1;
		left = stamped_by(&reg, pid);
		struct h_run q;
		h_ringlog(&q, "query", name, NULL);
		threads = h_kv(q.out, "producer_threads");
		if (left == 0 && threads == 1)
			break;
		proc_sleep_ms(20);
	}
	uint64_t ms = mono_ms() - t0;
	ok(left == 0 && ms < 4000, "%s: what the dead claimer stamped is released in %" PRIu64
	   " ms with this process attached", tag, ms);
	ASSERT_EQ_U64(threads, 1); /* this thread's slot only */
	rlog__region_close(&reg);
	for (int k = 0; k < 100; k++) {
		++seq;
		ones += rlog_write(1024, &seq, sizeof seq) == 1;
	}
	ASSERT_EQ_U64(ones, seq);
	rlog_detach();
	struct h_run r;
	stop_prompt(name, &r);
	ASSERT_STREQ(r.err, "");
	h_check_identity(&r, path, ones, 0);
	struct h_summary sum;
	h_summarize(path, &sum);
	ASSERT_EQ_U64(sum.nthreads, 1);
	ASSERT_EQ_U64(sum.th[0].events, seq);
	ASSERT_EQ_U64(sum.th[0].last_seq, seq);
	ASSERT_EQ_U64(sum.th[0].order_errors, 0);
	unlink(path);
}

static atomic_int attach_loop_on;

static void *attach_loop(void *arg)
{
	const char *name = arg;
	while (atomic_load(&attach_loop_on)) {
		rlog_attach(name);
		rlog_detach();
	}
	return NULL;
}

static void case_fork_attach(void)
{
	const char *name = h_session("forkatt");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("forkatt"));
	/* Each child _exits holding a slot and a buffer until the daemon's
	 * liveness check (once a second): a fixed pool with room for all 40,
	 * so that every child's write is written, not lost. */
	h_start(name, path, "16", "128");
	/* The library's one-time set-up (pthread_once in rlog__hooks_init)
	 * done before the loop thread exists: glibc's pthread_once starts
	 * again in a fork child that inherited it half done, ThreadSanitizer's
	 * interceptor does not (the child waited for ever under TSan). What
	 * this case tests is attach_lock held across the fork. */
	ASSERT_EQ(rlog_attach(name), 0);
	rlog_detach();
	atomic_store(&attach_loop_on, 1);
	pthread_t th;
	pthread_create(&th, NULL, attach_loop, (void *)name);
	int hung = 0, bad = 0;
	for (int i = 0; i < 40; i++) {
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0) {
			alarm(10); /* a hang ends as SIGALRM */
			int r = rlog_attach(name);
			uint64_t v = 1;
			_exit(r == 0 && rlog_write(1024, &v, sizeof v) == 1 ? 0 : 7);
		}
		int st;
		waitpid(pid, &st, 0);
		hung += WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM;
		bad += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	}
	atomic_store(&attach_loop_on, 0);
	pthread_join(th, NULL);
	ASSERT_EQ(hung, 0);
	ASSERT_EQ(bad, 0);
	/* Attaching again maps nothing new: the loop made one mapping of the
	 * session, not one per attach (the address space does not grow). */
	char want[128], line[512];
	snprintf(want, sizeof want, "/dev/shm/ringlog.%s", name);
	FILE *maps = fopen("/proc/self/maps", "r");
	int mappings = 0;
	while (maps && fgets(line, sizeof line, maps))
		mappings += strstr(line, want) != NULL;
	if (maps)
		fclose(maps);
	ASSERT_EQ(mappings, 1);
	struct h_run r;
	stop_prompt(name, &r);
	unlink(path);
}

static void case_scribbled(void)
{
	const char *name = h_session("scrib");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("scrib"));
	h_start(name, path, NULL, NULL);
	struct h_run q;
	h_ringlog(&q, "query", name, NULL);
	pid_t daemon = (pid_t)h_kv(q.out, "daemon_pid");
	/* Write some events, then scribble the magic. */
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		if (rlog_attach(name) != 0)
			_exit(3);
		for (uint64_t i = 1; i <= 100; i++)
			rlog_write(1024, &i, sizeof i);
		rlog_detach();
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	char shm[128];
	snprintf(shm, sizeof shm, "/dev/shm/ringlog.%s", name);
	int fd = open(shm, O_RDWR);
	ASSERT_EQ(fd >= 0, 1);
	uint64_t *magic = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	*magic = 0x5858585858585858ull;
	munmap(magic, 4096);
	h_ringlog(&q, "query", name, NULL);
	ASSERT_EQ(q.status, 1);
	struct h_run r;
	uint64_t t0 = mono_ms();
	h_ringlog(&r, "stop", name, NULL);
	ok(mono_ms() - t0 < 5000, "stop returned promptly");
	ASSERT_EQ(r.status, 1);
	ASSERT_CONTAINS(r.err, "the session header was damaged");
	ASSERT_EQ(access(shm, F_OK), -1);
	/* It removes the object a moment before it exits (and may linger as
	 * a zombie of whatever reaps it here). */
	bool gone = false;
	for (int i = 0; i < 300 && !gone; i++) {
		gone = rlog__process_dead(daemon, 0);
		if (!gone)
			proc_sleep_ms(10);
	}
	ok(gone, "the daemon (pid %d) has exited", (int)daemon);
	struct h_summary sum;
	h_summarize(path, &sum);
	ASSERT_EQ(sum.open_err, 0);
	ASSERT_EQ_U64(sum.events, 100);
	unlink(path);
}

/* A header scribbled and put back: the daemon noticed (it checks once a
 * second) and says so at stop. */
static void case_scribbled_restored(void)
{
	const char *name = h_session("scrib2");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("scrib2"));
	h_start(name, path, NULL, NULL);
	char shm[128];
	snprintf(shm, sizeof shm, "/dev/shm/ringlog.%s", name);
	int fd = open(shm, O_RDWR);
	ASSERT_EQ(fd >= 0, 1);
	struct rlog_shm_header *h = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	uint32_t saved = h->high_water_pct;
	h->high_water_pct = 101;
	proc_sleep_ms(2500);
	h->high_water_pct = saved;
	munmap(h, 4096);
	struct h_run r;
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_CONTAINS(r.err, "the session header was scribbled (it fails validation)");
	unlink(path);
}

static void case_zombie(void)
{
	const char *name = h_session("zombie");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("zombie"));
	h_start(name, path, NULL, NULL);
	/* The child writes 500 events, then dies inside its next slow-path
	 * write (guard held), and is not reaped until after the stop. */
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		if (rlog_attach(name) != 0)
			_exit(3);
		for (uint64_t i = 1; i <= 500; i++)
			if (rlog_write(1024, &i, sizeof i) != 1)
				_exit(4);
		rlog_flush_thread(); /* the next write takes the slow path */
		atomic_store(&die_at, RLOG__HOOK_SLOW);
		atomic_store(&rlog__test_hook, die_hook);
		uint64_t v = 501;
		rlog_write(1024, &v, sizeof v);
		_exit(5);
	}
	/* A zombie: dead, not reaped.  kill(pid, 0) still succeeds. */
	siginfo_t si;
	waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT);
	ok(kill(pid, 0) == 0, "the child is a zombie (kill(pid, 0) succeeds)");
	struct h_run r;
	stop_prompt(name, &r);
	ASSERT_STREQ(r.err, "");
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 500);
	struct h_summary sum;
	h_summarize(path, &sum);
	ASSERT_EQ_U64(sum.events, 500);
	waitpid(pid, NULL, 0);
	unlink(path);
}

static void *spin_writer(void *arg)
{
	(void)arg;
	for (uint64_t i = 1;; i++) {
		uint64_t v[2] = { i, 0 };
		rlog_write(1024, v, sizeof v);
	}
	return NULL;
}

static void case_kill_storm(void)
{
	const char *name = h_session("kstorm");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("kstorm"));
	h_start(name, path, "4", "32");
	srand(12345);
	int attached = 0;
	for (int round = 0; round < 30; round++) {
		int fds[2];
		BAIL_IF(pipe(fds) != 0, "pipe");
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0) {
			close(fds[0]);
			if (rlog_attach(name) != 0)
				_exit(3);
			ssize_t w = write(fds[1], "a", 1);
			(void)w;
			pthread_t th[3];
			for (int i = 0; i < 3; i++)
				pthread_create(&th[i], NULL, spin_writer, NULL);
			spin_writer(NULL);
		}
		close(fds[1]);
		/* Once it is attached, 0 to 10 ms: from inside the first binds
		 * to deep in the run. */
		char c;
		attached += read(fds[0], &c, 1) == 1;
		close(fds[0]);
		struct timespec ts = { 0, (long)(rand() % 10000) * 1000L };
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	ASSERT_EQ(attached, 30);
	pool_whole(name, 32);
	struct h_run r;
	stop_prompt(name, &r);
	ASSERT_STREQ(r.err, "");
	struct h_summary sum;
	h_summarize(path, &sum);
	ASSERT_EQ_U64(sum.damage, 0);
	ASSERT_EQ_U64(h_kv(r.out, "corrupt_buffers"), 0);
	unlink(path);
}

int main(void)
{
	case_gate();
	case_taking(RLOG__HOOK_TAKE_CLAIMED, "claimed");
	case_taking(RLOG__HOOK_TAKE_OWNED, "owned");
	case_grown();
	case_claim();
	case_claim_attached(RLOG__HOOK_SLOT_CLAIMED, "claimatt", 2);
	case_claim_attached(RLOG__HOOK_SLOT_STAMPED, "stampatt", 2);
	case_claim_attached(RLOG__HOOK_PROC_CLAIMED, "procatt", 1);
	case_fork_attach();
	case_scribbled();
	case_scribbled_restored();
	case_zombie();
	case_kill_storm();
	return done_testing();
}
