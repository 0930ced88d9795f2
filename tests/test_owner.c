/*
 * test_owner - a session region is only its owner's: a region chowned to
 * another uid (or opened to group and others) is refused with -EACCES by
 * rlog_attach, which then writes nothing into it, and by every command
 * that opens a session, with one line naming the owner; `list` shows it as
 * foreign without opening it.  Root is not exempt: a region a user planted
 * under a name root uses must not receive root's events.  The per-user
 * wake registry is checked the same way.  Needs root (fchown to another
 * uid), as in CI.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "wake.h"

#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "tap.h"

#define NOBODY 65534

static char name[64], path[256], shm[160], snap[256], rec[256];

static void refused(const char *cmd, const char *line, const char *a0, const char *a1,
		    const char *a2, const char *a3)
{
	struct h_run r;
	h_ringlog(&r, cmd, a0, a1, a2, a3, NULL);
	ok(r.status == 1, "%s refuses (status %d)", cmd, r.status);
	ASSERT_STREQ(r.err, line);
	ASSERT_STREQ(r.out, "");
}

static void every_command(const char *why)
{
	char line[512];
#define LINE(cmd) \
	(snprintf(line, sizeof line, "ringlog: %s: session %s: %s\n", cmd, name, why), line)
	refused("query", LINE("query"), name, NULL, NULL, NULL);
	refused("flush", LINE("flush"), name, NULL, NULL, NULL);
	refused("update", LINE("update"), name, "--flush-timer", "100", NULL);
	refused("emit", LINE("emit"), name, "1024", NULL, NULL);
	refused("snapshot", LINE("snapshot"), name, "-o", snap, NULL);
	refused("tail", LINE("tail"), name, NULL, NULL, NULL);
	refused("recover", LINE("recover"), name, "-o", rec, NULL);
	refused("start", LINE("start"), name, "--resume", NULL, NULL);
	refused("stop", LINE("stop"), name, NULL, NULL, NULL);
	refused("stop", LINE("stop"), name, "--force", NULL, NULL);
#undef LINE
	ok(access(snap, F_OK) < 0 && access(rec, F_OK) < 0, "no snapshot or recovered file made");

	/* The library: refused, and the writes that follow go nowhere. */
	ASSERT_EQ(rlog_attach(name), -EACCES);
	uint64_t v[2] = { 1, 2 };
	ASSERT_EQ(rlog_write(1024, v, sizeof v), 0);
}

static void foreign_region(void)
{
	h_start(name, path, NULL, NULL);
	struct stat st;
	ok(stat(shm, &st) == 0 && (st.st_mode & 07777) == 0600 && st.st_uid == 0,
	   "%s is root's, mode 0600", shm);

	/* Another user's region under a name root uses. */
	ASSERT_EQ(chown(shm, NOBODY, NOBODY), 0);
	char why[128];
	snprintf(why, sizeof why, "owned by uid %d, not by you (uid 0)", NOBODY);
	every_command(why);
	struct h_run r;
	char line[256];
	h_ringlog(&r, "start", name, "--mode", "overwrite", NULL);
	ASSERT_EQ(r.status, 1);
	snprintf(line, sizeof line, "ringlog: start: session '%s' already exists, owned by uid %d, "
		 "not by you (uid 0)\n", name, NOBODY);
	ASSERT_STREQ(r.err, line);
	h_ringlog(&r, "list", NULL);
	snprintf(line, sizeof line, "%-24s %-9s uid %d, mode 0600\n", name, "foreign", NOBODY);
	ASSERT_CONTAINS(r.out, line);
	ASSERT_EQ(r.status, 0);

	/* Root's own, but open to others. */
	ASSERT_EQ(chown(shm, 0, 0), 0);
	ASSERT_EQ(chmod(shm, 0644), 0);
	every_command("open to other users (mode 0644): not a region of yours");
	ASSERT_EQ(chmod(shm, 0600), 0);

	/* Its own again: nothing went into it meanwhile. */
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), 0);
	ASSERT_EQ_U64(h_kv(r.out, "processes_attached"), 0);
	struct h_summary sum;
	h_summarize(path, &sum);
	ASSERT_EQ(sum.open_err, 0);
	ASSERT_EQ_U64(sum.events, 0);
	unlink(path);
}

/* tail: the region is root's, but the socket at its path is served by
 * another uid (planted before the session started). */
static void foreign_socket(void)
{
	char sock[100], line[512];
	snprintf(name, sizeof name, "%s", h_session("osock"));
	snprintf(sock, sizeof sock, "/dev/shm/ringlog-rt.%s", name);
	h_start(name, path, NULL, NULL);
	int ready[2];
	BAIL_IF(pipe(ready) < 0, "pipe");
	pid_t child = fork();
	if (child == 0) {
		close(ready[0]);
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		snprintf(a.sun_path, sizeof a.sun_path, "%s", sock);
		int s = socket(AF_UNIX, SOCK_STREAM, 0);
		if (setgid(NOBODY) < 0 || setuid(NOBODY) < 0 || s < 0 ||
		    bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 4) < 0)
			_exit(1);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	char c;
	ok(read(ready[0], &c, 1) == 1, "another uid listens on %s", sock);
	close(ready[0]);
	struct h_run r;
	h_ringlog(&r, "tail", name, NULL);
	ASSERT_EQ(r.status, 1);
	snprintf(line, sizeof line, "ringlog: tail: session %s: its socket %s is served by uid %d, "
		 "not by you (uid 0)\n", name, sock, NOBODY);
	ASSERT_STREQ(r.err, line);
	ASSERT_STREQ(r.out, "");
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	unlink(sock);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	unlink(path);
}

/* The wake registry, in a /dev/shm of this process's own (a private mount
 * namespace), so that the sessions of tests running beside it keep theirs. */
static void wake_registry(void)
{
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", "/dev/shm", "tmpfs", 0, "mode=1777") < 0) {
		diag("no private /dev/shm (%s): the wake registry is not checked", strerror(errno));
		return;
	}
	char reg[64];
	snprintf(reg, sizeof reg, "/dev/shm%s0", RLOG_WAKE_PREFIX);
	struct rlog_wake_registry *w = rlog__wake_open();
	ok(w != NULL, "the registry is created");
	if (w)
		munmap(w, sizeof *w);
	ASSERT_EQ(rlog__wake_add("x", +1), 0);
	ASSERT_EQ(chown(reg, NOBODY, NOBODY), 0);
	ok(rlog__wake_open() == NULL, "another user's registry is refused");
	ASSERT_EQ(rlog__wake_add("x", +1), -ENOENT);
	ASSERT_EQ(chown(reg, 0, 0), 0);
	ASSERT_EQ(chmod(reg, 0666), 0);
	ok(rlog__wake_open() == NULL, "a registry open to others is refused");
	ASSERT_EQ(chmod(reg, 0600), 0);
	w = rlog__wake_open();
	ok(w != NULL && w->count[rlog__wake_hash("x")] == 1,
	   "its own again: only the first add counted");
	umount("/dev/shm");
}

int main(void)
{
	if (geteuid() != 0)
		skip_all("giving a region to another uid needs root");
	snprintf(name, sizeof name, "%s", h_session("owner"));
	snprintf(path, sizeof path, "%s", h_path("owner"));
	snprintf(snap, sizeof snap, "/tmp/rlog-test-owner-snap-%d.rlog", (int)getpid());
	snprintf(rec, sizeof rec, "/tmp/rlog-test-owner-rec-%d.rlog", (int)getpid());
	snprintf(shm, sizeof shm, "/dev/shm%s%s", RLOG_SHM_PREFIX, name);
	unlink(snap);
	unlink(rec);
	foreign_region();
	foreign_socket();
	wake_registry();
	return done_testing();
}
