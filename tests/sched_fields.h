/*
 * sched_fields.h - the sched_switch system event as crafted test files
 * declare and write it (docs/FORMAT.md, "System events"): its schema's
 * fields and a payload.  Needs filegen.h first.
 */
#ifndef RLOG_TESTS_SCHED_FIELDS_H
#define RLOG_TESTS_SCHED_FIELDS_H

#include <string.h>

#define SF_ID_SWITCH 64

static const struct fg_field sf_switch[] = {
	{ RLOG_FIELD_U32, 0, "pid" }, { RLOG_FIELD_U32, 0, "tid" },
	{ RLOG_FIELD_I32, 0, "prev_tid" }, { RLOG_FIELD_I64, 0, "prev_state" },
	{ RLOG_FIELD_I32, 0, "prev_prio" }, { RLOG_FIELD_I32, 0, "next_tid" },
	{ RLOG_FIELD_I32, 0, "next_prio" }, { RLOG_FIELD_STRING, 0, "prev_comm" },
	{ RLOG_FIELD_STRING, 0, "next_comm" } };

/* A sched_switch's payload on p: from prev (leaving in state) to next,
 * both at priority 120, in process pid's block. */
static inline void sf_switch_payload(struct fg_buf *p, uint32_t pid, int32_t prev, int64_t state,
				     const char *pc, int32_t next, const char *nc)
{
	fg_u32(p, pid);
	fg_u32(p, (uint32_t)prev);
	fg_u32(p, (uint32_t)prev);
	fg_u64(p, (uint64_t)state);
	fg_u32(p, 120);
	fg_u32(p, (uint32_t)next);
	fg_u32(p, 120);
	fg_str(p, pc, strlen(pc));
	fg_str(p, nc, strlen(nc));
}

#endif
