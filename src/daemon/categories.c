/*
 * categories.c - the daemon's side of named categories: names that
 * `ringlog start/update --enable` asked for before any process had declared
 * them (the header's enable_names) are enabled as soon as one does
 * (rlog_category_name fills the header's category table).
 *
 * Once a pass: read the pending names (a seqlock), look each up in the
 * table, and fetch_or the bit of every name found into enable_mask, once
 * per name and per version of the list (`update` writes a new list before
 * it stores a new mask, so a name it dropped is not enabled again).
 */
#define _GNU_SOURCE
#include "categories.h"

#include <string.h>

#include "atomics.h"

void rlog__categories_resolve(struct rlog__region *r, struct rlog__pending *p)
{
	struct rlog_shm_header *h = r->hdr;
	char names[sizeof h->enable_names];
	int seq = rlog__enable_pending_copy(h, names, sizeof names);
	if (seq < 0)
		return;
	if ((uint32_t)seq != p->seq) {
		p->seq = (uint32_t)seq;
		p->done = 0;
	}
	if (names[0] == '\0')
		return;
	char table[64][28];
	rlog__categories_copy(h, table);
	for (const char *s = names; *s;) {
		size_t len = strcspn(s, ",");
		for (int k = 0; k < 64; k++) {
			if (strlen(table[k]) != len || strncmp(table[k], s, len) != 0 ||
			    (p->done >> k & 1))
				continue;
			p->done |= UINT64_C(1) << k;
			/* seq_cst: producers load the mask on every write. */
			atomic_fetch_or(&h->enable_mask, UINT64_C(1) << k);
		}
		s += len + (s[len] == ',');
	}
}
