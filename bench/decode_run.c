/*
 * decode_run.c - the daemon's check of the common record, alone
 * (docs/PERFORMANCE.md, "What the daemon costs"): buffers of 16 KiB of
 * records decoded by the walk (rlog__record_plain one record after the
 * other, the decode before runs) and by the walk with runs
 * (rlog__record_plain_run after each record, 32 records walked after a
 * failed try, as src/daemon/drain.c does), in ns of this thread's CPU per
 * record, twice each.  SHAPES 1: every record of one shape (a 16-byte
 * payload, time-stamped: 24 bytes); SHAPES 3: lengths 16, 8, 8 in turn,
 * no run of one shape at all (the runs' worst case).  The bytes are in
 * this core's cache: what is measured is the instructions and their
 * dependencies, not the transfer of lines a producer wrote on another
 * core, which the daemon also pays.
 *
 *   cc -O2 -std=c11 -I include -I src/common bench/decode_run.c -o /tmp/decode_run
 *   /tmp/decode_run 1; /tmp/decode_run 3
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "record.h"

#define CHUNK 16368u /* 682 records of 24 bytes: a 16 KiB buffer's worth */

static double cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The decode's fast path over n bytes at d (runs or not); returns the
 * cursor, *count the records accepted. */
static uint64_t walk(const uint8_t *d, uint32_t n, uint64_t cur, int runs, uint32_t *count)
{
	uint32_t size = 0, plain, h0, c = 0, skip = 0;
	while (size < n && (plain = rlog__record_plain(d + size, n - size, &cur, &h0)) != 0) {
		c++;
		size += plain;
		if (!runs)
			continue;
		if (skip) {
			skip--;
			continue;
		}
		uint32_t r = rlog__record_plain_run(d + size, n - size, h0, &cur);
		c += r;
		size += r * plain;
		skip = r == 0 ? 32 : 0;
	}
	*count = c;
	return cur;
}

int main(int argc, char **argv)
{
	int shapes = argc > 1 ? atoi(argv[1]) : 1;
	static uint32_t w[CHUNK / 4 + 16];
	uint32_t t = 1000, pos = 0;
	for (unsigned i = 0; pos * 4 + 24 <= CHUNK; i++) {
		unsigned len = shapes == 1 || i % 3 == 0 ? 16 : 8;
		w[pos] = rlog__hdr_make(1024 + i % 7, len, true);
		w[pos + 1] = t;
		t += 30;
		pos += 2 + len / 4;
	}
	uint32_t n = pos * 4;
	for (int runs = 0; runs < 2; runs++) {
		for (int pass = 0; pass < 2; pass++) {
			uint64_t sink = 0, recs = 0;
			double t0 = cpu_s();
			for (int r = 0; r < 20000; r++) {
				uint32_t c;
				sink += walk((const uint8_t *)w, n, 1000 - 30, runs, &c);
				recs += c;
			}
			double dt = cpu_s() - t0;
			printf("shapes_%d_%s_ns_per_record: %.2f\n", shapes, runs ? "runs" : "walk",
			       dt * 1e9 / (double)recs);
			if (sink == 1)
				printf("\n"); /* keeps the loop */
		}
	}
	return 0;
}
