/*
 * test_rundown.c - the /proc rundown walker (src/common/rundown.h) on a
 * process whose every answer is known:
 *
 *   a child (this program run again with known arguments) that names
 *   itself with a hostile comm (a newline, a terminal escape, and ") R 1 ("
 *   to mislead a /proc/PID/stat parser), runs 3 threads named by it, and
 *   maps a known executable (this program, at file offset 4096) at an
 *   address it reports.
 *
 * The walker, on that pid, must call back exactly one process (pid, ppid,
 * the comm's bytes, the command line's NUL-separated bytes), its threads
 * (tid and comm each, besides any thread a sanitizer's runtime adds; one
 * thread made to exit between the directory read
 * and its comm is skipped and counted in threads_vanished), and the known
 * mapping exactly once (start, end, offset, device, inode, path).  On all
 * of /proc it finds the child once.  A pid that is gone, and a process
 * killed while the walk is at the one before it, are skipped and counted
 * in vanished; a callback's negative value stops the walk.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rundown.h"
#include "tap.h"

#define HOSTILE "x) R 1 (\n\033[1m" /* 13 bytes, within comm's 15 */
#define CHILD_ARG "--rundown-child"
#define MAP_OFFSET 4096

/* --------------------------------------------------------------- */
/* The child                                                        */
/* --------------------------------------------------------------- */

struct child_thread {
	pthread_t t;
	int quit[2];        /* a byte, or EOF: exit */
	const char *name;
	_Atomic pid_t tid;
};

static void *thread_main(void *arg)
{
	struct child_thread *c = arg;
	prctl(PR_SET_NAME, c->name);
	c->tid = gettid();
	char b;
	while (read(c->quit[0], &b, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

/* fd 3: to the parent ("TID TID TID ADDR\n", then "gone\n" per kill);
 * fd 4: from the parent ("TID\n": make that thread exit; EOF: exit). */
static int child_main(void)
{
	prctl(PR_SET_NAME, HOSTILE);
	static struct child_thread th[2] = { { .name = "rd-one" }, { .name = "rd-two" } };
	for (int i = 0; i < 2; i++) {
		if (pipe(th[i].quit) < 0 || pthread_create(&th[i].t, NULL, thread_main, &th[i]))
			return 1;
		while (th[i].tid == 0)
			usleep(1000);
	}
	char exe[PATH_MAX];
	int fd = open("/proc/self/exe", O_RDONLY);
	if (fd < 0 || realpath("/proc/self/exe", exe) == NULL)
		return 1;
	void *map = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, MAP_OFFSET);
	if (map == MAP_FAILED)
		return 1;
	dprintf(3, "%d %d %d %lx\n", (int)gettid(), (int)th[0].tid, (int)th[1].tid,
		(unsigned long)map);
	FILE *in = fdopen(4, "r");
	int tid;
	while (in && fscanf(in, "%d", &tid) == 1)
		for (int i = 0; i < 2; i++)
			if (th[i].tid == tid) {
				close(th[i].quit[1]);
				pthread_join(th[i].t, NULL);
				dprintf(3, "gone\n");
			}
	return 0;
}

/* --------------------------------------------------------------- */
/* The parent                                                       */
/* --------------------------------------------------------------- */

struct child {
	pid_t pid;
	int tids[3];
	unsigned long addr;
	FILE *from;
	int to;
};

static void child_start(struct child *c, const char *self)
{
	int up[2], down[2];
	BAIL_IF(pipe(up) < 0 || pipe(down) < 0, "pipe");
	fflush(stdout);
	c->pid = fork();
	BAIL_IF(c->pid < 0, "fork");
	if (c->pid == 0) {
		dup2(up[1], 3);
		dup2(down[0], 4);
		for (int fd = 5; fd < 64; fd++)
			close(fd);
		execl(self, self, CHILD_ARG, "two words", "", "last", (char *)NULL);
		_exit(127);
	}
	close(up[1]);
	close(down[0]);
	c->to = down[1];
	c->from = fdopen(up[0], "r");
	BAIL_IF(c->from == NULL || fscanf(c->from, "%d %d %d %lx", &c->tids[0], &c->tids[1],
					  &c->tids[2], &c->addr) != 4,
		"the child did not start");
}

struct seen {
	struct child *c;
	const char *exe;
	struct stat exe_st;
	int processes, threads, mappings, known_maps, others;
	int runtime_threads;     /* the child's threads it did not start (a sanitizer's) */
	bool process_ok, comm_ok[3], map_ok;
	int killed;              /* the tid made to exit mid-walk (0: none yet) */
	bool kill_one;           /* make one thread exit at the first thread callback */
	pid_t kill_pid;          /* a process to kill at the first process callback */
	int stop_with;           /* a process callback's return */
};

static int on_process(const struct rlog__rundown_process *p, void *arg)
{
	struct seen *s = arg;
	if (s->kill_pid) {
		kill(s->kill_pid, SIGKILL);
		waitpid(s->kill_pid, NULL, 0);
		s->kill_pid = 0;
	}
	if (p->pid != (uint32_t)s->c->pid) {
		s->others++;
		return s->stop_with;
	}
	s->processes++;
	static const char cmd_tail[] = CHILD_ARG "\0two words\0\0last"; /* + its final NUL */
	size_t exe_len = strlen(s->exe);
	s->process_ok = p->ppid == (uint32_t)getpid() && p->comm_len == strlen(HOSTILE) &&
			memcmp(p->comm, HOSTILE, p->comm_len) == 0 &&
			p->cmdline_len == exe_len + 1 + sizeof cmd_tail && !p->cmdline_cut &&
			memcmp(p->cmdline, s->exe, exe_len + 1) == 0 &&
			memcmp(p->cmdline + exe_len + 1, cmd_tail, sizeof cmd_tail) == 0;
	if (!s->process_ok)
		diag("process %u: ppid %u, comm %zu bytes, cmdline %zu bytes", p->pid, p->ppid,
		     p->comm_len, p->cmdline_len);
	return s->stop_with;
}

static int on_thread(const struct rlog__rundown_thread *t, void *arg)
{
	struct seen *s = arg;
	if (t->pid != (uint32_t)s->c->pid)
		return 0;
	static const char *names[3] = { HOSTILE, "rd-one", "rd-two" };
	bool ours = false;
	for (int i = 0; i < 3; i++)
		if ((int)t->tid == s->c->tids[i]) {
			ours = true;
			s->comm_ok[i] = t->comm_len == strlen(names[i]) &&
					memcmp(t->comm, names[i], t->comm_len) == 0;
		}
	s->threads += ours;
	s->runtime_threads += !ours;
	if (s->kill_one && s->killed == 0) {
		/* One of the other threads, not called back yet: the task
		 * directory was read already, its comm is not. */
		int victim = (int)t->tid == s->c->tids[1] ? s->c->tids[2] : s->c->tids[1];
		char word[16];
		dprintf(s->c->to, "%d\n", victim);
		BAIL_IF(fscanf(s->c->from, " %15s", word) != 1 || strcmp(word, "gone") != 0,
			"the child's thread %d did not exit", victim);
		s->killed = victim;
	}
	return 0;
}

static int on_mapping(const struct rlog__rundown_mapping *m, void *arg)
{
	struct seen *s = arg;
	if (m->pid != (uint32_t)s->c->pid)
		return 0;
	s->mappings++;
	if (m->start != s->c->addr)
		return 0;
	s->known_maps++;
	s->map_ok = m->end == s->c->addr + 4096 && m->offset == MAP_OFFSET &&
		    m->inode == (uint64_t)s->exe_st.st_ino &&
		    m->dev_major == major(s->exe_st.st_dev) &&
		    m->dev_minor == minor(s->exe_st.st_dev) && m->path_len == strlen(s->exe) &&
		    memcmp(m->path, s->exe, m->path_len) == 0;
	return 0;
}

static const struct rlog__rundown_ops ops = { on_process, on_thread, on_mapping, NULL };

static struct rlog__rundown_ops ops_for(struct seen *s)
{
	struct rlog__rundown_ops o = ops;
	o.arg = s;
	return o;
}

/* A process that sleeps until killed. */
static pid_t sleeper(void)
{
	fflush(stdout);
	pid_t pid = fork();
	BAIL_IF(pid < 0, "fork");
	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], CHILD_ARG) == 0)
		return child_main();
	char exe[PATH_MAX];
	BAIL_IF(realpath("/proc/self/exe", exe) == NULL, "no /proc/self/exe");
	struct child c;
	child_start(&c, exe);
	struct seen s = { .c = &c, .exe = exe };
	BAIL_IF(stat(exe, &s.exe_st) < 0, "stat %s", exe);

	/* 1. The child alone, one thread made to exit during the walk. */
	uint32_t pid = (uint32_t)c.pid;
	struct rlog__rundown_stats st;
	s.kill_one = true;
	struct rlog__rundown_ops o = ops_for(&s);
	ASSERT_EQ(rlog__rundown_walk(NULL, &pid, 1, &o, &st), 0);
	ASSERT_EQ(s.processes, 1);
	ok(s.process_ok, "pid, ppid, the hostile comm's 13 bytes, the command line's bytes");
	ASSERT_EQ(s.others, 0);
	ASSERT_EQ(s.threads, 2);
	ok(s.comm_ok[0], "the main thread: its tid and the hostile comm");
	ok(s.comm_ok[c.tids[1] == s.killed ? 2 : 1], "the thread left: its tid and comm");
	ok(s.killed != 0, "a thread exited mid-walk");
	ASSERT_EQ_U64(st.processes, 1);
	ASSERT_EQ_U64(st.threads, (uint64_t)(2 + s.runtime_threads));
	ASSERT_EQ_U64(st.threads_vanished, 1);
	ASSERT_EQ_U64(st.vanished, 0);
	ASSERT_EQ(s.known_maps, 1);
	ok(s.map_ok, "the known mapping: end, offset 4096, device, inode, path");
	/* The program's own text, the libraries', the vdso: more than ours. */
	ok(s.mappings >= 3, "%d executable mappings", s.mappings);
	ASSERT_EQ_U64(st.mappings, (uint64_t)s.mappings);

	/* 2. All of /proc: the child once, with its two threads left. */
	struct seen all = { .c = &c, .exe = exe, .exe_st = s.exe_st };
	o = ops_for(&all);
	ASSERT_EQ(rlog__rundown_walk("/proc", NULL, 0, &o, &st), 0);
	ASSERT_EQ(all.processes, 1);
	ok(all.process_ok, "the child as before");
	ASSERT_EQ(all.threads, 2);
	ASSERT_EQ(all.known_maps, 1);
	ok(all.others >= 1, "other processes: %d (this one at least)", all.others);
	ASSERT_EQ_U64(st.processes, (uint64_t)(all.others + 1));

	/* 3. Gone: a reaped pid, and a process killed while the walk is at
	 * the one before it. */
	pid_t dead = sleeper();
	kill(dead, SIGKILL);
	waitpid(dead, NULL, 0);
	pid_t victim = sleeper();
	uint32_t pids[3] = { (uint32_t)dead, (uint32_t)c.pid, (uint32_t)victim };
	struct seen gone = { .c = &c, .exe = exe, .exe_st = s.exe_st, .kill_pid = victim };
	o = ops_for(&gone);
	ASSERT_EQ(rlog__rundown_walk(NULL, pids, 3, &o, &st), 0);
	ASSERT_EQ_U64(st.vanished, 2);
	ASSERT_EQ_U64(st.processes, 1);
	ASSERT_EQ(gone.processes, 1);
	ASSERT_EQ(gone.others, 0);

	/* 4. A callback's negative value stops the walk and is returned. */
	struct seen stop = { .c = &c, .exe = exe, .exe_st = s.exe_st, .stop_with = -ECANCELED };
	o = ops_for(&stop);
	ASSERT_EQ(rlog__rundown_walk(NULL, NULL, 0, &o, &st), -ECANCELED);
	ASSERT_EQ_U64(st.processes, 1);
	ASSERT_EQ_U64(st.threads, 0);
	ASSERT_EQ(rlog__rundown_walk("/nonexistent-proc", NULL, 0, &o, &st), -ENOENT);

	close(c.to);
	int status;
	waitpid(c.pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child ended well");
	fclose(c.from);
	return done_testing();
}
