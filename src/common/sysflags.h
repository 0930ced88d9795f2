/*
 * sysflags.h - the system-event selection bits.
 *
 * The low 32 bits are the kernel logger's EnableFlags exactly as the ETW
 * seed (EVENT_TRACE_PROPERTIES, EVENT_TRACE_FLAG_*) gives them, so that a
 * hexadecimal selection means the same thing it means there.  Bits 32 and
 * up are ringlog's own, for Linux sources the seed has no flag for.
 * docs/SESSIONS.md maps each flag to its Linux source.
 */
#ifndef RLOG_COMMON_SYSFLAGS_H
#define RLOG_COMMON_SYSFLAGS_H

#include <stdint.h>

/* The seed's values (EVENT_TRACE_FLAG_*). */
#define RLOG_SYS_PROCESS            UINT64_C(0x00000001)
#define RLOG_SYS_THREAD             UINT64_C(0x00000002)
#define RLOG_SYS_IMAGE_LOAD         UINT64_C(0x00000004)
#define RLOG_SYS_PROCESS_COUNTERS   UINT64_C(0x00000008)
#define RLOG_SYS_CSWITCH            UINT64_C(0x00000010)
#define RLOG_SYS_DPC                UINT64_C(0x00000020)
#define RLOG_SYS_INTERRUPT          UINT64_C(0x00000040)
#define RLOG_SYS_SYSTEMCALL         UINT64_C(0x00000080)
#define RLOG_SYS_DISK_IO            UINT64_C(0x00000100)
#define RLOG_SYS_DISK_FILE_IO       UINT64_C(0x00000200)
#define RLOG_SYS_DISK_IO_INIT       UINT64_C(0x00000400)
#define RLOG_SYS_MEMORY_PAGE_FAULTS UINT64_C(0x00001000)
#define RLOG_SYS_MEMORY_HARD_FAULTS UINT64_C(0x00002000)
#define RLOG_SYS_NETWORK_TCPIP      UINT64_C(0x00010000)
#define RLOG_SYS_REGISTRY           UINT64_C(0x00020000)
#define RLOG_SYS_ALPC               UINT64_C(0x00100000)
#define RLOG_SYS_SPLIT_IO           UINT64_C(0x00200000)
#define RLOG_SYS_DRIVER             UINT64_C(0x00800000)
#define RLOG_SYS_PROFILE            UINT64_C(0x01000000)
#define RLOG_SYS_FILE_IO            UINT64_C(0x02000000)
#define RLOG_SYS_FILE_IO_INIT       UINT64_C(0x04000000)

/* ringlog's own, above the seed's range.  Wake-ups are part of the
 * seed's CSWITCH data on Windows (the ReadyThread event); on Linux they
 * are separate tracepoints (sched_waking, sched_wakeup) and far more
 * frequent, so they have their own bit.  Softirqs are the nearest Linux
 * counterpart of the seed's DPC. */
#define RLOG_SYS_WAKEUP             (UINT64_C(1) << 32)
#define RLOG_SYS_SOFTIRQ            (UINT64_C(1) << 33)

#endif
