/*
 * clock.h - the session's tick source and its calibration.
 *
 * The session creator picks the tick source once (the TSC where the CPU
 * says constant_tsc and nonstop_tsc, CLOCK_MONOTONIC otherwise) and every
 * producer of the session uses it, so that all threads of all processes
 * share one time line.  The frequency of the TSC is measured against
 * CLOCK_MONOTONIC_RAW (not slewed by NTP): over a short window at start,
 * and again over the whole session at stop (the daemon rewrites the
 * LOG_MARKER with the better figure).
 */
#ifndef RLOG_COMMON_CLOCK_H
#define RLOG_COMMON_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

/* A tick time and the clocks at the same moment. */
struct rlog__clock_sync {
	uint64_t ticks;
	uint64_t realtime_ns;
	uint64_t monotonic_raw_ns;
};

/* RLOG_TICK_TSC if the TSC is usable (x86, constant and nonstop, and the
 * environment does not say RINGLOG_CLOCK=monotonic), else
 * RLOG_TICK_MONOTONIC. */
uint32_t rlog__tick_source_pick(void);

/* Reads the tick source. */
uint64_t rlog__ticks(uint32_t source);

/* Reads ticks and the clocks as close together as it can. */
void rlog__clock_sync_now(uint32_t source, struct rlog__clock_sync *s);

/* Ticks per second between two syncs (1e9 for the monotonic source). */
uint64_t rlog__tick_freq(uint32_t source, const struct rlog__clock_sync *a,
			 const struct rlog__clock_sync *b);

/* Measures a first frequency over window_ms, filling *start. */
uint64_t rlog__clock_calibrate(uint32_t source, int window_ms, struct rlog__clock_sync *start);

/* ticks -> nanoseconds at freq, exactly (no overflow for any u64 ticks). */
static inline uint64_t rlog__ticks_to_ns(uint64_t ticks, uint64_t freq)
{
	if (freq == 1000000000u)
		return ticks;
	return ticks / freq * 1000000000u + ticks % freq * 1000000000u / freq;
}

uint64_t rlog__monotonic_ns(void);

#endif
