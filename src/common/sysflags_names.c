/*
 * sysflags_names.c - the system-event names and the --system parser
 * (sysflags_names.h says what a LIST is).
 */
#include "sysflags_names.h"

#include "names_format.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* In bit order: rlog__sys_names prints them so. */
static const struct rlog__sys_flag_def defs[] = {
	{ "process", RLOG_SYS_PROCESS, "EVENT_TRACE_FLAG_PROCESS" },
	{ "thread", RLOG_SYS_THREAD, "EVENT_TRACE_FLAG_THREAD" },
	{ "image-load", RLOG_SYS_IMAGE_LOAD, "EVENT_TRACE_FLAG_IMAGE_LOAD" },
	{ "process-counters", RLOG_SYS_PROCESS_COUNTERS, "EVENT_TRACE_FLAG_PROCESS_COUNTERS" },
	{ "cswitch", RLOG_SYS_CSWITCH, "EVENT_TRACE_FLAG_CSWITCH" },
	/* The seed's DPCs (deferred procedure calls: an interrupt's work run
	 * later, at a lower priority) are Linux's softirqs: one bit, so that
	 * 0x20 selects them as the seed's value does. */
	{ "softirq", RLOG_SYS_DPC, "EVENT_TRACE_FLAG_DPC" },
	{ "interrupt", RLOG_SYS_INTERRUPT, "EVENT_TRACE_FLAG_INTERRUPT" },
	{ "syscall", RLOG_SYS_SYSTEMCALL, "EVENT_TRACE_FLAG_SYSTEMCALL" },
	{ "disk-io", RLOG_SYS_DISK_IO, "EVENT_TRACE_FLAG_DISK_IO" },
	{ "page-faults", RLOG_SYS_MEMORY_PAGE_FAULTS, "EVENT_TRACE_FLAG_MEMORY_PAGE_FAULTS" },
	{ "hard-faults", RLOG_SYS_MEMORY_HARD_FAULTS, "EVENT_TRACE_FLAG_MEMORY_HARD_FAULTS" },
	{ "network", RLOG_SYS_NETWORK_TCPIP, "EVENT_TRACE_FLAG_NETWORK_TCPIP" },
	{ "profile", RLOG_SYS_PROFILE, "EVENT_TRACE_FLAG_PROFILE" },
	{ "file-io", RLOG_SYS_FILE_IO, "EVENT_TRACE_FLAG_FILE_IO" },
	{ "wakeup", RLOG_SYS_WAKEUP, NULL },
};
#define NDEFS (sizeof defs / sizeof defs[0])

/* The seed's flags that select nothing on Linux, and why (docs/SESSIONS.md
 * has the same reasons). */
static const struct {
	uint64_t bit;
	const char *seed;
	const char *why;
} refused[] = {
	{ RLOG_SYS_DISK_FILE_IO, "EVENT_TRACE_FLAG_DISK_FILE_IO",
	  "is part of file-io (0x2000000) on Linux: the file names are the paths of the open "
	  "calls" },
	{ RLOG_SYS_DISK_IO_INIT, "EVENT_TRACE_FLAG_DISK_IO_INIT",
	  "is part of disk-io (0x100) on Linux: block_rq_issue is the request's start" },
	{ RLOG_SYS_REGISTRY, "EVENT_TRACE_FLAG_REGISTRY", "has no Linux counterpart: Linux has no "
	  "registry" },
	{ RLOG_SYS_ALPC, "EVENT_TRACE_FLAG_ALPC", "has no Linux counterpart: ALPC is Windows' "
	  "local procedure call; Linux's pipes, sockets and futexes show as syscall and wakeup" },
	{ RLOG_SYS_SPLIT_IO, "EVENT_TRACE_FLAG_SPLIT_IO", "has no Linux counterpart: it is the "
	  "Windows I/O manager splitting a request; disk-io records each request as the device "
	  "gets it, after any split" },
	{ RLOG_SYS_DRIVER, "EVENT_TRACE_FLAG_DRIVER", "has no Linux counterpart: it is Windows "
	  "drivers' I/O request packets; disk-io and interrupt show the devices' side" },
	{ RLOG_SYS_FILE_IO_INIT, "EVENT_TRACE_FLAG_FILE_IO_INIT",
	  "is part of file-io (0x2000000) on Linux: the system call's entry is the operation's "
	  "start" },
};
#define NREFUSED (sizeof refused / sizeof refused[0])

const struct rlog__sys_flag_def *rlog__sys_flag_defs(size_t *n)
{
	*n = NDEFS;
	return defs;
}

uint64_t rlog__sys_all(void)
{
	uint64_t m = 0;
	for (size_t i = 0; i < NDEFS; i++)
		m |= defs[i].bit;
	return m;
}

/* Says why bit (one bit of a hexadecimal item) selects nothing. */
static int bit_refused(uint64_t bit, char *why, size_t n)
{
	for (size_t i = 0; i < NREFUSED; i++)
		if (refused[i].bit == bit) {
			snprintf(why, n, "--system 0x%" PRIx64 ": %s %s (docs/SESSIONS.md)", bit,
				 refused[i].seed, refused[i].why);
			return -EINVAL;
		}
	snprintf(why, n, "--system 0x%" PRIx64 ": not a system event flag (docs/SESSIONS.md lists "
			 "them)", bit);
	return -EINVAL;
}

/* A hexadecimal item "0x..." of len bytes. */
static int parse_hex(const char *item, size_t len, uint64_t *bits, char *why, size_t n)
{
	char buf[24];
	const char *digits = item + 2;
	size_t nd = len - 2;
	bool ok = nd >= 1 && nd <= 16;
	for (size_t i = 0; ok && i < nd; i++)
		ok = isxdigit((unsigned char)digits[i]);
	if (!ok) {
		snprintf(why, n, "--system '%.*s': not a hexadecimal number of at most 64 bits",
			 (int)(len > 64 ? 64 : len), item);
		return -EINVAL;
	}
	memcpy(buf, digits, nd);
	buf[nd] = '\0';
	uint64_t v = strtoull(buf, NULL, 16);
	uint64_t bad = v & ~rlog__sys_all();
	if (bad)
		return bit_refused(bad & -bad, why, n);
	*bits = v;
	return 0;
}

/* Appends item to the list in out (n bytes, *used of them so far), after
 * sep unless it is the first; what does not fit is cut. */
static void list_add(char *out, size_t n, size_t *used, const char *sep, const char *item)
{
	if (*used >= n)
		return;
	int k = snprintf(out + *used, n - *used, "%s%s", *used ? sep : "", item);
	if (k > 0)
		*used += (size_t)k;
}

/* The names for a message: "process, thread, ..., wakeup". */
static void name_list(char *out, size_t n)
{
	size_t used = 0;
	out[0] = '\0';
	for (size_t i = 0; i < NDEFS; i++)
		list_add(out, n, &used, ", ", defs[i].name);
}

int rlog__sys_parse(const char *list, uint64_t *flags, char *why, size_t n)
{
	uint64_t m = 0;
	for (const char *p = list;;) {
		size_t len = strcspn(p, ",");
		uint64_t bits = 0;
		bool found = false;
		if (len == 0) {
			snprintf(why, n, "--system '%s': an empty item (names and 0x numbers, separated "
					 "by single commas)", list);
			return -EINVAL;
		}
		if (len >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
			int err = parse_hex(p, len, &bits, why, n);
			if (err < 0)
				return err;
			found = true;
		} else if (isdigit((unsigned char)p[0])) {
			snprintf(why, n, "--system '%.*s': a number is the seed's EnableFlags, in "
					 "hexadecimal: write 0x...", (int)(len > 64 ? 64 : len), p);
			return -EINVAL;
		} else if (len == 3 && memcmp(p, "all", 3) == 0) {
			bits = rlog__sys_all();
			found = true;
		} else if (len == 4 && memcmp(p, "none", 4) == 0) {
			found = true;
		}
		for (size_t i = 0; i < NDEFS && !found; i++)
			if (strlen(defs[i].name) == len && memcmp(defs[i].name, p, len) == 0) {
				bits = defs[i].bit;
				found = true;
			}
		if (!found) {
			char names[256];
			name_list(names, sizeof names);
			snprintf(why, n, "--system '%.*s': not a system event (%s, all, none, or the "
					 "seed's hexadecimal EnableFlags such as 0x13)",
				 (int)(len > 64 ? 64 : len), p, names);
			return -EINVAL;
		}
		m |= bits;
		if (p[len] == '\0')
			break;
		p += len + 1;
		if (*p == '\0') {
			snprintf(why, n, "--system '%s': an empty item (names and 0x numbers, separated "
					 "by single commas)", list);
			return -EINVAL;
		}
	}
	*flags = m;
	return 0;
}

static void sys_entry(size_t i, const char **name, uint64_t *mask)
{
	*name = defs[i].name;
	*mask = defs[i].bit;
}

void rlog__sys_names(uint64_t flags, char *out, size_t n)
{
	size_t used;
	uint64_t other = rlog__names_format(NDEFS, sys_entry, flags, out, n, &used);
	char hex[24];
	snprintf(hex, sizeof hex, "0x%" PRIx64, other);
	if (other)
		list_add(out, n, &used, ",", hex);
}

void rlog__sys_pids_text(const uint32_t *pids, uint32_t npids, char *out, size_t n)
{
	size_t used = 0;
	snprintf(out, n, "all");
	for (uint32_t i = 0; i < npids; i++) {
		char pid[16];
		snprintf(pid, sizeof pid, "%" PRIu32, pids[i]);
		list_add(out, n, &used, ",", pid);
	}
}

int rlog__sys_pids_parse(const char *list, uint32_t *pids, uint32_t max, uint32_t *npids,
			 char *why, size_t n)
{
	uint32_t k = 0;
	if (strcmp(list, "all") == 0) {
		*npids = 0;
		return 0;
	}
	for (const char *p = list;;) {
		size_t len = strcspn(p, ",");
		char buf[16];
		bool ok = len >= 1 && len < sizeof buf;
		for (size_t i = 0; ok && i < len; i++)
			ok = isdigit((unsigned char)p[i]);
		unsigned long v = 0;
		if (ok) {
			memcpy(buf, p, len);
			buf[len] = '\0';
			v = strtoul(buf, NULL, 10);
			ok = v >= 1 && v <= 4194304;
		}
		if (!ok) {
			snprintf(why, n, "--system-pid '%.*s': expected process ids (1 to 4194304) "
					 "separated by commas, or all", (int)(len > 64 ? 64 : len), p);
			return -EINVAL;
		}
		bool dup = false;
		for (uint32_t i = 0; i < k && !dup; i++)
			dup = pids[i] == v;
		if (!dup) {
			if (k == max) {
				snprintf(why, n, "--system-pid: at most %u processes", max);
				return -EINVAL;
			}
			pids[k++] = (uint32_t)v;
		}
		if (p[len] == '\0')
			break;
		p += len + 1;
	}
	*npids = k;
	return 0;
}
