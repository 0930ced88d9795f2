/*
 * session.h - controlling sessions: creating one with its capture daemon,
 * stopping one, reading its properties and statistics.
 *
 * The `ringlog` commands only parse arguments and print; everything that
 * touches a session region or a daemon from the outside is here, behind
 * functions that return 0 or -errno.  A failure that needs more than an
 * errno to explain (which step of a start failed, what the daemon said)
 * fills a result structure as well.
 */
#ifndef RLOG_SESSION_SESSION_H
#define RLOG_SESSION_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "counter_catalog.h"
#include "shm.h"
#include "stats.h"
#include "sysprops.h"

/* Copies the system-event statistics of region r's request page. */
void rlog__sys_stats_copy(const struct rlog__region *r, struct rlog__stats *out);

/* ------------------------------------------------------------------ */
/* Start                                                               */
/* ------------------------------------------------------------------ */

struct rlog__sink_spec;

struct rlog__start {
	const char *name;                  /* session name */
	const char *path;                  /* log file (NEWFILE: a pattern with %d) */
	struct rlog__region_params params;
	const char *enable;                /* --enable: category names and bit numbers, or NULL */
	bool force;                        /* overwrite an existing log file */
	bool detach;                       /* daemon: new session (setsid), stdio to /dev/null */
	struct rlog__sys_props system;     /* --system, --system-pid, --follow, --profile-hz: the
	                                      fields system_give names, the others default */
	uint32_t system_give;              /* RLOG__SYS_GIVE_* */
	const struct rlog__sink_spec *sink; /* --sink (src/daemon/sink_chunks.h), or NULL */
};

/* The defaults of every property (docs/SESSIONS.md): 16 KiB buffers, a
 * pool of rlog__default_min_buffers() growing up to 1024, sequential mode,
 * high water 70 %, every category enabled. */
void rlog__props_default(struct rlog__region_params *p);

/* MinimumBuffers' default: one buffer per CPU plus two (ETW's floor), and
 * at least 32. */
uint32_t rlog__default_min_buffers(void);

/* Checks that the properties of s go together (the combinations ETW
 * refuses, and a few of ringlog's): returns 0, or -EINVAL with the reason
 * in why (n bytes). */
int rlog__props_check(const struct rlog__start *s, char *why, size_t n);

/*
 * Parses an --enable list: comma-separated bit numbers (0..63) and
 * category names (1 to 27 of [a-z0-9_.-]).  Names found in table (the
 * region's names, or NULL) become bits too; the others are copied to
 * pending (comma-separated, NUL-terminated, at most n bytes), for the
 * daemon to enable once a process declares them.  Returns 0 or -EINVAL
 * with the reason in why.
 */
int rlog__enable_parse(const char *list, char (*table)[28], uint64_t *bits, char *pending,
		       size_t n, char *why, size_t whyn);

/* Called by rlog__counters_check for each counter source it cannot
 * sample fully: its name, the verdict (not OK) and why. */
typedef void rlog__counter_refused_fn(const char *name, enum rlog__counter_avail avail,
				      const char *why, void *arg);

/*
 * Tries every source of mask on this machine (rlog__counter_probe) and
 * calls fn for each one that is missing, or counts user space only.
 * Returns mask without the missing ones: what a session can record.
 */
uint64_t rlog__counters_check(uint64_t mask, rlog__counter_refused_fn *fn, void *arg);

/* The step of a start that failed. */
enum rlog__start_step {
	RLOG__START_SYSTEM, /* -EINVAL: system-event properties that do not go together;
	                       -EPERM: privileges system events need are missing (detail says
	                       which, src/common/sysperm.h) */
	RLOG__START_PROPS,  /* -EINVAL: properties that do not go together (detail says why) */
	RLOG__START_NAME,   /* -EINVAL: not a valid session name */
	RLOG__START_FILE,   /* opening the log file: -EEXIST without force, or open's errno */
	RLOG__START_PATH,   /* -ENAMETOOLONG: the absolute path does not fit the header */
	RLOG__START_REGION, /* -EEXIST: a session of that name; -EINVAL: bad geometry */
	RLOG__START_FORK,   /* fork's errno */
	RLOG__START_DAEMON, /* -ECHILD: it exited before the session started; -ETIMEDOUT:
	                       not started within 10 s; -EIO: it failed (detail says why) */
};

struct rlog__start_result {
	pid_t daemon_pid;                  /* on success */
	uint32_t drain_running;            /* on success: the daemon's drain threads running */
	char log_file[RLOG_PATH_MAX];      /* the log file's absolute path */
	enum rlog__start_step step;        /* on failure: which step */
	char detail[256];                  /* RLOG__START_PROPS: why; RLOG__START_DAEMON -EIO: the
	                                      daemon's error */
};

/*
 * Checks the system-event properties and, if any system event is
 * selected, the privileges they need (before anything else: a user
 * without them learns it first), then creates the session's region, opens its log file (O_EXCL unless force;
 * truncated only once the session exists, so a refused start never wipes a
 * file), forks the capture daemon and returns once the session is ACTIVE.
 * On failure nothing is left behind: no region, no mapping, no new file.
 * Returns 0 or -errno (out->step says where).
 */
int rlog__session_start(const struct rlog__start *s, struct rlog__start_result *out);

/* Asks session name's daemon to add a multi-host sink (`ringlog update
 * --sink`): request is "HOSTID BUFFER CHUNK URL" (docs/FORMAT.md, "Request
 * page").  Returns 0, or -errno with message (n bytes) from the daemon
 * (-EEXIST: it has one), -ECANCELED (not running), -ENOENT. */
int rlog__session_sink_add(const char *name, const char *request, char *message, size_t n);

/* ------------------------------------------------------------------ */
/* Stop                                                                */
/* ------------------------------------------------------------------ */

/* Called while the daemon's stop sequence waits for a producer, once per
 * producer: pid, tid (0 for a process gate) and RLOG_WAIT_*. */
typedef void rlog__stop_waiting_fn(uint32_t pid, uint32_t tid, uint32_t what, void *arg);

/*
 * Asks the daemon of session name to stop and waits until it has: every
 * buffer drained, the file closed, the region removed.  Returns:
 *   0           stopped; out->stats are final (out->last_error may say the
 *               daemon met an error, a full disk say)
 *   -EINVAL     not a valid session name
 *   -ENOENT     no such session
 *   -ESRCH      its daemon (out->daemon_pid) is not running: the session is
 *               orphaned and left as it is (rlog__daemon_recover drains it)
 *   -EPROTO     the header fails validation and no daemon runs for it
 *   -EUCLEAN    the header fails validation (scribbled); its daemon
 *               (out->daemon_pid) was asked to stop and has removed it
 *   -ETIMEDOUT  the header fails validation and its daemon did not remove
 *               the session within 30 s
 *   other       -errno of opening the region
 */
int rlog__session_stop(const char *name, struct rlog__stop_result *out,
		       rlog__stop_waiting_fn *waiting, void *arg);

/* True if process pid maps the object at path (a line of /proc/PID/maps
 * ends with it), and, if exe is not NULL, runs the executable at exe. */
bool rlog__maps_object(pid_t pid, const char *exe, const char *path);

/*
 * `ringlog start NAME --resume`: forks a daemon (detached if detach) that
 * takes orphaned session name over (rlog__daemon_adopt_serve, daemon/adopt.h) and waits
 * for its report.  Returns 0 (*daemon_pid set) or its -errno, detail
 * saying what failed when the daemon said.
 */
int rlog__session_resume(const char *name, bool detach, pid_t *daemon_pid, char *detail,
			 size_t detail_size);

/* ------------------------------------------------------------------ */
/* Snapshots (snapshot.c)                                              */
/* ------------------------------------------------------------------ */

/* A snapshot request (struct rlog_shm_ctl). */
struct rlog__snapshot {
	const char *path;          /* the file: an absolute path (NULL for DISARM) */
	uint32_t flags;            /* RLOG_SNAP_* */
	uint32_t event_id;         /* ON_EVENT */
	uint32_t event_flag;       /* ON_EVENT with RLOG_SNAP_FLAG */
	uint32_t after_ms;         /* a trigger's snapshot waits this long after it fires */
	bool wait;                 /* a trigger: wait until its snapshot is written */
};

struct rlog__snapshot_result {
	int status;                /* the snapshot's: 0 or -errno */
	uint64_t events, lost, bytes;
	uint32_t trigger;          /* RLOG_TRIGGER_* after the request */
	char path[RLOG_PATH_MAX];
	char message[256];         /* the daemon's reason, when it refused or failed */
};

/*
 * Asks session name's daemon for a snapshot now, or arms (or disarms) a
 * trigger.  A snapshot asked for now, or a trigger waited for, fills
 * out's figures.  Returns 0, -EINVAL (a name or path the daemon cannot
 * use), -ENOENT, -EPROTO, -EBUSY (another request holds the page for 10 s,
 * or a trigger is armed already), -ECANCELED (the session is stopping),
 * -ESRCH (its daemon is gone), or the snapshot's -errno (out->message says
 * what failed).
 */
int rlog__session_snapshot(const char *name, const struct rlog__snapshot *q,
			   struct rlog__snapshot_result *out);

/* ------------------------------------------------------------------ */
/* Flush and update (control.c)                                        */
/* ------------------------------------------------------------------ */

/*
 * Asks session name's daemon to drain every buffer, partial ones included,
 * and waits until those blocks are in the log file: a reader that opens it
 * afterwards sees every event written before the call (ETW's FlushTrace).
 * Returns 0 (also if the session stopped meanwhile: a stop drains
 * everything), -EINVAL, -ENOENT, -EPROTO, -ESRCH (its daemon is not
 * running), or -ETIMEDOUT (not done within 30 s).
 */
int rlog__session_flush(const char *name);

/* What `ringlog update` changes; each set_* (or enable != NULL) says the
 * property is given. */
struct rlog__update {
	bool set_mask;            /* EnableFlags as a number */
	uint64_t mask;
	const char *enable;       /* EnableFlags as category names and numbers */
	bool set_flush_timer;     /* FlushTimer */
	uint32_t flush_timer_ms;
	bool set_max_buffers;     /* MaximumBuffers */
	uint32_t max_buffers;
	bool set_counters;        /* the counters sampled (RLOG_CTR_BIT_* bits) */
	uint64_t counter_mask;
	bool set_counter_period;  /* their sampling period */
	uint32_t counter_period_ms;
	uint32_t system_give;     /* RLOG__SYS_GIVE_*: the fields of system given */
	struct rlog__sys_props system;
};

/*
 * Changes a running session's EnableFlags, FlushTimer and MaximumBuffers
 * (ETW's EVENT_TRACE_CONTROL_UPDATE), and the counters it samples and
 * their period.  Producers see a new mask at their next write; names of
 * --enable that no process has declared yet wait in the header, and the
 * daemon enables each when a process declares it; the daemon takes the
 * other properties at its next pass (a counter turned on starts from a
 * new reading, one turned off is no longer read).
 * System events: the fields of u->system that u->system_give names
 * replace the session's (rlog__sys_props_apply's rules); when the result
 * selects any, this process must have the privileges they need.
 * Returns 0, -EINVAL (a bad --enable or system-event property; why says
 * it), -EPERM (privileges for system events missing; why says which),
 * -ERANGE (max_buffers below the pool's size now or above the capacity;
 * why says it), -ENOENT, -EPROTO, or another -errno.
 */
int rlog__session_update(const char *name, const struct rlog__update *u, char *why, size_t n);

/* ------------------------------------------------------------------ */
/* Query and list                                                      */
/* ------------------------------------------------------------------ */

struct rlog__session_info {
	uint32_t snapshot_trigger;         /* RLOG_TRIGGER_* */
	uint32_t snapshots;                /* snapshot files written (or failed) */
	char name[RLOG_NAME_MAX + 8];
	char log_file[RLOG_PATH_MAX];
	char last_error[256];
	uint32_t state;                    /* RLOG_STATE_* */
	bool orphaned;                     /* ACTIVE or STOPPING, and no daemon holds its lock:
	                                      the daemon died (ringlog stop --force recovers it) */
	uint32_t log_file_mode;            /* RLOG_MODE_* */
	uint32_t daemon_pid;
	uint32_t buffer_size;              /* BufferSize, bytes */
	uint32_t min_buffers, max_buffers; /* MinimumBuffers, MaximumBuffers */
	uint32_t capacity;                 /* how high update may raise MaximumBuffers */
	uint32_t number_of_buffers;        /* NumberOfBuffers */
	uint32_t free_buffers;             /* FreeBuffers */
	uint32_t high_water_pct;
	uint32_t flush_timer_ms;           /* FlushTimer */
	uint32_t age_limit;                /* AgeLimit (not used) */
	uint32_t drain_threads;            /* the daemon's drain threads */
	uint64_t max_file_size;            /* MaximumFileSize, bytes */
	uint32_t tick_source;
	uint64_t tick_freq_hz;
	uint64_t enable_mask;              /* EnableFlags */
	char categories[64][28];           /* the bits' names, "" where none */
	char enable_pending[252];          /* names asked for, not yet declared */
	uint64_t counter_mask;             /* the counters sampled */
	uint32_t counter_period_ms;        /* their period */
	struct rlog__sys_props system;     /* the system events selected, and their scope */
	uint64_t system_recording;         /* the flags whose sources the daemon has open now */
	uint32_t app_counters;             /* registered application counters (SET entries) */
	uint32_t producer_threads;         /* ACTIVE slots */
	uint32_t processes;                /* ACTIVE process entries (attached now) */
	/* What the daemon has not drained yet (events_written does not count
	 * it): buffers handed over (FULL) and the events in them, less what a
	 * snapshot delivered; buffers producers still hold with records in
	 * them (OWNED, write_off > 0), whose events are counted only at the
	 * handover.  Relaxed reads: a moment's picture while producers write. */
	uint64_t events_not_drained;
	uint32_t buffers_not_drained;
	uint32_t buffers_held;
	struct rlog__stats stats;
};

/*
 * Reads session name's properties and live statistics.  Returns 0,
 * -EINVAL (bad name), -ENOENT, -EPROTO (not a session region of this
 * version), or another -errno.
 */
int rlog__session_query(const char *name, struct rlog__session_info *out);

/* Calls fn for every session object in /dev/shm, with err 0 and its info,
 * or err < 0 (the region fails validation: only info->name is set).
 * Returns the number of sessions or -errno. */
int rlog__session_list(void (*fn)(int err, const struct rlog__session_info *info, void *arg),
		       void *arg);

#endif
