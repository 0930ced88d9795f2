/*
 * test_system_trigger - a flight recorder of system events (docs/SESSIONS.md,
 * "Snapshots" and "System events"): a session in overwrite mode with no
 * file, `--system cswitch`, and a snapshot trigger on an application event.
 * This thread writes a numbered marker, sleeps 2 ms, twenty times, then the
 * trigger's event.  The trigger's snapshot must hold:
 *
 *   - each marker and the trigger exactly once;
 *   - between each marker and the next (the trigger after the last), a
 *     switch of this thread out and then one into it: the sleep, recorded
 *     on the timeline of the application's events;
 *   - in particular the last switch into this thread before the trigger,
 *     later than the last marker and earlier than the trigger;
 *   - the rundown (a thread_rundown of this thread, named), made when the
 *     trigger fired (after the trigger's event), not when it was armed.
 *
 * And the statistics at stop: sys_handed_over = sys_written + sys_lost +
 * sys_filtered, with every system event of the snapshot among sys_written.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "sys_stats.h"
#include "ringlog.h"
#include "ringlog/reader.h"
#include "tap.h"

#define MARK_ID 1024
#define TRIGGER_ID 2000
#define SLEEPS 20
#define RUNDOWN_TID 0xffffffffu

struct seen {
	uint32_t me;
	int marks[SLEEPS + 2];     /* by seq: how many times found */
	uint64_t at[SLEEPS + 2];   /* by seq: its time (seq SLEEPS + 1: the trigger) */
	int extras;
	uint64_t sys;              /* kernel records (not the rundown's) */
	int rundown_me;            /* thread_rundown records of this thread, named */
	uint64_t rundown_at;       /* the latest one's time */
	/* this thread's switches: times out and in */
	uint64_t out[4096], in[4096];
	int nout, nin;
	/* every sched_switch, in time order: CPU, time, prev_tid, next_tid */
	struct sw { uint32_t cpu; uint64_t t; uint32_t prev, next; } *all;
	size_t nall, cap;
};

static void read_snapshot(const char *path, struct seen *s)
{
	struct rlog_reader *rd;
	BAIL_IF(rlog_reader_open(path, &rd) < 0, "cannot open %s", path);
	struct rlog_event ev;
	int rc;
	while ((rc = rlog_reader_next(rd, &ev)) > 0) {
		if (!ev.from_daemon && (ev.id == MARK_ID || ev.id == TRIGGER_ID)) {
			uint64_t v[2];
			if (ev.length != sizeof v) {
				s->extras++;
				continue;
			}
			memcpy(v, ev.payload, sizeof v);
			bool trig = ev.id == TRIGGER_ID;
			if (v[0] != s->me || (trig ? v[1] != SLEEPS + 1 : (v[1] < 1 || v[1] > SLEEPS))) {
				s->extras++;
				continue;
			}
			s->marks[v[1]]++;
			s->at[v[1]] = ev.ticks;
			continue;
		}
		if (!ev.from_daemon || ev.id < 64 || ev.id > 127)
			continue;
		const struct rlog_schema *sc = rlog_reader_schema(rd, &ev);
		BAIL_IF(sc == NULL, "system event %u without a schema", ev.id);
		struct rlog_value f[8];
		int n = rlog_event_field_count(sc, &ev);
		BAIL_IF(n < 2, "%s: %d fields", sc->name, n);
		size_t off = 0;
		for (int i = 0; i < n && i < 8; i++)
			BAIL_IF(rlog_event_field(sc, &ev, (unsigned)i, &off, &f[i]) != 1, "field");
		if (ev.tid == RUNDOWN_TID) {
			if (strcmp(sc->name, "thread_rundown") == 0 && f[1].v.u == s->me &&
			    f[2].len == 8 && memcmp(f[2].bytes, "trig-thr", 8) == 0) {
				s->rundown_me++;
				if (ev.ticks > s->rundown_at)
					s->rundown_at = ev.ticks;
			}
			continue;
		}
		s->sys++;
		if (strcmp(sc->name, "sched_switch") != 0)
			continue;
		if (s->nall == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 4096;
			s->all = realloc(s->all, s->cap * sizeof *s->all);
			BAIL_IF(s->all == NULL, "realloc");
		}
		s->all[s->nall++] = (struct sw){ ev.tid, ev.ticks, (uint32_t)f[2].v.i, (uint32_t)f[5].v.i };
		/* pid tid prev_tid prev_state prev_prio next_tid ... */
		if ((uint32_t)f[2].v.i == s->me && s->nout < 4096)
			s->out[s->nout++] = ev.ticks;
		if ((uint32_t)f[5].v.i == s->me && s->nin < 4096)
			s->in[s->nin++] = ev.ticks;
	}
	BAIL_IF(rc != 0, "reading %s: %d", path, rc);
	rlog_reader_close(rd);
}

/* The first time in t[0..n) in (lo, hi), or 0. */
static uint64_t first_in(const uint64_t *t, int n, uint64_t lo, uint64_t hi)
{
	uint64_t best = 0;
	for (int i = 0; i < n; i++)
		if (t[i] > lo && t[i] < hi && (best == 0 || t[i] < best))
			best = t[i];
	return best;
}

static uint64_t last_in(const uint64_t *t, int n, uint64_t lo, uint64_t hi)
{
	uint64_t best = 0;
	for (int i = 0; i < n; i++)
		if (t[i] > lo && t[i] < hi && t[i] > best)
			best = t[i];
	return best;
}

/*
 * A switch into this thread that the kernel did not report: the switch
 * before its next switch out (after time o), on that CPU, went to a task
 * X != this thread that is never seen switched out.  Some tasks' switches
 * out are never delivered to perf by the kernel at all (on the test
 * machine: the threads of its PID 1, the sandbox's runner; a per-task
 * sched_switch counter on one of them counts 0 while its own context
 * switch count rises), and every switch into this thread from one of them
 * is missing though nothing was lost (the kernel's counts agree).  Those
 * are not ringlog's to record.
 */
static bool unreported_in(const struct seen *s, uint64_t o)
{
	uint64_t o2 = first_in(s->out, s->nout, o, UINT64_MAX);
	size_t at = s->nall;
	for (size_t i = 0; i < s->nall && at == s->nall; i++)
		if (s->all[i].t == o2 && s->all[i].prev == s->me)
			at = i;
	if (o2 == 0 || at == s->nall)
		return false;
	const struct sw *before = NULL;
	for (size_t i = at; i-- > 0 && before == NULL;)
		if (s->all[i].cpu == s->all[at].cpu)
			before = &s->all[i];
	if (before == NULL || before->next == s->me)
		return false;
	for (size_t i = 0; i < s->nall; i++)
		if (s->all[i].prev == before->next)
			return false;
	diag("a switch into this thread before %llu was not reported: the switch before it on CPU "
	     "%u went to %u, whose switches out the kernel never reports",
	     (unsigned long long)o2, s->all[at].cpu, before->next);
	return true;
}

static bool wait_snapshots(const char *name, int want)
{
	char line[32];
	snprintf(line, sizeof line, "snapshots: %d\n", want);
	for (int i = 0; i < 500; i++) {
		struct h_run r;
		h_ringlog(&r, "query", name, NULL);
		if (strstr(r.out, line) != NULL)
			return true;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return false;
}

int main(void)
{
	h_sys_require();
	prctl(PR_SET_NAME, "trig-thr");
	static struct seen s;
	s.me = (uint32_t)syscall(SYS_gettid);
	char snap[256];
	const char *name = h_sys_session("systrig", snap, sizeof snap);
	struct h_run r;
	h_ringlog(&r, "start", name, "--mode", "overwrite", "--system", "cswitch", NULL);
	BAIL_IF(r.status != 0, "start --system: %s", r.err);
	ASSERT_EQ(rlog_attach(name), 0);
	h_ringlog(&r, "snapshot", name, "-o", snap, "--on-event", "2000", NULL);
	BAIL_IF(r.status != 0, "snapshot --on-event: %s", r.err);

	for (uint64_t i = 1; i <= SLEEPS; i++) {
		uint64_t v[2] = { s.me, i };
		ASSERT_EQ(rlog_write(MARK_ID, v, sizeof v), 1);
		struct timespec ts = { 0, 2 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	uint64_t v[2] = { s.me, SLEEPS + 1 };
	ASSERT_EQ(rlog_write(TRIGGER_ID, v, sizeof v), 1);
	ok(wait_snapshots(name, 1), "the trigger's snapshot was written");
	rlog_detach();
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	struct h_sys st = h_sys_stats(&r);
	uint64_t sw = st.written;

	read_snapshot(snap, &s);
	ASSERT_EQ(s.extras, 0);
	int once = 0;
	for (int i = 1; i <= SLEEPS + 1; i++)
		once += s.marks[i] == 1;
	ASSERT_EQ(once, SLEEPS + 1); /* each marker and the trigger, exactly once */
	ok(s.sys > 0 && s.sys <= sw, "the snapshot's system events (%llu) are among sys_written",
	   (unsigned long long)s.sys);
	ok(s.rundown_me >= 1, "the snapshot names this thread (thread_rundown)");
	/* Its rundown is the one of the moment the trigger fired, not the
	 * one of when it was armed (older than every marker). */
	ok(s.rundown_at > s.at[SLEEPS + 1], "the snapshot's rundown (%llu) is after the trigger (%llu)",
	   (unsigned long long)s.rundown_at, (unsigned long long)s.at[SLEEPS + 1]);
	diag("this thread's switches in the snapshot: %d out, %d in", s.nout, s.nin);
	/* Each sleep: out after its marker, then in before the next one. */
	int slept = 0, unreported = 0;
	for (int i = 1; i <= SLEEPS; i++) {
		uint64_t o = first_in(s.out, s.nout, s.at[i], s.at[i + 1]);
		bool in = o != 0 && first_in(s.in, s.nin, o, s.at[i + 1]) != 0;
		if (o != 0 && !in && unreported_in(&s, o)) {
			in = true;
			unreported++;
		}
		slept += in;
	}
	diag("sleeps whose switch in the kernel did not report: %d", unreported);
	/* The kernel's own losses (counted in sys_lost and in DATA_LOSS
	 * records) can be those switches: then the check is a TODO point,
	 * as test_system_events's checks of every event are. */
	const char *lost_why = st.lost > 0 ? "the kernel lost events (counted in sys_lost)" : NULL;
	if (lost_why)
		todo_ok(slept == SLEEPS, lost_why, "every sleep's switch out and in (%d of %d)", slept,
			SLEEPS);
	else
		ASSERT_EQ(slept, SLEEPS);
	uint64_t lo = first_in(s.out, s.nout, s.at[SLEEPS], s.at[SLEEPS + 1]);
	uint64_t last = last_in(s.in, s.nin, s.at[SLEEPS], s.at[SLEEPS + 1]);
	if (last == 0 && lo != 0 && unreported_in(&s, lo))
		ok(1, "the last switch into the triggering thread: one the kernel did not report");
	else {
		bool between = last != 0 && last > s.at[SLEEPS] && last < s.at[SLEEPS + 1];
		const char *fmt = "the last switch into the triggering thread (%llu) lies between the "
				  "last marker (%llu) and the trigger (%llu)";
		unsigned long long a = last, b = s.at[SLEEPS], c = s.at[SLEEPS + 1];
		if (lost_why)
			todo_ok(between, lost_why, fmt, a, b, c);
		else
			ok(between, fmt, a, b, c);
	}
	free(s.all);
	unlink(snap);
	return done_testing();
}
