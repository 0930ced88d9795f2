/*
 * test_reader_give_back - the reader gives the pages it has read back to
 * the kernel in few madvise() calls (src/reader/file.c, rlog__drop_range):
 * the pages of the threads' blocks, which interleave in the file and are
 * read in about file order, are gathered while they touch and given back
 * 2 MiB at a time, not a call per block (a TLB flush on every CPU the
 * process runs on, each: docs/PERFORMANCE.md, "Converting"), and the
 * resident set still stays a small part of the file.
 *
 * The file (tests/filegen.h): its LOG_MARKER, then 4 threads taking
 * turns, a block of PER numbered events each (payload {thread, sequence}
 * and filler, 64-byte records), 16 MiB in all.  Read with
 * rlog_reader_next: every event once, in its thread's order; then the
 * madvise() calls made (the old reader made one per block, about 1,000)
 * and the mapping's resident set (/proc/self/smaps) before the close.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "reader/internal.h"
#include "ringlog/reader.h"
#include "filegen.h"
#include "tap.h"

#define S 1000000u     /* sync ticks */
#define HZ 1000000000u /* 1 tick = 1 ns */
#define THREADS 4u
#define PER 256u       /* events per block (16 KiB of records) */
#define ROUNDS 256u    /* 16 MiB */
#define EVENTS ((uint64_t)THREADS * PER * ROUNDS)

static void build(struct fg_file *f)
{
	struct fg_block b;
	uint32_t seq[THREADS] = { 0 };
	fg_file_init(f);
	fg_marker_block(f, 7, 8, HZ, S, 1790000000000000000ull, RLOG_TICK_MONOTONIC, 16384, 32,
			"give back");
	for (unsigned round = 0; round < ROUNDS; round++) {
		for (uint32_t th = 0; th < THREADS; th++) {
			uint64_t t = S + (uint64_t)(round * THREADS + th) * PER * 10u;
			fg_block_begin(&b, 100, 101 + th, t, 0);
			for (unsigned k = 0; k < PER; k++) {
				uint32_t p[14] = { th, seq[th]++ };
				fg_event(&b, 1030, -1, true, (uint32_t)(t + 10u * k), p, sizeof(p));
			}
			fg_block_end(f, &b);
		}
	}
}

/* The resident kB of the mapping that starts at map, or -1. */
static long rss_kb(const void *map)
{
	FILE *fp = fopen("/proc/self/smaps", "r");
	char line[512];
	long kb = -1;
	bool in = false;
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = lo == (unsigned long)(uintptr_t)map;
		else if (in && sscanf(line, "Rss: %ld kB", &kb) == 1)
			break;
	}
	fclose(fp);
	return kb;
}

int main(void)
{
	struct fg_file f;
	build(&f);
	size_t size = f.b.len;
	char path[64];
	fg_tmpname(path, "give_back");
	BAIL_IF(fg_write(&f, path) < 0, "cannot write %s", path);
	fg_file_free(&f);

	struct rlog_reader *r;
	struct rlog_event ev;
	ASSERT_EQ(rlog_reader_open(path, &r), 0);
	uint64_t n = 0, bad = 0, seen[THREADS] = { 0 };
	int got;
	while ((got = rlog_reader_next(r, &ev)) > 0) {
		if (ev.id == RLOG_ID_LOG_MARKER && !ev.flagged)
			continue;
		uint32_t p[2];
		memcpy(p, ev.payload, sizeof(p));
		if (ev.pid != 100 || p[0] >= THREADS || ev.tid != 101 + p[0] ||
		    p[1] != seen[p[0]]++)
			bad++;
		n++;
	}
	ASSERT_EQ(got, 0);
	ASSERT_EQ_U64(n, EVENTS);
	ASSERT_EQ_U64(bad, 0);
	ok(size >= (size_t)16 << 20, "the file: %zu bytes", size);
	/* A call per 2 MiB gathered, a few more at the ends of the ranges
	 * (the open pass's, the first range's part before a huge page's
	 * boundary). */
	ok(r->give_backs > 0 && r->give_backs <= size / (2u << 20) + 8,
	   "pages given back in %" PRIu64 " madvise() calls (%zu blocks)", r->give_backs,
	   (size_t)(THREADS * ROUNDS));
	long kb = rss_kb(r->map);
	ok(kb >= 0 && kb <= 6 * 1024, "the mapping's resident set at the end: %ld kB of %zu",
	   kb, size >> 10);
	rlog_reader_close(r);
	unlink(path);
	return done_testing();
}
