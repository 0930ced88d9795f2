/*
 * categories.c - names for the bits of a session's enable mask.
 *
 * rlog_category_name(3, "net") remembers the name in the process and
 * records it in the session's category table (struct rlog_shm_category,
 * docs/FORMAT.md), now if the process is attached and at every later
 * attach, so that `ringlog start/update --enable net` can name the bit.
 * The first name recorded for a bit in a session stays:
 *
 *   CAS state FREE -> WRITING; copy the name; store_release state = SET
 *
 * A bit already SET under another name is an error the caller hears of
 * (-EEXIST), never a silent rename.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "atomics.h"
#include "producer.h"

static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static char names[64][28]; /* the process's names, "" where none */

/* Records names[cat] in region r.  Returns 0 or -EEXIST. */
static int record(struct rlog__region *r, unsigned cat, const char *name, size_t len)
{
	struct rlog_shm_category *c = &r->hdr->categories[cat];
	uint32_t expect = RLOG_CATEGORY_FREE;
	if (atomic_compare_exchange_strong(&c->state, &expect, RLOG_CATEGORY_WRITING)) {
		memset(c->name, 0, sizeof c->name);
		memcpy(c->name, name, len);
		/* Pairs with readers' load_acquire(state) == SET. */
		store_release(&c->state, RLOG_CATEGORY_SET);
		return 0;
	}
	if (expect == RLOG_CATEGORY_WRITING)
		return 0; /* another process is naming it now: first wins, it may be this name */
	char have[28];
	memcpy(have, c->name, sizeof have);
	have[27] = '\0';
	return strcmp(have, name) == 0 ? 0 : -EEXIST;
}

int rlog_category_name(unsigned cat, const char *name)
{
	size_t len = name ? strlen(name) : 0;
	if (cat > 63 || name == NULL || !rlog__category_name_ok(name, len))
		return -EINVAL;
	pthread_mutex_lock(&names_lock);
	int err = 0;
	if (names[cat][0] && strcmp(names[cat], name) != 0)
		err = -EEXIST;
	else
		memcpy(names[cat], name, len + 1);
	struct rlog__set *set = atomic_load(&rlog__set);
	for (uint32_t i = 0; i < set->n && err == 0; i++)
		err = record(&set->s[i]->region, cat, name, len);
	pthread_mutex_unlock(&names_lock);
	return err;
}

void rlog__categories_attach(struct rlog__session *s, bool try)
{
	/* Inside a write (late attach) the lock is only tried: a handler
	 * must not wait for the thread it interrupted.  The names are then
	 * missing from this session until the process declares one again. */
	if (try) {
		if (pthread_mutex_trylock(&names_lock) != 0)
			return;
	} else {
		pthread_mutex_lock(&names_lock);
	}
	for (unsigned cat = 0; cat < 64; cat++)
		if (names[cat][0])
			(void)record(&s->region, cat, names[cat], strlen(names[cat]));
	pthread_mutex_unlock(&names_lock);
}

void rlog__categories_fork_child(void)
{
	pthread_mutex_init(&names_lock, NULL);
}
