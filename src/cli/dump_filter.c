/*
 * dump_filter.c - the filters of `ringlog dump` (docs/DUMP.md, "Filters"):
 * an event is printed if it passes every filter given; a filter given
 * several values passes an event that matches any.  --since and --until
 * are cmd_dump.c's (they end the loop).
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "dump.h"
#include "names.h"
#include "vec.h"

bool dump_numlist_add(struct numlist *l, const char *s, uint64_t max)
{
	char *copy = strdup(s), *save = NULL;
	bool ok = copy != NULL && *s != '\0';

	for (char *tok = ok ? strtok_r(copy, ",", &save) : NULL; tok && ok;
	     tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;
		if (!cli_parse_u64(tok, 0, max, &v)) {
			ok = false;
			break;
		}
		if (rlog__vec_room(&l->v, l->n, &l->cap, sizeof(*l->v), 8) < 0) {
			ok = false;
			break;
		}
		l->v[l->n++] = (uint32_t)v;
	}
	/* "1,,2" and a trailing comma are typos, not lists. */
	if (ok && (strstr(s, ",,") || s[0] == ',' || s[strlen(s) - 1] == ','))
		ok = false;
	free(copy);
	return ok;
}

static bool numlist_has(const struct numlist *l, uint32_t v)
{
	if (l->n == 0)
		return true;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i] == v)
			return true;
	return false;
}

const char *dump_event_name(const struct rlog_event *ev, const struct rlog_schema *s)
{
	return s ? s->name : rlog__id_name(ev->id);
}

bool dump_filter_passes(const struct dump *d, const struct rlog_event *ev,
			const struct rlog_schema *s)
{
	if (!numlist_has(&d->ids, ev->id) || !numlist_has(&d->pids, ev->pid) ||
	    !numlist_has(&d->tids, ev->tid))
		return false;
	if (d->nnames == 0)
		return true;
	/* --name matches the schema's name, a reserved ID's, or the number. */
	char num[16];
	const char *name = dump_event_name(ev, s);
	if (!name) {
		snprintf(num, sizeof(num), "%u", (unsigned)ev->id);
		name = num;
	}
	for (size_t i = 0; i < d->nnames; i++)
		if (fnmatch(d->names[i], name, 0) == 0)
			return true;
	return false;
}
