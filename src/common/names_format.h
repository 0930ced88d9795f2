/*
 * names_format.h - a set of bits printed as the names of a table's
 * entries ("cswitch,wakeup", "proc.minflt,perf.cycles"): the --system
 * flags (sysflags_names.c) and the counters (counter_catalog.c) print
 * their masks so in `query`, `list` and `ringlog counters`.
 */
#ifndef RLOG_COMMON_NAMES_FORMAT_H
#define RLOG_COMMON_NAMES_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Entry i of a table: its name and the bits it stands for. */
typedef void rlog__names_entry_fn(size_t i, const char **name, uint64_t *mask);

/*
 * Writes to out (cap bytes, NUL-terminated, cut at cap) the names of the
 * n entries whose bits meet bits, in table order, separated by commas,
 * or "none" for bits 0; *used (may be NULL) receives the bytes written.
 * Returns the bits that no entry names.
 */
static inline uint64_t rlog__names_format(size_t n, rlog__names_entry_fn *entry, uint64_t bits,
					  char *out, size_t cap, size_t *used)
{
	size_t u = 0;
	uint64_t named = 0;
	out[0] = '\0';
	if (bits == 0) {
		int k = snprintf(out, cap, "none");
		u = k > 0 ? (size_t)k : 0;
	}
	for (size_t i = 0; i < n && bits != 0; i++) {
		const char *name;
		uint64_t mask;
		entry(i, &name, &mask);
		if (!(bits & mask))
			continue;
		named |= mask;
		if (u >= cap)
			continue;
		int k = snprintf(out + u, cap - u, "%s%s", u ? "," : "", name);
		if (k > 0)
			u += (size_t)k;
	}
	if (used)
		*used = u;
	return bits & ~named;
}

#endif
