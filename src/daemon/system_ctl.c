/*
 * system_ctl.c - the daemon's hold on the system events (system_ctl.h).
 */
#define _GNU_SOURCE
#include "system_ctl.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "atomics.h"
#include "clock.h"
#include "daemon.h"
#include "futex.h"
#include "system/rundown_rec.h"
#include "system_out.h"
#include "test_hooks.h"

/* A block the engine emitted, waiting for the daemon's loop. */
struct rlog__sys_qblock {
	struct rlog__sys_qblock *next;
	uint64_t base;
	uint32_t cpu, size, records, events;
	uint8_t data[];
};

/* The engine's emit: the block queued, with mu held (or with no reader
 * running).  Past RLOG_SYS_QUEUE_WAKE bytes the daemon's loop is woken
 * as a producer wakes it (src/lib/thread.c: fill_waiting 1 -> 0, then
 * the futex). */
static void enqueue(void *arg, uint32_t cpu, uint64_t base, const void *data, uint32_t size,
		    uint32_t records, uint32_t events)
{
	struct rlog__sys_ctl *c = arg;
	struct rlog__sys_qblock *q = malloc(sizeof *q + size);
	if (q == NULL) {
		/* Counted lost rather than written (stats_now): the
		 * identity holds, the file lacks the block. */
		c->qdropped += events;
		return;
	}
	q->next = NULL;
	q->base = base;
	q->cpu = cpu;
	q->size = size;
	q->records = records;
	q->events = events;
	memcpy(q->data, data, size);
	*c->qtail = q;
	c->qtail = &q->next;
	c->qbytes += size;
	if (c->reading && c->qbytes >= RLOG_SYS_QUEUE_WAKE &&
	    atomic_load_explicit(c->wake, memory_order_seq_cst) &&
	    atomic_exchange_explicit(c->wake, 0, memory_order_seq_cst) == 1)
		rlog__futex_wake(c->wake, 1);
}

static struct rlog__sys_qblock *take_queue(struct rlog__sys_ctl *c)
{
	struct rlog__sys_qblock *q = c->qhead;
	c->qhead = NULL;
	c->qtail = &c->qhead;
	c->qbytes = 0;
	return q;
}

/* The queued blocks to the output (the daemon's loop only). */
static void write_queue(struct rlog__sys_ctl *c, struct rlog__sys_qblock *q)
{
	while (q != NULL) {
		struct rlog__sys_qblock *next = q->next;
		rlog__sys_to_output(c->output, q->cpu, q->base, q->data, q->size, q->records,
				    q->events);
		free(q);
		q = next;
	}
}

static void stats_add(struct rlog__sys_stats *a, const struct rlog__sys_stats *b)
{
	a->written += b->written;
	a->lost += b->lost;
	a->lost_at_stop += b->lost_at_stop;
	a->filtered += b->filtered;
	a->handed_over += b->handed_over;
	a->loss_records += b->loss_records;
	a->clamped += b->clamped;
	a->bytes += b->bytes;
}

/* The open engine's statistics (mu held or no reader), the events of
 * blocks dropped for want of memory moved from written to lost. */
static void stats_now(struct rlog__sys_ctl *c, struct rlog__sys_stats *st)
{
	rlog__sys_get_stats(c->s, st);
	st->written -= c->qdropped;
	st->lost += c->qdropped;
}

/* The statistics of the engines closed (done) plus st, to the region. */
static void publish(struct rlog__sys_ctl *c, const struct rlog__sys_stats *st)
{
	struct rlog__sys_stats sum = c->done;
	stats_add(&sum, st);
	rlog__sys_publish(c->r, NULL, &sum);
}

/* The reader's wait: RLOG_DAEMON_POLL_MS, or the test's
 * RINGLOG_TEST_SYS_POLL_MS (tests/test_system_wake.c: so long that only
 * the rings' watermark wakes it). */
static int reader_timeout_ms(void)
{
	unsigned long t = RLOG__TEST_ENV(RINGLOG_TEST_SYS_POLL_MS);
	return t > 0 && t < 3600000u ? (int)t : RLOG_DAEMON_POLL_MS;
}

/*
 * The reader ahead of the threads it records: SCHED_FIFO at the lowest
 * real-time priority where the daemon may (root, CAP_SYS_NICE or
 * RLIMIT_RTPRIO), else nice -10 where it may, else as the daemon is.  In
 * a context-switch storm the CPUs are never idle and a woken reader of
 * nice 0, or even -10, waited some 50 ms for a CPU each time (the
 * daemon is a session of its own, so its autogroup competes as one,
 * sched(7)), while the rings filled; a real-time reader runs when its
 * ring wakes it (docs/PERFORMANCE.md, "System events").  It cannot keep
 * a CPU: it sleeps in poll(2) until the next quarter of a ring, and once
 * its queue is full it reads nothing until the daemon's loop, which it
 * then leaves the CPU to, has written it.  SCHED_RESET_ON_FORK: nothing
 * it would start inherits it.
 */
static void reader_priority(void)
{
	struct sched_param sp = { .sched_priority = 1 };
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) == 0)
		return;
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), RLOG_SYS_READER_NICE) != 0) {
		/* Not permitted either: the reader runs as the daemon does. */
	}
}

static void *reader_main(void *arg)
{
	struct rlog__sys_ctl *c = arg;
	reader_priority();
	int timeout = reader_timeout_ms();
	struct pollfd *quit = &c->pf[c->npf - 1];
	for (;;) {
		if (poll(c->pf, c->npf, timeout) < 0 && errno != EINTR)
			break;
		if (quit->revents)
			break;
		/* A CPU gone offline hangs up its ring: no longer waited on
		 * (poll(2) skips a negative fd). */
		for (nfds_t i = 0; i + 1 < c->npf; i++)
			if (c->pf[i].revents & (POLLHUP | POLLERR | POLLNVAL))
				c->pf[i].fd = -1;
		pthread_mutex_lock(&c->mu);
		/* A full queue: the rings stay as they are, the kernel counts
		 * what it loses. */
		if (c->qbytes < RLOG_SYS_QUEUE_MAX)
			rlog__sys_poll(c->s);
		pthread_mutex_unlock(&c->mu);
	}
	return NULL;
}

/* Starts the reader of the open engine; without one (no memory, no
 * thread) the daemon's loop reads the rings at each pass, as it can. */
static void start_reader(struct rlog__sys_ctl *c)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	size_t cap = (n > 0 ? (size_t)n : 1) + 1;
	int *fds = calloc(cap, sizeof *fds);
	c->pf = calloc(cap, sizeof *c->pf);
	c->quit_fd = eventfd(0, EFD_CLOEXEC);
	if (fds == NULL || c->pf == NULL || c->quit_fd < 0)
		goto fail;
	size_t nf = rlog__sys_fds(c->s, fds, cap - 1);
	for (size_t i = 0; i < nf; i++)
		c->pf[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
	c->pf[nf] = (struct pollfd){ .fd = c->quit_fd, .events = POLLIN };
	c->npf = (nfds_t)nf + 1;
	/* The daemon's signals (SIGTERM, SIGINT) are for its loop. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	c->reading = true;
	int rc = pthread_create(&c->reader, NULL, reader_main, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		c->reading = false;
		goto fail;
	}
	free(fds);
	return;
fail:
	free(fds);
	free(c->pf);
	c->pf = NULL;
	if (c->quit_fd >= 0)
		close(c->quit_fd);
	c->quit_fd = -1;
}

static void stop_reader(struct rlog__sys_ctl *c)
{
	if (!c->reading)
		return;
	uint64_t one = 1;
	if (write(c->quit_fd, &one, sizeof one) != (ssize_t)sizeof one) {
		/* An eventfd's counter cannot overflow at 1: not reached. */
	}
	pthread_join(c->reader, NULL);
	c->reading = false;
	close(c->quit_fd);
	c->quit_fd = -1;
	free(c->pf);
	c->pf = NULL;
}

static bool same_props(const struct rlog__sys_props *a, const struct rlog__sys_props *b)
{
	return a->flags == b->flags && a->profile_hz == b->profile_hz && a->follow == b->follow &&
	       a->npids == b->npids && memcmp(a->pids, b->pids, a->npids * sizeof a->pids[0]) == 0;
}

/* The scope now; true when it differs from the one c holds (which it
 * then becomes); c->added[0..nadded) are its processes that the old one
 * did not have, c->nremoved the old one's that it has not. */
static bool scope_now(struct rlog__sys_ctl *c, const struct rlog__sys_props *p)
{
	bool whole;
	size_t n = rlog__sys_scope(c->r, p, c->next, c->cap, &whole);
	if (whole == c->whole && n == c->nscope && memcmp(c->next, c->scope, n * sizeof *c->next) == 0)
		return false;
	c->nadded = 0;
	for (size_t i = 0; i < n; i++) {
		bool had = false;
		for (size_t k = 0; k < c->nscope && !had; k++)
			had = c->scope[k] == c->next[i];
		if (!had)
			c->added[c->nadded++] = c->next[i];
	}
	c->nremoved = 0;
	for (size_t k = 0; k < c->nscope; k++) {
		bool has = false;
		for (size_t i = 0; i < n && !has; i++)
			has = c->scope[k] == c->next[i];
		c->nremoved += !has;
	}
	memcpy(c->scope, c->next, n * sizeof *c->next);
	c->nscope = n;
	c->whole = whole;
	return true;
}

/* With --follow, the engine's scope made the attached processes' now
 * (docs/SESSIONS.md, "System events"); true if it changed.  A process
 * that detached or exited leaves it, with its threads and the children
 * followed from it: what the rings hold already is read first, by the
 * scope it happened in, so its events up to now are recorded and none
 * after. */
static bool follow_scope(struct rlog__sys_ctl *c)
{
	if (!c->props.follow || !scope_now(c, &c->props))
		return false;
	pthread_mutex_lock(&c->mu); /* the reader polls c->s */
	if (c->nremoved > 0)
		rlog__sys_poll(c->s);
	rlog__sys_set_pids(c->s, c->scope, c->nscope, c->whole);
	pthread_mutex_unlock(&c->mu);
	return true;
}

/* The rundown of pids[0..npids) (whole: of every process). */
static void rundown_of(struct rlog__sys_ctl *c, const uint32_t *pids, size_t npids, bool whole)
{
	if (c->s == NULL || (!whole && npids == 0))
		return; /* --follow and nobody attached yet: nobody to name */
	uint64_t n = 0, lost = 0;
	int rc = rlog__sys_rundown_flags(whole ? NULL : pids, whole ? 0 : npids, c->props.flags,
					 c->r->hdr->tick_source, rlog__sys_to_output, c->output,
					 &n, &lost, NULL);
	c->rundown_records += n;
	c->rundown_lost += lost;
	store_relaxed(&c->r->ctl->sys_rundown_written, c->rundown_records);
	store_relaxed(&c->r->ctl->sys_rundown_lost, c->rundown_lost);
	struct rlog_shm_header *h = c->r->hdr;
	if (rc < 0 && h->last_error[0] == '\0')
		snprintf(h->last_error, sizeof h->last_error, "system events: the rundown: %s",
			 strerror(-rc));
}

static void rundown(struct rlog__sys_ctl *c)
{
	rundown_of(c, c->scope, c->nscope, c->whole);
}

/* Stops and closes the engine open, its statistics kept in done. */
static void close_engine(struct rlog__sys_ctl *c)
{
	if (c->s == NULL)
		return;
	stop_reader(c);
	rlog__sys_stop(c->s);
	struct rlog__sys_stats st;
	stats_now(c, &st);
	stats_add(&c->done, &st);
	c->qdropped = 0;
	write_queue(c, take_queue(c));
	rlog__sys_close(c->s);
	c->s = NULL;
	rlog__sys_publish(c->r, NULL, &c->done);
	rlog__sys_recording_set(c->r->hdr, 0);
}

/* The engine for selection p (none: closed).  One open already is
 * replaced without a gap (system.h, rlog__sys_begin): the new one is
 * opened and enabled first, the cut taken, the old one closed with its
 * records before the cut, and the new one keeps those from it on. */
static void apply(struct rlog__sys_ctl *c, const struct rlog__sys_props *p)
{
	struct rlog__sys *old = c->s;
	c->props = *p;
	c->known = true;
	struct rlog__sys *s = NULL, *failed = NULL;
	if (p->flags != 0) {
		scope_now(c, p);
		/* The engine's own pid list only with no follow; otherwise
		 * (and for an empty scope, which is not the whole machine) the
		 * scope is set right after the open, before any record is
		 * read.  No lock: a deferred engine emits nothing before
		 * rlog__sys_begin, and with no old engine no reader runs. */
		struct rlog__sys_config cfg = { .flags = p->flags, .profile_hz = p->profile_hz,
						.follow = p->follow, .deferred = old != NULL };
		if (rlog__sys_start(c->r, enqueue, c, &cfg, &s) < 0)
			s = NULL;
		if (s != NULL && rlog__sys_set_pids(s, c->scope, c->nscope, c->whole) < 0) {
			failed = s; /* closed after the old one, its counts kept */
			s = NULL;
		}
	}
	uint64_t cut = rlog__ticks(c->r->hdr->tick_source);
	if (old != NULL && s != NULL) {
		pthread_mutex_lock(&c->mu); /* the old one's reader polls it */
		rlog__sys_end(old, cut);
		rlog__sys_hand_counters(old, s);
		pthread_mutex_unlock(&c->mu);
	}
	close_engine(c); /* the old one, its reader stopped first */
	c->s = failed;
	close_engine(c);
	c->s = s;
	if (s == NULL)
		return;
	rlog__sys_begin(s, cut);
	/* The schemas first: the rundown's records use them. */
	write_queue(c, take_queue(c));
	rlog__sys_recording_set(c->r->hdr, rlog__sys_opened(c->s) & p->flags);
	rundown(c);
	start_reader(c);
}

void rlog__sys_ctl_init(struct rlog__sys_ctl *c, struct rlog__region *r, void *output)
{
	memset(c, 0, sizeof *c);
	c->r = r;
	c->output = output;
	pthread_mutex_init(&c->mu, NULL);
	c->qtail = &c->qhead;
	c->quit_fd = -1;
	c->wake = &r->hdr->fill_waiting;
	c->cap = RLOG_SYS_PIDS_MAX + (size_t)r->slot_count;
	c->scope = calloc(c->cap, sizeof *c->scope);
	c->next = calloc(c->cap, sizeof *c->next);
	c->added = calloc(c->cap, sizeof *c->added);
	if (c->scope == NULL || c->next == NULL || c->added == NULL) {
		free(c->scope);
		free(c->next);
		free(c->added);
		c->scope = c->next = c->added = NULL;
		c->cap = 0;
		/* No system events then; the session goes on without. */
		if (r->hdr->last_error[0] == '\0')
			snprintf(r->hdr->last_error, sizeof r->hdr->last_error,
				 "system events: %s", strerror(ENOMEM));
	}
	rlog__sys_recording_set(r->hdr, 0);
	rlog__sys_ctl_pass(c);
}

/* The reader's queue to the output (with now, the rings read first, by
 * this thread), the statistics published. */
static void read_out(struct rlog__sys_ctl *c, bool now)
{
	struct rlog__sys_stats st;
	pthread_mutex_lock(&c->mu);
	if (now)
		rlog__sys_poll(c->s);
	struct rlog__sys_qblock *q = take_queue(c);
	stats_now(c, &st);
	pthread_mutex_unlock(&c->mu);
	write_queue(c, q);
	publish(c, &st);
}

void rlog__sys_ctl_pass(struct rlog__sys_ctl *c)
{
	struct rlog__sys_props p;
	/* -EAGAIN (an update in the middle) and the like: the selection as
	 * it was, until the next pass reads it whole. */
	if (c->scope != NULL && rlog__sys_props_get(c->r->hdr, &p) == 0 &&
	    (!c->known || !same_props(&p, &c->props)))
		apply(c, &p);
	if (c->s == NULL)
		return;
	/* A process that attaches is named as those of the start were. */
	if (follow_scope(c))
		rundown_of(c, c->added, c->nadded, false);
	/* `ringlog flush` waits for what was recorded before it: the rings
	 * read now rather than at the reader's next wake-up. */
	struct rlog_shm_header *h = c->r->hdr;
	read_out(c, !c->reading || load_acquire(&h->flush_requested) != load_relaxed(&h->flush_done));
}

void rlog__sys_ctl_rundown(struct rlog__sys_ctl *c)
{
	/* (The rundown below names the processes that just attached.) */
	if (c->s != NULL)
		follow_scope(c);
	/* The snapshot holds what the rings hold up to now. */
	if (c->s != NULL)
		read_out(c, true);
	rundown(c);
}

void rlog__sys_ctl_stop(struct rlog__sys_ctl *c)
{
	close_engine(c);
}

void rlog__sys_ctl_close(struct rlog__sys_ctl *c)
{
	close_engine(c);
	free(c->scope);
	free(c->next);
	free(c->added);
	c->scope = c->next = c->added = NULL;
	pthread_mutex_destroy(&c->mu);
}
