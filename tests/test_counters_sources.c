/*
 * test_counters_sources - the counters the daemon reads from the kernel
 * (docs/FORMAT.md, "The counter sources"), through a real session and daemon:
 *   - a process that touches N fresh pages between two readings has
 *     proc.minflt deltas (/proc/PID/stat) adding up to at least N, and so
 *     perf.page-faults (perf_event_open) where the machine has it; at the
 *     same time a second process, whose thread (there before the daemon saw
 *     the process) touches 2N pages, has its own counters, at least 2N;
 *   - a hardware counter the machine lacks (on this virtual machine: all
 *     of them) gets one line naming it and why, and the session starts and
 *     records the others; `ringlog counters` says the same;
 *   - a perf_event_paranoid refusal gets its own line (as an unprivileged
 *     user: nobody when the test runs as root, from a copy of ringlog
 *     under /tmp, since nobody may not reach the checkout), and that
 *     session runs too;
 *   - a list with a name that is no counter is refused with one line.
 */
#include "counter_run.h"

#include <pthread.h>
#include <sys/wait.h>

#include "counter_catalog.h"
#include "harness.h"
#include "tap.h"

#define PAGES 2000

static struct h_run r;

static void start_ok(const char *name, const char *path, const char *counters)
{
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--counters", counters, "--counter-period", "10ms",
		  NULL);
	cr_started(&r, name);
}

/* The second process: a thread that exists from the start touches its
 * pages when told (pipe go), then says so (pipe done) and waits to be
 * told to exit. */
static int go[2], done[2];

static void *toucher(void *arg)
{
	char b;
	(void)arg;
	if (read(go[0], &b, 1) == 1)
		cr_touch_pages(2 * PAGES);
	return NULL;
}

static pid_t second_process(const char *name)
{
	if (pipe(go) < 0 || pipe(done) < 0)
		return -1;
	fflush(NULL);
	pid_t p = fork();
	if (p == 0) {
		pthread_t th;
		char b = 'a';
		/* A fork child of an attached process claims its process entry
		 * (and so is sampled) at its first write. */
		uint32_t v = 1;
		if (rlog_attach(name) != 0 || rlog_write(1024, &v, sizeof v) != 1 ||
		    pthread_create(&th, NULL, toucher, NULL) != 0)
			_exit(1);
		if (write(done[1], &b, 1) != 1) /* attached, its thread there */
			_exit(1);
		pthread_join(th, NULL);
		if (write(done[1], &b, 1) != 1 || read(go[0], &b, 1) != 1) /* touched; wait */
			_exit(1);
		_exit(0);
	}
	return p;
}

static void test_page_faults(void)
{
	char name[64], path[256], why[256];
	cr_names("pf", name, path);
	bool perf = rlog__counter_probe(RLOG_CTR_BIT_PERF + 6, why, sizeof why) == RLOG__CTR_OK;
	start_ok(name, path, perf ? "proc.minflt,perf.page-faults" : "proc.minflt");
	ASSERT_EQ(rlog_attach(name), 0);
	pid_t child = second_process(name);
	char b = 'g';
	ASSERT_EQ(read(done[0], &b, 1), 1); /* attached */
	struct rlog__region reg;
	cr_open(name, &reg);
	cr_passes(&reg, 2); /* the daemon has seen both processes: their baselines are taken */
	ASSERT_EQ(write(go[1], &b, 1), 1);
	cr_touch_pages(PAGES);
	ASSERT_EQ(read(done[0], &b, 1), 1); /* the child's thread touched its pages */
	cr_passes(&reg, 2);
	rlog_detach();
	rlog__region_close(&reg);
	struct cr_list l;
	cr_stop_read(name, path, &r, &l);
	ASSERT_EQ(write(go[1], &b, 1), 1);
	int st;
	ASSERT_EQ(waitpid(child, &st, 0), child);
	ASSERT_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 0);
	uint64_t cminflt = cr_sum(&l, (uint32_t)child, "proc.minflt");
	ok(cminflt >= 2 * PAGES, "second process: proc.minflt %" PRIu64 " for %d pages", cminflt,
	   2 * PAGES);
	if (perf) {
		uint64_t cpf = cr_sum(&l, (uint32_t)child, "perf.page-faults");
		ok(cpf >= 2 * PAGES, "second process: perf.page-faults %" PRIu64 " for %d pages "
		   "(its thread was there before the daemon opened the counters)", cpf, 2 * PAGES);
	}
	uint64_t minflt = cr_sum(&l, (uint32_t)getpid(), "proc.minflt");
	ok(minflt >= PAGES, "proc.minflt: %" PRIu64 " faults for %d pages touched", minflt, PAGES);
	const struct cr_rec *v[1];
	if (cr_of(&l, (uint32_t)getpid(), "proc.minflt", v, 1) > 0) {
		ASSERT_EQ(v[0]->c.source, RLOG_COUNTER_SRC_PROC);
		ok(v[0]->c.flags & RLOG_COUNTER_FLAG_VALUE, "the first record carries the value");
	}
	if (perf) {
		uint64_t pf = cr_sum(&l, (uint32_t)getpid(), "perf.page-faults");
		ok(pf >= PAGES, "perf.page-faults: %" PRIu64 " faults for %d pages touched", pf, PAGES);
	} else {
		diag("perf.page-faults not available here (%s): not checked", why);
	}
	cr_free(&l);
	unlink(path);
}

/* A hardware counter this machine may lack: one line, and the session
 * runs and records the others. */
static void test_missing_hardware(void)
{
	char name[64], path[256], why[256], line[512];
	cr_names("hw", name, path);
	enum rlog__counter_avail a = rlog__counter_probe(RLOG_CTR_BIT_PERF + 5, why, sizeof why);
	struct h_run st, q, c;
	unlink(path);
	h_ringlog(&st, "start", name, "-o", path, "--counters", "perf.cycles,proc.minflt",
		  "--counter-period", "10ms", NULL);
	ASSERT_EQ(st.status, 0);
	ASSERT_CONTAINS(st.out, "session: ");
	h_ringlog(&q, "query", name, NULL);
	ASSERT_EQ(q.status, 0);
	h_ringlog(&c, "counters", NULL);
	ASSERT_EQ(c.status, 0);
	if (a == RLOG__CTR_NO_HARDWARE) {
		snprintf(line, sizeof line, "ringlog: start: counter perf.cycles: not recorded: %s\n",
			 why);
		ASSERT_STREQ(st.err, line);
		ASSERT_CONTAINS(q.out, "counters: proc.minflt\n");
		snprintf(line, sizeof line, "perf.cycles                no         %s\n", why);
		ASSERT_CONTAINS(c.out, line);
		if (access("/sys/bus/event_source/devices/cpu", F_OK) != 0 &&
		    access("/sys/bus/event_source/devices/cpu_core", F_OK) != 0)
			ASSERT_STREQ(why, "this machine has no hardware performance counters (no CPU "
					  "PMU: a virtual machine without a virtual PMU?)");
	} else if (a == RLOG__CTR_OK) {
		diag("this machine counts cycles: the missing-counter line is not checked");
		ASSERT_STREQ(st.err, "");
		ASSERT_CONTAINS(q.out, "counters: proc.minflt,perf.cycles\n");
	}
	/* The session runs: a process attaches, faults pages, is counted. */
	ASSERT_EQ(rlog_attach(name), 0);
	struct rlog__region reg;
	cr_open(name, &reg);
	cr_passes(&reg, 2);
	cr_touch_pages(100);
	cr_passes(&reg, 2);
	rlog_detach();
	rlog__region_close(&reg);
	struct cr_list l;
	cr_stop_read(name, path, &st, &l);
	ok(cr_sum(&l, (uint32_t)getpid(), "proc.minflt") >= 100, "the other counter is recorded");
	if (a == RLOG__CTR_NO_HARDWARE)
		ASSERT_EQ_U64(cr_of(&l, (uint32_t)getpid(), "perf.cycles", NULL, 0), 0);
	cr_free(&l);
	unlink(path);
}

/* perf_event_paranoid refuses an unprivileged user the whole machine. */
static void test_paranoid(void)
{
	char name[64], path[256], why[256];
	snprintf(name, sizeof name, "%s", h_session("par"));
	snprintf(path, sizeof path, "/tmp/rlog-test-par-%d.rlog", (int)getpid());
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int paranoid = -9;
	if (f) {
		if (fscanf(f, "%d", &paranoid) != 1)
			paranoid = -9;
		fclose(f);
	}
	if (paranoid < 1) {
		diag("kernel.perf_event_paranoid is %d: nothing refused, not checked", paranoid);
		return;
	}
	long id = geteuid() == 0 ? 65534 : -1; /* as root, as nobody */
	/* Nobody may not reach the build directory (a checkout in root's
	 * home, mode 0700): it runs a copy under /tmp.  The test puts the
	 * original in such a directory first, so that it checks, wherever
	 * this checkout lives, that the copy is what makes it work. */
	char priv[] = "/tmp/rlog-priv-XXXXXX", privbin[64], dir[64] = "";
	const char *bin = h_bin(), *no = NULL;
	char *copy = NULL;
	if (id >= 0) {
		BAIL_IF(!mkdtemp(priv), "cannot make a directory under /tmp");
		snprintf(privbin, sizeof privbin, "%s/ringlog", priv);
		BAIL_IF(!proc_copy_file(bin, privbin), "cannot copy %s", bin);
		const char *version[] = { privbin, "--version", NULL };
		struct run v = proc_run_as(version, id);
		ok(v.status == 127 || v.status == 126,
		   "nobody cannot run a ringlog in a 0700 directory (status %d)", v.status);
		run_free(&v);
		copy = proc_reachable_copy(privbin, dir, sizeof dir, &no);
		unlink(privbin);
		rmdir(priv);
		if (copy == NULL) {
			diag("not checked as nobody: %s", no);
			proc_reachable_remove(dir);
			return;
		}
		bin = copy;
	}
	char refused[160];
	snprintf(refused, sizeof refused, "refused by kernel.perf_event_paranoid = %d (system-wide "
		 "counters need 0 or less, or CAP_PERFMON)\n", paranoid);
	const char *counters[] = { bin, "counters", NULL };
	struct run c = proc_run_as(counters, id);
	ASSERT_EQ(c.status, 0);
	snprintf(why, sizeof why, "system.page-faults         no         %s", refused);
	ASSERT_CONTAINS(c.out, why);
	run_free(&c);

	unlink(path);
	const char *start[] = { bin, "start", name, "-o", path, "--counters",
				"app,system.page-faults", NULL };
	c = proc_run_as(start, id);
	ASSERT_EQ(c.status, 0);
	snprintf(why, sizeof why, "ringlog: start: counter system.page-faults: not recorded: %s",
		 refused);
	ASSERT_STREQ(c.err, why);
	run_free(&c);
	const char *query[] = { bin, "query", name, NULL };
	c = proc_run_as(query, id);
	ASSERT_EQ(c.status, 0);
	ASSERT_CONTAINS(c.out, "counters: app\n");
	run_free(&c);
	const char *stop[] = { bin, "stop", name, NULL };
	c = proc_run_as(stop, id);
	ASSERT_EQ(c.status, 0);
	run_free(&c);
	unlink(path);
	free(copy);
	proc_reachable_remove(dir);
}

static void test_bad_list(void)
{
	h_ringlog(&r, "start", "never", "-o", "/tmp/never.rlog", "--counters", "app,perf.bogus",
		  NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, "ringlog: start: --counters: 'perf.bogus' is not a counter (ringlog "
			    "counters lists them; groups: app, proc, perf, system, all, none)\n");
	h_ringlog(&r, "start", "never", "-o", "/tmp/never.rlog", "--counter-period", "5ms", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, "ringlog: start: --counter-period '5ms': expected milliseconds (or a "
			    "number with ms or s) from 10 ms to 60 s\n");
	h_ringlog(&r, "update", "never", "--counters", "", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, "ringlog: update: --counters: '' is not a counter (ringlog counters "
			    "lists them; groups: app, proc, perf, system, all, none)\n");
	h_ringlog(&r, "counters", "extra", NULL);
	ASSERT_EQ(r.status, 2);
	ASSERT_STREQ(r.err, "ringlog: counters: unexpected argument 'extra'\nusage: ringlog "
			    "counters\n");
}

int main(void)
{
	test_page_faults();
	test_missing_hardware();
	test_paranoid();
	test_bad_list();
	return done_testing();
}
