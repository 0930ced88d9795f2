/*
 * test_disabled_check - the inline paths' disabled check (include/ringlog.h,
 * rlog__mask_or_null; docs/FORMAT.md, "The inline path's words"):
 *   1. a process in no session: the pointer is NULL (the check is its one
 *      load), rlog__mask points at a zero word for programs built with
 *      older headers, and rlog_write, rlog_write_untimed_n and
 *      rlog_enabled return 0 / false;
 *   2. attached: the pointer is rlog__mask, at the session's enable mask;
 *      changes that another process writes into the region (`ringlog
 *      update --mask`: a category off, then 0 as a pause, then on again)
 *      are seen at the very next check, with nothing telling the process;
 *   3. a wait for a session that does not exist yet (late attach): not
 *      NULL (the wake registry's word), writes return 0;
 *   4. rlog_detach: NULL again, writes return 0.
 * And in each state the gate (rlog__gate): its word 0 with no session; with
 * one, the page is the region's first page mapped read-only (its words are
 * the header's, the mapping in /proc/self/maps), so the word follows the
 * mask as `ringlog update` writes it; ~0 with two sessions and while
 * waiting; 0 again after rlog_detach; moved off a paused session from the
 * spare page when no new page can be mapped (RINGLOG_TEST_GATE_NOMEM=1),
 * and an attach with no spare page either (=2) fails whole with -ENOMEM.
 * The session's count is checked exactly, and each written event (numbered
 * 1..) is in the file once.
 */
#include "harness.h"
#include "tap.h"

static struct h_run r;

static uint64_t gate(void)
{
	return atomic_load(&rlog__gate.w[RLOG__GATE_WORD]);
}

/* Starts session h_session(tag) with its file at h_path(tag) (128 and 256
 * bytes) and the enable mask given. */
static void start(char *name, char *path, const char *tag, const char *mask)
{
	snprintf(name, 128, "%s", h_session(tag));
	snprintf(path, 256, "%s", h_path(tag));
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--mask", mask, NULL);
	ASSERT_EQ(r.status, 0);
}

/* The permissions of the mapping at address a in /proc/self/maps ("r--s"),
 * and its file name, or "" when a is in no mapping. */
static void gate_mapping(const void *a, char *perm, char *file, size_t cap)
{
	perm[0] = file[0] = '\0';
	FILE *f = fopen("/proc/self/maps", "r");
	if (f == NULL)
		return;
	char line[512];
	while (fgets(line, sizeof line, f) != NULL) {
		unsigned long lo, hi;
		char pm[8];
		int off = 0;
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s%n", &lo, &hi, pm, &off) < 3)
			continue;
		if ((uintptr_t)a < lo || (uintptr_t)a >= hi)
			continue;
		snprintf(perm, 8, "%s", pm);
		const char *name = line + off;
		while (*name == ' ')
			name++;
		snprintf(file, cap, "%.*s", (int)strcspn(name, "\n"), name);
		break;
	}
	fclose(f);
}

/* The payloads written (their first word), in order, from the file. */
static int file_numbers(const char *path, uint64_t *out, int cap)
{
	struct rlog_reader *rd;
	if (rlog_reader_open(path, &rd) < 0)
		return -1;
	struct rlog_event ev;
	int n = 0;
	while (rlog_reader_next(rd, &ev) == 1) {
		if (ev.from_daemon || ev.id != 1024 || ev.length != 8)
			continue;
		if (n < cap)
			memcpy(&out[n], ev.payload, 8);
		n++;
	}
	rlog_reader_close(rd);
	return n;
}

int main(void)
{
	struct h_tally t = { 0, 0, 0, 0 };
	uint64_t v = 1000, batch[4] = { 1001, 1002, 1003, 1004 };

	/* 1. No session. */
	ok(atomic_load(&rlog__mask_or_null) == NULL, "detached: the pointer is NULL");
	ok(atomic_load(&rlog__mask) != NULL && atomic_load(atomic_load(&rlog__mask)) == 0,
	   "detached: rlog__mask points at a zero word (older headers)");
	ASSERT_EQ(h_tally_add(&t, rlog_write(1024, &v, sizeof v)), 0);
	ASSERT_EQ(rlog_write_untimed_n(1024, batch, 8, 4), 0);
	ok(!rlog_enabled(0) && !rlog_enabled(63), "detached: no category is enabled");
	ASSERT_EQ_U64(gate(), 0);
	ok(((uintptr_t)&rlog__gate & 4095) == 0, "the gate is on a page of its own");

	/* 2. Attached; the region's mask changed from outside. */
	char name[128], path[256];
	start(name, path, "dis1", "0x5");
	ASSERT_EQ(rlog_attach(name), 0);
	_Atomic uint64_t *m = atomic_load(&rlog__mask_or_null);
	ok(m != NULL && m == atomic_load(&rlog__mask), "attached: the pointer is rlog__mask");
	ASSERT_EQ_U64(m ? atomic_load(m) : 0, 0x5);
	ok(rlog_enabled(0) && !rlog_enabled(1) && rlog_enabled(2) && !rlog_enabled(64),
	   "attached: rlog_enabled follows the session's mask 0x5");
	/* The gate is the region's first page: its words are the header's. */
	ASSERT_EQ_U64(gate(), 0x5);
	const _Atomic uint64_t *hdr = (const _Atomic uint64_t *)((const char *)m - 8 * RLOG__GATE_WORD);
	ASSERT_EQ_U64(atomic_load(&rlog__gate.w[0]), atomic_load(&hdr[0]));
	char perm[8], file[256];
	gate_mapping(&rlog__gate, perm, file, sizeof file);
	ASSERT_STREQ(perm, "r--s");
	ok(strstr(file, "/dev/shm/") == file, "the gate maps the region's file (%s)", file);
	uint64_t n = 1;
	ASSERT_EQ(h_tally_add(&t, rlog_write(1024, &n, sizeof n)), 1);
	h_ringlog(&r, "update", name, "--mask", "0x2", NULL);
	ASSERT_EQ(r.status, 0);
	ok(!rlog_enabled(0) && rlog_enabled(1), "a category change from outside, seen at once");
	ASSERT_EQ_U64(gate(), 0x2);
	n = 2;
	ASSERT_EQ(h_tally_add(&t, rlog_write(1024, &n, sizeof n)), 1);
	h_ringlog(&r, "update", name, "--mask", "0", NULL); /* paused */
	ASSERT_EQ(r.status, 0);
	n = 999;
	ASSERT_EQ(h_tally_add(&t, rlog_write(1024, &n, sizeof n)), 0);
	ok(!rlog_enabled(1) && atomic_load(&rlog__mask_or_null) == m,
	   "paused from outside: disabled, through the same pointer");
	ASSERT_EQ_U64(gate(), 0);
	h_ringlog(&r, "update", name, "--mask", "0xffffffffffffffff", NULL);
	ASSERT_EQ(r.status, 0);
	n = 3;
	ASSERT_EQ(h_tally_add(&t, rlog_write(1024, &n, sizeof n)), 1);
	uint64_t four[2] = { 4, 5 };
	ASSERT_EQ(rlog_write_untimed_n(1024, four, 8, 2), 2);
	t.written += 2;
	ASSERT_EQ_U64(gate(), ~UINT64_C(0));

	/* Two sessions: the gate's word is ~0, the checks after it decide;
	 * back to the first session's page when the second leaves. */
	char name2[128], path2[256];
	start(name2, path2, "dis2", "0x1");
	ASSERT_EQ(rlog_attach_add(name2), 0);
	ASSERT_EQ_U64(gate(), ~UINT64_C(0));
	gate_mapping(&rlog__gate, perm, file, sizeof file);
	ASSERT_STREQ(perm, "rw-p");
	ASSERT_EQ(rlog_detach_session(name2), 0);
	ASSERT_EQ_U64(gate(), ~UINT64_C(0)); /* the first session's mask, all on */
	gate_mapping(&rlog__gate, perm, file, sizeof file);
	ASSERT_STREQ(perm, "r--s");
	h_ringlog(&r, "update", name, "--mask", "0x3", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(gate(), 0x3);
	h_ringlog(&r, "stop", name2, NULL);
	ASSERT_EQ(r.status, 0);
	unlink(path2);

	/* The gate's spare page: a process where no new mapping can be had
	 * (at its locked-memory limit) still moves the gate off a paused
	 * session it leaves, and an attach that has no spare fails whole. */
	h_ringlog(&r, "update", name, "--mask", "0", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(gate(), 0);
	char name3[128], path3[256];
	start(name3, path3, "dis3", "0x1");
	setenv("RINGLOG_TEST_GATE_NOMEM", "1", 1);
	ASSERT_EQ(rlog_attach(name3), 0);
	ASSERT_EQ_U64(gate(), ~UINT64_C(0));
	gate_mapping(&rlog__gate, perm, file, sizeof file);
	ASSERT_STREQ(perm, "rw-p");
	uint64_t n3 = 100;
	ASSERT_EQ(rlog_write(1024, &n3, sizeof n3), 1);
	setenv("RINGLOG_TEST_GATE_NOMEM", "2", 1);
	ASSERT_EQ(rlog_attach(name), -ENOMEM);
	ASSERT_EQ(rlog_attach_add(name), -ENOMEM);
	n3 = 101;
	ASSERT_EQ(rlog_write(1024, &n3, sizeof n3), 1); /* still into dis3 */
	unsetenv("RINGLOG_TEST_GATE_NOMEM");
	ASSERT_EQ(rlog_attach(name), 0);
	gate_mapping(&rlog__gate, perm, file, sizeof file);
	ASSERT_STREQ(perm, "r--s");
	ASSERT_EQ_U64(gate(), 0); /* name is still paused */
	h_ringlog(&r, "update", name, "--mask", "0x3", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(gate(), 0x3);
	h_ringlog(&r, "stop", name3, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 2);
	uint64_t got3[4] = { 0 };
	ok(file_numbers(path3, got3, 4) == 2 && got3[0] == 100 && got3[1] == 101,
	   "dis3's file has its two events once each");
	unlink(path3);

	/* 4. Detached. */
	rlog_detach();
	ok(atomic_load(&rlog__mask_or_null) == NULL, "after rlog_detach: NULL again");
	ASSERT_EQ_U64(gate(), 0);
	ASSERT_EQ(h_tally_add(&t, rlog_write(1024, &n, sizeof n)), 0);

	/* 3. Waiting for a session that is not there, then no longer. */
	ASSERT_EQ(rlog_attach(h_session("dis-none")), -ENOENT);
	ok(atomic_load(&rlog__mask_or_null) != NULL,
	   "waiting for a session: the pointer is the wake registry's word");
	ASSERT_EQ_U64(gate(), ~UINT64_C(0));
	ASSERT_EQ(h_tally_add(&t, rlog_write(1024, &n, sizeof n)), 0);
	rlog_detach();
	ok(atomic_load(&rlog__mask_or_null) == NULL, "the wait ended by rlog_detach: NULL");
	ASSERT_EQ_U64(gate(), 0);

	h_ringlog(&r, "stop", name, NULL);
	ASSERT_STREQ(r.err, "");
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), t.written);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), 0);
	ASSERT_EQ_U64(t.written, 5);
	uint64_t got[8] = { 0 };
	int k = file_numbers(path, got, 8);
	ok(k == 5 && got[0] == 1 && got[1] == 2 && got[2] == 3 && got[3] == 4 && got[4] == 5,
	   "the file has events 1..5 once each, in order (%d events)", k);
	unlink(path);
	return done_testing();
}
