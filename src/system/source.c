/*
 * source.c - the system-event engine (system.h).
 *
 * Per CPU, one perf event per selected event (sample_period 1: every
 * occurrence is a sample), the first of them mmapped (1 + 2^n pages), the
 * others redirected into its ring (PERF_EVENT_IOC_SET_OUTPUT), so that a
 * CPU's events come out of one ring in the order the CPU wrote them.
 * Each sample starts with PERF_SAMPLE_IDENTIFIER, which names its event
 * (PERF_EVENT_IOC_ID), and every other record ends with it (sample_id_all).
 *
 * The ring protocol (perf_event_open(2), "MMAP layout"): the kernel
 * stores data_head after writing the records (release); the reader loads
 * it with acquire, reads the records, and stores data_tail with release
 * once it no longer reads them, which gives the space back.  A record
 * that straddles the end of the ring is copied out in two pieces.
 *
 * Times.  A session on CLOCK_MONOTONIC gets use_clockid CLOCK_MONOTONIC:
 * the kernel's times are its ticks.  A session on the TSC keeps perf's
 * own clock, which on x86 is sched_clock: a linear function of the TSC
 * that the mmap page describes (time_zero, time_mult, time_shift, when
 * cap_user_time_zero says the kernel offers it); the engine inverts it
 * exactly (rlog__sys_ticks).  Without it, it asks for CLOCK_MONOTONIC_RAW
 * and converts through (ticks, raw) pairs taken at each poll (raw_ticks).
 *
 * Wake-ups.  Each ring's event has wakeup_watermark a quarter of the ring:
 * a reader in poll(2) on rlog__sys_fds is woken as the ring fills.
 */
#define _GNU_SOURCE
#include "system/system.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "format/logfile.h"
#include "format/loss.h"
#include "record.h"
#include "schema.h"
#include "system/events.h"
#include "system/openpath.h"
#include "system/pcounters.h"
#include "system/syscalls.h"
#include "system/tracefs.h"
#include "test_hooks.h"

/* A block is emitted when it reaches this many bytes (and at each poll). */
#define BLOCK_BYTES (256u * 1024u)
#define PAYLOAD_MAX 8192u
/* A block is flushed once it reaches BLOCK_BYTES, so it is at most
 * BLOCK_BYTES - 1 plus what one step adds: a TIME_SYNC (16) and one
 * record (a header and at most 65535 bytes of payload, padded), which
 * with the block's header fits any log file's stage (a larger block
 * would be refused and counted lost: format/logfile.h). */
_Static_assert(BLOCK_BYTES + 16u + 8u + (RLOG_HDR_LENGTH_MASK + 1u) + RLOG__BLOCK_HDR_SIZE <=
		       RLOG__LOGFILE_STAGE_MIN,
	       "a system block must fit the smallest log-file stage");
/* Data pages of a CPU's ring by default: 4 MiB, some 60,000 records,
 * 20 ms of a CPU making system calls flat out, twice the daemon's
 * longest sleep (RLOG_DAEMON_POLL_MS). */
#define DEFAULT_PAGES 1024u
/* A ring wakes its reader when 1/WAKE_FRACTION of it is written (the
 * perf_event_attr's wakeup_watermark): the rest is the room the reader
 * has while it gets a CPU. */
#define WAKE_FRACTION 4u
#define STRING_CUT 255u
/* A call chain's text may be longer: about 55 frames. */
#define CHAIN_CUT 1024u

enum fsrc { F_TP, F_ADDR, F_IP, F_SYSNAME, F_CHAIN, F_NONE, F_INET };

struct rfield {
	uint8_t src;         /* enum fsrc */
	uint8_t type;        /* RLOG_FIELD_* out */
	uint16_t offset, size;
	bool is_signed, data_loc, is_string, present;
	/* F_INET: the IPv6 field's offset (16 bytes), the family's (u16) */
	uint16_t offset6, family_off;
};

/* An event opened: its table entry and its fields resolved in its format. */
struct oev {
	const struct rlog__sys_event *ev;
	uint64_t sample_type;
	struct rfield f[RLOG__SYS_FIELDS_MAX];
	uint16_t id_off; bool have_id; /* raw_syscalls: the "id" field, for @sysname */
	bool counted;        /* sample_period 1: its count is its samples (not the profile's) */
	bool hidden;         /* not selected: opened to follow forks (its records dropped) */
	bool path;           /* the path program's output (openpath.h): held, not written */
};

struct cpu {
	int cpu;
	int *fds;                /* nev of them; lead's is mmapped */
	int lead;                /* the fd whose ring this is (-1: none) */
	uint8_t *map;
	size_t map_size;
	uint64_t data_size;
	struct rlog__buf blk;
	uint32_t records, events;
	uint64_t base, cursor;
	uint64_t lost_reported;  /* from LOST records */
	uint64_t taken;          /* samples read from the ring (written or filtered) */
	uint64_t sideband;       /* MMAP2 records and the profile's samples read (in no count) */
	/* The path program's last output on this CPU, for the next
	 * sys_enter_openat sample of path_tid (openpath.h). */
	bool path_held;
	uint32_t path_tid;
	char path[RLOG_OPENPATH_MAX];
};

struct idmap { uint64_t id; uint32_t ev; };

/* The (ticks, CLOCK_MONOTONIC_RAW) pairs a raw-clock conversion keeps:
 * one per poll, the oldest dropped (seconds of them at one per 10 ms). */
#define PAIRS 256u

struct rlog__sys {
	struct rlog__sys_clock clk;
	int mode;                /* 0 monotonic, 1 perf clock inverted, 2 raw */
	struct rlog__clock_sync pair[PAIRS]; /* mode 2: in raw order, pair[0] the oldest */
	unsigned npairs;
	uint64_t time_zero;
	uint32_t time_mult;
	uint16_t time_shift;
	rlog__sys_emit_fn *emit;
	void *arg;
	struct oev *ev;
	unsigned nev;
	struct cpu *cpus;
	unsigned ncpu;
	struct idmap *ids;
	size_t nids;
	uint32_t *keep;          /* pids (and tids) kept; NULL: all */
	uint32_t *keep_root;     /* beside each: the scope's process it is kept for */
	size_t nkeep, keep_cap;
	bool follow, stopped;
	bool deferred;           /* opened for a reopen: nothing until rlog__sys_begin */
	uint64_t from, until;    /* the records kept: ticks in [from, until) */
	struct rlog__sys_stats st;
	bool counters;            /* process-counters selected */
	struct rlog__tstats *ts;  /* its exits (pcounters.h), when taskstats opened */
	struct cpu tsk;           /* their block: tid RLOG_SYS_COUNTERS_TID */
	uint64_t tsk_lost_base;   /* of tsk.lost_reported, the old engine's (handed over) */
	int path_map, path_prog;  /* file_open's path (openpath.h), -1 without */
	int open_ev;              /* sys_enter_openat's oev, -1 without */
	int *path_out;            /* per CPU of cpus[]: its BPF output event */
	uint8_t scratch[PAYLOAD_MAX];
	uint8_t rec[65536];      /* a record copied out of the ring's wrap */
};

static int perf_open(struct perf_event_attr *a, int cpu)
{
	long fd = syscall(SYS_perf_event_open, a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

/* ---------------------------------------------------------------- */
/* Time                                                             */
/* ---------------------------------------------------------------- */

static uint64_t perf_forward(const struct rlog__sys *s, uint64_t cyc)
{
	uint64_t q = cyc >> s->time_shift, r = cyc & ((UINT64_C(1) << s->time_shift) - 1);
	return s->time_zero + q * s->time_mult + ((r * s->time_mult) >> s->time_shift);
}

/*
 * CLOCK_MONOTONIC_RAW ns -> ticks, from the pairs taken at the polls
 * (clock_pair): between two pairs, on the line through them; past the
 * newest (or before the oldest), from that pair on the slope from the
 * session's own pair (or the oldest kept) to the newest, the longest and
 * so the most precise.  The raw clock is never slewed and the TSC is
 * steady, so the error is that of the pairs, each read within a bracket
 * of two tick reads (rlog__clock_sync_now), not the calibration's
 * frequency error times the time since the session started
 * (docs/DESIGN.md, "System events").
 */
static uint64_t raw_ticks(const struct rlog__sys *s, uint64_t t)
{
	const struct rlog__clock_sync *a, *b, *far = &s->clk.sync;
	unsigned n = s->npairs;
	double slope = (double)s->clk.tick_freq_hz / 1e9;
	if (n == 0) {
		a = far;
	} else if (n >= 2 && t > s->pair[0].monotonic_raw_ns && t < s->pair[n - 1].monotonic_raw_ns) {
		/* The last pair at or before t: pair[lo] <= t < pair[hi]. */
		unsigned lo = 0, hi = n - 1;
		while (hi - lo > 1) {
			unsigned mid = lo + (hi - lo) / 2;
			if (s->pair[mid].monotonic_raw_ns <= t)
				lo = mid;
			else
				hi = mid;
		}
		a = &s->pair[lo];
		b = &s->pair[hi];
		if (b->monotonic_raw_ns > a->monotonic_raw_ns && b->ticks > a->ticks)
			slope = (double)(b->ticks - a->ticks) /
				(double)(b->monotonic_raw_ns - a->monotonic_raw_ns);
	} else {
		a = t <= s->pair[0].monotonic_raw_ns ? &s->pair[0] : &s->pair[n - 1];
		b = &s->pair[n - 1];
		if (far->monotonic_raw_ns >= s->pair[0].monotonic_raw_ns)
			far = &s->pair[0];
		if (b->monotonic_raw_ns > far->monotonic_raw_ns && b->ticks > far->ticks)
			slope = (double)(b->ticks - far->ticks) /
				(double)(b->monotonic_raw_ns - far->monotonic_raw_ns);
	}
	/* In doubles: an offset of seconds times ticks per ns; 53 bits are
	 * far finer than a tick over any span the pairs cover. */
	if (t >= a->monotonic_raw_ns)
		return a->ticks + (uint64_t)((double)(t - a->monotonic_raw_ns) * slope + 0.5);
	uint64_t back = (uint64_t)((double)(a->monotonic_raw_ns - t) * slope + 0.5);
	return back < a->ticks ? a->ticks - back : 0;
}

/* A fresh (ticks, raw) pair for raw_ticks, kept in raw order. */
static void clock_pair(struct rlog__sys *s)
{
	if (s->mode != 2)
		return;
	struct rlog__clock_sync y;
	rlog__clock_sync_now(s->clk.tick_source, &y);
	if (s->npairs && y.monotonic_raw_ns <= s->pair[s->npairs - 1].monotonic_raw_ns)
		return;
	if (s->npairs == PAIRS) {
		memmove(&s->pair[0], &s->pair[1], (PAIRS - 1) * sizeof s->pair[0]);
		s->npairs--;
	}
	s->pair[s->npairs++] = y;
}

uint64_t rlog__sys_ticks(const struct rlog__sys *s, uint64_t t)
{
	if (s->mode == 0)
		return t;
	if (s->mode == 2)
		return raw_ticks(s, t);
	/* The largest TSC value the kernel's mapping takes to t or less:
	 * never earlier than the TSC the kernel read, at most one
	 * nanosecond's ticks later. */
	if (t <= s->time_zero)
		return 0;
	uint64_t d = t - s->time_zero;
	uint64_t cyc = (d / s->time_mult << s->time_shift) +
		       ((d % s->time_mult << s->time_shift) / s->time_mult);
	while (cyc > 0 && perf_forward(s, cyc) > t)
		cyc--;
	while (perf_forward(s, cyc + 1) <= t)
		cyc++;
	return cyc;
}

/* Decides how times are taken: probes a dummy event's mmap page. */
static void clock_mode(struct rlog__sys *s)
{
	if (s->clk.tick_source != RLOG_TICK_TSC) {
		s->mode = 0;
		return;
	}
	s->mode = 2;
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof a,
				     .config = PERF_COUNT_SW_DUMMY, .disabled = 1 };
	int fd = perf_open(&a, 0);
	if (fd < 0)
		return;
	long pg = sysconf(_SC_PAGESIZE);
	void *m = mmap(NULL, (size_t)pg, PROT_READ, MAP_SHARED, fd, 0);
	if (m != MAP_FAILED) {
		const struct perf_event_mmap_page *p = m;
		if (p->cap_user_time_zero && p->time_shift < 32 && p->time_mult != 0) {
			s->mode = 1;
			s->time_zero = p->time_zero;
			s->time_mult = p->time_mult;
			s->time_shift = p->time_shift;
		}
		munmap(m, (size_t)pg);
	}
	close(fd);
}

/* ---------------------------------------------------------------- */
/* Opening                                                          */
/* ---------------------------------------------------------------- */

static int resolve(struct oev *o, const struct rlog__tp_format *fmt)
{
	const struct rlog__sys_event *e = o->ev;
	for (unsigned i = 0; i < e->nfields; i++) {
		struct rfield *r = &o->f[i];
		const char *src = e->f[i].src;
		r->type = e->f[i].type;
		if (src == NULL) {
			r->src = F_NONE; /* laid out by its record's own code */
			continue;
		}
		if (strcmp(src, "@chain") == 0) {
			r->src = F_CHAIN;
			continue;
		}
		if (strcmp(src, "@addr") == 0) {
			r->src = F_ADDR;
			continue;
		}
		if (strcmp(src, "@ip") == 0) {
			r->src = F_IP;
			continue;
		}
		if (strcmp(src, "@sysname") == 0) {
			r->src = F_SYSNAME;
			continue;
		}
		if (strncmp(src, "@inet:", 6) == 0) {
			/* An address as text: NAME (4 bytes) or NAME_v6 (16) by
			 * the event's family field (AF_INET, AF_INET6). */
			char n6[RLOG__TP_NAME_MAX];
			snprintf(n6, sizeof n6, "%s_v6", src + 6);
			const struct rlog__tp_field *a4 = rlog__tp_field(fmt, src + 6),
						    *a6 = rlog__tp_field(fmt, n6),
						    *fam = rlog__tp_field(fmt, "family");
			r->src = F_INET;
			r->present = a4 && a6 && fam && a4->size == 4 && a6->size == 16 && fam->size == 2;
			if (r->present) {
				r->offset = a4->offset;
				r->offset6 = a6->offset;
				r->family_off = fam->offset;
				r->size = 16;
			}
			continue;
		}
		r->src = F_TP;
		char name[RLOG__TP_NAME_MAX];
		snprintf(name, sizeof name, "%s", src);
		char *dot = strchr(name, '.');
		unsigned idx = 0;
		if (dot) { /* "args.2": element 2 of an array of u64 */
			*dot = '\0';
			idx = (unsigned)atoi(dot + 1);
		}
		const struct rlog__tp_field *tf = rlog__tp_field(fmt, name);
		if (tf == NULL)
			continue; /* this kernel lacks it: the field reads 0 / "" */
		/* A string from a field that is none (a user pointer, such as
		 * the filename of a system call's tracepoint) reads "". */
		r->present = r->type != RLOG_FIELD_STRING || tf->is_string || tf->data_loc;
		r->offset = tf->offset;
		r->size = tf->size;
		r->is_signed = tf->is_signed;
		r->data_loc = tf->data_loc;
		r->is_string = tf->is_string;
		if (dot) {
			if ((idx + 1) * 8u > tf->size)
				r->present = false;
			r->offset = (uint16_t)(tf->offset + idx * 8u);
			r->size = 8;
		}
	}
	const struct rlog__tp_field *id = rlog__tp_field(fmt, "id");
	if (id && id->size == 8) {
		o->have_id = true;
		o->id_off = id->offset;
	}
	return 0;
}

static int idmap_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct idmap *)a)->id, y = ((const struct idmap *)b)->id;
	return x < y ? -1 : x > y;
}

static void keep_add(struct rlog__sys *s, uint32_t v, uint32_t root);

static void emit_schemas(struct rlog__sys *s, uint64_t now)
{
	struct rlog__buf b = { 0 };
	uint32_t n = 0;
	for (unsigned i = 0; i < s->nev + (s->ts != NULL); i++) {
		const struct rlog__sys_event *e = i < s->nev ? s->ev[i].ev
							     : rlog__sys_event(RLOG_SYS_ID_PROCESS_COUNTERS);
		struct rlog_field f[RLOG__SYS_FIELDS_MAX + 2] = { { RLOG_FIELD_U32, 0, "pid" },
								  { RLOG_FIELD_U32, 0, "tid" } };
		for (unsigned k = 0; k < e->nfields; k++)
			f[k + 2] = (struct rlog_field){ e->f[k].type, 0, e->f[k].name };
		struct rlog_schema sc = { .id = e->id, .kind = RLOG_KIND_EVENT, .category = 0,
					  .field_count = (uint8_t)(e->nfields + 2), .name = e->name,
					  .fields = f };
		uint8_t pl[1024];
		int len = rlog__schema_encode(&sc, pl, sizeof pl);
		if (len < 0)
			continue;
		uint32_t hw[2] = { rlog__hdr_make(RLOG_ID_EVENT_SCHEMA, (unsigned)len, true), (uint32_t)now };
		static const uint8_t zeros[4];
		rlog__buf_put(&b, hw, sizeof hw);
		rlog__buf_put(&b, pl, (size_t)len);
		rlog__buf_put(&b, zeros, rlog__record_size(RLOG_ID_EVENT_SCHEMA, (unsigned)len, true) - 8 - (unsigned)len);
		n++;
	}
	if (!b.oom && n)
		s->emit(s->arg, 0, now, b.p, (uint32_t)b.len, n, 0);
	rlog__buf_free(&b);
}

/*
 * file_open's path (openpath.h): per CPU a BPF output event into the
 * CPU's ring (the oev one past s->nev, its samples held for the next
 * sys_enter_openat sample, in no count), and the program on the
 * tracepoint.  The kernel keeps one program list per tracepoint, not per
 * perf event: attached through one CPU's event it runs for the
 * tracepoint on every CPU (a second attach of the same program is
 * EEXIST).  On any failure the tracepoint's samples are alone: an empty
 * path.
 */
static void open_path(struct rlog__sys *s, int ev, const struct rlog__tp_format *tp)
{
	/* The tests' kernel without eBPF (docs/CONTRIBUTING.md, "Test hooks"). */
	if (RLOG_TEST_HOOKS && RLOG__TEST_ENV(RINGLOG_TEST_NO_BPF))
		return;
	char why[200];
	struct oev *o = &s->ev[s->nev];
	o->ev = s->ev[ev].ev;
	o->sample_type = s->ev[ev].sample_type;
	o->path = true;
	s->path_out = malloc((s->ncpu ? s->ncpu : 1) * sizeof *s->path_out);
	if (s->path_out == NULL)
		return;
	for (unsigned c = 0; c < s->ncpu; c++)
		s->path_out[c] = -1;
	s->path_map = rlog__openpath_map(s->ncpu ? s->cpus[s->ncpu - 1].cpu + 1u : 1u);
	if (s->path_map < 0)
		return;
	size_t nids = s->nids;
	for (unsigned c = 0; c < s->ncpu; c++) {
		struct cpu *k = &s->cpus[c];
		int lead = -1;
		for (unsigned i = 0; i < s->nev && lead < 0; i++)
			lead = k->fds[i];
		struct perf_event_attr a = { .size = sizeof a, .type = PERF_TYPE_SOFTWARE,
					     .config = PERF_COUNT_SW_BPF_OUTPUT, .sample_period = 1,
					     .sample_type = o->sample_type, .sample_id_all = 1 };
		if (s->mode != 1) {
			a.use_clockid = 1;
			a.clockid = s->mode == 0 ? CLOCK_MONOTONIC : CLOCK_MONOTONIC_RAW;
		}
		int fd = lead < 0 ? -1 : perf_open(&a, k->cpu);
		uint64_t id;
		s->path_out[c] = fd;
		if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, lead) < 0 ||
		    ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0 ||
		    rlog__openpath_map_set(s->path_map, (unsigned)k->cpu, fd) < 0)
			goto undo;
		s->ids[s->nids++] = (struct idmap){ id, s->nev };
	}
	s->path_prog = rlog__openpath_load(tp, s->path_map, why, sizeof why);
	if (s->path_prog < 0)
		goto undo;
	for (unsigned c = 0; c < s->ncpu; c++)
		if (s->cpus[c].fds[ev] >= 0) {
			if (ioctl(s->cpus[c].fds[ev], PERF_EVENT_IOC_SET_BPF, s->path_prog) < 0)
				goto undo;
			s->open_ev = ev;
			return;
		}

undo:
	s->nids = nids;
	for (unsigned c = 0; c < s->ncpu; c++)
		if (s->path_out[c] >= 0) {
			close(s->path_out[c]);
			s->path_out[c] = -1;
		}
	if (s->path_prog >= 0)
		close(s->path_prog);
	s->path_prog = -1;
}

int rlog__sys_open(const struct rlog__sys_config *cfg, const struct rlog__sys_clock *clk,
		   rlog__sys_emit_fn *emit, void *arg, struct rlog__sys **out, char *why,
		   size_t why_size)
{
	why[0] = '\0';
	struct rlog__sys *s = calloc(1, sizeof *s);
	if (s == NULL)
		return -ENOMEM;
	s->clk = *clk;
	s->emit = emit;
	s->arg = arg;
	s->follow = cfg->follow;
	s->deferred = cfg->deferred;
	s->from = cfg->deferred ? UINT64_MAX : 0;
	s->until = UINT64_MAX;
	for (size_t i = 0; i < cfg->npids; i++)
		keep_add(s, cfg->pids[i], cfg->pids[i]);
	if (cfg->npids && s->keep == NULL) {
		free(s);
		return -ENOMEM;
	}
	int rc = 0;
	char dir[256];
	bool need_tp = cfg->follow; /* sched_process_fork, to follow children */
	for (unsigned i = 0; i < rlog__sys_nevents; i++)
		need_tp |= (rlog__sys_events[i].flags & cfg->flags) &&
			   rlog__sys_events[i].source == RLOG__SRC_TRACEPOINT;
	if (need_tp && (rc = rlog__tracefs_find(dir, sizeof dir)) < 0) {
		snprintf(why, why_size, "tracefs: %s", strerror(-rc));
		free(s);
		return rc;
	}
	s->path_map = s->path_prog = s->open_ev = -1;
	/* One more: file_open from the path program's output (openpath.h). */
	s->ev = calloc(rlog__sys_nevents + 1, sizeof *s->ev);
	struct rlog__tp_format open_fmt;
	int open_ev = -1;
	uint32_t tp_ids[64];
	if (s->ev == NULL) {
		free(s);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < rlog__sys_nevents; i++) {
		const struct rlog__sys_event *e = &rlog__sys_events[i];
		/* --follow needs the forks, selected or not. */
		bool hidden = !(e->flags & cfg->flags) && cfg->follow && e->id == 69;
		if (!(e->flags & cfg->flags) && !hidden)
			continue;
		if (e->source == RLOG__SRC_COUNTERS) {
			/* No perf event: the exits come from taskstats; without
			 * it (no CAP_NET_ADMIN, no CONFIG_TASKSTATS) the rundown
			 * still writes the counters. */
			s->counters = true;
			s->tsk.cpu = (int)RLOG_SYS_COUNTERS_TID;
			/* A reopen takes the old engine's listener at the cut
			 * (rlog__sys_hand_counters), or opens its own then
			 * (rlog__sys_begin): two listeners at once would each
			 * get the exits between. */
			if (cfg->deferred)
				continue;
			int r = rlog__tstats_open(&s->ts);
			if (r < 0 && why[0] == '\0')
				snprintf(why, why_size, "taskstats: %s", strerror(-r));
			continue;
		}
		struct oev *o = &s->ev[s->nev];
		o->ev = e;
		o->hidden = hidden;
		if (e->source == RLOG__SRC_TRACEPOINT) {
			struct rlog__tp_format fmt;
			int r = rlog__tracefs_format(dir, e->group, e->tp, &fmt);
			if (r < 0) {
				if (why[0] == '\0')
					snprintf(why, why_size, "tracepoint %s:%s: %s", e->group, e->tp,
						 strerror(-r));
				continue; /* this kernel lacks it */
			}
			resolve(o, &fmt);
			tp_ids[s->nev] = fmt.id;
			if (e->id == 82) {
				open_fmt = fmt;
				open_ev = (int)s->nev;
			}
			o->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
					 PERF_SAMPLE_CPU | PERF_SAMPLE_RAW;
		} else {
			struct rlog__tp_format none = { 0 };
			resolve(o, &none);
			tp_ids[s->nev] = e->sw;
			o->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
					 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
			if (e->source == RLOG__SRC_SOFTWARE)
				o->sample_type |= PERF_SAMPLE_ADDR;
			if (e->source == RLOG__SRC_PROFILE)
				o->sample_type |= PERF_SAMPLE_CALLCHAIN;
		}
		o->counted = e->source != RLOG__SRC_PROFILE && e->source != RLOG__SRC_MMAP;
		s->nev++;
	}
	clock_mode(s);
	clock_pair(s);
	long nconf = sysconf(_SC_NPROCESSORS_CONF);
	unsigned ncpu = nconf > 0 ? (unsigned)nconf : 1;
	s->cpus = calloc(ncpu, sizeof *s->cpus);
	s->ids = calloc((size_t)ncpu * (s->nev + 1), sizeof *s->ids);
	if (s->cpus == NULL || s->ids == NULL) {
		rlog__sys_close(s);
		return -ENOMEM;
	}
	long pg = sysconf(_SC_PAGESIZE);
	uint32_t pages = cfg->pages_per_cpu ? cfg->pages_per_cpu : DEFAULT_PAGES;
	if (pages & (pages - 1))
		pages = DEFAULT_PAGES;
	for (unsigned c = 0; c < ncpu && s->nev; c++) {
		struct cpu *k = &s->cpus[s->ncpu];
		k->cpu = (int)c;
		k->fds = malloc(s->nev * sizeof *k->fds);
		if (k->fds == NULL) {
			rc = -ENOMEM;
			break;
		}
		for (unsigned i = 0; i < s->nev; i++)
			k->fds[i] = -1;
		int lead = k->lead = -1;
		unsigned opened = 0;
		for (unsigned i = 0; i < s->nev; i++) {
			struct perf_event_attr a = { .size = sizeof a, .sample_period = 1,
						     .sample_type = s->ev[i].sample_type,
						     .disabled = 1, .sample_id_all = 1 };
			uint8_t src = s->ev[i].ev->source;
			a.type = src == RLOG__SRC_TRACEPOINT ? PERF_TYPE_TRACEPOINT : PERF_TYPE_SOFTWARE;
			a.config = tp_ids[i];
			if (src == RLOG__SRC_PROFILE) {
				/* cpu-clock counts nanoseconds: a period of 1e9 / hz
				 * is hz samples a second of CPU time, exactly. */
				uint32_t hz = cfg->profile_hz ? cfg->profile_hz : 1000;
				a.sample_period = 1000000000u / (hz ? hz : 1);
			}
			if (src == RLOG__SRC_MMAP) {
				/* The dummy event samples nothing; it carries the
				 * executable mappings (mmap_data 0), every process's.
				 * mmap2 picks the record's format, mmap turns the
				 * records on (the kernel counts mmap users by it, as
				 * perf record sets both). */
				a.mmap = 1;
				a.mmap2 = 1;
				a.sample_period = 0;
			}
			if (s->mode != 1) {
				a.use_clockid = 1;
				a.clockid = s->mode == 0 ? CLOCK_MONOTONIC : CLOCK_MONOTONIC_RAW;
			}
			if (lead < 0) {
				/* The ring's owner: a reader poll()ing it is woken
				 * when a quarter of the ring is written (the kernel
				 * caps the mark at the ring's size). */
				a.watermark = 1;
				a.wakeup_watermark = (uint32_t)((size_t)pg * pages / WAKE_FRACTION);
			}
			int fd = perf_open(&a, (int)c);
			k->fds[i] = fd;
			if (fd < 0) {
				if (fd == -ENODEV || (fd == -EINVAL && c > 0))
					continue; /* an offline CPU */
				rc = fd;
				snprintf(why, why_size, "perf_event_open %s on CPU %u: %s", s->ev[i].ev->name,
					 c, strerror(-fd));
				break;
			}
			opened++;
			if (lead < 0) {
				k->map_size = (size_t)pg * (1 + pages);
				void *m = mmap(NULL, k->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
				/* Without CAP_IPC_LOCK the rings' pages count against
				 * perf_event_mlock_kb: smaller rings, down to one page,
				 * rather than none (their losses are counted). */
				while (m == MAP_FAILED && errno == EPERM && pages > 1) {
					pages /= 2;
					k->map_size = (size_t)pg * (1 + pages);
					/* Reopened, so that its wake-up mark is a
					 * quarter of the smaller ring, not all of it. */
					close(fd);
					a.wakeup_watermark = (uint32_t)((size_t)pg * pages / WAKE_FRACTION);
					fd = k->fds[i] = perf_open(&a, (int)c);
					if (fd < 0) {
						errno = -fd;
						k->fds[i] = -1;
						break;
					}
					m = mmap(NULL, k->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
				}
				if (m == MAP_FAILED) {
					rc = -errno;
					snprintf(why, why_size, "mmap of %u pages on CPU %u: %s", pages, c,
						 strerror(errno));
					k->map_size = 0;
					break;
				}
				lead = k->lead = fd;
				k->map = m;
				k->data_size = (uint64_t)pg * pages;
			} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, lead) < 0) {
				rc = -errno;
				snprintf(why, why_size, "PERF_EVENT_IOC_SET_OUTPUT on CPU %u: %s", c,
					 strerror(errno));
				break;
			}
			uint64_t id;
			if (ioctl(fd, PERF_EVENT_IOC_ID, &id) == 0)
				s->ids[s->nids++] = (struct idmap){ id, i };
		}
		s->ncpu++;
		if (rc < 0)
			break;
		if (opened == 0) {
			s->ncpu--;
			free(k->fds);
			k->fds = NULL;
		}
	}
	if (rc < 0) {
		rlog__sys_close(s);
		return rc;
	}
	if (open_ev >= 0)
		open_path(s, open_ev, &open_fmt);
	qsort(s->ids, s->nids, sizeof *s->ids, idmap_cmp);
	if (!s->deferred)
		emit_schemas(s, rlog__ticks(s->clk.tick_source));
	for (unsigned c = 0; c < s->ncpu; c++)
		for (unsigned i = 0; i < s->nev; i++)
			if (s->cpus[c].fds[i] >= 0)
				ioctl(s->cpus[c].fds[i], PERF_EVENT_IOC_ENABLE, 0);
	*out = s;
	return 0;
}

/* ---------------------------------------------------------------- */
/* The selection                                                    */
/* ---------------------------------------------------------------- */

static size_t keep_slot(const struct rlog__sys *s, uint32_t v)
{
	size_t i = (v * 2654435761u) & (s->keep_cap - 1);
	while (s->keep[i] != 0 && s->keep[i] != v)
		i = (i + 1) & (s->keep_cap - 1);
	return i;
}

static bool keep_has(const struct rlog__sys *s, uint32_t v)
{
	return s->keep == NULL || (v != 0 && s->keep[keep_slot(s, v)] == v);
}

/* The scope's process that v is kept for (0: v is not kept, or all are). */
static uint32_t keep_root(const struct rlog__sys *s, uint32_t v)
{
	if (s->keep == NULL || v == 0)
		return 0;
	size_t i = keep_slot(s, v);
	return s->keep[i] == v ? s->keep_root[i] : 0;
}

/* A set of cap slots (a power of 2) holding those of the old one whose
 * root is among roots[0..nroots) (roots NULL: all of them).  -ENOMEM
 * leaves the old one. */
static int keep_rebuild(struct rlog__sys *s, size_t cap, const uint32_t *roots, size_t nroots)
{
	uint32_t *nk = calloc(cap, sizeof *nk), *nr = calloc(cap, sizeof *nr);
	if (nk == NULL || nr == NULL) {
		free(nk);
		free(nr);
		return -ENOMEM;
	}
	uint32_t *old = s->keep, *oroot = s->keep_root;
	size_t ocap = s->keep_cap;
	s->keep = nk;
	s->keep_root = nr;
	s->keep_cap = cap;
	s->nkeep = 0;
	for (size_t i = 0; i < ocap; i++) {
		bool stays = old[i] != 0 && roots == NULL;
		for (size_t k = 0; old[i] != 0 && !stays && k < nroots; k++)
			stays = roots[k] == oroot[i];
		if (stays) {
			size_t j = keep_slot(s, old[i]);
			s->keep[j] = old[i];
			s->keep_root[j] = oroot[i];
			s->nkeep++;
		}
	}
	free(old);
	free(oroot);
	return 0;
}

/*
 * An open-addressing set of ids (0 is never one: the idle task's), each
 * with its root: the process of the scope it is kept for (itself, the
 * process of a thread, the followed ancestor of a child), so that a
 * process that leaves the scope takes its threads and children along.
 */
static void keep_add(struct rlog__sys *s, uint32_t v, uint32_t root)
{
	if (v == 0 || root == 0)
		return;
	if ((s->nkeep + 1) * 2 > s->keep_cap &&
	    keep_rebuild(s, s->keep_cap ? s->keep_cap * 2 : 64, NULL, 0) < 0)
		return;
	size_t i = keep_slot(s, v);
	if (s->keep[i] == 0) {
		s->keep[i] = v;
		s->nkeep++;
	}
	s->keep_root[i] = root;
}

/* ---------------------------------------------------------------- */
/* Records                                                          */
/* ---------------------------------------------------------------- */

static uint64_t rd_u(const uint8_t *p, unsigned size)
{
	uint64_t v = 0;
	memcpy(&v, p, size > 8 ? 8 : size);
	return v;
}

static int64_t rd_i(const uint8_t *p, unsigned size)
{
	uint64_t v = rd_u(p, size);
	if (size < 8 && size > 0 && (v >> (size * 8 - 1) & 1))
		v |= ~UINT64_C(0) << (size * 8);
	return (int64_t)v;
}

static void cpu_flush(struct rlog__sys *s, struct cpu *k)
{
	if (k->records && !k->blk.oom)
		s->emit(s->arg, (uint32_t)k->cpu, k->base, k->blk.p, (uint32_t)k->blk.len, k->records,
			k->events);
	k->blk.len = 0;
	k->blk.oom = false;
	k->records = 0;
	k->events = 0;
}

/* The time of the next record of CPU k: ticks t, never before the
 * previous record of the block (perf's ring is in time order per CPU but
 * for an NMI's sample; such a record is clamped and counted).  Writes a
 * TIME_SYNC first if the cursor would jump 2^31 ticks. */
static uint64_t cpu_time(struct rlog__sys *s, struct cpu *k, uint64_t t)
{
	if (k->records == 0) {
		k->base = k->cursor = t;
		return t;
	}
	if (t < k->cursor) {
		s->st.clamped++;
		t = k->cursor;
	}
	if (t - k->cursor >= RLOG_TIME_SYNC_TICKS) {
		uint32_t hw[2] = { rlog__hdr_make(RLOG_ID_TIME_SYNC, 8, true), (uint32_t)t };
		rlog__buf_put(&k->blk, hw, sizeof hw);
		rlog__buf_put(&k->blk, &t, 8);
		k->records++;
	}
	k->cursor = t;
	return t;
}

static void put_rec(struct cpu *k, unsigned id, uint64_t t, const void *pl, uint32_t len)
{
	static const uint8_t zeros[4];
	uint32_t hw[2] = { rlog__hdr_make(id, len, true), (uint32_t)t };
	rlog__buf_put(&k->blk, hw, sizeof hw);
	rlog__buf_put(&k->blk, pl, len);
	rlog__buf_put(&k->blk, zeros, rlog__record_size(id, len, true) - 8 - len);
	k->records++;
}

static void put_loss(struct rlog__sys *s, struct cpu *k, uint64_t t, uint64_t n)
{
	struct rlog_data_loss l = { .events = n, .bytes = 0, .cause = RLOG_LOSS_KERNEL };
	uint8_t r[RLOG__LOSS_RECORD_MAX];
	uint32_t len = rlog__loss_record(r, cpu_time(s, k, t), &l, sizeof l);
	rlog__buf_put(&k->blk, r, len);
	k->records++;
	s->st.lost += n;
	s->st.loss_records++;
}

static void put_str(uint8_t *pl, uint32_t *n, const void *p, size_t len)
{
	const char *c = p;
	size_t m = strnlen(c, len);
	if (m > CHAIN_CUT)
		m = CHAIN_CUT;
	uint16_t l = (uint16_t)m;
	memcpy(pl + *n, &l, 2);
	memcpy(pl + *n + 2, c, m);
	*n += 2 + (uint32_t)m;
}

/* A call chain as text (events.h, "@chain"): as many whole addresses as
 * fit in size - 1 bytes.  Returns the length. */
static size_t chain_text(const uint8_t *chain, uint64_t n, char *out, size_t size)
{
	size_t len = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t ip;
		memcpy(&ip, chain + i * 8, 8);
		if (ip >= (uint64_t)PERF_CONTEXT_MAX)
			continue; /* PERF_CONTEXT_KERNEL, _USER, ...: markers */
		char one[24];
		int w = snprintf(one, sizeof one, "%s0x%" PRIx64, len ? " " : "", ip);
		if (w < 0 || len + (size_t)w >= size)
			break;
		memcpy(out + len, one, (size_t)w);
		len += (size_t)w;
	}
	out[len] = '\0';
	return len;
}

/* A record of time t is the engine's (rlog__sys_begin, rlog__sys_end). */
static bool in_window(const struct rlog__sys *s, uint64_t t)
{
	return t >= s->from && t < s->until;
}

/* An F_INET field of a raw sample as text ("127.0.0.1", "::1"; "" for
 * another family or a sample too short).  Returns the length. */
static size_t inet_text(const struct rfield *f, const uint8_t *raw, uint32_t rawlen, char *out,
			size_t size)
{
	out[0] = '\0';
	if (!f->present || raw == NULL || f->family_off + 2u > rawlen || f->offset + 4u > rawlen ||
	    f->offset6 + 16u > rawlen)
		return 0;
	uint16_t fam = (uint16_t)rd_u(raw + f->family_off, 2);
	if (fam == AF_INET)
		inet_ntop(AF_INET, raw + f->offset, out, (socklen_t)size);
	else if (fam == AF_INET6)
		inet_ntop(AF_INET6, raw + f->offset6, out, (socklen_t)size);
	return strlen(out);
}

/* One PERF_RECORD_SAMPLE of event o (sz bytes at p, after the header). */
static void sample(struct rlog__sys *s, struct cpu *k, const struct oev *o, const uint8_t *p,
		   uint32_t sz)
{
	const uint8_t *end = p + sz;
	uint64_t ip = 0, addr = 0, time = 0;
	uint32_t pid = 0, tid = 0, rawlen = 0;
	const uint8_t *raw = NULL;
	uint64_t st = o->sample_type;
#define TAKE(dst, n) do { if (p + (n) > end) return; memcpy((dst), p, (n)); p += (n); } while (0)
	if (st & PERF_SAMPLE_IDENTIFIER) p += 8;
	if (st & PERF_SAMPLE_IP) TAKE(&ip, 8);
	if (st & PERF_SAMPLE_TID) { TAKE(&pid, 4); TAKE(&tid, 4); }
	if (st & PERF_SAMPLE_TIME) TAKE(&time, 8);
	if (st & PERF_SAMPLE_ADDR) TAKE(&addr, 8);
	if (st & PERF_SAMPLE_CPU) p += 8;
	uint64_t nchain = 0;
	const uint8_t *chain = NULL;
	if (st & PERF_SAMPLE_CALLCHAIN) {
		TAKE(&nchain, 8);
		if (nchain > (uint64_t)(end - p) / 8)
			return;
		chain = p;
		p += nchain * 8;
	}
	if (st & PERF_SAMPLE_RAW) {
		TAKE(&rawlen, 4);
		if (p + rawlen > end)
			return;
		raw = p;
	}
#undef TAKE
	if (o->path) {
		/* Held for the tracepoint's sample, which follows it in this
		 * ring (openpath.h). */
		k->path_held = true;
		k->path_tid = tid;
		size_t m = raw ? strnlen((const char *)raw, rawlen < RLOG_OPENPATH_MAX ? rawlen
										  : RLOG_OPENPATH_MAX - 1) : 0;
		memcpy(k->path, raw ? (const char *)raw : "", m);
		k->path[m] = '\0';
		return;
	}
	/* The path before this sys_enter_openat sample, if it is this
	 * thread's: else it was another call's, whose sample was lost. */
	const char *path = NULL;
	if (s->open_ev >= 0 && o == &s->ev[s->open_ev]) {
		if (k->path_held && k->path_tid == tid)
			path = k->path;
		k->path_held = false;
	}
	const struct rlog__sys_event *e = o->ev;
	if (s->keep) {
		bool kept = keep_has(s, pid);
		if (!kept && raw && (e->id == 64 || (e->id >= 65 && e->id <= 67))) {
			/* A switch to, or a wake-up of, a kept thread. */
			const struct rfield *f = &o->f[e->id == 64 ? 3 : 0];
			kept = f->present && f->offset + 4u <= rawlen &&
			       keep_has(s, (uint32_t)rd_u(raw + f->offset, 4));
		}
		if (kept && e->id == 69 && s->follow && raw && o->f[1].present &&
		    o->f[1].offset + 4u <= rawlen && keep_root(s, pid) != 0)
			keep_add(s, (uint32_t)rd_u(raw + o->f[1].offset, 4), keep_root(s, pid));
		if (!kept) {
			s->st.filtered++;
			return;
		}
		/* Its threads: for switches to them (not the threads of a
		 * process kept only as the other side of a switch or wake-up). */
		if (pid && keep_has(s, pid) && tid != pid)
			keep_add(s, tid, keep_root(s, pid));
	}
	if (o->hidden || !in_window(s, rlog__sys_ticks(s, time))) {
		s->st.filtered++;
		return;
	}
	uint8_t *pl = s->scratch;
	uint32_t n = 0;
	memcpy(pl, &pid, 4);
	memcpy(pl + 4, &tid, 4);
	n = 8;
	for (unsigned i = 0; i < e->nfields; i++) {
		const struct rfield *f = &o->f[i];
		unsigned w = rlog__field_fixed_size(f->type, 0);
		if (f->type == RLOG_FIELD_STRING) {
			const void *sp = "";
			size_t sl = 0;
			char text[CHAIN_CUT + 1];
			if (f->src == F_CHAIN) {
				sl = chain_text(chain, nchain, text, sizeof text);
				sp = text;
			} else if (f->src == F_SYSNAME) {
				const char *nm = o->have_id && raw && o->id_off + 8u <= rawlen
							 ? rlog__syscall_name(rd_i(raw + o->id_off, 8))
							 : NULL;
				if (nm) {
					sp = nm;
					sl = strlen(nm);
				}
			} else if (f->src == F_INET) {
				sl = inet_text(f, raw, rawlen, text, sizeof text);
				sp = text;
			} else if (path && strcmp(e->f[i].name, "filename") == 0) {
				sp = path;
				sl = strlen(path);
			} else if (f->present && raw && f->offset + (uint32_t)f->size <= rawlen) {
				if (f->data_loc) {
					uint32_t dl = (uint32_t)rd_u(raw + f->offset, 4);
					uint32_t off = dl & 0xffff, len = dl >> 16;
					if (off + len <= rawlen) {
						sp = raw + off;
						sl = len < STRING_CUT ? len : STRING_CUT;
					}
				} else {
					sp = raw + f->offset;
					sl = f->size < STRING_CUT ? f->size : STRING_CUT;
				}
			}
			put_str(pl, &n, sp, sl);
			continue;
		}
		uint64_t v = 0;
		if (f->src == F_ADDR)
			v = addr;
		else if (f->src == F_IP)
			v = ip;
		else if (f->present && raw && f->offset + (uint32_t)f->size <= rawlen)
			v = f->is_signed ? (uint64_t)rd_i(raw + f->offset, f->size)
					 : rd_u(raw + f->offset, f->size);
		memcpy(pl + n, &v, w); /* little-endian: the low w bytes */
		n += w;
	}
	uint64_t t = cpu_time(s, k, rlog__sys_ticks(s, time));
	put_rec(k, e->id, t, pl, n);
	k->events++;
	s->st.written++;
	s->st.bytes += rlog__record_size(e->id, n, true);
}

static const struct oev *by_id(const struct rlog__sys *s, uint64_t id)
{
	struct idmap key = { id, 0 };
	const struct idmap *m = bsearch(&key, s->ids, s->nids, sizeof *s->ids, idmap_cmp);
	return m ? &s->ev[m->ev] : NULL;
}

/* The time in a non-sample record's sample_id trailer (TID, TIME, CPU,
 * IDENTIFIER: 32 bytes at its end), as ticks. */
static uint64_t trailer_ticks(const struct rlog__sys *s, const uint8_t *rec, uint32_t size)
{
	if (size < sizeof(struct perf_event_header) + 32)
		return 0;
	uint64_t t;
	memcpy(&t, rec + size - 24, 8);
	return rlog__sys_ticks(s, t);
}

/* The event of the identifier that ends a non-sample record's trailer. */
static const struct oev *trailer_event(const struct rlog__sys *s, const uint8_t *rec, uint32_t size);

/*
 * A PERF_RECORD_MMAP2: u32 pid, tid; u64 addr, len, pgoff; 24 bytes of
 * device and inode (or a build id); u32 prot, flags; the file name,
 * NUL-terminated and padded to 8; the sample_id trailer (32 bytes).
 */
static void mmap2(struct rlog__sys *s, struct cpu *k, const uint8_t *rec, uint32_t size)
{
	const struct oev *o = trailer_event(s, rec, size);
	if (o == NULL || o->ev->source != RLOG__SRC_MMAP)
		return;
	const uint8_t *b = rec + sizeof(struct perf_event_header);
	if (size < sizeof(struct perf_event_header) + 64 + 32)
		return;
	uint32_t pid, tid, prot, flags;
	uint64_t addr, len, pgoff;
	memcpy(&pid, b, 4);
	memcpy(&tid, b + 4, 4);
	memcpy(&addr, b + 8, 8);
	memcpy(&len, b + 16, 8);
	memcpy(&pgoff, b + 24, 8);
	memcpy(&prot, b + 56, 4);
	memcpy(&flags, b + 60, 4);
	const char *name = (const char *)(b + 64);
	size_t room = size - 32 - (sizeof(struct perf_event_header) + 64);
	k->sideband++;
	if ((s->keep && !keep_has(s, pid)) || !in_window(s, trailer_ticks(s, rec, size))) {
		s->st.filtered++;
		return;
	}
	uint8_t *pl = s->scratch;
	memcpy(pl, &pid, 4);
	memcpy(pl + 4, &tid, 4);
	memcpy(pl + 8, &addr, 8);
	memcpy(pl + 16, &len, 8);
	memcpy(pl + 24, &pgoff, 8);
	memcpy(pl + 32, &prot, 4);
	memcpy(pl + 36, &flags, 4);
	uint32_t n = 40;
	put_str(pl, &n, name, room < STRING_CUT ? room : STRING_CUT);
	uint64_t t = cpu_time(s, k, trailer_ticks(s, rec, size));
	put_rec(k, o->ev->id, t, pl, n);
	k->events++;
	s->st.written++;
	s->st.bytes += rlog__record_size(o->ev->id, n, true);
}

static const struct oev *trailer_event(const struct rlog__sys *s, const uint8_t *rec, uint32_t size)
{
	if (size < sizeof(struct perf_event_header) + 32)
		return NULL;
	uint64_t id;
	memcpy(&id, rec + size - 8, 8);
	return by_id(s, id);
}

static void one(struct rlog__sys *s, struct cpu *k, const uint8_t *rec, uint32_t size)
{
	struct perf_event_header h;
	memcpy(&h, rec, sizeof h);
	const uint8_t *body = rec + sizeof h;
	uint32_t blen = size - (uint32_t)sizeof h;
	switch (h.type) {
	case PERF_RECORD_SAMPLE: {
		uint64_t id;
		if (blen < 8)
			return;
		memcpy(&id, body, 8);
		const struct oev *o = by_id(s, id);
		if (o) {
			if (o->counted)
				k->taken++;
			else if (!o->path)
				k->sideband++;
			sample(s, k, o, body, blen);
		}
		break;
	}
	case PERF_RECORD_MMAP2:
		mmap2(s, k, rec, size);
		break;
	case PERF_RECORD_LOST: { /* u64 id, u64 lost, sample_id */
		uint64_t lost;
		if (blen < 16)
			return;
		memcpy(&lost, body + 8, 8);
		k->lost_reported += lost;
		k->path_held = false; /* its open's sample may be among them */
		put_loss(s, k, trailer_ticks(s, rec, size), lost);
		break;
	}
	case PERF_RECORD_LOST_SAMPLES: { /* u64 lost, sample_id */
		uint64_t lost;
		if (blen < 8)
			return;
		memcpy(&lost, body, 8);
		k->lost_reported += lost;
		k->path_held = false;
		put_loss(s, k, trailer_ticks(s, rec, size), lost);
		break;
	}
	default:
		break;
	}
}

/* Walks CPU k's ring from its tail to its head, fn on each record (a
 * record that wraps is copied out whole).  With consume, each record is
 * given back after fn (data_tail); else the ring is left as it was.
 * The kernel writes data_head and reads data_tail as the ring protocol
 * says (smp_store_release / READ_ONCE); a u64 there is an _Atomic
 * uint64_t in all but name (same size and alignment). */
static void cpu_walk(struct rlog__sys *s, struct cpu *k, bool consume,
		     void (*fn)(struct rlog__sys *, struct cpu *, const uint8_t *, uint32_t))
{
	if (k->map == NULL)
		return;
	struct perf_event_mmap_page *pg = (struct perf_event_mmap_page *)k->map;
	_Atomic uint64_t *headp = (_Atomic uint64_t *)&pg->data_head;
	_Atomic uint64_t *tailp = (_Atomic uint64_t *)&pg->data_tail;
	uint64_t head = atomic_load_explicit(headp, memory_order_acquire);
	uint64_t tail = atomic_load_explicit(tailp, memory_order_relaxed);
	const uint8_t *data = k->map + (k->map_size - k->data_size);
	uint64_t mask = k->data_size - 1;
	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;
		uint64_t off = tail & mask;
		if (off + sizeof h <= k->data_size) {
			memcpy(&h, data + off, sizeof h);
		} else {
			size_t a = (size_t)(k->data_size - off);
			memcpy(&h, data + off, a);
			memcpy((uint8_t *)&h + a, data, sizeof h - a);
		}
		if (h.size < sizeof h || tail + h.size > head)
			break; /* cannot happen: the kernel writes whole records */
		const uint8_t *rec;
		if (off + h.size <= k->data_size) {
			rec = data + off;
		} else {
			size_t a = (size_t)(k->data_size - off);
			memcpy(s->rec, data + off, a);
			memcpy(s->rec + a, data, h.size - a);
			rec = s->rec;
		}
		fn(s, k, rec, h.size);
		tail += h.size;
		if (consume && k->blk.len >= BLOCK_BYTES)
			cpu_flush(s, k);
	}
	/* The records are copied out: the space goes back. */
	if (consume)
		atomic_store_explicit(tailp, tail, memory_order_release);
}

/* A fork sample by a kept process: its child is kept from now on. */
static void fork_scan(struct rlog__sys *s, struct cpu *k, const uint8_t *rec, uint32_t size)
{
	(void)k;
	struct perf_event_header h;
	memcpy(&h, rec, sizeof h);
	if (h.type != PERF_RECORD_SAMPLE || size < sizeof h + 8)
		return;
	uint64_t id;
	memcpy(&id, rec + sizeof h, 8);
	const struct oev *o = by_id(s, id);
	if (o == NULL || o->ev->id != 69 || o->sample_type != (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
							    PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
							    PERF_SAMPLE_RAW))
		return;
	/* identifier, pid, tid, time, cpu, raw size, raw */
	const uint8_t *p = rec + sizeof h;
	uint32_t pid, rawlen;
	if (size < sizeof h + 40)
		return;
	memcpy(&pid, p + 8, 4);
	memcpy(&rawlen, p + 32, 4);
	const uint8_t *raw = p + 36;
	const struct rfield *f = &o->f[1]; /* child_tid */
	if (keep_has(s, pid) && f->present && f->offset + 4u <= rawlen &&
	    sizeof h + 36 + (size_t)rawlen <= size)
		keep_add(s, (uint32_t)rd_u(raw + f->offset, 4), keep_root(s, pid));
}

/* A process exited: its process_counters record if it is of the scope
 * and read within the engine's window (rlog__sys_begin, _end), else
 * filtered.  Each is in the statistics as a sample is: taken (so in
 * handed_over at stop), then written or filtered. */
static void counters_exit(void *arg, const struct rlog__pcounters *c)
{
	struct rlog__sys *s = arg;
	uint64_t now = rlog__ticks(s->clk.tick_source);
	s->tsk.taken++;
	if (!keep_has(s, c->pid) || !in_window(s, now)) {
		s->st.filtered++;
		return;
	}
	uint8_t pl[RLOG_PCOUNTERS_PAYLOAD];
	uint32_t n = rlog__pcounters_payload(c, pl);
	put_rec(&s->tsk, RLOG_SYS_ID_PROCESS_COUNTERS, cpu_time(s, &s->tsk, now), pl, n);
	s->tsk.events++;
	s->st.written++;
	s->st.bytes += rlog__record_size(RLOG_SYS_ID_PROCESS_COUNTERS, n, true);
}

/* The exits taskstats reported since the last poll, stamped now: the
 * kernel sends them as the threads exit, without a time.  The exits it
 * lost (rlog__tstats_overruns) since the last poll: a DATA_LOSS of cause
 * kernel in the same block, and in lost. */
static void counters_poll(struct rlog__sys *s)
{
	if (s->ts == NULL)
		return;
	rlog__tstats_read(s->ts, counters_exit, s);
	uint64_t ov = rlog__tstats_overruns(s->ts);
	if (ov > s->tsk.lost_reported) {
		put_loss(s, &s->tsk, rlog__ticks(s->clk.tick_source), ov - s->tsk.lost_reported);
		s->tsk.lost_reported = ov;
	}
	cpu_flush(s, &s->tsk);
}

int rlog__sys_poll(struct rlog__sys *s)
{
	if (s == NULL || s->stopped || s->deferred)
		return 0;
	uint64_t before = s->st.written + s->st.loss_records;
	clock_pair(s);
	/* Following children: a child's first records may be in another
	 * CPU's ring than its fork, read earlier; so the forks of the
	 * whole pass are found first (twice: a grandchild). */
	for (int pass = 0; s->keep && s->follow && pass < 2; pass++)
		for (unsigned c = 0; c < s->ncpu; c++)
			cpu_walk(s, &s->cpus[c], false, fork_scan);
	for (unsigned c = 0; c < s->ncpu; c++) {
		cpu_walk(s, &s->cpus[c], true, one);
		cpu_flush(s, &s->cpus[c]);
	}
	counters_poll(s);
	return (int)(s->st.written + s->st.loss_records - before);
}

void rlog__sys_stop(struct rlog__sys *s)
{
	if (s == NULL || s->stopped)
		return;
	for (unsigned c = 0; c < s->ncpu; c++)
		for (unsigned i = 0; i < s->nev; i++)
			if (s->cpus[c].fds[i] >= 0)
				ioctl(s->cpus[c].fds[i], PERF_EVENT_IOC_DISABLE, 0);
	uint64_t now = rlog__ticks(s->clk.tick_source);
	clock_pair(s);
	for (unsigned c = 0; c < s->ncpu; c++) {
		struct cpu *k = &s->cpus[c];
		cpu_walk(s, k, true, one);
		/* Each event's count is every sample it made, taken or lost:
		 * what the kernel lost and has not reported in a LOST record
		 * yet (it writes one only when the ring has room again) is
		 * the rest. */
		uint64_t made = 0;
		for (unsigned i = 0; i < s->nev; i++) {
			uint64_t v;
			if (s->ev[i].counted && k->fds[i] >= 0 &&
			    read(k->fds[i], &v, sizeof v) == (ssize_t)sizeof v)
				made += v;
		}
		/* The MMAP2 records and the profile's samples are in no
		 * count (the profile's counts nanoseconds): handed over when read;
		 * and a LOST record may count some of them, beyond what the
		 * samples' counts explain. */
		uint64_t seen = k->taken + k->lost_reported;
		s->st.handed_over += k->sideband + (made > seen ? made : seen);
		if (made > seen) {
			s->st.lost_at_stop += made - seen;
			put_loss(s, k, now, made - seen);
		}
		cpu_flush(s, k);
	}
	counters_poll(s);
	s->st.handed_over += s->tsk.taken + s->tsk.lost_reported - s->tsk_lost_base;
	s->stopped = true;
}

void rlog__sys_get_stats(const struct rlog__sys *s, struct rlog__sys_stats *st)
{
	*st = s->st;
}

void rlog__sys_close(struct rlog__sys *s)
{
	if (s == NULL)
		return;
	for (unsigned c = 0; c < s->ncpu; c++) {
		struct cpu *k = &s->cpus[c];
		if (k->map)
			munmap(k->map, k->map_size);
		for (unsigned i = 0; k->fds && i < s->nev; i++)
			if (k->fds[i] >= 0)
				close(k->fds[i]);
		free(k->fds);
		rlog__buf_free(&k->blk);
	}
	rlog__tstats_close(s->ts);
	for (unsigned c = 0; s->path_out && c < s->ncpu; c++)
		if (s->path_out[c] >= 0)
			close(s->path_out[c]);
	free(s->path_out);
	if (s->path_prog >= 0)
		close(s->path_prog);
	if (s->path_map >= 0)
		close(s->path_map);
	rlog__buf_free(&s->tsk.blk);
	free(s->cpus);
	free(s->ids);
	free(s->ev);
	free(s->keep);
	free(s->keep_root);
	free(s);
}

/* ---------------------------------------------------------------- */
/* The scope while open, and what is open                           */
/* ---------------------------------------------------------------- */

int rlog__sys_set_pids(struct rlog__sys *s, const uint32_t *pids, size_t n, bool whole)
{
	if (whole) {
		free(s->keep);
		free(s->keep_root);
		s->keep = s->keep_root = NULL;
		s->nkeep = s->keep_cap = 0;
		return 0;
	}
	/* What is kept for a process no longer in pids goes (an empty set
	 * keeps nothing, keep_has: a scope of nobody yet is not the whole
	 * machine); the rest stays, each of pids its own root. */
	size_t cap = s->keep_cap ? s->keep_cap : 64;
	while ((s->nkeep + n + 1) * 2 > cap)
		cap *= 2;
	int rc = keep_rebuild(s, cap, pids, n);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n; i++)
		keep_add(s, pids[i], pids[i]);
	return 0;
}

void rlog__sys_begin(struct rlog__sys *s, uint64_t from)
{
	if (!s->deferred)
		return;
	s->deferred = false;
	s->from = from;
	/* No listener handed over (the old engine had none): its own. */
	if (s->counters && s->ts == NULL)
		rlog__tstats_open(&s->ts);
	emit_schemas(s, from);
}

void rlog__sys_hand_counters(struct rlog__sys *from, struct rlog__sys *to)
{
	if (from == NULL || to == NULL || !to->counters || !to->deferred || to->ts != NULL ||
	    from->ts == NULL)
		return;
	to->ts = from->ts;
	from->ts = NULL;
	/* The overruns the old one reported are not the new one's. */
	to->tsk.lost_reported = from->tsk.lost_reported;
	to->tsk_lost_base = from->tsk.lost_reported;
}

void rlog__sys_end(struct rlog__sys *s, uint64_t until)
{
	s->until = until;
}

uint64_t rlog__sys_opened(const struct rlog__sys *s)
{
	uint64_t f = 0;
	for (unsigned i = 0; s->ncpu && i < s->nev; i++)
		if (!s->ev[i].hidden)
			f |= s->ev[i].ev->flags;
	return s->counters ? f | RLOG_SYS_PROCESS_COUNTERS : f;
}

size_t rlog__sys_fds(const struct rlog__sys *s, int *fds, size_t max)
{
	size_t n = 0;
	for (unsigned c = 0; s != NULL && c < s->ncpu && n < max; c++)
		if (s->cpus[c].map != NULL)
			fds[n++] = s->cpus[c].lead;
	return n;
}

const char *rlog__sys_time_source(const struct rlog__sys *s)
{
	return s->mode == 0 ? "clockid" : s->mode == 1 ? "perf-tsc" : "raw-pairs";
}
