/*
 * counter_catalog.h - the catalogue of counter sources (docs/FORMAT.md, "The
 * counter sources"): what each bit of a session's counter_mask is, its
 * name in `ringlog counters`, --counters and the COUNTER_NAME records, and
 * whether this machine has it.  Also the one rule of a counter's delta.
 *
 *   bit  0        app                  the application's counters (rlog_counter_register)
 *   bits 1..6     proc.minflt ...      a process's figures, from /proc/PID/stat and status
 *   bits 8..16    perf.dtlb-load-misses ...  perf_event_open on the attached processes
 *   bits 24..32   system.dtlb-load-misses ... perf_event_open on every CPU
 *
 * Shared by the CLI (listing, parsing --counters), the session control
 * (dropping what the machine lacks at start and update) and the daemon
 * (sampling).
 */
#ifndef RLOG_COMMON_COUNTER_CATALOG_H
#define RLOG_COMMON_COUNTER_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "region_abi.h"

/* The process figures (bits RLOG_CTR_BIT_PROC + k). */
enum rlog__proc_figure {
	RLOG__FIG_MINFLT,
	RLOG__FIG_MAJFLT,
	RLOG__FIG_NVCSW,
	RLOG__FIG_NIVCSW,
	RLOG__FIG_UTIME,
	RLOG__FIG_STIME,
	RLOG__FIGURES,
};

/* The performance counters (bits RLOG_CTR_BIT_PERF + k and
 * RLOG_CTR_BIT_SYSTEM + k). */
#define RLOG__PERF_EVENTS 9

/* One counter source of the catalogue. */
struct rlog__counter_def {
	const char *name;      /* "proc.minflt", "perf.cycles", ... */
	unsigned bit;          /* its bit in counter_mask */
	uint8_t source;        /* RLOG_COUNTER_SRC_* */
	uint8_t unit;          /* RLOG_COUNTER_UNIT_* */
	int index;             /* RLOG__FIG_* or the perf event 0..8; 0 for app */
	const char *what;      /* one line for `ringlog counters` */
};

/* Every source, in bit order (n receives the count). */
const struct rlog__counter_def *rlog__counter_defs(size_t *n);

/* The source of bit, or NULL if the bit is none. */
const struct rlog__counter_def *rlog__counter_def(unsigned bit);

/* Every bit that names a source. */
uint64_t rlog__counter_all(void);

/*
 * Parses a --counters LIST: names of sources and of groups (app, proc,
 * perf, system, all; none for no counter), comma-separated.  Returns 0
 * with *mask set, or -EINVAL with why (n bytes) naming the bad item.
 */
int rlog__counter_parse(const char *list, uint64_t *mask, char *why, size_t n);

/* Writes the names of mask's bits, comma-separated ("none" for 0). */
void rlog__counter_names(uint64_t mask, char *out, size_t n);

/* Whether a source can be sampled on this machine. */
enum rlog__counter_avail {
	RLOG__CTR_OK,          /* yes */
	RLOG__CTR_USER_ONLY,   /* yes, user space only (perf_event_paranoid) */
	RLOG__CTR_NO_HARDWARE, /* no: the machine has no hardware counter for it */
	RLOG__CTR_PARANOID,    /* no: perf_event_paranoid refuses it */
	RLOG__CTR_MISSING,     /* no: another reason (no perf_event_open, no /proc) */
};

/*
 * Tries source bit on this machine, as the daemon would sample it (a
 * process counter on the calling process, a system counter on CPU 0).
 * Returns the verdict; why (n bytes) says why not, or for USER_ONLY what
 * is missing, in a phrase that fits after "counter NAME: " (empty for OK).
 */
enum rlog__counter_avail rlog__counter_probe(unsigned bit, char *why, size_t n);

/*
 * The delta rule (docs/FORMAT.md, "COUNTER"): a counter read as cur after
 * prev moved forward by d = cur - prev modulo 2^64 if d < 2^63 (so a
 * counter that wraps at 2^64 gives the right small delta), and went back
 * (a reset) otherwise: then the delta is cur, counted from 0.  Returns
 * false if cur == prev (no record), else true with *delta and *reset.
 */
static inline bool rlog__counter_delta(uint64_t prev, uint64_t cur, uint64_t *delta, bool *reset)
{
	uint64_t d = cur - prev;
	if (d == 0)
		return false;
	*reset = (d >> 63) != 0;
	*delta = *reset ? cur : d;
	return true;
}

/* A name the COUNTER_NAME record can carry: 1..len bytes of printable
 * ASCII (0x21..0x7e) other than '"' and '\'. */
bool rlog__counter_name_ok(const char *s, size_t len);

#endif
