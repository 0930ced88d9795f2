/*
 * test_counters_hostile - the counter table is hostile input to the daemon
 * (docs/FORMAT.md, "struct rlog_shm_counter"): the test maps a live session's region and forges
 * entries, then scribbles the whole table and the counter period while the
 * daemon samples.  The daemon must:
 *   - skip entries whose state is no state, and SET entries without a
 *     plausible owner (pid 0, pid above 2^31 - 1);
 *   - sample an entry whose name has no NUL and bytes a reader cannot
 *     print, under a printable name of at most 39 bytes;
 *   - free the entry of a dead owner (SET: after its last reading, which is
 *     recorded; WRITING: at once) and leave the others;
 *   - survive a table of random bytes rewritten at every pass and a
 *     counter period of 0, and stop with a log file that reads without
 *     damage.
 */
#include "counter_run.h"

#include <sys/wait.h>

#include "harness.h"
#include "procstat.h"
#include "tap.h"

static struct h_run r;

static void forge(struct rlog_shm_counter *e, uint32_t state, uint32_t pid, uint64_t start,
		  uint64_t value, const void *name, size_t n)
{
	atomic_store(&e->pid, pid);
	atomic_store(&e->start_time, start);
	atomic_store(&e->value, value);
	memset(e->name, 0, sizeof e->name);
	memcpy(e->name, name, n);
	atomic_store(&e->state, state);
}

/* A pid that was alive a moment ago and is now dead and reaped. */
static pid_t dead_pid(uint64_t *start)
{
	pid_t p = fork();
	if (p == 0) {
		pause();
		_exit(0);
	}
	char st;
	if (rlog__procstat_read(p, &st, start) < 0)
		*start = 0;
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
	return p;
}

int main(void)
{
	char name[64], path[256];
	cr_names("hc", name, path);
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--counters", "app", "--counter-period", "10ms",
		  NULL);
	cr_started(&r, name);
	struct rlog__region reg;
	cr_open(name, &reg);
	struct rlog_shm_counter *t = reg.counters;
	char st;
	uint64_t me_start = 0, dead_start;
	rlog__procstat_read(0, &st, &me_start);
	uint32_t me = (uint32_t)getpid();
	pid_t dead = dead_pid(&dead_start);

	/* Entries a scribbler left. */
	uint8_t ugly[40];
	memset(ugly, 'a', sizeof ugly);
	ugly[0] = '"';
	ugly[1] = '\\';
	ugly[2] = 0x01;
	ugly[3] = 0xff;
	ugly[4] = ' ';
	forge(&t[0], RLOG_COUNTER_SET, me, me_start, 0, ugly, sizeof ugly); /* no NUL */
	forge(&t[1], 77, me, me_start, 5, "bad.state", 9);
	forge(&t[2], RLOG_COUNTER_SET, 0, 0, 5, "no.owner", 8);
	forge(&t[3], RLOG_COUNTER_SET, 0x80000001u, 0, 5, "huge.pid", 8);
	forge(&t[4], RLOG_COUNTER_SET, (uint32_t)dead, dead_start, 11, "dead.set", 8);
	forge(&t[5], RLOG_COUNTER_WRITING, (uint32_t)dead, dead_start, 0, "dead.writing", 12);
	forge(&t[6], RLOG_COUNTER_SET, me, me_start, 0, "", 0); /* an empty name */
	cr_passes(&reg, 2);
	atomic_fetch_add(&t[0].value, 3);
	atomic_fetch_add(&t[6].value, 4);
	cr_passes(&reg, 2);

	/* Dead owners' entries are freed within a second or so (bounded
	 * wait, not a time assertion); the others stay. */
	uint64_t give_up = cr_now_ns() + UINT64_C(60000000000);
	while ((atomic_load(&t[4].state) != RLOG_COUNTER_FREE ||
		atomic_load(&t[5].state) != RLOG_COUNTER_FREE) && cr_now_ns() < give_up)
		cr_passes(&reg, 1);
	ASSERT_EQ(atomic_load(&t[4].state), RLOG_COUNTER_FREE);
	ASSERT_EQ(atomic_load(&t[5].state), RLOG_COUNTER_FREE);
	ASSERT_EQ(atomic_load(&t[4].pid), 0);
	ASSERT_EQ(atomic_load(&t[1].state), 77);
	ASSERT_EQ(atomic_load(&t[2].state), RLOG_COUNTER_SET);
	ASSERT_EQ(atomic_load(&t[3].state), RLOG_COUNTER_SET);
	ASSERT_EQ(atomic_load(&t[0].state), RLOG_COUNTER_SET);

	/* Random bytes over the whole table at every pass, and a period of 0
	 * (the daemon samples as often as it loops). */
	unsigned seed = 12345;
	for (int pass = 0; pass < 50; pass++) {
		uint8_t *b = (uint8_t *)t;
		for (size_t i = 0; i < RLOG_SHM_COUNTERS * sizeof *t; i++) {
			seed = seed * 1103515245u + 12345u;
			b[i] = (uint8_t)(seed >> 16);
		}
		for (int i = 0; i < RLOG_SHM_COUNTERS; i++) {
			/* No fuzzed pid for /proc and kill(2): none, ours or nonsense. */
			uint32_t p = atomic_load(&t[i].pid);
			atomic_store(&t[i].pid, p & 1 ? me : p & 2 ? 0x80000000u | p : 0);
			if (i % 3 == 0)
				atomic_store(&t[i].state, RLOG_COUNTER_SET);
		}
		if (pass == 10)
			atomic_store(&reg.hdr->counter_period_ms, 0);
		cr_passes(&reg, 1);
	}
	atomic_store(&reg.hdr->counter_period_ms, 10);
	memset(t, 0, RLOG_SHM_COUNTERS * sizeof *t);
	rlog__region_close(&reg);
	struct cr_list l;
	cr_stop_read(name, path, &r, &l);
	ASSERT_EQ_U64(h_kv(r.out, "corrupt_buffers"), 0);
	/* The ugly name: 39 bytes, each unprintable byte as '_'. */
	ASSERT_EQ_U64(cr_sum(&l, me, "_____" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), 3);
	/* The empty name (the first "_": the scribbles made more, later). */
	const struct cr_rec *first[1];
	ok(cr_of(&l, me, "_", first, 1) > 0 && first[0]->c.delta == 4, "an empty name reads \"_\"");
	ASSERT_EQ_U64(cr_sum(&l, (uint32_t)dead, "dead.set"), 11);
	ASSERT_EQ_U64(cr_of(&l, me, "bad.state", NULL, 0), 0);
	ASSERT_EQ_U64(cr_of(&l, 0, "no.owner", NULL, 0), 0);
	ASSERT_EQ_U64(cr_of(&l, 0x80000001u, "huge.pid", NULL, 0), 0);
	int bad_names = 0;
	for (size_t i = 0; i < l.n; i++) {
		size_t k = strlen(l.v[i].name);
		bad_names += k == 0 || k > RLOG_COUNTER_NAME_MAX;
		for (size_t j = 0; j < k; j++) {
			unsigned char c = (unsigned char)l.v[i].name[j];
			bad_names += c < 0x21 || c > 0x7e || c == '"' || c == '\\';
		}
	}
	ASSERT_EQ(bad_names, 0);
	cr_free(&l);
	unlink(path);
	return done_testing();
}
