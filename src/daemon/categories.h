/*
 * categories.h - enabling the category names asked for before any process
 * declared them (categories.c).
 */
#ifndef RLOG_DAEMON_CATEGORIES_H
#define RLOG_DAEMON_CATEGORIES_H

#include <stdint.h>

#include "shm.h"

/* The daemon's memory of what it enabled: per version of the list. */
struct rlog__pending {
	uint32_t seq;   /* enable_names_seq of the list it worked from */
	uint64_t done;  /* categories it enabled for that list */
};

/* Enables every pending name that a process has declared since. */
void rlog__categories_resolve(struct rlog__region *r, struct rlog__pending *p);

#endif
