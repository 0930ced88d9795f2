/*
 * openpath.h - the path of an open, read where the kernel has it.
 *
 * syscalls:sys_enter_openat records the file name as a pointer into the
 * caller's memory (docs/DESIGN.md, "System events").  A small eBPF
 * program attached to that tracepoint reads the string at the pointer
 * while the call is entering (bpf_probe_read_user_str) and writes the
 * path alone as a BPF output sample into the CPU's ring
 * (bpf_perf_event_output), just before the tracepoint's own sample on
 * the same CPU, which it keeps (the program returns 1: the kernel runs
 * one program list per tracepoint, and a 0 would take the sample from
 * every perf user of it).  The engine pairs the path with the next
 * sys_enter_openat sample of the same thread on that CPU.  It is built
 * here, instruction by instruction, against the tracepoint's format: no
 * compiler, no libbpf.  Without eBPF (an old kernel, no CAP_BPF, a
 * locked-down kernel), or when an output is lost, the tracepoint's
 * sample is still there and the path is empty.
 */
#ifndef RLOG_SYSTEM_OPENPATH_H
#define RLOG_SYSTEM_OPENPATH_H

#include "system/tracefs.h"

/* The bytes of a path the program copies (the NUL included). */
#define RLOG_OPENPATH_MAX 256

/* The program's output: the path, NUL-terminated, in
 * RLOG_OPENPATH_MAX bytes (the kernel pads the raw data to 8). */

/* A BPF_MAP_TYPE_PERF_EVENT_ARRAY of ncpu entries.  Returns its fd or
 * -errno. */
int rlog__openpath_map(unsigned ncpu);

/* Entry cpu of map: the BPF output perf event out_fd.  0 or -errno. */
int rlog__openpath_map_set(int map, unsigned cpu, int out_fd);

/* Loads the program for sys_enter_openat's format tp, writing to map.
 * Returns its fd, or -errno (with the verifier's first line in why). */
int rlog__openpath_load(const struct rlog__tp_format *tp, int map, char *why, size_t why_size);

#endif
