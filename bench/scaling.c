/*
 * scaling.c - the write path against the payload size and the number of
 * threads (docs/PERFORMANCE.md, "Payload size" and "Threads"), in a
 * session of its own with the default buffers:
 *
 *   payload_N_*   1 thread, timed events of N bytes (0 to 1024) against
 *                 memcpy of as many bytes into a 16 MiB array
 *   threads_N_*   16-byte timed events from N threads at once (1, 2, 4):
 *                 per thread, and all threads' events over the time from
 *                 the first one's start to the last one's end
 *
 *   build/bench/bench_scaling [--runs N] [--events N] [--quick]
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/loops.h"
#include "bench/session.h"
#include "prog.h"
#include "ringlog.h"

static const size_t payload_sizes[] = { 0, 16, 64, 256, 1024 };
#define NSIZES (sizeof payload_sizes / sizeof payload_sizes[0])
static const int thread_counts[] = { 1, 2, 4 };
#define NTHREADS (sizeof thread_counts / sizeof thread_counts[0])

/* The figures, runs x (sizes + thread counts). */
struct scaling {
	double *size_ns[NSIZES], *memcpy_ns[NSIZES];
	double *thr_ns[NTHREADS], *thr_rate[NTHREADS];
	uint64_t size_events[NSIZES], thr_events[NTHREADS];
	uint64_t lost;
	bool short_threads; /* a thread could not be created */
};

static bool scaling_alloc(struct scaling *sc, uint64_t runs)
{
	bool ok = true;
	for (size_t k = 0; k < NSIZES; k++) {
		ok &= (sc->size_ns[k] = calloc(runs, sizeof(double))) != NULL;
		ok &= (sc->memcpy_ns[k] = calloc(runs, sizeof(double))) != NULL;
	}
	for (size_t k = 0; k < NTHREADS; k++) {
		ok &= (sc->thr_ns[k] = calloc(runs, sizeof(double))) != NULL;
		ok &= (sc->thr_rate[k] = calloc(runs, sizeof(double))) != NULL;
	}
	return ok;
}

static void scaling_free(struct scaling *sc)
{
	for (size_t k = 0; k < NSIZES; k++) {
		free(sc->size_ns[k]);
		free(sc->memcpy_ns[k]);
	}
	for (size_t k = 0; k < NTHREADS; k++) {
		free(sc->thr_ns[k]);
		free(sc->thr_rate[k]);
	}
}

/*
 * One run of each figure.  A burst must fit in half the pool (the daemon
 * drains meanwhile, but not at the producer's speed): at most 8 MiB of
 * records per payload size, and as many events in all for 2 and 4 threads
 * as for 2 threads of 16-byte events.
 */
static void scaling_run(struct scaling *sc, uint64_t r, uint64_t events, uint64_t pool_bytes)
{
	for (size_t k = 0; k < NSIZES; k++) {
		size_t len = payload_sizes[k];
		uint64_t rec = (8 + len + 3) & ~(uint64_t)3, n = pool_bytes / 2 / rec;
		n = n < events ? n : events;
		sc->size_events[k] = n;
		sc->memcpy_ns[k][r] = bench_ref_memcpy(n, len);
		struct bench_write w = { .threads = 1, .events = n, .len = len };
		struct bench_result res = bench_write_run(&w);
		sc->size_ns[k][r] = res.ns;
		sc->lost += res.lost;
		bench_settle();
	}
	for (size_t k = 0; k < NTHREADS; k++) {
		int t = thread_counts[k];
		uint64_t n = t == 1 ? events : events * 2 / (uint64_t)t;
		sc->thr_events[k] = n;
		struct bench_result res = bench_write16(t, n, false);
		sc->thr_ns[k][r] = res.ns;
		sc->thr_rate[k][r] = res.span_ns > 0 ? (double)n * res.threads / res.span_ns * 1e9 : 0;
		sc->short_threads |= res.threads != t;
		sc->lost += res.lost;
		bench_settle();
	}
}

/* One figure of a group: "GROUP_N_KEY: VALUE" with decimals digits. */
struct figure {
	const char *key;
	double value;
	int decimals;
};

static void print_figures(const char *group, long n, const struct figure *f, size_t count)
{
	for (size_t i = 0; i < count; i++)
		printf("%s_%ld_%s: %.*f\n", group, n, f[i].key, f[i].decimals, f[i].value);
}

static void scaling_print(struct scaling *sc, uint64_t runs)
{
	for (size_t k = 0; k < NSIZES; k++) {
		double len = (double)payload_sizes[k];
		double w = bench_median(sc->size_ns[k], (int)runs);
		double m = bench_median(sc->memcpy_ns[k], (int)runs);
		const struct figure f[] = {
			{ "events_per_run", (double)sc->size_events[k], 0 },
			{ "write_ns", w, 2 },
			{ "write_gb_per_s", w > 0 ? len / w : 0, 3 },
			{ "ref_memcpy_ns", m, 2 },
			{ "ref_memcpy_gb_per_s", m > 0 ? len / m : 0, 3 },
			{ "write_vs_memcpy", m > 0 ? w / m : 0, 2 },
		};
		print_figures("payload", (long)payload_sizes[k], f, sizeof f / sizeof f[0]);
	}
	for (size_t k = 0; k < NTHREADS; k++) {
		double rate = bench_median(sc->thr_rate[k], (int)runs);
		const struct figure f[] = {
			{ "events_per_thread", (double)sc->thr_events[k], 0 },
			{ "ns_per_thread", bench_median(sc->thr_ns[k], (int)runs), 2 },
			{ "aggregate_events_per_s", rate, 0 },
			{ "aggregate_mb_per_s", rate * BENCH_RECORD_BYTES / 1e6, 1 },
		};
		print_figures("threads", thread_counts[k], f, sizeof f / sizeof f[0]);
	}
	if (sc->short_threads)
		printf("threads_note: a thread could not be created in some runs\n");
	printf("scaling_events_lost: %" PRIu64 "\n", sc->lost);
}

int main(int argc, char **argv)
{
	struct prog_opts o = { .runs = 11, .events = 250000 };
	prog_args(argc, argv, &o);
	prog_quick(&o, 1, 20000);
	struct rlog__region_params p;
	rlog__props_default(&p);
	struct scaling sc;
	memset(&sc, 0, sizeof sc);
	if (!scaling_alloc(&sc, o.runs)) {
		fprintf(stderr, "bench_scaling: out of memory\n");
		return 1;
	}
	struct bench_session s;
	int err = prog_session_open(&s, NULL, &p);
	if (err == 0) {
		for (unsigned r = 0; r < o.runs; r++)
			scaling_run(&sc, r, o.events, (uint64_t)p.buffer_size * p.max_buffers);
		prog_session_close(&s, NULL);
		scaling_print(&sc, o.runs);
	}
	scaling_free(&sc);
	return err < 0;
}
