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
 *     demo writes them while it holds the queue's lock;
 *   - a worker begins the job it just got, and hashes the job it is in;
 *   - the five threads are named dispatcher and worker-0..3;
 *   - `ringlog dump` starts with "queue.put job=1 depth=1", decoded.
 *
 * Needs $RINGLOG_BIN and $RINGLOG_DEMO (tests/meson.build).
 */
#include "harness.h"

#include "tap.h"
#include "test_convert_util.h"

#define JOBS 400
#define WORKERS 4

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
	struct cmd d;
	const char *argv[] = { demo, "400", NULL };
	run(&d, argv);
	ASSERT_EQ(d.status, 0);
	ASSERT_STREQ(d.err, "");
	ok(strncmp(d.out, "ringlog-demo: 400 jobs on 4 workers in ", 39) == 0, "the demo ran: %s",
	   d.out);
	cmd_free(&d);
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
	uint64_t raw = 0, depth = 0, bad_depth = 0, last_put = 0, last_get = 0, out_of_order = 0;
	uint64_t get_before_put = 0, wrong_begin = 0, wrong_hash = 0, ends = 0, counters = 0;
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
		if (strcmp(s->name, "queue.put") == 0) {
			dispatcher = ev.tid;
			out_of_order += job != last_put + 1;
			last_put = job;
			bad_depth += field(rd, &ev, "depth") != ++depth;
			if (job >= 1 && job <= JOBS)
				put[job]++;
		} else if (strcmp(s->name, "queue.get") == 0) {
			out_of_order += job != last_get + 1;
			last_get = job;
			bad_depth += depth == 0 || field(rd, &ev, "depth") != --depth;
			if (job >= 1 && job <= JOBS) {
				get_before_put += put[job] != 1;
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
	ASSERT_EQ_U64(out_of_order, 0);
	ASSERT_EQ_U64(bad_depth, 0);
	ASSERT_EQ_U64(depth, 0);
	ASSERT_EQ_U64(get_before_put, 0);
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
	run(&d, dargv);
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
	cmd_free(&d);
	unlink(path);
	return done_testing();
}
