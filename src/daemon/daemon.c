/*
 * daemon.c - the capture daemon's loop and the stop sequence.
 *
 *   daemon                                      producers
 *   ------                                      ---------
 *   loop:
 *     pass: drain FULL buffers (drain.c)
 *     fill_waiting = 1             (seq_cst)
 *     any FULL? stop? -> no sleep                state = FULL (seq_cst)
 *     futex_wait(fill_waiting, 1, 10 ms)  <---- in use >= high water and
 *                                               exchange(fill_waiting, 0) == 1:
 *                                               futex_wake
 *   stop:
 *     state = STOPPING; enable_mask = 0 (seq_cst)
 *     membarrier(GLOBAL)             makes every producer's "busy = 1" that
 *                                    precedes its mask load visible, or
 *                                    makes its mask load see 0
 *     per active slot: see busy == 0 once
 *     final pass, final DATA_LOSS, refined LOG_MARKER, close, unlink,
 *     state = STOPPED, futex_wake(state)
 *
 * Every write that returned 1 to its caller is in the file: the write set
 * busy before reading the mask, so either it saw 0 (returned 0), or the
 * daemon waits for its busy = 0, which comes after its write_off release.
 */
#define _GNU_SOURCE
#include "daemon.h"

#include <errno.h>
#include <limits.h>
#include <linux/membarrier.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "atomics.h"
#include "categories.h"
#include "clock.h"
#include "counters.h"
#include "system/system.h"
#include "system_ctl.h"
#include "drain.h"
#include "pool.h"
#include "futex.h"
#include "journal.h"
#include "lock.h"
#include "procstat.h"
#include "snapshot.h"
#include "trim.h"
#include "wake.h"
#include "sink_file.h"
#include "sink_realtime.h"
#include "sink_net.h"

/* How long the stop sequence waits for a producer to leave a write. */
#define QUIESCE_NS UINT64_C(10000000000)

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	(void)sig;
	got_signal = 1;
}

static void set_error(struct rlog__region *r, const char *what, int err)
{
	snprintf(r->hdr->last_error, sizeof r->hdr->last_error, "%s: %s", what, strerror(err));
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static void wait_publish(struct rlog__region *r, uint32_t pid, uint32_t tid, uint32_t what)
{
	store_relaxed(&r->hdr->stop_wait_tid, tid);
	store_relaxed(&r->hdr->stop_wait_what, what);
	store_release(&r->hdr->stop_wait_pid, pid); /* pairs with `ringlog stop`'s load_acquire */
}

/* How long a wait is ordinary (a write takes nanoseconds; a preempted
 * producer, milliseconds) before the header says for whom it is. */
#define WAIT_SAY_NS UINT64_C(500000000)

/*
 * Waits until the word at w reads 0 once (seq_cst), the producer (pid,
 * start_time) is dead, or the deadline passes (then last_error names it and
 * returns false).  Past WAIT_SAY_NS, the header says for whom it waits
 * (`ringlog stop` prints it).
 */
static bool wait_zero(struct rlog__region *r, _Atomic uint32_t *w, uint32_t pid, uint64_t start,
		      uint32_t tid, uint32_t what, uint64_t deadline)
{
	bool published = false;
	uint64_t say = rlog__monotonic_ns() + WAIT_SAY_NS;
	while (load_seq_cst(w) != 0) {
		if (rlog__process_dead((pid_t)(pid > INT32_MAX ? 0 : pid), start))
			break;
		if (!published && rlog__monotonic_ns() > say) {
			wait_publish(r, pid, tid, what);
			published = true;
		}
		if (rlog__monotonic_ns() > deadline) {
			/* A stopped or traced producer: stop must not hang,
			 * and must not be silent about what it may miss. */
			int secs = (int)(QUIESCE_NS / 1000000000u);
			if (what == RLOG_WAIT_WRITE)
				snprintf(r->hdr->last_error, sizeof r->hdr->last_error,
					 "a producer (pid %u, tid %u) stayed inside a write for %d s; "
					 "that write may be missing from the log", pid, tid, secs);
			else
				snprintf(r->hdr->last_error, sizeof r->hdr->last_error,
					 "a producer (pid %u) stayed inside a loss count for %d s; "
					 "that loss may be missing from the statistics", pid, secs);
			break;
		}
		sleep_ms(1);
	}
	if (published)
		wait_publish(r, 0, 0, RLOG_WAIT_NONE);
	return load_seq_cst(w) == 0;
}

/* Waits until every producer that may be inside a write, or inside a loss
 * count without a slot, has left it.  A slot or entry found dead is not
 * waited for; one whose pid no process can have (procs.c) is damage,
 * counted at once and not waited for either. */
static void quiesce_producers(struct rlog__region *r, struct rlog__drain *d)
{
	/* Pairs with the producer's busy = 1 then mask load (ringlog.h):
	 * membarrier(GLOBAL) runs a full barrier on every CPU that runs a
	 * thread of any process, so a producer either has its busy = 1
	 * visible now, or its later mask load sees 0. */
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) != 0)
		sleep_ms(20); /* no membarrier: store buffers drain in far less */
	uint64_t deadline = rlog__monotonic_ns() + QUIESCE_NS;
	uint32_t pid_max = rlog__pid_max();
	for (uint32_t i = 0; i < r->slot_count; i++) {
		struct rlog_shm_slot *s = &r->slots[i];
		/* seq_cst: a slot claimed after this load sees the mask at 0
		 * (src/lib/thread.c, rlog__thread_bind).  busy == 0 seen once
		 * suffices: a later write sees mask 0. */
		if (load_seq_cst(&s->state) != RLOG_SLOT_ACTIVE || rlog__procs_slot_dead(d, i))
			continue;
		/* busy is stored after the pid (release): busy seen at 1, the
		 * pid is its owner's. */
		if (load_seq_cst(&s->busy) != 0 && !rlog__pid_possible(s->pid, pid_max)) {
			rlog__procs_slot_damaged(d, i, s->pid, s->tid);
			continue;
		}
		wait_zero(r, &s->busy, s->pid, 0, s->tid, RLOG_WAIT_WRITE, deadline);
	}
	/* Threads counting a loss without a slot (src/lib/proc.c): seq_cst
	 * pairs with their fetch_add(gate) before they read the mask. */
	for (uint32_t i = 0; i < r->slot_count; i++) {
		struct rlog_shm_proc *p = &r->procs[i];
		uint32_t st = load_seq_cst(&p->state);
		if ((st != RLOG_PROC_ACTIVE && st != RLOG_PROC_EXITED) || rlog__procs_entry_dead(d, i))
			continue;
		/* The gate is raised only by a thread of a process whose entry
		 * has its pid (src/lib/proc.c). */
		uint32_t pid = load_acquire(&p->pid);
		if (load_seq_cst(&p->gate) != 0 && !rlog__pid_possible(pid, pid_max)) {
			rlog__procs_entry_damaged(d, i, pid);
			continue;
		}
		wait_zero(r, &p->gate, pid, load_relaxed(&p->start_time), 0, RLOG_WAIT_GATE,
			  deadline);
	}
}

/*
 * The header's identity and geometry never change after creation; a
 * process that scribbles them cannot hurt the daemon (it uses the geometry
 * it validated at start), but the session's other users are refused from
 * then on, and stop must say so: last_error, once.
 */
static void check_header(struct rlog__region *r, bool *reported)
{
	if (*reported || rlog__header_check(r) == 0)
		return;
	*reported = true;
	snprintf(r->hdr->last_error, sizeof r->hdr->last_error,
		 "the session header was scribbled (it fails validation); the daemon went on "
		 "with the geometry it validated at start");
}

static void marker_fill(struct rlog__region *r, struct rlog_log_marker *m)
{
	struct rlog_shm_header *h = r->hdr;
	memset(m, 0, sizeof *m);
	m->tick_freq_hz = h->tick_freq_hz;
	m->sync_ticks = h->sync_ticks;
	m->sync_realtime_ns = h->sync_realtime_ns;
	m->sync_monotonic_ns = h->sync_monotonic_ns;
	m->tick_source = h->tick_source;
	m->buffer_size = r->buffer_size;
	m->buffer_count = load_relaxed(&h->max_buffers);
	/* Read again for every marker (the first, each new file's, the
	 * refined one at stop): the error at the time of writing. */
	rlog__clock_error(&m->clock_esterror_us, &m->clock_maxerror_us);
	/* NUL-padded, not necessarily terminated (a 64-character name fills it). */
	size_t n = strnlen(h->name, sizeof m->session_name);
	memcpy(m->session_name, h->name, n);
}

void rlog__daemon_marker(struct rlog__region *r, struct rlog_log_marker *m)
{
	struct rlog_shm_header *h = r->hdr;
	uint32_t source = h->tick_source;
	if (source == RLOG_TICK_TSC) {
		/* The frequency measured over the whole session so far is far
		 * more precise than the 20 ms calibration at start.  The start
		 * sample is the header's clock, so the daemon that died and
		 * `ringlog stop --force` measure the same way. */
		struct rlog__clock_sync start = { .ticks = h->sync_ticks,
						  .realtime_ns = h->sync_realtime_ns,
						  .monotonic_raw_ns = h->sync_monotonic_ns };
		struct rlog__clock_sync end;
		rlog__clock_sync_now(source, &end);
		if (end.monotonic_raw_ns > start.monotonic_raw_ns &&
		    end.monotonic_raw_ns - start.monotonic_raw_ns > 100000000u && end.ticks > start.ticks)
			h->tick_freq_hz = rlog__tick_freq(source, &start, &end);
	}
	marker_fill(r, m);
}

void rlog__daemon_marker_fn(void *region, struct rlog_log_marker *m)
{
	rlog__daemon_marker(region, m);
}

/* Opens the multi-host sink spec names (Kafka, NATS; sink_chunks.h) and
 * adds it to out; one that joins a running session (before: what the
 * session wrote so far) says so in its chunks.  Returns 0 or -errno with
 * what (n bytes) saying what failed. */
static int net_sink_add(struct rlog__region *r, const struct rlog__sink_spec *spec,
			const char *name, uint32_t tid, struct rlog__output *out,
			const struct rlog__sink_stats *before, char *what, size_t n)
{
	struct rlog_log_marker m;
	marker_fill(r, &m);
	struct rlog__sink *s;
	char why[120] = "";
	int err = rlog__sink_net_open(spec, name, &m, r->hdr->daemon_pid, tid, r->ctl, &s, why,
				      sizeof why);
	if (err == 0 && before)
		rlog__chunks_join(s, before);
	if (err == 0 && (err = rlog__output_add(out, s, false)) < 0)
		s->ops->free(s);
	if (err < 0)
		snprintf(what, n, "opening the sink %.60s%s%.100s", spec->url, why[0] ? ": " : "",
			 why);
	return err;
}

/* Adds the multi-host sink of `ringlog start --sink`.  Returns 0 or -errno
 * (last_error says what failed). */
static int net_sink_open(struct rlog__region *r, const struct rlog__sink_spec *spec,
			 const char *name, uint32_t tid, struct rlog__output *out)
{
	char what[200];
	int err = net_sink_add(r, spec, name, tid, out, NULL, what, sizeof what);
	if (err < 0)
		set_error(r, what, -err);
	return err;
}

/* What a sink added to the running session needs (`ringlog update --sink`). */
struct sink_add_ctx {
	struct rlog__region *r;
	struct rlog__output *out;
	const char *name;
	uint32_t tid;
};

/* A decimal number of at most max at *p, ended by a space: *p moved past
 * the space.  Returns 0 or -EINVAL. */
static int request_number(const char **p, uint64_t max, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (x > (max - d) / 10)
			return -EINVAL;
		x = x * 10 + d;
	}
	if (*s != ' ')
		return -EINVAL;
	*p = s + 1;
	*v = x;
	return 0;
}

/* The request "HOSTID BUFFER CHUNK URL" (written by another process of
 * the session's owner, so checked as the CLI checks its options):
 * spec's host id, buffer and chunk, and *url.  Returns 0 or -EINVAL. */
static int sink_request_parse(const char *req, struct rlog__sink_spec *spec, const char **url)
{
	char hid[33];
	if (strnlen(req, 33) < 33 || req[32] != ' ')
		return -EINVAL;
	memcpy(hid, req, 32);
	hid[32] = '\0';
	uint64_t buffer, chunk;
	const char *p = req + 33;
	if (rlog__host_id_parse(hid, spec->host_id) < 0 ||
	    request_number(&p, UINT64_MAX, &buffer) < 0 ||
	    request_number(&p, RLOG__SINK_CHUNK_MAX, &chunk) < 0 || *p == '\0' ||
	    !rlog__sink_sizes_ok(buffer, chunk))
		return -EINVAL;
	spec->buffer = buffer;
	spec->chunk = (uint32_t)chunk;
	*url = p;
	return 0;
}

/* Serves RLOG_CTL_SINK: req is "HOSTID BUFFER CHUNK URL" (docs/FORMAT.md,
 * "Request page").  One multi-host sink a session: a second is refused.
 * Returns 0 or -errno with msg. */
static int sink_add(void *arg, const char *req, char *msg, size_t n)
{
	struct sink_add_ctx *x = arg;
	for (unsigned i = 0; i < x->out->n; i++)
		if (strcmp(x->out->sinks[i]->ops->name, "chunks") == 0) {
			snprintf(msg, n, "the session has a sink already (one a session)");
			return -EEXIST;
		}
	struct rlog__sink_spec spec;
	memset(&spec, 0, sizeof spec);
	const char *url = NULL;
	if (sink_request_parse(req, &spec, &url) < 0) {
		snprintf(msg, n, "the request is not one this daemon knows");
		return -EINVAL;
	}
	uint8_t id[16];
	memcpy(id, spec.host_id, sizeof id);
	rlog__sink_spec_host(&spec); /* the host name (its id: the request's) */
	memcpy(spec.host_id, id, sizeof id);
	if (spec.host_name[0] == '\0')
		snprintf(spec.host_name, sizeof spec.host_name, "localhost");
	spec.url = url;
	return net_sink_add(x->r, &spec, x->name, x->tid, x->out, rlog__output_stats(x->out), msg,
			    n);
}

/* Sets up the output: the file sink in the session's mode, the real-time
 * sink, the multi-host sink.  Returns 0 or -errno (last_error says what failed). */
static int output_open(struct rlog__region *r, const struct rlog__daemon_opts *o, const char *name,
		       uint32_t tid, struct rlog__output *out)
{
	struct rlog_shm_header *h = r->hdr;
	uint32_t mode = h->log_file_mode;
	uint64_t max = h->max_file_size;
	rlog__output_init(out, rlog__output_meta_limit(mode, max));
	if (o->out_fd >= 0) {
		struct rlog__file_opts fo = {
			.fd = o->out_fd, .mode = mode, .max_size = max, .pattern = o->pattern,
			.force = o->force, .max_block = r->buffer_size, .pid = h->daemon_pid, .tid = tid,
			.marker = rlog__daemon_marker_fn, .marker_arg = r,
		};
		struct rlog__sink *fs;
		int err = rlog__sink_file_open(&fo, &fs);
		if (err < 0) {
			const char *what = "writing the log file header";
			if (err == -ENOSPC && (mode & RLOG_MODE_PREALLOCATE))
				what = "allocating the log file (preallocate)";
			set_error(r, what, -err);
			close(o->out_fd);
			return err;
		}
		rlog__output_add(out, fs, true);
	}
	int err = rlog__daemon_realtime_open(r, name, tid, out);
	if (err == 0 && o->sink)
		err = net_sink_open(r, o->sink, name, tid, out);
	return err;
}

int rlog__daemon_realtime_open(struct rlog__region *r, const char *name, uint32_t tid,
			       struct rlog__output *out)
{
	struct rlog_shm_header *h = r->hdr;
	if (!(h->log_file_mode & RLOG_MODE_REAL_TIME))
		return 0;
	struct rlog_log_marker m;
	marker_fill(r, &m);
	struct rlog__sink *rt;
	int err = rlog__sink_realtime_open(name, &m, h->daemon_pid, tid, &rt);
	if (err < 0) {
		char path[128] = "";
		rlog__rt_path(name, path, sizeof path);
		char what[200];
		snprintf(what, sizeof what, "creating the real-time socket %s", path);
		set_error(r, what, -err);
		return err;
	}
	rlog__output_add(out, rt, false);
	return 0;
}

/* Sets last_error from the output's first error, if any. */
static void output_error(struct rlog__region *r, struct rlog__output *out)
{
	const char *what;
	int err = rlog__output_error(out, &what);
	if (err < 0)
		set_error(r, what, -err);
}

/* FULL buffers that make the daemon go round again at once rather than
 * sleep: a pass's worth, or an eighth of a small pool (at least 1). */
static uint32_t busy_backlog(const struct rlog__drain *d)
{
	uint32_t eighth = d->pool / 8 > 0 ? d->pool / 8 : 1;
	return d->pass.budget < eighth ? d->pass.budget : eighth;
}

/*
 * How long to sleep on the fill event when the passes since the last sleep
 * gave back released buffers in span ns: 1 ms
 * (RLOG_DAEMON_BUSY_POLL_MS) while producers fill the pool fast enough
 * that in 10 ms they would fill an eighth of it (200 MB/s for the default
 * pool), else 10 ms.  Below that rate the high-water mark leaves room
 * enough; above it, a daemon that waits for the mark may be scheduled too
 * late on a loaded machine (docs/PERFORMANCE.md, "Drain throughput").
 */
static int poll_ms(const struct rlog__drain *d, uint32_t released, uint64_t span)
{
	/* In doubles: bytes times the poll in ns would overflow 64 bits. */
	double bytes = (double)released * d->r->buffer_size;
	double pool = (double)d->pool * d->r->buffer_size;
	if (released > 0 && bytes * 8 * RLOG_DAEMON_POLL_MS * 1e6 > pool * (double)span)
		return RLOG_DAEMON_BUSY_POLL_MS;
	return RLOG_DAEMON_POLL_MS;
}

void rlog__daemon_stop(struct rlog__region *r, struct rlog__drain *d, struct rlog__output *out,
		       const char *name)
{
	struct rlog_shm_header *h = r->hdr;
	store_release(&h->state, RLOG_STATE_STOPPING);
	store_seq_cst(&h->enable_mask, 0);
	quiesce_producers(r, d);
	rlog__procs_check_dead(d);
	rlog__drain_pass(d, RLOG_DRAIN_FINAL);
	/* Data first, then the loss records in a write of their own: on a full
	 * disk the small records may still fit where a data block did not, and
	 * then the file itself says what it is missing. */
	if (rlog__output_flush(out) < 0)
		output_error(r, out);
	rlog__drain_commit(d);
	rlog__drain_final_losses(d);
	if (rlog__output_flush(out) < 0)
		output_error(r, out);
	rlog__drain_commit(d);
	/* A flight recorder's buffers are dropped: counted, not written. */
	rlog__snap_discard(d);
	struct rlog_log_marker m;
	rlog__daemon_marker(r, &m);
	if (rlog__output_finish(out, &m) < 0 || h->last_error[0] == '\0')
		output_error(r, out);
	rlog__drain_publish(d);
	rlog__region_unlink(name);
	rlog__journal_remove(name);
	/* The session's count in the wake registry (src/common/wake.h), if
	 * rlog__session_start raised it once the session was active. */
	if (load_acquire(&h->wake_counted))
		rlog__wake_add(name, -1);
	/* Pairs with `ringlog stop` waiting on state: the statistics above are
	 * final when it sees STOPPED. */
	store_release(&h->state, RLOG_STATE_STOPPED);
	rlog__futex_wake(&h->state, INT_MAX);
}

void rlog__daemon_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
}

int rlog__daemon_run(struct rlog__region *r, const struct rlog__daemon_opts *o)
{
	struct rlog_shm_header *h = r->hdr;
	/* The name is used to remove the region at the end: keep our own copy,
	 * not whatever a producer may have written into the header since. */
	char name[RLOG_NAME_MAX + 1];
	snprintf(name, sizeof name, "%.*s", RLOG_NAME_MAX, h->name);
	rlog__daemon_signals();
	int err;
	/* Held until this process exits: the session has a daemon
	 * (lock.h; `ringlog list` and `stop --force` look). */
	int lock = rlog__daemon_lock(name);
	if (lock < 0) {
		set_error(r, "taking the session's daemon lock", -lock);
		err = lock;
		if (o->out_fd >= 0)
			close(o->out_fd);
		goto fail;
	}

	uint32_t source = h->tick_source;
	struct rlog__clock_sync start;
	h->tick_freq_hz = rlog__clock_calibrate(source, 20, &start);
	h->sync_ticks = start.ticks;
	h->sync_realtime_ns = start.realtime_ns;
	h->sync_monotonic_ns = start.monotonic_raw_ns;
	h->daemon_pid = (uint32_t)getpid();

	struct rlog__output out;
	struct rlog__drain d;
	uint32_t tid = (uint32_t)syscall(SYS_gettid);
	err = output_open(r, o, name, tid, &out);
	if (err < 0) {
		rlog__output_free(&out);
		goto fail;
	}
	err = rlog__drain_init(&d, r, &out, source);
	if (err < 0) {
		set_error(r, "allocating daemon state", -err);
		rlog__output_free(&out);
		goto fail;
	}
	/* System events (src/system), if the session selects them: on
	 * before the session is, so that they cover everything in it. */
	struct rlog__sys_ctl sys;
	rlog__sys_ctl_init(&sys, r, &out);
	/* Pairs with the producers' load_acquire(state) in rlog_attach and
	 * the `ringlog start` waiting for it. */
	store_release(&h->state, RLOG_STATE_ACTIVE);
	rlog__futex_wake(&h->state, INT_MAX);
	rlog__daemon_serve(r, &d, &out, name, tid, &sys);
	close(lock);
	return 0;

fail:
	rlog__region_unlink(name);
	store_release(&h->state, RLOG_STATE_FAILED);
	rlog__futex_wake(&h->state, INT_MAX);
	return err;
}

/* After a pass: its blocks reach the file and the consumers; only then
 * are its buffers given back (a daemon that dies in between leaves them
 * for `ringlog stop --force`). */
static void write_pass(struct rlog__region *r, struct rlog__drain *d, struct rlog__output *out,
		       const char *name)
{
	if (rlog__output_flush(out) < 0 || d->flush_failed)
		output_error(r, out);
	else
		rlog__drain_report_log_losses(d, false);
	d->flush_failed = false;
	/* Without a file, the names and schemas seen so far, and what the
	 * snapshots reported, live only here: journaled for `ringlog
	 * recover` (journal.h), before the slots the pass reaped are
	 * freed (commit) and their losses known nowhere else. */
	rlog__journal_update(d, name);
	rlog__drain_commit(d);
}

/* The fill event's second look (fill_waiting is 1): whether to go round
 * at once rather than sleep.  A FULL buffer that the pass left (held back
 * for order) must not make the daemon spin: at once only after progress,
 * and only with a pass's worth of FULL buffers waiting; fewer wait for the
 * poll (1 ms while producers are fast) or the high-water wake, so that
 * each pass writes in large writes rather than a buffer or two at a time
 * (docs/PERFORMANCE.md, "Drain throughput").  Past the high-water mark it
 * goes round: a producer that handed a buffer over while the daemon was
 * not waiting did not wake it.  seq_cst pairs with the producers'
 * handover (thread.c). */
static bool go_round(struct rlog__region *r, struct rlog__drain *d, uint32_t flush_served,
		     uint32_t snap_served, int released)
{
	struct rlog_shm_header *h = r->hdr;
	return load_seq_cst(&h->stop_requested) ||
	       load_seq_cst(&h->flush_requested) != flush_served ||
	       load_seq_cst(&r->ctl->req_seq) != snap_served ||
	       (released > 0 && (rlog__drain_full_at_least(d, busy_backlog(d)) ||
				 rlog__region_past_high_water(r, d->pool)));
}

/* A snapshot's rundown of the system events' scope (snapshot.h). */
static void sys_rundown(void *sys)
{
	rlog__sys_ctl_rundown(sys);
}

void rlog__daemon_serve(struct rlog__region *r, struct rlog__drain *d, struct rlog__output *out,
			const char *name, uint32_t tid, struct rlog__sys_ctl *sys)
{
	struct rlog_shm_header *h = r->hdr;
	struct rlog__snap_state snap;
	rlog__snap_init(&snap, d, h->daemon_pid, tid);
	snap.rundown = sys_rundown;
	struct sink_add_ctx sink_ctx = { r, out, name, tid };
	snap.sink_add = sink_add;
	snap.sink_arg = &sink_ctx;
	bool watching = false; /* a snapshot trigger waits for an event */
	/* The sampled counters (counters.h); without memory for them, the
	 * session goes on without (said in last_error). */
	struct rlog__counters *ctr = NULL;
	if (rlog__counters_open(r, h->tick_source, rlog__counters_to_output, out, &ctr) < 0)
		set_error(r, "sampling counters", ENOMEM);
	struct rlog__sys_ctl own_sys;
	if (sys == NULL) {
		sys = &own_sys;
		rlog__sys_ctl_init(sys, r, out);
	}
	snap.rundown_arg = sys;

	uint64_t last_flush = rlog__monotonic_ns(), last_dead_check = last_flush;
	uint64_t last_busy = last_flush; /* last pass that released a buffer (trim.c) */
	/* Buffers given back since the pass before the last sleep, and when
	 * that pass started: the rate at which producers fill the pool. */
	uint32_t released_since = 0;
	uint64_t idle_since = last_flush;
	bool header_scribbled = false;
	struct rlog__pending pending = { UINT32_MAX, 0 };
	/* Requests a daemon that died had not served are served (start --resume). */
	uint32_t flush_served = load_relaxed(&h->flush_done);
	while (!load_acquire(&h->stop_requested) && !got_signal) {
		uint64_t now = rlog__monotonic_ns();
		/* `ringlog flush` adds 1 to flush_requested and waits for
		 * flush_done to reach it: the request read here is served once
		 * this pass's blocks are written (acquire pairs with its
		 * fetch_add, so writes that returned before it are seen). */
		uint32_t flush_req = load_acquire(&h->flush_requested);
		bool flush = flush_req != flush_served;
		uint32_t timer = load_relaxed(&h->flush_timer_ms); /* `ringlog update` changes it */
		if (timer && now - last_flush >= (uint64_t)timer * 1000000u)
			flush = true;
		if (flush)
			last_flush = now;
		if (now - last_dead_check >= 1000000000u) {
			rlog__procs_check_dead(d);
			check_header(r, &header_scribbled);
			last_dead_check = now;
		}
		rlog__categories_resolve(r, &pending);
		/* Growth first: what is in use now is what woke the daemon; the
		 * drain below frees it again. */
		int released = (int)rlog__pool_grow(r, &d->pool);
		released += rlog__drain_pass(d, flush || watching ? RLOG_DRAIN_FLUSH
								   : RLOG_DRAIN_FULL);
		released_since += (uint32_t)released;
		/* After the drain: a counter block's time is later than the
		 * DATA_LOSS records the pass wrote about the same process. */
		rlog__counters_tick(ctr, now);
		/* The kernel's rings: the blocks their reader thread queued
		 * (system_ctl.h), written; the selection looked at first
		 * (`ringlog update` changes it). */
		rlog__sys_ctl_pass(sys);
		write_pass(r, d, out, name);
		/* An idle pool gives its written pages back (trim.c), once the
		 * pass's buffers are given back. */
		if (released > 0)
			last_busy = now;
		else if (now - last_busy >= (uint64_t)RLOG_TRIM_IDLE_MS * 1000000u &&
			 rlog__trim_pending(&d->trim))
			rlog__trim(&d->trim);
		rlog__drain_publish(d);
		/* Snapshots read the buffers between passes, none held. */
		watching = rlog__snap_poll(&snap, d, now);
		if (flush_req != flush_served) {
			flush_served = flush_req;
			/* Pairs with `ringlog flush`'s load_acquire(flush_done). */
			store_release(&h->flush_done, flush_req);
			rlog__futex_wake(&h->flush_done, INT_MAX);
		}

		/* The fill event: announce the sleep, look once more, sleep.
		 * seq_cst pairs with the producers' handover (thread.c). */
		store_seq_cst(&h->fill_waiting, 1);
		if (go_round(r, d, flush_served, snap.served, released)) {
			store_seq_cst(&h->fill_waiting, 0);
			continue;
		}
		rlog__futex_wait(&h->fill_waiting, 1, poll_ms(d, released_since, now - idle_since));
		idle_since = now;
		released_since = 0;
		if (exchange_acq_rel(&h->fill_waiting, 0) == 0)
			fetch_add_relaxed(&h->stats.wakeups, 1); /* a producer cleared it */
	}

	/* The counters' last values, then the stop sequence. */
	rlog__counters_pass(ctr);
	/* The system events' last records and the losses the kernel had not
	 * reported, before the stop sequence's final flush. */
	rlog__sys_ctl_stop(sys);
	rlog__daemon_stop(r, d, out, name);
	rlog__counters_close(ctr);
	rlog__sys_ctl_close(sys);
	rlog__snap_free(&snap);
	rlog__drain_free(d);
	rlog__output_free(out);
}
