/*
 * session_print.c - the CLI's side of session control: statistics as
 * "key: value" lines, and one error line for each way a start or a stop
 * can fail (src/session/session.h lists them).
 */
#include "session_print.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "args.h"

void cli_stats_print(const struct rlog__stats *s)
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

int cli_start_error(const struct rlog__start *s, const struct rlog__start_result *res, int err)
{
	switch (res->step) {
	case RLOG__START_NAME:
		return cli_error("start: invalid session name '%s': use 1 to 64 letters, digits, "
				 "'.', '_' or '-'", s->name);
	case RLOG__START_FILE:
		if (err == -EEXIST)
			return cli_error("start: %s: file exists (use --force to overwrite)", s->path);
		return cli_error("start: %s: %s", s->path, strerror(-err));
	case RLOG__START_PATH:
		return cli_error("start: %s: the absolute path must be shorter than %d bytes", s->path,
				 RLOG_PATH_MAX);
	case RLOG__START_REGION:
		if (err == -EEXIST)
			return cli_error("start: session '%s' already exists", s->name);
		if (err == -EINVAL)
			return cli_error("start: %s: invalid buffer geometry (buffer size 4..16384 KB in "
					 "whole pages, 2..65536 buffers, region at most 4 GiB)", s->name);
		return cli_error("start: %s: %s", s->name, strerror(-err));
	case RLOG__START_FORK:
		return cli_error("start: fork: %s", strerror(-err));
	case RLOG__START_DAEMON:
		if (err == -ECHILD)
			return cli_error("start: %s: the daemon exited before the session started", s->name);
		if (err == -ETIMEDOUT)
			return cli_error("start: %s: the daemon did not start within 10 s", s->name);
		return cli_error("start: %s: %s", s->name, res->detail);
	}
	return cli_error("start: %s: %s", s->name, strerror(-err));
}

int cli_stop_error(const char *cmd, const char *name, const struct rlog__stop_result *res, int err)
{
	switch (err) {
	case -EINVAL:
		return cli_error("%s: invalid session name '%s'", cmd, name);
	case -ENOENT:
		return cli_error("%s: no session named '%s'", cmd, name);
	case -ESRCH:
		return cli_error("%s: %s: the daemon (pid %d) is not running; removed the session, "
				 "events still in its buffers are lost", cmd, name, (int)res->daemon_pid);
	case -EPROTO:
		return cli_error("%s: %s: not a ringlog session region of this version", cmd, name);
	case -ETIMEDOUT:
		return cli_error("%s: %s: the session header is damaged (it fails validation) and its "
				 "daemon (pid %d) did not remove the session", cmd, name,
				 (int)res->daemon_pid);
	case -EUCLEAN:
		return cli_error("%s: %s: the session header was damaged (it fails validation); its "
				 "daemon (pid %d) has stopped and removed the session: check the log "
				 "file and the daemon's statistics with care", cmd, name,
				 (int)res->daemon_pid);
	}
	return cli_error("%s: %s: %s", cmd, name, strerror(-err));
}

void cli_stop_waiting(uint32_t pid, uint32_t tid, uint32_t what, void *arg)
{
	const char *name = arg;
	if (what == RLOG_WAIT_GATE)
		fprintf(stderr, "ringlog: stop: %s: waiting for process %u, which is counting a lost "
				"event\n", name, pid);
	else
		fprintf(stderr, "ringlog: stop: %s: waiting for pid %u, tid %u, which is inside a "
				"write (stopped or traced?)\n", name, pid, tid);
}

const char *cli_state_name(uint32_t s)
{
	switch (s) {
	case RLOG_STATE_CREATING: return "creating";
	case RLOG_STATE_ACTIVE: return "active";
	case RLOG_STATE_STOPPING: return "stopping";
	case RLOG_STATE_STOPPED: return "stopped";
	case RLOG_STATE_FAILED: return "failed";
	default: return "unknown";
	}
}
