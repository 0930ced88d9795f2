/*
 * modes.c - the write path into other kinds of session than the plain one
 * of `ringlog bench`, each against that one measured run by run in the same
 * invocation (docs/PERFORMANCE.md):
 *
 *   write_2sessions_*   the process attached to a second session as well:
 *                       every write goes to both, each binding with room
 *                       written by the inline path (include/ringlog.h,
 *                       rlog__write_several), the others by the library
 *   write_3sessions_*,  the same with three and with eight sessions
 *   write_8sessions_*   (RLOG_MAX_SESSIONS), added one by one in each run
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
	double *one_cpu, *other_cpu; /* the same in the writer's CPU time */
	uint64_t lost;
	bool ok;
};

static bool pair_alloc(struct pair *x, unsigned runs)
{
	x->one = calloc(runs, sizeof(double));
	x->other = calloc(runs, sizeof(double));
	x->one_cpu = calloc(runs, sizeof(double));
	x->other_cpu = calloc(runs, sizeof(double));
	x->ok = x->one && x->other && x->one_cpu && x->other_cpu;
	return x->ok;
}

static void pair_free(struct pair *x)
{
	free(x->one);
	free(x->other);
	free(x->one_cpu);
	free(x->other_cpu);
}

/* The sessions added to the main one: 1, 2 and 7 of them make 2, 3 and
 * 8 sessions (RLOG_MAX_SESSIONS). */
#define EXTRA 7
static const unsigned with_n[] = { 2, 3, 8 };
#define WITH (sizeof with_n / sizeof with_n[0])

/* Run by run: the main session alone, then with the others attached as
 * well, added one by one up to each count of with_n, then detached. */
static void several_sessions(struct pair x[WITH], struct bench_session *extra, unsigned runs,
			     uint64_t events)
{
	/* A run into all of them first, not measured: each pool grows and
	 * its pages are in, as the main session's are after its own first
	 * run (a run into a pool not yet touched costs its page faults, in
	 * the writer: docs/PERFORMANCE.md, "Memory"). */
	bool ok = true;
	unsigned added = 0;
	while (ok && added < EXTRA)
		ok = rlog_attach_add(extra[added++].name) == 0;
	if (ok)
		bench_write16(1, events, false);
	while (added > 0)
		rlog_detach_session(extra[--added].name);
	for (unsigned r = 0; r < runs && ok; r++) {
		struct bench_result one = bench_write16(1, events, false);
		bench_settle();
		for (unsigned w = 0; w < WITH && ok; w++) {
			while (ok && added + 1 < with_n[w])
				ok = rlog_attach_add(extra[added++].name) == 0;
			if (!ok)
				break;
			struct bench_result res = bench_write16(1, events, false);
			x[w].one[r] = one.ns;
			x[w].other[r] = res.ns;
			x[w].one_cpu[r] = one.cpu_ns;
			x[w].other_cpu[r] = res.cpu_ns;
			x[w].lost += res.lost;
			bench_settle();
		}
		while (added > 0)
			rlog_detach_session(extra[--added].name);
		bench_settle();
	}
	for (unsigned w = 0; w < WITH; w++)
		x[w].ok &= ok;
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
	struct pair with[WITH], ovw = { 0 };
	memset(with, 0, sizeof with);
	double ref = 0;
	struct bench_session s, extra[EXTRA], sow;
	struct rlog__stop_result res2, resow;
	memset(&s, 0, sizeof s);
	memset(extra, 0, sizeof extra);
	memset(&sow, 0, sizeof sow);
	memset(&resow, 0, sizeof resow);
	bool alloc = pair_alloc(&ovw, o.runs);
	for (unsigned w = 0; w < WITH; w++)
		alloc &= pair_alloc(&with[w], o.runs);
	int err = alloc ? 0 : -ENOMEM;
	if (err == 0)
		err = prog_session_open(&s, NULL, &p);
	if (err == 0) {
		double *rs = calloc(o.runs, sizeof *rs);
		for (unsigned r = 0; rs && r < o.runs; r++)
			rs[r] = bench_ref_rdtsc_store(o.events);
		ref = rs ? bench_median(rs, (int)o.runs) : 0;
		free(rs);
		bool started = true;
		for (unsigned e = 0; e < EXTRA && started; e++) {
			char tag[16];
			snprintf(tag, sizeof tag, "s%u", e + 2);
			started = bench_session_start(&extra[e], tag, &p) == 0;
		}
		for (unsigned w = 0; w < WITH; w++)
			with[w].ok &= started;
		if (started)
			several_sessions(with, extra, o.runs, o.events);
		for (unsigned e = 0; e < EXTRA; e++)
			bench_session_stop(&extra[e], &res2);
		ovw.ok &= bench_session_start(&sow, "ow", &pow) == 0;
		overwrite(&ovw, s.name, sow.name, o.runs, o.events);
		bench_session_stop(&sow, &resow);
		prog_session_close(&s, NULL);
	}
	if (err < 0) {
		if (err == -ENOMEM)
			fprintf(stderr, "bench_modes: out of memory\n");
		for (unsigned w = 0; w < WITH; w++)
			pair_free(&with[w]);
		pair_free(&ovw);
		return 1;
	}
	printf("ref_rdtsc_store_ns: %.2f\n", ref);
	bool with_ok = true;
	for (unsigned w = 0; w < WITH; w++) {
		with_ok &= with[w].ok;
		if (!with[w].ok)
			continue;
		double one = bench_median(with[w].one, (int)o.runs);
		double n = bench_median(with[w].other, (int)o.runs);
		printf("write_%usessions_ns: %.2f\n", with_n[w], n);
		printf("write_%usessions_vs_1session: %.2f\n", with_n[w], n / one);
		double cone = bench_median(with[w].one_cpu, (int)o.runs);
		double cn = bench_median(with[w].other_cpu, (int)o.runs);
		printf("write_%usessions_cpu_vs_1session: %.2f\n", with_n[w], cn / cone);
		printf("write_%usessions_events_lost: %" PRIu64 "\n", with_n[w], with[w].lost);
	}
	if (!with_ok)
		fprintf(stderr, "bench_modes: the other sessions failed (no write_Nsessions_*)\n");
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
	for (unsigned w = 0; w < WITH; w++)
		pair_free(&with[w]);
	pair_free(&ovw);
	return with_ok && ovw.ok ? 0 : 1;
}
