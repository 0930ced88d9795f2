/*
 * test_sink_nats.c - `ringlog start --sink nats://...` and `ringlog
 * collect nats://...` against Debian's nats-server, started here with
 * JetStream on loopback: the collected file is, byte for byte, the
 * session's local file (but the file header's creation time, +16); the
 * server killed and started again mid-stream loses nothing and duplicates
 * nothing (Nats-Msg-Id); a collector killed once it saved a state and
 * started again (its durable consumer) writes every chunk once.
 */
#include "sink_util.h"

#include "nats_server.h"
#include "session/session.h"

#include <dirent.h>
#include <sys/stat.h>

/* The next sessions publish to subject rl.SUB, collected into dir2/SUB. */
static void into(const char *dir2, const char *sub)
{
	snprintf(dir, sizeof dir, "%s/%s", dir2, sub);
	mkdir(dir, 0700);
	snprintf(url, sizeof url, "nats://127.0.0.1:%d/rl.%s", port, sub);
}

/* Collected by group, session s of host h is one file that reads whole
 * (summary in *sum) with events events and loss_events lost. */
static void collect_whole(const char *group, const char *s, const char *h,
			  struct h_summary *sum, uint64_t events, uint64_t loss_events)
{
	collect(group);
	char path[512];
	ok(collected_path(s, h, path, sizeof path), "%s: a collected file", h);
	h_summarize(path, sum);
	ASSERT_EQ(sum->open_err, 0);
	ASSERT_EQ_U64(sum->damage, 0);
	ASSERT_EQ_U64(sum->events, events);
	ASSERT_EQ_U64(sum->loss_events, loss_events);
}

int main(void)
{
	if (access("/usr/sbin/nats-server", X_OK) != 0 && access("/usr/bin/nats-server", X_OK) != 0)
		skip_test("no nats-server (scripts/deps.sh installs it)");
	port = free_port();
	snprintf(sd, sizeof sd, "/tmp/rlog-nats-%d", (int)getpid());
	snprintf(dir, sizeof dir, "/tmp/rlog-collect-nats-%d", (int)getpid());
	mkdir(sd, 0700);
	mkdir(dir, 0700);
	snprintf(url, sizeof url, "nats://127.0.0.1:%d/rl.test", port);
	server_start();

	/* 1. A session streams; collected = local; the sink's counts. */
	const char *h1 = "00000000000000000000000000000011";
	const char *s1 = keep(h_session("n1"));
	const char *p1 = keep(h_path("n1"));
	stream_and_collect(s1, p1, h1, "c1");

	/* 2. The server killed mid-stream and started again: every event
	 * acknowledged once, the collected file the local one. */
	const char *h2 = "00000000000000000000000000000012";
	const char *s2 = keep(h_session("n2"));
	const char *p2 = keep(h_path("n2"));
	start(s2, p2, h2, NULL);
	uint64_t w2 = write_events(s2, 10000, 0);
	h_ringlog(&r, "flush", s2, NULL);
	server_kill();
	w2 += write_events(s2, 10000, 10);
	proc_sleep_ms(500);
	server_start();
	w2 += write_events(s2, 10000, 0);
	h_ringlog(&r, "stop", s2, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "sink_events_acked"), w2);
	ASSERT_EQ_U64(h_kv(r.out, "sink_chunks_lost"), 0);
	/* Retried or not (libnats buffers while it reconnects): not asserted. */
	diag("sink_retries: %llu", (unsigned long long)h_kv(r.out, "sink_retries"));
	collect("c1");
	same_bytes(p2, s2, h2);

	/* 3. A collector (a new durable) killed once it saved a file's state,
	 * started again: every file once, no gap. */
	char dir2[200];
	snprintf(dir2, sizeof dir2, "%.150s", dir);
	snprintf(dir, sizeof dir, "%s/again", dir2);
	mkdir(dir, 0700);
	collect_killed("c2");
	proc_sleep_ms(2500); /* its unacknowledged chunks come back after AckWait (2 s) */
	collect("c2");
	ok(no_gaps(r.out), "no gap after the restart: %s", r.out);
	same_bytes(p1, s1, h1);
	same_bytes(p2, s2, h2);

	/* 4. A session stopped and started again under its name on the same
	 * host: two runs, two files, each its local file. */
	const char *h4 = "00000000000000000000000000000014";
	const char *s4 = keep(h_session("n4"));
	const char *p4a = keep(h_path("n4a")), *p4b = keep(h_path("n4b"));
	snprintf(dir, sizeof dir, "%s/runs", dir2);
	mkdir(dir, 0700);
	snprintf(url, sizeof url, "nats://127.0.0.1:%d/rl.runs", port);
	start(s4, p4a, h4, NULL);
	uint64_t w4a = write_events(s4, 3000, 0);
	h_ringlog(&r, "stop", s4, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "sink_events_acked"), w4a);
	start(s4, p4b, h4, NULL);
	uint64_t w4b = write_events(s4, 5000, 0);
	h_ringlog(&r, "stop", s4, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "sink_events_acked"), w4b);
	collect("c4");
	char p4[512];
	ASSERT_EQ(collected_runs(s4, h4, 0, p4, sizeof p4), 2);
	two_runs(p4a, p4b, w4a, w4b);
	unlink(p4a);
	unlink(p4b);

	/* 5. The first chunk's block 0 finds no memory
	 * (RINGLOG_TEST_SINK_NOMEM): the block that began it is lost, told in
	 * the next chunk, which is a METADATA chunk with its block 0; the
	 * collected file reads whole with the events acknowledged and the
	 * loss counted.  And the sender thread and libnats's threads block
	 * the daemon's signals. */
	const char *h5 = "00000000000000000000000000000015";
	const char *s5 = keep(h_session("n5"));
	const char *p5 = keep(h_path("n5"));
	into(dir2, "nomem");
#if RLOG_TEST_HOOKS
	setenv("RINGLOG_TEST_SINK_NOMEM", "1", 1);
#endif
	start(s5, p5, h5, NULL);
	unsetenv("RINGLOG_TEST_SINK_NOMEM");
	int others = 0;
	ASSERT_EQ(threads_taking_signals(s5, &others), 0);
	ok(others >= 2, "the sender's and libnats's threads are there: %d", others);
	uint64_t w5 = write_events(s5, 20000, 0);
	h_ringlog(&r, "stop", s5, NULL);
	ASSERT_EQ(r.status, 0);
	h_check_identity(&r, p5, w5, 20000 - w5);
	uint64_t acked5 = h_kv(r.out, "sink_events_acked"), lost5 = h_kv(r.out, "sink_events_lost");
	ASSERT_EQ_U64(acked5 + lost5, w5);
	ASSERT_EQ_U64(h_kv(r.out, "sink_chunks_queued"), 0);
	struct h_summary sum5;
	collect_whole("c5", s5, h5, &sum5, acked5, lost5);
#if RLOG_TEST_HOOKS
	ok(lost5 > 0 || sum5.loss_records == 1, "the first block's loss is told: %llu events",
	   (unsigned long long)lost5);
#endif
	unlink(p5);

	/* 6. --sink-chunk: its bounds, one line each; a chunk NATS cannot take
	 * (over the server's max_payload, 1 MiB) refused at start; at 64K
	 * the chunks are 64K and a buffer at most, the identity holds and the
	 * collected file is the local one, byte for byte. */
	const char *h6 = "00000000000000000000000000000016";
	const char *s6 = keep(h_session("n6"));
	const char *p6 = keep(h_path("n6"));
	into(dir2, "chunk");
	const char *bad_sizes[] = { "32K", "5M", "64X" };
	for (int i = 0; i < 3; i++) {
		h_ringlog(&r, "start", s6, "-o", p6, "--sink", url, "--host-id", h6,
			  "--sink-chunk", bad_sizes[i], NULL);
		char want[160];
		snprintf(want, sizeof want, "ringlog: start: --sink-chunk '%s': expected a size from "
			 "64K to 4M\n", bad_sizes[i]);
		ok(r.status != 0 && strcmp(r.err, want) == 0, "--sink-chunk %s refused: %s",
		   bad_sizes[i], r.err);
	}
	/* A subject is tokens of [A-Za-z0-9_-] between single dots: no space
	 * (which JetStream would refuse at every publish), no wildcard. */
	const char *bad_urls[] = { "nats://127.0.0.1:1/bad subject", "nats://127.0.0.1:1/a..b",
				   "nats://127.0.0.1:1/rl.*", "nats://127.0.0.1:1/.", "nats://a b/x" };
	for (int i = 0; i < 5; i++) {
		h_ringlog(&r, "start", s6, "-o", p6, "--sink", bad_urls[i], "--host-id", h6, NULL);
		char want[300];
		snprintf(want, sizeof want, "ringlog: start: --sink '%s': expected "
			 "nats://SERVERS/SUBJECT (SUBJECT of [A-Za-z0-9_-] and dots)\n", bad_urls[i]);
		ok(r.status != 0 && strcmp(r.err, want) == 0, "--sink %s refused: %s", bad_urls[i],
		   r.err);
	}
	h_ringlog(&r, "start", s6, "-o", p6, "--sink", url, "--host-id", h6, "--sink-buffer", "1M",
		  "--sink-chunk", "1M", NULL);
	ok(r.status != 0 && strcmp(r.err, "ringlog: start: --sink-chunk '1M': --sink-buffer must "
	   "hold two chunks at least\n") == 0, "a --sink-buffer of less than two chunks: %s", r.err);
	h_ringlog(&r, "start", s6, "-o", p6, "--sink-chunk", "64K", NULL);
	ok(r.status != 0 && strcmp(r.err, "ringlog: start: --host-id, --sink-buffer and "
	   "--sink-chunk go with --sink\n") == 0, "--sink-chunk without --sink: %s", r.err);
	h_ringlog(&r, "start", s6, "-o", p6, "--buffer-size", "4", "--sink", url, "--host-id", h6,
		  "--sink-chunk", "1M", NULL);
	char want6[900];
	snprintf(want6, sizeof want6, "ringlog: start: %s: opening the sink %s: --sink-chunk 1024K: "
		 "chunks of up to 1056768 bytes exceed the server's max_payload (1048576): "
		 "Message too long\n", s6, url);
	ok(r.status != 0 && strcmp(r.err, want6) == 0, "--sink-chunk 1M to NATS refused: %s",
	   r.err);
	unlink(p6);
	h_ringlog(&r, "start", s6, "-o", p6, "--buffer-size", "4", "--sink", url, "--host-id", h6,
		  "--sink-chunk", "64K", NULL);
	ASSERT_EQ(r.status, 0);
	uint64_t w6 = write_events(s6, 20000, 0);
	h_ringlog(&r, "stop", s6, NULL);
	ASSERT_EQ(r.status, 0);
	h_check_identity(&r, p6, w6, 20000 - w6);
	ASSERT_EQ_U64(h_kv(r.out, "sink_events_acked"), w6);
	ASSERT_EQ_U64(h_kv(r.out, "sink_chunks_lost"), 0);
	uint64_t ch6 = h_kv(r.out, "sink_chunks_acked"), by6 = h_kv(r.out, "sink_bytes_acked");
	/* Every chunk but those a pass or the stop ended holds 64K or more,
	 * none more than 64K, a buffer and the headers. */
	ok(ch6 >= by6 / (64 * 1024 + 8192) && ch6 >= 5, "chunks of about 64K: %llu chunks, %llu "
	   "bytes", (unsigned long long)ch6, (unsigned long long)by6);
	collect("c6");
	same_bytes(p6, s6, h6);
	unlink(p6);

	/* 7. A sink added to a running session (`ringlog update --sink`): its
	 * stream begins with a METADATA chunk (seq 1) that says what the
	 * session wrote before; the collected file reads whole, the events
	 * after the update once each, and one DATA_LOSS of cause sink of
	 * exactly the events before it.  A second sink is refused. */
	const char *h7 = "00000000000000000000000000000017";
	const char *s7 = keep(h_session("n7"));
	const char *p7 = keep(h_path("n7"));
	into(dir2, "late");
	unlink(p7);
	h_ringlog(&r, "start", s7, "-o", p7, "--buffer-size", "4", NULL);
	ASSERT_EQ(r.status, 0);
	uint64_t w7a = write_events(s7, 3000, 0);
	h_ringlog(&r, "flush", s7, NULL);
	h_ringlog(&r, "update", s7, "--sink", url, "--host-id", h7, NULL);
	ok(r.status == 0 && r.err[0] == '\0', "update --sink: exit 0 (%d %s)", r.status, r.err);
	h_ringlog(&r, "update", s7, "--sink", url, "--host-id", h7, NULL);
	char want7[700];
	snprintf(want7, sizeof want7, "ringlog: update: %s: --sink %s: the session has a sink "
		 "already (one a session)\n", s7, url);
	ok(r.status == 1 && strcmp(r.err, want7) == 0, "a second sink refused: %s", r.err);
	uint64_t w7b = write_events(s7, 5000, 0);
	h_ringlog(&r, "stop", s7, NULL);
	ASSERT_EQ(r.status, 0);
	h_check_identity(&r, p7, w7a + w7b, 8000 - w7a - w7b);
	ASSERT_EQ_U64(h_kv(r.out, "sink_events_acked"), w7b);
	ASSERT_EQ_U64(h_kv(r.out, "sink_chunks_lost"), 0);
	struct h_summary sum7;
	collect_whole("c7", s7, h7, &sum7, w7b, w7a);
	ASSERT_EQ_U64(sum7.loss_records, 1);
	unlink(p7);

	/* 8. No server where the sink points (a port nothing listens on):
	 * start and update return at once (libnats retries in its own
	 * thread, not in the daemon's loop), the session drains into its
	 * file, and at stop every event the sink could not send is counted
	 * lost. */
	const char *h8 = "00000000000000000000000000000018";
	const char *s8 = keep(h_session("n8"));
	const char *p8 = keep(h_path("n8"));
	const char *s8b = keep(h_session("n8b"));
	const char *p8b = keep(h_path("n8b"));
	char dead[128];
	snprintf(dead, sizeof dead, "nats://127.0.0.1:%d/rl.dead", free_port());
	unlink(p8);
	unlink(p8b);
	setenv("RINGLOG_TEST_SINK_DRAIN_MS", "200", 1);
	long long t0 = proc_now_ms();
	h_ringlog(&r, "start", s8, "-o", p8, "--buffer-size", "4", "--sink", dead, "--host-id", h8,
		  NULL);
	double st8 = (double)(proc_now_ms() - t0) / 1e3;
	ok(r.status == 0 && st8 < 10.0, "start with no server: exit %d in %.1f s (%s)", r.status,
	   st8, r.err);
	h_ringlog(&r, "start", s8b, "-o", p8b, "--buffer-size", "4", NULL);
	ASSERT_EQ(r.status, 0);
	/* The request page is the owner's to write, but the daemon checks
	 * what it reads there as the CLI checks its options: each of these
	 * is refused, and no sink is added. */
	static const char *const bad_req[] = {
		"00000000000000000000000000000018 -1 0 nats://127.0.0.1:1/x",
		"00000000000000000000000000000018 1 0 nats://127.0.0.1:1/x",
		"00000000000000000000000000000018 67108864 4295032832 nats://127.0.0.1:1/x",
		"00000000000000000000000000000018 67108864 1024 nats://127.0.0.1:1/x",
		"00000000000000000000000000000018 67108864 0 ",
		"0000000000000000000000000000001 67108864 0 nats://127.0.0.1:1/x",
		"0000000000000000000000000000001g 67108864 0 nats://127.0.0.1:1/x",
		"00000000000000000000000000000018 99999999999999999999999 0 nats://127.0.0.1:1/x",
	};
	for (size_t i = 0; i < sizeof bad_req / sizeof *bad_req; i++) {
		char m[256];
		int e = rlog__session_sink_add(s8b, bad_req[i], m, sizeof m);
		ok(e == -EINVAL && strcmp(m, "the request is not one this daemon knows") == 0,
		   "a bad request refused: '%s': %d %s", bad_req[i], e, m);
	}
	h_ringlog(&r, "query", s8b, NULL);
	ok(strstr(r.out, "sink_") == NULL, "no sink was added");
	t0 = proc_now_ms();
	h_ringlog(&r, "update", s8b, "--sink", dead, "--host-id", h8, NULL);
	st8 = (double)(proc_now_ms() - t0) / 1e3;
	ok(r.status == 0 && st8 < 10.0, "update --sink with no server: exit %d in %.1f s (%s)",
	   r.status, st8, r.err);
	h_ringlog(&r, "query", s8b, NULL);
	ok(r.status == 0, "the daemon answers after it: %s", r.err);
	uint64_t w8 = write_events(s8, 5000, 0), w8b = write_events(s8b, 5000, 0);
	h_ringlog(&r, "stop", s8, NULL);
	ASSERT_EQ(r.status, 0);
	h_check_identity(&r, p8, w8, 5000 - w8);
	ASSERT_EQ_U64(h_kv(r.out, "sink_events_acked"), 0);
	ASSERT_EQ_U64(h_kv(r.out, "sink_events_lost"), w8);
	h_ringlog(&r, "stop", s8b, NULL);
	ASSERT_EQ(r.status, 0);
	h_check_identity(&r, p8b, w8b, 5000 - w8b);
	ASSERT_EQ_U64(h_kv(r.out, "sink_events_acked"), 0);
	ASSERT_EQ_U64(h_kv(r.out, "sink_events_lost"), w8b);
	unsetenv("RINGLOG_TEST_SINK_DRAIN_MS");
	unlink(p8);
	unlink(p8b);
	/* collect from there: one line after a few seconds, exit 1. */
	t0 = proc_now_ms();
	h_ringlog(&r, "collect", dead, "-o", dir, NULL);
	st8 = (double)(proc_now_ms() - t0) / 1e3;
	char want8[300];
	snprintf(want8, sizeof want8, "ringlog: collect: %s: cannot reach the NATS server %.*s\n",
		 dead, (int)(strchr(dead + 7, '/') - (dead + 7)), dead + 7);
	ok(r.status == 1 && strcmp(r.err, want8) == 0 && st8 < 20.0,
	   "collect with no server: one line, exit 1, in %.1f s (%d %s)", st8, r.status, r.err);

	server_kill();
	unlink(p1);
	unlink(p2);
	{
		const char *rm[] = { "rm", "-rf", dir2, NULL };
		struct run x = proc_run(rm);
		run_free(&x);
	}
	{
		const char *rm[] = { "rm", "-rf", sd, NULL };
		struct run x = proc_run(rm);
		run_free(&x);
	}
	return done_testing();
}
