/*
 * vs_lttng_tp.h - the LTTng-UST tracepoint provider of bench/vs_lttng.c:
 * one event, ringlog_bench:ev16, with two u64 fields (16 bytes of payload),
 * the same payload as ringlog's 16-byte event, and ringlog_bench:ev16_off,
 * the same event that no session enables (the disabled case).  LTTng-UST's own header
 * protocol (included twice, once to declare and once to create the probes).
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER ringlog_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./vs_lttng_tp.h"

#if !defined(VS_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define VS_LTTNG_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(ringlog_bench, ev16,
	LTTNG_UST_TP_ARGS(uint64_t, a, uint64_t, b),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, a, a)
		lttng_ust_field_integer(uint64_t, b, b)
	)
)

/* The disabled case: the same event, never enabled (bench/vs_lttng.sh
 * enables ev16 only). */
LTTNG_UST_TRACEPOINT_EVENT(ringlog_bench, ev16_off,
	LTTNG_UST_TP_ARGS(uint64_t, a, uint64_t, b),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, a, a)
		lttng_ust_field_integer(uint64_t, b, b)
	)
)

#endif

#include <lttng/tracepoint-event.h>
