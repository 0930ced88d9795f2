/*
 * shm.c - create, open, validate and remove session regions.
 */
#define _GNU_SOURCE
#include "shm.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomics.h"
#include "bits.h"

#define PAGE 4096u

int rlog__name_validate(const char *name)
{
	if (name == NULL)
		return -EINVAL;
	size_t n = strlen(name);
	if (n == 0 || n > RLOG_NAME_MAX || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];
		if (!(isalnum(c) || c == '.' || c == '_' || c == '-') || c >= 0x80)
			return -EINVAL;
	}
	return 0;
}

bool rlog__category_name_ok(const char *s, size_t n)
{
	if (n == 0 || n > 27)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		      c == '-'))
			return false;
	}
	return true;
}

int rlog__shm_name(const char *name, char *out, size_t cap)
{
	if (rlog__name_validate(name) < 0)
		return -EINVAL;
	size_t plen = strlen(RLOG_SHM_PREFIX), n = strlen(name);
	if (plen + n + 1 > cap)
		return -EINVAL;
	memcpy(out, RLOG_SHM_PREFIX, plen);
	for (size_t i = 0; i < n; i++)
		out[plen + i] = (char)tolower((unsigned char)name[i]);
	out[plen + n] = '\0';
	return 0;
}

/* The layout is a pure function of the geometry: creator and openers
 * compute it the same way, and an opener checks the header agrees. */
struct layout {
	uint64_t ctl_offset, desc_offset, slot_offset, proc_offset, counter_offset, free_offset,
		buffers_offset;
	uint64_t region_size;
	uint32_t free_words;
};

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static void layout_compute(uint32_t buffer_size, uint32_t buffer_count, uint32_t slot_count,
			   struct layout *l)
{
	l->free_words = (buffer_count + 63) / 64;
	l->ctl_offset = sizeof(struct rlog_shm_header);
	l->desc_offset = l->ctl_offset + sizeof(struct rlog_shm_ctl);
	l->slot_offset = l->desc_offset + (uint64_t)buffer_count * sizeof(struct rlog_shm_desc);
	l->proc_offset = l->slot_offset + (uint64_t)slot_count * sizeof(struct rlog_shm_slot);
	l->counter_offset = l->proc_offset + (uint64_t)slot_count * sizeof(struct rlog_shm_proc);
	l->free_offset = l->counter_offset + RLOG_SHM_COUNTERS * sizeof(struct rlog_shm_counter);
	l->buffers_offset = round_up(l->free_offset + (uint64_t)l->free_words * 8, PAGE);
	l->region_size = l->buffers_offset + (uint64_t)buffer_count * buffer_size;
}

uint32_t rlog__region_capacity(uint32_t buffer_size, uint32_t max_buffers)
{
	uint64_t cap = (uint64_t)max_buffers * 4;
	if (cap > RLOG_MAX_BUFFER_COUNT)
		cap = RLOG_MAX_BUFFER_COUNT;
	/* Leave a megabyte for the metadata in front of the buffers. */
	uint64_t fit = (RLOG_MAX_REGION_SIZE - (UINT64_C(16) << 20)) / buffer_size;
	if (cap > fit)
		cap = fit;
	return cap < max_buffers ? max_buffers : (uint32_t)cap;
}

static bool power_of_two(uint32_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

static void map_views(struct rlog__region *r, void *base, size_t size, const struct layout *l)
{
	r->hdr = base;
	r->size = size;
	r->ctl = (struct rlog_shm_ctl *)((uint8_t *)base + l->ctl_offset);
	r->desc = (struct rlog_shm_desc *)((uint8_t *)base + l->desc_offset);
	r->slots = (struct rlog_shm_slot *)((uint8_t *)base + l->slot_offset);
	r->procs = (struct rlog_shm_proc *)((uint8_t *)base + l->proc_offset);
	r->counters = (struct rlog_shm_counter *)((uint8_t *)base + l->counter_offset);
	r->free_bits = (_Atomic uint64_t *)((uint8_t *)base + l->free_offset);
	r->buffers = (uint8_t *)base + l->buffers_offset;
	r->free_words = l->free_words;
}

int rlog__region_create(const char *name, const struct rlog__region_params *p,
			struct rlog__region *out)
{
	char shm[96];
	if (rlog__shm_name(name, shm, sizeof shm) < 0)
		return -EINVAL;
	uint32_t cap = p->capacity ? p->capacity : rlog__region_capacity(p->buffer_size, p->max_buffers);
	uint32_t pct = p->high_water_pct ? p->high_water_pct : RLOG_DEFAULT_HIGH_WATER;
	uint32_t period = p->counter_period_ms ? p->counter_period_ms : RLOG_COUNTER_PERIOD_MS;
	if (p->buffer_size < RLOG_MIN_BUFFER_SIZE || p->buffer_size > RLOG_MAX_BUFFER_SIZE ||
	    !power_of_two(p->buffer_size) || p->min_buffers < RLOG_MIN_BUFFER_COUNT ||
	    p->min_buffers > p->max_buffers || p->max_buffers > cap ||
	    cap > RLOG_MAX_BUFFER_COUNT || pct > 100)
		return -EINVAL;
	/* One slot per producer thread.  A thread holds at most one buffer, so
	 * more threads than MaximumBuffers cannot all write at once anyway;
	 * the extra slots let short-lived threads come and go while the daemon
	 * reaps the exited ones.  There are as many process entries: a
	 * process without a slot could not write anything but losses. */
	uint32_t slots = p->max_buffers + RLOG_SLOTS_EXTRA;
	struct layout l;
	layout_compute(p->buffer_size, cap, slots, &l);
	if (l.region_size > RLOG_MAX_REGION_SIZE)
		return -EINVAL;

	int fd = shm_open(shm, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return -errno;
	int err;
	if (fchmod(fd, 0600) < 0 || ftruncate(fd, (off_t)l.region_size) < 0) {
		err = -errno;
		goto fail_unlink;
	}
	void *base = mmap(NULL, l.region_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		err = -errno;
		goto fail_unlink;
	}
	close(fd);

	memset(out, 0, sizeof *out);
	map_views(out, base, l.region_size, &l);
	out->buffer_size = p->buffer_size;
	out->buffer_count = cap;
	out->slot_count = slots;
	out->min_buffers = p->min_buffers;
	out->high_water_pct = pct;
	out->overwrite = (p->log_file_mode & RLOG_MODE_OVERWRITE) != 0;

	struct rlog_shm_header *h = out->hdr; /* ftruncate zeroed everything */
	h->abi_version = RLOG_SHM_ABI_VERSION;
	h->header_size = sizeof *h;
	h->region_size = l.region_size;
	h->buffer_size = p->buffer_size;
	h->buffer_count = cap;
	h->slot_count = slots;
	h->min_buffers = p->min_buffers;
	h->high_water_pct = pct;
	h->ctl_offset = l.ctl_offset;
	h->desc_offset = l.desc_offset;
	h->slot_offset = l.slot_offset;
	h->proc_offset = l.proc_offset;
	h->counter_offset = l.counter_offset;
	h->counter_count = RLOG_SHM_COUNTERS;
	h->free_offset = l.free_offset;
	h->buffers_offset = l.buffers_offset;
	h->log_file_mode = p->log_file_mode;
	h->max_file_size = p->max_file_size;
	h->age_limit = p->age_limit;
	h->drain_threads = p->drain_threads;
	store_relaxed(&h->flush_timer_ms, p->flush_timer_ms);
	store_relaxed(&h->number_of_buffers, p->min_buffers);
	store_relaxed(&h->max_buffers, p->max_buffers);
	snprintf(h->name, sizeof h->name, "%s", name);
	store_relaxed(&h->enable_mask, p->enable_mask);
	store_relaxed(&h->counter_mask, p->counter_mask);
	store_relaxed(&h->counter_period_ms, period);
	/* The pool starts with min_buffers; producers and the daemon grow it (pool.c). */
	for (uint32_t w = 0; w < l.free_words; w++) {
		uint32_t left = p->min_buffers > w * 64 ? p->min_buffers - w * 64 : 0;
		store_relaxed(&out->free_bits[w], left >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << left) - 1);
	}
	/* The magic goes last: an opener that sees it sees a laid-out region
	 * (pairs with the load_acquire in rlog__region_open). */
	store_release(&h->magic, RLOG_SHM_MAGIC);
	return 0;

fail_unlink:
	close(fd);
	shm_unlink(shm);
	return err;
}

/*
 * Copies the identity and geometry of the header at h (the part written
 * once at creation) into *g, and checks the copy against a region of size
 * bytes; *l receives the layout.  Returns 0 or -EPROTO.
 */
static int header_copy_check(const struct rlog_shm_header *h, uint64_t size,
			     struct rlog_shm_header *g, struct layout *l)
{
	/* Pairs with the creator's store_release(magic). */
	uint64_t magic = load_acquire(&h->magic);
	memcpy((uint8_t *)g + 8, (const uint8_t *)h + 8, offsetof(struct rlog_shm_header, name) - 8);
	/* The places of the request page and the counter table, outside
	 * the first 128 bytes (written before the magic too, never changed). */
	g->ctl_offset = h->ctl_offset;
	g->counter_offset = h->counter_offset;
	g->counter_count = h->counter_count;
	if (magic != RLOG_SHM_MAGIC || g->abi_version != RLOG_SHM_ABI_VERSION ||
	    g->header_size != sizeof(struct rlog_shm_header) || g->region_size != size)
		return -EPROTO;
	if (g->buffer_size < RLOG_MIN_BUFFER_SIZE || g->buffer_size > RLOG_MAX_BUFFER_SIZE ||
	    !power_of_two(g->buffer_size) || g->buffer_count < RLOG_MIN_BUFFER_COUNT ||
	    g->buffer_count > RLOG_MAX_BUFFER_COUNT || g->min_buffers < RLOG_MIN_BUFFER_COUNT ||
	    g->min_buffers > g->buffer_count || g->slot_count <= RLOG_SLOTS_EXTRA ||
	    g->slot_count > g->buffer_count + RLOG_SLOTS_EXTRA || g->high_water_pct == 0 ||
	    g->high_water_pct > 100)
		return -EPROTO;
	layout_compute(g->buffer_size, g->buffer_count, g->slot_count, l);
	if (l->region_size != size || l->ctl_offset != g->ctl_offset ||
	    l->desc_offset != g->desc_offset || l->slot_offset != g->slot_offset ||
	    l->proc_offset != g->proc_offset || l->free_offset != g->free_offset ||
	    l->buffers_offset != g->buffers_offset || l->counter_offset != g->counter_offset ||
	    g->counter_count != RLOG_SHM_COUNTERS)
		return -EPROTO;
	return 0;
}

int rlog__header_check(const struct rlog__region *r)
{
	struct rlog_shm_header g;
	struct layout l;
	int err = header_copy_check(r->hdr, r->size, &g, &l);
	if (err < 0)
		return err;
	/* And it is still the geometry this process validated and uses. */
	if (g.buffer_size != r->buffer_size || g.buffer_count != r->buffer_count ||
	    g.slot_count != r->slot_count || g.min_buffers != r->min_buffers ||
	    g.high_water_pct != r->high_water_pct)
		return -EPROTO;
	return 0;
}

bool rlog__desc_sane(const struct rlog__region *r, const struct rlog_shm_desc *d)
{
	uint32_t st = load_relaxed(&d->state), wo = load_relaxed(&d->write_off);
	if (st > RLOG_BUF_TAKING)
		return false;
	if (st == RLOG_BUF_FREE || st == RLOG_BUF_TAKING)
		return true; /* its other fields are its last owner's, or being set */
	return d->slot < r->slot_count && wo <= r->buffer_size && (wo & 3) == 0;
}

/* Opens session name's object read-write; *size receives its size.
 * Returns the descriptor, or -errno (-EINVAL for a bad name). */
static int object_open(const char *name, size_t *size)
{
	char shm[96];
	if (rlog__shm_name(name, shm, sizeof shm) < 0)
		return -EINVAL;
	int fd = shm_open(shm, O_RDWR, 0);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	/* Only its owner's, and only to it: a session another user created
	 * under this name (one named "default" before its real user starts
	 * it) would otherwise receive this user's events, and a region others
	 * can reach is not private to its owner.  Root is not exempt: root's
	 * events must not go into a region a user planted. */
	int err = rlog__shm_owner_check((uint32_t)st.st_uid, (uint32_t)st.st_mode);
	if (err < 0) {
		close(fd);
		return err;
	}
	*size = (size_t)st.st_size;
	return fd;
}

int rlog__shm_owner_check(uint32_t uid, uint32_t mode)
{
	return uid != (uint32_t)geteuid() || (mode & 077) != 0 ? -EACCES : 0;
}

int rlog__region_owner(const char *name, uint32_t *uid, uint32_t *mode)
{
	char shm[96], path[128];
	if (rlog__shm_name(name, shm, sizeof shm) < 0)
		return -EINVAL;
	snprintf(path, sizeof path, "/dev/shm%s", shm);
	struct stat st;
	if (lstat(path, &st) < 0)
		return -errno;
	*uid = (uint32_t)st.st_uid;
	*mode = (uint32_t)st.st_mode & 07777;
	return 0;
}

int rlog__region_open(const char *name, struct rlog__region *out)
{
	size_t size = 0; /* set when object_open succeeds (GCC -O3 cannot tell) */
	int fd = object_open(name, &size);
	if (fd < 0)
		return fd;
	if (size < sizeof(struct rlog_shm_header) || (uint64_t)size > RLOG_MAX_REGION_SIZE) {
		close(fd);
		return -EPROTO;
	}
	void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (base == MAP_FAILED)
		return -ENOMEM;

	/* Copy the geometry once, validate the copy, use only the copy. */
	struct rlog_shm_header g;
	struct layout l;
	int err = header_copy_check(base, size, &g, &l);
	if (err < 0)
		goto fail;

	memset(out, 0, sizeof *out);
	map_views(out, base, size, &l);
	out->buffer_size = g.buffer_size;
	out->buffer_count = g.buffer_count;
	out->slot_count = g.slot_count;
	out->min_buffers = g.min_buffers;
	out->high_water_pct = g.high_water_pct;
	out->overwrite = (g.log_file_mode & RLOG_MODE_OVERWRITE) != 0;
	return 0;
fail:
	munmap(base, size);
	return err;
}

int rlog__region_map_header(const char *name, struct rlog_shm_header **out)
{
	size_t size = 0; /* set when object_open succeeds (GCC -O3 cannot tell) */
	int fd = object_open(name, &size);
	if (fd < 0)
		return fd;
	int err = 0;
	void *base = MAP_FAILED;
	if (size < sizeof(struct rlog_shm_header))
		err = -EPROTO;
	else if ((base = mmap(NULL, sizeof(struct rlog_shm_header), PROT_READ | PROT_WRITE,
			      MAP_SHARED, fd, 0)) == MAP_FAILED)
		err = -errno;
	close(fd);
	if (err == 0)
		*out = base;
	return err;
}

void rlog__region_unmap_header(struct rlog_shm_header *h)
{
	munmap(h, sizeof *h);
}

void rlog__region_close(struct rlog__region *r)
{
	if (r->hdr)
		munmap(r->hdr, r->size);
	memset(r, 0, sizeof *r);
}

int rlog__region_unlink(const char *name)
{
	char shm[96];
	if (rlog__shm_name(name, shm, sizeof shm) < 0)
		return -EINVAL;
	return shm_unlink(shm) < 0 ? -errno : 0;
}

uint32_t rlog__region_free_count(const struct rlog__region *r)
{
	uint32_t n = 0;
	for (uint32_t w = 0; w < r->free_words; w++)
		n += rlog__popcount64(load_relaxed(&r->free_bits[w]));
	return n;
}

bool rlog__region_past_high_water(const struct rlog__region *r, uint32_t n)
{
	uint32_t free = rlog__region_free_count(r);
	return free < n && n - free >= rlog__region_high_water(r->high_water_pct, n);
}

int rlog__region_list(void (*fn)(const char *name, void *arg), void *arg)
{
	DIR *d = opendir("/dev/shm");
	if (d == NULL)
		return -errno;
	const char *prefix = &RLOG_SHM_PREFIX[1]; /* without the leading "/" */
	size_t plen = strlen(prefix);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, prefix, plen) != 0)
			continue;
		if (rlog__name_validate(e->d_name + plen) < 0)
			continue;
		fn(e->d_name + plen, arg);
		n++;
	}
	closedir(d);
	return n;
}

void rlog__categories_copy(const struct rlog_shm_header *h, char out[64][28])
{
	for (int i = 0; i < 64; i++) {
		const struct rlog_shm_category *c = &h->categories[i];
		out[i][0] = '\0';
		/* Pairs with the declaring process's store_release(SET). */
		if (load_acquire(&c->state) != RLOG_CATEGORY_SET)
			continue;
		size_t n = strnlen(c->name, sizeof c->name);
		if (n == sizeof c->name)
			n = sizeof c->name - 1; /* a hostile name without its NUL */
		memcpy(out[i], c->name, n);
		out[i][n] = '\0';
	}
}

int rlog__enable_pending_copy(const struct rlog_shm_header *h, char *out, size_t n)
{
	for (int tries = 0; tries < 100; tries++) {
		/* Seqlock reader: pairs with the writer's release increments. */
		uint32_t seq = load_acquire(&h->enable_names_seq);
		if (seq & 1)
			continue;
		size_t len = strnlen(h->enable_names, sizeof h->enable_names);
		if (len >= n)
			len = n - 1;
		memcpy(out, h->enable_names, len);
		out[len] = '\0';
		atomic_thread_fence(memory_order_acquire);
		if (load_relaxed(&h->enable_names_seq) == seq)
			return (int)seq;
	}
	out[0] = '\0';
	return -EAGAIN;
}

uint64_t rlog__shm_allocated(int fd, uint64_t from, uint64_t to)
{
	uint64_t n = 0;
	off_t pos = (off_t)from;
	while ((uint64_t)pos < to) {
		off_t data = lseek(fd, pos, SEEK_DATA);
		if (data < 0 || (uint64_t)data >= to)
			break;
		off_t hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0)
			break;
		n += ((uint64_t)hole < to ? (uint64_t)hole : to) - (uint64_t)data;
		pos = hole;
	}
	return n;
}
