#define _GNU_SOURCE
#include "clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timex.h>
#include <time.h>

#include "ringlog.h"

static uint64_t ts_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t rlog__monotonic_ns(void)
{
	return ts_ns(CLOCK_MONOTONIC);
}

uint32_t rlog__tick_source_pick(void)
{
	const char *env = getenv("RINGLOG_CLOCK");
	if (env && strcmp(env, "monotonic") == 0)
		return RLOG_TICK_MONOTONIC;
#if RLOG__HAVE_TSC
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (f == NULL)
		return RLOG_TICK_MONOTONIC;
	char line[4096];
	bool constant = false, nonstop = false;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		constant = strstr(line, " constant_tsc") != NULL;
		nonstop = strstr(line, " nonstop_tsc") != NULL;
		break;
	}
	fclose(f);
	return constant && nonstop ? RLOG_TICK_TSC : RLOG_TICK_MONOTONIC;
#else
	return RLOG_TICK_MONOTONIC;
#endif
}

uint64_t rlog__ticks(uint32_t source)
{
#if RLOG__HAVE_TSC
	if (source == RLOG_TICK_TSC)
		return __rdtsc();
#endif
	(void)source;
	return ts_ns(CLOCK_MONOTONIC);
}

void rlog__clock_sync_now(uint32_t source, struct rlog__clock_sync *s)
{
	/* Bracket the clock reads with tick reads and keep the tightest of a
	 * few tries, so that the pair is off by at most half the bracket. */
	uint64_t best = UINT64_MAX;
	s->ticks = 0;
	s->monotonic_raw_ns = 0;
	for (int i = 0; i < 16; i++) {
		uint64_t t0 = rlog__ticks(source);
		uint64_t raw = ts_ns(CLOCK_MONOTONIC_RAW);
		uint64_t t1 = rlog__ticks(source);
		if (t1 - t0 < best) {
			best = t1 - t0;
			s->ticks = t0 + (t1 - t0) / 2;
			s->monotonic_raw_ns = raw;
		}
	}
	/* Realtime from the same instant: realtime - raw is constant over the
	 * few nanoseconds between these two reads. */
	uint64_t raw2 = ts_ns(CLOCK_MONOTONIC_RAW);
	uint64_t real = ts_ns(CLOCK_REALTIME);
	s->realtime_ns = real - (raw2 - s->monotonic_raw_ns);
	if (source == RLOG_TICK_MONOTONIC) {
		/* The tick source is CLOCK_MONOTONIC itself. */
		s->ticks = ts_ns(CLOCK_MONOTONIC) - (ts_ns(CLOCK_MONOTONIC_RAW) - s->monotonic_raw_ns);
	}
}

uint64_t rlog__tick_freq(uint32_t source, const struct rlog__clock_sync *a,
			 const struct rlog__clock_sync *b)
{
	if (source != RLOG_TICK_TSC || b->monotonic_raw_ns <= a->monotonic_raw_ns)
		return 1000000000u;
	uint64_t dt = b->ticks - a->ticks, dns = b->monotonic_raw_ns - a->monotonic_raw_ns;
	/* dt * 1e9 overflows 64 bits after ~6 s at 3 GHz; a double carries
	 * 53 bits, far more precision than the measurement has. */
	return (uint64_t)((double)dt * 1e9 / (double)dns + 0.5);
}

uint64_t rlog__clock_calibrate(uint32_t source, int window_ms, struct rlog__clock_sync *start)
{
	rlog__clock_sync_now(source, start);
	if (source != RLOG_TICK_TSC)
		return 1000000000u;
	struct timespec ts = { window_ms / 1000, (long)(window_ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
	struct rlog__clock_sync end;
	rlog__clock_sync_now(source, &end);
	return rlog__tick_freq(source, start, &end);
}

void rlog__clock_error(uint16_t *esterror_us, uint16_t *maxerror_us)
{
	struct timex tx;
	memset(&tx, 0, sizeof tx); /* modes 0: read only */
	int state = adjtimex(&tx);
	*esterror_us = 0;
	*maxerror_us = RLOG_CLOCK_ERROR_NOT_RECORDED;
	if (state < 0)
		return;
	/* TIME_ERROR is what the kernel returns while STA_UNSYNC is set (no
	 * NTP or PTP daemon has disciplined the clock, or it gave up): its
	 * maxerror then is a meaningless 16 s. */
	if (state == TIME_ERROR || (tx.status & STA_UNSYNC)) {
		*maxerror_us = RLOG_CLOCK_ERROR_UNSYNC;
		return;
	}
	*esterror_us = tx.esterror < 0 ? 0 : tx.esterror > 65535 ? 65535 : (uint16_t)tx.esterror;
	/* 0 would read as "not recorded": a bound of 0 us is 1 us at this grain. */
	*maxerror_us = tx.maxerror < 1 ? 1
		       : tx.maxerror > (long)RLOG_CLOCK_ERROR_MAX ? RLOG_CLOCK_ERROR_MAX
								  : (uint16_t)tx.maxerror;
}
