/*
 * openpath.h - the path of an open, read where the kernel has it.
 *
 * syscalls:sys_enter_openat records the file name as a pointer into the
 * caller's memory (docs/DESIGN.md, "System events").  A small eBPF
 * program attached to that tracepoint's perf events reads the string at
 * the pointer while the call is entering (bpf_probe_read_user_str) and
 * writes the open's arguments and the path as a BPF output sample into
 * the CPU's ring (bpf_perf_event_output), in place of the tracepoint's
 * own sample (the program returns 0).  It is built here, instruction by
 * instruction, against the tracepoint's format: no compiler, no libbpf.
 * Without eBPF (an old kernel, no CAP_BPF, a locked-down kernel) the
 * tracepoint's samples stay and the path is empty.
 */
#ifndef RLOG_SYSTEM_OPENPATH_H
#define RLOG_SYSTEM_OPENPATH_H

#include "system/tracefs.h"

/* The bytes of a path the program copies (the NUL included). */
#define RLOG_OPENPATH_MAX 256

/* The layout of the program's output, as a tracepoint format: dfd,
 * flags, mode (8 bytes each), then filename (char[RLOG_OPENPATH_MAX]). */
void rlog__openpath_format(struct rlog__tp_format *f);

/* A BPF_MAP_TYPE_PERF_EVENT_ARRAY of ncpu entries.  Returns its fd or
 * -errno. */
int rlog__openpath_map(unsigned ncpu);

/* Entry cpu of map: the BPF output perf event out_fd.  0 or -errno. */
int rlog__openpath_map_set(int map, unsigned cpu, int out_fd);

/* Loads the program for sys_enter_openat's format tp, writing to map.
 * Returns its fd, or -errno (with the verifier's first line in why). */
int rlog__openpath_load(const struct rlog__tp_format *tp, int map, char *why, size_t why_size);

#endif
