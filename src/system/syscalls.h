/*
 * syscalls.h - system call names (syscalls.c).
 */
#ifndef RLOG_SYSTEM_SYSCALLS_H
#define RLOG_SYSTEM_SYSCALLS_H

#include <stdint.h>

/* The name of system call nr of this architecture, or NULL. */
const char *rlog__syscall_name(int64_t nr);

#endif
