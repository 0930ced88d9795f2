/*
 * test_sys_priv.c - the privileges system events need (src/common/sysperm.h,
 * docs/SESSIONS.md "Privileges"), exactly:
 *
 *   1. the rule on crafted facts: a capability (CAP_PERFMON or
 *      CAP_SYS_ADMIN) or kernel.perf_event_paranoid -1; tracefs readable,
 *      or absent but mountable with CAP_SYS_ADMIN; each refusal's line;
 *   2. an unprivileged user (a child that became nobody, 65534; the
 *      machine's perf_event_paranoid, 2 by default) running the real
 *      `ringlog`:
 *      `start x --system cswitch` prints the one line naming the
 *      capability, the paranoid value and tracefs, exits 1 and leaves no
 *      session; a session without --system starts, records and stops as
 *      usual for the same user; `update --system` on it is refused the
 *      same way and changes nothing.
 *
 * Part 2 needs root (to become nobody); as another user it is skipped,
 * saying so.  It never changes the machine's perf_event_paranoid (other
 * tests read it at the same time): where it is -1, any user may trace the
 * kernel and part 2 is skipped, saying so (part 1 covers -1).
 */
#define _GNU_SOURCE
#include "harness.h"

#include <ctype.h>
#include <grp.h>
#include <sys/stat.h>

#include "sysperm.h"

#define NOBODY 65534u

/* --------------------------------------------------------------- */
/* 1. The rule                                                      */
/* --------------------------------------------------------------- */

static struct rlog__sys_priv_facts facts(uint64_t caps, int paranoid, int tracefs_err,
					 bool mountable)
{
	struct rlog__sys_priv_facts f;
	memset(&f, 0, sizeof f);
	f.euid = 1000;
	f.cap_eff = caps;
	f.paranoid = paranoid;
	snprintf(f.tracefs, sizeof f.tracefs, "/sys/kernel/tracing/events");
	f.tracefs_err = tracefs_err;
	f.tracefs_mountable = mountable;
	return f;
}

static void judge(struct rlog__sys_priv_facts f, const char *line)
{
	char why[512] = "";
	int err = rlog__sys_priv_judge(&f, why, sizeof why);
	if (line == NULL) {
		ok(err == 0, "caps 0x%llx, paranoid %d, tracefs %d%s: allowed",
		   (unsigned long long)f.cap_eff, f.paranoid, f.tracefs_err,
		   f.tracefs_mountable ? " (mountable)" : "");
		if (err)
			diag("refused: %s", why);
		return;
	}
	ASSERT_EQ(err, -EPERM);
	ASSERT_STREQ(why, line);
}

static void test_rule(void)
{
	const uint64_t admin = UINT64_C(1) << RLOG__CAP_SYS_ADMIN;
	const uint64_t perfmon = UINT64_C(1) << RLOG__CAP_PERFMON;
	const uint64_t root = UINT64_C(0x1ffffffffff);
	/* A capability, whatever paranoid says. */
	for (int p = -1; p <= 4; p++) {
		judge(facts(root, p, 0, false), NULL);
		judge(facts(perfmon, p, 0, false), NULL);
		judge(facts(admin, p, 0, false), NULL);
	}
	/* No capability: only -1. */
	judge(facts(0, -1, 0, false), NULL);
	judge(facts(UINT64_C(0x3000), 0, 0, false), /* CAP_NET_ADMIN, CAP_NET_RAW: not these */
	      "--system: missing CAP_PERFMON or CAP_SYS_ADMIN (uid 1000, effective capabilities "
	      "0x3000), which kernel.perf_event_paranoid 0 requires (only -1 lets any user trace "
	      "the kernel)");
	judge(facts(0, 2, 0, false),
	      "--system: missing CAP_PERFMON or CAP_SYS_ADMIN (uid 1000, effective capabilities "
	      "0x0), which kernel.perf_event_paranoid 2 requires (only -1 lets any user trace the "
	      "kernel)");
	judge(facts(0, 2, -EACCES, false),
	      "--system: missing CAP_PERFMON or CAP_SYS_ADMIN (uid 1000, effective capabilities "
	      "0x0), which kernel.perf_event_paranoid 2 requires (only -1 lets any user trace the "
	      "kernel); read access to tracefs (/sys/kernel/tracing/events: Permission denied)");
	/* paranoid -1 and an unreadable tracefs: tracefs alone is named. */
	judge(facts(0, -1, -EACCES, false),
	      "--system: missing read access to tracefs (/sys/kernel/tracing/events: Permission "
	      "denied)");
	/* No perf events at all: nobody, root included. */
	judge(facts(root, RLOG__PARANOID_NONE, 0, false),
	      "--system: missing perf events (no /proc/sys/kernel/perf_event_paranoid: a kernel "
	      "without perf_event_open)");
	/* tracefs not mounted: the daemon mounts it, which takes CAP_SYS_ADMIN. */
	judge(facts(admin, 2, -ENOENT, true), NULL);
	judge(facts(perfmon, 2, -ENOENT, true),
	      "--system: missing tracefs, which is not mounted, and CAP_SYS_ADMIN to mount it on "
	      "/sys/kernel/tracing");
	judge(facts(root, 2, -ENOENT, false),
	      "--system: missing tracefs (not mounted at /sys/kernel/tracing, and the kernel has "
	      "none to mount)");

	/* This process's own facts: CapEff as /proc/self/status says it. */
	struct rlog__sys_priv_facts f;
	rlog__sys_priv_facts_read(&f);
	ASSERT_EQ(f.euid, geteuid());
	FILE *st = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long long caps = 0;
	while (st && fgets(line, sizeof line, st))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	if (st)
		fclose(st);
	ASSERT_EQ_U64(f.cap_eff, caps);
}

/* --------------------------------------------------------------- */
/* 2. As nobody, through the real ringlog                           */
/* --------------------------------------------------------------- */

static int paranoid_read(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int v = INT32_MIN;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = INT32_MIN;
		fclose(f);
	}
	return v;
}

/* The child's part, as nobody: its TAP points follow the parent's. */
static int as_nobody(const char *dir, int paranoid)
{
	BAIL_IF(setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
			setresuid(NOBODY, NOBODY, NOBODY) < 0,
		"cannot become nobody: %s", strerror(errno));
	ASSERT_EQ(geteuid(), NOBODY);
	const char *name = h_session("priv");
	char sname[64], lower[64], shm[96], path[512], want[1024];
	snprintf(sname, sizeof sname, "%s", name);
	for (size_t i = 0; i <= strlen(sname); i++)
		lower[i] = (char)tolower((unsigned char)sname[i]);
	snprintf(shm, sizeof shm, "/dev/shm/ringlog.%s", lower);
	snprintf(path, sizeof path, "%s/nobody.rlog", dir);

	/* What this user may do with tracefs, for the line's end. */
	int fd = open("/sys/kernel/tracing/events", O_RDONLY | O_DIRECTORY);
	int tracefs_errno = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	snprintf(want, sizeof want,
		 "ringlog: start: --system: missing CAP_PERFMON or CAP_SYS_ADMIN (uid 65534, "
		 "effective capabilities 0x0), which kernel.perf_event_paranoid %d requires (only "
		 "-1 lets any user trace the kernel)%s%s%s\n",
		 paranoid, tracefs_errno == EACCES ? "; read access to tracefs "
						     "(/sys/kernel/tracing/events: " : "",
		 tracefs_errno == EACCES ? strerror(EACCES) : "", tracefs_errno == EACCES ? ")" : "");

	struct h_run r;
	h_ringlog(&r, "start", sname, "--system", "cswitch", NULL);
	ASSERT_EQ(r.status, 1);
	if (tracefs_errno == 0 || tracefs_errno == EACCES) {
		ASSERT_STREQ(r.err, want);
	} else {
		/* A machine without tracefs: the line names it after the rest. */
		ASSERT_CONTAINS(r.err, "kernel.perf_event_paranoid");
		ASSERT_CONTAINS(r.err, "; tracefs");
	}
	ASSERT_STREQ(r.out, "");
	ok(access(shm, F_OK) < 0 && errno == ENOENT, "no session region %s", shm);
	/* With -o and other options too: the privileges are said first. */
	h_ringlog(&r, "start", sname, "-o", path, "--system", "all", "--profile-hz", "99", NULL);
	ASSERT_EQ(r.status, 1);
	const char *prefix = "ringlog: start: --system: missing CAP_PERFMON or CAP_SYS_ADMIN (uid "
			     "65534,";
	ok(strncmp(r.err, prefix, strlen(prefix)) == 0 &&
		   strchr(r.err, '\n') == r.err + strlen(r.err) - 1,
	   "start -o F --system all: the one line");
	ok(access(path, F_OK) < 0, "no log file");

	/* Without --system, the same user is unaffected. */
	h_ringlog(&r, "start", sname, "-o", path, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");
	h_ringlog(&r, "emit", sname, "300", "--count", "5", NULL);
	ASSERT_EQ(r.status, 0);
	/* update --system: refused, the session as it was. */
	h_ringlog(&r, "update", sname, "--system", "cswitch", NULL);
	ASSERT_EQ(r.status, 1);
	if (tracefs_errno == 0 || tracefs_errno == EACCES) {
		char *upd = want + strlen("ringlog: start: ");
		char line[1100];
		snprintf(line, sizeof line, "ringlog: update: %s", upd);
		ASSERT_STREQ(r.err, line);
	}
	h_ringlog(&r, "query", sname, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_CONTAINS(r.out, "\nsystem: none\nsystem_flags: 0x0\n");
	h_ringlog(&r, "stop", sname, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 5);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), 0);
	unlink(path);
	return done_testing();
}

static void test_nobody(void)
{
	if (geteuid() != 0) {
		diag("SKIP the unprivileged child: becoming nobody needs root");
		return;
	}
	int paranoid = paranoid_read();
	if (paranoid == INT32_MIN) {
		diag("SKIP the unprivileged child: no perf_event_paranoid (no perf events)");
		return;
	}
	if (paranoid < 0) {
		diag("SKIP the unprivileged child: kernel.perf_event_paranoid %d lets any user "
		     "trace the kernel", paranoid);
		return;
	}
	char dir[] = "/tmp/rlog-priv-XXXXXX";
	BAIL_IF(mkdtemp(dir) == NULL || chmod(dir, 0777) < 0, "cannot make a directory");
	fflush(stdout);
	pid_t pid = fork();
	BAIL_IF(pid < 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int rc = as_nobody(dir, paranoid);
		fflush(stdout);
		_exit(rc);
	}
	int status;
	BAIL_IF(waitpid(pid, &status, 0) != pid, "waitpid");
	rmdir(dir);
	/* The child printed the rest of the TAP stream and its plan. */
	exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

int main(void)
{
	test_rule();
	test_nobody();
	return done_testing();
}
