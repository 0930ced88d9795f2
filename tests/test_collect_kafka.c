/*
 * test_collect_kafka.c - two `ringlog collect kafka://...` of one consumer
 * group writing into one DIR, against librdkafka's mock cluster, while
 * three hosts stream into a topic of four partitions: the first collector
 * alone, then both (the partitions shared), then the second killed
 * mid-stream (its partitions back to the first) and started again.  A partition that moves away and comes back is taken up
 * from the file's state on disk, not from what the collector last knew:
 * each collected file is its host's local file byte for byte (every
 * numbered event once) and no collector reported a gap.
 */
#include "sink_util.h"

#include "kafka_mock.h"

/* Each host's session s[i] writes n numbered events more, from a process
 * of its own, then its daemon flushes; w[i] counts them. */
static void write_all(const char *const *s, uint64_t *w, uint64_t n)
{
	pid_t kids[3];
	fflush(stdout);
	for (int i = 0; i < 3; i++) {
		kids[i] = fork();
		if (kids[i] == 0)
			_exit(write_events(s[i], n, 10) == n ? 0 : 1);
	}
	for (int i = 0; i < 3; i++) {
		int st = -1;
		waitpid(kids[i], &st, 0);
		ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "host %d wrote %llu events", i + 1,
		   (unsigned long long)n);
		w[i] += n;
		h_ringlog(&r, "flush", s[i], NULL);
	}
}

int main(void)
{
	rd_kafka_t *rk;
	rd_kafka_mock_cluster_t *mc = kafka_mock_start(1, &rk);
	rd_kafka_mock_topic_create(mc, "shared", 4, 1);
	snprintf(url, sizeof url, "kafka://%s/shared", rd_kafka_mock_cluster_bootstraps(mc));
	snprintf(dir, sizeof dir, "/tmp/rlog-collect-kafka-%d", (int)getpid());
	mkdir(dir, 0700);

	const char *h[3] = { "00000000000000000000000000000031", "00000000000000000000000000000032",
			     "00000000000000000000000000000033" };
	const char *s[3], *p[3];
	uint64_t w[3] = { 0, 0, 0 };
	start_three("kc", h, s, p);
	/* The first collector alone: every partition its own. */
	struct proc_bg a, b;
	collector(&a, "shared", NULL);
	write_all(s, w, 5000);
	ok(all_whole(s, h, p, 15000), "the first collector wrote the 3 files");
	/* The second joins: the partitions shared between them once the
	 * group has rebalanced (the mock cluster waits the session timeout
	 * less 1 s, 5 s, for its members). */
	collector(&b, "shared", NULL);
	proc_sleep_ms(6000);
	write_all(s, w, 5000);
	ok(all_whole(s, h, p, 15000), "the two collectors wrote on");
	/* The second killed: its partitions back to the first once its
	 * group session times out (6 s), which takes them up from the files'
	 * state, not from where it was. */
	proc_signal(&b, SIGKILL);
	struct run killed = proc_reap(&b);
	run_free(&killed);
	write_all(s, w, 5000);
	ok(all_whole(s, h, p, 20000), "the first collector took the partitions back");
	/* Started again. */
	collector(&b, "shared", NULL);
	proc_sleep_ms(6000);
	write_all(s, w, 5000);
	for (int i = 0; i < 3; i++) {
		h_ringlog(&r, "stop", s[i], NULL);
		ASSERT_EQ(r.status, 0);
		ASSERT_EQ_U64(h_kv(r.out, "sink_events_acked"), w[i]);
		ASSERT_EQ_U64(h_kv(r.out, "sink_chunks_lost"), 0);
	}
	ok(all_whole(s, h, p, 15000), "every file whole after the stop");
	stop_two(&a, &b);
	for (int i = 0; i < 3; i++) {
		same_bytes(p[i], s[i], h[i]);
		unlink(p[i]);
	}

	rd_kafka_mock_cluster_destroy(mc);
	rd_kafka_destroy(rk);
	const char *rm[] = { "rm", "-rf", dir, NULL };
	struct run x = proc_run(rm);
	run_free(&x);
	return done_testing();
}
