/*
 * test_cli_list.c - what `ringlog list`, `start`, `query` and `stop` print
 * about the sessions on the machine, exactly:
 *
 *   - `list` with no session says "no sessions" (exit 0), not nothing;
 *   - with one session it prints exactly that session's line;
 *   - `start -o RELATIVE` prints the absolute path of the file, and `query`
 *     and `stop` print the same one;
 *   - `query` says what is not drained yet, which events_written does not
 *     count: the events of a buffer handed to a daemon that has not run
 *     since (stopped with SIGSTOP: exact), the buffer a producer still
 *     holds, and a line on stderr; processes_attached_now beside
 *     processes_attached;
 *   - a region that is no valid session is listed as `invalid`, a state
 *     `ringlog help list` documents.
 *
 * "No session" must be true of the whole machine, and other tests create
 * sessions at the same time, so the test first gives itself a private
 * /dev/shm: a new mount namespace (as root, or in a new user namespace)
 * with a tmpfs there.  Where neither is allowed it is skipped, saying so.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <ctype.h>
#include <limits.h>
#include <sched.h>
#include <sys/mount.h>

#include "shm.h"
#include "tap.h"
#include "proc_run.h"

static bool write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	bool ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	if (fd >= 0)
		close(fd);
	return ok;
}

/* A private, empty /dev/shm; NULL on success, else what failed. */
static const char *private_shm(void)
{
	if (unshare(CLONE_NEWNS) < 0) {
		/* Not root: a user namespace in which we are ourselves. */
		char map[64];
		unsigned uid = (unsigned)getuid(), gid = (unsigned)getgid();
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
			return "neither unshare(CLONE_NEWNS) nor a user namespace is allowed here";
		snprintf(map, sizeof map, "%u %u 1\n", uid, uid);
		if (!write_file("/proc/self/uid_map", map) ||
		    !write_file("/proc/self/setgroups", "deny") ||
		    (snprintf(map, sizeof map, "%u %u 1\n", gid, gid), !write_file("/proc/self/gid_map", map)))
			return "cannot map our ids in a user namespace";
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return "cannot make the mounts private";
	if (mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") < 0)
		return "cannot mount a tmpfs on /dev/shm";
	return NULL;
}

int main(void)
{
	const char *why = private_shm();
	if (why)
		skip_test(why);

	char dir[] = "/tmp/rlog-list-XXXXXX", abs[PATH_MAX], path[PATH_MAX + 16], line[PATH_MAX + 128];
	BAIL_IF(!mkdtemp(dir) || chdir(dir) < 0 || !realpath(dir, abs), "cannot make a directory");
	snprintf(path, sizeof path, "%s/rel.rlog", abs);
	const char *name = h_session("list");
	struct h_run r;

	h_ringlog(&r, "list", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.out, "no sessions\n");
	ASSERT_STREQ(r.err, "");

	h_ringlog(&r, "start", name, "-o", "rel.rlog", NULL);
	ASSERT_EQ(r.status, 0);
	int daemon = (int)h_kv(r.out, "daemon_pid");
	snprintf(line, sizeof line, "session: %s\ndaemon_pid: %d\nfile: %s\n", name, daemon, path);
	ASSERT_STREQ(r.out, line);

	h_ringlog(&r, "list", NULL);
	ASSERT_EQ(r.status, 0);
	snprintf(line, sizeof line, "%-24s %-9s %s\n", name, "active", path);
	ASSERT_STREQ(r.out, line);

	h_ringlog(&r, "query", name, NULL);
	ASSERT_EQ(r.status, 0);
	snprintf(line, sizeof line, "\nfile: %s\n", path);
	ASSERT_CONTAINS(r.out, line);

	/* Not drained yet: this process holds a buffer with two events; the
	 * daemon, stopped, has not drained the buffer emit handed over. */
	ASSERT_EQ(rlog_attach(name), 0);
	uint64_t v = 7;
	ASSERT_EQ(rlog_write(1024, &v, sizeof v), 1);
	ASSERT_EQ(rlog_write(1024, &v, sizeof v), 1);
	ASSERT_EQ(kill((pid_t)daemon, SIGSTOP), 0);
	h_ringlog(&r, "emit", name, "1025", "--count", "3", NULL);
	ASSERT_STREQ(r.out, "emitted: 3\nwritten: 3\nlost: 0\n");
	h_ringlog(&r, "query", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_not_drained"), 3);
	ASSERT_EQ_U64(h_kv(r.out, "buffers_not_drained"), 1);
	ASSERT_EQ_U64(h_kv(r.out, "buffers_held"), 1);
	ASSERT_EQ_U64(h_kv(r.out, "processes_attached_now"), 1);
	ASSERT_EQ_U64(h_kv(r.out, "processes_attached"), 2);
	ASSERT_EQ_U64(h_kv(r.out, "processes"), UINT64_MAX); /* the old, unclear key */
	snprintf(line, sizeof line, "ringlog: query: %s: not drained yet, so not in events_written: "
		 "3 events in 1 buffer(s) handed to the daemon (drained at its next pass), 1 "
		 "buffer(s) producers still hold (drained when full, by the flush timer, 'ringlog "
		 "flush %s' or stop)\n", name, name);
	ASSERT_STREQ(r.err, line);
	ASSERT_EQ(kill((pid_t)daemon, SIGCONT), 0);
	rlog_detach();
	h_ringlog(&r, "flush", name, NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "query", name, "--json", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_CONTAINS(r.out, "\"events_written\":5,");
	ASSERT_CONTAINS(r.out, "\"events_not_drained\":0,\"buffers_not_drained\":0,"
			       "\"buffers_held\":0,");
	ASSERT_STREQ(r.err, "");

	/* The name as the region's header holds it, escape sequences
	 * planted in it: list escapes it as query and stop do. */
	struct rlog__region reg;
	ASSERT_EQ(rlog__region_open(name, &reg), 0);
	char saved[sizeof reg.hdr->name];
	memcpy(saved, reg.hdr->name, sizeof saved);
	snprintf(reg.hdr->name, sizeof reg.hdr->name, "%.40s\x1b[5m\a", name);
	h_ringlog(&r, "list", NULL);
	ok(r.status == 0 && strchr(r.out, 0x1b) == NULL && strchr(r.out, '\a') == NULL &&
		   strstr(r.out, "\\x1b[5m") != NULL,
	   "list: a name with escape sequences from the region, escaped: %s", r.out);
	memcpy(reg.hdr->name, saved, sizeof saved);
	rlog__region_close(&reg);

	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	snprintf(line, sizeof line, "session: %s\nfile: %s\n", name, path);
	ok(strncmp(r.out, line, strlen(line)) == 0, "stop prints the same absolute path");

	h_ringlog(&r, "list", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.out, "no sessions\n");

	/* A region by a session's name that is no session: "invalid", a
	 * state the help documents. */
	char shm[96], bogus[160];
	const char *bad = h_session("bad");
	BAIL_IF(rlog__shm_name(bad, shm, sizeof shm) < 0, "shm name");
	snprintf(bogus, sizeof bogus, "/dev/shm%s", shm);
	int fd = open(bogus, O_CREAT | O_EXCL | O_WRONLY, 0600);
	BAIL_IF(fd < 0 || ftruncate(fd, 65536) < 0, "cannot create %s", bogus);
	close(fd);
	h_ringlog(&r, "list", NULL);
	ASSERT_EQ(r.status, 0);
	char lower[80];
	size_t k = 0;
	for (; bad[k] && k + 1 < sizeof lower; k++)
		lower[k] = (char)tolower((unsigned char)bad[k]);
	lower[k] = '\0';
	snprintf(line, sizeof line, "%-24s %-9s %s\n", lower, "invalid", "-");
	ASSERT_STREQ(r.out, line);
	h_ringlog(&r, "help", "list", NULL);
	ASSERT_CONTAINS(r.out, "\n  invalid ");
	unlink(bogus);

	h_ringlog(&r, "list", "extra", NULL);
	ASSERT_EQ(r.status, 2);
	ASSERT_STREQ(r.out, "");
	ASSERT_STREQ(r.err, "ringlog: list: unexpected argument 'extra'\nusage: ringlog list\n");

	unlink(path);
	rmdir(dir);
	return done_testing();
}
