/*
 * seq.c - the block sequence check of the open pass (docs/FORMAT.md,
 * "Block sequence").
 *
 * The daemon numbers the blocks of a file 0, 1, 2, ... in file order.  The
 * open pass takes every block whose header it can trust (checksum correct)
 * in file order and keeps the highest number so far (high) and the runs of
 * numbers not seen yet below it (the gaps):
 *
 *   seq > high      in sequence; high + 1 .. seq - 1 are a new gap
 *   seq in a gap    a block out of order: read where it is, reported
 *   otherwise       a block read before: a duplicate, skipped, reported
 *
 * A gap is "explained" when damage without a trustworthy header lies
 * between the two blocks around it: the missing blocks are in that region,
 * already reported.  At the end, every gap not explained is reported as
 * missing blocks.  Memory: the gaps, at most GAP_MAX of them (past that
 * the oldest is reported at once, so a block that would have filled it
 * later counts as a duplicate: only a file shuffled on purpose gets there).
 *
 * Consecutive duplicate blocks (or blocks out of order) that follow each
 * other in the file and in sequence make one report and one region.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "vec.h"

#define GAP_MAX 1024

/* The report of a gap not explained by damage.  Returns 0 or -ENOMEM. */
static int gap_report(struct rlog_reader *r, const struct rlog__gap *g)
{
	if (g->explained)
		return 0;
	struct rlog__damage *d = rlog__damage_add(r, g->offset, 0, RLOG_DAMAGE_MISSING, -1, "%s", "");
	if (!d)
		return -ENOMEM;
	d->seq_first = g->lo;
	d->seq_last = g->hi;
	rlog__damage_message(r, d);
	return 0;
}

/* Inserts g at index k.  Returns 0 or -ENOMEM. */
static int gap_insert(struct rlog_reader *r, size_t k, const struct rlog__gap *g)
{
	struct rlog__seq *q = &r->seq;
	if (rlog__vec_room(&q->gaps, q->ngaps, &q->cap, sizeof(*q->gaps), 16) < 0)
		return -ENOMEM;
	memmove(&q->gaps[k + 1], &q->gaps[k], (q->ngaps - k) * sizeof(*q->gaps));
	q->gaps[k] = *g;
	q->ngaps++;
	if (q->ngaps > GAP_MAX) {
		int rc = gap_report(r, &q->gaps[0]);
		if (rc < 0)
			return rc;
		memmove(&q->gaps[0], &q->gaps[1], --q->ngaps * sizeof(*q->gaps));
	}
	return 0;
}

/* The gap holding seq, or SIZE_MAX. */
static size_t gap_find(const struct rlog__seq *q, uint64_t seq)
{
	size_t lo = 0, hi = q->ngaps;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (q->gaps[mid].hi < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < q->ngaps && q->gaps[lo].lo <= seq ? lo : SIZE_MAX;
}

/* Takes seq out of gap k.  Returns 0 or -ENOMEM. */
static int gap_take(struct rlog_reader *r, size_t k, uint64_t seq)
{
	struct rlog__seq *q = &r->seq;
	struct rlog__gap *g = &q->gaps[k];
	if (g->lo == g->hi) {
		memmove(g, g + 1, (--q->ngaps - k) * sizeof(*g));
	} else if (seq == g->lo) {
		g->lo++;
	} else if (seq == g->hi) {
		g->hi--;
	} else {
		struct rlog__gap after = *g;
		after.lo = seq + 1;
		g->hi = seq - 1;
		return gap_insert(r, k + 1, &after);
	}
	return 0;
}

/* A DUPLICATE or ORDER report for the block at pos, or the run before it
 * extended.  Returns 0 or -ENOMEM. */
static int run_report(struct rlog_reader *r, int kind, size_t pos, uint64_t seq, uint64_t size,
		      uint32_t records)
{
	struct rlog__seq *q = &r->seq;
	struct rlog__damage *d = q->run;
	bool dup = kind == RLOG_DAMAGE_DUPLICATE;

	if (d && d->kind == kind && q->run_end == pos && q->run_next == seq) {
		d->seq_last = seq;
		if (dup) {
			d->length += size;
			d->records_skipped += records;
			r->regions[r->nregions - 1].length += size;
		}
	} else {
		d = rlog__damage_add(r, pos, dup ? size : 0, kind, dup ? (int64_t)records : 0,
				     "%s", "");
		if (!d || (dup && rlog__region_add(r, pos, size, kind) < 0))
			return -ENOMEM;
		d->seq_first = d->seq_last = seq;
		d->seq_after = q->high;
		q->run = d;
	}
	q->run_end = pos + size;
	q->run_next = seq + 1;
	rlog__damage_message(r, d);
	return 0;
}

int rlog__seq_block(struct rlog_reader *r, size_t pos, uint64_t seq, uint64_t size,
		    uint32_t records, bool valid)
{
	struct rlog__seq *q = &r->seq;
	int rc;

	if (!q->any || seq > q->high) {
		uint64_t expect = q->any ? q->high + 1 : 0;
		/* A circular file: the blocks between block 0 and the oldest
		 * one left were overwritten by its wraps, not lost. */
		bool overwritten = q->ring && q->any && q->high == 0;
		if (q->any)
			q->ring = false;
		if (seq > expect && !overwritten) {
			struct rlog__gap g = { expect, seq - 1, pos, q->unverified };
			if ((rc = gap_insert(r, q->ngaps, &g)) < 0)
				return rc;
		}
		q->any = true;
		q->high = seq;
		q->unverified = false;
		q->run = NULL;
		return SEQ_NEXT;
	}
	size_t k = gap_find(q, seq);
	if (k != SIZE_MAX && (rc = gap_take(r, k, seq)) < 0)
		return rc;
	if (!valid) {
		/* Damaged: reported as such; its number is accounted for. */
		q->run = NULL;
		return k != SIZE_MAX ? SEQ_LATE : SEQ_DUPLICATE;
	}
	if (k != SIZE_MAX) {
		rc = run_report(r, RLOG_DAMAGE_ORDER, pos, seq, size, records);
		return rc < 0 ? rc : SEQ_LATE;
	}
	rc = run_report(r, RLOG_DAMAGE_DUPLICATE, pos, seq, size, records);
	return rc < 0 ? rc : SEQ_DUPLICATE;
}

void rlog__seq_unverified(struct rlog_reader *r)
{
	r->seq.unverified = true;
	r->seq.run = NULL;
}

int rlog__seq_finish(struct rlog_reader *r)
{
	struct rlog__seq *q = &r->seq;
	for (size_t i = 0; i < q->ngaps; i++) {
		int rc = gap_report(r, &q->gaps[i]);
		if (rc < 0)
			return rc;
	}
	q->ngaps = 0;
	return 0;
}

void rlog__seq_free(struct rlog_reader *r)
{
	free(r->seq.gaps);
	memset(&r->seq, 0, sizeof(r->seq));
}
