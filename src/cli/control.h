/*
 * control.h - starting and stopping a session (a region and its daemon),
 * shared by `ringlog start`, `ringlog stop` and `ringlog bench`.
 */
#ifndef RLOG_CLI_CONTROL_H
#define RLOG_CLI_CONTROL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "shm.h"

/*
 * Creates session name writing to path and forks its daemon; returns once
 * the session is ACTIVE.  Prints its own error line and returns 1 on
 * failure, 0 on success with the daemon's pid in *daemon_pid.  With
 * detach, the daemon leaves the session and process group (setsid) and
 * its stdio goes to /dev/null.
 */
int ctl_start(const char *name, const char *path, const struct rlog__region_params *p, bool force,
	      bool detach, pid_t *daemon_pid);

/*
 * Asks the daemon of session name to stop, waits until it has, and copies
 * the final statistics to *stats (and the log path, last error).  While the
 * daemon waits for a producer, prints one line saying which and why.
 * Prints its own error line and returns 1 on failure, 0 on success.  A
 * session whose header fails validation (scribbled) is still asked to stop
 * (the daemon keeps its own copy of what it needs): then 1, with a line
 * saying so, once its daemon has removed it.
 */
struct ctl_result {
	struct rlog_shm_stats_copy {
		uint64_t events_written, bytes_written, buffers_written, events_lost, bytes_lost,
			log_buffers_lost, corrupt_buffers, file_bytes, wakeups, passes,
			processes_attached, processes_refused;
	} stats;
	char log_file[RLOG_PATH_MAX];
	char last_error[256];
	char name[RLOG_NAME_MAX + 8];
};
int ctl_stop(const char *name, struct ctl_result *out);

/* Copies the statistics of a mapped region. */
void ctl_stats_copy(const struct rlog_shm_header *h, struct rlog_shm_stats_copy *out);

/* Prints statistics as "key: value" lines. */
void ctl_stats_print(const struct rlog_shm_stats_copy *s);

#endif
