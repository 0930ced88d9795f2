/*
 * test_collect_runs.c - `ringlog collect` against librdkafka's mock
 * cluster, where a collector cannot take a session's chunks from the
 * first one on (docs/FORMAT.md, "Chunks"):
 *   1. a session stopped and started again under its name on the same
 *      host, into the same topic (its chunks' seq from 0 again): two
 *      files, one per run (run_id), each the run's local file byte for
 *      byte: nothing dropped as a duplicate;
 *   2. a collector that starts at a later offset (the first chunks as
 *      if retention dropped them): its file reads whole (no damage), its
 *      events named by the schema its metadata copies carry, and it
 *      starts with one DATA_LOSS of cause sink counting exactly the
 *      events of the chunks it never saw; events + loss = all written;
 *   3. chunks missing in the middle (the group's offset moved past them
 *      between two collects): one DATA_LOSS of exactly their events,
 *      the file still whole (the blocks after renumbered to follow).
 */
#include "sink_util.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <ringlog/event.h>

#define TICK_FIELDS(F) F(U64, n)
RLOG_DEFINE_EVENT(tick, 1100, "collect.tick", 0, TICK_FIELDS)

static rd_kafka_mock_cluster_t *mc;

/* n ticks {1..n} into session name; returns those written. */
static uint64_t ticks(const char *name, uint64_t n)
{
	if (rlog_attach(name) < 0)
		return 0;
	uint64_t w = 0;
	for (uint64_t i = 1; i <= n; i++)
		w += RLOG_EVENT(tick, i) == 1;
	rlog_detach();
	return w;
}

/* Waits until session name's sink has acknowledged n events. */
static void acked(const char *name, uint64_t n)
{
	for (int i = 0; i < 500; i++) {
		h_ringlog(&r, "query", name, NULL);
		if (h_kv(r.out, "sink_events_acked") == n)
			break;
		proc_sleep_ms(20);
	}
	ASSERT_EQ_U64(h_kv(r.out, "sink_events_acked"), n);
}

/* Group group (new) of topic (one partition) starts at its end, past
 * what the topic holds now. */
static void skip_to_end(const char *boot, const char *topic, const char *group)
{
	char e[256];
	rd_kafka_conf_t *cc = rd_kafka_conf_new();
	rd_kafka_conf_set(cc, "bootstrap.servers", boot, e, sizeof e);
	rd_kafka_conf_set(cc, "group.id", group, e, sizeof e);
	rd_kafka_conf_set(cc, "log_level", "0", e, sizeof e);
	rd_kafka_t *cons = rd_kafka_new(RD_KAFKA_CONSUMER, cc, e, sizeof e);
	int64_t lo = -1, hi = -1;
	ASSERT_EQ(rd_kafka_query_watermark_offsets(cons, topic, 0, &lo, &hi, 5000), 0);
	ok(hi >= 1, "%s: offsets %lld to %lld skipped", topic, (long long)lo, (long long)hi - 1);
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
	rd_kafka_topic_partition_list_add(l, topic, 0)->offset = hi;
	ASSERT_EQ(rd_kafka_commit(cons, l, 0), 0);
	rd_kafka_topic_partition_list_destroy(l);
	rd_kafka_destroy(cons);
}

/* n ticks from a new process (its names: new metadata). */
static void child_ticks(const char *name, uint64_t n)
{
	fflush(stdout);
	pid_t child = fork();
	if (child == 0)
		_exit(ticks(name, n) == n ? 0 : 1);
	int cst = -1;
	waitpid(child, &cst, 0);
	ok(WIFEXITED(cst) && WEXITSTATUS(cst) == 0, "a writer process wrote its %llu events",
	   (unsigned long long)n);
}

int main(void)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char e[256];
	rd_kafka_conf_set(conf, "log_level", "0", e, sizeof e);
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, e, sizeof e);
	mc = rk ? rd_kafka_mock_cluster_new(rk, 1) : NULL;
	if (mc == NULL) {
		printf("Bail out! no mock cluster: %s\n", e);
		return 1;
	}
	const char *boot = rd_kafka_mock_cluster_bootstraps(mc);
	rd_kafka_mock_topic_create(mc, "runs", 2, 1);
	rd_kafka_mock_topic_create(mc, "late", 1, 1);
	rd_kafka_mock_topic_create(mc, "gap", 1, 1);
	snprintf(dir, sizeof dir, "/tmp/rlog-collect-runs-%d", (int)getpid());
	mkdir(dir, 0700);

	/* 1. Two runs of one session name on one host, one after the other. */
	snprintf(url, sizeof url, "kafka://%s/runs", boot);
	const char *host = "000000000000000000000000000000a1";
	const char *s = keep(h_session("runs"));
	const char *pa = keep(h_path("runa")), *pb = keep(h_path("runb"));
	start(s, pa, host, NULL);
	uint64_t wa = ticks(s, 3000);
	h_ringlog(&r, "stop", s, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "sink_events_acked"), wa);
	start(s, pb, host, NULL);
	uint64_t wb = ticks(s, 5000);
	h_ringlog(&r, "stop", s, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "sink_events_acked"), wb);
	collect("r1");
	ok(strstr(r.out, "duplicates: 0") && !strstr(r.out, "duplicates: 1"),
	   "no chunk of the second run taken for a duplicate: %s", r.out);
	char path[512];
	ASSERT_EQ(collected_runs(s, host, 0, path, sizeof path), 2);
	two_runs(pa, pb, wa, wb);

	/* 2. A collector that joins late. */
	snprintf(url, sizeof url, "kafka://%s/late", boot);
	char dir1[200];
	snprintf(dir1, sizeof dir1, "%.150s", dir);
	snprintf(dir, sizeof dir, "%s/late", dir1);
	mkdir(dir, 0700);
	const char *hl = "000000000000000000000000000000a2";
	const char *sl = keep(h_session("late"));
	const char *pl = keep(h_path("late"));
	start(sl, pl, hl, NULL);
	uint64_t w1 = ticks(sl, 5000);
	/* Everything of the first writer in the topic, the collectors'
	 * group set to start after it; then a second writer (a new process:
	 * its names are new metadata, so its first chunk is a METADATA one). */
	acked(sl, w1);
	skip_to_end(boot, "late", "late");
	child_ticks(sl, 3000);
	h_ringlog(&r, "stop", sl, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "sink_events_acked"), w1 + 3000);
	collect("late");
	char lp[512];
	ok(collected_runs(sl, hl, 0, lp, sizeof lp) == 1, "the late collector wrote one file");
	struct h_summary sum;
	h_summarize(lp, &sum);
	ok(sum.damage == 0, "it reads whole: no damage (%zu)", sum.damage);
	ok(sum.loss_records == 1, "one DATA_LOSS: %llu", (unsigned long long)sum.loss_records);
	ok(sum.events > 0 && sum.loss_events >= w1, "%llu events, %llu lost",
	   (unsigned long long)sum.events, (unsigned long long)sum.loss_events);
	ASSERT_EQ_U64(sum.events + sum.loss_events, w1 + 3000);
	struct h_thread *t = NULL;
	for (size_t i = 0; i < sum.nthreads; i++)
		if (sum.th[i].events)
			t = &sum.th[i];
	ok(t && t->events == sum.events && t->last_seq == 3000 && t->order_errors == 0,
	   "the events are the second writer's last ones, each once, in order");
	h_ringlog(&r, "dump", lp, NULL);
	ASSERT_EQ(r.status, 0);
	ok(strstr(r.out, "collect.tick") != NULL, "dump names the events from the copies");
	const char *loss = strstr(r.out, "DATA_LOSS"), *ev = strstr(r.out, "collect.tick");
	ok(loss && ev && loss < ev, "the DATA_LOSS comes first");
	ok(loss && strstr(loss, "sink") && strstr(loss, "sink") < ev, "its cause is sink");

	/* 3. Chunks missing in the middle of a file. */
	snprintf(url, sizeof url, "kafka://%s/gap", boot);
	snprintf(dir, sizeof dir, "%s/gap", dir1);
	mkdir(dir, 0700);
	const char *hg = "000000000000000000000000000000a3";
	const char *sg = keep(h_session("gap"));
	const char *pg = keep(h_path("gap"));
	start(sg, pg, hg, NULL);
	uint64_t g1 = ticks(sg, 4000);
	acked(sg, g1);
	collect("gap");
	ok(no_gaps(r.out), "the first collect: no gap (%s)", r.out);
	child_ticks(sg, 3000);
	acked(sg, g1 + 3000);
	/* A second group (the mock cluster keeps a group's last member),
	 * its offset past the second writer's chunks, writing on into the
	 * same file (its state in DIR). */
	skip_to_end(boot, "gap", "gap2");
	child_ticks(sg, 2000);
	h_ringlog(&r, "stop", sg, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "sink_events_acked"), g1 + 5000);
	collect("gap2");
	ok(strstr(r.out, "gaps: 1 ") != NULL, "the second collect saw one gap: %s", r.out);
	char gp[512];
	ok(collected_runs(sg, hg, 0, gp, sizeof gp) == 1, "one file");
	h_summarize(gp, &sum);
	ok(sum.damage == 0, "it reads whole: no damage (%zu)", sum.damage);
	ASSERT_EQ_U64(sum.loss_records, 1);
	ASSERT_EQ_U64(sum.loss_events, 3000);
	ASSERT_EQ_U64(sum.events, g1 + 2000);
	int whole = 0;
	for (size_t i = 0; i < sum.nthreads; i++)
		whole += sum.th[i].order_errors == 0 &&
			 ((sum.th[i].events == g1 && sum.th[i].last_seq == g1) ||
			  (sum.th[i].events == 2000 && sum.th[i].last_seq == 2000));
	ok(whole == 2, "the first and third writers' events each once, in order (%d)", whole);
	unlink(pg);

	/* 4. update --sink of a session that no longer runs: one line
	 * (test_sink_nats.c adds a sink to a running one). */
	h_ringlog(&r, "update", sg, "--sink", url, NULL);
	ok(r.status != 0, "update --sink fails (%d)", r.status);
	char want4[300];
	snprintf(want4, sizeof want4, "ringlog: update: no session named '%s'\n", sg);
	ASSERT_STREQ(r.err, want4);

	rd_kafka_mock_cluster_destroy(mc);
	rd_kafka_destroy(rk);
	unlink(pa);
	unlink(pb);
	unlink(pl);
	const char *rm[] = { "rm", "-rf", dir1, NULL };
	struct run x = proc_run(rm);
	run_free(&x);
	return done_testing();
}
