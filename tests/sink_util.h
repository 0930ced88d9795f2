/*
 * sink_util.h - what the multi-host sink tests share (test_sink_kafka.c,
 * test_sink_nats.c): numbered events into a session, a session started
 * with --sink, `ringlog collect` and the byte-for-byte comparison of a
 * collected file with the session's local file.  The test sets url and
 * dir before it uses them.
 */
#ifndef RLOG_TEST_SINK_UTIL_H
#define RLOG_TEST_SINK_UTIL_H

#include "harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

static char url[512];  /* the --sink URL */

/* A copy of s that stays (h_session and h_path return the same buffer at
 * each call). */
static inline const char *keep(const char *s)
{
	static char pool[16][256];
	static unsigned n;
	char *p = pool[n++ % 16];
	snprintf(p, 256, "%s", s);
	return p;
}

static char dir[256];  /* where collect writes */

/* Writes n events {seq} (ID 1024, 8 bytes) into session name; returns
 * those written (1). */
static inline uint64_t write_events(const char *name, uint64_t n, long pause_every_ms)
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

static inline void start(const char *name, const char *path, const char *host, const char *buffer)
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

/* Three sessions PREFIX1, PREFIX2, PREFIX3 (names in s, local files in p)
 * started with the sink on hosts h[0..2]. */
static inline void start_three(const char *prefix, const char *const *h, const char **s,
			       const char **p)
{
	for (int i = 0; i < 3; i++) {
		char n[16];
		snprintf(n, sizeof n, "%.8s%d", prefix, i + 1);
		s[i] = keep(h_session(n));
		p[i] = keep(h_path(n));
		start(s[i], p[i], h[i], NULL);
	}
}

/* The collected files of session name on host (their names in dir end
 * with _NAME_HOST_RUN.rlog, RUN 16 hex digits): how many, and the path of
 * the one whose run is run (0: any) in out. */
static inline int collected_runs(const char *name, const char *host, uint64_t run, char *out, size_t n)
{
	DIR *d = opendir(dir);
	if (d == NULL)
		return 0;
	char mid[128];
	snprintf(mid, sizeof mid, "_%s_%s_", name, host);
	struct dirent *e;
	int found = 0;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name), m = strlen(mid);
		const char *at = strstr(e->d_name, mid);
		if (e->d_name[0] == '.' || at == NULL || l != (size_t)(at - e->d_name) + m + 16 + 5 ||
		    strcmp(e->d_name + l - 5, ".rlog") != 0)
			continue;
		uint64_t r = strtoull(e->d_name + l - 21, NULL, 16);
		if (run == 0 || r == run)
			snprintf(out, n, "%s/%s", dir, e->d_name);
		found++;
	}
	closedir(d);
	return found;
}

/* The collected file of host: its session's one run. */
static inline bool collected_path(const char *name, const char *host, char *out, size_t n)
{
	return collected_runs(name, host, 0, out, n) == 1;
}

static uint8_t a_buf[32 << 20], b_buf[32 << 20];

/* The collected file equals the local one but for created_realtime_ns. */
static inline void same_bytes(const char *local, const char *name, const char *host)
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

/* The collected file at path equals the local file (but +16..23). */
static inline bool same_file(const char *local, const char *path)
{
	size_t a = h_read_whole(local, a_buf, sizeof a_buf);
	size_t b = h_read_whole(path, b_buf, sizeof b_buf);
	memset(a_buf + 16, 0, 8);
	memset(b_buf + 16, 0, 8);
	return a == b && memcmp(a_buf, b_buf, a) == 0;
}

/* Two runs of one session (local files pa and pb, wa and wb events)
 * collected into dir: each run's local file is exactly one of the
 * collected files, byte for byte, and each file reads whole with the
 * events of one run and no loss. */
static inline void two_runs(const char *pa, const char *pb, uint64_t wa, uint64_t wb)
{
	int match_a = 0, match_b = 0;
	char path[512];
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.' || !strstr(de->d_name, ".rlog"))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		match_a += same_file(pa, path);
		match_b += same_file(pb, path);
		struct h_summary sum;
		h_summarize(path, &sum);
		ok(sum.damage == 0 && sum.loss_records == 0 &&
		   (sum.events == wa || sum.events == wb), "%s: %llu events, no loss, no damage",
		   de->d_name, (unsigned long long)sum.events);
	}
	if (d)
		closedir(d);
	ok(match_a == 1 && match_b == 1, "run 1 and run 2 each collected byte for byte (%d, %d)",
	   match_a, match_b);
}

/* Every "gaps: N" that collect printed is 0. */
static inline bool no_gaps(const char *out)
{
	for (const char *p = strstr(out, "gaps: "); p; p = strstr(p + 1, "gaps: "))
		if (strncmp(p, "gaps: 0 ", 8) != 0)
			return false;
	return true;
}

static inline void collect(const char *group)
{
	h_ringlog(&r, "collect", url, "-o", dir, "--group", group, NULL);
	ok(r.status == 0, "collect exits 0 (%s)", r.err);

}

/* Session s (file p, host id h) streams 20000 numbered events; at stop
 * the identity holds, the sink acknowledged every event written and lost
 * no chunk; collected by group, the file is the local one. */
static inline void stream_and_collect(const char *s, const char *p, const char *h, const char *group)
{
	start(s, p, h, NULL);
	uint64_t w = write_events(s, 20000, 0);
	h_ringlog(&r, "stop", s, NULL);
	ASSERT_EQ(r.status, 0);
	h_check_identity(&r, p, w, 20000 - w);
	ASSERT_EQ_U64(h_kv(r.out, "sink_events_acked"), w);
	ASSERT_EQ_U64(h_kv(r.out, "sink_chunks_lost"), 0);
	ASSERT_EQ_U64(h_kv(r.out, "sink_chunks_queued"), 0);
	ok(h_kv(r.out, "sink_chunks_acked") >= 2, "chunks acknowledged: %llu",
	   (unsigned long long)h_kv(r.out, "sink_chunks_acked"));
	collect(group);
	same_bytes(p, s, h);
}

/* A collector of group group (a Kafka consumer group, a JetStream durable),
 * following, into dir; with --gap-wait gap_wait unless NULL. */
static inline void collector(struct proc_bg *p, const char *group, const char *gap_wait)
{
	const char *argv[] = { h_bin(), "collect", url, "-o", dir, "--group", group, "--follow",
			       gap_wait ? "--gap-wait" : NULL, gap_wait, NULL };
	proc_start(p, argv);
}

/* The files whose state is saved in dir. */
static inline int states_saved(void)
{
	int n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += strstr(e->d_name, ".state") != NULL && strstr(e->d_name, ".tmp") == NULL;
	if (d)
		closedir(d);
	return n;
}

/* A collector of group group, following, killed (SIGKILL) as soon as it
 * has saved a file's state in dir. */
static inline void collect_killed(const char *group)
{
	struct proc_bg bg;
	collector(&bg, group, NULL);
	bool stated = false;
	for (int i = 0; i < 1000 && !stated; i++) {
		proc_sleep_ms(10);
		stated = states_saved() > 0;
	}
	ok(stated, "the first collector saved a file's state");
	proc_signal(&bg, SIGKILL);
	struct run killed = proc_reap(&bg);
	run_free(&killed);
}

/* Session name's daemon: its threads other than its main one (*others)
 * that do not block SIGTERM or SIGINT (/proc/PID/task/TID/status,
 * SigBlk): a signal sent to the daemon may land on any thread that does
 * not block it, and then the daemon's loop does not see it at once. */
static inline int threads_taking_signals(const char *name, int *others)
{
	static struct h_run q;
	h_ringlog(&q, "query", name, NULL);
	pid_t pid = (pid_t)h_kv(q.out, "daemon_pid");
	char path[128];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	int bad = 0;
	*others = 0;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.' || atoi(e->d_name) == (int)pid)
			continue;
		(*others)++;
		char st[400], line[256];
		snprintf(st, sizeof st, "/proc/%d/task/%s/status", (int)pid, e->d_name);
		FILE *f = fopen(st, "r");
		unsigned long long blk = 0;
		while (f && fgets(line, sizeof line, f))
			if (strncmp(line, "SigBlk:", 7) == 0)
				blk = strtoull(line + 7, NULL, 16);
		if (f)
			fclose(f);
		unsigned long long need = (1ull << (SIGTERM - 1)) | (1ull << (SIGINT - 1));
		if (f && (blk & need) != need) {
			diag("thread %s takes SIGTERM or SIGINT (SigBlk %llx)", e->d_name, blk);
			bad++;
		}
	}
	if (d)
		closedir(d);
	return bad;
}

/* The n bytes of the file at path in buf (at most cap), quietly. */
static inline size_t quiet_read(const char *path, uint8_t *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	ssize_t k;
	while (fd >= 0 && n < cap && (k = read(fd, buf + n, cap - n)) > 0)
		n += (size_t)k;
	if (fd >= 0)
		close(fd);
	return n;
}

/* The collected file of host h (session s) is the local file p (but the
 * file header's creation time), checked quietly while it grows. */
static inline bool collected_same(const char *s, const char *h, const char *p)
{
	char path[512];
	if (!collected_path(s, h, path, sizeof path))
		return false;
	size_t a = quiet_read(p, a_buf, sizeof a_buf), b = quiet_read(path, b_buf, sizeof b_buf);
	memset(a_buf + 16, 0, 8);
	memset(b_buf + 16, 0, 8);
	return a == b && a > 16 && memcmp(a_buf, b_buf, a) == 0;
}

/* Waits (up to ms) until each host's collected file is its local file
 * (s, h, p: sessions, hosts, local files). */
static inline bool all_whole(const char *const *s, const char *const *h, const char *const *p,
			     int ms)
{
	for (int t = 0; t < ms / 10; t++) {
		int whole = 0;
		for (int i = 0; i < 3; i++)
			whole += collected_same(s[i], h[i], p[i]);
		if (whole == 3)
			return true;
		proc_sleep_ms(10);
	}
	return false;
}

/* Collectors a and b stopped (SIGTERM): both exit 0, neither saw a gap. */
static inline void stop_two(struct proc_bg *a, struct proc_bg *b)
{
	struct run ra = proc_stop(a, SIGTERM), rb = proc_stop(b, SIGTERM);
	ok(ra.status == 0 && rb.status == 0, "both collectors exit 0 (%d %s, %d %s)", ra.status,
	   ra.err, rb.status, rb.err);
	ok(no_gaps(ra.out) && no_gaps(rb.out), "no collector saw a gap: %s%s", ra.out, rb.out);
	run_free(&ra);
	run_free(&rb);
}

/* Waits until session name's sink has acknowledged n events. */
static inline void acked(const char *name, uint64_t n)
{
	for (int i = 0; i < 500; i++) {
		h_ringlog(&r, "query", name, NULL);
		if (h_kv(r.out, "sink_events_acked") == n)
			break;
		proc_sleep_ms(20);
	}
	ASSERT_EQ_U64(h_kv(r.out, "sink_events_acked"), n);
}

#endif
