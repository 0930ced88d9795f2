/*
 * stop.c - stopping a session: ask its daemon, wait for it to finish.
 *
 *   rlog__session_stop                          daemon (src/daemon/daemon.c)
 *   ------------------                          ------
 *   stop_requested = 1; fill_waiting = 0;
 *   futex_wake(fill_waiting) ------------------> wakes, runs the stop sequence;
 *                                                while it waits for a producer:
 *   load_acquire(stop_wait_pid) != 0: <--------- stop_wait_pid/tid/what (release)
 *     report it (once per producer)
 *   futex_wait(state) <------------------------- state = STOPPED (release), futex_wake
 *   copy the final statistics
 *
 * A session whose header fails validation is stopped through the same
 * words, mapped as they are, if a daemon runs for it: the daemon reads
 * them from its own mapping and keeps a private copy of what it validated
 * at start (docs/FORMAT.md, "Stop").
 */
#define _GNU_SOURCE
#include "session.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomics.h"
#include "clock.h"
#include "futex.h"
#include "procstat.h"

/* How long stop waits for the daemon of a damaged session. */
#define DAMAGED_WAIT_NS UINT64_C(30000000000)

/* Asks the daemon to stop and wakes it (the fill event's futex). */
static void request_stop(struct rlog_shm_header *h)
{
	atomic_store(&h->stop_requested, 1);
	atomic_store(&h->fill_waiting, 0);
	rlog__futex_wake(&h->fill_waiting, 1);
}

bool rlog__maps_object(pid_t pid, const char *exe, const char *path)
{
	char p[64], link[PATH_MAX];
	if (exe) {
		snprintf(p, sizeof p, "/proc/%d/exe", (int)pid);
		ssize_t n = readlink(p, link, sizeof link - 1);
		if (n < 0)
			return false;
		link[n] = '\0';
		if (strcmp(link, exe) != 0)
			return false;
	}
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
		if (rlog__maps_object((pid_t)pid, exe, path))
			found = (pid_t)pid;
	}
	closedir(d);
	return found;
}

/* The header failed validation: stop it through its daemon, if any. */
static int stop_damaged(const char *name, struct rlog__stop_result *out)
{
	pid_t daemon = find_daemon(name);
	if (daemon == 0)
		return -EPROTO;
	out->daemon_pid = daemon;
	struct rlog_shm_header *h;
	int err = rlog__region_map_header(name, &h);
	if (err < 0)
		return -EPROTO;
	request_stop(h);
	uint64_t deadline = rlog__monotonic_ns() + DAMAGED_WAIT_NS;
	struct rlog__region probe;
	while ((err = rlog__region_open(name, &probe)) != -ENOENT) {
		if (err == 0)
			rlog__region_close(&probe);
		if (rlog__monotonic_ns() > deadline || (kill(daemon, 0) < 0 && errno == ESRCH)) {
			rlog__region_unmap_header(h);
			return -ETIMEDOUT;
		}
		rlog__futex_wait(&h->state, load_relaxed(&h->state), 100);
	}
	rlog__region_unmap_header(h);
	return -EUCLEAN;
}

/* Reports, once per producer, what the daemon's stop sequence waits for. */
static void poll_waiting(struct rlog_shm_header *h, uint64_t *said, rlog__stop_waiting_fn *fn,
			 void *arg)
{
	/* Pairs with the daemon's store_release(stop_wait_pid). */
	uint32_t pid = load_acquire(&h->stop_wait_pid);
	uint32_t tid = load_relaxed(&h->stop_wait_tid), what = load_relaxed(&h->stop_wait_what);
	uint64_t key = (uint64_t)pid << 32 | tid;
	if (pid == 0 || key == *said || fn == NULL)
		return;
	*said = key;
	fn(pid, tid, what, arg);
}

int rlog__session_stop(const char *name, struct rlog__stop_result *out,
		       rlog__stop_waiting_fn *waiting, void *arg)
{
	memset(out, 0, sizeof *out);
	if (rlog__name_validate(name) < 0)
		return -EINVAL;
	struct rlog__region r;
	int err = rlog__region_open(name, &r);
	if (err == -EPROTO)
		return stop_damaged(name, out);
	if (err < 0)
		return err;
	struct rlog_shm_header *h = r.hdr;
	out->daemon_pid = (pid_t)h->daemon_pid;
	request_stop(h);
	uint64_t said = 0;
	uint32_t st;
	while ((st = load_acquire(&h->state)) != RLOG_STATE_STOPPED && st != RLOG_STATE_FAILED) {
		pid_t d = out->daemon_pid;
		/* Gone, or a zombie nobody reaped (kill(d, 0) would still
		 * succeed): dead either way. */
		if (d <= 0 || rlog__process_dead(d, 0)) {
			/* Re-check: the daemon may have finished between the two. */
			if (load_acquire(&h->state) == RLOG_STATE_STOPPED)
				break;
			/* Orphaned: its buffers still hold what `stop --force`
			 * recovers; removing the region would lose it. */
			snprintf(out->name, sizeof out->name, "%.*s", RLOG_NAME_MAX, h->name);
			rlog__region_close(&r);
			return -ESRCH;
		}
		poll_waiting(h, &said, waiting, arg);
		rlog__futex_wait(&h->state, st, 200);
	}
	rlog__stats_copy(h, &out->stats);
	rlog__sys_stats_copy(&r, &out->stats);
	snprintf(out->log_file, sizeof out->log_file, "%.*s", RLOG_PATH_MAX - 1, h->log_file);
	snprintf(out->last_error, sizeof out->last_error, "%.*s", 255, h->last_error);
	snprintf(out->name, sizeof out->name, "%.*s", RLOG_NAME_MAX, h->name);
	rlog__region_close(&r);
	return 0;
}
