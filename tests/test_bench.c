/*
 * test_bench.c - the benchmarks run briefly (docs/PERFORMANCE.md, "How to
 * measure"): `ringlog bench --quick --runs 1` and each bench/ program with
 * --quick exit 0 and print their documented keys, every line "key: value";
 * the counts they print add up (events emitted = written + lost).  As
 * root, bench/vs_perf.sh --quick (system events against perf and
 * trace-cmd) prints its keys, or a "TOOL: skipped: why" line for an anchor
 * that cannot run here.  bench/total_cost.sh --quick, without LTTng (not a
 * test dependency): the floor and ringlog's total cost, LTTng skipped with
 * its reason, perf record of a uprobe measured or skipped with a reason.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "proc_run.h"
#include "tap.h"

/* The value of key's line in out ("key: value\n"), or NULL; *count the
 * lines of that key. */
static const char *value_of(const char *out, const char *key, char *buf, size_t n, int *count)
{
	size_t kl = strlen(key);
	const char *found = NULL;
	*count = 0;
	for (const char *p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, key, kl) == 0 && p[kl] == ':' && p[kl + 1] == ' ') {
			(*count)++;
			found = p + kl + 2;
		}
	}
	if (found == NULL)
		return NULL;
	size_t l = strcspn(found, "\n");
	l = l < n - 1 ? l : n - 1;
	memcpy(buf, found, l);
	buf[l] = '\0';
	return buf;
}

/* key's value as a number; -1 (and a failed check) if missing or not a number. */
static double number(const char *out, const char *key)
{
	char buf[256], *end;
	int count;
	const char *v = value_of(out, key, buf, sizeof buf, &count);
	errno = 0;
	double d = v ? strtod(v, &end) : 0;
	bool good = v && count == 1 && end != v && *end == '\0' && errno == 0;
	ok(good, "%s: one line, a number (%s)", key, v ? v : "missing");
	return good ? d : -1;
}

/* Every line of out is "key: value": key of [a-z0-9_], a value. */
static void lines_are_figures(const char *what, const char *out)
{
	int lines = 0, bad = 0;
	for (const char *p = out; *p;) {
		size_t l = strcspn(p, "\n"), k = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_");
		if (k == 0 || k + 2 >= l || p[k] != ':' || p[k + 1] != ' ') {
			if (bad++ == 0)
				diag("%s: not a figure: %.*s", what, (int)l, p);
		}
		lines++;
		p += l + (p[l] == '\n');
	}
	ok(lines > 0 && bad == 0, "%s: %d lines, each \"key: value\"", what, lines);
}

/* Runs argv: exit 0 and every line "key: value" (what names it). */
static struct run run_figures(const char *what, const char *const *argv)
{
	struct run r = proc_run(argv);
	ok(r.status == 0, "%s exits 0 (%d)", what, r.status);
	if (r.status != 0)
		diag("stderr: %s", r.err);
	lines_are_figures(what, r.out);
	return r;
}

static struct run run_prog(const char *dir, const char *prog, const char *const *args)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, prog);
	const char *argv[16] = { path };
	int n = 1;
	for (int i = 0; args[i] && n < 15; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	return run_figures(prog, argv);
}

#define KEYS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void numbers(const char *out, const char *const *keys)
{
	for (int i = 0; keys[i]; i++)
		number(out, keys[i]);
}

/* A round trip's time: a number, above 0 and below a second. */
static void round_trip(const char *out, const char *key)
{
	double v = number(out, key);
	ok(v > 0 && v < 1e9, "%s: %.1f ns, between 0 and 1 s", key, v);
}

/* bench/vs_perf.sh --quick: 1 run of 2000 round trips, a 0.3 s storm.  The
 * speeds are not checked (the machine is shared), only that every figure is
 * there and sane; an anchor is either measured or skipped with a reason. */
static void vs_perf(const char *script)
{
	if (script == NULL || geteuid() != 0) {
		diag("bench/vs_perf.sh not run: %s", script ? "not root (system events)" : "RINGLOG_VS_PERF unset");
		return;
	}
	struct run r = run_figures("vs_perf.sh", (const char *const[]){ script, "--quick", NULL });
	ASSERT_EQ(number(r.out, "runs"), 1);
	ASSERT_EQ(number(r.out, "round_trips_per_run"), 2000);
	ASSERT_EQ(number(r.out, "pingpong_1cpu_switches_per_round_trip"), 2);
	ASSERT_EQ(number(r.out, "storm_seconds"), 0.3);
	char key[128], buf[256];
	int count;
	for (int n = 1; n <= 2; n++) {
		if (n == 2 && sysconf(_SC_NPROCESSORS_ONLN) < 2)
			break;
		snprintf(key, sizeof key, "pingpong_%dcpu_untraced_round_trip_ns", n);
		round_trip(r.out, key);
		const char *confs[] = { "ringlog", "ringlog_wakeup", "perf", "trace_cmd" };
		for (int c = 0; c < 4; c++) {
			/* The anchors may be skipped, with a reason. */
			if (c >= 2 && value_of(r.out, confs[c], buf, sizeof buf, &count)) {
				ok(strncmp(buf, "skipped: ", 9) == 0, "%s: %s", confs[c], buf);
				continue;
			}
			snprintf(key, sizeof key, "pingpong_%dcpu_%s_round_trip_ns", n, confs[c]);
			round_trip(r.out, key);
			snprintf(key, sizeof key, "pingpong_%dcpu_%s_overhead_ns", n, confs[c]);
			number(r.out, key);
			snprintf(key, sizeof key, "pingpong_%dcpu_%s_lost", n, confs[c]);
			ok(number(r.out, key) >= 0, "%s: a count", key);
			if (c < 2)
				continue;
			snprintf(key, sizeof key, "pingpong_%dcpu_ringlog_vs_%s", n, confs[c]);
			ok(number(r.out, key) > 0, "%s: above 0", key);
			/* "n/a" when an overhead came out at or below 0 (noise). */
			snprintf(key, sizeof key, "pingpong_%dcpu_ringlog_overhead_vs_%s", n, confs[c]);
			const char *v = value_of(r.out, key, buf, sizeof buf, &count);
			ok(v && count == 1 && (strcmp(v, "n/a") == 0 || strtod(v, NULL) > 0),
			   "%s: a ratio or n/a (%s)", key, v ? v : "missing");
		}
	}
	/* The storm recorded switches (0.3 s of ping-pong: thousands) and says
	 * what it lost. */
	ok(number(r.out, "storm_ringlog_events_per_s") > 1000, "storm: ringlog recorded switches");
	ok(number(r.out, "storm_ringlog_lost") >= 0, "storm: ringlog's loss, a count");
	ok(number(r.out, "storm_ringlog_wakeup_events_per_s") > 1000, "storm: ringlog recorded switches and wake-ups");
	run_free(&r);
}

/* bench/total_cost.sh --quick without LTTng (as in CI, where it is not
 * installed): the floor and ringlog measured, every figure there and sane,
 * the identity exact; LTTng skipped with its reason; perf record of a
 * uprobe measured (root, perf) or skipped with a reason. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

static void total_cost(const char *script)
{
	/* The script compiles bench/total_cost.c with plain cc against the
	 * build's library, which a sanitizer build cannot link. */
	if (script == NULL || SANITIZED) {
		diag("bench/total_cost.sh not run: %s",
		     script ? "a sanitizer build" : "RINGLOG_TOTAL_COST unset");
		return;
	}
	setenv("RINGLOG_TOTAL_COST_NO_LTTNG", "1", 1);
	struct run r = run_figures("total_cost.sh", (const char *const[]){ script, "--quick", NULL });
	unsetenv("RINGLOG_TOTAL_COST_NO_LTTNG");
	ASSERT_EQ(number(r.out, "chunks"), 3);
	ASSERT_EQ(number(r.out, "events_per_chunk"), 20000);
	numbers(r.out, KEYS("floor_ns", "ringlog_producer_ns", "ringlog_daemon_cpu_ns",
			    "ringlog_total_ns", "ringlog_total_vs_floor"));
	double w = number(r.out, "ringlog_events_written"), l = number(r.out, "ringlog_events_lost");
	ok(w + l == 60000, "total_cost: ringlog written %.0f + lost %.0f = 60000", w, l);
	char buf[256];
	int count;
	const char *lt = value_of(r.out, "lttng", buf, sizeof buf, &count);
	ok(lt && count == 1 && strcmp(lt, "skipped: RINGLOG_TOTAL_COST_NO_LTTNG is set") == 0,
	   "total_cost: lttng: skipped, with the reason (%s)", lt ? lt : "missing");
	const char *pf = value_of(r.out, "perf_uprobe", buf, sizeof buf, &count);
	if (pf != NULL)
		ok(count == 1 && strncmp(pf, "skipped: ", 9) == 0 && strlen(pf) > 9,
		   "total_cost: perf_uprobe: skipped, with a reason (%s)", pf);
	else
		numbers(r.out, KEYS("perf_uprobe_producer_ns", "perf_record_cpu_ns",
				    "perf_uprobe_total_vs_floor", "perf_uprobe_events_recorded"));
	ok(strstr(r.err, "| tracer | producer CPU ns/event |") != NULL,
	   "total_cost: the table on stderr");
	run_free(&r);
}

/* `ringlog bench --drain`, its files in dir (NULL: the default, /dev/shm):
 * 1 burst of 10000 events to grow the pool, then 1 run of a burst and
 * 100 ms at 1 M events/s (100000 events), then a circular file of 4 MiB:
 * a lap and a fifth at that rate (209715 events in 210 ms) and 100 ms
 * more. */
static void drain_figures(const char *bin, const char *dir)
{
	const char *argv[] = { bin, "bench", "--drain", "--quick", "--events", "10000", "--rate",
			       "1000000", dir ? "--dir" : NULL, dir, NULL };
	struct run r = run_figures(dir ? "ringlog bench --drain --dir" : "ringlog bench --drain",
				   argv);
	ASSERT_EQ(number(r.out, "runs"), 1);
	ASSERT_EQ(number(r.out, "drain_ms_per_run"), 100);
	ASSERT_EQ(number(r.out, "drain_rate_events_per_s"), 1000000);
	ASSERT_EQ(number(r.out, "circular_file_mb"), 4);
	double w1 = number(r.out, "write_1t_ns"), dc = number(r.out, "drain_cpu_ns_per_event");
	ok(w1 > 0 && dc > 0, "write_1t_ns %.2f and drain_cpu_ns_per_event %.2f above 0", w1, dc);
	numbers(r.out, KEYS("drain_rate_mb_per_s", "drain_cpu_vs_write_1t", "drain_events_per_cpu_s",
			    "drain_mb_per_cpu_s", "circular_drain_cpu_ns_per_event",
			    "circular_drain_cpu_vs_write_1t", "ref_write_cpu_ns_per_event",
			    "drain_cpu_vs_ref_write", "ref_rewrite_cpu_ns_per_event",
			    "circular_drain_cpu_vs_ref_rewrite", "kernel_threads_cpu_ns_per_event",
			    "drain_total_vs_write_1t"));
	double kt = number(r.out, "kernel_threads_cpu_ns_per_event");
	double total = number(r.out, "drain_total_cpu_ns_per_event");
	ok(total >= dc && total - dc - (kt > 0 ? kt : 0) < 0.02,
	   "drain_total_cpu_ns_per_event %.2f = the daemon's %.2f + the kernel threads' %.2f", total,
	   dc, kt);
	/* The file system named, and the older, tmpfs-named keys only on tmpfs. */
	struct statfs sf;
	BAIL_IF(statfs(dir ? dir : "/dev/shm", &sf) != 0, "statfs: %s", strerror(errno));
	bool tmpfs = sf.f_type == 0x01021994; /* TMPFS_MAGIC */
	char fs[64];
	int count;
	const char *got = value_of(r.out, "drain_fs", fs, sizeof fs, &count);
	ok(got && count == 1 && (tmpfs ? strcmp(got, "tmpfs") == 0 : strcmp(got, "tmpfs") != 0),
	   "drain_fs: %s (tmpfs: %d)", got ? got : "missing", tmpfs);
	static const char *const old[] = { "ref_tmpfs_write_cpu_ns_per_event",
					   "drain_cpu_vs_tmpfs_write",
					   "ref_tmpfs_rewrite_cpu_ns_per_event",
					   "circular_drain_cpu_vs_tmpfs_rewrite" };
	for (size_t i = 0; i < sizeof old / sizeof old[0]; i++) {
		char v[64], w[64];
		int n;
		const char *a = value_of(r.out, old[i], v, sizeof v, &n);
		if (tmpfs) {
			const char *newer = strstr(old[i], "ref_tmpfs_write")	 ? "ref_write_cpu_ns_per_event"
					    : strstr(old[i], "ref_tmpfs_rewrite") ? "ref_rewrite_cpu_ns_per_event"
					    : strstr(old[i], "circular")	? "circular_drain_cpu_vs_ref_rewrite"
										: "drain_cpu_vs_ref_write";
			const char *b = value_of(r.out, newer, w, sizeof w, &n);
			ok(a && b && strcmp(a, b) == 0, "%s: %s, as %s", old[i], a ? a : "missing",
			   newer);
		} else {
			ok(a == NULL, "%s: not printed on %s", old[i], fs);
		}
	}
	ASSERT_EQ(number(r.out, "events_emitted"), 20000 + 100000 + 210000 + 100000);
	double lost = number(r.out, "events_lost");
	double written = number(r.out, "events_written");
	double session_lost = number(r.out, "session_events_lost");
	ok(written + session_lost == 430000, "--drain: written %.0f + lost %.0f = emitted 430000",
	   written, session_lost);
	ASSERT_EQ(lost, session_lost);
	run_free(&r);
}

int main(void)
{
	const char *bin = getenv("RINGLOG_BIN"), *dir = getenv("RINGLOG_BENCH_DIR");
	if (!bin || !dir || access(bin, X_OK) != 0)
		skip_all("RINGLOG_BIN and RINGLOG_BENCH_DIR name the built programs");

	/* `ringlog bench`: the write path, 5 write runs of 10000 events each
	 * (1 thread timed, untimed, in batches, 2 threads). */
	struct run r = run_figures("ringlog bench",
				   (const char *const[]){ bin, "bench", "--quick", "--runs", "1",
							  "--events", "10000", NULL });
	ASSERT_EQ(number(r.out, "runs"), 1);
	ASSERT_EQ(number(r.out, "events_per_run"), 10000);
	numbers(r.out, KEYS("disabled_ns", "write_1t_ns", "write_2t_ns", "write_untimed_ns",
			    "write_untimed_n_ns", "ref_rdtsc_store_ns", "ref_store_ns",
			    "ref_clock_gettime_ns", "write_1t_vs_rdtsc_store",
			    "write_untimed_vs_store", "write_untimed_n_vs_store",
			    "write_1t_events_per_s", "write_1t_mb_per_s", "write_2t_events_per_s",
			    "write_2t_mb_per_s", "write_untimed_events_per_s",
			    "write_untimed_mb_per_s"));
	ASSERT_EQ(number(r.out, "events_emitted"), 50000);
	double lost = number(r.out, "events_lost"), written = number(r.out, "events_written");
	double session_lost = number(r.out, "session_events_lost");
	ok(written + session_lost == 50000, "written %.0f + lost %.0f = emitted 50000", written,
	   session_lost);
	ASSERT_EQ(lost, session_lost);
	run_free(&r);

	drain_figures(bin, NULL);
	/* The files in a directory of the build's disk: the kernel threads'
	 * share (writeback) is measured there, and the tmpfs-named keys are
	 * printed only where the file system is tmpfs. */
	char disk[] = "bench-drain-XXXXXX";
	BAIL_IF(mkdtemp(disk) == NULL, "mkdtemp: %s", strerror(errno));
	drain_figures(bin, disk);
	rmdir(disk);
	r = proc_run((const char *const[]){ bin, "bench", "--drain", "--dir", "no-such-dir", NULL });
	ASSERT_EQ(r.status, 1);
	ASSERT_CONTAINS(r.err, "ringlog: bench: --dir no-such-dir: No such file or directory");
	run_free(&r);
	r = proc_run((const char *const[]){ bin, "bench", "--dir", ".", NULL });
	ASSERT_EQ(r.status, 2);
	ASSERT_CONTAINS(r.err, "ringlog: bench: --dir: only with --drain");
	run_free(&r);

	/* --rate belongs to --drain. */
	r = proc_run((const char *const[]){ bin, "bench", "--rate", "1000000", NULL });
	ASSERT_EQ(r.status, 2);
	ASSERT_CONTAINS(r.err, "ringlog: bench: --rate: only with --drain");
	run_free(&r);

	/* The figures that moved to bench/ are refused by the CLI. */
	r = proc_run((const char *const[]){ bin, "bench", "--scaling", NULL });
	ASSERT_EQ(r.status, 2);
	ASSERT_CONTAINS(r.err, "--scaling");
	run_free(&r);

	const char *const quick[] = { "--quick", NULL };
	r = run_prog(dir, "bench_ring_write", quick);
	ASSERT_EQ(number(r.out, "events_per_run"), 20000);
	numbers(r.out, KEYS("ref_rdtsc_store_ns", "ring_write_ns", "ring_write_vs_rdtsc_store",
			    "ring_wakeups"));
	double rw = number(r.out, "ring_events_written"), rl = number(r.out, "ring_events_lost");
	ok(rw + rl == 20000, "ring: written %.0f + lost %.0f = 20000", rw, rl);
	run_free(&r);

	r = run_prog(dir, "bench_modes", quick);
	numbers(r.out, KEYS("ref_rdtsc_store_ns", "write_2sessions_ns",
			    "write_2sessions_vs_1session", "write_2sessions_events_lost",
			    "write_2sessions_cpu_vs_1session", "write_3sessions_ns",
			    "write_3sessions_vs_1session", "write_3sessions_cpu_vs_1session",
			    "write_8sessions_ns", "write_8sessions_vs_1session",
			    "write_8sessions_cpu_vs_1session", "write_overwrite_ns", "write_overwrite_vs_rdtsc_store",
			    "write_overwrite_vs_1t", "overwrite_events_lost",
			    "overwrite_events_overwritten"));
	run_free(&r);

	r = run_prog(dir, "bench_scaling", quick);
	ASSERT_EQ(number(r.out, "payload_0_events_per_run"), 20000);
	ASSERT_EQ(number(r.out, "threads_4_events_per_thread"), 10000);
	numbers(r.out, KEYS("payload_16_write_ns", "payload_1024_write_vs_memcpy",
			    "payload_1024_ref_memcpy_gb_per_s", "threads_1_ns_per_thread",
			    "threads_2_aggregate_events_per_s", "threads_4_aggregate_mb_per_s",
			    "scaling_events_lost"));
	run_free(&r);

	r = run_prog(dir, "bench_memory", quick);
	numbers(r.out, KEYS("mem_start_daemon_rss_kb", "mem_start_pool_kb", "mem_busy_object_kb",
			    "mem_busy_producer_session_kb", "mem_idle_pool_kb",
			    "mem_idle_daemon_anon_kb", "mem_trim_wait_ms", "page_touch_ns",
			    "page_retouch_ns", "pool_first_touch_ms",
			    "pool_first_touch_ns_per_event"));
	ASSERT_EQ(number(r.out, "mem_start_pool_kb"), 0);
	run_free(&r);

	r = run_prog(dir, "bench_counters", quick);
	char buf[256];
	int count;
	ASSERT_STREQ(value_of(r.out, "counter_in_session", buf, sizeof buf, &count), "yes");
	numbers(r.out, KEYS("counter_add_ns", "counter_atomic_add_ns", "ref_local_add_ns",
			    "counter_add_vs_local", "sample_app_ns_per_counter",
			    "sample_app_unchanged_ns_per_counter", "sample_proc_ns_per_counter",
			    "ref_proc_stat_read_ns"));
	ok(value_of(r.out, "sample_perf_ns_per_counter", buf, sizeof buf, &count) && count == 1,
	   "sample_perf_ns_per_counter: one line");
	run_free(&r);

	/* The ladders, 3 rungs of 50 ms each and files of 16 MiB. */
	r = run_prog(dir, "bench_sustained", quick);
	numbers(r.out, KEYS("ref_tmpfs_write_mb_per_s", "sustained_events_per_s",
			    "sustained_mb_per_s", "sustained_vs_tmpfs", "sustained_vs_tmpfs_write",
			    "ref_tmpfs_write_mb_per_cpu_s", "drain_mb_per_cpu_s",
			    "drain_cpu_ns_per_event", "drain_cpu_vs_tmpfs", "paced_events_lost",
			    "ref_tmpfs_rewrite_mb_per_s", "circular_sustained_events_per_s",
			    "circular_sustained_vs_tmpfs", "circular_drain_cpu_vs_tmpfs",
			    "circular_paced_events_lost"));
	ASSERT_EQ(number(r.out, "circular_file_mb"), 16);
	const char *limit = value_of(r.out, "sustained_limit", buf, sizeof buf, &count);
	ok(limit && (strcmp(limit, "daemon") == 0 || strcmp(limit, "writer") == 0 ||
		     strcmp(limit, "ladder") == 0),
	   "sustained_limit: daemon, writer or ladder (%s)", limit ? limit : "missing");
	run_free(&r);

	vs_perf(getenv("RINGLOG_VS_PERF"));
	total_cost(getenv("RINGLOG_TOTAL_COST"));
	return done_testing();
}
