/*
 * test_sink_kafka.c - `ringlog start --sink kafka://...` and `ringlog
 * collect` against librdkafka's mock cluster (three brokers on loopback,
 * in this process): the collected file is, byte for byte, the session's
 * local file (but the file header's creation time, +16); brokers down
 * and up and request errors lose nothing; a full --sink-buffer drops
 * chunks counted exactly (DATA_LOSS cause sink in the stream); hosts into
 * one topic; a collector killed and started again duplicates nothing.
 */
#include "harness.h"

#include <dirent.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#define TOPIC "rl"

static rd_kafka_mock_cluster_t *mc;
static char url[512];
static char dir[256];

/* Writes n events {seq} (ID 1024, 8 bytes) into session name; returns
 * those written (1). */
static uint64_t write_events(const char *name, uint64_t n, long pause_every_ms)
{
	if (rlog_attach(name) < 0)
		return 0;
	uint64_t written = 0;
	for (uint64_t i = 1; i <= n; i++) {
		written += rlog_write(1024, &i, sizeof i) == 1;
		if (pause_every_ms && i % 2000 == 0)
			proc_sleep_ms(pause_every_ms);
	}
	rlog_detach();
	return written;
}

static struct h_run r;

static void start(const char *name, const char *path, const char *host, const char *buffer)
{
	unlink(path);
	if (buffer)
		h_ringlog(&r, "start", name, "-o", path, "--buffer-size", "4", "--sink", url,
			  "--host-id", host, "--sink-buffer", buffer, NULL);
	else
		h_ringlog(&r, "start", name, "-o", path, "--buffer-size", "4", "--sink", url,
			  "--host-id", host, NULL);
	if (r.status != 0) {
		printf("Bail out! ringlog start %s failed (%d): %s\n", name, r.status, r.err);
		exit(1);
	}
}

/* The collected file of host (its name in dir ends with _HOST.rlog). */
static bool collected_path(const char *name, const char *host, char *out, size_t n)
{
	DIR *d = opendir(dir);
	if (d == NULL)
		return false;
	char suffix[128];
	snprintf(suffix, sizeof suffix, "_%s_%s.rlog", name, host);
	struct dirent *e;
	bool found = false;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name), s = strlen(suffix);
		if (l > s && strcmp(e->d_name + l - s, suffix) == 0) {
			snprintf(out, n, "%s/%s", dir, e->d_name);
			found = true;
		}
	}
	closedir(d);
	return found;
}

static uint8_t a_buf[32 << 20], b_buf[32 << 20];

/* The collected file equals the local one but for created_realtime_ns. */
static void same_bytes(const char *local, const char *name, const char *host)
{
	char path[512];
	ok(collected_path(name, host, path, sizeof path), "%s: a collected file", host);
	size_t a = h_read_whole(local, a_buf, sizeof a_buf);
	size_t b = h_read_whole(path, b_buf, sizeof b_buf);
	ASSERT_EQ_U64(b, a);
	memset(a_buf + 16, 0, 8);
	memset(b_buf + 16, 0, 8);
	ok(a == b && memcmp(a_buf, b_buf, a) == 0, "%s: the collected file is the local file, "
	   "byte for byte (but the header's creation time)", host);
}

/* Every "gaps: N" that collect printed is 0. */
static bool no_gaps(const char *out)
{
	for (const char *p = strstr(out, "gaps: "); p; p = strstr(p + 1, "gaps: "))
		if (strncmp(p, "gaps: 0 ", 8) != 0)
			return false;
	return true;
}

static void collect(const char *group)
{
	h_ringlog(&r, "collect", url, "-o", dir, "--group", group, NULL);
	ok(r.status == 0, "collect exits 0 (%s)", r.err);

}

int main(void)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char e[256];
	rd_kafka_conf_set(conf, "log_level", "0", e, sizeof e);
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, e, sizeof e);
	mc = rk ? rd_kafka_mock_cluster_new(rk, 3) : NULL;
	if (mc == NULL) {
		printf("Bail out! no mock cluster: %s\n", e);
		return 1;
	}
	rd_kafka_mock_topic_create(mc, TOPIC, 4, 3);
	snprintf(url, sizeof url, "kafka://%s/" TOPIC, rd_kafka_mock_cluster_bootstraps(mc));
	snprintf(dir, sizeof dir, "/tmp/rlog-collect-%d", (int)getpid());
	mkdir(dir, 0700);

	/* 1. A session streams; collected = local; the sink's counts. */
	const char *h1 = "00000000000000000000000000000001";
	const char *s1 = strdup(h_session("k1"));
	const char *p1 = strdup(h_path("k1"));
	start(s1, p1, h1, NULL);
	uint64_t w1 = write_events(s1, 20000, 0);
	h_ringlog(&r, "stop", s1, NULL);
	ASSERT_EQ(r.status, 0);
	h_check_identity(&r, p1, w1, 20000 - w1);
	ASSERT_EQ_U64(h_kv(r.out, "sink_events_acked"), w1);
	ASSERT_EQ_U64(h_kv(r.out, "sink_chunks_lost"), 0);
	ASSERT_EQ_U64(h_kv(r.out, "sink_chunks_queued"), 0);
	ok(h_kv(r.out, "sink_chunks_acked") >= 2, "chunks acknowledged: %llu",
	   (unsigned long long)h_kv(r.out, "sink_chunks_acked"));
	collect("g1");
	same_bytes(p1, s1, h1);

	/* 4. Two hosts streaming at once into the topic; a collector of a new
	 * group killed once it has written a file's state, started again:
	 * every file the local one, nothing twice, no gap. */
	const char *h5 = "00000000000000000000000000000005";
	const char *h6 = "00000000000000000000000000000006";
	const char *s5 = strdup(h_session("k5")), *s6 = strdup(h_session("k6"));
	const char *p5 = strdup(h_path("k5")), *p6 = strdup(h_path("k6"));
	start(s5, p5, h5, NULL);
	start(s6, p6, h6, NULL);
	fflush(stdout);
	pid_t child = fork();
	if (child == 0)
		_exit(write_events(s6, 100000, 0) == 100000 ? 0 : 1);
	uint64_t w5 = write_events(s5, 100000, 0);
	int cst = -1;
	waitpid(child, &cst, 0);
	ok(WIFEXITED(cst) && WEXITSTATUS(cst) == 0, "host 6 wrote all its events");
	h_ringlog(&r, "stop", s5, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "sink_events_acked"), w5);
	h_ringlog(&r, "stop", s6, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "sink_events_acked"), 100000);
	char dir2[200];
	snprintf(dir2, sizeof dir2, "%.150s", dir);
	snprintf(dir, sizeof dir, "%s/again", dir2);
	mkdir(dir, 0700);
	const char *argv[] = { h_bin(), "collect", url, "-o", dir, "--group", "g2", "--follow",
			       NULL };
	struct proc_bg bg;
	proc_start(&bg, argv);
	bool stated = false;
	for (int i = 0; i < 1000 && !stated; i++) {
		proc_sleep_ms(10);
		DIR *d = opendir(dir);
		struct dirent *e;
		while (d && (e = readdir(d)))
			stated |= strstr(e->d_name, ".state") != NULL;
		if (d)
			closedir(d);
	}
	ok(stated, "the first collector saved a file's state");
	proc_signal(&bg, SIGKILL);
	struct run killed = proc_reap(&bg);
	run_free(&killed);
	/* Its partitions come back when its session times out (6 s). */
	collect("g2");
	ok(no_gaps(r.out), "no gap after the restart: %s", r.out);
	same_bytes(p1, s1, h1);
	same_bytes(p5, s5, h5);
	same_bytes(p6, s6, h6);

	/* 2. Brokers down, then up; Produce requests failing: nothing lost. */
	const char *h2 = "00000000000000000000000000000002";
	const char *s2 = strdup(h_session("k2"));
	const char *p2 = strdup(h_path("k2"));
	start(s2, p2, h2, NULL);
	for (int b = 1; b <= 3; b++)
		rd_kafka_mock_broker_set_down(mc, b);
	uint64_t w2 = write_events(s2, 10000, 20);
	for (int b = 1; b <= 3; b++)
		rd_kafka_mock_broker_set_up(mc, b);
	rd_kafka_mock_push_request_errors(mc, 0 /* ApiKey Produce */, 4,
					  RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS,
					  RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS,
					  RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT,
					  RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS);
	w2 += write_events(s2, 10000, 0);
	h_ringlog(&r, "stop", s2, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "sink_events_acked"), w2);
	ASSERT_EQ_U64(h_kv(r.out, "sink_chunks_lost"), 0);
	collect("g1");
	same_bytes(p2, s2, h2);

	/* 3. The buffer full while the brokers are down: chunks dropped,
	 * counted, and told in the stream (DATA_LOSS cause sink). */
	const char *h3 = "00000000000000000000000000000003";
	const char *s3 = strdup(h_session("k3"));
	const char *p3 = strdup(h_path("k3"));
	start(s3, p3, h3, "1M");
	for (int b = 1; b <= 3; b++)
		rd_kafka_mock_broker_set_down(mc, b);
	uint64_t w3 = write_events(s3, 150000, 2);

	proc_sleep_ms(300);
	for (int b = 1; b <= 3; b++)
		rd_kafka_mock_broker_set_up(mc, b);
	w3 += write_events(s3, 100, 0);
	h_ringlog(&r, "stop", s3, NULL);
	ASSERT_EQ(r.status, 0);
	uint64_t acked = h_kv(r.out, "sink_events_acked"), lost = h_kv(r.out, "sink_events_lost");
	ok(lost > 0 && h_kv(r.out, "sink_chunks_lost") > 0, "chunks dropped: %llu events",
	   (unsigned long long)lost);
	ASSERT_EQ_U64(acked + lost, w3);
	collect("g1");
	char c3[512];
	ok(collected_path(s3, h3, c3, sizeof c3), "host 3: a collected file");
	struct h_summary sum;
	h_summarize(c3, &sum);
	ASSERT_EQ_U64(sum.events, acked);
	ASSERT_EQ_U64(sum.loss_events, lost);

	rd_kafka_mock_cluster_destroy(mc);
	rd_kafka_destroy(rk);
	unlink(p1);
	unlink(p2);
	unlink(p3);
	unlink(p5);
	unlink(p6);
	{
		const char *rm[] = { "rm", "-rf", dir2, NULL };
		struct run x = proc_run(rm);
		run_free(&x);
	}
	return done_testing();
}
