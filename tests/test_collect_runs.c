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
 *      the file still whole (the blocks after renumbered to follow);
 *   5. a gap in which a process defined its event's schema, the process
 *      writing on after it: the copies of the first METADATA chunk after
 *      the gap are written, so dump names its events and their field;
 *   6. commits the group refuses (a rebalance): counted, not fatal, the
 *      file still the local one;
 *   7. more runs than the collector may open files (RLIMIT_NOFILE): files
 *      let go at the end of each batch, every run collected whole.
 */
#include "sink_util.h"

#include "kafka_mock.h"
#include <ringlog/event.h>

#include "crc32c.h"
#include "format/chunk.h"

#define TICK_FIELDS(F) F(U64, n)
RLOG_DEFINE_EVENT(tick, 1100, "collect.tick", 0, TICK_FIELDS)
#define TOCK_FIELDS(F) F(U64, tock_n)
RLOG_DEFINE_EVENT(tock, 1101, "collect.tock", 0, TOCK_FIELDS)

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

#define MANY_RUNS 60  /* copies of a run published again ... */
#define MANY_FDS 32   /* ... for a collector with this many fds */

/* Every message of topic (one partition) published again copies times,
 * each copy's chunks with a run_id of their own (its header's checksum
 * made again): copies more runs of the session. */
static void republish(const char *boot, const char *topic, int copies)
{
	char e[256];
	rd_kafka_conf_t *cc = rd_kafka_conf_new();
	rd_kafka_conf_set(cc, "bootstrap.servers", boot, e, sizeof e);
	rd_kafka_conf_set(cc, "group.id", "republish", e, sizeof e);
	rd_kafka_conf_set(cc, "enable.partition.eof", "true", e, sizeof e);
	rd_kafka_conf_set(cc, "log_level", "0", e, sizeof e);
	rd_kafka_t *cons = rd_kafka_new(RD_KAFKA_CONSUMER, cc, e, sizeof e);
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
	rd_kafka_topic_partition_list_add(l, topic, 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
	rd_kafka_assign(cons, l);
	rd_kafka_topic_partition_list_destroy(l);
	rd_kafka_conf_t *pc = rd_kafka_conf_new();
	rd_kafka_conf_set(pc, "bootstrap.servers", boot, e, sizeof e);
	rd_kafka_conf_set(pc, "log_level", "0", e, sizeof e);
	rd_kafka_t *prod = rd_kafka_new(RD_KAFKA_PRODUCER, pc, e, sizeof e);
	uint8_t *msgs[64];
	size_t lens[64];
	int n = 0;
	for (int i = 0; i < 500 && n < 64; i++) {
		rd_kafka_message_t *m = rd_kafka_consumer_poll(cons, 100);
		if (m == NULL)
			continue;
		bool end = m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF;
		if (!m->err && m->len >= RLOG_CHUNK_HEADER_MIN) {
			msgs[n] = malloc(m->len);
			memcpy(msgs[n], m->payload, m->len);
			lens[n++] = m->len;
		}
		rd_kafka_message_destroy(m);
		if (end)
			break;
	}
	ok(n >= 2, "the run's %d chunks read back", n);
	for (int k = 1; k <= copies; k++) {
		for (int i = 0; i < n; i++) {
			uint64_t run;
			uint32_t hs, zero = 0;
			memcpy(&run, msgs[i] + 104, 8);
			run += (uint64_t)k;
			memcpy(msgs[i] + 104, &run, 8);
			memcpy(&hs, msgs[i] + 12, 4);
			memcpy(msgs[i] + 100, &zero, 4);
			uint32_t crc = rlog__crc32c(0, msgs[i], hs);
			memcpy(msgs[i] + 100, &crc, 4);
			rd_kafka_producev(prod, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
					  RD_KAFKA_V_VALUE(msgs[i], lens[i]),
					  RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
			run -= (uint64_t)k;
			memcpy(msgs[i] + 104, &run, 8);
		}
		rd_kafka_poll(prod, 0);
	}
	ASSERT_EQ(rd_kafka_flush(prod, 10000), 0);
	for (int i = 0; i < n; i++)
		free(msgs[i]);
	rd_kafka_destroy(prod);
	rd_kafka_consumer_close(cons);
	rd_kafka_destroy(cons);
}

/* A section of its own: topic and DIR/NAME (dir1/name), session NAME of
 * host started with the sink into it (its name in *sess, its local file
 * in *path). */
static void section(const char *boot, const char *dir1, const char *name, const char *host,
		    const char **sess, const char **path)
{
	snprintf(url, sizeof url, "kafka://%s/%s", boot, name);
	snprintf(dir, sizeof dir, "%s/%s", dir1, name);
	mkdir(dir, 0700);
	*sess = keep(h_session(name));
	*path = keep(h_path(name));
	start(*sess, *path, host, NULL);
}

/* Collected as group: one gap seen, and session s of host h one file
 * (its path in path, n bytes) that reads whole (summary in *sum) with one
 * DATA_LOSS of loss events and events events. */
static void gap_file(const char *group, const char *s, const char *h, char *path, size_t n,
		     struct h_summary *sum, uint64_t loss, uint64_t events)
{
	collect(group);
	ok(strstr(r.out, "gaps: 1 ") != NULL, "%s: the collect saw one gap: %s", group, r.out);
	ok(collected_runs(s, h, 0, path, n) == 1, "%s: one file", group);
	h_summarize(path, sum);
	ok(sum->damage == 0, "it reads whole: no damage (%zu)", sum->damage);
	ASSERT_EQ_U64(sum->loss_records, 1);
	ASSERT_EQ_U64(sum->loss_events, loss);
	ASSERT_EQ_U64(sum->events, events);
}

int main(void)
{
	rd_kafka_t *rk;
	mc = kafka_mock_start(1, &rk);
	const char *boot = rd_kafka_mock_cluster_bootstraps(mc);
	rd_kafka_mock_topic_create(mc, "runs", 2, 1);
	rd_kafka_mock_topic_create(mc, "late", 1, 1);
	rd_kafka_mock_topic_create(mc, "gap", 1, 1);
	rd_kafka_mock_topic_create(mc, "schema", 1, 1);
	rd_kafka_mock_topic_create(mc, "refused", 1, 1);
	rd_kafka_mock_topic_create(mc, "many", 1, 1);
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
	const char *hg = "000000000000000000000000000000a3";
	const char *sg, *pg;
	section(boot, dir1, "gap", hg, &sg, &pg);
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
	char gp[512];
	gap_file("gap2", sg, hg, gp, sizeof gp, &sum, 3000, g1 + 2000);
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

	/* 5. A gap in which a process defined its event's schema; that
	 * process writes on after the gap. */
	const char *hs = "000000000000000000000000000000a4";
	const char *ss, *ps;
	section(boot, dir1, "schema", hs, &ss, &ps);
	uint64_t t1 = ticks(ss, 2000);
	acked(ss, t1);
	collect("schema");
	int go[2], ready[2], cst = -1;
	ASSERT_EQ(pipe(go), 0);
	ASSERT_EQ(pipe(ready), 0);
	fflush(stdout);
	pid_t w2 = fork();
	if (w2 == 0) {
		char b = 0;
		uint64_t n = 0;
		if (rlog_attach(ss) < 0)
			_exit(1);
		for (uint64_t i = 1; i <= 1000; i++)
			n += RLOG_EVENT(tock, i) == 1;
		if (write(ready[1], &b, 1) != 1 || read(go[0], &b, 1) != 1)
			_exit(1);
		for (uint64_t i = 1001; i <= 2000; i++)
			n += RLOG_EVENT(tock, i) == 1;
		rlog_detach();
		_exit(n == 2000 ? 0 : 1);
	}
	char b = 0;
	ok(read(ready[0], &b, 1) == 1, "the tock writer wrote its first 1000 events");
	h_ringlog(&r, "flush", ss, NULL);
	acked(ss, t1 + 1000);
	/* The chunks of its first 1000 events (and its schema) skipped; then a
	 * new process: new metadata, a METADATA chunk with every copy. */
	skip_to_end(boot, "schema", "schema2");
	child_ticks(ss, 500);
	h_ringlog(&r, "flush", ss, NULL);
	acked(ss, t1 + 1500);
	ok(write(go[1], &b, 1) == 1, "the tock writer goes on");
	waitpid(w2, &cst, 0);
	ok(WIFEXITED(cst) && WEXITSTATUS(cst) == 0, "the tock writer wrote its 2000 events");
	h_ringlog(&r, "stop", ss, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "sink_events_acked"), t1 + 2500);
	char sp[512];
	gap_file("schema2", ss, hs, sp, sizeof sp, &sum, 1000, t1 + 1500);
	{
		struct run d = proc_run((const char *const[]){ h_bin(), "dump", sp, NULL });
		ASSERT_EQ(d.status, 0);
		int named = 0, field = 0;
		for (const char *p = strstr(d.out, "collect.tock"); p; p = strstr(p + 1, "collect.tock"))
			named++;
		for (const char *p = strstr(d.out, "tock_n"); p; p = strstr(p + 1, "tock_n"))
			field++;
		ok(named == 1000 && field == 1000,
		   "dump names the 1000 tocks after the gap, with their field (%d, %d)", named, field);
		run_free(&d);
	}
	unlink(ps);

	/* 6. Commits refused while the group rebalances: not fatal. */
	const char *hr = "000000000000000000000000000000a5";
	const char *sr, *pr;
	section(boot, dir1, "refused", hr, &sr, &pr);
	uint64_t wr = ticks(sr, 3000);
	h_ringlog(&r, "stop", sr, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "sink_events_acked"), wr);
	/* The collector's one commit (it reads the run in one batch). */
	rd_kafka_mock_push_request_errors(mc, 8 /* ApiKey OffsetCommit */, 1,
					  RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS);
	collect("refused");
	ok(strstr(r.out, "commits refused by a rebalance: 1\n") != NULL, "the refusal counted: %s",
	   r.out);
	same_bytes(pr, sr, hr);
	unlink(pr);

	/* 7. More runs than the collector may open files. */
	const char *hm = "000000000000000000000000000000a6";
	const char *sm, *pm;
	section(boot, dir1, "many", hm, &sm, &pm);
	uint64_t wm = ticks(sm, 200);
	h_ringlog(&r, "stop", sm, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "sink_events_acked"), wm);
	republish(boot, "many", MANY_RUNS);
	{
		char cmd[1024];
		snprintf(cmd, sizeof cmd, "ulimit -n %d && exec \"$0\" collect %s -o %s --group many",
			 MANY_FDS, url, dir);
		struct run c = proc_run((const char *const[]){ "sh", "-c", cmd, h_bin(), NULL });
		ok(c.status == 0, "collect with %d fds exits 0 (%s)", MANY_FDS, c.err);
		run_free(&c);
	}
	int files = 0, same = 0;
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		files++;
		same += same_file(pm, path);
	}
	if (d)
		closedir(d);
	ok(files == MANY_RUNS + 1 && same == files,
	   "%d runs collected, each the local file byte for byte (%d)", files, same);
	unlink(pm);

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
