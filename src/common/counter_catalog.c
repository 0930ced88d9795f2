/*
 * counter_catalog.c - the catalogue of counter sources (counter_catalog.h).
 */
#define _GNU_SOURCE
#include "counter_catalog.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "names_format.h"
#include "perf.h"
#include "procstat.h"

#define PROC(k, n, u, w) { "proc." n, RLOG_CTR_BIT_PROC + (k), RLOG_COUNTER_SRC_PROC, u, k, w }
#define PERF(k, n, w) { "perf." n, RLOG_CTR_BIT_PERF + (k), RLOG_COUNTER_SRC_PERF, \
			RLOG_COUNTER_UNIT_COUNT, k, w " of the attached processes" }
#define SYS(k, n, w) { "system." n, RLOG_CTR_BIT_SYSTEM + (k), RLOG_COUNTER_SRC_SYSTEM, \
		       RLOG_COUNTER_UNIT_COUNT, k, w " of the whole machine" }

static const struct rlog__counter_def defs[] = {
	{ "app", RLOG_CTR_BIT_APP, RLOG_COUNTER_SRC_APP, RLOG_COUNTER_UNIT_COUNT, 0,
	  "the application's counters (rlog_counter_register)" },
	PROC(RLOG__FIG_MINFLT, "minflt", RLOG_COUNTER_UNIT_COUNT, "minor page faults (/proc/PID/stat)"),
	PROC(RLOG__FIG_MAJFLT, "majflt", RLOG_COUNTER_UNIT_COUNT, "major page faults (/proc/PID/stat)"),
	PROC(RLOG__FIG_NVCSW, "nvcsw", RLOG_COUNTER_UNIT_COUNT,
	     "voluntary context switches (/proc/PID/status)"),
	PROC(RLOG__FIG_NIVCSW, "nivcsw", RLOG_COUNTER_UNIT_COUNT,
	     "involuntary context switches (/proc/PID/status)"),
	PROC(RLOG__FIG_UTIME, "utime", RLOG_COUNTER_UNIT_NS, "CPU time in user mode, ns (/proc/PID/stat)"),
	PROC(RLOG__FIG_STIME, "stime", RLOG_COUNTER_UNIT_NS,
	     "CPU time in the kernel, ns (/proc/PID/stat)"),
	PERF(0, "dtlb-load-misses", "data TLB load misses"),
	PERF(1, "itlb-load-misses", "instruction TLB misses"),
	PERF(2, "cache-misses", "last-level cache misses"),
	PERF(3, "branch-misses", "mispredicted branches"),
	PERF(4, "instructions", "instructions retired"),
	PERF(5, "cycles", "CPU cycles"),
	PERF(6, "page-faults", "page faults"),
	PERF(7, "context-switches", "context switches"),
	PERF(8, "cpu-migrations", "CPU migrations"),
	SYS(0, "dtlb-load-misses", "data TLB load misses"),
	SYS(1, "itlb-load-misses", "instruction TLB misses"),
	SYS(2, "cache-misses", "last-level cache misses"),
	SYS(3, "branch-misses", "mispredicted branches"),
	SYS(4, "instructions", "instructions retired"),
	SYS(5, "cycles", "CPU cycles"),
	SYS(6, "page-faults", "page faults"),
	SYS(7, "context-switches", "context switches"),
	SYS(8, "cpu-migrations", "CPU migrations"),
};
#define NDEFS (sizeof defs / sizeof defs[0])

const struct rlog__counter_def *rlog__counter_defs(size_t *n)
{
	*n = NDEFS;
	return defs;
}

const struct rlog__counter_def *rlog__counter_def(unsigned bit)
{
	for (size_t i = 0; i < NDEFS; i++)
		if (defs[i].bit == bit)
			return &defs[i];
	return NULL;
}

uint64_t rlog__counter_all(void)
{
	uint64_t m = 0;
	for (size_t i = 0; i < NDEFS; i++)
		m |= UINT64_C(1) << defs[i].bit;
	return m;
}

/* The bits of a group name ("proc": every proc.* source), or 0. */
static uint64_t group_bits(const char *item, size_t len)
{
	static const struct { const char *name; uint8_t source; } groups[] = {
		{ "proc", RLOG_COUNTER_SRC_PROC },
		{ "perf", RLOG_COUNTER_SRC_PERF },
		{ "system", RLOG_COUNTER_SRC_SYSTEM },
		{ "all", 0 },
	};
	for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
		if (strlen(groups[g].name) != len || memcmp(groups[g].name, item, len) != 0)
			continue;
		uint64_t m = 0;
		for (size_t i = 0; i < NDEFS; i++)
			if (groups[g].source == 0 || defs[i].source == groups[g].source)
				m |= UINT64_C(1) << defs[i].bit;
		return m;
	}
	return 0;
}

int rlog__counter_parse(const char *list, uint64_t *mask, char *why, size_t n)
{
	uint64_t m = 0;
	if (strcmp(list, "none") == 0) {
		*mask = 0;
		return 0;
	}
	for (const char *p = list;;) {
		size_t len = strcspn(p, ",");
		uint64_t bits = group_bits(p, len);
		for (size_t i = 0; i < NDEFS && bits == 0; i++)
			if (strlen(defs[i].name) == len && memcmp(defs[i].name, p, len) == 0)
				bits = UINT64_C(1) << defs[i].bit;
		if (bits == 0) {
			snprintf(why, n, "'%.*s' is not a counter (ringlog counters lists them; groups: "
					 "app, proc, perf, system, all, none)", (int)(len > 64 ? 64 : len), p);
			return -EINVAL;
		}
		m |= bits;
		if (p[len] == '\0')
			break;
		p += len + 1;
	}
	*mask = m;
	return 0;
}

static void counter_entry(size_t i, const char **name, uint64_t *mask)
{
	*name = defs[i].name;
	*mask = (uint64_t)1 << defs[i].bit;
}

void rlog__counter_names(uint64_t mask, char *out, size_t n)
{
	rlog__names_format(NDEFS, counter_entry, mask, out, n, NULL);
}

enum rlog__counter_avail rlog__counter_probe(unsigned bit, char *why, size_t n)
{
	const struct rlog__counter_def *d = rlog__counter_def(bit);
	why[0] = '\0';
	if (d == NULL) {
		snprintf(why, n, "no such counter");
		return RLOG__CTR_MISSING;
	}
	switch (d->source) {
	case RLOG_COUNTER_SRC_APP:
		return RLOG__CTR_OK;
	case RLOG_COUNTER_SRC_PROC: {
		struct rlog__proc_figures f;
		int err = rlog__procstat_figures(getpid(), d->index == RLOG__FIG_NVCSW ||
							   d->index == RLOG__FIG_NIVCSW, &f);
		if (err < 0) {
			snprintf(why, n, "cannot read /proc/self (%s)", strerror(-err));
			return RLOG__CTR_MISSING;
		}
		return RLOG__CTR_OK;
	}
	default: {
		bool system = d->source == RLOG_COUNTER_SRC_SYSTEM, user_only;
		int fd = rlog__perf_open(d->index, system ? -1 : 0, 0, &user_only);
		if (fd >= 0) {
			close(fd);
			if (!user_only)
				return RLOG__CTR_OK;
			snprintf(why, n, "counts user space only: kernel.perf_event_paranoid = %d",
				 rlog__perf_paranoid());
			return RLOG__CTR_USER_ONLY;
		}
		if (rlog__perf_why(d->index, system, fd, why, n))
			return RLOG__CTR_PARANOID;
		return rlog__perf_hardware(d->index) && (fd == -ENOENT || fd == -EOPNOTSUPP ||
							 fd == -ENODEV)
			       ? RLOG__CTR_NO_HARDWARE
			       : RLOG__CTR_MISSING;
	}
	}
}

bool rlog__counter_name_ok(const char *s, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x21 || c > 0x7e || c == '"' || c == '\\')
			return false;
	}
	return true;
}
