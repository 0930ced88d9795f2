/*
 * map.c - the u64 -> u32 hash map (map.h).
 */
#include "map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int grow(struct rlog__map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	uint64_t *keys = malloc(cap * sizeof(*keys));
	uint32_t *vals = malloc(cap * sizeof(*vals));
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	memset(vals, 0xff, cap * sizeof(*vals)); /* RLOG__MAP_NONE */
	for (size_t i = 0; i < m->cap; i++) {
		if (m->vals[i] == RLOG__MAP_NONE)
			continue;
		size_t j = rlog__map_slot(m->keys[i], cap);
		while (vals[j] != RLOG__MAP_NONE)
			j = (j + 1) & (cap - 1);
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

int rlog__map_put(struct rlog__map *m, uint64_t key, uint32_t val)
{
	if ((m->n + 1) * 2 > m->cap && grow(m) < 0)
		return -ENOMEM;
	size_t i = rlog__map_slot(key, m->cap);
	while (m->vals[i] != RLOG__MAP_NONE)
		i = (i + 1) & (m->cap - 1);
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	return 0;
}

void rlog__map_clear(struct rlog__map *m)
{
	if (m->cap)
		memset(m->vals, 0xff, m->cap * sizeof(*m->vals));
	m->n = 0;
}

void rlog__map_free(struct rlog__map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}
