/*
 * wake.c - the wake registry (wake.h).
 */
#define _GNU_SOURCE
#include "wake.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomics.h"
#include "shm.h"

uint32_t rlog__wake_hash(const char *name)
{
	uint32_t h = 2166136261u;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		unsigned char c = *p >= 'A' && *p <= 'Z' ? (unsigned char)(*p + 32) : *p;
		h = (h ^ c) * 16777619u;
	}
	return h % RLOG_WAKE_WORDS;
}

/* RLOG_WAKE_PREFIX + decimal uid, without snprintf (async-signal-safe). */
static void wake_name(char *out)
{
	static const char prefix[] = RLOG_WAKE_PREFIX;
	char digits[16];
	int n = 0;
	char *p = out;
	for (const char *s = prefix; *s; s++)
		*p++ = *s;
	unsigned long uid = (unsigned long)getuid();
	do {
		digits[n++] = (char)('0' + uid % 10);
		uid /= 10;
	} while (uid > 0);
	while (n > 0)
		*p++ = digits[--n];
	*p = '\0';
}

struct rlog_wake_registry *rlog__wake_open(void)
{
	char name[48];
	wake_name(name);
	bool created = true;
	int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) {
		created = false;
		fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
	}
	if (fd < 0)
		return NULL;
	struct stat st;
	/* The owner check is the session region's (shm.c): a registry another
	 * user planted under this uid's name would let it see and spoil this
	 * user's wake-ups.  The creator sizes it, and so does an opener that
	 * finds it not yet sized (the same size, zero-filled: whoever is
	 * first, the result is the same).  Another size is not a registry of
	 * this version. */
	if (fstat(fd, &st) < 0 ||
	    rlog__shm_owner_check((uint32_t)st.st_uid, (uint32_t)st.st_mode) < 0 ||
	    (st.st_size == 0 && (ftruncate(fd, sizeof(struct rlog_wake_registry)) < 0 ||
				 fstat(fd, &st) < 0)) ||
	    (size_t)st.st_size != sizeof(struct rlog_wake_registry)) {
		close(fd);
		return NULL;
	}
	struct rlog_wake_registry *w = mmap(NULL, sizeof *w, PROT_READ | PROT_WRITE, MAP_SHARED,
					   fd, 0);
	close(fd);
	if (w == MAP_FAILED)
		return NULL;
	if (created) {
		w->version = RLOG_WAKE_VERSION;
		w->words = RLOG_WAKE_WORDS;
		/* Last: an opener that sees the magic sees the rest. */
		store_release(&w->magic, RLOG_WAKE_MAGIC);
		return w;
	}
	/* Pairs with the creator's store_release(magic).  A creator still
	 * between its ftruncate and its magic: zeroes, which is valid. */
	uint64_t magic = load_acquire(&w->magic);
	if ((magic != RLOG_WAKE_MAGIC && magic != 0) ||
	    (magic != 0 && (w->version != RLOG_WAKE_VERSION || w->words != RLOG_WAKE_WORDS))) {
		munmap(w, sizeof *w);
		return NULL;
	}
	return w;
}

int rlog__wake_add(const char *name, int delta)
{
	struct rlog_wake_registry *w = rlog__wake_open();
	if (w == NULL)
		return -ENOENT;
	uint32_t h = rlog__wake_hash(name);
	_Atomic uint32_t *c = &w->count[h];
	if (delta > 0) {
		/* The start first: a waiter that sees the new count sees it
		 * (late.c compares both; a count can come back to the value a
		 * waiter saw, starts only after 65,536 more). */
		atomic_fetch_add(&w->starts[h], 1);
		atomic_fetch_add(c, 1);
	} else {
		/* Never below 0: a count left by a daemon that died cannot
		 * make another session's stop wrap it around. */
		uint32_t v = load_relaxed(c);
		while (v > 0 && !atomic_compare_exchange_weak(c, &v, v - 1))
			;
	}
	/* The mask follows the count.  Each updater stores the mask of the
	 * count it reads and looks again: the last one to find the count
	 * unchanged after its store leaves them agreeing, whatever the order
	 * of two updaters' stores (all seq_cst). */
	uint32_t v;
	do {
		v = atomic_load(c);
		atomic_store(&w->mask[h], v ? ~UINT64_C(0) : 0);
	} while (atomic_load(c) != v);
	munmap(w, sizeof *w);
	return 0;
}
