/*
 * names.h - the names ringlog's tools print for its own record IDs, for
 * DATA_LOSS causes and for tick sources (dump, stats and both converters
 * use the same ones).
 */
#ifndef RLOG_COMMON_NAMES_H
#define RLOG_COMMON_NAMES_H

#include <stdint.h>

#include "region_abi.h"

/* "LOG_MARKER", "RAW_U32", ... for ringlog's own IDs; NULL for IDs that
 * are printed as numbers (application IDs, unassigned reserved ones). */
static inline const char *rlog__id_name(unsigned id)
{
	static const char *const names[] = {
		[RLOG_ID_LOG_MARKER] = "LOG_MARKER",
		[RLOG_ID_DATA_LOSS] = "DATA_LOSS",
		[RLOG_ID_TIME_SYNC] = "TIME_SYNC",
		[RLOG_ID_RAW_U8] = "RAW_U8",
		[RLOG_ID_RAW_I8] = "RAW_I8",
		[RLOG_ID_RAW_U16] = "RAW_U16",
		[RLOG_ID_RAW_I16] = "RAW_I16",
		[RLOG_ID_RAW_U32] = "RAW_U32",
		[RLOG_ID_RAW_I32] = "RAW_I32",
		[RLOG_ID_RAW_U64] = "RAW_U64",
		[RLOG_ID_RAW_I64] = "RAW_I64",
		[RLOG_ID_RAW_DOUBLE] = "RAW_DOUBLE",
		[RLOG_ID_RAW_STRING] = "RAW_STRING",
		[RLOG_ID_COUNTER] = "COUNTER",
		[RLOG_ID_EVENT_SCHEMA] = "EVENT_SCHEMA",
		[RLOG_ID_THREAD_NAME] = "THREAD_NAME",
		[RLOG_ID_PROCESS_NAME] = "PROCESS_NAME",
		[RLOG_ID_SPAN_BEGIN] = "SPAN_BEGIN",
		[RLOG_ID_SPAN_END] = "SPAN_END",
		[RLOG_ID_COUNTER_NAME] = "COUNTER_NAME",
	};
	return id < sizeof names / sizeof names[0] ? names[id] : NULL;
}

/* "no_buffer", "nested", "corrupt", "log_write", "no_slot", "real_time",
 * "overwritten", "kernel", "sink"; NULL if unknown. */
static inline const char *rlog__loss_cause_name(uint32_t cause)
{
	switch (cause) {
	case RLOG_LOSS_NO_BUFFER: return "no_buffer";
	case RLOG_LOSS_NESTED: return "nested";
	case RLOG_LOSS_CORRUPT: return "corrupt";
	case RLOG_LOSS_LOG_WRITE: return "log_write";
	case RLOG_LOSS_NO_SLOT: return "no_slot";
	case RLOG_LOSS_REAL_TIME: return "real_time";
	case RLOG_LOSS_OVERWRITTEN: return "overwritten";
	case RLOG_LOSS_KERNEL: return "kernel";
	case RLOG_LOSS_SINK: return "sink";
	default: return NULL;
	}
}

/* "app", "proc", "perf", "system": a counter's source; NULL if unknown. */
static inline const char *rlog__counter_source_name(uint8_t source)
{
	switch (source) {
	case RLOG_COUNTER_SRC_APP: return "app";
	case RLOG_COUNTER_SRC_PROC: return "proc";
	case RLOG_COUNTER_SRC_PERF: return "perf";
	case RLOG_COUNTER_SRC_SYSTEM: return "system";
	default: return NULL;
	}
}

/* "count", "ns": a counter's unit; NULL if unknown. */
static inline const char *rlog__counter_unit_name(uint8_t unit)
{
	switch (unit) {
	case RLOG_COUNTER_UNIT_COUNT: return "count";
	case RLOG_COUNTER_UNIT_NS: return "ns";
	default: return NULL;
	}
}

/* "tsc", "monotonic", "counter" (a single ring's own clock, written by
 * ring-flush); NULL for a tick source this version does not know (times
 * are converted all the same: tick_freq_hz says how).  docs/DUMP.md lists
 * these names. */
static inline const char *rlog__tick_source_name(uint32_t source)
{
	switch (source) {
	case RLOG_TICK_TSC: return "tsc";
	case RLOG_TICK_MONOTONIC: return "monotonic";
	case RLOG_TICK_COUNTER: return "counter";
	default: return NULL;
	}
}

#endif
