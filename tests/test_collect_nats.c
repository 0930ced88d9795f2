/*
 * test_collect_nats.c - `ringlog collect nats://...` against Debian's
 * nats-server (JetStream, loopback) where one collector does not see a
 * session's chunks alone, or from the first (docs/SESSIONS.md,
 * "Multi-host sinks"):
 *   1. three hosts stream while two collectors share one durable consumer
 *      and one DIR, one of them killed mid-stream and started again: each
 *      collected file is its host's local file byte for byte (every
 *      numbered event once), and no collector reported a gap (a chunk
 *      whose predecessors another collector holds waits for them);
 *   2. a collector that starts after the stream's first messages were
 *      purged: one DATA_LOSS of cause sink with exactly the events they
 *      held, the rest of the file whole and decoded by dump.
 */
#include "sink_util.h"

#include "nats_server.h"

#include <nats/nats.h>

int main(void)
{
	if (access("/usr/sbin/nats-server", X_OK) != 0 && access("/usr/bin/nats-server", X_OK) != 0)
		skip_test("no nats-server (scripts/deps.sh installs it)");
	port = free_port();
	snprintf(sd, sizeof sd, "/tmp/rlog-cnats-%d", (int)getpid());
	char top[200];
	snprintf(top, sizeof top, "/tmp/rlog-collect-cnats-%d", (int)getpid());
	mkdir(sd, 0700);
	mkdir(top, 0700);
	server_start();

	/* 1. Three hosts, two collectors on one durable and one DIR. */
	snprintf(url, sizeof url, "nats://127.0.0.1:%d/rl.shared", port);
	snprintf(dir, sizeof dir, "%s/shared", top);
	mkdir(dir, 0700);
	const char *h[3] = { "00000000000000000000000000000021", "00000000000000000000000000000022",
			     "00000000000000000000000000000023" };
	const char *s[3], *p[3];
	start_three("c", h, s, p);
	/* A gap wait far above what a held chunk waits here (the other
	 * collector writing, or a killed one's chunks back after AckWait):
	 * a false gap would need it, a chunk never written stalls the files
	 * (not whole at the end). */
	struct proc_bg a, b;
	collector(&a, "shared", "30s");
	collector(&b, "shared", "30s");
	fflush(stdout);
	pid_t kids[2];
	for (int i = 0; i < 2; i++) {
		kids[i] = fork();
		if (kids[i] == 0)
			_exit(write_events(s[i + 1], 30000, 20) == 30000 ? 0 : 1);
	}
	uint64_t w0 = write_events(s[0], 10000, 20);
	h_ringlog(&r, "flush", s[0], NULL);
	bool stated = false;
	for (int i = 0; i < 500 && !(stated = states_saved() > 0); i++)
		proc_sleep_ms(10);
	ok(stated, "a collector saved a file's state");
	/* Mid-stream: one collector killed, then started again. */
	proc_signal(&a, SIGKILL);
	struct run killed = proc_reap(&a);
	run_free(&killed);
	w0 += write_events(s[0], 10000, 20);
	collector(&a, "shared", "30s");
	w0 += write_events(s[0], 10000, 20);
	for (int i = 0; i < 2; i++) {
		int st = -1;
		waitpid(kids[i], &st, 0);
		ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "host %d wrote its 30000 events", i + 2);
	}
	for (int i = 0; i < 3; i++) {
		h_ringlog(&r, "stop", s[i], NULL);
		ASSERT_EQ(r.status, 0);
		ASSERT_EQ_U64(h_kv(r.out, "sink_events_acked"), i == 0 ? w0 : 30000);
		ASSERT_EQ_U64(h_kv(r.out, "sink_chunks_lost"), 0);
	}
	/* Collected as they come: wait until every file is whole. */
	ok(all_whole(s, h, p, 30000), "every file whole");
	stop_two(&a, &b);
	for (int i = 0; i < 3; i++)
		same_bytes(p[i], s[i], h[i]);

	/* 2. A collector that joins after the stream's first chunks were
	 * purged. */
	snprintf(url, sizeof url, "nats://127.0.0.1:%d/rl.late", port);
	snprintf(dir, sizeof dir, "%s/late", top);
	mkdir(dir, 0700);
	const char *hl = "00000000000000000000000000000024";
	const char *sl = keep(h_session("late"));
	const char *pl = keep(h_path("late"));
	start(sl, pl, hl, NULL);
	uint64_t w1 = write_events(sl, 5000, 0);
	h_ringlog(&r, "flush", sl, NULL);
	acked(sl, w1);
	{
		char su[64];
		snprintf(su, sizeof su, "nats://127.0.0.1:%d", port);
		natsConnection *nc = NULL;
		jsCtx *js = NULL;
		jsErrCode je = 0;
		ok(natsConnection_ConnectTo(&nc, su) == NATS_OK &&
		   natsConnection_JetStream(&js, nc, NULL) == NATS_OK &&
		   js_PurgeStream(js, "RINGLOG_rl_late", NULL, &je) == NATS_OK,
		   "the stream's chunks so far purged (%d)", (int)je);
		jsCtx_Destroy(js);
		natsConnection_Destroy(nc);
	}
	/* A new process: new metadata, so its first chunk is a METADATA one. */
	fflush(stdout);
	pid_t kid = fork();
	if (kid == 0)
		_exit(write_events(sl, 3000, 0) == 3000 ? 0 : 1);
	int st = -1;
	waitpid(kid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the late writer wrote its 3000 events");
	h_ringlog(&r, "stop", sl, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "sink_events_acked"), w1 + 3000);
	/* Alone on its durable: the first chunk it sees waits --gap-wait for
	 * those before it, then they are a loss. */
	h_ringlog(&r, "collect", url, "-o", dir, "--group", "late", "--gap-wait", "1s", NULL);
	ok(r.status == 0, "collect exits 0 (%s)", r.err);
	ok(strstr(r.out, "gaps: 1 ") != NULL, "one gap: %s", r.out);
	char lp[512];
	ok(collected_path(sl, hl, lp, sizeof lp), "one file");
	struct h_summary sum;
	h_summarize(lp, &sum);
	ok(sum.damage == 0, "it reads whole: no damage (%zu)", sum.damage);
	ASSERT_EQ_U64(sum.loss_records, 1);
	ASSERT_EQ_U64(sum.loss_events, w1);
	ASSERT_EQ_U64(sum.events, 3000);
	struct h_thread *t = NULL;
	for (size_t i = 0; i < sum.nthreads; i++)
		if (sum.th[i].events)
			t = &sum.th[i];
	ok(t && t->events == 3000 && t->last_seq == 3000 && t->order_errors == 0,
	   "the late writer's events, each once, in order");
	h_ringlog(&r, "dump", lp, NULL);
	ASSERT_EQ(r.status, 0);
	const char *loss = strstr(r.out, "DATA_LOSS");
	ok(loss && strstr(loss, "sink"), "dump decodes it, the DATA_LOSS's cause sink");

	server_kill();
	for (int i = 0; i < 3; i++)
		unlink(p[i]);
	unlink(pl);
	const char *rm1[] = { "rm", "-rf", top, NULL };
	struct run x = proc_run(rm1);
	run_free(&x);
	const char *rm2[] = { "rm", "-rf", sd, NULL };
	x = proc_run(rm2);
	run_free(&x);
	return done_testing();
}
