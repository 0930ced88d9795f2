/*
 * futex.h - wait and wake on a 32-bit word in shared memory (futex(2)).
 * The words live in the session region, so the process-shared (not
 * FUTEX_PRIVATE_FLAG) operations are used.
 */
#ifndef RLOG_COMMON_FUTEX_H
#define RLOG_COMMON_FUTEX_H

#include <stdatomic.h>
#include <stdint.h>

/* Sleep while *word == expected, at most timeout_ms (< 0: no limit).
 * Returns 0 when woken or the word differed, -ETIMEDOUT, or -EINTR. */
int rlog__futex_wait(_Atomic uint32_t *word, uint32_t expected, int timeout_ms);

/* Wake up to n waiters on word.  Returns the number woken or -errno. */
int rlog__futex_wake(_Atomic uint32_t *word, int n);

#endif
