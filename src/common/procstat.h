/*
 * procstat.h - what /proc/PID/stat says about a process: its state letter
 * and its start time.  Producers record their own start time in their
 * process entry; the daemon compares it to tell a live process from a dead
 * one whose pid was reused, and reads the state to see zombies, which
 * kill(pid, 0) reports as alive.
 */
#ifndef RLOG_COMMON_PROCSTAT_H
#define RLOG_COMMON_PROCSTAT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Reads /proc/PID/stat (pid 0: /proc/self/stat).  On success stores the
 * state letter (R, S, D, Z, X, T, ...) in *state and field 22, the start
 * time in clock ticks since boot, in *start_time, and returns 0.  Returns
 * -ENOENT if there is no such process, or another -errno (no /proc, a line
 * it cannot parse: -EBADMSG).  Async-signal-safe: open, read and close
 * only, no allocation, no stdio.
 */
int rlog__procstat_read(pid_t pid, char *state, uint64_t *start_time);

/*
 * True if process pid is gone: no such process, a zombie (Z) or dying (X),
 * or a process whose start time differs from start_time (a reused pid;
 * start_time 0 skips that check).  Without /proc, falls back to
 * kill(pid, 0), which cannot see zombies.  pid <= 0 is never dead (an
 * entry being claimed).
 */
bool rlog__process_dead(pid_t pid, uint64_t start_time);

/*
 * The value of a "Key:   N kB" line of /proc/PID/status (VmRSS, RssAnon,
 * RssShmem, ...), in kB; UINT64_MAX if the process or the line is missing.
 * For the memory figures of `ringlog bench` and the tests; uses stdio.
 */
uint64_t rlog__proc_status_kb(pid_t pid, const char *key);

#endif
