/*
 * test_convert_runs - the Perfetto converter's two ways through the
 * reader give the same bytes: its runs (reader/batch.h: records taken
 * straight from a thread's block, the common event written in place,
 * convert_perfetto.c's run_out and run_fast) against every event through
 * the reader's batches (rlog__perfetto_opts.no_runs), on crafted traces
 * that hold what ends a run or sends an event the general way:
 *
 *   - threads taking turns at equal times (the run's bound by file
 *     offset), many threads (two-byte sequence ids), runs past the 1 MiB
 *     output flush;
 *   - spans nested and ended out of order, an end without a begin, an
 *     event of a span schema unflagged, a flagged plain event; untimed
 *     records; raw events, a payload not of its schema's shape, bytes
 *     fields (hex, the general way), strings long (two-byte lengths: the
 *     packet written in place moves its body), not ASCII, not UTF-8;
 *     COUNTER records and counter schemas, TIME_SYNC records, a loss;
 *     a schema given a second version mid-trace (rlog_reader_schema's
 *     binary search) and events at the very tick of their schema;
 *   - a tick rate that is not 1 GHz (the conversion to ns);
 *   - damage: garbage between blocks, a block whose checksum fails, a
 *     block whose record was changed and its checksum made right (a
 *     malformed record: the block refused), the file cut short (the
 *     truncated last block read up to its last whole record);
 *   - the window (--since/--until) and a split series (--split).
 *
 * Each: the output bytes and every total (rlog__convert_stats) the same,
 * and the damage the reader reports the same.  The batches' way also
 * writes in line, the runs' by the writer thread (writer.h) once the
 * output passes 1 MiB: a write that fails (/dev/full) fails both the same.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ringlog/reader.h"
#include "convert/convert.h"
#include "format/block.h"
#include "filegen.h"
#include "tap.h"
#include "test_convert_fixture.h"

#define SPAN 1300
#define REQ 1301
#define CNT 1302
#define BLOB 1303
#define LATER 1304

/* REQ's fields: a number of each size class and a string. */
static const struct fx_field rq[] = {
	{ RLOG_FIELD_U64, 0, "id" }, { RLOG_FIELD_I32, 0, "status" }, { RLOG_FIELD_STRING, 0, "path" },
};

/* The mix: threads of pids 500 and 501 in rounds of a block each, all at
 * the same times (ties broken by file offset), or with apart set, each
 * thread's block of a round after the one before it in time (long runs:
 * only the COUNTER blocks of thread 1001 come between). */
static void build_mix_as(struct fg_file *f, uint64_t freq, unsigned threads, unsigned rounds,
			 unsigned per, bool apart)
{
	static const struct fx_field sp[] = { { RLOG_FIELD_U32, 0, "depth" } };
	static const struct fx_field cn[] = {
		{ RLOG_FIELD_U32, 0, "depth" }, { RLOG_FIELD_F64, 0, "load" },
		{ RLOG_FIELD_I16, 0, "delta" },
	};
	static const struct fx_field bl[] = { { RLOG_FIELD_BYTES, 3, "b" }, { RLOG_FIELD_U8, 0, "u" } };
	static const struct fx_field l1[] = { { RLOG_FIELD_I64, 0, "v" } };
	static const struct fx_field l2[] = { { RLOG_FIELD_U16, 0, "w" }, { RLOG_FIELD_STRING, 0, "s" } };
	static const char *const paths[] = { "/api/v1/item", "", "caf\xc3\xa9", "bad\xff\xfe", NULL,
					     "/x" };
	char longs[300];
	struct fg_block b;
	uint16_t cseq = 0;
	memset(longs, 'q', sizeof(longs));
	fg_file_init(f);
	fg_marker_block(f, 1, 1, freq, FX_START, FX_REALTIME, RLOG_TICK_TSC, 65536, 8, "runs");
	for (uint32_t pid = 500; pid <= 501; pid++) {
		fg_block_begin(&b, pid, pid, FX_START, 0);
		fx_schema(&b, 1, SPAN, RLOG_KIND_SPAN, 1, "run.span", sp, 1);
		fx_schema(&b, 2, REQ, RLOG_KIND_EVENT, 2, "run.req", rq, 3);
		fx_schema(&b, 3, CNT, RLOG_KIND_COUNTER, 0, "run.cnt", cn, 3);
		fx_schema(&b, 4, BLOB, RLOG_KIND_EVENT, 3, "run.blob", bl, 2);
		fx_schema(&b, 5, LATER, RLOG_KIND_EVENT, 4, "run.later", l1, 1);
		fg_block_end(f, &b);
	}
	uint64_t t = 1000;
	for (unsigned round = 0; round < rounds; round++) {
		uint64_t t0 = t;
		for (uint32_t th = 0; th < threads; th++) {
			uint32_t pid = 500 + th % 2;
			if (apart)
				t = t0 + (uint64_t)th * (100u * per + 100u);
			fg_block_begin(&b, pid, 1000 + th, FX_START + t, 0);
			if (round == rounds / 2 && th == 0) /* a second version of LATER */
				fx_schema(&b, t, LATER, RLOG_KIND_EVENT, 4, "run.later2", l2, 2);
			for (unsigned k = 0; k < per; k++) {
				uint64_t u = t + 100u * k;
				unsigned sel = (round * 7 + th * 3 + k) % 6;
				struct fg_buf p = { 0 };
				fg_u32(&p, k);
				fx_rec(&b, u, SPAN, RLOG_SPAN_BEGIN, p.p, p.len);
				free(p.p);
				p = (struct fg_buf){ 0 };
				fg_u64(&p, (uint64_t)round << 40 | (uint64_t)th << 20 | k);
				fg_u32(&p, (uint32_t)(200 + (int)k - 3));
				if (paths[sel])
					fx_str(&p, paths[sel], strlen(paths[sel]));
				else
					fx_str(&p, longs, 130 + k % 170);
				fx_rec(&b, u + 10, REQ, -1, p.p, p.len);
				if (k % 5 == 1) /* untimed */
					fg_event(&b, REQ, -1, false, 0, p.p, (unsigned)p.len);
				if (k % 7 == 2) /* flagged */
					fx_rec(&b, u + 11, REQ, 3, p.p, p.len);
				if (k % 11 == 3) /* not of the schema's shape */
					fx_rec(&b, u + 12, REQ, -1, p.p, p.len - 1);
				free(p.p);
				p = (struct fg_buf){ 0 };
				fg_u32(&p, k);
				fg_f64(&p, 0.5 * k);
				fg_u16(&p, (uint16_t)(int16_t)(k - 50));
				fx_rec(&b, u + 20, CNT, -1, p.p, p.len);
				free(p.p);
				if (k % 9 == 4)
					fx_rec(&b, u + 21, CNT, -1, "\1\2\3", 3);
				if (k % 13 == 5)
					fg_time_sync(&b, FX_START + u + 23);
				if (k % 8 == 6) {
					fx_rec(&b, u + 24, BLOB, -1, "\xde\xad\xbe\x07", 4);
					fx_rec(&b, u + 25, RLOG_ID_RAW_U32, -1, "\1\0\0\0\2\0\0\0", 8);
					fx_rec(&b, u + 26, 1999, -1, "raw", 3);
				}
				p = (struct fg_buf){ 0 };
				if (round >= rounds / 2 && th == 0) {
					fg_u16(&p, (uint16_t)k);
					fx_str(&p, "v2", 2);
				} else {
					fg_u64(&p, (uint64_t)-(int64_t)k);
				}
				fx_rec(&b, u + 30, LATER, -1, p.p, p.len);
				free(p.p);
				if (k % 4 == 0) { /* nested, ended outer first */
					fx_rec(&b, u + 40, SPAN, RLOG_SPAN_BEGIN, "\7\0\0\0", 4);
					fx_rec(&b, u + 50, REQ, RLOG_SPAN_END, NULL, 0);
				}
				if (k % 10 == 9)
					fx_rec(&b, u + 55, SPAN, -1, "\7\0\0\0", 4);
				fx_rec(&b, u + 60, SPAN, RLOG_SPAN_END, NULL, 0);
				if (k % 6 == 0) { /* the second: no begin left */
					fx_rec(&b, u + 70, SPAN, RLOG_SPAN_END, NULL, 0);
					fx_rec(&b, u + 71, SPAN, RLOG_SPAN_END, NULL, 0);
				}
			}
			fg_block_end(f, &b);
		}
		if (round == 1)
			fx_loss_block(f, 500, 1000, t + 5, 4, 64, RLOG_LOSS_NO_BUFFER);
		/* COUNTER records (daemon blocks, docs/FORMAT.md) of thread
		 * 1001, at the times of the others' records. */
		fg_block_begin(&b, 501, 1001, FX_START + t, RLOG_BLOCK_FLAG_DAEMON);
		if (round == 0)
			fg_counter_name(&b, (uint32_t)(FX_START + t), 9, 0, 0, 5, 0, "depth");
		for (unsigned k = 0; k < per; k += 3)
			fg_counter(&b, (uint32_t)(FX_START + t + 100u * k + 20), 9, 0, cseq++, k, 0,
				   0);
		fg_block_end(f, &b);
		t = t0 + (apart ? (uint64_t)threads * (100u * per + 100u) : 100u * per);
	}
}

static void build_mix(struct fg_file *f, uint64_t freq, unsigned threads, unsigned rounds,
		      unsigned per)
{
	build_mix_as(f, freq, threads, rounds, per, false);
}

/*
 * Payloads of every shape against two schemas with strings (the
 * templates check a payload's shape as a whole: its fixed part, then
 * each string against what is left over, then nothing left): one thread,
 * each bad payload between two good ones, so that the template is ready
 * for it.  Returns the bad ones written.
 */
#define TWO 1305
static unsigned build_shapes(struct fg_file *f)
{
	static const struct fx_field two[] = {
		{ RLOG_FIELD_STRING, 0, "a" }, { RLOG_FIELD_U16, 0, "n" },
		{ RLOG_FIELD_STRING, 0, "b" },
	};
	/* REQ: 8 + 4 + 2 fixed, "/x" */
	static const uint8_t good[] = { 1, 0, 0, 0, 0, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff, 2, 0, '/', 'x' };
	static const uint8_t empty[] = { 1, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0 };
	/* TWO: "abcd", 7, "e" (6 fixed, 5 of text) */
	static const uint8_t good2[] = { 4, 0, 'a', 'b', 'c', 'd', 7, 0, 1, 0, 'e' };
	static const uint8_t over[] = { 7, 0, 'a', 'b', 'c', 'd', 7, 0, 1, 0, 'e' };
	static const uint8_t second[] = { 4, 0, 'a', 'b', 'c', 'd', 7, 0, 2, 0, 'e' };
	uint8_t buf[32];
	struct fg_block b;
	unsigned bad = 0;
	uint64_t t = 1000;
	fg_file_init(f);
	fg_marker_block(f, 1, 1, 1000000000u, FX_START, FX_REALTIME, RLOG_TICK_TSC, 65536, 8, "shapes");
	fg_block_begin(&b, 600, 600, FX_START, 0);
	fx_schema(&b, 1, REQ, RLOG_KIND_EVENT, 2, "run.req", rq, 3);
	fx_schema(&b, 2, TWO, RLOG_KIND_EVENT, 2, "run.two", two, 3);
	fg_block_end(f, &b);
	fg_block_begin(&b, 600, 601, FX_START + t, 0);
#define SHAPE(id, p, n, is_bad)                                                    \
	do {                                                                       \
		fx_rec(&b, t += 10, id, -1, p, n);                                 \
		bad += is_bad;                                                     \
	} while (0)
	SHAPE(REQ, good, sizeof(good), 0);
	SHAPE(TWO, good2, sizeof(good2), 0);
	memcpy(buf, good, sizeof(good));
	buf[sizeof(good)] = 'y';
	SHAPE(REQ, buf, sizeof(good) + 1, 1);          /* a byte left over */
	SHAPE(REQ, good, sizeof(good), 0);
	SHAPE(REQ, good, sizeof(good) - 1, 1);         /* the string past the end */
	SHAPE(REQ, good, sizeof(good), 0);
	SHAPE(REQ, good, 5, 1);                        /* shorter than the fixed part */
	SHAPE(REQ, good, 13, 1);                       /* the string's length cut */
	SHAPE(REQ, NULL, 0, 1);                        /* nothing */
	SHAPE(REQ, empty, sizeof(empty), 0);           /* the fixed part alone, "" */
	memcpy(buf, empty, sizeof(empty));
	memcpy(buf + sizeof(empty), "xyz", 3);
	SHAPE(REQ, buf, sizeof(empty) + 3, 1);         /* "" and bytes left over */
	SHAPE(REQ, good, sizeof(good), 0);
	SHAPE(TWO, over, sizeof(over), 1);             /* the first string too long */
	SHAPE(TWO, good2, sizeof(good2), 0);
	SHAPE(TWO, second, sizeof(second), 1);         /* the second string too long */
	SHAPE(TWO, good2, sizeof(good2), 0);
	memcpy(buf, good2, sizeof(good2));
	buf[sizeof(good2)] = 0;
	SHAPE(TWO, buf, sizeof(good2) + 1, 1);         /* a byte left over */
	SHAPE(TWO, good2, 8, 1);                       /* the second's length missing */
	SHAPE(TWO, good2, sizeof(good2), 0);
#undef SHAPE
	fg_block_end(f, &b);
	return bad;
}

/* The file's bytes after the marker block and the next block's offset:
 * the offset of the i-th block (0: the marker's). */
static size_t block_at(const struct fg_file *f, unsigned i)
{
	uint32_t hs;
	memcpy(&hs, f->b.p + 12, 4); /* header_size */
	size_t off = hs;
	for (unsigned k = 0; k < i; k++) {
		uint32_t size;
		memcpy(&size, f->b.p + off + 32, 4); /* data_size (docs/FORMAT.md) */
		off += RLOG__BLOCK_HDR_SIZE + size;
	}
	return off;
}

struct out {
	char *p;
	size_t len;
	struct rlog__convert_stats st;
	char damage[4096];
	int rc;
};

static char *slurp(int fd, size_t *len)
{
	struct stat sb;
	if (fstat(fd, &sb) < 0)
		abort();
	char *p = malloc((size_t)sb.st_size + 1);
	if (!p || pread(fd, p, (size_t)sb.st_size, 0) != sb.st_size)
		abort();
	*len = (size_t)sb.st_size;
	return p;
}

/* A split series: each file's bytes appended to the first's (with a
 * separator line, so that the boundaries count). */
struct series {
	char dir[64];
	int fds[64];
	unsigned n;
};

static int next_file(void *arg, unsigned index, int *fd)
{
	struct series *s = arg;
	if (s->n >= 64)
		return -EFBIG;
	char path[128];
	snprintf(path, sizeof(path), "%s.%u", s->dir, index);
	int k = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	unlink(path);
	if (k < 0)
		return -errno;
	s->fds[s->n++] = k;
	*fd = k;
	return 0;
}

static void convert(const struct fg_file *f, size_t len, struct rlog__perfetto_opts *o,
		    struct out *out)
{
	struct rlog_reader *r;
	char path[64];
	struct series ser = { .n = 0 };
	memset(out, 0, sizeof(*out));
	if (fg_open_len(f, len, &r) < 0)
		abort();
	fg_tmpname(path, "runs");
	int fd = open(path, O_RDWR | O_TRUNC);
	unlink(path);
	if (fd < 0)
		abort();
	snprintf(ser.dir, sizeof(ser.dir), "%s", path);
	ser.fds[ser.n++] = fd;
	if (o && o->split_ns) {
		o->next_file = next_file;
		o->arg = &ser;
	}
	out->rc = rlog__convert_perfetto(r, fd, o, &out->st);
	size_t dl = 0;
	for (size_t i = 0; i < rlog_reader_damage_count(r); i++) {
		struct rlog_damage d;
		if (rlog_reader_damage(r, i, &d) == 0)
			dl += (size_t)snprintf(out->damage + dl, sizeof(out->damage) - dl, "%s\n",
					       d.message);
		if (dl >= sizeof(out->damage))
			dl = sizeof(out->damage) - 1;
	}
	rlog_reader_close(r);
	for (unsigned i = 0; i < ser.n; i++) {
		size_t n;
		char *p = slurp(ser.fds[i], &n);
		out->p = realloc(out->p, out->len + n + 8);
		if (!out->p)
			abort();
		memcpy(out->p + out->len, p, n);
		memcpy(out->p + out->len + n, "\n--file\n", 8);
		out->len += n + 8;
		free(p);
		close(ser.fds[i]);
	}
}

/* The runs and the batches give the same on f's first len bytes. */
static void same(const char *what, const struct fg_file *f, size_t len,
		 const struct rlog__perfetto_opts *opt)
{
	/* KEEP=PREFIX: each input kept as PREFIX.N.rlog (to compare with
	 * another build's `ringlog convert`). */
	static unsigned kept;
	if (getenv("KEEP") && !opt) {
		char path[256];
		snprintf(path, sizeof(path), "%s.%u.rlog", getenv("KEEP"), kept++);
		if (fg_write_len(f, path, len) < 0)
			diag("cannot write %s", path);
	}
	struct rlog__perfetto_opts a = opt ? *opt : (struct rlog__perfetto_opts){ 0 };
	struct rlog__perfetto_opts b = a;
	b.no_runs = true;
	b.in_place = b.in_place_long = NULL; /* the runs' counts are a's */
	struct out x, y;
	convert(f, len, opt ? &a : NULL, &x);
	convert(f, len, &b, &y);
	ok(x.rc == 0 && y.rc == 0, "%s: both convert (%d, %d)", what, x.rc, y.rc);
	ok(x.len == y.len && memcmp(x.p, y.p, x.len) == 0, "%s: the same %zu bytes (batches: %zu)",
	   what, x.len, y.len);
	ok(memcmp(&x.st, &y.st, sizeof(x.st)) == 0,
	   "%s: the same totals (events %" PRIu64 "/%" PRIu64 ", written %" PRIu64 "/%" PRIu64
	   ", packets %" PRIu64 "/%" PRIu64 ", raw %" PRIu64 "/%" PRIu64 ")",
	   what, x.st.events_read, y.st.events_read, x.st.events_written, y.st.events_written,
	   x.st.packets, y.st.packets, x.st.raw_events, y.st.raw_events);
	ok(strcmp(x.damage, y.damage) == 0, "%s: the same damage reported", what);
	if (x.len != y.len || memcmp(x.p, y.p, x.len) != 0) {
		size_t i = 0;
		while (i < x.len && i < y.len && x.p[i] == y.p[i])
			i++;
		diag("first difference at byte %zu", i);
	}
	free(x.p);
	free(y.p);
}

int main(void)
{
	struct fg_file f;
	struct rlog__perfetto_opts o;
	struct rlog_reader *r;
	size_t nd;
	char what[96];


	fx_build(&f);
	same("the converters' fixture", &f, SIZE_MAX, NULL);
	fg_file_free(&f);

	/* Payloads of every shape: the bad ones raw (mismatched), the good
	 * ones from the templates. */
	unsigned bad = build_shapes(&f);
	uint64_t shaped = 0;
	o = (struct rlog__perfetto_opts){ .in_place = &shaped };
	same("payload shapes", &f, SIZE_MAX, &o);
	/* Every good one but each schema's first (which makes its template). */
	ok(shaped == 7, "payload shapes: %" PRIu64 " written in place", shaped);
	struct out sh;
	convert(&f, SIZE_MAX, NULL, &sh);
	ok(sh.rc == 0 && sh.st.mismatched == bad && bad == 10 && sh.st.schema_events == 19 - bad,
	   "payload shapes: %" PRIu64 " mismatched of %u bad, %" PRIu64 " from their schemas",
	   sh.st.mismatched, bad, sh.st.schema_events);
	free(sh.p);
	fg_file_free(&f);

	/* Many threads, short runs; then few threads, long runs (past the
	 * output's 1 MiB flush). */
	build_mix(&f, 1000000000u, 140, 3, 6);
	same("140 threads", &f, SIZE_MAX, NULL);
	fg_file_free(&f);
	/* Threads apart in time: most packets are written in place, some with
	 * lengths of two bytes (the moved body); the same bytes. */
	build_mix_as(&f, 1000000000u, 2, 3, 400, true);
	uint64_t inplace = 0, inplace_long = 0;
	o = (struct rlog__perfetto_opts){ .in_place = &inplace, .in_place_long = &inplace_long };
	same("2 threads apart in time", &f, SIZE_MAX, &o);
	ok(inplace > 3000 && inplace_long > 100,
	   "written in place from the runs: %" PRIu64 " packets, %" PRIu64 " with long lengths",
	   inplace, inplace_long);
	fg_file_free(&f);
	build_mix(&f, 1000000000u, 3, 8, 400);
	same("3 threads, long runs", &f, SIZE_MAX, NULL);
	nd = fg_open(&f, &r) == 0 ? rlog_reader_damage_count(r) : 1;
	ok(nd == 0, "the mix is undamaged");
	rlog_reader_close(r);
	size_t whole = f.b.len;
	struct out big;
	convert(&f, SIZE_MAX, NULL, &big);
	ok(big.st.events_read > 20000 && big.len > (2u << 20),
	   "long enough to flush: %" PRIu64 " events, %zu bytes", big.st.events_read, big.len);
	ok(big.st.raw_events > 0 && big.st.mismatched > 0 && big.st.counter_records > 0 &&
	   big.st.unmatched_ends > 0 && big.st.spans > 0 && big.st.loss_records == 1,
	   "every kind in it: %" PRIu64 " raw, %" PRIu64 " mismatched, %" PRIu64 " COUNTER, %" PRIu64
	   " unmatched ends", big.st.raw_events, big.st.mismatched, big.st.counter_records,
	   big.st.unmatched_ends);
	free(big.p);

	/* A write that fails: the same error both ways (the writer thread's
	 * and the writes in line). */
	for (unsigned way = 0; way < 2; way++) {
		struct rlog__perfetto_opts w = { .no_runs = way == 1 };
		int full = open("/dev/full", O_WRONLY);
		int rc = fg_open(&f, &r);
		if (full >= 0 && rc == 0)
			rc = rlog__convert_perfetto(r, full, &w, NULL);
		ok(rc == -ENOSPC, "/dev/full, %s: ENOSPC (%d)", way ? "in line" : "its writer", rc);
		rlog_reader_close(r);
		if (full >= 0)
			close(full);
	}

	/* The window, and a split series. */
	o = (struct rlog__perfetto_opts){ .has_since = true, .since_ns = 30000,
					  .has_until = true, .until_ns = 250000 };
	same("the window", &f, SIZE_MAX, &o);
	o = (struct rlog__perfetto_opts){ .split_ns = 100000 };
	same("a split series", &f, SIZE_MAX, &o);

	/* Cut short: in a block's middle. */
	same("cut short", &f, whole - 1000, NULL);
	fg_file_free(&f);

	/* Rates of 3 GHz - 1 and 24 MHz (the runs follow the ns without
	 * dividing, clock.h's rlog__ns_walk; the batches take the reader's). */
	static const uint64_t odd[] = { 2999999999u, 24000000u };
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		build_mix(&f, odd[i], 5, 4, 50);
		snprintf(what, sizeof(what), "%" PRIu64 " Hz ticks", odd[i]);
		same(what, &f, SIZE_MAX, NULL);
		fg_file_free(&f);
	}
	/* A tick rate of 2.5 GHz. */
	build_mix(&f, 2500000000u, 5, 4, 50);
	same("2.5 GHz ticks", &f, SIZE_MAX, NULL);

	/* Damage: garbage between two blocks, a block's byte flipped (its
	 * checksum fails), a record's length changed with the checksum
	 * made right (a malformed record). */
	size_t b5 = block_at(&f, 5), b9 = block_at(&f, 9), b13 = block_at(&f, 13);
	f.b.p[b9 + RLOG__BLOCK_HDR_SIZE + 40] ^= 0x55;
	f.b.p[b13 + RLOG__BLOCK_HDR_SIZE + 2] = 0xff; /* the first record's length */
	fg_block_recrc(&f, b13);
	fg_insert_copy(&f, b5, b5, b5 + 100);
	nd = fg_open(&f, &r) == 0 ? rlog_reader_damage_count(r) : 0;
	ok(nd == 3, "three damaged regions (%zu)", nd);
	rlog_reader_close(r);
	snprintf(what, sizeof(what), "damaged");
	same(what, &f, SIZE_MAX, NULL);
	fg_file_free(&f);
	return done_testing();
}
