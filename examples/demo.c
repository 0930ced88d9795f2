/*
 * demo.c - a multi-threaded workload, traced with ringlog.
 *
 * A dispatcher thread hands jobs to four workers through a queue.  Each
 * worker does simulated work (hashing a buffer, then a short sleep that
 * stands in for I/O) and records what it does.  Every event type is
 * declared once (<ringlog/event.h>), so the trace names the events and
 * their fields by itself, and `ringlog dump` prints them decoded:
 *
 *   ID   name             kind     fields                            category
 *   1024 job              span     u32 job, u32 worker               0
 *   1025 queue.put        event    u32 job, u32 depth (after it)     2
 *   1026 hash             event    u32 job, u32 bytes, u64 value     1
 *   1027 queue.get        event    u32 job, u32 depth (after it)     2
 *   1028 jobs.dispatched  counter  u32 jobs (every 100 jobs)         2
 *
 * The threads name themselves "dispatcher" and "worker-0" .. "worker-3"
 * (rlog_thread_name); `ringlog stats` lists them by name.
 *
 * The queue events are written while the queue's lock is held, so their
 * order in the trace is the order of the operations: a job's queue.put
 * precedes its queue.get, and the depths read in time order are the
 * queue's real history, to within a fraction of a microsecond (the
 * time-stamp counter is read without a fence, so two operations on
 * different CPUs closer than that may show in either order;
 * docs/DECISIONS.md).
 * (Written after the unlock, a put could be time-stamped microseconds
 * after the get of the same job by another thread.)  An event costs tens
 * of nanoseconds, so the lock is held hardly longer.
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

#define QUEUE_FIELDS(F) F(U32, job) F(U32, depth)
RLOG_DEFINE_EVENT(queue_put, 1025, "queue.put", 2, QUEUE_FIELDS)
RLOG_DEFINE_EVENT(queue_get, 1027, "queue.get", 2, QUEUE_FIELDS)

#define HASH_FIELDS(F) F(U32, job) F(U32, bytes) F(U64, value)
RLOG_DEFINE_EVENT(hash, 1026, "hash", 1, HASH_FIELDS) /* category 1: values; the mask can turn it off */

#define DISPATCHED_FIELDS(F) F(U32, jobs)
RLOG_DEFINE_COUNTER(jobs_dispatched, 1028, "jobs.dispatched", 2, DISPATCHED_FIELDS)

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
	q.count++;
	/* Under the lock: before any worker can take the job (see the top). */
	RLOG_EVENT(queue_put, job, q.count);
	pthread_cond_signal(&q.not_empty);
	pthread_mutex_unlock(&q.lock);
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
	q.count--;
	RLOG_EVENT(queue_get, *job, q.count);
	pthread_cond_signal(&q.not_full);
	pthread_mutex_unlock(&q.lock);
	return 1;
}

/* Simulated work: FNV-1a over a buffer whose size depends on the job. */
static uint64_t work(uint32_t job, uint32_t *bytes)
{
	static _Thread_local uint8_t buf[64 * 1024];
	size_t n = 4096 + (job * 2654435761u) % (sizeof buf - 4096);
	*bytes = (uint32_t)n;
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
		uint32_t bytes;
		uint64_t value = work(job, &bytes);
		RLOG_EVENT(hash, job, bytes, value);
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
			RLOG_COUNTER(jobs_dispatched, j);
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
