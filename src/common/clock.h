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

/*
 * rlog__ticks_to_ns(ticks - start, freq) for the times of a run of
 * events, without dividing, at a rate other than 1 GHz (a TSC's): a
 * converter's per-event cost was two 64-bit divisions.  From a base time
 * b with (b - start) * 1e9 = ns_b * freq + rem_b (the divisions, once), a
 * time b + dt (0 <= dt < 2^32) has ns_b + (rem_b + dt * 1e9) / freq:
 * exact, as the division is (rounded down).  That quotient is estimated
 * by a multiplication by 1 / freq and corrected until
 * 0 <= remainder < freq, which makes it exact whatever the estimate; the
 * bounds keep the estimate within a step or two (a quotient below 2^43,
 * its error below 2^-50 of it) and the sums within 64 bits.  A time
 * before the base, or 2^32 ticks or more after it, becomes the base.
 * Each time from the base, not from the time before it: each event's
 * answer would then wait for the one before (a chain of multiplications
 * through the run), slower than the divisions it saves.
 */
struct rlog__ns_walk {
	uint64_t start, freq;
	double inv;       /* 1.0 / freq */
	uint64_t ticks;   /* the base */
	uint64_t ns;      /* rlog__ticks_to_ns(ticks - start, freq) */
	uint64_t rem;     /* (ticks - start) * 1e9 mod freq */
	bool set;         /* ticks, ns and rem hold */
};

/* The rates walked: 2^20 Hz (1.05 MHz) to 18 GHz (r * 1e9 fits 64 bits for r < freq). */
#define RLOG__NS_WALK_MIN_HZ ((uint64_t)1 << 20)
#define RLOG__NS_WALK_MAX_HZ (UINT64_MAX / 1000000000u)

/* Returns whether a walk can follow freq (else the caller divides). */
static inline bool rlog__ns_walk_init(struct rlog__ns_walk *w, uint64_t start, uint64_t freq)
{
	*w = (struct rlog__ns_walk){ .start = start, .freq = freq };
	if (freq < RLOG__NS_WALK_MIN_HZ || freq > RLOG__NS_WALK_MAX_HZ || freq == 1000000000u)
		return false;
	w->inv = 1.0 / (double)freq;
	return true;
}

/* Makes ticks (>= start) w's base, with the divisions; false if its ns
 * do not fit 64 bits. */
static inline bool rlog__ns_walk_reset(struct rlog__ns_walk *w, uint64_t ticks)
{
	uint64_t d = ticks - w->start, ns = rlog__ticks_to_ns(d, w->freq);
	if (ns == UINT64_MAX)
		return false; /* does not fit (or is the last ns: the caller's too) */
	w->ns = ns;
	w->rem = d % w->freq * 1000000000u % w->freq; /* < freq * 1e9 < 2^64 */
	w->ticks = ticks;
	w->set = true;
	return true;
}

/*
 * *ns = rlog__ticks_to_ns(ticks - w->start, w->freq) for a w that
 * rlog__ns_walk_init accepted; true.  false (w unchanged, or not set)
 * for a time before start, or whose ns do not fit: the caller divides.
 */
static inline bool rlog__ns_walk_next(struct rlog__ns_walk *w, uint64_t ticks, uint64_t *ns)
{
	uint64_t dt = ticks - w->ticks, f = w->freq;
	if (!w->set || ticks < w->ticks || dt >> 32) {
		if (ticks < w->start || !rlog__ns_walk_reset(w, ticks))
			return false;
		*ns = w->ns;
		return true;
	}
	/* x < 2^32 * 1e9 + freq < 2^63; the estimate of x / freq (at most
	 * 2^63 / 2^20) is within 2^-50 of it, a step or two off. */
	uint64_t x = w->rem + dt * 1000000000u;
	uint64_t q = (uint64_t)(int64_t)((double)(int64_t)x * w->inv), qf = q * f;
	while (qf > x) {
		q--;
		qf -= f;
	}
	uint64_t r = x - qf;
	while (r >= f) {
		r -= f;
		q++;
	}
	if (w->ns + q < w->ns)
		return false;
	*ns = w->ns + q;
	return true;
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
