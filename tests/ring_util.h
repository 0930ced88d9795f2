/*
 * ring_util.h - helpers for the single ring's tests: a ring in a file
 * (mapped shared, as ring-flush maps it), the log files ring-flush writes
 * read back through the reader library.  (`ringlog ring-flush` in the
 * background: proc_run.h's proc_start.)
 */
#ifndef RLOG_TEST_RING_UTIL_H
#define RLOG_TEST_RING_UTIL_H

#include "harness.h"
#include "tap.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#include "ringlog/ring.h"

/* A ring of ring_size bytes in a new file at path, mapped shared. */
struct t_ring {
	char path[256];
	struct rlog_ring *r;
	size_t len;
};

static inline void t_ring_create(struct t_ring *t, const char *tag, uint32_t ring_size,
				 uint32_t tick_source, uint64_t hz)
{
	snprintf(t->path, sizeof t->path, "/tmp/rlog-test-ring-%s-%d", tag, (int)getpid());
	unlink(t->path);
	t->len = RLOG_RING_HEADER_SIZE + ring_size;
	int fd = open(t->path, O_RDWR | O_CREAT | O_EXCL, 0600);
	BAIL_IF(fd < 0 || ftruncate(fd, (off_t)t->len) < 0, "cannot create %s: %s", t->path,
		strerror(errno));
	void *m = mmap(NULL, t->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	BAIL_IF(m == MAP_FAILED, "mmap %s: %s", t->path, strerror(errno));
	t->r = m;
	BAIL_IF(rlog_ring_init_clock(m, t->len, tick_source, hz) != 0, "rlog_ring_init_clock failed");
	BAIL_IF(t->r->size != ring_size, "ring size %u, not %u", t->r->size, ring_size);
}

static inline void t_ring_destroy(struct t_ring *t)
{
	munmap(t->r, t->len);
	unlink(t->path);
}

/* A log file path for this test process. */
static inline const char *t_log(const char *tag)
{
	static char p[256];
	snprintf(p, sizeof p, "/tmp/rlog-test-ring-%s-%d.rlog", tag, (int)getpid());
	return p;
}

/* Runs `ringlog ring-flush PATH -o LOG --once` (LOG replaced). */
static inline int t_flush_once(struct h_run *res, const char *path, const char *log)
{
	unlink(log);
	return h_ringlog(res, "ring-flush", path, "-o", log, "--once", NULL);
}

/* Every event of a log file, in the reader's order (LOG_MARKER and
 * DATA_LOSS included; TIME_SYNC too if with_sync). */
struct t_event {
	struct rlog_event ev;
	uint8_t payload[64]; /* the first 64 bytes */
	struct rlog_data_loss loss; /* for DATA_LOSS */
};
struct t_file {
	int open_err;
	struct rlog_reader_info info;
	size_t n;
	struct t_event *e;
	size_t damage;
	uint64_t events;            /* application events */
	uint64_t loss[8], loss_bytes[8]; /* DATA_LOSS events and bytes by cause */
	uint64_t loss_records, time_syncs;
};

static inline void t_read(const char *path, struct t_file *f, bool with_sync)
{
	memset(f, 0, sizeof *f);
	size_t cap = 1024;
	f->e = malloc(cap * sizeof *f->e);
	struct rlog_reader *rd;
	f->open_err = rlog_reader_open(path, &rd);
	if (f->open_err < 0)
		return;
	if (with_sync)
		rlog_reader_set_flags(rd, RLOG_READER_TIME_SYNC);
	f->info = *rlog_reader_info(rd);
	struct rlog_event ev;
	while (rlog_reader_next(rd, &ev) == 1) {
		if (f->n == cap) {
			cap *= 2;
			f->e = realloc(f->e, cap * sizeof *f->e);
			BAIL_IF(f->e == NULL, "out of memory reading %s", path);
		}
		struct t_event *t = &f->e[f->n++];
		memset(t, 0, sizeof *t);
		t->ev = ev;
		memcpy(t->payload, ev.payload, ev.length < 64 ? ev.length : 64);
		t->ev.payload = t->payload;
		if (ev.from_daemon && !ev.flagged && ev.id == RLOG_ID_DATA_LOSS &&
		    ev.length >= sizeof t->loss) {
			memcpy(&t->loss, ev.payload, sizeof t->loss);
			f->loss_records++;
			if (t->loss.cause < 8) {
				f->loss[t->loss.cause] += t->loss.events;
				f->loss_bytes[t->loss.cause] += t->loss.bytes;
			}
		} else if (!ev.flagged && ev.id == RLOG_ID_TIME_SYNC) {
			f->time_syncs++;
		} else if (!ev.from_daemon) {
			f->events++;
		}
	}
	/* The array moved as it grew: point each payload at its own copy. */
	for (size_t i = 0; i < f->n; i++)
		f->e[i].ev.payload = f->e[i].payload;
	f->damage = rlog_reader_damage_count(rd);
	rlog_reader_close(rd);
}

static inline void t_file_free(struct t_file *f)
{
	free(f->e);
	f->e = NULL;
}

/* Waits until *word == want; false after about 30 s (a hung flush
 * application fails the test instead of hanging it). */
static inline bool t_wait_word(_Atomic uint32_t *word, uint32_t want)
{
	for (int i = 0; i < 30000; i++) {
		if (atomic_load(word) == want)
			return true;
		proc_sleep_ms(1);
	}
	return false;
}

#endif
