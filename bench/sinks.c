/*
 * sinks.c - a session through each multi-host sink against its local file
 * alone (docs/PERFORMANCE.md, "Multi-host sinks"): the same events (16-byte
 * records, one writer thread) into a session with a log file in /dev/shm,
 * (a) alone, (b) with --sink kafka:// to librdkafka's mock cluster (three
 * brokers in this process, on loopback), (c) with --sink nats:// to
 * Debian's nats-server (JetStream, its store in /dev/shm); each run ends
 * when the file has every event and the sink acknowledged every one (a
 * `ringlog flush`, then `query` until sink_events_acked is events_written).
 * Prints, per run, MB/s and events/s of record bytes end to end, and the
 * daemon's CPU seconds per MB (its /proc stat, before stop).
 *
 * With CHUNKS (a comma-separated list of --sink-chunk sizes, 64K,256K,...)
 * each sink runs once per size, labelled kafka_SIZE and nats_SIZE, and the
 * file alone runs first and last; nats-server then gets a max_payload of
 * 8 MiB (its default, 1 MiB, takes no chunk of 1M: the sink refuses it).
 *
 *   RINGLOG_BIN=build/src/cli/ringlog build/bench/bench_sinks [EVENTS [CHUNKS]]
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "ringlog.h"

static const char *bin;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The value of "key: N" in `ringlog query name`, or -1. */
static long long query(const char *name, const char *key)
{
	char cmd[512], line[512];
	snprintf(cmd, sizeof cmd, "%s query %s", bin, name);
	FILE *f = popen(cmd, "r");
	long long v = -1;
	size_t k = strlen(key);
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, key, k) == 0 && line[k] == ':')
			v = atoll(line + k + 1);
	if (f)
		pclose(f);
	return v;
}

static int sh(const char *fmt, const char *a, const char *b, const char *c)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, fmt, bin, a, b, c);
	return system(cmd);
}

/* The daemon's CPU seconds (utime + stime). */
static double cpu_of(long long pid)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%lld/stat", pid);
	FILE *f = fopen(p, "r");
	if (!f)
		return -1;
	char buf[1024];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *q = strrchr(buf, ')');
	unsigned long ut = 0, st = 0;
	if (!q || sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static void run(const char *label, const char *sink, const char *chunk, uint64_t events)
{
	char name[64], path[128];
	snprintf(name, sizeof name, "bsink-%s-%d", label, (int)getpid());
	snprintf(path, sizeof path, "/dev/shm/%s.rlog", name);
	unlink(path);
	char extra[600] = "";
	if (sink)
		snprintf(extra, sizeof extra, "--sink %s --host-id 000000000000000000000000000000ab"
			 "%s%s", sink, chunk ? " --sink-chunk " : "", chunk ? chunk : "");
	if (sh("%s start %s -o %s --buffer-size 64 --buffers 1024 %s >/dev/null", name, path,
	       extra) != 0) {
		printf("%s: start failed\n", label);
		return;
	}
	long long pid = query(name, "daemon_pid");
	double cpu0 = cpu_of(pid), t0 = now_s();
	rlog_attach(name);
	uint64_t v[2] = { 0, 0 }, written = 0;
	for (uint64_t i = 0; i < events; i++) {
		v[0] = i;
		written += rlog_write(1024, v, sizeof v) == 1;
	}
	rlog_detach();
	sh("%s flush %s >/dev/null%s%s", name, "", "");
	long long acked = 0;
	for (int i = 0; sink && i < 6000; i++) {
		acked = query(name, "sink_events_acked");
		if (acked >= (long long)written)
			break;
		usleep(5000);
	}
	double t1 = now_s(), cpu1 = cpu_of(pid);
	long long ew = query(name, "events_written");
	sh("%s stop %s >/dev/null%s%s", name, "", "");
	unlink(path);
	double mb = (double)written * 24.0 / 1e6; /* header, timestamp, 16-byte payload */
	printf("%s_events: %" PRIu64 "\n%s_events_written: %lld\n%s_sink_events_acked: %lld\n",
	       label, written, label, ew, label, sink ? acked : -1);
	printf("%s_s: %.3f\n%s_events_per_s: %.0f\n%s_mb_per_s: %.1f\n%s_daemon_cpu_s_per_mb: %.5f\n",
	       label, t1 - t0, label, (double)written / (t1 - t0), label, mb / (t1 - t0), label,
	       (cpu1 - cpu0) / mb);
}

int main(int argc, char **argv)
{
	bin = getenv("RINGLOG_BIN");
	if (bin == NULL) {
		fprintf(stderr, "bench_sinks: RINGLOG_BIN is not set\n");
		return 2;
	}
	uint64_t events = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
	/* The chunk sizes, or one run at the default. */
	char chunkbuf[256], *chunks[16];
	int nchunks = 0;
	snprintf(chunkbuf, sizeof chunkbuf, "%s", argc > 2 ? argv[2] : "");
	for (char *save = NULL, *t = strtok_r(chunkbuf, ",", &save); t && nchunks < 16;
	     t = strtok_r(NULL, ",", &save))
		chunks[nchunks++] = t;
	if (nchunks == 0)
		chunks[nchunks++] = NULL;
	char label[64];
	run("file", NULL, NULL, events);

	char e[256];
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	rd_kafka_conf_set(conf, "log_level", "0", e, sizeof e);
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, e, sizeof e);
	rd_kafka_mock_cluster_t *mc = rk ? rd_kafka_mock_cluster_new(rk, 3) : NULL;
	if (mc) {
		rd_kafka_mock_topic_create(mc, "bench", 4, 3);
		char url[512];
		snprintf(url, sizeof url, "kafka://%s/bench", rd_kafka_mock_cluster_bootstraps(mc));
		for (int i = 0; i < nchunks; i++) {
			snprintf(label, sizeof label, "kafka%s%s", chunks[i] ? "_" : "",
				 chunks[i] ? chunks[i] : "");
			run(label, url, chunks[i], events);
		}
		rd_kafka_mock_cluster_destroy(mc);
	}
	if (rk)
		rd_kafka_destroy(rk);

	char sd[64];
	snprintf(sd, sizeof sd, "/dev/shm/bsink-nats-%d", (int)getpid());
	mkdir(sd, 0700);
	char ncf[128];
	snprintf(ncf, sizeof ncf, "%s.conf", sd);
	FILE *cf = fopen(ncf, "w");
	if (cf) {
		fprintf(cf, "max_payload: 8388608\n");
		fclose(cf);
	}
	pid_t ns = fork();
	if (ns == 0) {
		if (freopen("/dev/null", "w", stderr) == NULL)
			_exit(127);
		if (chunks[0])
			execlp("nats-server", "nats-server", "-c", ncf, "-js", "-sd", sd, "-p",
			       "14222", "-a", "127.0.0.1", (char *)NULL);
		else
			execlp("nats-server", "nats-server", "-js", "-sd", sd, "-p", "14222", "-a",
			       "127.0.0.1", (char *)NULL);
		_exit(127);
	}
	usleep(500000);
	for (int i = 0; i < nchunks; i++) {
		snprintf(label, sizeof label, "nats%s%s", chunks[i] ? "_" : "",
			 chunks[i] ? chunks[i] : "");
		run(label, "nats://127.0.0.1:14222/bench.sinks", chunks[i], events);
	}
	if (chunks[0])
		run("file_again", NULL, NULL, events);
	unlink(ncf);
	kill(ns, SIGTERM);
	waitpid(ns, NULL, 0);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", sd);
	return system(cmd) == 0 ? 0 : 1;
}
