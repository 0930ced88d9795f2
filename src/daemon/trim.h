/*
 * trim.h - giving the pages of free buffers back while the pool is idle
 * (trim.c draws the protocol).
 */
#ifndef RLOG_DAEMON_TRIM_H
#define RLOG_DAEMON_TRIM_H

#include <stdbool.h>
#include <stdint.h>

#include "test_hooks.h"

struct rlog__region;

/* Trimming's state (trim.c). */
struct rlog__trim_state {
	struct rlog__region *r;
	uint64_t *dirty;             /* per buffer, freed since its pages were last removed
	                                (free_words words) */
	bool failed;                 /* madvise refused; no more trimming */
	uint64_t buffers_trimmed;    /* buffers whose pages were removed */
};

/* Returns 0 or -ENOMEM. */
int rlog__trim_init(struct rlog__trim_state *t, struct rlog__region *r);
void rlog__trim_free(struct rlog__trim_state *t);

/* Nothing drained for this long: the pool is idle, trim it. */
#define RLOG_TRIM_IDLE_MS 1000
/* Free buffers the daemon holds at once while it removes their pages. */
#define RLOG_TRIM_CHUNK 8

/* Buffer idx was freed after being written: its pages may be resident. */
void rlog__trim_dirty(struct rlog__trim_state *t, uint32_t idx);

/* Are there buffers to trim? */
bool rlog__trim_pending(const struct rlog__trim_state *t);

/* Removes the pages of every dirty buffer that is free now.  Returns the
 * number of buffers trimmed. */
uint32_t rlog__trim(struct rlog__trim_state *t);

/* Test hook (not API; tests/test_trim.c): when set, called with buffers
 * first .. last - 1 held (their free bits cleared by the daemon), just
 * before their pages are removed. */
#if RLOG_TEST_HOOKS
extern void (*_Atomic rlog__trim_test_hook)(uint32_t first, uint32_t last);
#endif

#endif
