/*
 * test_counters_app - application counters (docs/FORMAT.md,
 * "Application counters"),
 * through a real session and daemon:
 *   - a counter changed by known amounts between the daemon's readings
 *     gives one COUNTER record per reading, with exactly those deltas, in
 *     order, summing to the increments; the values the reader gives are
 *     the running totals; the first record carries the value;
 *   - readings that find the counter unchanged write nothing;
 *   - a store of a smaller value is one record flagged RESET (delta = the
 *     new value), never a huge delta;
 *   - a counter taken to 2^64 - 6 in steps below 2^63 and then up by 10
 *     gives delta 10, value 4 (wrap-around at 2^64), no RESET;
 *   - registering a name again gives the same counter; bad names, no
 *     session and a full table give process-local counters with their
 *     return codes; with two sessions the counter lives in the first;
 *   - a counter of a process that exits is read once more and its entry
 *     freed; the daemon's counter_records matches the file;
 *   - ringlog dump, stats and stats --json show name, delta, value, total;
 *   - in a newfile session, the second file names the counter (the daemon's
 *     metadata copies carry its COUNTER_NAME) and its first record there,
 *     which does not carry the value, reads as a gap with the value unknown;
 *   - ringlog tail of a real-time session shows every record with its name
 *     and value, across deliveries (each read as a file of its own).
 */
#include "counter_run.h"

#include <fcntl.h>
#include <sys/wait.h>

#include "harness.h"
#include "tap.h"

static struct h_run r;

/* Adds n to the counter, then a full barrier (an atomic RMW). */
static void add(uint64_t *c, uint64_t n)
{
	__atomic_fetch_add(c, n, __ATOMIC_SEQ_CST);
}

/* The value word of this process's entry name in a region (this test's
 * own mapping of it), or NULL. */
static _Atomic uint64_t *entry_of(const struct rlog__region *reg, const char *name)
{
	for (int i = 0; i < RLOG_SHM_COUNTERS; i++) {
		struct rlog_shm_counter *e = &reg->counters[i];
		if (atomic_load(&e->state) == RLOG_COUNTER_SET &&
		    atomic_load(&e->pid) == (uint32_t)getpid() && strcmp(e->name, name) == 0)
			return &e->value;
	}
	return NULL;
}

static void start(const char *name, const char *path, const char *extra)
{
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--counters", "app", "--counter-period", "10ms",
		  extra, NULL);
	cr_started(&r, name);
}

static void test_deltas(void)
{
	char sname[64], spath[256];
	cr_names("cnt", sname, spath);
	start(sname, spath, NULL);
	ASSERT_EQ(rlog_attach(sname), 0);
	struct rlog__region reg;
	cr_open(sname, &reg);

	uint64_t *c, *again;
	ASSERT_EQ(rlog_counter_register("test.requests", &c), 1);
	_Atomic uint64_t *seen = entry_of(&reg, "test.requests");
	ok(seen != NULL, "the counter has its entry in the session's table");
	ASSERT_EQ(rlog_counter_register("test.requests", &again), 1);
	ok(again == c, "registering the name again gives the same counter");

	/* Known increments, each read by its own pass; then passes that find
	 * nothing new. */
	static const uint64_t steps[] = { 5, 1, 100, 7, 1000 };
	for (size_t i = 0; i < 5; i++) {
		add(c, steps[i]);
		if (i == 0)
			ok(seen && atomic_load(seen) == 5, "the application's counter is that entry's value");
		cr_passes(&reg, 2);
	}
	cr_passes(&reg, 5); /* unchanged: no record */
	/* A reset: a smaller value. */
	__atomic_store_n(c, 3, __ATOMIC_SEQ_CST);
	cr_passes(&reg, 2);
	/* Up to 2^64 - 6 in steps below 2^63, then past 2^64. */
	const uint64_t q = UINT64_C(1) << 62;
	uint64_t wrap_steps[] = { q, q, q, q - 9, 10 };
	for (size_t i = 0; i < 5; i++) {
		add(c, wrap_steps[i]);
		cr_passes(&reg, 2);
	}
	ASSERT_EQ_U64(*c, 4);
	rlog_detach();
	rlog__region_close(&reg);
	struct cr_list l;
	cr_stop_read(sname, spath, &r, &l);
	ASSERT_EQ_U64(h_kv(r.out, "counter_records"), 11);
	ASSERT_EQ_U64(l.n, 11);
	ASSERT_EQ_U64(l.names, 1);
	const struct cr_rec *v[16];
	ASSERT_EQ_U64(cr_of(&l, (uint32_t)getpid(), "test.requests", v, 16), 11);
	static const uint64_t want_delta[11] = { 5, 1, 100, 7, 1000, 3, UINT64_C(1) << 62,
						 UINT64_C(1) << 62, UINT64_C(1) << 62,
						 (UINT64_C(1) << 62) - 9, 10 };
	static const uint64_t want_value[11] = { 5, 6, 106, 113, 1113, 3,
						 (UINT64_C(1) << 62) + 3, (UINT64_C(1) << 63) + 3,
						 3 * (UINT64_C(1) << 62) + 3, UINT64_MAX - 5, 4 };
	uint64_t sum = 0;
	int bad_delta = 0, bad_value = 0, bad_seq = 0, resets = 0, bad_tid = 0;
	for (size_t i = 0; i < 11 && i < l.n; i++) {
		bad_delta += v[i]->c.delta != want_delta[i];
		bad_value += !v[i]->c.value_known || v[i]->c.value != want_value[i];
		bad_seq += v[i]->c.seq != i || v[i]->c.gap;
		resets += (v[i]->c.flags & RLOG_COUNTER_FLAG_RESET) != 0;
		bad_tid += v[i]->tid != 0;
		if (i < 5)
			sum += v[i]->c.delta;
	}
	ASSERT_EQ(bad_delta, 0);
	ASSERT_EQ(bad_value, 0);
	ASSERT_EQ(bad_seq, 0);
	ASSERT_EQ(bad_tid, 0);
	ASSERT_EQ_U64(sum, 1113);
	ASSERT_EQ(resets, 1);
	ok(v[5]->c.flags & RLOG_COUNTER_FLAG_RESET, "the store of 3 is the reset");
	ok(v[0]->c.flags & RLOG_COUNTER_FLAG_VALUE, "the first record carries the value");
	ok(v[5]->c.flags & RLOG_COUNTER_FLAG_VALUE, "a reset carries the value");
	ok(!(v[1]->c.flags & RLOG_COUNTER_FLAG_VALUE) && !(v[10]->c.flags & RLOG_COUNTER_FLAG_VALUE),
	   "other records do not (the reader follows them)");
	ok(!(v[10]->c.flags & RLOG_COUNTER_FLAG_RESET), "the wrap past 2^64 is no reset");
	ASSERT_EQ(v[0]->c.source, RLOG_COUNTER_SRC_APP);
	ASSERT_EQ(v[0]->c.unit, RLOG_COUNTER_UNIT_COUNT);
	cr_free(&l);

	/* What the tools show. */
	h_ringlog(&r, "dump", spath, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_CONTAINS(r.out, "COUNTER      test.requests delta=5 value=5\n");
	ASSERT_CONTAINS(r.out, "COUNTER      test.requests delta=3 value=3 reset\n");
	ASSERT_CONTAINS(r.out, "COUNTER      test.requests delta=10 value=4\n");
	ok(strstr(r.out, "COUNTER_NAME") == NULL, "dump shows COUNTER_NAME with --all only");
	h_ringlog(&r, "dump", spath, "--all", NULL);
	ASSERT_CONTAINS(r.out, "COUNTER_NAME id=1 name=test.requests source=app unit=count\n");
	h_ringlog(&r, "dump", spath, "--format", "json", NULL);
	ASSERT_CONTAINS(r.out, "\"type\":\"counter\",\"counter\":1,\"name\":\"test.requests\","
			       "\"source\":\"app\",\"unit\":\"count\",\"delta\":7,\"value\":113}");
	h_ringlog(&r, "stats", spath, NULL);
	ASSERT_EQ(r.status, 0);
	/* Its row: COUNTER PID RECORDS RESETS TOTAL RATE/S UNIT; total: 1113
	 * + 3 + 4 * 2^62 - 9 + 10 = 1117 modulo 2^64. */
	const char *row = strstr(r.out, "\ntest.requests ");
	unsigned pid = 0;
	unsigned long long recs = 0, nresets = 0, total = 0;
	char unit[16] = "";
	ok(row && sscanf(row, " test.requests %u %llu %llu %llu %*s %15s", &pid, &recs, &nresets,
			 &total, unit) == 5, "stats has the counter's row");
	ASSERT_EQ(pid, (unsigned)getpid());
	ASSERT_EQ_U64(recs, 11);
	ASSERT_EQ_U64(nresets, 1);
	ASSERT_EQ_U64(total, 1117);
	ASSERT_STREQ(unit, "count");
	h_ringlog(&r, "stats", spath, "--json", NULL);
	ASSERT_CONTAINS(r.out, "\"name\":\"test.requests\",\"source\":\"app\",\"unit\":\"count\","
			       "\"records\":11,\"resets\":1,\"total\":1117,");
	unlink(spath);
}

/* Many counters of one process in a session of 4 KiB buffers: a pass's
 * block of records for the process (17 KiB at its first) is larger than a
 * buffer, which every sink takes (up to RLOG_BLOCK_DATA_MAX); every
 * counter has its records, with its exact deltas. */
static void test_big_group(void)
{
	enum { N = 200 };
	char name[64], path[256];
	cr_names("cntbig", name, path);
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--counters", "app", "--counter-period", "10ms",
		  "--buffer-size", "4", NULL);
	cr_started(&r, name);
	ASSERT_EQ(rlog_attach(name), 0);
	struct rlog__region reg;
	cr_open(name, &reg);
	uint64_t *c[N];
	for (int i = 0; i < N; i++) {
		char nm[40];
		/* 39 bytes: the longest name, the largest COUNTER_NAME */
		snprintf(nm, sizeof nm, "big.counter.with.a.long.name.number%03d", i);
		ASSERT_EQ(rlog_counter_register(nm, &c[i]), 1);
	}
	for (int round = 1; round <= 2; round++) {
		for (int i = 0; i < N; i++)
			add(c[i], (uint64_t)(i + round));
		cr_passes(&reg, 2);
	}
	rlog_detach();
	rlog__region_close(&reg);
	struct cr_list l;
	cr_stop_read(name, path, &r, &l);
	ASSERT_EQ_U64(h_kv(r.out, "counter_records"), 2 * N);
	ASSERT_EQ_U64(h_kv(r.out, "log_buffers_lost"), 0);
	ASSERT_EQ_U64(l.n, 2 * N);
	ASSERT_EQ_U64(l.names, N);
	int bad = 0;
	for (int i = 0; i < N; i++) {
		char nm[40];
		snprintf(nm, sizeof nm, "big.counter.with.a.long.name.number%03d", i);
		const struct cr_rec *v[2];
		bad += cr_of(&l, (uint32_t)getpid(), nm, v, 2) != 2 || v[0]->c.delta != (uint64_t)i + 1 ||
		       v[1]->c.delta != (uint64_t)i + 2 || !v[1]->c.value_known ||
		       v[1]->c.value != 2 * (uint64_t)i + 3;
	}
	ASSERT_EQ(bad, 0);
	cr_free(&l);
	unlink(path);
}

/* Snapshot k of session name into path (--since-last if since). */
static void snap(const char *name, const char *path, bool since)
{
	unlink(path);
	if (since)
		h_ringlog(&r, "snapshot", name, "--since-last", "-o", path, NULL);
	else
		h_ringlog(&r, "snapshot", name, "-o", path, NULL);
	ASSERT_EQ(r.status, 0);
}

/* The records of snap.items in the snapshot at path (opened without
 * damage, asserted), into l; returns how many. */
static size_t snap_read(const char *path, struct cr_list *l, const struct cr_rec **v, size_t max)
{
	cr_read(path, l);
	ASSERT_EQ(l->open_err, 0);
	ASSERT_EQ_U64(l->damage, 0);
	return cr_of(l, (uint32_t)getpid(), "snap.items", v, max);
}

/* A flight recorder (overwrite mode, no file) records its counters in its
 * snapshots: the daemon keeps its latest counter blocks.  --since-last
 * snapshots hold each record once; each record there carries its value
 * (a snapshot starts in the middle of the counter's records); a full
 * snapshot holds them all. */
static void test_snapshots(void)
{
	char name[64], pa[256], pb[256], pc[256], pd[256];
	snprintf(name, sizeof name, "%s", h_session("cntsnap"));
	snprintf(pa, sizeof pa, "%s", h_path("cntsnapa"));
	snprintf(pb, sizeof pb, "%s", h_path("cntsnapb"));
	snprintf(pc, sizeof pc, "%s", h_path("cntsnapc"));
	snprintf(pd, sizeof pd, "%s", h_path("cntsnapd"));
	h_ringlog(&r, "start", name, "--mode", "overwrite", "--counters", "app",
		  "--counter-period", "10ms", NULL);
	cr_started(&r, name);
	ASSERT_EQ(rlog_attach(name), 0);
	struct rlog__region reg;
	cr_open(name, &reg);
	uint64_t *c;
	ASSERT_EQ(rlog_counter_register("snap.items", &c), 1);
	/* 20 changes, each read by its own pass: seq 0 to 19 (0 and 16 carry
	 * the value in the daemon's stream). */
	uint64_t total = 0;
	for (uint64_t i = 1; i <= 20; i++) {
		add(c, i);
		total += i;
		cr_passes(&reg, 2);
	}
	snap(name, pa, true);
	for (uint64_t i = 1; i <= 3; i++) {
		add(c, 1000 * i);
		total += 1000 * i;
		cr_passes(&reg, 2);
	}
	snap(name, pb, true);
	snap(name, pc, false);
	cr_passes(&reg, 3); /* nothing changes */
	snap(name, pd, true);
	rlog_detach();
	rlog__region_close(&reg);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "counter_records"), 23);

	struct cr_list l;
	const struct cr_rec *v[32];
	ASSERT_EQ_U64(snap_read(pa, &l, v, 32), 20);
	int bad = 0;
	uint64_t running = 0;
	for (size_t i = 0; i < 20 && i < l.n; i++) {
		running += i + 1;
		bad += v[i]->c.seq != i || v[i]->c.delta != i + 1 || !v[i]->c.value_known ||
		       v[i]->c.value != running || !(v[i]->c.flags & RLOG_COUNTER_FLAG_VALUE);
	}
	ASSERT_EQ(bad, 0);
	cr_free(&l);
	ASSERT_EQ_U64(snap_read(pb, &l, v, 32), 3);
	bad = 0;
	for (size_t i = 0; i < 3 && i < l.n; i++) {
		running += 1000 * (i + 1);
		bad += v[i]->c.seq != 20 + i || v[i]->c.delta != 1000 * (i + 1) ||
		       !v[i]->c.value_known || v[i]->c.value != running || v[i]->c.gap != (i == 0);
	}
	/* Its first record follows records that are in the first snapshot,
	 * not in this file: a gap, but its value is known. */
	ok(bad == 0, "the second --since-last snapshot: the 3 later records, with their values");
	ASSERT_EQ_U64(running, total);
	cr_free(&l);
	ASSERT_EQ_U64(snap_read(pc, &l, v, 32), 23);
	ASSERT_EQ_U64(cr_sum(&l, (uint32_t)getpid(), "snap.items"), total);
	cr_free(&l);
	ASSERT_EQ_U64(snap_read(pd, &l, v, 32), 0);
	cr_free(&l);
	h_ringlog(&r, "dump", pb, NULL);
	ASSERT_CONTAINS(r.out, "COUNTER      snap.items delta=1000 value=1210 gap\n");
	ASSERT_CONTAINS(r.out, "COUNTER      snap.items delta=2000 value=3210\n");
	unlink(pa);
	unlink(pb);
	unlink(pc);
	unlink(pd);
}

/* `ringlog start --resume` after the daemon was killed: the new daemon
 * gives new counter ids (never one the dead daemon gave), goes on with the
 * counter statistics, and takes the counters it finds from their first
 * reading (what the dead daemon recorded is not counted twice). */
static void test_resume(void)
{
	char name[64], path[256];
	cr_names("cntres", name, path);
	start(name, path, NULL);
	ASSERT_EQ(rlog_attach(name), 0);
	struct rlog__region reg;
	cr_open(name, &reg);
	uint64_t *a, *b;
	ASSERT_EQ(rlog_counter_register("resume.a", &a), 1);
	add(a, 5);
	cr_passes(&reg, 2);
	h_kill_daemon(name);
	add(a, 7); /* no daemon: not read until the new one's baseline */
	h_ringlog(&r, "start", name, "--resume", NULL);
	ASSERT_EQ(r.status, 0);
	cr_passes(&reg, 2); /* the new daemon's baseline of resume.a: 12 */
	ASSERT_EQ(rlog_counter_register("resume.b", &b), 1);
	add(a, 11);
	add(b, 3);
	cr_passes(&reg, 2);
	rlog_detach();
	rlog__region_close(&reg);
	struct cr_list l;
	cr_stop_read(name, path, &r, &l);
	ASSERT_EQ_U64(h_kv(r.out, "counter_records"), 3);
	ASSERT_EQ_U64(l.n, 3);
	const struct cr_rec *va[4], *vb[2];
	ASSERT_EQ_U64(cr_of(&l, (uint32_t)getpid(), "resume.a", va, 4), 2);
	ASSERT_EQ_U64(cr_of(&l, (uint32_t)getpid(), "resume.b", vb, 2), 1);
	ok(va[0]->c.delta == 5 && va[0]->c.value == 5, "before the kill: resume.a +5, value 5");
	ok(va[1]->c.delta == 11 && va[1]->c.value_known && va[1]->c.value == 23 &&
	   (va[1]->c.flags & RLOG_COUNTER_FLAG_VALUE),
	   "after the resume: resume.a +11 from its new baseline, carrying its value 23");
	ok(vb[0]->c.delta == 3 && vb[0]->c.value == 3, "resume.b, registered after: +3");
	uint32_t ia = va[0]->c.counter_id, ja = va[1]->c.counter_id, ib = vb[0]->c.counter_id;
	ok(ia != ja && ia != ib && ja != ib, "three counter ids, none given twice (%u %u %u)", ia,
	   ja, ib);
	cr_free(&l);
	unlink(path);
}

/* Return codes, and where a counter lives. */
static void test_register(void)
{
	uint64_t *c, *d;
	/* No session: a process-local counter. */
	rlog_detach();
	ASSERT_EQ(rlog_counter_register("local", &c), 0);
	ok(c != NULL, "a local counter");
	++*c;
	ASSERT_EQ(rlog_counter_register("local", &d), 0);
	ok(c == d && *d == 1, "the same local counter again");
	ASSERT_EQ(rlog_counter_register("", &c), -EINVAL);
	ok(c != NULL, "*out is set on -EINVAL too");
	ASSERT_EQ(rlog_counter_register(NULL, &c), -EINVAL);
	ASSERT_EQ(rlog_counter_register("a\"b", &c), -EINVAL);
	ASSERT_EQ(rlog_counter_register("sp ace", &c), -EINVAL);
	ASSERT_EQ(rlog_counter_register("0123456789012345678901234567890123456789", &c), -EINVAL);
	ASSERT_EQ(rlog_counter_register("012345678901234567890123456789012345678", &c), 0);
	ASSERT_EQ(rlog_counter_register("x", NULL), -EINVAL);

	/* Two sessions: the counter is in the first one. */
	char a[64], b[64], pa[256], pb[256];
	cr_names("cnta", a, pa);
	cr_names("cntb", b, pb);
	start(a, pa, NULL);
	start(b, pb, NULL);
	char both[160];
	snprintf(both, sizeof both, "%s,%s", a, b);
	ASSERT_EQ(rlog_attach(both), 0);
	struct rlog__region ra, rb;
	cr_open(a, &ra);
	cr_open(b, &rb);
	ASSERT_EQ(rlog_counter_register("two.sessions", &c), 1);
	add(c, 42);
	_Atomic uint64_t *in_a = entry_of(&ra, "two.sessions"), *in_b = entry_of(&rb, "two.sessions");
	ok(in_a && atomic_load(in_a) == 42 && in_b == NULL,
	   "with two sessions the counter is in the first one's table only");
	cr_passes(&ra, 2);
	cr_passes(&rb, 2);

	/* A full table: -ENOSPC and a local counter. */
	int last = 1, n = 1;
	for (; n < RLOG_SHM_COUNTERS + 5 && last == 1; n++) {
		char nm[32];
		snprintf(nm, sizeof nm, "fill.%d", n);
		last = rlog_counter_register(nm, &d);
	}
	ASSERT_EQ(last, -ENOSPC);
	ASSERT_EQ(n - 1, RLOG_SHM_COUNTERS); /* 255 fill.* + two.sessions, then the refusal */
	*d = 5;
	ok(entry_of(&ra, "fill.256") == NULL, "the refused counter has no entry: it is the process's own");
	rlog_detach();
	rlog__region_close(&ra);
	rlog__region_close(&rb);
	h_ringlog(&r, "stop", a, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "counter_records"), 1);
	h_ringlog(&r, "stop", b, NULL);
	ASSERT_EQ_U64(h_kv(r.out, "counter_records"), 0);
	struct cr_list l;
	cr_read(pa, &l);
	ASSERT_EQ_U64(l.n, 1);
	ASSERT_EQ_U64(cr_sum(&l, (uint32_t)getpid(), "two.sessions"), 42);
	cr_free(&l);
	unlink(pa);
	unlink(pb);
}

/* A process that exits: its last value is read and its entry freed. */
static void test_exit(void)
{
	char name[64], path[256];
	cr_names("cntx", name, path);
	start(name, path, NULL);
	struct rlog__region reg;
	cr_open(name, &reg);
	pid_t child = fork();
	if (child == 0) {
		uint64_t *c;
		if (rlog_attach(name) != 0 || rlog_counter_register("child.work", &c) != 1)
			_exit(1);
		*c += 77; /* a plain add, then exit at once */
		_exit(0);
	}
	int st;
	ASSERT_EQ(waitpid(child, &st, 0), child);
	ASSERT_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 0);
	/* The daemon checks owners once a second: wait for the entry to be
	 * freed (bounded, not a time assertion). */
	uint64_t give_up = cr_now_ns() + UINT64_C(60000000000);
	bool freed = false;
	while (!freed && cr_now_ns() < give_up) {
		freed = true;
		for (int i = 0; i < RLOG_SHM_COUNTERS; i++)
			if (atomic_load(&reg.counters[i].state) != RLOG_COUNTER_FREE)
				freed = false;
		if (!freed)
			cr_passes(&reg, 1);
	}
	ok(freed, "the dead process's entry is freed");
	rlog__region_close(&reg);
	struct cr_list l;
	cr_stop_read(name, path, &r, &l);
	ASSERT_EQ_U64(l.n, 1);
	ASSERT_EQ_U64(cr_sum(&l, (uint32_t)child, "child.work"), 77);
	cr_free(&l);
	unlink(path);
}

/* A newfile session: the counter's name reaches the second file. */
static void test_newfile(void)
{
	char name[64], pattern[256], p1[256], p2[256];
	snprintf(name, sizeof name, "%s", h_session("cntn"));
	snprintf(pattern, sizeof pattern, "/tmp/rlog-test-cntn-%d-%%d.rlog", (int)getpid());
	snprintf(p1, sizeof p1, pattern, 1);
	snprintf(p2, sizeof p2, pattern, 2);
	unlink(p1);
	unlink(p2);
	h_ringlog(&r, "start", name, "-o", pattern, "--mode", "newfile", "--max-file-size", "1",
		  "--buffer-size", "64", "--counters", "app", "--counter-period", "10ms", NULL);
	cr_started(&r, name);
	ASSERT_EQ(rlog_attach(name), 0);
	struct rlog__region reg;
	cr_open(name, &reg);
	uint64_t *c;
	ASSERT_EQ(rlog_counter_register("nf.counter", &c), 1);
	add(c, 5);
	cr_passes(&reg, 2);
	/* 1.5 MiB of events: the daemon starts the second file. */
	uint64_t v[2] = { 0, 0 };
	for (int i = 0; i < 65536; i++) {
		v[0] = (uint64_t)i;
		rlog_write(1024, v, sizeof v);
	}
	rlog_flush_thread();
	h_ringlog(&r, "flush", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "file_index"), UINT64_MAX); /* flush prints nothing */
	add(c, 7);
	cr_passes(&reg, 2);
	rlog_detach();
	rlog__region_close(&reg);
	struct cr_list l;
	cr_stop_read(name, p2, &r, &l);
	ok(h_kv(r.out, "file_index") >= 2, "the session wrote a second file");
	const struct cr_rec *rec[2];
	ASSERT_EQ_U64(cr_of(&l, (uint32_t)getpid(), "nf.counter", rec, 2), 1);
	if (l.n > 0 && rec[0]) {
		ASSERT_EQ_U64(rec[0]->c.delta, 7);
		ASSERT_EQ(rec[0]->c.seq, 1);
		ok(rec[0]->c.gap && !rec[0]->c.value_known,
		   "its first record in the second file: a gap, the value unknown");
	}
	cr_free(&l);
	unlink(p1);
	unlink(p2);
}

/* ringlog tail: names and values across deliveries. */
static void test_tail(void)
{
	char name[64];
	snprintf(name, sizeof name, "%s", h_session("cntt"));
	h_ringlog(&r, "start", name, "--mode", "real-time", "--counters", "app", "--counter-period",
		  "10ms", NULL);
	cr_started(&r, name);
	struct proc_bg tail;
	proc_start(&tail, (const char *const[]){ h_bin(), "tail", name, NULL });
	ASSERT_EQ(rlog_attach(name), 0);
	struct rlog__region reg;
	cr_open(name, &reg);
	/* The consumer is connected once the daemon counts it (its socket):
	 * wait for its LOG_MARKER line rather than for a time. */
	(void)proc_wait(&tail, "LOG_MARKER", 60000);
	uint64_t *c;
	ASSERT_EQ(rlog_counter_register("rt.counter", &c), 1);
	for (int i = 0; i < 20; i++) {
		add(c, 1);
		cr_passes(&reg, 2);
	}
	rlog_detach();
	rlog__region_close(&reg);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	struct run tr = proc_reap(&tail);
	ASSERT_EQ(tr.status, 0);
	int n = 0, bad = 0;
	for (const char *p = tr.out; *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e + 1 - p) : strlen(p);
		char line[512];
		snprintf(line, sizeof line, "%.*s", (int)(len < 511 ? len : 511), p);
		p += len;
		if (!strstr(line, " COUNTER "))
			continue;
		char want[96];
		n++;
		snprintf(want, sizeof want, "COUNTER      rt.counter delta=1 value=%d\n", n);
		bad += strstr(line, want) == NULL;
	}
	run_free(&tr);
	ASSERT_EQ(n, 20);
	ASSERT_EQ(bad, 0);
}

int main(void)
{
	test_deltas();
	test_tail();
	test_newfile();
	test_big_group();
	test_snapshots();
	test_resume();
	test_register();
	test_exit();
	return done_testing();
}
