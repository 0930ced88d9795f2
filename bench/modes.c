/*
 * modes.c - the write path into other kinds of session than the plain one
 * of `ringlog bench`, each against that one measured run by run in the same
 * invocation (docs/PERFORMANCE.md):
 *
 *   write_2sessions_*   the process attached to a second session as well:
 *                       every write then takes the slow path and goes to both
 *   write_overwrite_*   a flight recorder (overwrite mode, no file) of 64
 *                       buffers (1 MiB with the default size), which each run
 *                       laps several times: every buffer taken is a full
 *                       one overwritten
 *
 *   build/bench/bench_modes [--runs N] [--events N] [--quick]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/loops.h"
#include "bench/session.h"
#include "prog.h"
#include "ringlog.h"

/* Per run: the main session alone (one), then with the other (other). */
struct pair {
	double *one, *other;
	uint64_t lost;
	bool ok;
};

static bool pair_alloc(struct pair *x, unsigned runs)
{
	x->one = calloc(runs, sizeof(double));
	x->other = calloc(runs, sizeof(double));
	x->ok = x->one && x->other;
	return x->ok;
}

static void pair_free(struct pair *x)
{
	free(x->one);
	free(x->other);
}

/* A second session: attached as well, then detached from, run by run. */
static void two_sessions(struct pair *x, const char *second, unsigned runs, uint64_t events)
{
	for (unsigned r = 0; r < runs && x->ok; r++) {
		x->one[r] = bench_write16(1, events, false).ns;
		bench_settle();
		if (rlog_attach_add(second) != 0) {
			x->ok = false;
			break;
		}
		struct bench_result res = bench_write16(1, events, false);
		x->other[r] = res.ns;
		x->lost += res.lost;
		rlog_detach_session(second);
		bench_settle();
	}
}

/* The flight recorder instead of the main session, run by run. */
static void overwrite(struct pair *x, const char *main_name, const char *ow, unsigned runs,
		      uint64_t events)
{
	for (unsigned r = 0; r < runs && x->ok; r++) {
		x->one[r] = bench_write16(1, events, false).ns;
		bench_settle();
		if (rlog_attach(ow) != 0) {
			x->ok = false;
			break;
		}
		struct bench_result res = bench_write16(1, events, false);
		x->other[r] = res.ns;
		x->lost += res.lost;
		x->ok = rlog_attach(main_name) == 0;
		bench_settle();
	}
}

int main(int argc, char **argv)
{
	struct prog_opts o = { .runs = 11, .events = 250000 };
	prog_args(argc, argv, &o);
	prog_quick(&o, 1, 20000);
	struct rlog__region_params p, pow;
	rlog__props_default(&p);
	pow = p;
	pow.min_buffers = pow.max_buffers = 64;
	pow.log_file_mode = RLOG_MODE_OVERWRITE;
	struct pair two = { 0 }, ovw = { 0 };
	double ref = 0;
	struct bench_session s, s2, sow;
	struct rlog__stop_result res2, resow;
	memset(&s, 0, sizeof s);
	memset(&s2, 0, sizeof s2);
	memset(&sow, 0, sizeof sow);
	memset(&resow, 0, sizeof resow);
	int err = pair_alloc(&two, o.runs) && pair_alloc(&ovw, o.runs) ? 0 : -ENOMEM;
	if (err == 0)
		err = prog_session_open(&s, NULL, &p);
	if (err == 0) {
		double *rs = calloc(o.runs, sizeof *rs);
		for (unsigned r = 0; rs && r < o.runs; r++)
			rs[r] = bench_ref_rdtsc_store(o.events);
		ref = rs ? bench_median(rs, (int)o.runs) : 0;
		free(rs);
		two.ok &= bench_session_start(&s2, "second", &p) == 0;
		two_sessions(&two, s2.name, o.runs, o.events);
		bench_session_stop(&s2, &res2);
		ovw.ok &= bench_session_start(&sow, "ow", &pow) == 0;
		overwrite(&ovw, s.name, sow.name, o.runs, o.events);
		bench_session_stop(&sow, &resow);
		prog_session_close(&s, NULL);
	}
	if (err < 0) {
		if (err == -ENOMEM)
			fprintf(stderr, "bench_modes: out of memory\n");
		pair_free(&two);
		pair_free(&ovw);
		return 1;
	}
	printf("ref_rdtsc_store_ns: %.2f\n", ref);
	if (two.ok) {
		double one = bench_median(two.one, (int)o.runs);
		double both = bench_median(two.other, (int)o.runs);
		printf("write_2sessions_ns: %.2f\n", both);
		printf("write_2sessions_vs_1session: %.2f\n", both / one);
		printf("write_2sessions_events_lost: %" PRIu64 "\n", two.lost);
	} else {
		fprintf(stderr, "bench_modes: the second session failed (no write_2sessions_*)\n");
	}
	if (ovw.ok) {
		double one = bench_median(ovw.one, (int)o.runs);
		double ow = bench_median(ovw.other, (int)o.runs);
		printf("write_overwrite_ns: %.2f\n", ow);
		printf("write_overwrite_vs_rdtsc_store: %.2f\n", ow / ref);
		printf("write_overwrite_vs_1t: %.2f\n", ow / one);
		printf("overwrite_events_lost: %" PRIu64 "\n", ovw.lost);
		printf("overwrite_events_overwritten: %" PRIu64 "\n", resow.stats.events_overwritten);
	} else {
		fprintf(stderr, "bench_modes: the flight recorder failed (no write_overwrite_*)\n");
	}
	pair_free(&two);
	pair_free(&ovw);
	return two.ok && ovw.ok ? 0 : 1;
}
