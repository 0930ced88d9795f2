/*
 * system_out.h - the daemon's side of the system events (src/system):
 * their blocks to the output, their statistics to the region.
 */
#ifndef RLOG_DAEMON_SYSTEM_OUT_H
#define RLOG_DAEMON_SYSTEM_OUT_H

#include <stdint.h>

#include "shm.h"
#include "system/system.h"

struct rlog__sys;
struct rlog__sys_config;
struct rlog__sys_stats;

/*
 * The engine's emit (system.h): the block goes to the output arg (a
 * struct rlog__output) as a system block (DAEMON | SYSTEM, pid 0, tid the
 * CPU), and its EVENT_SCHEMA records to the output's metadata cache, so
 * that a new file, a wrap or a new consumer gets them again.  Its events
 * are not application events: the sinks do not count them in
 * events_written (the identity of the application's events stays as it
 * is; the system events have their own, in the region's sys statistics).
 */
void rlog__sys_to_output(void *arg, uint32_t cpu, uint64_t base_time, const void *data,
			 uint32_t size, uint32_t records, uint32_t events);

/* Opens the engine for the selection cfg on region r's clock (nothing
 * when it selects none), its blocks to emit(arg, ...): *out stays NULL
 * then, or when it fails (said in last_error).  Returns 0 or the open's
 * -errno. */
int rlog__sys_start(struct rlog__region *r, rlog__sys_emit_fn *emit, void *arg,
		    const struct rlog__sys_config *cfg, struct rlog__sys **out);

/* Copies the statistics into the region's request page: those of the
 * engines closed before (before, summed) plus s's (s may be NULL). */
void rlog__sys_publish(struct rlog__region *r, const struct rlog__sys *s,
		       const struct rlog__sys_stats *before);

#endif
