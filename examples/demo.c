/*
 * demo.c - a multi-threaded workload, traced with ringlog.
 *
 * A dispatcher thread hands jobs to four workers through a queue.  Each
 * worker does simulated work (hashing a buffer, then a short sleep that
 * stands in for I/O) and records what it does.  The event types are
 * declared once (<ringlog/event.h>), so the trace names them and their
 * fields by itself:
 *
 *   1024 job          span: begins and ends around each job     u32 job, u32 worker   cat 0
 *   1026 hash         the value a job computed                  u64 value             cat 1
 *   1028 queue.depth  counter: the queue's depth after each     u32 depth             cat 2
 *                     put and get
 * and two events without a schema, written with the raw API:
 *   1027 (flagged)    flag 1 enqueue, 2 dequeue; payload u32 job
 *   RAW_U32 (20)      u32 jobs dispatched so far, every 100 jobs
 * The threads are named "dispatcher" and "worker-0" .. "worker-3".
 *
 * Run it inside a session:
 *   ringlog start demo -o demo.rlog
 *   RINGLOG_SESSION=demo ringlog-demo [JOBS]
 *   ringlog stop demo && ringlog dump demo.rlog
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ringlog.h>
#include <ringlog/event.h>

#define WORKERS 4
#define QUEUE_MAX 8

#define JOB_FIELDS(F) F(U32, job) F(U32, worker)
RLOG_DEFINE_SPAN(job_span, 1024, "job", 0, JOB_FIELDS)

#define HASH_FIELDS(F) F(U64, value)
RLOG_DEFINE_EVENT(hash, 1026, "hash", 1, HASH_FIELDS) /* category 1: values; the mask can turn it off */

#define DEPTH_FIELDS(F) F(U32, depth)
RLOG_DEFINE_COUNTER(queue_depth, 1028, "queue.depth", 2, DEPTH_FIELDS)

enum { QUEUE = 1027, ENQUEUE = 1, DEQUEUE = 2 };

static struct {
	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full;
	uint32_t jobs[QUEUE_MAX];
	uint32_t head, count;
	int closed;
} q = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, { 0 }, 0, 0, 0 };

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void queue_put(uint32_t job)
{
	pthread_mutex_lock(&q.lock);
	while (q.count == QUEUE_MAX)
		pthread_cond_wait(&q.not_full, &q.lock);
	q.jobs[(q.head + q.count) % QUEUE_MAX] = job;
	uint32_t depth = ++q.count;
	pthread_cond_signal(&q.not_empty);
	pthread_mutex_unlock(&q.lock);
	rlog_write_flagged(QUEUE, ENQUEUE, &job, sizeof job);
	RLOG_COUNTER(queue_depth, depth);
}

static int queue_get(uint32_t *job)
{
	pthread_mutex_lock(&q.lock);
	while (q.count == 0 && !q.closed)
		pthread_cond_wait(&q.not_empty, &q.lock);
	if (q.count == 0) {
		pthread_mutex_unlock(&q.lock);
		return 0;
	}
	*job = q.jobs[q.head];
	q.head = (q.head + 1) % QUEUE_MAX;
	uint32_t depth = --q.count;
	pthread_cond_signal(&q.not_full);
	pthread_mutex_unlock(&q.lock);
	rlog_write_flagged(QUEUE, DEQUEUE, job, sizeof *job);
	RLOG_COUNTER(queue_depth, depth);
	return 1;
}

/* Simulated work: FNV-1a over a buffer whose size depends on the job. */
static uint64_t work(uint32_t job)
{
	static _Thread_local uint8_t buf[64 * 1024];
	size_t n = 4096 + (job * 2654435761u) % (sizeof buf - 4096);
	for (size_t i = 0; i < n; i++)
		buf[i] = (uint8_t)(i * 31 + job);
	uint64_t h = 1469598103934665603u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ buf[i]) * 1099511628211u;
	struct timespec io = { 0, (long)(20000 + job % 7 * 10000) }; /* 20-80 us of "I/O" */
	nanosleep(&io, NULL);
	return h;
}

static void *worker(void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg, job;
	char name[16];
	snprintf(name, sizeof name, "worker-%u", id);
	rlog_thread_name(name);
	while (queue_get(&job)) {
		RLOG_BEGIN(job_span, job, id);
		RLOG_EVENT(hash, work(job));
		RLOG_END(job_span);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	uint32_t jobs = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 2000;
	int err = rlog_attach(NULL); /* $RINGLOG_SESSION, else "default" */
	if (err < 0)
		fprintf(stderr, "ringlog-demo: not tracing (%s): running anyway\n", strerror(-err));
	rlog_thread_name("dispatcher");

	pthread_t th[WORKERS];
	uint64_t t0 = now_ns();
	for (uintptr_t i = 0; i < WORKERS; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (uint32_t j = 1; j <= jobs; j++) {
		queue_put(j);
		if (j % 100 == 0)
			rlog_write(RLOG_ID_RAW_U32, &j, sizeof j);
	}
	pthread_mutex_lock(&q.lock);
	q.closed = 1;
	pthread_cond_broadcast(&q.not_empty);
	pthread_mutex_unlock(&q.lock);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(th[i], NULL);

	printf("ringlog-demo: %u jobs on %d workers in %.1f ms\n", jobs, WORKERS,
	       (double)(now_ns() - t0) / 1e6);
	return 0;
}
