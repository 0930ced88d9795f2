/*
 * test_demo.c - the demo (examples/demo.c, what scripts/demo.sh shows a new
 * user first) tells a true story: run in a real session, its trace reads,
 * in time order, as the queue's actual history.
 *
 *   - every application event has a schema and decodes (no raw payloads);
 *   - every job is put, got, begun, hashed and ended exactly once, and its
 *     put precedes its get;
 *   - puts and gets come in job order (the queue is FIFO), and the depths
 *     they carry step by +1 and -1 from 0 back to 0: true only because the
 *     demo writes them while it holds the queue's lock.  Two of them on
 *     different threads less than TIE_NS apart may come in either order:
 *     the time-stamp counter is read without a fence (one would double a
 *     timed event's cost), so the read after taking the lock can run
 *     ahead of the lock by as much as the CPU's out-of-order window holds
 *     (hundreds of nanoseconds behind a cache miss), and the CPUs'
 *     counters may differ; such a pair is counted as a tie and checked
 *     in the order that fits (docs/DECISIONS.md);
 *   - a worker begins the job it just got, and hashes the job it is in;
 *   - the five threads are named dispatcher and worker-0..3;
 *   - `ringlog dump` starts with "queue.put job=1 depth=1", decoded.
 *
 * Needs $RINGLOG_BIN and $RINGLOG_DEMO (tests/meson.build).
 */
#include "harness.h"

#include "tap.h"
#include "proc_run.h"

#define JOBS 400
#define WORKERS 4
#define TIE_NS 2000

/* A queue.put or queue.get, in the trace's order. */
struct qev {
	int64_t t;
	bool put;
	uint32_t tid;
	uint64_t job, depth;
};

/* Whether e, next in the queue's history after puts and gets of jobs up
 * to *last_put and *last_get at depth *depth, fits it; if so, applies it. */
static bool qev_fits(const struct qev *e, uint64_t *depth, uint64_t *last_put, uint64_t *last_get)
{
	if (e->put) {
		if (e->job != *last_put + 1 || e->depth != *depth + 1)
			return false;
		*last_put = e->job;
	} else {
		if (*depth == 0 || e->job != *last_get + 1 || e->depth != *depth - 1)
			return false;
		*last_get = e->job;
	}
	*depth = e->depth;
	return true;
}

/* Replays the history (a get fits only while the queue holds a job, so
 * each job's get comes after its put); a misfit is forgiven once as a tie if the event
 * after it is on another thread, less than TIE_NS later, and the two fit
 * in the other order.  Returns the misfits left. */
static uint64_t qev_replay(struct qev *q, size_t n, uint64_t *ties, uint64_t *final_depth)
{
	uint64_t depth = 0, last_put = 0, last_get = 0, bad = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t d = depth, lp = last_put, lg = last_get;
		if (qev_fits(&q[i], &d, &lp, &lg)) {
			depth = d, last_put = lp, last_get = lg;
			continue;
		}
		if (i + 1 < n && q[i + 1].tid != q[i].tid && q[i + 1].t - q[i].t < TIE_NS &&
		    qev_fits(&q[i + 1], &d, &lp, &lg) && qev_fits(&q[i], &d, &lp, &lg)) {
			struct qev x = q[i];
			q[i] = q[i + 1];
			q[i + 1] = x;
			depth = d, last_put = lp, last_get = lg;
			(*ties)++;
			i++;
			continue;
		}
		bad++;
	}
	*final_depth = depth;
	return bad;
}

struct worker {
	uint32_t tid;
	uint32_t got;    /* the job it got last */
	uint32_t in_job; /* the job it is in, 0 if none */
	uint64_t index;  /* the worker field of its spans */
};

static uint64_t field(struct rlog_reader *r, const struct rlog_event *ev, const char *name)
{
	const struct rlog_schema *s = rlog_reader_schema(r, ev);
	size_t off = 0;
	struct rlog_value v;
	for (unsigned i = 0; s && i < s->field_count; i++) {
		if (rlog_event_field(s, ev, i, &off, &v) != 1)
			break;
		if (strcmp(s->fields[i].name, name) == 0)
			return v.v.u;
	}
	return UINT64_MAX;
}

static struct worker *worker_of(struct worker *w, uint32_t tid)
{
	for (int i = 0; i < WORKERS; i++)
		if (w[i].tid == tid || w[i].tid == 0) {
			w[i].tid = tid;
			return &w[i];
		}
	return NULL;
}

int main(void)
{
	const char *demo = getenv("RINGLOG_DEMO");
	BAIL_IF(!demo, "RINGLOG_DEMO must name the demo program");
	const char *name = h_session("demo"), *path = h_path("demo");
	struct h_run r;

	h_start(name, path, NULL, NULL);
	setenv("RINGLOG_SESSION", name, 1);
	struct run d;
	const char *argv[] = { demo, "400", NULL };
	d = proc_run(argv);
	ASSERT_EQ(d.status, 0);
	ASSERT_STREQ(d.err, "");
	ok(strncmp(d.out, "ringlog-demo: 400 jobs on 4 workers in ", 39) == 0, "the demo ran: %s",
	   d.out);
	run_free(&d);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	/* put, get, begin, hash, end per job; a counter per 100 jobs. */
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 5 * JOBS + JOBS / 100);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), 0);

	struct rlog_reader *rd;
	BAIL_IF(rlog_reader_open(path, &rd) < 0, "cannot read %s", path);
	struct rlog_event ev;
	static uint8_t put[JOBS + 1], got[JOBS + 1], begun[JOBS + 1], hashed[JOBS + 1];
	struct worker w[WORKERS];
	memset(w, 0, sizeof w);
	static struct qev q[2 * JOBS + 16];
	size_t nq = 0;
	uint64_t raw = 0, last_put = 0, last_get = 0;
	uint64_t wrong_begin = 0, wrong_hash = 0, ends = 0, counters = 0;
	uint64_t bad_counter = 0, other = 0;
	uint32_t pid = 0, dispatcher = 0;
	while (rlog_reader_next(rd, &ev) == 1) {
		if (ev.from_daemon || ev.id < RLOG_ID_USER_MIN)
			continue;
		pid = ev.pid;
		const struct rlog_schema *s = rlog_reader_schema(rd, &ev);
		if (!s || rlog_event_field_count(s, &ev) < 0) {
			raw++;
			continue;
		}
		uint64_t job = field(rd, &ev, "job");
		bool is_put = strcmp(s->name, "queue.put") == 0;
		if ((is_put || strcmp(s->name, "queue.get") == 0) && nq < sizeof q / sizeof q[0])
			q[nq++] = (struct qev){ ev.time_ns, is_put, ev.tid, job,
						field(rd, &ev, "depth") };
		if (is_put) {
			dispatcher = ev.tid;
			last_put = job > last_put ? job : last_put;
			if (job >= 1 && job <= JOBS)
				put[job]++;
		} else if (strcmp(s->name, "queue.get") == 0) {
			last_get = job > last_get ? job : last_get;
			if (job >= 1 && job <= JOBS) {
				got[job]++;
			}
			struct worker *k = worker_of(w, ev.tid);
			if (k)
				k->got = (uint32_t)job;
		} else if (strcmp(s->name, "job") == 0 && ev.flag == RLOG_SPAN_BEGIN) {
			struct worker *k = worker_of(w, ev.tid);
			uint64_t index = field(rd, &ev, "worker");
			wrong_begin += !k || k->got != job || k->in_job != 0 ||
				       (k->in_job == 0 && k->index != 0 && k->index != index + 1);
			if (k) {
				k->in_job = (uint32_t)job;
				k->index = index + 1;
			}
			if (job >= 1 && job <= JOBS)
				begun[job]++;
		} else if (strcmp(s->name, "hash") == 0) {
			struct worker *k = worker_of(w, ev.tid);
			wrong_hash += !k || k->in_job != job || field(rd, &ev, "bytes") < 4096;
			if (job >= 1 && job <= JOBS)
				hashed[job]++;
		} else if (strcmp(s->name, "job") == 0 && ev.flag == RLOG_SPAN_END) {
			struct worker *k = worker_of(w, ev.tid);
			wrong_begin += !k || k->in_job == 0;
			if (k)
				k->in_job = 0;
			ends++;
		} else if (strcmp(s->name, "jobs.dispatched") == 0) {
			counters++;
			bad_counter += field(rd, &ev, "jobs") != counters * 100 || last_put < counters * 100;
		} else {
			other++;
		}
	}
	ASSERT_EQ_U64(raw, 0);
	ASSERT_EQ_U64(other, 0);
	ASSERT_EQ_U64(nq, 2 * JOBS);
	uint64_t ties = 0, depth = 0;
	uint64_t misfits = qev_replay(q, nq, &ties, &depth);
	ok(misfits == 0, "puts and gets replay the queue's history in trace order (%llu misfits, "
			 "%llu ties under %d ns)",
	   (unsigned long long)misfits, (unsigned long long)ties, TIE_NS);
	ASSERT_EQ_U64(depth, 0);
	ASSERT_EQ_U64(wrong_begin, 0);
	ASSERT_EQ_U64(wrong_hash, 0);
	ASSERT_EQ_U64(last_put, JOBS);
	ASSERT_EQ_U64(last_get, JOBS);
	ASSERT_EQ_U64(ends, JOBS);
	ASSERT_EQ_U64(counters, JOBS / 100);
	ASSERT_EQ_U64(bad_counter, 0);
	int once = 0;
	for (int j = 1; j <= JOBS; j++)
		once += put[j] == 1 && got[j] == 1 && begun[j] == 1 && hashed[j] == 1;
	ASSERT_EQ(once, JOBS);

	/* The threads' names: the dispatcher is the main thread. */
	ASSERT_EQ(dispatcher, pid);
	ASSERT_STREQ(rlog_reader_thread_name(rd, pid, dispatcher), "dispatcher");
	ASSERT_STREQ(rlog_reader_process_name(rd, pid), "ringlog-demo");
	/* Each worker's name is "worker-N", N the worker field of its spans,
	 * and every N from 0 to 3 is there. */
	unsigned seen = 0;
	for (int i = 0; i < WORKERS; i++) {
		const char *n = w[i].tid ? rlog_reader_thread_name(rd, pid, w[i].tid) : NULL;
		char want[32];
		snprintf(want, sizeof want, "worker-%llu", (unsigned long long)w[i].index - 1);
		ASSERT_STREQ(n, want);
		if (w[i].index >= 1 && w[i].index <= WORKERS)
			seen |= 1u << (w[i].index - 1);
	}
	ASSERT_EQ(seen, (1u << WORKERS) - 1);
	rlog_reader_close(rd);

	/* What a user sees: the first event decoded, nothing raw. */
	const char *dargv[] = { h_bin(), "dump", path, NULL };
	d = proc_run(dargv);
	ASSERT_EQ(d.status, 0);
	const char *l = d.out;
	for (int i = 0; i < 3 && l; i++)
		l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL;
	char line[256] = "";
	if (l)
		snprintf(line, sizeof line, "%.*s", (int)strcspn(l, "\n"), l);
	const char *want = " queue.put    job=1 depth=1";
	ok(strlen(line) > strlen(want) && strcmp(line + strlen(line) - strlen(want), want) == 0,
	   "the first event: '%s'", line);
	ok(strstr(d.out, "!mismatch") == NULL, "no payload fails its schema");
	run_free(&d);
	unlink(path);
	return done_testing();
}
