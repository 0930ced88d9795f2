/*
 * sysflags_names.h - the names of the system-event selection bits
 * (src/common/sysflags.h) and the parser of a --system LIST.
 *
 * A LIST is comma-separated items, each a name of the table below (or
 * "all", or "none") or a hexadecimal number "0x..." read as the kernel
 * logger's EnableFlags of the ETW seed: `--system 0x13` is process,
 * thread and cswitch, as EVENT_TRACE_FLAG_PROCESS | THREAD | CSWITCH.
 *
 *   name              bit                 the seed's flag
 *   process           0x00000001          EVENT_TRACE_FLAG_PROCESS
 *   thread            0x00000002          EVENT_TRACE_FLAG_THREAD
 *   image-load        0x00000004          EVENT_TRACE_FLAG_IMAGE_LOAD
 *   process-counters  0x00000008          EVENT_TRACE_FLAG_PROCESS_COUNTERS
 *   cswitch           0x00000010          EVENT_TRACE_FLAG_CSWITCH
 *   softirq           0x00000020          EVENT_TRACE_FLAG_DPC
 *   interrupt         0x00000040          EVENT_TRACE_FLAG_INTERRUPT
 *   syscall           0x00000080          EVENT_TRACE_FLAG_SYSTEMCALL
 *   disk-io           0x00000100          EVENT_TRACE_FLAG_DISK_IO
 *   page-faults       0x00001000          EVENT_TRACE_FLAG_MEMORY_PAGE_FAULTS
 *   hard-faults       0x00002000          EVENT_TRACE_FLAG_MEMORY_HARD_FAULTS
 *   network           0x00010000          EVENT_TRACE_FLAG_NETWORK_TCPIP
 *   profile           0x01000000          EVENT_TRACE_FLAG_PROFILE
 *   file-io           0x02000000          EVENT_TRACE_FLAG_FILE_IO
 *   wakeup            0x100000000         (ringlog's own)
 *
 * The seed's other flags (REGISTRY, ALPC, DRIVER, SPLIT_IO, and the
 * *_INIT and DISK_FILE_IO flags whose events are part of another flag's
 * on Linux) are refused with the reason: docs/SESSIONS.md, "System
 * events", has the same table with each flag's Linux source.
 */
#ifndef RLOG_COMMON_SYSFLAGS_NAMES_H
#define RLOG_COMMON_SYSFLAGS_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "sysflags.h"

/* One selectable flag. */
struct rlog__sys_flag_def {
	const char *name;   /* its --system name: "cswitch" */
	uint64_t bit;       /* RLOG_SYS_* */
	const char *seed;   /* "EVENT_TRACE_FLAG_CSWITCH", or NULL for ringlog's own */
};

/* Every selectable flag, in bit order (n receives the count). */
const struct rlog__sys_flag_def *rlog__sys_flag_defs(size_t *n);

/* Every selectable bit: what "all" selects. */
uint64_t rlog__sys_all(void);

/*
 * Parses a --system LIST into *flags.  Returns 0, or -EINVAL with one
 * line in why (n bytes) that names the bad item: an unknown name, a
 * number without 0x, a seed flag Linux has no counterpart for (and why),
 * a bit that is no flag, an empty item.  The line starts with
 * "--system", for "ringlog: CMD: " to precede.
 */
int rlog__sys_parse(const char *list, uint64_t *flags, char *why, size_t n);

/* Writes the names of flags' bits, comma-separated, in bit order ("none"
 * for 0; a bit without a name as its 0x value). */
void rlog__sys_names(uint64_t flags, char *out, size_t n);

/*
 * Parses a --system-pid LIST: comma-separated process ids, 1 to
 * 4194304 (the kernel's largest pid_max), at most max of them
 * (duplicates kept once), or "all" for none (the whole machine).
 * Returns 0 with *npids set, or -EINVAL with why, as rlog__sys_parse.
 */
int rlog__sys_pids_parse(const char *list, uint32_t *pids, uint32_t max, uint32_t *npids,
			 char *why, size_t n);

/* Writes a pid list as --system-pid takes it: "12,345", or "all" for
 * none (the whole machine). */
void rlog__sys_pids_text(const uint32_t *pids, uint32_t npids, char *out, size_t n);

#endif
