/*
 * test_system_wire - a session's system-event selection through the real
 * `ringlog` and daemon (docs/SESSIONS.md, "System events"): the scope of
 * --follow (the attached process and the child it forks, not a process
 * that is neither) and of --system-pid; `ringlog update --system` on a
 * running session (the engine reopened for the new selection, then
 * closed by `none`; the statistics' identity exact across both); the
 * rundown (docs/FORMAT.md, "Rundown") of a process started before the
 * session, with its name, command line, named threads and executable
 * mapping, in the file, in `dump` (escaped) and in each snapshot.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "sys_stats.h"
#include "ringlog.h"
#include "ringlog/reader.h"
#include "tap.h"

#define RUNDOWN_TID 0xffffffffu

static void sleeps(int n)
{
	for (int i = 0; i < n; i++) {
		struct timespec ts = { 0, 2 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* A child that waits for a byte on go, then sleeps 20 times and exits. */
static pid_t sleeper(int go[2])
{
	BAIL_IF(pipe(go) != 0, "pipe");
	pid_t p = fork();
	BAIL_IF(p < 0, "fork");
	if (p == 0) {
		close(go[1]);
		char c;
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		sleeps(20);
		_exit(0);
	}
	close(go[0]);
	return p;
}

static void release(int go[2], pid_t p)
{
	BAIL_IF(write(go[1], "g", 1) != 1, "write");
	close(go[1]);
	int st;
	BAIL_IF(waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0, "sleeper");
}

/* The system events of a file, field by field. */
struct sysev {
	uint64_t ticks;
	uint32_t tid; /* the block's: the CPU, or RUNDOWN_TID */
	const char *name;
	unsigned n;
	struct rlog_value v[12];
};

typedef void each_fn(const struct sysev *e, void *arg);

static void each(const char *path, each_fn *fn, void *arg)
{
	struct rlog_reader *rd;
	BAIL_IF(rlog_reader_open(path, &rd) < 0, "cannot open %s", path);
	struct rlog_event ev;
	int rc;
	while ((rc = rlog_reader_next(rd, &ev)) > 0) {
		if (!ev.from_daemon || ev.id < 64 || ev.id > 127)
			continue;
		const struct rlog_schema *s = rlog_reader_schema(rd, &ev);
		BAIL_IF(s == NULL, "system event %u without a schema", ev.id);
		struct sysev e = { .ticks = ev.ticks, .tid = ev.tid, .name = s->name };
		int n = rlog_event_field_count(s, &ev);
		BAIL_IF(n < 2 || n > 12, "%s: %d fields", s->name, n);
		size_t off = 0;
		for (int i = 0; i < n; i++)
			BAIL_IF(rlog_event_field(s, &ev, (unsigned)i, &off, &e.v[i]) != 1, "field");
		e.n = (unsigned)n;
		fn(&e, arg);
	}
	BAIL_IF(rc != 0, "reading %s: %d", path, rc);
	rlog_reader_close(rd);
}

static bool str_is(const struct rlog_value *v, const char *s, size_t len)
{
	return v->len == len && memcmp(v->bytes, s, len) == 0;
}

/* ---------------------------------------------------------------- */
/* Scope                                                            */
/* ---------------------------------------------------------------- */

/*
 * The sched_switch records: those switching thread a, b or c out, and
 * the strays, which neither switch out of the scope's processes nor into
 * their main threads (in[]): a switch from a thread outside the scope
 * into one in it is recorded, as it names the scope's thread.
 */
struct who {
	uint32_t a, b, c;    /* the tids asked about */
	uint32_t in[16];     /* the scope's processes, then their threads too (0: none) */
	int out_a, out_b, out_c, stray;
	uint64_t kernel;     /* system events but the rundown's */
	int self_rundown;    /* process_rundown of this process, its parent right */
};

static bool in_scope(const struct who *w, uint32_t tid)
{
	for (int i = 0; tid != 0 && i < 16; i++)
		if (w->in[i] == tid)
			return true;
	return false;
}

/* The first pass: the threads of the scope's processes (a sanitizer's
 * runtime may start one) from the records' pid and tid. */
static void threads_fn(const struct sysev *e, void *arg)
{
	struct who *w = arg;
	uint32_t pid = (uint32_t)e->v[0].v.u, tid = (uint32_t)e->v[1].v.u;
	if (!in_scope(w, pid) || in_scope(w, tid))
		return;
	for (int i = 0; i < 16; i++)
		if (w->in[i] == 0) {
			w->in[i] = tid;
			return;
		}
}

static void who_fn(const struct sysev *e, void *arg)
{
	struct who *w = arg;
	if (e->tid != RUNDOWN_TID)
		w->kernel++;
	else if (strcmp(e->name, "process_rundown") == 0 && e->v[0].v.u == (uint64_t)getpid() &&
		 e->v[2].v.u == (uint64_t)getppid())
		w->self_rundown++;
	if (strcmp(e->name, "sched_switch") != 0)
		return;
	/* pid tid prev_tid prev_state prev_prio next_tid; pid is prev's
	 * process (a thread a sanitizer's runtime starts in it is in the
	 * scope too). */
	uint32_t pid = (uint32_t)e->v[0].v.u, prev = (uint32_t)e->v[2].v.i,
		 next = (uint32_t)e->v[5].v.i;
	if (in_scope(w, next) && !in_scope(w, pid))
		return; /* into the scope */
	/* A thread that has exited has no pid (the kernel gives -1): it is
	 * kept only for a switch into the scope. */
	if (pid == UINT32_MAX)
		return;
	w->out_a += prev == w->a;
	w->out_b += prev == w->b;
	w->out_c += prev == w->c;
	w->stray += !in_scope(w, pid);
}

static void check_identity(const struct h_run *stop, const char *path, uint64_t *written)
{
	uint64_t sw = h_kv(stop->out, "sys_written"), sl = h_kv(stop->out, "sys_lost"),
		 sf = h_kv(stop->out, "sys_filtered"), sh = h_kv(stop->out, "sys_handed_over");
	diag("%s: sys_written %llu sys_lost %llu sys_filtered %llu sys_handed_over %llu", path,
	     (unsigned long long)sw, (unsigned long long)sl, (unsigned long long)sf,
	     (unsigned long long)sh);
	ok(sw != UINT64_MAX && sw > 0, "sys_written printed");
	ASSERT_EQ_U64(sh, sw + sl + sf);
	*written = sw;
}

static void test_follow(void)
{
	struct h_run r;
	int go[2];
	pid_t other = sleeper(go); /* before the session: nobody's child in it */
	const char *name = h_session("wfol");
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s", h_path("wfol"));
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--system", "cswitch", "--follow", NULL);
	BAIL_IF(r.status != 0, "start --follow: %s", r.err);
	ASSERT_EQ(rlog_attach(name), 0);
	msleep(50); /* a pass or more: the daemon's scope has this process */
	uint32_t me = (uint32_t)syscall(SYS_gettid);
	sleeps(20);
	int go2[2];
	pid_t child = sleeper(go2); /* forked by the attached process: followed */
	release(go2, child);
	release(go, other);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	rlog_detach();
	uint64_t sw;
	check_identity(&r, path, &sw);
	ok(h_kv(r.out, "sys_filtered") > 0, "other processes' events filtered");
	struct who w = { .a = me, .b = (uint32_t)child, .c = (uint32_t)other,
			 .in = { me, (uint32_t)child } };
	each(path, threads_fn, &w);
	each(path, who_fn, &w);
	ASSERT_EQ_U64(w.kernel, sw);
	diag("--follow: switches out of the attached thread %d, of its child %d, of the other %d",
	     w.out_a, w.out_b, w.out_c);
	ok(w.out_a >= 20, "the attached process's 20 sleeps are recorded (%d)", w.out_a);
	ok(w.out_b >= 20, "its child's 20 sleeps too (%d)", w.out_b);
	/* Other strays are this process's other children (the `ringlog`
	 * commands it ran), followed as they should be. */
	ok(w.out_c == 0, "none of the unrelated process (%d; %d of the other processes)", w.out_c,
	   w.stray);
	/* Nobody was attached at the start: the rundown named this process
	 * when it attached, once. */
	ASSERT_EQ(w.self_rundown, 1);
	unlink(path);
}

static void test_system_pid(void)
{
	struct h_run r;
	int go[2], go2[2];
	pid_t p = sleeper(go), other = sleeper(go2);
	const char *name = h_session("wpid");
	char path[PATH_MAX], pid[16];
	snprintf(path, sizeof path, "%s", h_path("wpid"));
	snprintf(pid, sizeof pid, "%d", (int)p);
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--system", "cswitch", "--system-pid", pid, NULL);
	BAIL_IF(r.status != 0, "start --system-pid: %s", r.err);
	uint32_t me = (uint32_t)syscall(SYS_gettid);
	release(go, p);
	release(go2, other);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	uint64_t sw;
	check_identity(&r, path, &sw);
	struct who w = { .a = (uint32_t)p, .b = me, .c = (uint32_t)other, .in = { (uint32_t)p } };
	each(path, threads_fn, &w);
	each(path, who_fn, &w);
	ASSERT_EQ_U64(w.kernel, sw);
	diag("--system-pid: switches out of it %d, of this test %d, of the other %d", w.out_a,
	     w.out_b, w.out_c);
	ok(w.out_a >= 20, "the process's 20 sleeps are recorded (%d)", w.out_a);
	ok(w.out_b == 0, "none of this test's thread but into it (%d)", w.out_b);
	ok(w.out_c == 0 && w.stray == 0, "none of the other process, nor of any other (%d, %d)",
	   w.out_c, w.stray);
	unlink(path);
}

/* ---------------------------------------------------------------- */
/* update                                                           */
/* ---------------------------------------------------------------- */

/* Waits (3 s at most) until query says the daemon records what. */
static bool wait_recording(const char *name, const char *what, struct h_run *r)
{
	char line[64];
	snprintf(line, sizeof line, "system_recording: %s\n", what);
	for (int i = 0; i < 300; i++) {
		h_ringlog(r, "query", name, NULL);
		if (r->status == 0 && strstr(r->out, line))
			return true;
		msleep(10);
	}
	return false;
}

struct phases {
	int switches, wakeups, other;
	uint64_t last_switch, first_wakeup, kernel;
};

static void phases_fn(const struct sysev *e, void *arg)
{
	struct phases *p = arg;
	if (e->tid == RUNDOWN_TID)
		return;
	p->kernel++;
	if (strcmp(e->name, "sched_switch") == 0 || strcmp(e->name, "sched_migrate_task") == 0) {
		p->switches++;
		if (e->ticks > p->last_switch)
			p->last_switch = e->ticks;
	} else if (strncmp(e->name, "sched_wak", 9) == 0) {
		p->wakeups++;
		if (e->ticks < p->first_wakeup)
			p->first_wakeup = e->ticks;
	} else {
		p->other++;
	}
}

static void test_update(void)
{
	struct h_run r;
	const char *name = h_session("wupd");
	char path[PATH_MAX], pid[16];
	snprintf(path, sizeof path, "%s", h_path("wupd"));
	snprintf(pid, sizeof pid, "%d", (int)getpid());
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--system", "cswitch", "--system-pid", pid, NULL);
	BAIL_IF(r.status != 0, "start: %s", r.err);
	ok(wait_recording(name, "cswitch", &r), "query: recording cswitch");
	sleeps(10);
	h_ringlog(&r, "update", name, "--system", "wakeup", NULL);
	ASSERT_EQ(r.status, 0);
	ok(wait_recording(name, "wakeup", &r), "after update --system wakeup: recording wakeup");
	sleeps(10);
	h_ringlog(&r, "update", name, "--system", "none", NULL);
	ASSERT_EQ(r.status, 0);
	ok(wait_recording(name, "none", &r), "after update --system none: recording none");
	uint64_t w1 = h_kv(r.out, "sys_written");
	sleeps(10);
	h_ringlog(&r, "query", name, NULL);
	uint64_t w2 = h_kv(r.out, "sys_written");
	ok(w1 == w2 && w1 != UINT64_MAX, "closed: sys_written stays %llu (%llu)",
	   (unsigned long long)w1, (unsigned long long)w2);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	uint64_t sw;
	check_identity(&r, path, &sw);
	ASSERT_EQ_U64(sw, w1);
	struct phases p = { .first_wakeup = UINT64_MAX };
	each(path, phases_fn, &p);
	ASSERT_EQ_U64(p.kernel, sw);
	diag("switches %d (last %llu), wake-ups %d (first %llu)", p.switches,
	     (unsigned long long)p.last_switch, p.wakeups, (unsigned long long)p.first_wakeup);
	ok(p.switches >= 10 && p.wakeups >= 10 && p.other == 0,
	   "the switches (and migrations) of the first selection, the wake-ups of the second, "
	   "nothing else");
	ok(p.last_switch < p.first_wakeup, "the first engine closed before the second opened");
	/* The engines' schemas: sched_switch's from the first, sched_wakeup's
	 * from the second; `stats` and `dump` read the file whole. */
	h_ringlog(&r, "dump", path, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_CONTAINS(r.out, "sched_switch");
	ASSERT_CONTAINS(r.out, "sched_wakeup");
	unlink(path);
}

/* ---------------------------------------------------------------- */
/* Rundown                                                          */
/* ---------------------------------------------------------------- */

#define KID_COMM "rd\033kid"
static const char *const thread_names[3] = { "rdt-0", "rdt\n1", "rdt-2" };

static void *kid_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* The rundown's subject (exec'd as "rundown-kid rdchild with space"):
 * names itself and 3 threads, says so on fd 3, waits for fd 4's end. */
static int kid(void)
{
	prctl(PR_SET_NAME, KID_COMM, 0, 0, 0);
	for (int i = 0; i < 3; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, kid_thread, NULL) != 0 ||
		    pthread_setname_np(t, thread_names[i]) != 0)
			return 1;
	}
	if (write(3, "r", 1) != 1)
		return 1;
	char c;
	while (read(4, &c, 1) > 0)
		;
	return 0;
}

struct rd {
	uint32_t pid;
	char exe[PATH_MAX];
	int procs, threads, named[4], others, maps, exe_maps, bad;
};

static void rd_fn(const struct sysev *e, void *arg)
{
	struct rd *d = arg;
	if (e->tid != RUNDOWN_TID || (uint32_t)e->v[0].v.u != d->pid)
		return;
	if (strcmp(e->name, "process_rundown") == 0) {
		d->procs++;
		static const char cmd[] = "rundown-kid rdchild with space";
		if (e->n != 5 || e->v[1].v.u != d->pid || e->v[2].v.u != (uint64_t)getpid() ||
		    !str_is(&e->v[3], KID_COMM, strlen(KID_COMM)) ||
		    !str_is(&e->v[4], cmd, strlen(cmd)))
			d->bad++;
	} else if (strcmp(e->name, "thread_rundown") == 0) {
		d->threads++;
		int ours = e->v[1].v.u == d->pid && str_is(&e->v[2], KID_COMM, strlen(KID_COMM));
		d->named[3] += ours;
		for (int i = 0; i < 3; i++) {
			bool is = e->v[1].v.u != d->pid &&
				  str_is(&e->v[2], thread_names[i], strlen(thread_names[i]));
			d->named[i] += is;
			ours += is;
		}
		/* A sanitizer's runtime may add a thread of its own. */
		d->others += ours == 0;
	} else if (strcmp(e->name, "image_load") == 0) {
		d->maps++;
		/* pid tid addr len pgoff prot flags filename */
		if (e->n == 8 && str_is(&e->v[7], d->exe, strlen(d->exe)) && (e->v[5].v.u & PROT_EXEC) &&
		    e->v[3].v.u > 0 && e->v[6].v.u == MAP_PRIVATE)
			d->exe_maps++;
	}
}

static struct rd rundown_of(const char *path, pid_t kid_pid, const char *exe)
{
	struct rd d = { .pid = (uint32_t)kid_pid };
	snprintf(d.exe, sizeof d.exe, "%s", exe);
	each(path, rd_fn, &d);
	diag("%s: process_rundown %d, thread_rundown %d (names %d %d %d %d), image_load %d (of the "
	     "executable %d), wrong %d", path, d.procs, d.threads, d.named[0], d.named[1], d.named[2],
	     d.named[3], d.maps, d.exe_maps, d.bad);
	return d;
}

static void test_rundown(void)
{
	struct h_run r;
	char exe[PATH_MAX];
	ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
	BAIL_IF(el <= 0, "readlink");
	exe[el] = '\0';
	int ready[2], hold[2];
	BAIL_IF(pipe(ready) != 0 || pipe(hold) != 0, "pipe");
	pid_t k = fork();
	BAIL_IF(k < 0, "fork");
	if (k == 0) {
		dup2(ready[1], 3);
		dup2(hold[0], 4);
		close(hold[1]);
		char *argv[] = { "rundown-kid", "rdchild", "with", "space", NULL };
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	close(ready[1]);
	close(hold[0]);
	char c;
	BAIL_IF(read(ready[0], &c, 1) != 1, "the rundown's child did not start");
	char pid[16];
	snprintf(pid, sizeof pid, "%d", (int)k);

	/* A session with a file: the rundown when system events start. */
	const char *name = h_session("wrd");
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s", h_path("wrd"));
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--system", "process", "--system-pid", pid, NULL);
	BAIL_IF(r.status != 0, "start: %s", r.err);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	struct rd d = rundown_of(path, k, exe);
	ASSERT_EQ(d.procs, 1);
	ASSERT_EQ(d.bad, 0);
	ok(d.named[0] == 1 && d.named[1] == 1 && d.named[2] == 1 && d.named[3] == 1,
	   "its 4 threads, each once by its exact name");
	ok(d.others <= 1, "and at most a sanitizer runtime's thread besides (%d)", d.others);
	ok(d.exe_maps >= 1, "its executable's mapping is an image_load (%d)", d.exe_maps);
	h_ringlog(&r, "dump", path, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_CONTAINS(r.out, "process_rundown");
	ASSERT_CONTAINS(r.out, "comm=\"rd\\x1bkid\" cmdline=\"rundown-kid rdchild with space\"");
	ASSERT_CONTAINS(r.out, "comm=\"rdt\\n1\"");
	ok(strchr(r.out, '\033') == NULL, "dump escapes the escape byte");
	unlink(path);

	/* A flight recorder: each snapshot's own rundown. */
	name = h_session("wrds");
	char s1[PATH_MAX], s2[PATH_MAX];
	snprintf(s1, sizeof s1, "%s", h_path("wrds1"));
	snprintf(s2, sizeof s2, "%s", h_path("wrds2"));
	unlink(s1);
	unlink(s2);
	h_ringlog(&r, "start", name, "--mode", "overwrite", "--system", "process", "--system-pid", pid,
		  NULL);
	BAIL_IF(r.status != 0, "start --mode overwrite: %s", r.err);
	h_ringlog(&r, "snapshot", name, "-o", s1, NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "snapshot", name, "--since-last", "-o", s2, NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	struct rd d1 = rundown_of(s1, k, exe), d2 = rundown_of(s2, k, exe);
	ok(d1.procs == 2 && d1.named[0] == 2 && d1.named[1] == 2 && d1.named[2] == 2 &&
	   d1.named[3] == 2 && d1.bad == 0 && d1.exe_maps >= 2,
	   "the first snapshot: the start's rundown and its own");
	ok(d2.procs == 1 && d2.named[0] == 1 && d2.named[1] == 1 && d2.named[2] == 1 &&
	   d2.named[3] == 1 && d2.bad == 0 && d2.exe_maps >= 1,
	   "the second (--since-last): its own");
	unlink(s1);
	unlink(s2);

	close(hold[1]);
	int st;
	BAIL_IF(waitpid(k, &st, 0) != k, "waitpid");
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the rundown's child ran");
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "rdchild") == 0)
		return kid();
	h_sys_require();
	signal(SIGPIPE, SIG_IGN);
	test_follow();
	test_system_pid();
	test_update();
	test_rundown();
	return done_testing();
}
