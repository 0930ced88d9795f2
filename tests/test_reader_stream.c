/*
 * test_reader_stream - the merge without a block index: each thread's next
 * block is found by the frontier's scan of block headers and its thread
 * queues, or, past the queue bound, by the thread's own hop.  On layouts
 * that stress it (a thread that writes rarely among busy ones, hundreds of
 * threads taking turns, random layouts with damaged blocks and a truncated
 * end), with the default bound and with bounds of 0, 1 and 3 queued blocks,
 * every record comes out exactly once in (ticks, offset) order: the same
 * sequence as a reference built from the blocks the open pass visited.
 */
#include <errno.h>

#include "ringlog/reader.h"
#include "reader/internal.h"
#include "filegen.h"
#include "record.h"
#include "tap.h"

#define S 1000ull

struct rec {
	uint64_t ticks;
	uint64_t offset;
};

struct ref {
	struct rec *v;
	size_t n, cap;
};

/* The visitor: every record of every valid block, with its time. */
static int collect(void *arg, const struct rlog_block *b)
{
	struct ref *ref = arg;
	const uint8_t *d = b->data;
	uint64_t cursor = b->base_time;
	uint32_t pos = 0;
	while (pos < b->size) {
		struct rlog__record rec;
		int sz = rlog__record_decode(d + pos, b->size - pos, &rec);
		if (sz < 0 || rlog__time_apply(&cursor, &rec) < 0)
			return -EBADMSG;
		if (!(rec.id == RLOG_ID_TIME_SYNC && !rec.flagged)) {
			if (ref->n == ref->cap) {
				ref->cap = ref->cap ? 2 * ref->cap : 1024;
				ref->v = realloc(ref->v, ref->cap * sizeof(*ref->v));
				if (!ref->v)
					abort();
			}
			ref->v[ref->n++] = (struct rec){ cursor, b->offset + FG_BLOCK_HDR + pos };
		}
		pos += (uint32_t)sz;
	}
	return 0;
}

static int rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	if (x->ticks != y->ticks)
		return x->ticks < y->ticks ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Reads len bytes of f with queue bound qmax (0: the default) and checks
 * the merge against the reference; returns the events read. */
static size_t check(const struct fg_file *f, size_t len, size_t qmax, const char *what)
{
	struct ref ref = { 0 };
	struct rlog_reader *r;
	if (len > f->b.len)
		len = f->b.len;
	int rc = rlog_reader_open_mem_visit(f->b.p, len, collect, &ref, &r);
	BAIL_IF(rc != 0, "%s: open: %d", what, rc);
	if (ref.n > 1)
		qsort(ref.v, ref.n, sizeof(*ref.v), rec_cmp);
	if (qmax)
		rlog__merge_queue_max(r, qmax == SIZE_MAX ? 0 : qmax);
	size_t n = 0, bad = 0;
	struct rlog_event ev;
	while ((rc = rlog_reader_next(r, &ev)) == 1) {
		if (n >= ref.n || ev.ticks != ref.v[n].ticks || ev.offset != ref.v[n].offset) {
			if (bad == 0 && getenv("STREAM_DEBUG"))
				printf("# first mismatch at %zu: got %llu/%llu tid %u, want %llu/%llu\n", n,
				       (unsigned long long)ev.ticks, (unsigned long long)ev.offset,
				       (unsigned)ev.tid,
				       n < ref.n ? (unsigned long long)ref.v[n].ticks : 0ull,
				       n < ref.n ? (unsigned long long)ref.v[n].offset : 0ull);
			bad++;
		}
		n++;
	}
	ok(rc == 0 && n == ref.n && bad == 0, "%s, queue bound %s: %zu of %zu events in order%s",
	   what, qmax == 0 ? "default" : qmax == SIZE_MAX ? "0" : "small", n, ref.n,
	   bad ? " (MISMATCH)" : "");
	size_t nd = rlog_reader_damage_count(r);
	rlog_reader_close(r);
	free(ref.v);
	(void)nd;
	return n;
}

static void check_all(const struct fg_file *f, size_t len, const char *what)
{
	check(f, len, 0, what);
	check(f, len, SIZE_MAX, what); /* nothing queued: every thread hops alone */
	check(f, len, 1, what);
	check(f, len, 3, what);
}

/* A block of n events of thread tid from time *t, 1 tick apart. */
static size_t block(struct fg_file *f, uint32_t pid, uint32_t tid, uint64_t *t, int n)
{
	struct fg_block b;
	fg_block_begin(&b, pid, tid, *t, 0);
	for (int i = 0; i < n; i++) {
		uint32_t x = (uint32_t)i;
		(*t)++;
		fg_event(&b, 1024, -1, true, (uint32_t)*t, &x, 4);
	}
	return fg_block_end(f, &b);
}

static uint32_t rnd(uint32_t *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 8;
}

int main(void)
{
	struct fg_file f;
	uint64_t t[512];

	/* A thread that writes at the start and at the end, among two busy
	 * ones whose blocks come in runs. */
	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, 1000000000u, S, 0, RLOG_TICK_MONOTONIC, 16384, 8, "sparse");
	for (int i = 0; i < 3; i++)
		t[i] = S;
	block(&f, 10, 12, &t[2], 3);
	for (int round = 0; round < 40; round++) {
		for (int k = 0; k < 1 + round % 5; k++)
			block(&f, 10, 10, &t[0], 4);
		for (int k = 0; k < 1 + round % 3; k++)
			block(&f, 10, 11, &t[1], 4);
	}
	t[2] = t[0] > t[1] ? t[0] : t[1];
	block(&f, 10, 12, &t[2], 3);
	check_all(&f, SIZE_MAX, "a sparse thread");
	fg_file_free(&f);

	/* 300 threads taking turns, 10 rounds. */
	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, 1000000000u, S, 0, RLOG_TICK_MONOTONIC, 16384, 8, "turns");
	uint64_t now = S;
	for (int round = 0; round < 10; round++)
		for (uint32_t th = 0; th < 300; th++) {
			uint64_t tt = now;
			block(&f, 20, 1000 + th, &tt, 2);
			now = tt;
		}
	ASSERT_EQ(check(&f, SIZE_MAX, 0, "300 threads taking turns"), 1 + 6000);
	check(&f, SIZE_MAX, 3, "300 threads taking turns");
	fg_file_free(&f);

	/* Random layouts: 1 to 12 threads of 2 processes, runs of blocks of
	 * random lengths, some blocks damaged, and the file cut anywhere. */
	uint32_t seed = 4242;
	for (int iter = 0; iter < 60; iter++) {
		int nthreads = 1 + (int)(rnd(&seed) % 12);
		size_t offs[2048];
		int nblocks = 0;
		fg_file_init(&f);
		fg_marker_block(&f, 1, 1, 1000000000u, S, 0, RLOG_TICK_MONOTONIC, 16384, 8, "random");
		for (int i = 0; i < nthreads; i++)
			t[i] = S + rnd(&seed) % 100;
		int blocks = 20 + (int)(rnd(&seed) % 200);
		for (int k = 0; k < blocks && nblocks < 2048; k++) {
			int th = (int)(rnd(&seed) % (uint32_t)nthreads);
			int run = 1 + (int)(rnd(&seed) % 4);
			for (int j = 0; j < run && nblocks < 2048; j++)
				offs[nblocks++] = block(&f, 30 + (uint32_t)th % 2, 100 + (uint32_t)th,
							&t[th], (int)(rnd(&seed) % 6));
		}
		int damaged = (int)(rnd(&seed) % 4);
		for (int d = 0; d < damaged; d++) {
			size_t at = offs[rnd(&seed) % (uint32_t)nblocks] + rnd(&seed) % 60;
			if (at < f.b.len)
				f.b.p[at] ^= (uint8_t)(1 + rnd(&seed) % 255);
		}
		size_t len = iter % 3 == 0 ? f.b.len - rnd(&seed) % (f.b.len / 4) : f.b.len;
		char what[64];
		snprintf(what, sizeof(what), "random layout %d (%d threads, %d blocks, %d hits%s)",
			 iter, nthreads, nblocks, damaged, len < f.b.len ? ", cut" : "");
		check_all(&f, len, what);
		fg_file_free(&f);
	}
	return done_testing();
}
