/*
 * stats.h - a session's statistics copied out of its region, and what a
 * stop (by the daemon, or by a recovery of an orphan: daemon/adopt.h)
 * leaves of a session: shared by the session control and the daemon's
 * adoption of an orphan, below both.
 */
#ifndef RLOG_COMMON_STATS_H
#define RLOG_COMMON_STATS_H

#include <stdint.h>
#include <sys/types.h>

#include "shm.h"

/* A session's statistics (the region's struct rlog_shm_stats and the
 * header's counters), copied out. */
struct rlog__stats {
	uint64_t events_written, bytes_written, buffers_written, events_lost, bytes_lost,
		log_buffers_lost, corrupt_buffers, file_bytes, wakeups, passes,
		realtime_buffers_lost, file_index, processes_attached, processes_refused,
		events_overwritten, events_discarded, counter_samples, counter_records;
	/* System events (the request page's sys_*; docs/FORMAT.md, "System events") */
	uint64_t sys_written, sys_lost, sys_filtered, sys_handed_over;
	uint64_t sys_rundown_written, sys_rundown_lost; /* the rundown's records */
	/* A multi-host sink (the request page's sink_*; docs/FORMAT.md) */
	uint64_t sink_chunks_acked, sink_bytes_acked, sink_events_acked, sink_chunks_queued,
		sink_bytes_queued, sink_retries, sink_chunks_lost, sink_events_lost;
};

/* Copies the statistics of a mapped region header. */
void rlog__stats_copy(const struct rlog_shm_header *h, struct rlog__stats *out);

struct rlog__stop_result {
	struct rlog__stats stats;          /* final, on success */
	char log_file[RLOG_PATH_MAX];
	char last_error[256];              /* the daemon's last error; "" if none */
	char name[RLOG_NAME_MAX + 8];      /* as the session was named */
	pid_t daemon_pid;
};

#endif
