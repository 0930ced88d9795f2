#define _GNU_SOURCE
#include "map.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomics.h"
#include "names.h"
#include "ringlog.h" /* RLOG__HAVE_TSC */

static int fail(int err, char *why, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return err;
}

const char *rlog__ring_clock_name(uint32_t tick_source)
{
	const char *name = rlog__tick_source_name(tick_source);
	return name ? name : "unknown";
}

int rlog__ring_check(void *mem, size_t n, struct rlog__ring_view *v, char *why, size_t whylen)
{
	memset(v, 0, sizeof *v);
	if (n < RLOG_RING_HEADER_SIZE)
		return fail(-EBADMSG, why, whylen,
			    "not a ring: %zu bytes, smaller than a ring header (%d)", n,
			    RLOG_RING_HEADER_SIZE);
	struct rlog_ring *h = mem;
	/* Acquire: pairs with rlog_ring_init's release store of the magic,
	 * after every other field. */
	uint32_t magic = load_acquire(&h->magic);
	if (magic == 0)
		return fail(-EBADMSG, why, whylen, "not a ring: magic 0 (not initialised)");
	if (magic != RLOG_RING_MAGIC)
		return fail(-EBADMSG, why, whylen,
			    "not a ring: magic 0x%08x, not 0x%08x (\"RLRG\")", magic,
			    RLOG_RING_MAGIC);
	/* Every field once, into locals: the mapping may change under us. */
	uint16_t version = h->version, header_size = h->header_size;
	uint32_t size = h->size, min_free = h->min_free, src = h->tick_source;
	uint64_t hz = h->tick_freq_hz;
	if (version != RLOG_RING_VERSION)
		return fail(-EPROTO, why, whylen, "ring version %u; this ringlog reads version %d",
			    version, RLOG_RING_VERSION);
	if (header_size != RLOG_RING_HEADER_SIZE)
		return fail(-EPROTO, why, whylen, "ring header size %u, not %d", header_size,
			    RLOG_RING_HEADER_SIZE);
	if (size < RLOG_RING_MIN_SIZE || size > RLOG_RING_MAX_SIZE || (size & 3u) != 0)
		return fail(-EBADMSG, why, whylen, "bad ring size %u (a multiple of 4, %d to %u)",
			    size, RLOG_RING_MIN_SIZE, RLOG_RING_MAX_SIZE);
	if ((size_t)size > n - RLOG_RING_HEADER_SIZE)
		return fail(-EBADMSG, why, whylen,
			    "a ring of %u bytes does not fit in %zu bytes after its header", size,
			    n - RLOG_RING_HEADER_SIZE);
	/* A mark at or above the ring's capacity would keep the flush side
	 * from ever sleeping. */
	if (min_free >= size - RLOG_RING_GAP)
		return fail(-EBADMSG, why, whylen,
			    "minimum mark %u is not below the ring's %u bytes", min_free,
			    size - RLOG_RING_GAP);
	switch (src) {
	case RLOG_TICK_TSC:
		if (!RLOG__HAVE_TSC)
			return fail(-ENOTSUP, why, whylen, "the ring's clock is the TSC, which "
				    "this machine does not have");
		hz = 0;
		break;
	case RLOG_TICK_MONOTONIC:
		hz = 1000000000u;
		break;
	case RLOG_TICK_COUNTER:
		if (hz == 0)
			return fail(-EBADMSG, why, whylen,
				    "the ring's clock is a counter of frequency 0");
		break;
	default:
		return fail(-ENOTSUP, why, whylen, "unknown tick source %u", src);
	}
	v->hdr = h;
	v->ring = (unsigned char *)mem + RLOG_RING_HEADER_SIZE;
	v->size = size;
	v->min_free = min_free;
	v->tick_source = src;
	v->tick_freq_hz = hz;
	return 0;
}

int rlog__ring_map(const char *path, struct rlog__ring_view *v, char *why, size_t whylen)
{
	memset(v, 0, sizeof *v);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return fail(-errno, why, whylen, "%s", strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return fail(-e, why, whylen, "%s", strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return fail(-EINVAL, why, whylen, "not a regular file or shared-memory object");
	}
	if ((uint64_t)st.st_size < RLOG_RING_HEADER_SIZE) {
		close(fd);
		return fail(-EBADMSG, why, whylen,
			    "not a ring: %lld bytes, smaller than a ring header (%d)",
			    (long long)st.st_size, RLOG_RING_HEADER_SIZE);
	}
	/* Map no more than the largest ring needs: a huge file is no reason
	 * to map it all. */
	uint64_t len = (uint64_t)st.st_size;
	if (len > (uint64_t)RLOG_RING_HEADER_SIZE + RLOG_RING_MAX_SIZE)
		len = (uint64_t)RLOG_RING_HEADER_SIZE + RLOG_RING_MAX_SIZE;
	void *m = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int e = errno;
	close(fd);
	if (m == MAP_FAILED)
		return fail(-e, why, whylen, "mmap: %s", strerror(e));
	int err = rlog__ring_check(m, (size_t)len, v, why, whylen);
	if (err < 0) {
		munmap(m, (size_t)len);
		memset(v, 0, sizeof *v);
		return err;
	}
	v->map = m;
	v->map_len = (size_t)len;
	return 0;
}

void rlog__ring_unmap(struct rlog__ring_view *v)
{
	if (v->map)
		munmap(v->map, v->map_len);
	memset(v, 0, sizeof *v);
}

int rlog__ring_create(const char *path, uint32_t ring_size, uint32_t tick_source, char *why,
		      size_t whylen)
{
	if (ring_size < RLOG_RING_MIN_SIZE || ring_size > RLOG_RING_MAX_SIZE || (ring_size & 3u))
		return fail(-EINVAL, why, whylen, "bad ring size %u", ring_size);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return fail(-errno, why, whylen, "%s", strerror(errno));
	size_t len = RLOG_RING_HEADER_SIZE + (size_t)ring_size;
	int err = 0;
	if (ftruncate(fd, (off_t)len) < 0) {
		err = fail(-errno, why, whylen, "ftruncate: %s", strerror(errno));
		goto fail_close;
	}
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		err = fail(-errno, why, whylen, "mmap: %s", strerror(errno));
		goto fail_close;
	}
	err = rlog_ring_init_clock(m, len, tick_source, 0);
	munmap(m, len);
	if (err < 0) {
		fail(err, why, whylen, "cannot lay out a ring: %s", strerror(-err));
		goto fail_close;
	}
	close(fd);
	return 0;

fail_close:
	close(fd);
	unlink(path);
	return err;
}
