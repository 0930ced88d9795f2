/*
 * test_ns_walk - the tick times' nanoseconds followed without dividing
 * (src/common/clock.h, rlog__ns_walk_next) are exactly
 * rlog__ticks_to_ns's, rounded down, for every rate it walks: TSC-like
 * rates (2.5 GHz, 3 GHz - 1, a prime near 3 GHz), an ARM counter's
 * (24 MHz, 19.2 MHz), the least and the largest it takes, 1 GHz +- 1;
 * starts at 0, 1 s and near 2^62 and 2^64; steps of a few ticks (the
 * common case), up to 2^31 (a record's largest), 2^32 and more (the walk
 * restarts with the divisions), and backwards (restarts too); times
 * before the start and past the ns that fit 64 bits: false, as the
 * caller then divides.  Rates it does not walk (1 GHz, below 2^20 Hz,
 * above 18 GHz): rlog__ns_walk_init says so.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "clock.h"
#include "tap.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A step of the mix: mostly small, some up to 2^31, a few past 2^32. */
static uint64_t step(void)
{
	uint64_t v = next_rand(), k = v % 100;
	if (k < 80)
		return v >> 60;
	if (k < 95)
		return (v >> 8) % ((uint64_t)1 << 31);
	if (k < 98)
		return ((uint64_t)1 << 32) + (v >> 20) % ((uint64_t)1 << 36);
	return (v >> 8) % 5000; /* small, then maybe taken back (below) */
}

int main(void)
{
	static const uint64_t rates[] = {
		2500000000u, 2999999999u, 3000000019u, 24000000u, 19200000u,
		RLOG__NS_WALK_MIN_HZ, RLOG__NS_WALK_MAX_HZ, 999999999u, 1000000001u,
	};
	static const uint64_t starts[] = { 0, 1000000000u, (uint64_t)1 << 62,
					   UINT64_MAX - ((uint64_t)1 << 44) };
	struct rlog__ns_walk w;
	ok(!rlog__ns_walk_init(&w, 0, 1000000000u), "1 GHz: not walked (ns are ticks)");
	ok(!rlog__ns_walk_init(&w, 0, RLOG__NS_WALK_MIN_HZ - 1), "below 2^20 Hz (1.05 MHz): not walked");
	ok(!rlog__ns_walk_init(&w, 0, RLOG__NS_WALK_MAX_HZ + 1), "above 18 GHz: not walked");
	ok(!rlog__ns_walk_init(&w, 0, 0), "0 Hz: not walked");
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		for (size_t j = 0; j < sizeof(starts) / sizeof(starts[0]); j++) {
			uint64_t f = rates[i], st = starts[j];
			uint64_t wrong = 0, refused = 0, accepted = 0, before = 0, unfit = 0;
			if (!rlog__ns_walk_init(&w, st, f))
				BAIL_IF(true, "%" PRIu64 " Hz not walked", f);
			/* From a little before the start. */
			uint64_t t = st >= 1000 ? st - 1000 : 0;
			for (unsigned n = 0; n < 200000 && t < UINT64_MAX - ((uint64_t)1 << 37); n++) {
				uint64_t s = step();
				if (next_rand() % 100 == 0 && t >= s)
					t -= s; /* backwards: a restart */
				else
					t += s;
				uint64_t ns = 0, want = t >= st ? rlog__ticks_to_ns(t - st, f) : 0;
				bool got = rlog__ns_walk_next(&w, t, &ns);
				if (t < st) {
					before++;
					refused += got;
				} else if (want == UINT64_MAX) {
					/* ticks_to_ns's "does not fit" (UINT64_MAX
					 * itself is never an exact answer here). */
					unfit++;
					refused += got;
				} else if (!got || ns != want) {
					wrong++;
				} else {
					accepted++;
				}
			}
			ok(wrong == 0 && refused == 0 && accepted > 1000,
			   "%" PRIu64 " Hz from %" PRIu64 ": %" PRIu64 " times exact, %" PRIu64
			   " wrong, %" PRIu64 " before the start, %" PRIu64 " past 2^64 ns, %" PRIu64
			   " of those given",
			   f, st, accepted, wrong, before, unfit, refused);
		}
	}
	/* Every step size from 0 to 2^16 once, then the steps near 2^32, at
	 * a TSC's rate from a time whose remainder is the largest. */
	uint64_t f = 2999999999u, st = 12345, wrong = 0, n = 0;
	BAIL_IF(!rlog__ns_walk_init(&w, st, f), "not walked");
	uint64_t t = st + f - 1;
	for (uint64_t s = 0; s <= 65536; s++, n++) {
		uint64_t ns;
		t += s;
		wrong += !rlog__ns_walk_next(&w, t, &ns) || ns != rlog__ticks_to_ns(t - st, f);
	}
	for (uint64_t s = ((uint64_t)1 << 32) - 3; s <= ((uint64_t)1 << 32) + 3; s++, n++) {
		uint64_t ns;
		t += s;
		wrong += !rlog__ns_walk_next(&w, t, &ns) || ns != rlog__ticks_to_ns(t - st, f);
	}
	ok(wrong == 0, "every step size to 2^16 and near 2^32: %" PRIu64 " of %" PRIu64 " wrong",
	   wrong, n);
	/* Up to the last ns that fit 64 bits and past them, at 2^20 Hz (ns
	 * overflow near 1.9e16 ticks): exact up to there, false after. */
	f = RLOG__NS_WALK_MIN_HZ;
	BAIL_IF(!rlog__ns_walk_init(&w, 0, f), "not walked");
	uint64_t edge = rlog__mul_div(f, (uint64_t)1 << 63, 1000000000u) * 2; /* ~2^64 ns */
	uint64_t fit = 0, past = 0, past_given = 0;
	wrong = 0;
	for (t = edge - 5000000; t < edge + 5000000; t += 999) {
		uint64_t ns, want = rlog__ticks_to_ns(t, f);
		bool got = rlog__ns_walk_next(&w, t, &ns);
		if (want == UINT64_MAX) {
			past++;
			past_given += got;
		} else {
			fit++;
			wrong += !got || ns != want;
		}
	}
	ok(wrong == 0 && past_given == 0 && fit > 1000 && past > 1000,
	   "to 2^64 ns and past: %" PRIu64 " exact (%" PRIu64 " wrong), %" PRIu64
	   " past, %" PRIu64 " of those given", fit, wrong, past, past_given);
	return done_testing();
}
