/*
 * harness.h - helpers for tests that run real sessions: the `ringlog`
 * binary (path in $RINGLOG_BIN), its "key: value" output, and summaries of
 * the log files it writes (through the reader library).
 */
#ifndef RLOG_TEST_HARNESS_H
#define RLOG_TEST_HARNESS_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc_run.h"
#include "tap.h"
#include "ringlog.h"
#include "ringlog/reader.h"

#define H_OUT_MAX 65536

struct h_run {
	int status;               /* exit code, or 128 + signal */
	char out[H_OUT_MAX];      /* stdout */
	char err[H_OUT_MAX];      /* stderr */
};

static inline const char *h_bin(void)
{
	const char *b = getenv("RINGLOG_BIN");
	if (b == NULL) {
		fprintf(stderr, "RINGLOG_BIN is not set\n");
		exit(99);
	}
	return b;
}

/* Copies text into buf (cap bytes, NUL-terminated), cut if need be. */
static inline void h_copy(char *buf, size_t cap, const char *text)
{
	size_t n = strlen(text);
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, text, n);
	buf[n] = '\0';
}

/* Runs `ringlog ARGS...` (NULL-terminated) and captures its output (the
 * first H_OUT_MAX - 1 bytes of each), through proc_run. */
static inline int h_ringlog(struct h_run *res, const char *arg0, ...)
{
	const char *argv[32];
	int argc = 0;
	argv[argc++] = h_bin();
	va_list ap;
	va_start(ap, arg0);
	for (const char *a = arg0; a != NULL && argc < 31; a = va_arg(ap, const char *))
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	struct run r = proc_run(argv);
	res->status = r.status;
	h_copy(res->out, sizeof res->out, r.out);
	h_copy(res->err, sizeof res->err, r.err);
	run_free(&r);
	return res->status;
}

/* What a series of writes returned: written (1), lost and counted
 * (-ENOBUFS, -EBUSY), not recorded (0), anything else. */
struct h_tally {
	uint64_t written, lost, off, other;
};

static inline int h_tally_add(struct h_tally *t, int r)
{
	if (r == 1)
		t->written++;
	else if (r == -ENOBUFS || r == -EBUSY)
		t->lost++;
	else if (r == 0)
		t->off++;
	else
		t->other++;
	return r;
}

/* The same, counted from several threads and signal handlers at once. */
struct h_atomic_tally {
	_Atomic uint64_t written, lost, off, other;
};

static inline int h_atomic_tally_add(struct h_atomic_tally *t, int r)
{
	_Atomic uint64_t *c = r == 1                        ? &t->written
			      : r == -ENOBUFS || r == -EBUSY ? &t->lost
			      : r == 0                       ? &t->off
							     : &t->other;
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
	return r;
}

static inline void h_atomic_tally_reset(struct h_atomic_tally *t)
{
	atomic_store(&t->written, 0);
	atomic_store(&t->lost, 0);
	atomic_store(&t->off, 0);
	atomic_store(&t->other, 0);
}

/* The value of "key: N" in text, or UINT64_MAX if absent. */
static inline uint64_t h_kv(const char *text, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, key, kl) == 0 && p[kl] == ':')
			return strtoull(p + kl + 1, NULL, 0);
	}
	return UINT64_MAX;
}

/* A session name unique to this test process. */
/* A number of this process's own, beside its pid in session names: pids
 * wrap (pid_max is 32768 here), and a session an earlier test left behind
 * (an orphan whose daemon was killed) keeps its name, so that a later
 * process with the same pid could not start its own. */
static inline unsigned h_nonce(void)
{
	static unsigned n;
	if (n == 0) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		n = ((unsigned)ts.tv_nsec ^ (unsigned)ts.tv_sec * 2654435761u ^
		     (unsigned)getpid() * 40503u) | 1u;
	}
	return n;
}

static inline const char *h_session(const char *tag)
{
	static char name[64];
	snprintf(name, sizeof name, "t-%s-%d-%x", tag, (int)getpid(), h_nonce());
	return name;
}

static inline const char *h_path(const char *tag)
{
	static char path[256];
	snprintf(path, sizeof path, "/tmp/rlog-test-%s-%d.rlog", tag, (int)getpid());
	return path;
}

/* Starts a session; bails out of the test if it fails. */
static inline void h_start(const char *name, const char *path, const char *bufsize_kb,
			   const char *buffers)
{
	struct h_run r;
	unlink(path);
	if (bufsize_kb && buffers)
		h_ringlog(&r, "start", name, "-o", path, "--buffer-size", bufsize_kb, "--buffers",
			  buffers, NULL);
	else
		h_ringlog(&r, "start", name, "-o", path, NULL);
	if (r.status != 0) {
		printf("Bail out! ringlog start %s failed (%d): %s\n", name, r.status, r.err);
		exit(1);
	}
}

/* True for the metadata records the producer library writes on its own
 * (EVENT_SCHEMA, THREAD_NAME, PROCESS_NAME): not application events. */
static inline bool h_is_metadata(const struct rlog_event *ev)
{
	return !ev->from_daemon && !ev->flagged &&
	       (ev->id == RLOG_ID_EVENT_SCHEMA || ev->id == RLOG_ID_THREAD_NAME ||
		ev->id == RLOG_ID_PROCESS_NAME);
}

/* Per-thread tallies of a log file. */
#define H_MAX_THREADS 64
struct h_thread {
	uint32_t pid, tid;
	uint64_t events;          /* application events */
	uint64_t last_seq;        /* last 8-byte sequence payload seen */
	uint64_t order_errors;    /* sequence payloads not increasing by one */
	uint64_t loss_events, loss_bytes;
};
struct h_summary {
	int open_err;
	uint64_t events, markers, loss_records, loss_events, loss_bytes;
	uint64_t metadata;        /* EVENT_SCHEMA, THREAD_NAME, PROCESS_NAME records */
	uint64_t counter_records; /* COUNTER and COUNTER_NAME records */
	uint64_t loss_by_cause[8];
	uint64_t time_errors;     /* events out of global time order */
	size_t damage;
	size_t nthreads;
	struct h_thread th[H_MAX_THREADS];
};

static inline struct h_thread *h_thread_of(struct h_summary *s, uint32_t pid, uint32_t tid)
{
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->th[i].pid == pid && s->th[i].tid == tid)
			return &s->th[i];
	if (s->nthreads == H_MAX_THREADS)
		return NULL;
	struct h_thread *t = &s->th[s->nthreads++];
	memset(t, 0, sizeof *t);
	t->pid = pid;
	t->tid = tid;
	return t;
}

/*
 * Reads a log file.  Application events whose payload starts with a u64
 * are checked to count 1, 2, 3, ... per thread (the tests write that).
 * Metadata records are counted apart, not as events.
 */
static inline void h_summarize(const char *path, struct h_summary *s)
{
	memset(s, 0, sizeof *s);
	struct rlog_reader *rd;
	s->open_err = rlog_reader_open(path, &rd);
	if (s->open_err < 0)
		return;
	struct rlog_event ev;
	int64_t last_time = INT64_MIN;
	while (rlog_reader_next(rd, &ev) == 1) {
		if (ev.time_ns < last_time)
			s->time_errors++;
		last_time = ev.time_ns;
		if (ev.from_daemon && !ev.flagged && ev.id == RLOG_ID_LOG_MARKER) {
			s->markers++;
			continue;
		}
		if (h_is_metadata(&ev)) {
			s->metadata++;
			continue;
		}
		if (ev.from_daemon && !ev.flagged &&
		    (ev.id == RLOG_ID_COUNTER || ev.id == RLOG_ID_COUNTER_NAME)) {
			s->counter_records++; /* the daemon's samples: not events */
			continue;
		}
		struct h_thread *t = h_thread_of(s, ev.pid, ev.tid);
		if (ev.from_daemon && !ev.flagged && ev.id == RLOG_ID_DATA_LOSS) {
			struct rlog_data_loss dl;
			memcpy(&dl, ev.payload, sizeof dl);
			s->loss_records++;
			s->loss_events += dl.events;
			s->loss_bytes += dl.bytes;
			if (dl.cause < 8)
				s->loss_by_cause[dl.cause] += dl.events;
			if (t) {
				t->loss_events += dl.events;
				t->loss_bytes += dl.bytes;
			}
			continue;
		}
		s->events++;
		if (t == NULL)
			continue;
		t->events++;
		if (ev.length >= 8) {
			uint64_t seq;
			memcpy(&seq, ev.payload, 8);
			if (seq <= t->last_seq)
				t->order_errors++;
			t->last_seq = seq;
		}
	}
	s->damage = rlog_reader_damage_count(rd);
	rlog_reader_close(rd);
}

/* Reads file path whole into buf (cap bytes) and returns its size; a
 * failed test point if it cannot be read or does not fit. */
static inline size_t h_read_whole(const char *path, uint8_t *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(buf, 1, cap, f) : 0;
	if (f)
		fclose(f);
	ok(n > 0 && n < cap, "%s is read whole (%zu bytes)", path, n);
	return n;
}

/*
 * The accounting identity after `ringlog stop` (its output in *stop): the
 * daemon's events_written and events_lost are what the producers counted
 * (returns of 1, and of -ENOBUFS/-EBUSY), no buffer was corrupt, and the
 * file holds exactly those events and loss records, undamaged.
 */
static inline void h_check_identity(const struct h_run *stop, const char *path,
				    uint64_t written, uint64_t lost)
{
	ASSERT_EQ_U64(h_kv(stop->out, "events_written"), written);
	ASSERT_EQ_U64(h_kv(stop->out, "events_lost"), lost);
	ASSERT_EQ_U64(h_kv(stop->out, "corrupt_buffers"), 0);
	struct h_summary sum;
	h_summarize(path, &sum);
	ASSERT_EQ(sum.open_err, 0);
	ASSERT_EQ_U64(sum.damage, 0);
	ASSERT_EQ_U64(sum.events, written);
	ASSERT_EQ_U64(sum.loss_events, lost);
}

/* Kills session name's daemon (SIGKILL) and waits until it is gone: the
 * session is orphaned. */
static inline void h_kill_daemon(const char *name)
{
	static struct h_run q; /* 128 KiB: not on the stack */
	h_ringlog(&q, "query", name, NULL);
	pid_t pid = (pid_t)h_kv(q.out, "daemon_pid");
	ok(pid > 0 && kill(pid, SIGKILL) == 0, "killed the daemon (pid %d)", (int)pid);
	for (int i = 0; i < 2000 && kill(pid, 0) == 0; i++) {
		/* a zombie until its parent (init) reaps it */
		char p[64], st[64] = "";
		snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
		FILE *f = fopen(p, "r");
		if (f) {
			if (fgets(st, sizeof st, f) == NULL)
				st[0] = '\0';
			fclose(f);
		}
		char *c = strrchr(st, ')');
		if (c && c[1] == ' ' && (c[2] == 'Z' || c[2] == 'X'))
			break;
		nanosleep(&(struct timespec){ 0, 5000000L }, NULL);
	}
}

#endif
