/*
 * convert.c - the converters side by side (docs/CONVERT.md, "Sizes and
 * speeds"): the same trace to Perfetto's protobuf and to Chrome JSON.
 *
 *   perfetto_events_per_s   events read and converted per second (the
 *                           reader's time included, its open pass too:
 *                           what `ringlog convert` does, without the CLI)
 *   perfetto_bytes          the output's size
 *   perfetto_bytes_per_event
 *   chrome_events_per_s, chrome_bytes, chrome_bytes_per_event  the same for
 *                           --to chrome ("X" spans, its default)
 *   perfetto_vs_chrome_size perfetto_bytes / chrome_bytes
 *   read_events_per_s       the reader alone (rlog_reader_next, and
 *                           rlog_reader_schema and the fields' decoding as a
 *                           converter does them, and the open): the
 *                           ceiling of both
 *   events                  events in the trace
 *
 * The trace is crafted (tests/filegen.h), a typical mix on 4 threads of one
 * process (pid 123456: six digits, as on a machine up for a while), from 1 s
 * into the session, 20 ns apart, repeated: a span begin (one u32 field), an event of 3 fields
 * (u64, i32, a 12-byte string), a counter event of 3 fields (u32, f64,
 * i16), the same event again, the span's end.  Written to $TMPDIR (or
 * /tmp), converted into files there (the page cache, not the disk, on a
 * machine with the memory).  The rates are medians of --runs runs, the
 * three kinds of run taking turns.
 *
 *   build/bench/bench_convert [--runs N] [--events N] [--quick]
 *
 * --quick: 1 run of 200 000 events.  BENCH_CONVERT_KEEP=PATH: the trace
 * is written to PATH and kept (to run `ringlog convert` or callgrind on it).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "prog.h"
#include "convert/convert.h"
#include "ringlog/reader.h"
#include "test_convert_fixture.h"

#define REQ 1110

static void build(struct fg_file *f, uint64_t events)
{
	static const struct fx_field work[] = { { RLOG_FIELD_U32, 0, "depth" } };
	static const struct fx_field req[] = {
		{ RLOG_FIELD_U64, 0, "id" }, { RLOG_FIELD_I32, 0, "status" }, { RLOG_FIELD_STRING, 0, "path" },
	};
	static const struct fx_field queue[] = {
		{ RLOG_FIELD_U32, 0, "depth" }, { RLOG_FIELD_F64, 0, "load" }, { RLOG_FIELD_I16, 0, "delta" },
	};
	struct fg_block b;
	fg_file_init(f);
	fg_marker_block(f, 1, 1, 1000000000u, FX_START, FX_REALTIME, RLOG_TICK_TSC, 65536, 8, "bench");
	fg_block_begin(&b, 123456, 123457, FX_START, 0);
	fx_schema(&b, 1, FX_WORK, RLOG_KIND_SPAN, 1, "work.span", work, 1);
	fx_schema(&b, 2, REQ, RLOG_KIND_EVENT, 2, "http.request", req, 3);
	fx_schema(&b, 3, FX_QUEUE, RLOG_KIND_COUNTER, 0, "queue", queue, 3);
	fg_block_end(f, &b);
	/* 4 threads, a block of 500 records each in turn; 100 ns apart, so
	 * that 32-bit record times never wrap in a block. */
	uint64_t n = 0, t = 1000000000; /* from 1 s into the session */
	while (n < events) {
		for (uint32_t th = 0; th < 4 && n < events; th++) {
			fg_block_begin(&b, 123456, 123457 + th, FX_START + t, 0);
			for (unsigned k = 0; k < 100 && n < events; k++) {
				struct fg_buf p = { 0 };
				fx_work_begin(&b, t, k & 7);
				fg_u64(&p, n);
				fg_u32(&p, 200);
				fx_str(&p, "/api/v1/item", 12);
				fx_rec(&b, t + 20, REQ, -1, p.p, p.len);
				fx_queue(&b, t + 40, (uint32_t)k, 0.5, (int16_t)(k - 50));
				fx_rec(&b, t + 60, REQ, -1, p.p, p.len);
				fx_rec(&b, t + 80, FX_WORK, RLOG_SPAN_END, NULL, 0);
				free(p.p);
				n += 5;
				t += 100;
			}
			fg_block_end(f, &b);
		}
	}
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Converts in to a new file next to it; returns the seconds taken. */
static double run(const char *in, const char *out, bool perfetto, struct rlog__convert_stats *st)
{
	struct rlog_reader *r;
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		perror("bench_convert: open");
		exit(1);
	}
	double t0 = now_s();
	if (rlog_reader_open(in, &r) < 0) {
		fprintf(stderr, "bench_convert: %s does not open\n", in);
		exit(1);
	}
	int rc = perfetto ? rlog__convert_perfetto(r, fd, NULL, st)
			  : rlog__convert_chrome(r, fd, 0, st);
	rlog_reader_close(r);
	double dt = now_s() - t0;
	close(fd);
	unlink(out);
	if (rc < 0) {
		fprintf(stderr, "bench_convert: conversion failed: %s\n", strerror(-rc));
		exit(1);
	}
	return dt;
}

/* The reader and the decoding alone; returns the seconds taken. */
static double run_read(const char *in, uint64_t *n)
{
	struct rlog_reader *r;
	struct rlog_event ev;
	struct rlog_value v[RLOG_SCHEMA_MAX_FIELDS];
	double t0 = now_s();
	if (rlog_reader_open(in, &r) < 0)
		exit(1);
	*n = 0;
	while (rlog_reader_next(r, &ev) > 0) {
		const struct rlog_schema *s = rlog_reader_schema(r, &ev);
		if (s)
			(void)rlog__convert_fields(s, &ev, v);
		(*n)++;
	}
	rlog_reader_close(r);
	return now_s() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	struct prog_opts o = { .runs = 5, .events = 5000000 };
	prog_args(argc, argv, &o);
	prog_quick(&o, 1, 200000);

	const char *dir = getenv("TMPDIR");
	char in[256], out[272];
	const char *keep = getenv("BENCH_CONVERT_KEEP");
	if (keep)
		snprintf(in, sizeof(in), "%s", keep);
	else
		snprintf(in, sizeof(in), "%s/rlog_bench_convert_%d.rlog", dir ? dir : "/tmp",
			 (int)getpid());
	snprintf(out, sizeof(out), "%s.out", in);
	struct fg_file f;
	build(&f, o.events);
	if (fg_write(&f, in) < 0) {
		fprintf(stderr, "bench_convert: cannot write %s\n", in);
		return 1;
	}
	fg_file_free(&f);

	double tp[101], tc[101], tr[101];
	uint64_t nr = 0;
	struct rlog__convert_stats sp, sc;
	for (unsigned i = 0; i < o.runs; i++) {
		tp[i] = run(in, out, true, &sp);
		tc[i] = run(in, out, false, &sc);
		tr[i] = run_read(in, &nr);
	}
	double med_p = median(tp, o.runs), med_c = median(tc, o.runs), med_r = median(tr, o.runs);
	if (!keep)
		unlink(in);
	printf("events: %" PRIu64 "\n", sp.events_read);
	printf("perfetto_events_per_s: %.0f\n", (double)sp.events_read / med_p);
	printf("perfetto_bytes: %" PRIu64 "\n", sp.bytes_written);
	printf("perfetto_bytes_per_event: %.2f\n", (double)sp.bytes_written / (double)sp.events_read);
	printf("chrome_events_per_s: %.0f\n", (double)sc.events_read / med_c);
	printf("chrome_bytes: %" PRIu64 "\n", sc.bytes_written);
	printf("chrome_bytes_per_event: %.2f\n", (double)sc.bytes_written / (double)sc.events_read);
	printf("perfetto_vs_chrome_size: %.3f\n", (double)sp.bytes_written / (double)sc.bytes_written);
	printf("read_events_per_s: %.0f\n", (double)nr / med_r);
	return 0;
}
