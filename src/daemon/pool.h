/*
 * pool.h - growing the buffer pool from MinimumBuffers toward
 * MaximumBuffers while producers keep writing (pool.c).
 */
#ifndef RLOG_DAEMON_POOL_H
#define RLOG_DAEMON_POOL_H

#include <stdint.h>

#include "shm.h"

/* Raises *pool (the daemon's own count) to number_of_buffers when
 * producers grew the pool themselves; never lowers it, never past the
 * capacity. */
void rlog__pool_sync(struct rlog__region *r, uint32_t *pool);

/* Grows the pool of *pool buffers (NumberOfBuffers; the daemon's own
 * count) toward MaximumBuffers when producers use more than its
 * high-water mark.  Returns the buffers added. */
uint32_t rlog__pool_grow(struct rlog__region *r, uint32_t *pool);

#endif
