/*
 * drain_workers.c - the daemon's extra drain threads (drain_workers.h).
 */
#define _GNU_SOURCE
#include "drain_workers.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "drain.h"
#include "test_hooks.h"

/* Takes jobs until none is left; returns how many it did. */
static uint32_t take_jobs(struct rlog__drain_workers *w)
{
	uint32_t done = 0;
	for (;;) {
		uint32_t k = atomic_fetch_add_explicit(&w->next, 1, memory_order_relaxed);
		if (k >= w->njobs)
			return done;
		struct rlog__walk_job *j = &w->jobs[k];
		j->cursor = j->base;
		j->count = j->bytes = 0;
		j->size = rlog__drain_plain(j->data, 0, j->wo, &j->cursor, &j->count, &j->bytes);
		/* The block's checksum over those bytes, which the daemon's
		 * thread combines with its header's (rlog__block_header_make_pre). */
		j->crc = rlog__crc32c(0, j->data, j->size);
		done++;
	}
}

static void *worker_main(void *arg)
{
	struct rlog__drain_workers *w = arg;
	uint64_t seen = 0;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		/* A batch is joined only while it is open: one that woke
		 * late must not read the next pass's jobs as they are made. */
		while (!w->quit && !(w->open && w->gen != seen))
			pthread_cond_wait(&w->go, &w->mu);
		if (w->quit)
			break;
		seen = w->gen;
		w->active++;
		pthread_mutex_unlock(&w->mu);
		uint32_t done = take_jobs(w);
		pthread_mutex_lock(&w->mu);
		w->finished += done;
		w->active--;
		pthread_cond_signal(&w->done_cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

int rlog__drain_workers_start(struct rlog__drain_workers *w, uint32_t threads,
			      uint32_t buffer_count)
{
	memset(w, 0, sizeof *w);
	if (threads <= 1)
		return 0;
	if (threads > RLOG__DRAIN_THREADS_MAX)
		return -EINVAL;
	w->jobs = calloc(buffer_count, sizeof *w->jobs);
	w->by_buffer = calloc(buffer_count, sizeof *w->by_buffer);
	w->tids = calloc(threads - 1, sizeof *w->tids);
	if (!w->jobs || !w->by_buffer || !w->tids) {
		rlog__drain_workers_stop(w);
		return -ENOMEM;
	}
	w->cap = w->buffer_count = buffer_count;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->go, NULL);
	pthread_cond_init(&w->done_cv, NULL);
	/* Signals stay the daemon's thread's (rlog__daemon_signals). */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	/* tests/test_drain_threads.c: the Kth extra thread and those after
	 * it cannot be created. */
	unsigned long fail_at = RLOG__TEST_ENV(RINGLOG_TEST_DRAIN_THREAD_FAIL);
	for (uint32_t i = 0; i + 1 < threads; i++) {
		int rc = RLOG_TEST_HOOKS && fail_at && i + 1 >= fail_at
				 ? EAGAIN
				 : pthread_create(&w->tids[i], NULL, worker_main, w);
		if (rc != 0) {
			/* The daemon drains with those it got (its own at
			 * least); the caller says so. */
			w->create_err = rc;
			break;
		}
		w->n++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (w->n == 0) {
		int rc = w->create_err;
		rlog__drain_workers_stop(w);
		w->create_err = rc;
	}
	return 0;
}

void rlog__drain_workers_stop(struct rlog__drain_workers *w)
{
	if (w->n > 0) {
		pthread_mutex_lock(&w->mu);
		w->quit = true;
		pthread_cond_broadcast(&w->go);
		pthread_mutex_unlock(&w->mu);
		for (uint32_t i = 0; i < w->n; i++)
			pthread_join(w->tids[i], NULL);
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->go);
		pthread_cond_destroy(&w->done_cv);
	}
	free(w->jobs);
	free(w->by_buffer);
	free(w->tids);
	memset(w, 0, sizeof *w);
}

void rlog__drain_workers_run(struct rlog__drain_workers *w)
{
	if (w->njobs == 0)
		return;
	/* The mutex orders the jobs' inputs (and the region bytes the
	 * daemon's thread acquired) before the workers' reads, and their
	 * results before the daemon's. */
	pthread_mutex_lock(&w->mu);
	atomic_store_explicit(&w->next, 0, memory_order_relaxed);
	w->finished = 0;
	w->gen++;
	w->open = true;
	pthread_cond_broadcast(&w->go);
	pthread_mutex_unlock(&w->mu);
	uint32_t done = take_jobs(w);
	pthread_mutex_lock(&w->mu);
	w->finished += done;
	while (w->finished < w->njobs || w->active > 0)
		pthread_cond_wait(&w->done_cv, &w->mu);
	w->open = false;
	pthread_mutex_unlock(&w->mu);
}

void rlog__drain_workers_clear(struct rlog__drain_workers *w)
{
	for (uint32_t k = 0; k < w->njobs; k++)
		w->by_buffer[w->jobs[k].idx] = 0;
	w->njobs = 0;
}

