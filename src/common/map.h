/*
 * map.h - the one hash map of ringlog's tools: u64 keys to u32 values
 * (indices into a vector the caller owns), open addressing with linear
 * probing, grown at half full.
 *
 *   struct rlog__map m = { 0 };
 *   if (rlog__map_put(&m, (uint64_t)pid << 32 | tid, index) < 0) ...
 *   uint32_t i = rlog__map_get(&m, key);      // RLOG__MAP_NONE if absent
 *   rlog__map_free(&m);
 *
 * Used for the reader's threads and schemas, the counts of `ringlog
 * stats` and the converters' threads, processes and event classes.
 */
#ifndef RLOG_COMMON_MAP_H
#define RLOG_COMMON_MAP_H

#include <stddef.h>
#include <stdint.h>

#define RLOG__MAP_NONE UINT32_MAX /* "absent", and the mark of an empty slot */

struct rlog__map {
	uint64_t *keys;
	uint32_t *vals;  /* RLOG__MAP_NONE: empty slot */
	size_t cap;      /* a power of two, or 0 */
	size_t n;        /* keys in the map */
};

static inline size_t rlog__map_slot(uint64_t key, size_t cap)
{
	/* The finaliser of MurmurHash3: every key bit reaches the low bits. */
	key ^= key >> 33;
	key *= UINT64_C(0xff51afd7ed558ccd);
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

/* The value of key, or RLOG__MAP_NONE if absent. */
static inline uint32_t rlog__map_get(const struct rlog__map *m, uint64_t key)
{
	if (m->cap == 0)
		return RLOG__MAP_NONE;
	for (size_t i = rlog__map_slot(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->vals[i] == RLOG__MAP_NONE)
			return RLOG__MAP_NONE;
		if (m->keys[i] == key)
			return m->vals[i];
	}
}

/* Sets key, which must be absent, to val (not RLOG__MAP_NONE).
 * Returns 0 or -ENOMEM (the map is unchanged). */
int rlog__map_put(struct rlog__map *m, uint64_t key, uint32_t val);

/* Empties the map, keeping its memory. */
void rlog__map_clear(struct rlog__map *m);

/* Frees the map; it is empty and usable again afterwards. */
void rlog__map_free(struct rlog__map *m);

#endif
