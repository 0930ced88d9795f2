/*
 * test_reader_circular - the reader on files of format 1.2 crafted byte by
 * byte (tests/filegen.h), docs/FORMAT.md "Circular files", "Preallocated
 * files", "Metadata copies":
 *
 *   1. a wrapped circular file (block 0 | newest lap | cut | older lap) is
 *      read in time order, from a file and from memory: every event once,
 *      oldest first, no damage; the numbers overwritten by the wrap and the
 *      cut are not reported; offsets handed out are file offsets;
 *   2. names and schemas that only a copy block holds (at the newest lap's
 *      start) apply to the older lap's events; copy blocks are not returned
 *      and not counted;
 *   3. damage inside the older lap is reported at its file offset, and the
 *      rest is read;
 *   4. a circular file that has not wrapped, or whose newest lap is empty,
 *      reads front to back without reports; the flag in a 1.1 file is
 *      ignored (the wrap is then damage: blocks out of order);
 *   5. a preallocated file: zeros after the last block are not damage; a
 *      block written in part before the zeros is a truncated block whose
 *      complete records are kept; zeros in a file without the flag are
 *      damage;
 *   6. a copy block holding an application event is damaged;
 *   7. fewer than 48 bytes at the end (FORMAT.md, "Fewer than 48 bytes at
 *      the end of a circular or preallocated file"): unused space in a
 *      preallocated file when they start with a zero word, else a
 *      truncated block (the magic) or damage, as in any file; at the end
 *      of a wrapped circular file (the older lap's end) the same.
 */
#include "ringlog/reader.h"
#include "filegen.h"
#include "tap.h"

#define T0 0x1000000000ull  /* sync_ticks */
#define PID 100
#define TA 101
#define TB 102
#define ID 2000

/* A 1.2 file header with the marker copy and flags, then block 0. */
static void header12(struct fg_file *f, uint32_t flags)
{
	fg_file_init_marker(f, 1000000000u, T0, 1700000000000000000ull, RLOG_TICK_MONOTONIC, 4096, 8,
			    "circ");
	f->b.p[10] = 2;                        /* version_minor 2 */
	fg_put32(f->b.p + 24, 1u | flags);     /* flags: MARKER | flags */
	fg_marker_block(f, 1, 1, 1000000000u, T0, 1700000000000000000ull, RLOG_TICK_MONOTONIC, 4096,
			8, "circ");
}

/* A thread block of n events of ID with payload u32 seq from first on, at
 * times t, t+10, ... */
static size_t events_block(struct fg_file *f, uint32_t tid, uint64_t seq, uint32_t first,
			   unsigned n, uint64_t t)
{
	struct fg_block b;
	fg_block_begin(&b, PID, tid, t, 0);
	for (unsigned i = 0; i < n; i++) {
		uint32_t v = first + i;
		fg_event(&b, ID, -1, true, (uint32_t)(t + 10 * i), &v, 4);
	}
	f->seq = seq;
	return fg_block_end(f, &b);
}

/* The copy block of thread tid: its name and the schema of ID, at t. */
static size_t copy_block(struct fg_file *f, uint32_t tid, const char *name, uint64_t seq,
			 uint64_t t)
{
	static const struct fg_field fields[] = { { RLOG_FIELD_U32, 0, "n" } };
	struct fg_block b;
	fg_block_begin(&b, PID, tid, t, RLOG_BLOCK_FLAG_METADATA);
	fg_thread_name(&b, (uint32_t)t, name);
	fg_schema(&b, (uint32_t)t, ID, RLOG_KIND_EVENT, 0, "circ.ev", fields, 1);
	f->seq = seq;
	return fg_block_end(f, &b);
}

struct layout {
	size_t a;       /* the ring's start */
	size_t b1;      /* the newest lap's end */
	size_t a0;      /* the oldest block */
	size_t bad;     /* seq 5's block */
};

/*
 * block 0 | copy(A) seq 7 | A seq 8 (n 21..24) | B seq 9 (n 31..33) | cut |
 * A seq 4 (n 1..10) | B seq 5 (n 11..15) | A seq 6 (n 16..20)
 */
static void wrapped(struct fg_file *f, struct layout *l, uint32_t flags)
{
	header12(f, flags);
	l->a = f->b.len;
	copy_block(f, TA, "alpha", 7, T0 + 5);
	events_block(f, TA, 8, 21, 4, T0 + 3000);
	events_block(f, TB, 9, 31, 3, T0 + 3100);
	l->b1 = f->b.len;
	fg_garbage(f, 40, 0x41); /* the remains of a block the newest lap cut */
	l->a0 = events_block(f, TA, 4, 1, 10, T0 + 1000);
	l->bad = events_block(f, TB, 5, 11, 5, T0 + 1500);
	events_block(f, TA, 6, 16, 5, T0 + 2000);
}

/* The one damage report of r: its kind and offset. */
static void one_damage(struct rlog_reader *r, int kind, size_t offset, struct rlog_damage *d)
{
	ASSERT_EQ(rlog_reader_damage_count(r), 1);
	ASSERT_EQ(rlog_reader_damage(r, 0, d), 0);
	ASSERT_EQ(d->kind, kind);
	if (offset != SIZE_MAX)
		ASSERT_EQ_U64(d->offset, offset);
}

/* Reads every event: their u32 payloads in order into v (n at most 64),
 * with time order checked.  Returns how many; *marker counts LOG_MARKERs. */
static int read_all(struct rlog_reader *r, uint32_t *v, int *markers, int *schemas, size_t size)
{
	struct rlog_event ev;
	int n = 0, order = 0;
	uint64_t last = 0;
	*markers = 0;
	*schemas = 0;
	while (rlog_reader_next(r, &ev) == 1) {
		if (ev.ticks < last)
			order++;
		last = ev.ticks;
		if (ev.offset >= size || ev.block_offset >= size)
			order += 1000; /* a view offset leaked out */
		if (ev.id == RLOG_ID_LOG_MARKER) {
			(*markers)++;
			continue;
		}
		if (ev.id == ID && n < 64) {
			memcpy(&v[n++], ev.payload, 4);
			*schemas += rlog_reader_schema(r, &ev) != NULL;
		} else {
			n += 100; /* anything else is wrong here */
		}
	}
	return order ? -order : n;
}

static void check_wrapped(struct rlog_reader *r, size_t size)
{
	uint32_t v[64];
	int markers, schemas;
	int n = read_all(r, v, &markers, &schemas, size);
	ASSERT_EQ(n, 27);
	ASSERT_EQ(markers, 1);
	int seq_ok = 1;
	for (int i = 0; i < n && i < 27; i++) {
		/* 1..20 then the newest lap: A 21..24 (t 3000..) and B 31..33 */
		uint32_t want = i < 24 ? (uint32_t)(i + 1) : (uint32_t)(31 + i - 24);
		seq_ok &= v[i] == want;
	}
	ok(seq_ok, "every event once, oldest first (the older lap, then the newest)");
	ASSERT_EQ(schemas, 27); /* the schema only the copy holds covers them all */
	ASSERT_STREQ(rlog_reader_thread_name(r, PID, TA), "alpha");
	ok(rlog_reader_thread_name(r, PID, TB) == NULL, "B has no name (none was copied)");
	ASSERT_EQ(rlog_reader_damage_count(r), 0);
	ASSERT_EQ_U64(rlog_reader_info(r)->thread_count, 3); /* the daemon's and A, B */
}

static void test_wrapped(void)
{
	struct fg_file f;
	struct layout l;
	wrapped(&f, &l, RLOG_FILE_FLAG_CIRCULAR);
	struct rlog_reader *r;
	ASSERT_EQ(fg_open(&f, &r), 0);
	check_wrapped(r, f.b.len);
	rlog_reader_close(r);
	ASSERT_EQ(rlog_reader_open_mem(f.b.p, f.b.len, &r), 0);
	check_wrapped(r, f.b.len);
	rlog_reader_close(r);

	/* Counting: 27 events, the copy block's records are not metadata of
	 * the file's threads. */
	ASSERT_EQ(rlog_reader_open_mem_count(f.b.p, f.b.len, &r), 0);
	struct rlog_count c;
	ASSERT_EQ(rlog_reader_count(r, &c), 0);
	ASSERT_EQ_U64(c.events, 27);
	ASSERT_EQ_U64(c.metadata, 0);
	ASSERT_EQ_U64(c.damage, 0);
	rlog_reader_close(r);

	/* Damage in the older lap: reported at its file offset. */
	f.b.p[l.bad + 48 + 4] ^= 0xff; /* a timestamp of seq 5's data */
	ASSERT_EQ(fg_open(&f, &r), 0);
	uint32_t v[64];
	int markers, schemas;
	ASSERT_EQ(read_all(r, v, &markers, &schemas, f.b.len), 22);
	struct rlog_damage d;
	one_damage(r, RLOG_DAMAGE_BLOCK, l.bad, &d);
	char want[96];
	snprintf(want, sizeof want, "damaged block at offset %zu: checksum mismatch", l.bad);
	ASSERT_CONTAINS(d.message, want);
	rlog_reader_close(r);
	fg_file_free(&f);

	/* The same file marked 1.1: the flag means nothing, the wrap is
	 * damage (a block out of order). */
	wrapped(&f, &l, RLOG_FILE_FLAG_CIRCULAR);
	f.b.p[10] = 1;
	ASSERT_EQ(fg_open(&f, &r), 0);
	ok(rlog_reader_damage_count(r) > 0, "a 1.1 reader's view of a wrap is damage (%zu reports)",
	   rlog_reader_damage_count(r));
	rlog_reader_close(r);
	fg_file_free(&f);
}

static void test_unwrapped(void)
{
	/* Never wrapped: block 0, seq 1, 2. */
	struct fg_file f;
	header12(&f, RLOG_FILE_FLAG_CIRCULAR);
	events_block(&f, TA, 1, 1, 3, T0 + 100);
	events_block(&f, TA, 2, 4, 3, T0 + 200);
	struct rlog_reader *r;
	uint32_t v[64];
	int markers, schemas;
	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_EQ(read_all(r, v, &markers, &schemas, f.b.len), 6);
	ASSERT_EQ(rlog_reader_damage_count(r), 0);
	rlog_reader_close(r);
	fg_file_free(&f);

	/* Wrapped, and the daemon stopped before the new lap: block 0 then
	 * seq 40, 41: the numbers 1..39 were overwritten, not missing. */
	header12(&f, RLOG_FILE_FLAG_CIRCULAR);
	events_block(&f, TA, 40, 1, 3, T0 + 100);
	events_block(&f, TA, 41, 4, 3, T0 + 200);
	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_EQ(read_all(r, v, &markers, &schemas, f.b.len), 6);
	ASSERT_EQ(rlog_reader_damage_count(r), 0);
	rlog_reader_close(r);
	/* Without the flag the same gap is missing blocks. */
	fg_put32(f.b.p + 24, 1);
	ASSERT_EQ(fg_open(&f, &r), 0);
	struct rlog_damage d;
	one_damage(r, RLOG_DAMAGE_MISSING, SIZE_MAX, &d);
	rlog_reader_close(r);
	fg_file_free(&f);
}

static void test_prealloc(void)
{
	struct fg_file f;
	header12(&f, RLOG_FILE_FLAG_PREALLOCATED);
	events_block(&f, TA, 1, 1, 3, T0 + 100);
	size_t end = f.b.len;
	fg_zero(&f.b, 8192); /* the unused, preallocated space */
	struct rlog_reader *r;
	uint32_t v[64];
	int markers, schemas;
	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_EQ(read_all(r, v, &markers, &schemas, f.b.len), 3);
	ASSERT_EQ(rlog_reader_damage_count(r), 0);
	ASSERT_EQ_U64(rlog_reader_info(r)->file_size, end + 8192);
	rlog_reader_close(r);

	/* Without the flag: damage. */
	fg_put32(f.b.p + 24, 1);
	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_EQ(rlog_reader_damage_count(r), 1);
	rlog_reader_close(r);
	fg_put32(f.b.p + 24, 1 | RLOG_FILE_FLAG_PREALLOCATED);

	/* A block written in part, then zeros: its complete records kept. */
	f.b.len = end;
	size_t part = events_block(&f, TA, 2, 4, 5, T0 + 200);
	memset(f.b.p + part + 48 + 3 * 12, 0, 2 * 12); /* events 4..6 written, 7..8 not */
	fg_zero(&f.b, 4096);
	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_EQ(read_all(r, v, &markers, &schemas, f.b.len), 6);
	struct rlog_damage d;
	one_damage(r, RLOG_DAMAGE_TRUNCATED, part, &d);
	ASSERT_EQ(d.records_skipped, 2);
	char want[160];
	snprintf(want, sizeof want, "truncated block at offset %zu: written in part (its checksum "
				    "does not match, and only unused space follows) (recovered 3 "
				    "records, skipped 2 records)", part);
	ASSERT_STREQ(d.message, want);
	rlog_reader_close(r);
	fg_file_free(&f);
}

static void test_bad_copy(void)
{
	struct fg_file f;
	header12(&f, 0);
	struct fg_block b;
	fg_block_begin(&b, PID, TA, T0 + 10, RLOG_BLOCK_FLAG_METADATA);
	fg_thread_name(&b, (uint32_t)(T0 + 10), "beta");
	uint32_t x = 7;
	fg_event(&b, ID, -1, true, (uint32_t)(T0 + 11), &x, 4); /* not metadata */
	f.seq = 1;
	size_t at = fg_block_end(&f, &b);
	events_block(&f, TA, 2, 1, 2, T0 + 100);
	struct rlog_reader *r;
	uint32_t v[64];
	int markers, schemas;
	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_EQ(read_all(r, v, &markers, &schemas, f.b.len), 2);
	struct rlog_damage d;
	one_damage(r, RLOG_DAMAGE_BLOCK, at, &d);
	ASSERT_CONTAINS(d.message, "malformed record");
	ok(rlog_reader_thread_name(r, PID, TA) == NULL, "a damaged copy names nobody");
	rlog_reader_close(r);
	fg_file_free(&f);
}

/* n bytes at the end of f: a zero word, the block magic, or other bytes;
 * what the reader makes of them (kind -1: nothing), every event read. */
static void short_tail(struct fg_file *f, int events, const char *what, size_t n,
		       const uint8_t *bytes, int kind)
{
	size_t at = f->b.len;
	fg_bytes(&f->b, bytes, n);
	struct rlog_reader *r;
	uint32_t v[64];
	int markers, schemas;
	ASSERT_EQ(fg_open(f, &r), 0);
	ok(read_all(r, v, &markers, &schemas, f->b.len) == events, "%s: %d events read", what,
	   events);
	struct rlog_damage d;
	if (kind < 0) {
		ok(rlog_reader_damage_count(r) == 0, "%s: not damage (%zu reports)", what,
		   rlog_reader_damage_count(r));
	} else {
		ok(rlog_reader_damage_count(r) == 1 && rlog_reader_damage(r, 0, &d) == 0 &&
			   d.kind == kind && d.offset == at && d.length == n,
		   "%s: one report of kind %d at offset %zu, %zu bytes", what, kind, at, n);
	}
	rlog_reader_close(r);
	f->b.len = at;
}

static void test_short_tails(void)
{
	static const uint8_t zeros[20], other[20] = { 0x55, 0x55, 0x55, 0x55 };
	uint8_t magic[20] = { 0x52, 0x4c, 0x42, 0x4b };
	struct fg_file f;
	header12(&f, RLOG_FILE_FLAG_PREALLOCATED);
	events_block(&f, TA, 1, 1, 3, T0 + 100);
	short_tail(&f, 3, "preallocated, 20 zero bytes", 20, zeros, -1);
	short_tail(&f, 3, "preallocated, 3 zero bytes", 3, zeros, -1);
	short_tail(&f, 3, "preallocated, 20 bytes of the magic", 20, magic, RLOG_DAMAGE_TRUNCATED);
	short_tail(&f, 3, "preallocated, 20 other bytes", 20, other, RLOG_DAMAGE_BLOCK);
	fg_file_free(&f);

	struct layout l;
	wrapped(&f, &l, RLOG_FILE_FLAG_CIRCULAR);
	short_tail(&f, 27, "wrapped circular, as written (a 40-byte cut)", 0, zeros, -1);
	short_tail(&f, 27, "wrapped circular, 20 bytes of the magic at the end", 20, magic,
		   RLOG_DAMAGE_TRUNCATED);
	short_tail(&f, 27, "wrapped circular, 20 zero bytes at the end", 20, zeros,
		   RLOG_DAMAGE_BLOCK);
	fg_file_free(&f);
}

int main(void)
{
	test_wrapped();
	test_unwrapped();
	test_prealloc();
	test_bad_copy();
	test_short_tails();
	return done_testing();
}
