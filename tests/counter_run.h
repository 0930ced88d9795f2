/*
 * counter_run.h - helpers of the counter tests: waiting for the daemon's
 * sampling passes through the session's region, and the COUNTER records of
 * a log file as the reader gives them.
 *
 *   struct rlog__region r;
 *   cr_open(name, &r);
 *   ... change a counter ...
 *   cr_passes(&r, 2);              // a full pass read the change
 *   ...
 *   struct cr_list l;
 *   cr_read(path, &l);             // every COUNTER record, in reader order
 *   (or cr_stop_read: stop the session, then cr_read its file)
 *
 * cr_passes follows docs/FORMAT.md, "Application counters": after a full
 * barrier (a seq_cst atomic change of the counter), a pass that starts once
 * counter_samples was read as S reads the counters as they are now; pass
 * S + 2 is such a pass.  No time is
 * asserted: the wait only gives up (Bail out!) after 60 s.
 */
#ifndef RLOG_TESTS_COUNTER_RUN_H
#define RLOG_TESTS_COUNTER_RUN_H

#define _GNU_SOURCE /* MAP_ANONYMOUS: include this header first */

#include <stdatomic.h>
#include <sys/mman.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "ringlog/reader.h"
#include "shm.h"

static inline uint64_t cr_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Copies tag's session name and file path (h_session and h_path return
 * one static buffer each) into name[64] and path[256]. */
static inline void cr_names(const char *tag, char name[64], char path[256])
{
	snprintf(name, 64, "%s", h_session(tag));
	snprintf(path, 256, "%s", h_path(tag));
}

/* Maps session name's region (bails out if it cannot). */
static inline void cr_open(const char *name, struct rlog__region *r)
{
	int err = rlog__region_open(name, r);
	if (err < 0) {
		printf("Bail out! cannot open session %s: %d\n", name, err);
		exit(1);
	}
}

static inline uint64_t cr_samples(const struct rlog__region *r)
{
	return atomic_load(&r->hdr->stats.counter_samples);
}

/* Waits until k more sampling passes have ended.  The change to be read
 * must have been made with a seq_cst atomic (a full barrier: the tests'
 * adds and stores are; atomic_thread_fence is refused by GCC's TSan). */
static inline void cr_passes(const struct rlog__region *r, uint64_t k)
{
	uint64_t s = cr_samples(r), give_up = cr_now_ns() + UINT64_C(60000000000);
	while (cr_samples(r) < s + k) {
		if (cr_now_ns() > give_up) {
			printf("Bail out! the daemon made no sampling pass in 60 s\n");
			exit(1);
		}
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
}

/* One COUNTER record, as rlog_event_counter() decodes it. */
struct cr_rec {
	uint32_t pid, tid;
	int64_t time_ns;
	struct rlog_counter c;
	char name[64];          /* c.name copied ("" if none) */
};

struct cr_list {
	struct cr_rec *v;
	size_t n;
	size_t names;           /* COUNTER_NAME records */
	size_t damage;
	int open_err;
};

/* Every COUNTER record of the file at path, in the reader's order. */
static inline void cr_read(const char *path, struct cr_list *l)
{
	memset(l, 0, sizeof *l);
	struct rlog_reader *rd;
	l->open_err = rlog_reader_open(path, &rd);
	if (l->open_err < 0)
		return;
	struct rlog_event ev;
	size_t cap = 0;
	while (rlog_reader_next(rd, &ev) == 1) {
		if (ev.flagged)
			continue;
		if (ev.id == RLOG_ID_COUNTER_NAME) {
			l->names++;
			continue;
		}
		if (ev.id != RLOG_ID_COUNTER)
			continue;
		if (l->n == cap) {
			cap = cap ? 2 * cap : 64;
			l->v = realloc(l->v, cap * sizeof *l->v);
			if (l->v == NULL)
				abort();
		}
		struct cr_rec *c = &l->v[l->n++];
		memset(c, 0, sizeof *c);
		c->pid = ev.pid;
		c->tid = ev.tid;
		c->time_ns = ev.time_ns;
		if (rlog_event_counter(rd, &ev, &c->c) == 0 && c->c.name)
			snprintf(c->name, sizeof c->name, "%s", c->c.name);
		c->c.name = NULL; /* the reader's, gone at close */
	}
	l->damage = rlog_reader_damage_count(rd);
	rlog_reader_close(rd);
}

/* The records of counter name of process pid, into out (at most max);
 * returns how many there are. */
static inline size_t cr_of(const struct cr_list *l, uint32_t pid, const char *name,
			   const struct cr_rec **out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].pid == pid && strcmp(l->v[i].name, name) == 0) {
			if (n < max)
				out[n] = &l->v[i];
			n++;
		}
	return n;
}

/* The sum of the deltas of counter name of process pid. */
static inline uint64_t cr_sum(const struct cr_list *l, uint32_t pid, const char *name)
{
	uint64_t s = 0;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].pid == pid && strcmp(l->v[i].name, name) == 0)
			s += l->v[i].c.delta;
	return s;
}

static inline void cr_free(struct cr_list *l)
{
	free(l->v);
	memset(l, 0, sizeof *l);
}

/* Bails out if `ringlog start` (its run in *r) failed. */
static inline void cr_started(const struct h_run *r, const char *name)
{
	if (r->status != 0) {
		printf("Bail out! ringlog start %s failed (%d): %s\n", name, r->status, r->err);
		exit(1);
	}
}

/* Stops session name (stop's run in *stop; exit status 0 asserted), then
 * reads the COUNTER records of its file at path into *l (opened without
 * damage, asserted). */
static inline void cr_stop_read(const char *name, const char *path, struct h_run *stop,
				struct cr_list *l)
{
	h_ringlog(stop, "stop", name, NULL);
	ASSERT_EQ(stop->status, 0);
	cr_read(path, l);
	ASSERT_EQ(l->open_err, 0);
	ASSERT_EQ_U64(l->damage, 0);
}

/* Touches n fresh pages of anonymous memory (n minor page faults), then
 * gives them back. */
static inline void cr_touch_pages(int n)
{
	long pg = sysconf(_SC_PAGESIZE);
	volatile uint8_t *m = mmap(NULL, (size_t)pg * (size_t)n, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		printf("Bail out! mmap failed\n");
		exit(1);
	}
	for (int i = 0; i < n; i++)
		m[(size_t)i * (size_t)pg] = 1; /* one fault each: fresh, private, anonymous */
	munmap((void *)m, (size_t)pg * (size_t)n);
}

#endif
