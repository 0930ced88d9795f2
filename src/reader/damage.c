/*
 * damage.c - the damage reports (rlog_reader_damage) and the regions the
 * walk over valid blocks steps over (internal.h).
 *
 * A report is one line for the user: a damaged or truncated block, bytes
 * that are no block, blocks missing from the sequence, blocks read twice,
 * blocks out of order.  A region is what the walk must not read as a
 * block: the damaged and duplicate blocks and the truncated last one.  The
 * two lists differ: missing blocks take no bytes, blocks out of order are
 * read.  The open pass finds missing blocks only at its end (a block may
 * turn up later), so the reports are sorted into file order then.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "vec.h"

struct rlog__damage *rlog__damage_add(struct rlog_reader *r, uint64_t offset, uint64_t length,
				      int kind, int64_t records_skipped, const char *fmt, ...)
{
	if (rlog__vec_room(&r->damage, r->ndamage, &r->damage_cap, sizeof(*r->damage), 8) < 0)
		return NULL;
	/* One allocation per report, so that messages handed out stay put
	 * when the list grows. */
	struct rlog__damage *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->offset = offset;
	e->length = length;
	e->kind = kind;
	e->records_skipped = records_skipped;
	e->order = r->ndamage;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	r->damage[r->ndamage++] = e;
	return e;
}

void rlog__damage_message(const struct rlog_reader *r, struct rlog__damage *d)
{
	uint64_t off = rlog__foff(r, d->offset);
	char *m = d->message;
	size_t n = sizeof(d->message);
	bool one = d->seq_first == d->seq_last;
	char seqs[64];

	if (one)
		snprintf(seqs, sizeof(seqs), "seq %" PRIu64, d->seq_first);
	else
		snprintf(seqs, sizeof(seqs), "seq %" PRIu64 " to %" PRIu64, d->seq_first,
			 d->seq_last);
	switch (d->kind) {
	case RLOG_DAMAGE_MISSING:
		snprintf(m, n, "missing block%s at offset %" PRIu64 ": %s %s not in the file "
			 "(%s records are lost)", one ? "" : "s", off, seqs,
			 one ? "is" : "are", one ? "its" : "their");
		break;
	case RLOG_DAMAGE_DUPLICATE:
		snprintf(m, n, "duplicate block%s at offset %" PRIu64 ": %s %s read before "
			 "(skipped %" PRId64 " records)", one ? "" : "s", off, seqs,
			 one ? "was" : "were", d->records_skipped);
		break;
	case RLOG_DAMAGE_ORDER:
		snprintf(m, n, "block%s out of order at offset %" PRIu64 ": %s after seq %" PRIu64
			 " (read where %s)", one ? "" : "s", off, seqs, d->seq_after,
			 one ? "it is" : "they are");
		break;
	default:
		break;
	}
}

static int report_cmp(const void *a, const void *b)
{
	const struct rlog__damage *x = *(struct rlog__damage *const *)a;
	const struct rlog__damage *y = *(struct rlog__damage *const *)b;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

void rlog__damage_sort(struct rlog_reader *r)
{
	if (r->ndamage > 1)
		qsort(r->damage, r->ndamage, sizeof(*r->damage), report_cmp);
}

int rlog__region_add(struct rlog_reader *r, uint64_t offset, uint64_t length, int kind)
{
	if (rlog__vec_room(&r->regions, r->nregions, &r->regions_cap, sizeof(*r->regions), 8) < 0)
		return -ENOMEM;
	r->regions[r->nregions++] = (struct rlog__region){ offset, length, kind };
	assert(rlog__regions_sane(r, r->nregions - 1));
	return 0;
}

bool rlog__regions_sane(const struct rlog_reader *r, size_t from)
{
	if (r->nregions > r->regions_cap)
		return false;
	for (size_t i = from; i < r->nregions; i++) {
		const struct rlog__region *g = &r->regions[i];
		if (g->length == 0 || g->offset > r->size || g->length > r->size - g->offset)
			return false;
		if (i > 0 && g->offset < r->regions[i - 1].offset + r->regions[i - 1].length)
			return false;
	}
	return true;
}
