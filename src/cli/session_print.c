/*
 * session_print.c - the CLI's side of session control: statistics as
 * "key: value" lines, and one error line for each way a start or a stop
 * can fail (src/session/session.h lists them).
 */
#include "session_print.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <inttypes.h>

#include "cli.h"
#include "buf.h"
#include "io.h"
#include "json.h"
#include "args.h"
#include "shm.h"
#include "sysflags_names.h"
#include "term.h"

/* "key: value" lines, or one JSON object, built in a buffer. */
struct kv {
	struct rlog__buf b;
	bool json, first;
};

static void kv_key(struct kv *o, const char *k)
{
	if (o->json) {
		rlog__buf_char(&o->b, o->first ? '{' : ',');
		rlog__json_cstr(&o->b, k);
		rlog__buf_char(&o->b, ':');
	} else {
		rlog__buf_put(&o->b, k, strlen(k));
		rlog__buf_lit(&o->b, ": ");
	}
	o->first = false;
}

static void kv_u64(struct kv *o, const char *k, uint64_t v)
{
	kv_key(o, k);
	rlog__buf_u64(&o->b, v);
	if (!o->json)
		rlog__buf_char(&o->b, '\n');
}

static void kv_str(struct kv *o, const char *k, const char *v)
{
	kv_key(o, k);
	if (o->json) {
		rlog__json_cstr(&o->b, v);
	} else {
		/* Names, the log file's path and the last error come from the
		 * region, which any producer may write: escaped (term.h). */
		rlog__term_escape(&o->b, v, strlen(v), false);
		rlog__buf_char(&o->b, '\n');
	}
}

/* Writes the buffer after whatever stdio holds, and frees it. */
static void kv_out(struct kv *o)
{
	if (o->json)
		rlog__buf_lit(&o->b, "}\n");
	fflush(stdout);
	if (rlog__buf_write(&o->b, 1) < 0)
		cli_error("writing to stdout: %s", strerror(errno));
	rlog__buf_free(&o->b);
}

static void kv_stats(struct kv *o, const struct rlog__stats *s)
{
	kv_u64(o, "events_written", s->events_written);
	kv_u64(o, "events_lost", s->events_lost);
	kv_u64(o, "bytes_lost", s->bytes_lost);
	kv_u64(o, "buffers_written", s->buffers_written);
	kv_u64(o, "bytes_written", s->bytes_written);
	kv_u64(o, "log_buffers_lost", s->log_buffers_lost);
	kv_u64(o, "realtime_buffers_lost", s->realtime_buffers_lost);
	kv_u64(o, "events_overwritten", s->events_overwritten);
	kv_u64(o, "events_discarded", s->events_discarded);
	kv_u64(o, "corrupt_buffers", s->corrupt_buffers);
	kv_u64(o, "file_bytes", s->file_bytes);
	kv_u64(o, "file_index", s->file_index);
	kv_u64(o, "wakeups", s->wakeups);
	kv_u64(o, "processes_attached", s->processes_attached);
	kv_u64(o, "processes_refused", s->processes_refused);
	kv_u64(o, "counter_samples", s->counter_samples);
	kv_u64(o, "counter_records", s->counter_records);
	/* Only for a session that had system events (the keys of one
	 * without stay as they were). */
	if (s->sys_written || s->sys_lost || s->sys_filtered || s->sys_handed_over ||
	    s->sys_rundown_written || s->sys_rundown_lost) {
		kv_u64(o, "sys_written", s->sys_written);
		kv_u64(o, "sys_lost", s->sys_lost);
		kv_u64(o, "sys_filtered", s->sys_filtered);
		kv_u64(o, "sys_handed_over", s->sys_handed_over);
		kv_u64(o, "sys_rundown_written", s->sys_rundown_written);
		kv_u64(o, "sys_rundown_lost", s->sys_rundown_lost);
	}
	/* Only for a session with a multi-host sink (--sink). */
	if (s->sink_chunks_acked || s->sink_chunks_queued || s->sink_chunks_lost) {
		kv_u64(o, "sink_chunks_acked", s->sink_chunks_acked);
		kv_u64(o, "sink_bytes_acked", s->sink_bytes_acked);
		kv_u64(o, "sink_events_acked", s->sink_events_acked);
		kv_u64(o, "sink_chunks_queued", s->sink_chunks_queued);
		kv_u64(o, "sink_bytes_queued", s->sink_bytes_queued);
		kv_u64(o, "sink_retries", s->sink_retries);
		kv_u64(o, "sink_chunks_lost", s->sink_chunks_lost);
		kv_u64(o, "sink_events_lost", s->sink_events_lost);
	}
}

void cli_mode_names(uint32_t mode, char *out, size_t n)
{
	snprintf(out, n, "%s%s%s%s",
		 (mode & RLOG_MODE_NO_FILE) ? "no-file"
		 : (mode & RLOG_MODE_CIRCULAR) ? "circular"
		 : (mode & RLOG_MODE_NEWFILE) ? "newfile" : "sequential",
		 (mode & RLOG_MODE_PREALLOCATE) ? ",preallocate" : "",
		 (mode & RLOG_MODE_REAL_TIME) ? ",real-time" : "",
		 (mode & RLOG_MODE_OVERWRITE) ? ",overwrite" : "");
}

void cli_session_info_print(const struct rlog__session_info *in, bool json)
{
	struct kv o = { .json = json, .first = true };
	char modes[64], mask[24], enabled[64 * 29] = "";
	cli_mode_names(in->log_file_mode, modes, sizeof modes);
	snprintf(mask, sizeof mask, "0x%016" PRIx64, in->enable_mask);
	size_t used = 0;
	for (int i = 0; i < 64; i++)
		if ((in->enable_mask >> i & 1) && in->categories[i][0])
			used += (size_t)snprintf(enabled + used, sizeof enabled - used, "%s%s",
						 used ? "," : "", in->categories[i]);
	kv_str(&o, "session", in->name);
	kv_str(&o, "state", in->orphaned ? "orphaned" : cli_state_name(in->state));
	kv_str(&o, "file", in->log_file[0] ? in->log_file : "-");
	kv_str(&o, "log_file_mode", modes);
	kv_u64(&o, "daemon_pid", in->daemon_pid);
	kv_u64(&o, "buffer_size", in->buffer_size);
	kv_u64(&o, "min_buffers", in->min_buffers);
	kv_u64(&o, "max_buffers", in->max_buffers);
	kv_u64(&o, "buffer_capacity", in->capacity);
	kv_u64(&o, "number_of_buffers", in->number_of_buffers);
	kv_u64(&o, "free_buffers", in->free_buffers);
	kv_u64(&o, "high_water_pct", in->high_water_pct);
	kv_u64(&o, "flush_timer_ms", in->flush_timer_ms);
	kv_u64(&o, "max_file_size", in->max_file_size);
	kv_u64(&o, "age_limit", in->age_limit);
	kv_u64(&o, "drain_threads", in->drain_threads);
	kv_str(&o, "enable_mask", mask);
	kv_str(&o, "enabled", enabled);
	kv_str(&o, "enable_pending", in->enable_pending);
	kv_str(&o, "tick_source", in->tick_source == RLOG_TICK_TSC ? "tsc" : "monotonic");
	kv_u64(&o, "tick_freq_hz", in->tick_freq_hz);
	char counters[1024];
	rlog__counter_names(in->counter_mask, counters, sizeof counters);
	kv_str(&o, "counters", counters);
	kv_u64(&o, "counter_period_ms", in->counter_period_ms);
	/* The system events asked for, and which of them the daemon records
	 * now (its sources open): a selection it cannot serve shows. */
	char sys[512], pids[RLOG_SYS_PIDS_MAX * 12];
	rlog__sys_names(in->system.flags, sys, sizeof sys);
	kv_str(&o, "system", sys);
	snprintf(sys, sizeof sys, "0x%" PRIx64, in->system.flags);
	kv_str(&o, "system_flags", sys);
	rlog__sys_pids_text(in->system.pids, in->system.npids, pids, sizeof pids);
	kv_str(&o, "system_pids", pids);
	kv_u64(&o, "system_follow", in->system.follow);
	kv_u64(&o, "profile_hz", in->system.profile_hz);
	rlog__sys_names(in->system_recording, sys, sizeof sys);
	kv_str(&o, "system_recording", sys);
	kv_u64(&o, "app_counters", in->app_counters);
	kv_u64(&o, "producer_threads", in->producer_threads);
	/* Beside processes_attached (every attach since the start, in the
	 * statistics): the processes attached now. */
	kv_u64(&o, "processes_attached_now", in->processes);
	kv_str(&o, "snapshot_trigger", in->snapshot_trigger == RLOG_TRIGGER_ARMED ? "armed"
				       : in->snapshot_trigger == RLOG_TRIGGER_FIRED ? "fired" : "none");
	kv_u64(&o, "snapshots", in->snapshots);
	kv_stats(&o, &in->stats);
	/* What events_written does not count yet (cmd_query.c says so). */
	kv_u64(&o, "events_not_drained", in->events_not_drained);
	kv_u64(&o, "buffers_not_drained", in->buffers_not_drained);
	kv_u64(&o, "buffers_held", in->buffers_held);
	kv_str(&o, "last_error", in->last_error);
	kv_out(&o);
}

void cli_stats_print(const struct rlog__stats *s)
{
	struct kv o = { .first = true };
	kv_stats(&o, s);
	kv_out(&o);
}

int cli_start_error(const struct rlog__start *s, const struct rlog__start_result *res, int err)
{
	switch (res->step) {
	case RLOG__START_SYSTEM:
	case RLOG__START_PROPS:
		return cli_error("start: %s", res->detail);
	case RLOG__START_NAME:
		return cli_error("start: invalid session name '%s': use 1 to 64 letters, digits, "
				 "'.', '_' or '-'", s->name);
	case RLOG__START_FILE:
		if (err == -EEXIST)
			return cli_error("start: %s: file exists (use --force to overwrite)", s->path);
		return cli_error("start: %s: %s", s->path, rlog__output_strerror(-err));
	case RLOG__START_PATH:
		return cli_error("start: %s: the absolute path must be shorter than %d bytes", s->path,
				 RLOG_PATH_MAX);
	case RLOG__START_REGION: {
		/* Another user's session under this name (one squatting a name
		 * this user's programs attach to): say whose. */
		uint32_t uid, mode;
		if (err == -EEXIST && rlog__region_owner(s->name, &uid, &mode) == 0 &&
		    uid != (uint32_t)geteuid())
			return cli_error("start: session '%s' already exists, owned by uid %u, not by "
					 "you (uid %u)", s->name, uid, (unsigned)geteuid());
		if (err == -EEXIST)
			return cli_error("start: session '%s' already exists", s->name);
		if (err == -EINVAL)
			return cli_error("start: %s: invalid buffer geometry (buffer size a power of two "
					 "from 4 to 1024 KB, 2..65536 buffers, region at most 4 GiB)", s->name);
		return cli_error("start: %s: %s", s->name, strerror(-err));
	}
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

int cli_session_refused(const char *cmd, const char *name, int err)
{
	uint32_t uid, mode;
	if (err != -EACCES || rlog__region_owner(name, &uid, &mode) < 0 ||
	    rlog__shm_owner_check(uid, mode) == 0)
		return 0;
	if (uid != (uint32_t)geteuid())
		return cli_error("%s: session %s: owned by uid %u, not by you (uid %u)", cmd, name,
				 uid, (unsigned)geteuid());
	return cli_error("%s: session %s: open to other users (mode %04o): not a region of "
			 "yours", cmd, name, mode);
}

int cli_stop_error(const char *cmd, const char *name, const struct rlog__stop_result *res, int err)
{
	if (cli_session_refused(cmd, name, err))
		return 1;
	switch (err) {
	case -EINVAL:
		return cli_error("%s: invalid session name '%s'", cmd, name);
	case -ENOENT:
		return cli_error("%s: no session named '%s'", cmd, name);
	case -ESRCH:
		return cli_error("%s: %s: the daemon (pid %d) is not running: the session is orphaned; "
				 "'ringlog stop %s --force' recovers its buffers into its file", cmd, name,
				 (int)res->daemon_pid, name);
	case -ENODATA: {
		static struct cli_stop_shown sh; /* 5 KiB: not on the stack */
		cli_stop_shown(res, &sh);
		return cli_error("%s: %s: the log file %s has no LOG_MARKER block to go on from; the "
				 "session is left as it is", cmd, name, sh.log_file);
	}
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

void cli_stop_shown(const struct rlog__stop_result *res, struct cli_stop_shown *out)
{
	rlog__term_cstr(res->name, out->name, sizeof out->name);
	rlog__term_cstr(res->log_file[0] ? res->log_file : "-", out->log_file, sizeof out->log_file);
	rlog__term_cstr(res->last_error, out->last_error, sizeof out->last_error);
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

void cli_counter_refused(const char *name, enum rlog__counter_avail avail, const char *why,
			 void *arg)
{
	const char *cmd = arg;
	if (avail == RLOG__CTR_USER_ONLY)
		fprintf(stderr, "ringlog: %s: counter %s: %s\n", cmd, name, why);
	else
		fprintf(stderr, "ringlog: %s: counter %s: not recorded: %s\n", cmd, name, why);
}
