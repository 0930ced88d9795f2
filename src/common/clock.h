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

/* (a * b) / c for a < c, exactly, through a 128-bit product built from
 * 32-bit halves and a long division (C11 has no 128-bit integer). */
static inline uint64_t rlog__mul_div(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t ah = a >> 32, al = a & 0xffffffffu, bh = b >> 32, bl = b & 0xffffffffu;
	uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
	uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
	uint64_t lo = (ll & 0xffffffffu) | mid << 32;
	uint64_t hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
	uint64_t rem = 0, q = 0;
	for (int i = 127; i >= 0; i--) {
		uint64_t top = rem >> 63;
		rem = rem << 1 | ((i >= 64 ? hi >> (i - 64) : lo >> i) & 1u);
		q <<= 1; /* a < c: the quotient fits in 64 bits */
		if (top || rem >= c) {
			rem -= c;
			q |= 1;
		}
	}
	return q;
}

/*
 * ticks -> nanoseconds at freq (> 0), exactly (rounded down) for every
 * u64 ticks and freq; UINT64_MAX when the result does not fit.
 */
static inline uint64_t rlog__ticks_to_ns(uint64_t ticks, uint64_t freq)
{
	if (freq == 1000000000u)
		return ticks;
	uint64_t q = ticks / freq, r = ticks % freq;
	if (q > UINT64_MAX / 1000000000u)
		return UINT64_MAX;
	uint64_t whole = q * 1000000000u;
	uint64_t frac = r <= UINT64_MAX / 1000000000u ? r * 1000000000u / freq
						       : rlog__mul_div(r, 1000000000u, freq);
	return whole + frac < whole ? UINT64_MAX : whole + frac;
}

uint64_t rlog__monotonic_ns(void);

/* CLOCK_REALTIME's own estimate of its error, from adjtimex(2) (modes 0,
 * which needs no privilege), as the LOG_MARKER records it
 * (docs/FORMAT.md, LOG_MARKER): esterror in us, at most 65535, and
 * maxerror in us, 1..RLOG_CLOCK_ERROR_MAX, or RLOG_CLOCK_ERROR_UNSYNC if
 * the kernel says the clock is not synchronized, or
 * RLOG_CLOCK_ERROR_NOT_RECORDED if adjtimex fails. */
void rlog__clock_error(uint16_t *esterror_us, uint16_t *maxerror_us);

/*
 * Nanoseconds since start (the LOG_MARKER's sync ticks) of a tick time at
 * freq, negative before it, saturated at +-INT64_MAX; 0 if freq is 0 (no
 * LOG_MARKER seen yet).  The reader's event times (rlog_event.time_ns).
 */
static inline int64_t rlog__ticks_since_ns(uint64_t ticks, uint64_t start, uint64_t freq)
{
	uint64_t ns;

	if (freq == 0)
		return 0;
	if (ticks >= start) {
		ns = rlog__ticks_to_ns(ticks - start, freq);
		return ns > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)ns;
	}
	ns = rlog__ticks_to_ns(start - ticks, freq);
	return ns > (uint64_t)INT64_MAX ? -INT64_MAX : -(int64_t)ns;
}

#endif
