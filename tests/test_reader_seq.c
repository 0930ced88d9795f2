/*
 * test_reader_seq - the block sequence (docs/FORMAT.md, "Block sequence"),
 * on files cut and spliced at block boundaries: a block missing, two
 * missing, a block repeated (dropped, reported), a run of two repeated
 * blocks (one report), blocks out of order (read where they are, reported),
 * a gap across damage (reported once, as the damage), block 0 missing (with
 * and without the file header's copy of the LOG_MARKER), the last block
 * missing (a clean shorter file), a truncated last block (takes no part),
 * more gaps than the reader remembers; exact reports, offsets, sequence
 * numbers and events read.  Then `ringlog dump` and `ringlog stats` on a
 * file with a missing block: exit 1, the loss line, the "damaged" loss.
 */
#include <errno.h>

#include "ringlog/reader.h"
#include "filegen.h"
#include "proc_run.h"
#include "json.h"
#include "tap.h"

#define NB 6   /* thread blocks: seq 1 .. NB */
#define K 4    /* events per block */

static size_t blk[NB + 2]; /* file offsets of blocks 1 .. NB; blk[NB + 1] the end */
static size_t bsize;       /* bytes of each thread block */

/* Marker (seq 0) and NB blocks of K events, the threads 10/11 and 20/21
 * taking turns, times rising through the file.  copy: a version 1.1 header
 * with the LOG_MARKER's copy. */
static void build(struct fg_file *f, bool copy)
{
	uint64_t t = 1000;
	if (copy)
		fg_file_init_marker(f, 1000000000u, 1000, 0, RLOG_TICK_MONOTONIC, 16384, 4, "seq");
	else
		fg_file_init(f);
	fg_marker_block(f, 1, 1, 1000000000u, 1000, 0, RLOG_TICK_MONOTONIC, 16384, 4, "seq");
	for (int i = 1; i <= NB; i++) {
		struct fg_block b;
		uint32_t tid = i % 2 ? 11 : 21;
		fg_block_begin(&b, tid - 1, tid, t, 0);
		for (int e = 0; e < K; e++) {
			uint32_t p[2] = { (uint32_t)i, (uint32_t)e };
			t += 10;
			fg_event(&b, 3000, -1, true, (uint32_t)t, p, sizeof(p));
		}
		blk[i] = fg_block_end(f, &b);
	}
	blk[NB + 1] = f->b.len;
	bsize = blk[2] - blk[1];
}

/* Opens the image; reads every event; counts each (block, event) pair and
 * returns how many were read (-1 if one came twice, -2 on a read error). */
static int read_all(const struct fg_file *f, struct rlog_reader **r, int *blocks_read)
{
	int seen[NB + 1][K];
	struct rlog_event ev;
	int n = 0, rc;

	memset(seen, 0, sizeof(seen));
	if (rlog_reader_open_mem(f->b.p, f->b.len, r) < 0)
		return -3;
	while ((rc = rlog_reader_next(*r, &ev)) == 1) {
		if (ev.id != 3000)
			continue;
		uint32_t p[2];
		memcpy(p, ev.payload, sizeof(p));
		if (p[0] < 1 || p[0] > NB || p[1] >= K || seen[p[0]][p[1]]++)
			return -1;
		n++;
	}
	if (blocks_read) {
		*blocks_read = 0;
		for (int i = 1; i <= NB; i++)
			*blocks_read |= (seen[i][0] ? 1 : 0) << i;
	}
	return rc < 0 ? -2 : n;
}

static struct rlog_damage dmg(struct rlog_reader *r, size_t i)
{
	struct rlog_damage d;
	memset(&d, 0, sizeof(d));
	if (rlog_reader_damage(r, i, &d) < 0)
		d.message = "(none)";
	return d;
}

int main(void)
{
	struct fg_file f;
	struct rlog_reader *r;
	struct rlog_damage d;
	char want[256];
	int mask;

	/* 0. The whole file. */
	build(&f, false);
	ASSERT_EQ(read_all(&f, &r, NULL), NB * K);
	ASSERT_EQ(rlog_reader_damage_count(r), 0);
	rlog_reader_close(r);

	/* 1. Block 3 cut out: seq 3 missing, reported at block 4's offset. */
	fg_cut(&f, blk[3], blk[4]);
	ASSERT_EQ(read_all(&f, &r, &mask), (NB - 1) * K);
	ASSERT_EQ(mask, 0x7e & ~(1 << 3));
	ASSERT_EQ(rlog_reader_damage_count(r), 1);
	d = dmg(r, 0);
	ASSERT_EQ(d.kind, RLOG_DAMAGE_MISSING);
	ASSERT_EQ_U64(d.offset, blk[3]);
	ASSERT_EQ_U64(d.length, 0);
	ASSERT_EQ(d.records_skipped, -1);
	ASSERT_EQ_U64(d.seq_first, 3);
	ASSERT_EQ_U64(d.seq_last, 3);
	snprintf(want, sizeof(want), "missing block at offset %zu: seq 3 is not in the file (its "
		 "records are lost)", blk[3]);
	ASSERT_STREQ(d.message, want);
	rlog_reader_close(r);
	fg_file_free(&f);

	/* 2. Blocks 2 and 3 cut out: one report for the range. */
	build(&f, false);
	fg_cut(&f, blk[2], blk[4]);
	ASSERT_EQ(read_all(&f, &r, &mask), (NB - 2) * K);
	ASSERT_EQ(rlog_reader_damage_count(r), 1);
	d = dmg(r, 0);
	ASSERT_EQ_U64(d.seq_first, 2);
	ASSERT_EQ_U64(d.seq_last, 3);
	snprintf(want, sizeof(want), "missing blocks at offset %zu: seq 2 to 3 are not in the file "
		 "(their records are lost)", blk[2]);
	ASSERT_STREQ(d.message, want);
	rlog_reader_close(r);
	fg_file_free(&f);

	/* 3. Block 2 twice (a copy after the original): the copy is dropped,
	 * every event read once. */
	build(&f, false);
	fg_insert_copy(&f, blk[3], blk[2], blk[3]);
	ASSERT_EQ(read_all(&f, &r, &mask), NB * K);
	ASSERT_EQ(rlog_reader_damage_count(r), 1);
	d = dmg(r, 0);
	ASSERT_EQ(d.kind, RLOG_DAMAGE_DUPLICATE);
	ASSERT_EQ_U64(d.offset, blk[3]);
	ASSERT_EQ_U64(d.length, bsize);
	ASSERT_EQ(d.records_skipped, K);
	ASSERT_EQ_U64(d.seq_first, 2);
	snprintf(want, sizeof(want), "duplicate block at offset %zu: seq 2 was read before "
		 "(skipped %d records)", blk[3], K);
	ASSERT_STREQ(d.message, want);
	ASSERT_EQ_U64(rlog_reader_info(r)->block_count, 1 + NB);
	rlog_reader_close(r);
	fg_file_free(&f);

	/* 4. Blocks 2 and 3 again after block 3: one report for the run. */
	build(&f, false);
	fg_insert_copy(&f, blk[4], blk[2], blk[4]);
	ASSERT_EQ(read_all(&f, &r, NULL), NB * K);
	ASSERT_EQ(rlog_reader_damage_count(r), 1);
	d = dmg(r, 0);
	ASSERT_EQ_U64(d.length, 2 * bsize);
	ASSERT_EQ(d.records_skipped, 2 * K);
	snprintf(want, sizeof(want), "duplicate blocks at offset %zu: seq 2 to 3 were read before "
		 "(skipped %d records)", blk[4], 2 * K);
	ASSERT_STREQ(d.message, want);
	rlog_reader_close(r);
	fg_file_free(&f);

	/* 5. Blocks 2 and 3 swapped (two threads): block 2 is out of order,
	 * read where it is; nothing is missing. */
	build(&f, false);
	fg_insert_copy(&f, blk[4], blk[2], blk[3]);
	fg_cut(&f, blk[2], blk[3]);
	ASSERT_EQ(read_all(&f, &r, NULL), NB * K);
	ASSERT_EQ(rlog_reader_damage_count(r), 1);
	d = dmg(r, 0);
	ASSERT_EQ(d.kind, RLOG_DAMAGE_ORDER);
	ASSERT_EQ_U64(d.offset, blk[3]);
	ASSERT_EQ_U64(d.length, 0);
	ASSERT_EQ(d.records_skipped, 0);
	snprintf(want, sizeof(want), "block out of order at offset %zu: seq 2 after seq 3 (read "
		 "where it is)", blk[3]);
	ASSERT_STREQ(d.message, want);
	rlog_reader_close(r);
	fg_file_free(&f);

	/* 6. Blocks 2 and 4 of thread 20/21 swapped around block 3: both late
	 * blocks reported (they do not follow each other in sequence); the
	 * thread's events come in record order, its time going back. */
	build(&f, false);
	{
		struct fg_file g;
		fg_file_init(&g);
		g.b.len = 0;
		fg_bytes(&g.b, f.b.p, blk[2]);
		fg_bytes(&g.b, f.b.p + blk[4], bsize);
		fg_bytes(&g.b, f.b.p + blk[3], bsize);
		fg_bytes(&g.b, f.b.p + blk[2], bsize);
		fg_bytes(&g.b, f.b.p + blk[5], f.b.len - blk[5]);
		ASSERT_EQ(read_all(&g, &r, NULL), NB * K);
		ASSERT_EQ(rlog_reader_damage_count(r), 2);
		snprintf(want, sizeof(want), "block out of order at offset %zu: seq 3 after seq 4 "
			 "(read where it is)", blk[3]);
		ASSERT_STREQ(dmg(r, 0).message, want);
		snprintf(want, sizeof(want), "block out of order at offset %zu: seq 2 after seq 4 "
			 "(read where it is)", blk[4]);
		ASSERT_STREQ(dmg(r, 1).message, want);
		rlog_reader_close(r);
		/* Thread 20/21's events: block 4's, then block 2's. */
		struct rlog_event ev;
		uint32_t order[2 * K], k = 0;
		ASSERT_EQ(rlog_reader_open_mem(g.b.p, g.b.len, &r), 0);
		while (rlog_reader_next(r, &ev) == 1)
			if (ev.tid == 21 && ev.id == 3000 && k < 2 * K) {
				uint32_t p[2];
				memcpy(p, ev.payload, sizeof(p));
				if (p[0] == 2 || p[0] == 4)
					order[k++] = p[0];
			}
		ok(k == 2 * K && order[0] == 4 && order[K - 1] == 4 && order[K] == 2 &&
		   order[2 * K - 1] == 2, "thread 20/21 reads block 4 before block 2 (record order)");
		rlog_reader_close(r);
		fg_file_free(&g);
	}
	fg_file_free(&f);

	/* 7. Block 3 damaged (checksum) and block 4 cut out: the gap (seq 3
	 * and 4) lies where the damage is: one report, the damage's. */
	build(&f, false);
	f.b.p[blk[3] + FG_BLOCK_HDR + 9] ^= 0x10;
	fg_cut(&f, blk[4], blk[5]);
	ASSERT_EQ(read_all(&f, &r, NULL), (NB - 2) * K);
	ASSERT_EQ(rlog_reader_damage_count(r), 1);
	d = dmg(r, 0);
	ASSERT_EQ(d.kind, RLOG_DAMAGE_BLOCK);
	snprintf(want, sizeof(want), "damaged block at offset %zu: checksum mismatch (skipped %d "
		 "records)", blk[3], K);
	ASSERT_STREQ(d.message, want);
	rlog_reader_close(r);
	fg_file_free(&f);

	/* 8. Block 3 with a bad record under a good checksum, block 4 cut out:
	 * block 3's sequence number is known, so seq 4 is missing. */
	build(&f, false);
	f.b.p[blk[3] + FG_BLOCK_HDR + 3] |= 0x40; /* reserved bit */
	fg_block_recrc(&f, blk[3]);
	fg_cut(&f, blk[4], blk[5]);
	ASSERT_EQ(read_all(&f, &r, NULL), (NB - 2) * K);
	ASSERT_EQ(rlog_reader_damage_count(r), 2);
	ASSERT_EQ(dmg(r, 0).kind, RLOG_DAMAGE_BLOCK);
	d = dmg(r, 1);
	ASSERT_EQ(d.kind, RLOG_DAMAGE_MISSING);
	ASSERT_EQ_U64(d.offset, blk[4]);
	ASSERT_EQ_U64(d.seq_first, 4);
	rlog_reader_close(r);
	fg_file_free(&f);

	/* 9. Block 0 (the LOG_MARKER) cut out: a 1.0 file cannot be timed; a
	 * 1.1 file is timed by its header's copy, and seq 0 is missing. */
	build(&f, false);
	fg_cut(&f, FG_FILE_HDR, blk[1]);
	ASSERT_EQ(rlog_reader_open_mem(f.b.p, f.b.len, &r), -ENODATA);
	fg_file_free(&f);
	build(&f, true);
	size_t first = blk[1];
	fg_cut(&f, 176, first);
	ASSERT_EQ(read_all(&f, &r, NULL), NB * K);
	ok(rlog_reader_info(r)->marker_copy, "timed by the header's copy");
	ASSERT_STREQ(rlog_reader_info(r)->session_name, "seq");
	ASSERT_EQ(rlog_reader_damage_count(r), 1);
	ASSERT_STREQ(dmg(r, 0).message, "missing block at offset 176: seq 0 is not in the file "
		     "(its records are lost)");
	rlog_reader_close(r);
	fg_file_free(&f);

	/* 10. The last block cut off at its boundary: nothing says more was to
	 * come (a file cut at a block boundary is a clean, shorter file). */
	build(&f, false);
	f.b.len = blk[NB];
	ASSERT_EQ(read_all(&f, &r, NULL), (NB - 1) * K);
	ASSERT_EQ(rlog_reader_damage_count(r), 0);
	rlog_reader_close(r);

	/* 11. Block NB - 1 cut out and the last block truncated: the truncated
	 * block takes no part in the sequence (its header is not verified),
	 * so the gap before it is not reported; the truncation is. */
	f.b.len = blk[NB + 1] - 10;
	fg_cut(&f, blk[NB - 1], blk[NB]);
	ASSERT_EQ(read_all(&f, &r, NULL), (NB - 2) * K + K - 1);
	ASSERT_EQ(rlog_reader_damage_count(r), 1);
	ASSERT_EQ(dmg(r, 0).kind, RLOG_DAMAGE_TRUNCATED);
	rlog_reader_close(r);
	fg_file_free(&f);

	/* 12. More gaps than the reader remembers (1024): seq 1, 3, 5, ...,
	 * 2051 are missing; the two oldest gaps are reported at once, so a
	 * block of seq 1 counts as a duplicate, one of seq 5 as late. */
	{
		struct fg_block b;
		fg_file_init(&f);
		fg_marker_block(&f, 1, 1, 1000000000u, 1000, 0, RLOG_TICK_MONOTONIC, 16384, 4, "g");
		for (int i = 0; i < 1026; i++) {
			f.seq++; /* skip one: a gap */
			fg_block_begin(&b, 10, 11, 1000, 0);
			fg_event(&b, 3000, -1, true, 1000, NULL, 0);
			fg_block_end(&f, &b);
		}
		f.seq = 1; /* the first gap's number */
		fg_block_begin(&b, 10, 11, 1000, 0);
		fg_event(&b, 3000, -1, true, 1000, NULL, 0);
		size_t late = fg_block_end(&f, &b);
		f.seq = 5; /* the third gap's: still remembered */
		fg_block_begin(&b, 10, 11, 1000, 0);
		fg_event(&b, 3000, -1, true, 1000, NULL, 0);
		fg_block_end(&f, &b);
		ASSERT_EQ(rlog_reader_open_mem(f.b.p, f.b.len, &r), 0);
		size_t n = rlog_reader_damage_count(r), missing = 0, dup = 0, order = 0;
		for (size_t i = 0; i < n; i++) {
			d = dmg(r, i);
			missing += d.kind == RLOG_DAMAGE_MISSING;
			dup += d.kind == RLOG_DAMAGE_DUPLICATE;
			order += d.kind == RLOG_DAMAGE_ORDER;
			if (d.kind == RLOG_DAMAGE_DUPLICATE)
				ASSERT_EQ_U64(d.offset, late);
		}
		ASSERT_EQ(missing, 1025);
		ASSERT_EQ(dup, 1);
		ASSERT_EQ(order, 1);
		rlog_reader_close(r);
		fg_file_free(&f);
	}

	/* 13. The commands: block 3 missing. */
	{
		char path[64];
		struct run run;
		build(&f, false);
		fg_cut(&f, blk[3], blk[4]);
		fg_tmpname(path, "seq");
		BAIL_IF(fg_write(&f, path) < 0, "cannot write %s", path);
		snprintf(want, sizeof(want), "ringlog: dump %s: missing block at offset %zu: seq 3 is "
			 "not in the file (its records are lost)\n", path, blk[3]);
		run = RUN("dump", path);
		ASSERT_EQ(run.status, 1);
		ASSERT_STREQ(run.err, want);
		size_t lines = 0;
		for (const char *c = run.out; *c; c++)
			lines += *c == '\n';
		ASSERT_EQ(lines, 2 + 1 + (NB - 1) * K); /* header, LOG_MARKER, events */
		run_free(&run);

		run = RUN("stats", path);
		ASSERT_EQ(run.status, 1);
		snprintf(want, sizeof(want), "ringlog: stats %s: missing block at offset %zu: seq 3 is "
			 "not in the file (its records are lost)\n", path, blk[3]);
		ASSERT_STREQ(run.err, want);
		ASSERT_CONTAINS(run.out, "damaged   1 regions (0 records skipped)\n");
		ASSERT_CONTAINS(run.out, "\nLOSS_CAUSE  RECORDS  EVENTS  BYTES\n"
				"damaged           1       0      0\n");
		snprintf(want, sizeof(want), "\nDAMAGE_OFFSET  LENGTH  RECORDS_SKIPPED  KIND\n"
			 "%13zu       0                ?  missing\n", blk[3]);
		ASSERT_CONTAINS(run.out, want);
		run_free(&run);

		run = RUN("stats", "--json", path);
		ASSERT_EQ(run.status, 1);
		char err[128];
		struct json *j = json_parse(run.out, strlen(run.out), err, sizeof(err));
		ok(j != NULL, "stats --json parses%s%s", j ? "" : ": ", j ? "" : err);
		const struct json *dm = j ? json_get(j, "damage") : NULL;
		const struct json *ls = j ? json_get(j, "losses") : NULL;
		ok(dm && dm->type == JSON_ARR && dm->n == 1, "one damage entry");
		ok(ls && ls->type == JSON_ARR && ls->n == 1, "one loss row");
		if (dm && dm->n == 1 && ls && ls->n == 1) {
			ASSERT_STREQ(json_str(dm->items[0], "kind"), "missing");
			ASSERT_STREQ(json_num(dm->items[0], "seq_first"), "3");
			ASSERT_STREQ(json_num(dm->items[0], "seq_last"), "3");
			ok(json_get(dm->items[0], "records_skipped")->type == JSON_NULL,
			   "records_skipped null");
			ASSERT_STREQ(json_str(ls->items[0], "cause"), "damaged");
			ASSERT_STREQ(json_num(ls->items[0], "records"), "1");
		}
		json_free(j);
		run_free(&run);
		unlink(path);
		fg_file_free(&f);
	}
	return done_testing();
}
