/*
 * numbered.h - numbered events: every event once.
 *
 * A count of events hides one event written twice and another lost.  Here
 * each writer (a thread or a process, numbered 0 .. NUM_MAX_WRITERS - 1)
 * writes events of ID NUM_ID whose 16-byte payload is {writer, seq}, seq
 * counting 1, 2, 3, ... per writer, and sets bit seq of its own bitmap when
 * the write returned 1.  The checker then reads one or more log files (a
 * session's file and its recovery, a run of newfile files, snapshots)
 * through the reader library and counts, over all of them together:
 *
 *   present     events whose write returned 1, found exactly once
 *   duplicates  extra copies of an event found more than once
 *   extras      events found whose write did not return 1 (or whose
 *               writer or seq was never written)
 *   missing     events whose write returned 1, found in no file
 *
 * and the DATA_LOSS records' events by cause (num_check_begin,
 * num_check_reader for each reader, num_check_end: any readers, a live
 * stream's deliveries among them).  A test asserts duplicates
 * == 0, extras == 0 and missing == what the files say was lost after it was
 * written (overwritten, a log write that failed), and present + the losses
 * the producers saw == what they wrote: the accounting identity of
 * docs/DESIGN.md, event by event.
 *
 * The set lives in a MAP_SHARED mapping, so that forked children write
 * their bitmaps where the parent reads them.
 */
#ifndef RLOG_TEST_NUMBERED_H
#define RLOG_TEST_NUMBERED_H

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ringlog.h"
#include "region_abi.h"
#include "ringlog/reader.h"
#include "tap.h"

#define NUM_ID 1031 /* an application ID no other helper uses */
#define NUM_MAX_WRITERS 16

/* One writer's record of its writes.  Only its own thread writes it. */
struct num_writer {
	uint64_t seq;           /* attempts so far: the last seq used */
	uint64_t returned_one;  /* writes that returned 1 */
	uint64_t returned_lost; /* -ENOBUFS or -EBUSY: lost and counted */
	uint64_t returned_off;  /* 0: not recorded (no session, disabled) */
	uint64_t returned_other;
	uint64_t cap;           /* seqs the bitmap holds */
	_Atomic uint64_t *ok;   /* bit seq set: the write of seq returned 1 */
};

struct num_set {
	unsigned writers;
	struct num_writer w[NUM_MAX_WRITERS];
};

/* A set of writers writers, each able to write up to cap events, in shared
 * memory (lazily backed: a large cap costs only what is written). */
static inline struct num_set *num_new(unsigned writers, uint64_t cap)
{
	if (writers > NUM_MAX_WRITERS)
		writers = NUM_MAX_WRITERS;
	struct num_set *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED) {
		printf("Bail out! num_new: mmap failed\n");
		exit(1);
	}
	memset(s, 0, sizeof *s);
	s->writers = writers;
	size_t bytes = (size_t)((cap + 64) / 64) * 8;
	for (unsigned i = 0; i < writers; i++) {
		void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			       -1, 0);
		if (m == MAP_FAILED) {
			printf("Bail out! num_new: mmap of %zu bytes failed\n", bytes);
			exit(1);
		}
		s->w[i].ok = m;
		s->w[i].cap = cap;
	}
	return s;
}

/* Records what the write of seq returned. */
static inline int num_note(struct num_writer *w, uint64_t seq, int rc)
{
	if (rc == 1) {
		w->returned_one++;
		atomic_fetch_or_explicit(&w->ok[seq / 64], 1ull << (seq % 64), memory_order_relaxed);
	} else if (rc == -ENOBUFS || rc == -EBUSY) {
		w->returned_lost++;
	} else if (rc == 0) {
		w->returned_off++;
	} else {
		w->returned_other++;
	}
	return rc;
}

/* Writer w writes its next event; returns what rlog_write returned, or 0
 * without writing once the bitmap is full. */
static inline int num_write(struct num_set *s, unsigned w)
{
	struct num_writer *nw = &s->w[w];
	if (nw->seq + 1 >= nw->cap)
		return 0;
	uint64_t seq = ++nw->seq;
	uint64_t v[2] = { w, seq };
	return num_note(nw, seq, rlog_write(NUM_ID, v, sizeof v));
}

/* Totals over all writers. */
static inline uint64_t num_written(const struct num_set *s)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < s->writers; i++)
		n += s->w[i].returned_one;
	return n;
}

static inline uint64_t num_lost(const struct num_set *s)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < s->writers; i++)
		n += s->w[i].returned_lost;
	return n;
}

static inline uint64_t num_attempts(const struct num_set *s)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < s->writers; i++)
		n += s->w[i].seq;
	return n;
}

/* What the files hold. */
struct num_check {
	int open_err;       /* the first rlog_reader_open() error, or 0 */
	size_t damage;      /* damaged regions over all files */
	uint64_t present, duplicates, extras, missing;
	uint64_t other_events; /* application events of other IDs */
	uint64_t loss_events;  /* DATA_LOSS events, all causes */
	uint64_t loss_by_cause[16];
};

/* The seen bitmaps of a check in progress (num_check_begin .. _end). */
struct num_seen {
	_Atomic uint64_t *bits[NUM_MAX_WRITERS];
	unsigned reported;
};

static inline void num_check_begin(const struct num_set *s, struct num_seen *sn,
				   struct num_check *c)
{
	memset(c, 0, sizeof *c);
	sn->reported = 0;
	for (unsigned i = 0; i < s->writers; i++) {
		sn->bits[i] = calloc((size_t)((s->w[i].cap + 64) / 64), 8);
		if (sn->bits[i] == NULL) {
			printf("Bail out! num_check_files: out of memory\n");
			exit(1);
		}
	}
}

/* Every event of reader rd (named what in diagnostics), into c. */
static inline void num_check_reader(const struct num_set *s, struct num_seen *sn,
				    struct rlog_reader *rd, const char *what, struct num_check *c)
{
	struct rlog_event ev;
	while (rlog_reader_next(rd, &ev) == 1) {
		if (ev.from_daemon && !ev.flagged && ev.id == RLOG_ID_DATA_LOSS &&
		    ev.length >= sizeof(struct rlog_data_loss)) {
			struct rlog_data_loss dl;
			memcpy(&dl, ev.payload, sizeof dl);
			c->loss_events += dl.events;
			c->loss_by_cause[dl.cause < 16 ? dl.cause : 0] += dl.events;
			continue;
		}
		if (ev.from_daemon || ev.flagged)
			continue;
		if (ev.id != NUM_ID || ev.length != 16) {
			if (ev.id >= 1024)
				c->other_events++;
			continue;
		}
		uint64_t v[2];
		memcpy(v, ev.payload, sizeof v);
		uint64_t w = v[0], seq = v[1];
		if (w >= s->writers || seq == 0 || seq >= s->w[w].cap ||
		    !(atomic_load_explicit(&s->w[w].ok[seq / 64], memory_order_relaxed) &
		      (1ull << (seq % 64)))) {
			c->extras++;
			if (sn->reported++ < 8)
				diag("extra event: writer %" PRIu64 " seq %" PRIu64 " in %s", w, seq,
				     what);
			continue;
		}
		uint64_t bit = 1ull << (seq % 64);
		if (atomic_fetch_or_explicit(&sn->bits[w][seq / 64], bit, memory_order_relaxed) &
		    bit) {
			c->duplicates++;
			if (sn->reported++ < 8)
				diag("duplicate event: writer %" PRIu64 " seq %" PRIu64
				     " (again in %s)", w, seq, what);
		} else {
			c->present++;
		}
	}
	c->damage += rlog_reader_damage_count(rd);
}

/* The events written that were seen nowhere. */
static inline void num_check_end(const struct num_set *s, struct num_seen *sn,
				 struct num_check *c)
{
	for (unsigned i = 0; i < s->writers; i++) {
		uint64_t words = (s->w[i].cap + 64) / 64;
		for (uint64_t k = 0; k < words; k++) {
			uint64_t miss = atomic_load_explicit(&s->w[i].ok[k], memory_order_relaxed) &
					~atomic_load_explicit(&sn->bits[i][k], memory_order_relaxed);
			if (miss == 0)
				continue;
			c->missing += (uint64_t)__builtin_popcountll(miss); /* GCC/Clang builtin: a
									      * popcount C11 lacks */
			if (sn->reported++ < 8)
				diag("missing event: writer %u seq %" PRIu64 " (and maybe more in "
				     "that word)", i, k * 64 + (uint64_t)__builtin_ctzll(miss));
		}
		free(sn->bits[i]);
	}
}

static inline void num_check_files(const struct num_set *s, const char *const *paths,
				   size_t npaths, struct num_check *c)
{
	struct num_seen sn;
	num_check_begin(s, &sn, c);
	for (size_t f = 0; f < npaths; f++) {
		struct rlog_reader *rd;
		int rc = rlog_reader_open(paths[f], &rd);
		if (rc < 0) {
			if (c->open_err == 0)
				c->open_err = rc;
			diag("%s: %s", paths[f], rlog_reader_strerror(rc));
			continue;
		}
		num_check_reader(s, &sn, rd, paths[f], c);
		rlog_reader_close(rd);
	}
	num_check_end(s, &sn, c);
}

/* One file. */
static inline void num_check_file(const struct num_set *s, const char *path, struct num_check *c)
{
	num_check_files(s, &path, 1, c);
}

/* The usual assertions: nothing twice, nothing extra, and every event
 * returned 1 is present or counted lost afterwards (lost_after: the
 * losses the files count for events whose write had returned 1, e.g. the
 * overwritten ones; 0 in discard mode, where a loss is a write returning
 * -ENOBUFS). */
static inline void num_assert_once(const struct num_set *s, const struct num_check *c,
				   uint64_t lost_after, const char *what)
{
	ok(c->duplicates == 0, "%s: no event twice (%" PRIu64 " duplicates)", what, c->duplicates);
	ok(c->extras == 0, "%s: no extra events (%" PRIu64 ")", what, c->extras);
	ok(c->missing == lost_after,
	   "%s: events written and not in the files (%" PRIu64 ") = losses counted after "
	   "writing (%" PRIu64 ")", what, c->missing, lost_after);
	ok(c->present + c->missing == num_written(s),
	   "%s: present %" PRIu64 " + missing %" PRIu64 " = returned 1 %" PRIu64, what,
	   c->present, c->missing, num_written(s));
}

#endif
