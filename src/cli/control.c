#define _GNU_SOURCE
#include "control.h"

#include <dirent.h>
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
	o->processes_attached = load_relaxed(&h->procs_attached);
	o->processes_refused = load_relaxed(&h->procs_refused);
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
	cli_kv_u64("processes_attached", s->processes_attached);
	cli_kv_u64("processes_refused", s->processes_refused);
}

/* Asks the daemon to stop and wakes it (the fill event's futex). */
static void request_stop(struct rlog_shm_header *h)
{
	atomic_store(&h->stop_requested, 1);
	atomic_store(&h->fill_waiting, 0);
	rlog__futex_wake(&h->fill_waiting, 1);
}

/* Prints, once per producer, what the daemon's stop sequence waits for. */
static void say_waiting(const char *name, struct rlog_shm_header *h, uint64_t *said)
{
	/* Pairs with the daemon's store_release(stop_wait_pid). */
	uint32_t pid = load_acquire(&h->stop_wait_pid);
	uint32_t tid = load_relaxed(&h->stop_wait_tid), what = load_relaxed(&h->stop_wait_what);
	uint64_t key = (uint64_t)pid << 32 | tid;
	if (pid == 0 || key == *said)
		return;
	*said = key;
	if (what == RLOG_WAIT_GATE)
		fprintf(stderr, "ringlog: stop: %s: waiting for process %u, which is counting a lost "
				"event\n", name, pid);
	else
		fprintf(stderr, "ringlog: stop: %s: waiting for pid %u, tid %u, which is inside a "
				"write (stopped or traced?)\n", name, pid, tid);
}

/* True if process pid runs the executable at exe and maps the object at
 * path (a line of /proc/PID/maps ends with it). */
static bool maps_object(pid_t pid, const char *exe, const char *path)
{
	char p[64], link[PATH_MAX];
	snprintf(p, sizeof p, "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(p, link, sizeof link - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	if (strcmp(link, exe) != 0)
		return false;
	snprintf(p, sizeof p, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(p, "re");
	if (f == NULL)
		return false;
	char line[PATH_MAX + 128];
	size_t plen = strlen(path);
	bool found = false;
	while (!found && fgets(line, sizeof line, f)) {
		size_t len = strcspn(line, "\n");
		line[len] = '\0';
		found = len >= plen && strcmp(line + len - plen, path) == 0;
	}
	fclose(f);
	return found;
}

/*
 * The daemon of a session whose header cannot be trusted (its daemon_pid
 * may be scribbled too): a process that runs this same executable (the
 * daemon is a fork of `ringlog start`) and maps the session's object.
 * Returns its pid, or 0 if there is none.
 */
static pid_t find_daemon(const char *name)
{
	char shm[96], path[128], exe[PATH_MAX];
	if (rlog__shm_name(name, shm, sizeof shm) < 0)
		return 0;
	snprintf(path, sizeof path, "/dev/shm%s", shm);
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n < 0)
		return 0;
	exe[n] = '\0';
	DIR *d = opendir("/proc");
	if (d == NULL)
		return 0;
	pid_t found = 0, self = getpid();
	struct dirent *e;
	while (found == 0 && (e = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end != '\0' || pid <= 0 || pid == self)
			continue;
		if (maps_object((pid_t)pid, exe, path))
			found = (pid_t)pid;
	}
	closedir(d);
	return found;
}

/*
 * The header failed validation.  If a daemon is running for the session,
 * map the header's first page as it is, ask the daemon to stop through the
 * words the daemon itself reads, and wait for it to remove the session
 * (its shared-memory object disappears).
 */
static int stop_damaged(const char *name)
{
	pid_t daemon = find_daemon(name);
	if (daemon == 0)
		return cli_error("stop: %s: not a ringlog session region of this version", name);
	struct rlog_shm_header *h;
	int err = rlog__region_map_header(name, &h);
	if (err < 0)
		return cli_error("stop: %s: not a ringlog session region of this version, and it "
				 "cannot be mapped: %s", name, strerror(-err));
	request_stop(h);
	uint64_t deadline = rlog__monotonic_ns() + 30000000000u;
	struct rlog__region probe;
	while ((err = rlog__region_open(name, &probe)) != -ENOENT) {
		if (err == 0)
			rlog__region_close(&probe);
		if (rlog__monotonic_ns() > deadline || (kill(daemon, 0) < 0 && errno == ESRCH)) {
			rlog__region_unmap_header(h);
			return cli_error("stop: %s: the session header is damaged (it fails validation) and "
					 "its daemon (pid %d) did not remove the session", name, (int)daemon);
		}
		rlog__futex_wait(&h->state, load_relaxed(&h->state), 100);
	}
	rlog__region_unmap_header(h);
	return cli_error("stop: %s: the session header was damaged (it fails validation); its "
			 "daemon (pid %d) has stopped and removed the session: check the log file "
			 "and the daemon's statistics with care", name, (int)daemon);
}

int ctl_stop(const char *name, struct ctl_result *out)
{
	if (rlog__name_validate(name) < 0)
		return cli_error("stop: invalid session name '%s'", name);
	struct rlog__region r;
	int err = rlog__region_open(name, &r);
	if (err == -ENOENT)
		return cli_error("stop: no session named '%s'", name);
	if (err == -EPROTO)
		return stop_damaged(name);
	if (err < 0)
		return cli_error("stop: %s: %s", name, strerror(-err));
	struct rlog_shm_header *h = r.hdr;
	pid_t daemon = (pid_t)h->daemon_pid;
	request_stop(h);
	uint64_t said = 0;
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
		say_waiting(name, h, &said);
		rlog__futex_wait(&h->state, st, 200);
	}
	ctl_stats_copy(h, &out->stats);
	snprintf(out->log_file, sizeof out->log_file, "%s", h->log_file);
	snprintf(out->last_error, sizeof out->last_error, "%s", h->last_error);
	snprintf(out->name, sizeof out->name, "%s", h->name);
	rlog__region_close(&r);
	return 0;
}
