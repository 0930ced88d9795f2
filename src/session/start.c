/*
 * start.c - creating a session: its log file, its region, its daemon.
 *
 * The log file is opened here, by the command the user typed, so that a
 * bad path is its error (for newfile: the first file, the pattern's %d
 * replaced by 1; the daemon opens the later ones).  A real-time session
 * without -o has no file (RLOG_MODE_NO_FILE).
 *
 *   caller                         region                      daemon (child)
 *   ------                         ------                      --------------
 *   open log file (O_EXCL)
 *   create region (CREATING)
 *   truncate the file (--force)
 *   fork ------------------------------------------------------> rlog__daemon_run
 *   futex_wait(state, CREATING) <- state = ACTIVE (release) <-- calibrate, file header,
 *                                  futex_wake(state)             LOG_MARKER
 */
#define _GNU_SOURCE
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomics.h"
#include "clock.h"
#include "daemon/adopt.h"
#include "daemon/daemon.h"
#include "format/logfile.h"
#include "futex.h"
#include "wake.h"
#include "io.h"
#include "sysperm.h"

/* How long start waits for the daemon to make the session ACTIVE. */
#define START_WAIT_NS UINT64_C(10000000000)

static void detach_stdio(void)
{
	int fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
}

/* Waits for the daemon pid to make the session ACTIVE (or FAILED). */
static int wait_active(struct rlog__region *r, pid_t pid, struct rlog__start_result *out)
{
	uint64_t deadline = rlog__monotonic_ns() + START_WAIT_NS;
	uint32_t st;
	/* Pairs with the daemon's store_release(state) and futex_wake. */
	while ((st = load_acquire(&r->hdr->state)) == RLOG_STATE_CREATING) {
		int status;
		if (waitpid(pid, &status, WNOHANG) == pid)
			return -ECHILD;
		if (rlog__monotonic_ns() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return -ETIMEDOUT;
		}
		rlog__futex_wait(&r->hdr->state, RLOG_STATE_CREATING, 100);
	}
	if (st != RLOG_STATE_ACTIVE) {
		snprintf(out->detail, sizeof out->detail, "%s",
			 r->hdr->last_error[0] ? r->hdr->last_error : "the daemon failed");
		waitpid(pid, NULL, 0);
		return -EIO;
	}
	return 0;
}

int rlog__session_start(const struct rlog__start *s, struct rlog__start_result *out)
{
	memset(out, 0, sizeof *out);
	int err;
	/* System events first: a user without their privileges hears that,
	 * not about another property (docs/SESSIONS.md, "Privileges"). */
	out->step = RLOG__START_SYSTEM;
	struct rlog__sys_props sys;
	rlog__sys_props_default(&sys);
	err = rlog__sys_props_apply(&sys, &s->system, s->system_give, out->detail,
				    sizeof out->detail);
	if (err < 0)
		return err;
	if (sys.flags && (err = rlog__sys_priv_check(out->detail, sizeof out->detail)) < 0)
		return err;
	out->step = RLOG__START_PROPS;
	err = rlog__props_check(s, out->detail, sizeof out->detail);
	if (err < 0)
		return err;
	struct rlog__region_params params = s->params;
	char pending[sizeof ((struct rlog_shm_header *)0)->enable_names];
	pending[0] = '\0';
	if (s->enable) {
		uint64_t bits;
		err = rlog__enable_parse(s->enable, NULL, &bits, pending, sizeof pending, out->detail,
					 sizeof out->detail);
		if (err < 0)
			return err;
		params.enable_mask = bits;
	}
	out->step = RLOG__START_NAME;
	if (rlog__name_validate(s->name) < 0)
		return -EINVAL;

	if (s->path == NULL)
		params.log_file_mode |= RLOG_MODE_NO_FILE;
	/* A flight recorder's pool is its ring: all of it from the start, so
	 * that a producer reuses a buffer only when there is no other. */
	if (params.log_file_mode & RLOG_MODE_OVERWRITE)
		params.min_buffers = params.max_buffers;
	bool newfile = (params.log_file_mode & RLOG_MODE_NEWFILE) != 0;

	/* With force, the file is truncated only once the session exists: a
	 * refused start must not wipe a file (perhaps a running session's). */
	out->step = RLOG__START_FILE;
	char first[PATH_MAX] = "";
	if (s->path && newfile && rlog__file_name(s->path, 1, first, sizeof first) < 0)
		return -ENAMETOOLONG;
	const char *open_path = newfile ? first : s->path;
	int fd = -1;
	bool created = false;
	if (s->path) {
		/* KEEP: truncated below, once the session exists. */
		fd = rlog__create_output(open_path, s->force ? RLOG_OUT_FORCE | RLOG_OUT_KEEP : 0,
					 &created); /* created: ours to remove */
		if (fd < 0)
			return fd;
	}

	out->step = RLOG__START_PATH;
	char abs[PATH_MAX + 8] = "";
	if (s->path && realpath(open_path, abs) == NULL) {
		err = -ENAMETOOLONG;
		goto fail_file;
	}
	if (newfile) {
		/* The pattern, absolute: the first file's directory and the
		 * pattern's last component (props.c: the %d is in it). */
		const char *base = strrchr(s->path, '/');
		char *slash = strrchr(abs, '/');
		if (slash == NULL) {
			err = -ENAMETOOLONG;
			goto fail_file;
		}
		size_t dir = (size_t)(slash - abs) + 1;
		base = base ? base + 1 : s->path;
		if (dir + strlen(base) >= sizeof abs) {
			err = -ENAMETOOLONG;
			goto fail_file;
		}
		memmove(abs + dir, base, strlen(base) + 1);
	}
	if (strlen(abs) >= RLOG_PATH_MAX) {
		err = -ENAMETOOLONG;
		goto fail_file;
	}
	memcpy(out->log_file, abs, strlen(abs) + 1);

	out->step = RLOG__START_REGION;
	struct rlog__region r;
	err = rlog__region_create(s->name, &params, &r);
	if (err < 0)
		goto fail_file;
	struct stat fst;
	out->step = RLOG__START_FILE;
	if (fd >= 0 && s->force && fstat(fd, &fst) == 0 && S_ISREG(fst.st_mode) &&
	    ftruncate(fd, 0) < 0) {
		err = -errno;
		goto fail_region;
	}
	r.hdr->tick_source = rlog__tick_source_pick();
	memcpy(r.hdr->enable_names, pending, strlen(pending) + 1);
	rlog__sys_props_put(r.hdr, &sys);
	memcpy(r.hdr->log_file, abs, strlen(abs) + 1);

	out->step = RLOG__START_FORK;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		err = -errno;
		goto fail_region;
	}
	if (pid == 0) {
		if (s->detach) {
			setsid();
			detach_stdio();
		}
		struct rlog__daemon_opts o = { .out_fd = fd, .pattern = newfile ? abs : NULL,
					       .force = s->force, .sink = s->sink };
		int rc = rlog__daemon_run(&r, &o);
		_exit(rc < 0 ? 1 : 0);
	}
	if (fd >= 0)
		close(fd);
	out->step = RLOG__START_DAEMON;
	err = wait_active(&r, pid, out);
	if (err < 0) {
		/* The daemon removed the region itself if it got to fail; if it
		 * died or hung, the region is still there. */
		rlog__region_unlink(s->name);
		rlog__region_close(&r);
		if (created)
			unlink(open_path);
		return err;
	}
	/* Processes waiting for this session (late attach) pick it up at
	 * their next write, which may be right after this returns
	 * (src/common/wake.h).  The daemon lowers the count when it stops, if
	 * it was raised. */
	if (rlog__wake_add(s->name, +1) == 0)
		store_release(&r.hdr->wake_counted, 1);
	out->drain_running = r.ctl->drain_running;
	rlog__region_close(&r);
	out->daemon_pid = pid;
	return 0;

fail_region:
	rlog__region_unlink(s->name);
	rlog__region_close(&r);
fail_file:
	if (fd >= 0)
		close(fd);
	if (created)
		unlink(open_path);
	return err;
}

int rlog__session_resume(const char *name, bool detach, pid_t *daemon_pid, char *detail,
			 size_t detail_size)
{
	detail[0] = '\0';
	if (rlog__name_validate(name) < 0)
		return -EINVAL;
	struct rlog__region r;
	int err = rlog__region_open(name, &r); /* -ENOENT, -EPROTO: said here */
	if (err < 0)
		return err;
	rlog__region_close(&r);
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		err = -errno;
		close(p[0]);
		close(p[1]);
		return err;
	}
	if (pid == 0) {
		close(p[0]);
		if (detach) {
			setsid();
			detach_stdio();
		}
		rlog__daemon_signals();
		_exit(rlog__daemon_adopt_serve(name, p[1]) < 0 ? 1 : 0);
	}
	close(p[1]);
	char msg[sizeof err + 256];
	size_t got = 0;
	while (got < sizeof msg) {
		ssize_t n = read(p[0], msg + got, sizeof msg - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(p[0]);
	if (got < sizeof msg) {
		waitpid(pid, NULL, 0);
		return -ECHILD; /* it died before it said */
	}
	memcpy(&err, msg, sizeof err);
	if (err < 0) {
		snprintf(detail, detail_size, "%.*s", 255, msg + sizeof err);
		waitpid(pid, NULL, 0);
		return err;
	}
	*daemon_pid = pid;
	return 0;
}
