/*
 * test_counters_period - the counter period and live changes (docs/SESSIONS.md,
 * "Every member"), through a real session and daemon:
 *   - over about a second, the daemon makes about one sampling pass per
 *     counter period: never more than the elapsed time allows (it does not
 *     catch up in bursts), and at least a quarter of them (what a loaded
 *     2-core machine keeps); the count is asserted, never a time;
 *   - `ringlog update --counter-period` changes the count accordingly,
 *     while the session runs;
 *   - `ringlog update --counters none` stops the records (the counter's
 *     changes then are not recorded), `--counters app` starts them again
 *     from a new reading, whose first record carries the value;
 *   - query shows the counters and the period.
 */
#include "counter_run.h"

#include "harness.h"
#include "tap.h"

static struct h_run r;

/* Sampling passes over about a second, and the exact elapsed ns. */
static uint64_t passes_in_a_second(const struct rlog__region *reg, uint64_t *elapsed)
{
	uint64_t t0 = cr_now_ns(), s0 = cr_samples(reg);
	struct timespec ts = { 1, 0 };
	nanosleep(&ts, NULL);
	uint64_t s1 = cr_samples(reg), t1 = cr_now_ns();
	*elapsed = t1 - t0;
	return s1 - s0;
}

static void check_rate(const struct rlog__region *reg, uint64_t period_ms)
{
	uint64_t ns, n = passes_in_a_second(reg, &ns);
	uint64_t most = ns / (period_ms * 1000000u) + 2, least = ns / (period_ms * 1000000u) / 4;
	ok(n <= most && n >= least, "period %" PRIu64 " ms: %" PRIu64 " passes in %" PRIu64
	   " ns (expected %" PRIu64 " to %" PRIu64 ")", period_ms, n, ns, least, most);
}

int main(void)
{
	char name[64], path[256];
	cr_names("per", name, path);
	unlink(path);
	h_ringlog(&r, "start", name, "-o", path, "--counter-period", "10ms", NULL);
	cr_started(&r, name);
	h_ringlog(&r, "query", name, NULL);
	ASSERT_CONTAINS(r.out, "counters: app\n"); /* the default */
	ASSERT_CONTAINS(r.out, "counter_period_ms: 10\n");
	struct rlog__region reg;
	cr_open(name, &reg);
	check_rate(&reg, 10);
	h_ringlog(&r, "update", name, "--counter-period", "100ms", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");
	cr_passes(&reg, 1); /* the new period is in force from the next pass */
	check_rate(&reg, 100);
	h_ringlog(&r, "update", name, "--counter-period", "10ms", NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "query", name, NULL);
	ASSERT_CONTAINS(r.out, "counter_period_ms: 10\n");

	/* Counters off and on again while the application counts. */
	ASSERT_EQ(rlog_attach(name), 0);
	uint64_t *c;
	ASSERT_EQ(rlog_counter_register("live", &c), 1);
	__atomic_fetch_add(c, 10, __ATOMIC_SEQ_CST);
	cr_passes(&reg, 2);
	h_ringlog(&r, "update", name, "--counters", "none", NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "query", name, NULL);
	ASSERT_CONTAINS(r.out, "counters: none\n");
	cr_passes(&reg, 2); /* the daemon has the new list */
	__atomic_fetch_add(c, 7, __ATOMIC_SEQ_CST);
	cr_passes(&reg, 3);
	ASSERT_EQ_U64(atomic_load(&reg.hdr->stats.counter_records), 1);
	h_ringlog(&r, "update", name, "--counters", "app", NULL);
	ASSERT_EQ(r.status, 0);
	cr_passes(&reg, 3); /* a new reading: 17, no record */
	ASSERT_EQ_U64(atomic_load(&reg.hdr->stats.counter_records), 1);
	__atomic_fetch_add(c, 3, __ATOMIC_SEQ_CST);
	cr_passes(&reg, 2);
	rlog_detach();
	rlog__region_close(&reg);
	struct cr_list l;
	cr_stop_read(name, path, &r, &l);
	ASSERT_EQ_U64(h_kv(r.out, "counter_records"), 2);
	const struct cr_rec *v[4];
	ASSERT_EQ_U64(cr_of(&l, (uint32_t)getpid(), "live", v, 4), 2);
	ASSERT_EQ_U64(v[0]->c.delta, 10);
	ASSERT_EQ_U64(v[0]->c.value, 10);
	ASSERT_EQ_U64(v[1]->c.delta, 3); /* the 7 made while off are not a delta */
	ok(v[1]->c.flags & RLOG_COUNTER_FLAG_VALUE, "the first record after a new reading carries "
						 "the value");
	ok(v[1]->c.value_known && v[1]->c.value == 20, "value %" PRIu64, v[1]->c.value);
	ASSERT_EQ(v[1]->c.seq, 1);
	cr_free(&l);
	unlink(path);
	return done_testing();
}
