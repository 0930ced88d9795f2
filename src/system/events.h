/*
 * events.h - the system events: their IDs (64..127, docs/FORMAT.md,
 * "System events"), names, fields, the selection bit that turns each on,
 * and where each comes from (a tracepoint, or a perf software event).
 *
 * Every payload starts with pid (u32, the thread group) and tid (u32) of
 * the thread the kernel was running when it recorded the event, then the
 * fields below in order.  A field's src is the tracepoint's field it is
 * copied from, or one of:
 *   "@addr"    the sample's PERF_SAMPLE_ADDR (a fault's address)
 *   "@ip"      the sample's PERF_SAMPLE_IP
 *   "@sysname" the name of the system call in the tracepoint's "id" field
 *   "@chain"   the sample's call chain, as text: hexadecimal addresses,
 *              innermost first, separated by spaces (kernel frames, then
 *              user frames; the kernel's context markers left out)
 * The image loads are PERF_RECORD_MMAP2 records (of a dummy event that
 * carries them): their fields are the record's, laid out by source.c.
 */
#ifndef RLOG_SYSTEM_EVENTS_H
#define RLOG_SYSTEM_EVENTS_H

#include <stdint.h>

#include "ringlog/format.h"

#define RLOG_SYS_ID_MIN 64
#define RLOG_SYS_ID_MAX 127

#define RLOG__SYS_FIELDS_MAX 14

enum rlog__sys_source {
	RLOG__SRC_TRACEPOINT,  /* group:tp */
	RLOG__SRC_SOFTWARE,    /* PERF_TYPE_SOFTWARE, config sw */
	RLOG__SRC_PROFILE,     /* PERF_TYPE_SOFTWARE cpu-clock, sampled at profile_hz */
	RLOG__SRC_MMAP,        /* PERF_RECORD_MMAP2 of executable mappings */
	RLOG__SRC_COUNTERS,    /* no perf event: /proc and taskstats (pcounters.h) */
};

struct rlog__sys_field {
	const char *name;
	uint8_t type;          /* RLOG_FIELD_U8..I64 or STRING */
	const char *src;
};

struct rlog__sys_event {
	uint16_t id;
	const char *name;
	uint64_t flags;        /* RLOG_SYS_*: any of them turns it on */
	uint8_t source;        /* enum rlog__sys_source */
	const char *group, *tp;
	uint32_t sw;           /* RLOG__SRC_SOFTWARE: the perf config */
	unsigned nfields;
	struct rlog__sys_field f[RLOG__SYS_FIELDS_MAX];
};

extern const struct rlog__sys_event rlog__sys_events[];
extern const unsigned rlog__sys_nevents;

/* The event of ID id, or NULL. */
const struct rlog__sys_event *rlog__sys_event(uint16_t id);

#endif
