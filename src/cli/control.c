#define _GNU_SOURCE
#include "control.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "atomics.h"
#include "cli.h"
#include "clock.h"
#include "daemon/daemon.h"
#include "futex.h"

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

int ctl_start(const char *name, const char *path, const struct rlog__region_params *p, bool force,
	      bool detach, pid_t *daemon_pid)
{
	if (rlog__name_validate(name) < 0)
		return cli_error("start: invalid session name '%s': use 1 to 64 letters, digits, "
				 "'.', '_' or '-'", name);
	/* With --force, the file is truncated only once the session exists: a
	 * refused start must not wipe a file (perhaps a running session's log). */
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (force ? 0 : O_EXCL);
	int fd = open(path, flags, 0644);
	if (fd < 0) {
		if (errno == EEXIST)
			return cli_error("start: %s: file exists (use --force to overwrite)", path);
		return cli_error("start: %s: %s", path, strerror(errno));
	}
	char abs[PATH_MAX];
	if (realpath(path, abs) == NULL || strlen(abs) >= RLOG_PATH_MAX) {
		close(fd);
		if (!force)
			unlink(path);
		return cli_error("start: %s: the absolute path must be shorter than %d bytes", path,
				 RLOG_PATH_MAX);
	}

	struct rlog__region r;
	int err = rlog__region_create(name, p, &r);
	if (err < 0) {
		close(fd);
		if (!force)
			unlink(path);
		if (err == -EEXIST)
			return cli_error("start: session '%s' already exists", name);
		if (err == -EINVAL)
			return cli_error("start: %s: invalid buffer geometry (buffer size 4..16384 KB in "
					 "whole pages, 2..65536 buffers, region at most 4 GiB)", name);
		return cli_error("start: %s: %s", name, strerror(-err));
	}
	struct stat fst;
	if (force && fstat(fd, &fst) == 0 && S_ISREG(fst.st_mode) && ftruncate(fd, 0) < 0) {
		err = errno;
		rlog__region_unlink(name);
		rlog__region_close(&r);
		close(fd);
		return cli_error("start: %s: %s", path, strerror(err));
	}
	r.hdr->tick_source = rlog__tick_source_pick();
	memcpy(r.hdr->log_file, abs, strlen(abs) + 1);

	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		err = errno;
		rlog__region_unlink(name);
		close(fd);
		return cli_error("start: fork: %s", strerror(err));
	}
	if (pid == 0) {
		if (detach) {
			setsid();
			detach_stdio();
		}
		int rc = rlog__daemon_run(&r, fd);
		_exit(rc < 0 ? 1 : 0);
	}
	close(fd);
	/* Wait for ACTIVE (or FAILED); pairs with the daemon's
	 * store_release(state) and futex_wake. */
	uint64_t deadline = rlog__monotonic_ns() + 10000000000u;
	uint32_t st;
	while ((st = load_acquire(&r.hdr->state)) == RLOG_STATE_CREATING) {
		int status;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			rlog__region_unlink(name);
			rlog__region_close(&r);
			return cli_error("start: %s: the daemon exited before the session started", name);
		}
		if (rlog__monotonic_ns() > deadline) {
			kill(pid, SIGKILL);
			rlog__region_unlink(name);
			rlog__region_close(&r);
			return cli_error("start: %s: the daemon did not start within 10 s", name);
		}
		rlog__futex_wait(&r.hdr->state, RLOG_STATE_CREATING, 100);
	}
	if (st != RLOG_STATE_ACTIVE) {
		cli_error("start: %s: %s", name, r.hdr->last_error[0] ? r.hdr->last_error : "the daemon failed");
		waitpid(pid, NULL, 0);
		rlog__region_close(&r);
		return 1;
	}
	rlog__region_close(&r);
	*daemon_pid = pid;
	return 0;
}

void ctl_stats_copy(const struct rlog_shm_header *h, struct rlog_shm_stats_copy *o)
{
	const struct rlog_shm_stats *s = &h->stats;
	o->events_written = load_relaxed(&s->events_written);
	o->bytes_written = load_relaxed(&s->bytes_written);
	o->buffers_written = load_relaxed(&s->buffers_written);
	o->events_lost = load_relaxed(&s->events_lost);
	o->bytes_lost = load_relaxed(&s->bytes_lost);
	o->log_buffers_lost = load_relaxed(&s->log_buffers_lost);
	o->corrupt_buffers = load_relaxed(&s->corrupt_buffers);
	o->file_bytes = load_relaxed(&s->file_bytes);
	o->wakeups = load_relaxed(&s->wakeups);
	o->passes = load_relaxed(&s->passes);
}

void ctl_stats_print(const struct rlog_shm_stats_copy *s)
{
	cli_kv_u64("events_written", s->events_written);
	cli_kv_u64("events_lost", s->events_lost);
	cli_kv_u64("bytes_lost", s->bytes_lost);
	cli_kv_u64("buffers_written", s->buffers_written);
	cli_kv_u64("bytes_written", s->bytes_written);
	cli_kv_u64("log_buffers_lost", s->log_buffers_lost);
	cli_kv_u64("corrupt_buffers", s->corrupt_buffers);
	cli_kv_u64("file_bytes", s->file_bytes);
	cli_kv_u64("wakeups", s->wakeups);
}

int ctl_stop(const char *name, struct ctl_result *out)
{
	if (rlog__name_validate(name) < 0)
		return cli_error("stop: invalid session name '%s'", name);
	struct rlog__region r;
	int err = rlog__region_open(name, &r);
	if (err == -ENOENT)
		return cli_error("stop: no session named '%s'", name);
	if (err < 0)
		return cli_error("stop: %s: %s", name, err == -EPROTO ? "not a ringlog session region "
						   "of this version" : strerror(-err));
	struct rlog_shm_header *h = r.hdr;
	pid_t daemon = (pid_t)h->daemon_pid;
	atomic_store(&h->stop_requested, 1);
	atomic_store(&h->fill_waiting, 0);
	rlog__futex_wake(&h->fill_waiting, 1);
	uint32_t st;
	while ((st = load_acquire(&h->state)) != RLOG_STATE_STOPPED && st != RLOG_STATE_FAILED) {
		if (daemon <= 0 || (kill(daemon, 0) < 0 && errno == ESRCH)) {
			/* Re-check: the daemon may have finished between the two. */
			if (load_acquire(&h->state) == RLOG_STATE_STOPPED)
				break;
			rlog__region_unlink(name);
			rlog__region_close(&r);
			return cli_error("stop: %s: the daemon (pid %d) is not running; removed the "
					 "session, events still in its buffers are lost", name, (int)daemon);
		}
		rlog__futex_wait(&h->state, st, 200);
	}
	ctl_stats_copy(h, &out->stats);
	snprintf(out->log_file, sizeof out->log_file, "%s", h->log_file);
	snprintf(out->last_error, sizeof out->last_error, "%s", h->last_error);
	snprintf(out->name, sizeof out->name, "%s", h->name);
	rlog__region_close(&r);
	return 0;
}
