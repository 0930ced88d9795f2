/*
 * counters.c - the daemon's sampling of counters (counters.h).
 *
 * One pass:
 *
 *   mask = counter_mask & the catalogue      a source turned off: its streams
 *                                            forget their baseline, its
 *                                            performance counters are closed
 *   processes = ACTIVE entries of the process table (sorted by pid)
 *   apps = SET entries of the counter table (dead owners: freed after
 *          this pass's sample)
 *   system (pid 0):  system.* ────────────────┐
 *   each pid:        app counters, proc.*,    ├─► one daemon block per pid:
 *                    perf.* ──────────────────┘   COUNTER_NAME (a counter's first
 *                                                 record), COUNTER (if it changed)
 *
 * A stream is one counter of one process (or of the system).  Its first
 * reading is its baseline and makes no record, except for an application
 * counter, whose baseline is 0 (it starts there when registered).  Then,
 * as CeLog's event tracking library did with dwCeLogTLBMiss: a reading
 * equal to the last makes no record; any other makes a COUNTER record with
 * the delta (rlog__counter_delta: modulo 2^64, a reset when it went
 * back).  The record carries the absolute value when its seq is a multiple
 * of RLOG_COUNTER_KEY_EVERY, when it is a reset, and when it is the first
 * after a new baseline (its source was turned off and on, so the deltas
 * no longer add up to the value).
 *
 * A counter's id is given at its first record (1, 2, 3, ... for the
 * session), just after its COUNTER_NAME record in the same block.
 */
#define _GNU_SOURCE
#include "counters.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "atomics.h"
#include "buf.h"
#include "clock.h"
#include "counter_catalog.h"
#include "perf.h"
#include "procstat.h"
#include "record.h"
#include "sink.h"
#include "vec.h"

/* Threads of a process that get a performance counter of their own (each
 * also counts the threads it creates afterwards). */
#define THREADS_MAX 256

/* The sources sampled per attached process: proc.* and perf.*. */
#define PROCESS_BITS                                                                      \
	(((UINT64_C(1) << RLOG__FIGURES) - 1) << RLOG_CTR_BIT_PROC |                      \
	 ((UINT64_C(1) << RLOG__PERF_EVENTS) - 1) << RLOG_CTR_BIT_PERF)

/* How often the owners of application counters are checked for life. */
#define CHECK_NS UINT64_C(1000000000)

/* One counter of one process (or of the system), as the daemon follows it. */
struct stream {
	uint64_t prev;      /* the last reading: what the next delta is from */
	uint32_t id;        /* counter_id; 0 until its first record */
	uint16_t seq;       /* the next record's seq */
	bool have_prev;     /* prev holds (else the next reading is a baseline) */
	bool key;           /* the next record carries the value */
	uint8_t info;       /* RLOG_COUNTER_INFO_* */
};

/* A performance counter: one fd per thread (or per CPU), summed. */
struct perfset {
	struct stream st;
	int *fds;
	uint32_t nfds;
	bool opened;        /* open was tried (fds may still be none) */
};

/* An attached process. */
struct cproc {
	uint32_t pid;
	uint64_t start;     /* its start time, from its process entry */
	bool present;       /* in the process table at this pass */
	struct stream fig[RLOG__FIGURES];
	struct perfset perf[RLOG__PERF_EVENTS];
};

/* The daemon's private view of one entry of the counter table. */
struct app {
	bool live;          /* a counter is being followed here */
	bool free_after;    /* its owner is dead: freed after this pass's sample */
	uint32_t pid;
	uint64_t start;
	struct stream st;
	char name[RLOG_COUNTER_NAME_MAX + 1];
};

struct rlog__counters {
	struct rlog__region *r;
	uint32_t tick_source;
	rlog__counter_emit_fn *emit;
	void *arg;
	uint32_t next_id;
	uint64_t mask;              /* the sources sampled at the last pass */
	uint32_t period_ms;
	uint64_t last_pass, next_due, last_check;
	bool started;
	bool resumed;               /* an earlier daemon of the session gave counter ids */
	struct cproc *procs;        /* sorted by pid */
	size_t nprocs, procs_cap;
	struct app apps[RLOG_SHM_COUNTERS];
	uint16_t order[RLOG_SHM_COUNTERS]; /* live apps, by (pid, index): pass scratch */
	struct perfset sys[RLOG__PERF_EVENTS];
	int ncpus;
	struct rlog__buf blk;       /* the block being built */
	uint32_t blk_records;       /* records in it ... */
	uint32_t blk_counters;      /* ... of which COUNTER records */
	uint64_t blk_time;
	uint64_t reads, records, samples;
};

/* Writes a line into last_error if it holds none (a counter that cannot
 * be read must not hide an error of the log file). */
static void note(struct rlog__counters *c, const char *fmt, ...)
{
	char *e = c->r->hdr->last_error;
	if (e[0] != '\0')
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e, sizeof c->r->hdr->last_error, fmt, ap);
	va_end(ap);
}

int rlog__counters_open(struct rlog__region *r, uint32_t tick_source, rlog__counter_emit_fn *emit,
			void *arg, struct rlog__counters **out)
{
	struct rlog__counters *c = calloc(1, sizeof *c);
	if (c == NULL)
		return -ENOMEM;
	c->r = r;
	c->tick_source = tick_source;
	c->emit = emit;
	c->arg = arg;
	/* A daemon that takes a session over (`ringlog start --resume`) goes
	 * on with its counter ids and statistics: an id is never given twice
	 * in a session.  A fresh region holds 0s. */
	struct rlog_shm_header *h = r->hdr;
	uint32_t next = load_relaxed(&h->counter_next_id);
	c->resumed = next != 0;
	c->next_id = next ? next : 1;
	c->records = load_relaxed(&h->stats.counter_records);
	c->samples = load_relaxed(&h->stats.counter_samples);
	long n = sysconf(_SC_NPROCESSORS_CONF);
	c->ncpus = n > 0 ? (int)(n > 4096 ? 4096 : n) : 1;
	/* A performance counter is an fd per thread or CPU. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	*out = c;
	return 0;
}

static void perf_close(struct perfset *p)
{
	for (uint32_t i = 0; i < p->nfds; i++)
		close(p->fds[i]);
	free(p->fds);
	p->fds = NULL;
	p->nfds = 0;
	p->opened = false;
	p->st.have_prev = false;
}

static void proc_close(struct cproc *p)
{
	for (int k = 0; k < RLOG__PERF_EVENTS; k++)
		perf_close(&p->perf[k]);
}

void rlog__counters_close(struct rlog__counters *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->nprocs; i++)
		proc_close(&c->procs[i]);
	for (int k = 0; k < RLOG__PERF_EVENTS; k++)
		perf_close(&c->sys[k]);
	free(c->procs);
	rlog__buf_free(&c->blk);
	free(c);
}

void rlog__counters_totals(const struct rlog__counters *c, uint64_t *reads, uint64_t *records)
{
	*reads = c->reads;
	*records = c->records;
}

/* ---------------------------------------------------------------- */
/* Records                                                          */
/* ---------------------------------------------------------------- */

static void group_begin(struct rlog__counters *c)
{
	c->blk.oom = false; /* a block that did not fit in memory was noted */
	c->blk.len = 0;
	c->blk_records = 0;
	c->blk_counters = 0;
	c->blk_time = rlog__ticks(c->tick_source);
}

static void group_end(struct rlog__counters *c, uint32_t pid)
{
	if (c->blk.oom) {
		/* Its records are lost; the readers see a gap in their seq and
		 * take the value again at the next record that carries it. */
		note(c, "counters of pid %u: out of memory; a sample was lost", pid);
		return;
	}
	if (c->blk_records == 0)
		return;
	c->emit(c->arg, pid, c->blk_time, c->blk.p, (uint32_t)c->blk.len, c->blk_records);
	c->records += c->blk_counters;
}

static void put_record(struct rlog__counters *c, unsigned id, const void *a, size_t alen,
		       const void *b, size_t blen)
{
	size_t len = alen + blen;
	uint32_t hw[2] = { rlog__hdr_make(id, (unsigned)len, true), (uint32_t)c->blk_time };
	uint32_t size = rlog__record_size(id, (unsigned)len, true);
	static const uint8_t zeros[4];
	rlog__buf_put(&c->blk, hw, sizeof hw);
	rlog__buf_put(&c->blk, a, alen);
	if (blen) /* memcpy's source may not be NULL, even for 0 bytes */
		rlog__buf_put(&c->blk, b, blen);
	rlog__buf_put(&c->blk, zeros, size - 8 - len);
	c->blk_records++;
}

/*
 * Takes reading v of stream st (named name, of source and unit) into the
 * block: a baseline, nothing (unchanged), or a COUNTER record (after the
 * counter's COUNTER_NAME record, at its first).
 */
static void sample(struct rlog__counters *c, struct stream *st, uint64_t v, const char *name,
		   uint8_t source, uint8_t unit)
{
	c->reads++;
	if (!st->have_prev) {
		st->prev = v;
		st->have_prev = true;
		st->key = true;
		return;
	}
	uint64_t delta;
	bool reset;
	if (!rlog__counter_delta(st->prev, v, &delta, &reset))
		return;
	if (st->id == 0) {
		st->id = c->next_id++;
		if (c->next_id == 0)
			c->next_id = 1; /* 2^32 counters: never 0 */
		/* Before the record that uses it reaches any file: a daemon
		 * that resumes after this one died gives the next. */
		store_relaxed(&c->r->hdr->counter_next_id, c->next_id);
		size_t n = strnlen(name, 255);
		struct rlog_counter_name h = { .counter_id = st->id, .source = source, .unit = unit,
					       .name_len = (uint8_t)n, .flags = st->info };
		put_record(c, RLOG_ID_COUNTER_NAME, &h, sizeof h, name, n);
	}
	struct rlog_counter_delta d = { .counter_id = st->id, .seq = st->seq, .delta = delta,
					.value = v };
	if (reset)
		d.flags |= RLOG_COUNTER_FLAG_RESET;
	if (reset || st->key || st->seq % RLOG_COUNTER_KEY_EVERY == 0)
		d.flags |= RLOG_COUNTER_FLAG_VALUE;
	put_record(c, RLOG_ID_COUNTER, &d, rlog__counter_len(d.flags), NULL, 0);
	c->blk_counters++;
	st->seq++;
	st->prev = v;
	st->key = false;
}

void rlog__counters_to_output(void *arg, uint32_t pid, uint64_t base_time, const void *data,
			      uint32_t size, uint32_t records)
{
	struct rlog__output *out = arg;
	struct rlog__out_block b = { .flags = RLOG_BLOCK_FLAG_DAEMON, .pid = pid, .tid = 0,
				     .base_time = base_time, .data = data, .size = size,
				     .records = records };
	rlog__output_counter_block(out, &b);
	rlog__output_meta_block(out, pid, 0, base_time, data, size, RLOG_ID_COUNTER_NAME);
}

/* ---------------------------------------------------------------- */
/* Performance counters                                             */
/* ---------------------------------------------------------------- */

static bool fd_add(struct perfset *p, int fd)
{
	int *v = realloc(p->fds, (p->nfds + 1) * sizeof *v);
	if (v == NULL) {
		close(fd);
		return false;
	}
	p->fds = v;
	p->fds[p->nfds++] = fd;
	return true;
}

/* Opens performance counter k on every thread of process pid (at most
 * THREADS_MAX of them).  Says in last_error why if none could be. */
static void perf_open_proc(struct rlog__counters *c, struct perfset *p, int k, uint32_t pid)
{
	const struct rlog__counter_def *d = rlog__counter_def(RLOG_CTR_BIT_PERF + (unsigned)k);
	char path[48];
	snprintf(path, sizeof path, "/proc/%u/task", pid);
	p->opened = true;
	DIR *dir = opendir(path);
	if (dir == NULL)
		return; /* gone: nothing to count */
	int err = 0;
	bool user_only = false;
	struct dirent *e;
	while ((e = readdir(dir)) != NULL && p->nfds < THREADS_MAX) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);
		if (e->d_name[0] < '1' || e->d_name[0] > '9' || *end != '\0' || tid > INT32_MAX)
			continue;
		bool user;
		int fd = rlog__perf_open(k, (pid_t)tid, -1, &user);
		if (fd < 0) {
			if (fd != -ESRCH) /* a thread that just exited */
				err = fd;
			continue;
		}
		user_only |= user;
		fd_add(p, fd);
	}
	closedir(dir);
	p->st.info = user_only ? RLOG_COUNTER_INFO_USER : 0;
	if (p->nfds == 0 && err != 0) {
		char why[200];
		rlog__perf_why(k, false, err, why, sizeof why);
		note(c, "counter %s of pid %u: %s", d->name, pid, why);
	}
}

static void perf_open_system(struct rlog__counters *c, struct perfset *p, int k)
{
	const struct rlog__counter_def *d = rlog__counter_def(RLOG_CTR_BIT_SYSTEM + (unsigned)k);
	int err = 0;
	bool user_only = false;
	p->opened = true;
	for (int cpu = 0; cpu < c->ncpus; cpu++) {
		bool user;
		int fd = rlog__perf_open(k, -1, cpu, &user);
		if (fd < 0) {
			if (fd != -ENODEV && fd != -EINVAL) /* an offline or absent CPU */
				err = fd;
			continue;
		}
		user_only |= user;
		fd_add(p, fd);
	}
	p->st.info = user_only ? RLOG_COUNTER_INFO_USER : 0;
	if (p->nfds == 0) {
		char why[200];
		rlog__perf_why(k, true, err ? err : -ENODEV, why, sizeof why);
		note(c, "counter %s: %s", d->name, why);
	}
}

/* The sum of a performance counter's fds; false if it has none. */
static bool perf_value(struct perfset *p, uint64_t *v)
{
	uint64_t sum = 0;
	for (uint32_t i = 0; i < p->nfds; i++) {
		uint64_t x;
		if (rlog__perf_read(p->fds[i], &x) == 0)
			sum += x;
	}
	*v = sum;
	return p->nfds > 0;
}

/* ---------------------------------------------------------------- */
/* Processes                                                        */
/* ---------------------------------------------------------------- */

static int by_pid(const void *a, const void *b)
{
	uint32_t x = ((const struct cproc *)a)->pid, y = ((const struct cproc *)b)->pid;
	return x < y ? -1 : x > y;
}

/*
 * Marks the processes of the process table present, adding new ones: the
 * list stays sorted by pid (those known are found by bsearch, the new ones
 * appended, then the whole sorted again), one entry per pid.
 */
static void procs_update(struct rlog__counters *c)
{
	struct rlog__region *r = c->r;
	size_t known = c->nprocs;
	for (size_t i = 0; i < known; i++)
		c->procs[i].present = false;
	for (uint32_t i = 0; i < r->slot_count; i++) {
		struct rlog_shm_proc *e = &r->procs[i];
		if (load_acquire(&e->state) != RLOG_PROC_ACTIVE)
			continue;
		/* Acquire pairs with the claimer's store_release(pid). */
		uint32_t pid = load_acquire(&e->pid);
		uint64_t start = load_relaxed(&e->start_time);
		if (pid == 0 || pid > INT32_MAX)
			continue; /* being claimed, or nonsense */
		struct cproc key = { .pid = pid };
		struct cproc *p = known ? bsearch(&key, c->procs, known, sizeof *p, by_pid) : NULL;
		for (size_t k = known; !p && k < c->nprocs; k++)
			if (c->procs[k].pid == pid)
				p = &c->procs[k]; /* new in this pass already (a hostile table) */
		if (p) {
			if (p->start != start) {
				/* Another process with the pid: start over. */
				proc_close(p);
				memset(p, 0, sizeof *p);
				p->pid = pid;
				p->start = start;
			}
			p->present = true;
			continue;
		}
		if (rlog__vec_room(&c->procs, c->nprocs, &c->procs_cap, sizeof *c->procs, 16) < 0)
			continue; /* sampled at a later pass */
		p = &c->procs[c->nprocs++];
		memset(p, 0, sizeof *p);
		p->pid = pid;
		p->start = start;
		p->present = true;
	}
	if (c->nprocs > known)
		qsort(c->procs, c->nprocs, sizeof *c->procs, by_pid);
}

/* Drops the processes that left the process table (after their last
 * sample, taken in this pass). */
static void procs_prune(struct rlog__counters *c)
{
	size_t n = 0;
	for (size_t i = 0; i < c->nprocs; i++) {
		if (!c->procs[i].present) {
			proc_close(&c->procs[i]);
			continue;
		}
		c->procs[n++] = c->procs[i];
	}
	c->nprocs = n;
}

/* The proc.* and perf.* counters of process p into the block. */
static void proc_sample(struct rlog__counters *c, struct cproc *p, uint64_t mask)
{
	if (mask >> RLOG_CTR_BIT_PROC & ((1u << RLOG__FIGURES) - 1)) {
		bool ctxt = mask >> (RLOG_CTR_BIT_PROC + RLOG__FIG_NVCSW) & 3;
		struct rlog__proc_figures f;
		if (rlog__procstat_figures((pid_t)p->pid, ctxt, &f) == 0 &&
		    (p->start == 0 || f.start_time == p->start)) {
			for (int k = 0; k < RLOG__FIGURES; k++) {
				unsigned bit = RLOG_CTR_BIT_PROC + (unsigned)k;
				if (mask >> bit & 1) {
					const struct rlog__counter_def *d = rlog__counter_def(bit);
					sample(c, &p->fig[k], f.v[k], d->name, d->source, d->unit);
				}
			}
		}
	}
	for (int k = 0; k < RLOG__PERF_EVENTS; k++) {
		unsigned bit = RLOG_CTR_BIT_PERF + (unsigned)k;
		struct perfset *ps = &p->perf[k];
		if (!(mask >> bit & 1))
			continue;
		if (!ps->opened && p->present)
			perf_open_proc(c, ps, k, p->pid);
		uint64_t v;
		if (perf_value(ps, &v)) {
			const struct rlog__counter_def *d = rlog__counter_def(bit);
			sample(c, &ps->st, v, d->name, d->source, d->unit);
		}
	}
}

/* ---------------------------------------------------------------- */
/* Application counters                                             */
/* ---------------------------------------------------------------- */

/* A copy of an entry's name that a COUNTER_NAME record can carry: at most
 * RLOG_COUNTER_NAME_MAX bytes up to the first NUL, each byte a reader could
 * not print replaced by '_' (the region is hostile: the owner checked its
 * name, a scribbler did not). */
static void name_take(char *out, const char *in)
{
	size_t n = 0;
	for (; n < RLOG_COUNTER_NAME_MAX && in[n] != '\0'; n++) {
		char ch = in[n];
		out[n] = rlog__counter_name_ok(&ch, 1) ? ch : '_';
	}
	if (n == 0)
		out[n++] = '_';
	out[n] = '\0';
}

static void app_free(struct rlog_shm_counter *e)
{
	store_relaxed(&e->pid, 0);
	store_relaxed(&e->start_time, 0);
	store_relaxed(&e->value, 0);
	memset(e->name, 0, sizeof e->name);
	/* Release: the next claimer (CAS FREE -> WRITING) sees it zeroed. */
	store_release(&e->state, RLOG_COUNTER_FREE);
}

static struct rlog__counters *order_ctx; /* qsort has no context argument in C11 */

static int by_owner(const void *a, const void *b)
{
	uint16_t i = *(const uint16_t *)a, j = *(const uint16_t *)b;
	uint32_t x = order_ctx->apps[i].pid, y = order_ctx->apps[j].pid;
	if (x != y)
		return x < y ? -1 : 1;
	return i < j ? -1 : i > j;
}

/*
 * Reads the counter table: follows new entries, forgets freed ones and,
 * with check, marks those of dead owners to be freed after their sample.
 * Fills c->order with the live entries by (owner, index); returns their
 * number.
 */
static size_t apps_scan(struct rlog__counters *c, bool check)
{
	size_t n = 0;
	for (uint32_t i = 0; i < RLOG_SHM_COUNTERS; i++) {
		struct rlog_shm_counter *e = &c->r->counters[i];
		struct app *a = &c->apps[i];
		/* Acquire pairs with the claimer's store_release(SET). */
		uint32_t st = load_acquire(&e->state);
		uint32_t pid = load_relaxed(&e->pid);
		uint64_t start = load_relaxed(&e->start_time);
		bool owned = pid != 0 && pid <= INT32_MAX;
		a->free_after = false;
		if (st == RLOG_COUNTER_WRITING && owned && check &&
		    rlog__process_dead((pid_t)pid, start)) {
			app_free(e); /* died while claiming it */
			a->live = false;
			continue;
		}
		if (st != RLOG_COUNTER_SET || !owned) {
			a->live = false; /* free, being claimed, or hostile */
			continue;
		}
		if (!a->live || a->pid != pid || a->start != start) {
			memset(a, 0, sizeof *a);
			a->live = true;
			a->pid = pid;
			a->start = start;
			/* A new counter starts at 0: that is its baseline.  One
			 * found by the first pass of a daemon that resumed the
			 * session may have had records from the dead daemon:
			 * its first reading is its baseline instead. */
			a->st.have_prev = !(c->resumed && !c->started);
			a->st.key = true;
			name_take(a->name, e->name);
		}
		if (check && rlog__process_dead((pid_t)pid, start))
			a->free_after = true;
		c->order[n++] = (uint16_t)i;
	}
	order_ctx = c;
	qsort(c->order, n, sizeof c->order[0], by_owner);
	return n;
}

static void app_sample(struct rlog__counters *c, uint16_t i, bool on)
{
	struct app *a = &c->apps[i];
	struct rlog_shm_counter *e = &c->r->counters[i];
	if (on)
		sample(c, &a->st, load_relaxed(&e->value), a->name, RLOG_COUNTER_SRC_APP,
		       RLOG_COUNTER_UNIT_COUNT);
	else
		a->st.have_prev = false; /* baseline again when app is turned on */
	if (a->free_after) {
		app_free(e);
		a->live = false;
	}
}

/* ---------------------------------------------------------------- */
/* The pass                                                         */
/* ---------------------------------------------------------------- */

/* Forgets the baselines of sources turned off since the last pass and
 * closes their performance counters. */
static void mask_apply(struct rlog__counters *c, uint64_t mask)
{
	uint64_t off = c->mask & ~mask;
	c->mask = mask;
	if (off == 0)
		return;
	for (size_t i = 0; i < c->nprocs; i++) {
		struct cproc *p = &c->procs[i];
		for (int k = 0; k < RLOG__FIGURES; k++)
			if (off >> (RLOG_CTR_BIT_PROC + k) & 1)
				p->fig[k].have_prev = false;
		for (int k = 0; k < RLOG__PERF_EVENTS; k++)
			if (off >> (RLOG_CTR_BIT_PERF + k) & 1)
				perf_close(&p->perf[k]);
	}
	for (int k = 0; k < RLOG__PERF_EVENTS; k++)
		if (off >> (RLOG_CTR_BIT_SYSTEM + k) & 1)
			perf_close(&c->sys[k]);
}

void rlog__counters_pass(struct rlog__counters *c)
{
	if (c == NULL)
		return;
	struct rlog_shm_header *h = c->r->hdr;
	uint64_t mask = load_relaxed(&h->counter_mask) & rlog__counter_all();
	mask_apply(c, mask);
	uint64_t now = rlog__monotonic_ns();
	bool check = !c->started || now - c->last_check >= CHECK_NS;
	if (check)
		c->last_check = now;

	/* The whole system: pid 0. */
	group_begin(c);
	for (int k = 0; k < RLOG__PERF_EVENTS; k++) {
		unsigned bit = RLOG_CTR_BIT_SYSTEM + (unsigned)k;
		if (!(mask >> bit & 1))
			continue;
		struct perfset *ps = &c->sys[k];
		if (!ps->opened)
			perf_open_system(c, ps, k);
		uint64_t v;
		if (perf_value(ps, &v)) {
			const struct rlog__counter_def *d = rlog__counter_def(bit);
			sample(c, &ps->st, v, d->name, d->source, d->unit);
		}
	}
	group_end(c, 0);

	/* Each process: its application counters, then its figures. */
	if (mask & PROCESS_BITS)
		procs_update(c);
	else
		for (size_t i = 0; i < c->nprocs; i++)
			c->procs[i].present = false; /* nothing of theirs sampled: let them go */
	bool app_on = mask >> RLOG_CTR_BIT_APP & 1;
	size_t napps = apps_scan(c, check), a = 0, p = 0;
	while (a < napps || p < c->nprocs) {
		uint32_t pa = a < napps ? c->apps[c->order[a]].pid : UINT32_MAX;
		uint32_t pp = p < c->nprocs ? c->procs[p].pid : UINT32_MAX;
		uint32_t pid = pa < pp ? pa : pp;
		group_begin(c);
		while (a < napps && c->apps[c->order[a]].pid == pid)
			app_sample(c, c->order[a++], app_on);
		if (pp == pid)
			proc_sample(c, &c->procs[p++], mask);
		group_end(c, pid);
	}
	procs_prune(c);

	c->samples++;
	c->started = true;
	store_relaxed(&h->stats.counter_records, c->records);
	/* seq_cst: a process that adds to a counter with a full barrier, then
	 * reads counter_samples = S, knows that pass S + 2 reads its value
	 * (this store comes before that pass's loads; docs/FORMAT.md). */
	store_seq_cst(&h->stats.counter_samples, c->samples);
}

bool rlog__counters_tick(struct rlog__counters *c, uint64_t now)
{
	if (c == NULL)
		return false;
	uint32_t period = load_relaxed(&c->r->hdr->counter_period_ms);
	if (period < 1)
		period = 1; /* hostile or unset: never a zero period */
	if (period != c->period_ms) {
		/* A new period (`ringlog update`) counts from the last pass. */
		c->period_ms = period;
		c->next_due = c->started ? c->last_pass + (uint64_t)period * 1000000u : now;
	}
	if (c->started && now < c->next_due)
		return false;
	rlog__counters_pass(c);
	c->last_pass = now;
	c->next_due += (uint64_t)period * 1000000u;
	if (c->next_due <= now) /* behind (a loaded machine): no burst of passes */
		c->next_due = now + (uint64_t)period * 1000000u;
	return true;
}
