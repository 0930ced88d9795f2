/*
 * rundown_rec.h - the rundown as system events: the processes, threads
 * and executable mappings that exist when system events start and when a
 * snapshot starts (ETW's rundown, LTTng's state dump), walked from /proc
 * (src/common/rundown.h) and written as records of docs/FORMAT.md,
 * "Rundown", so that every tid and address of the trace has a name even
 * if its thread or mapping began before the session.
 */
#ifndef RLOG_SYSTEM_RUNDOWN_REC_H
#define RLOG_SYSTEM_RUNDOWN_REC_H

#include <stddef.h>
#include <stdint.h>

#include "rundown.h"
#include "system/system.h"

#define RLOG_SYS_ID_PROCESS_RUNDOWN 78
#define RLOG_SYS_ID_THREAD_RUNDOWN  79
#define RLOG_SYS_ID_IMAGE_LOAD      112

/* The tid of the rundown's system blocks: no CPU's (docs/FORMAT.md,
 * "Rundown"), so that they are a time line of their own for the reader's
 * merge, which wants each (pid, tid)'s blocks in time order. */
#define RLOG_SYS_RUNDOWN_TID 0xffffffffu

/* The cmdline's bytes kept (RLOG_STRING_MAX). */
#define RLOG_SYS_RUNDOWN_CMDLINE_CUT 1024u

/*
 * Walks the processes of pids[0..npids-1] (npids 0: every process) and
 * emits them as blocks of tid RLOG_SYS_RUNDOWN_TID, all records at one
 * time (the tick_source's now): first the EVENT_SCHEMAs of
 * process_rundown, thread_rundown and image_load, then per process its
 * process_rundown, a thread_rundown per thread and an image_load per
 * executable mapping.  *records (may be NULL) receives the records
 * emitted (schemas not counted), *lost (may be NULL) those the walk found
 * but no memory held (a block that could not grow is dropped whole), *st
 * the walk's counts.  Returns 0 or the walk's -errno (-ENOMEM).
 */
int rlog__sys_rundown(const uint32_t *pids, size_t npids, uint32_t tick_source,
		      rlog__sys_emit_fn *emit, void *arg, uint64_t *records, uint64_t *lost,
		      struct rlog__rundown_stats *st);

/* The same, for the selection flags (RLOG_SYS_*): with
 * RLOG_SYS_PROCESS_COUNTERS, each process_rundown is followed by the
 * process's process_counters record, from /proc (pcounters.h). */
int rlog__sys_rundown_flags(const uint32_t *pids, size_t npids, uint64_t flags,
			    uint32_t tick_source, rlog__sys_emit_fn *emit, void *arg,
			    uint64_t *records, uint64_t *lost, struct rlog__rundown_stats *st);

#endif
