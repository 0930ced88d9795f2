/*
 * sched.c - the scheduling answers of sched.h from the system events of
 * docs/FORMAT.md ("System events").  Events are named by their schemas
 * (pid 0's EVENT_SCHEMA records) and their fields by name, so that a file
 * whose kernel lacked a field still reads (the field is then 0 or empty).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sched.h"
#include "satmath.h"
#include "vec.h"

/* Task state bits of sched_switch's prev_state (docs/FORMAT.md):
 * S (interruptible) and D (uninterruptible) wait for a wake-up; X and Z
 * are a thread that exits. */
#define TASK_S 0x1
#define TASK_D 0x2
#define TASK_DEAD (0x10 | 0x20)

#define MAXF 16

/* An event's fields, decoded once. */
struct fields {
	unsigned n;
	struct rlog_value v[MAXF];
};

static const struct rlog_value *field(const struct fields *f, const char *name)
{
	for (unsigned i = 0; i < f->n; i++)
		if (strcmp(f->v[i].field->name, name) == 0)
			return &f->v[i];
	return NULL;
}

static int64_t fint(const struct fields *f, const char *name)
{
	const struct rlog_value *v = field(f, name);
	if (!v)
		return 0;
	if (v->field->type == RLOG_FIELD_I8 || v->field->type == RLOG_FIELD_I16 ||
	    v->field->type == RLOG_FIELD_I32 || v->field->type == RLOG_FIELD_I64)
		return v->v.i;
	if (v->field->type == RLOG_FIELD_STRING || v->field->type == RLOG_FIELD_BYTES ||
	    v->field->type == RLOG_FIELD_F64)
		return 0;
	return (int64_t)v->v.u;
}

/* A string field into out (cap bytes, NUL-terminated); false if absent
 * or empty. */
static bool fstr(const struct fields *f, const char *name, char *out, size_t cap)
{
	const struct rlog_value *v = field(f, name);
	if (!v || v->field->type != RLOG_FIELD_STRING || v->len == 0)
		return false;
	size_t n = v->len < cap - 1 ? v->len : cap - 1;
	memcpy(out, v->bytes, n);
	out[n] = '\0';
	return true;
}

void rlog_sched_init(struct rlog_sched *s)
{
	memset(s, 0, sizeof(*s));
	s->first_ns = INT64_MAX;
	s->last_ns = INT64_MIN;
}

void rlog_sched_free(struct rlog_sched *s)
{
	free(s->threads);
	free(s->calls);
	rlog__map_free(&s->by_tid);
	rlog__map_free(&s->by_call);
	rlog_sched_init(s);
}

/* The thread tid (created on first sight), or NULL on -ENOMEM. */
static struct rlog_sched_thread *thread(struct rlog_sched *s, uint32_t tid)
{
	uint32_t i = rlog__map_get(&s->by_tid, tid);
	if (i != RLOG__MAP_NONE)
		return &s->threads[i];
	if (rlog__vec_room(&s->threads, s->nthreads, &s->cap_threads, sizeof(*s->threads), 64) < 0)
		return NULL;
	if (rlog__map_put(&s->by_tid, tid, (uint32_t)s->nthreads) < 0)
		return NULL;
	struct rlog_sched_thread *t = &s->threads[s->nthreads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->sys_enter_ns = -1;
	return t;
}

/* The call of number id named name (created on first sight), or NULL. */
static struct rlog_sched_call *call(struct rlog_sched *s, int64_t id, const char *name,
				    uint32_t *index)
{
	uint32_t i = rlog__map_get(&s->by_call, (uint64_t)id);
	if (i == RLOG__MAP_NONE) {
		if (rlog__vec_room(&s->calls, s->ncalls, &s->cap_calls, sizeof(*s->calls), 64) < 0)
			return NULL;
		if (rlog__map_put(&s->by_call, (uint64_t)id, (uint32_t)s->ncalls) < 0)
			return NULL;
		i = (uint32_t)s->ncalls++;
		struct rlog_sched_call *c = &s->calls[i];
		memset(c, 0, sizeof(*c));
		c->id = id;
		snprintf(c->name, sizeof(c->name), "#%" PRId64, id);
	}
	struct rlog_sched_call *c = &s->calls[i];
	if (name[0] && c->name[0] == '#')
		snprintf(c->name, sizeof(c->name), "%s", name);
	*index = i;
	return c;
}

/* Ends the thread's current interval at now and starts state (the same
 * state: a cut, for the sink). */
static void enter_state(struct rlog_sched *s, struct rlog_sched_thread *t, int state, int64_t now)
{
	int64_t d = rlog__sat_sub(now, t->since_ns); /* times of a file: satmath.h */
	if (d < 0)
		d = 0;
	if (s->sink.segment && t->state != RLOG_SCHED_UNKNOWN && s->sink_err == 0)
		s->sink_err = s->sink.segment(s->sink.arg, t, t->state,
					      t->sys_enter_ns >= 0 ? s->calls[t->sys_call].name : NULL,
					      t->since_ns, rlog__sat_add(t->since_ns, d));
	if (s->sink.run && t->state == RLOG_SCHED_RUNNING && state != RLOG_SCHED_RUNNING &&
	    s->sink_err == 0)
		s->sink_err = s->sink.run(s->sink.arg, t, t->cpu, t->run_since_ns,
					  rlog__sat_add(t->since_ns, d));
	switch (t->state) {
	case RLOG_SCHED_RUNNING: t->oncpu_ns = rlog__sat_add(t->oncpu_ns, d); break;
	case RLOG_SCHED_RUNNABLE: t->runnable_ns = rlog__sat_add(t->runnable_ns, d); break;
	case RLOG_SCHED_BLOCKED: t->blocked_ns = rlog__sat_add(t->blocked_ns, d); break;
	default: break;
	}
	t->state = state;
	t->since_ns = now;
}

static void set_name(struct rlog_sched_thread *t, const struct fields *f, const char *field_name)
{
	char name[RLOG_SCHED_NAME];
	if (fstr(f, field_name, name, sizeof(name)))
		memcpy(t->name, name, sizeof(name));
}

static int on_switch(struct rlog_sched *s, const struct fields *f, int64_t now, uint32_t cpu)
{
	uint32_t prev = (uint32_t)fint(f, "prev_tid"), next = (uint32_t)fint(f, "next_tid");
	if (prev != 0) {
		struct rlog_sched_thread *t = thread(s, prev);
		if (!t)
			return -ENOMEM;
		set_name(t, f, "prev_comm");
		int64_t st = fint(f, "prev_state");
		if (st & (TASK_S | TASK_D)) {
			enter_state(s, t, RLOG_SCHED_BLOCKED, now);
		} else if (st & TASK_DEAD) {
			enter_state(s, t, RLOG_SCHED_UNKNOWN, now);
		} else {
			t->preempted++;
			enter_state(s, t, RLOG_SCHED_RUNNABLE, now);
		}
	}
	if (next != 0) {
		struct rlog_sched_thread *t = thread(s, next);
		if (!t)
			return -ENOMEM;
		set_name(t, f, "next_comm");
		t->switches++;
		if (t->state == RLOG_SCHED_RUNNING) /* its switch-out is not in the file */
			enter_state(s, t, RLOG_SCHED_UNKNOWN, now);
		enter_state(s, t, RLOG_SCHED_RUNNING, now);
		t->cpu = cpu;
		t->run_since_ns = now;
	}
	return 0;
}

static int on_wakeup(struct rlog_sched *s, const struct fields *f, int64_t now)
{
	uint32_t tid = (uint32_t)fint(f, "target_tid");
	if (tid == 0)
		return 0;
	struct rlog_sched_thread *t = thread(s, tid);
	if (!t)
		return -ENOMEM;
	set_name(t, f, "comm");
	t->wakeups++;
	/* A wake-up of a thread that runs (it had not yet slept, or woke
	 * itself) changes nothing. */
	if (t->state != RLOG_SCHED_RUNNING && t->state != RLOG_SCHED_RUNNABLE)
		enter_state(s, t, RLOG_SCHED_RUNNABLE, now);
	return 0;
}

static int on_syscall(struct rlog_sched *s, struct rlog_sched_thread *t, const struct fields *f,
		      bool enter, int64_t now)
{
	int64_t id = fint(f, "id");
	enter_state(s, t, t->state, now); /* a cut: the segment's call changes */
	if (enter) {
		char name[RLOG_SCHED_NAME] = "";
		fstr(f, "name", name, sizeof(name));
		uint32_t ci;
		struct rlog_sched_call *c = call(s, id, name, &ci);
		if (!c)
			return -ENOMEM;
		c->count++;
		t->syscalls++;
		t->sys_enter_ns = now;
		t->sys_id = id;
		t->sys_call = ci;
	} else if (t->sys_enter_ns >= 0 && t->sys_id == id) {
		struct rlog_sched_call *c = &s->calls[t->sys_call];
		int64_t d = rlog__sat_sub(now, t->sys_enter_ns);
		c->completed++;
		c->total_ns = rlog__sat_add(c->total_ns, d);
		if (d > c->max_ns)
			c->max_ns = d;
		t->syscall_ns = rlog__sat_add(t->syscall_ns, d);
		t->sys_enter_ns = -1;
	} else {
		t->sys_enter_ns = -1; /* an exit whose entry is not in the file */
	}
	return 0;
}

int rlog_sched_event(struct rlog_sched *s, struct rlog_reader *r, const struct rlog_event *ev)
{
	struct rlog_loss loss;
	if (ev->from_daemon && rlog_record_kind(ev->id, ev->flagged) == RLOG_RECORD_LOSS &&
	    rlog_event_loss(ev, &loss) == 0 && loss.cause == RLOG_LOSS_KERNEL) {
		s->loss_records++;
		s->lost_events += loss.events;
		return 0;
	}
	if (!ev->from_daemon || ev->pid != 0 || ev->id < 64 || ev->id > 127)
		return 0;
	const struct rlog_schema *sc = rlog_reader_schema(r, ev);
	if (!sc)
		return 0;
	struct fields f = { 0 };
	int n = rlog_event_field_count(sc, ev);
	if (n <= 0)
		return 0;
	size_t off = 0;
	for (unsigned i = 0; i < (unsigned)n && i < MAXF; i++) {
		if (rlog_event_field(sc, ev, i, &off, &f.v[i]) < 0)
			return 0;
		f.n = i + 1;
	}
	int64_t now = ev->time_ns;
	s->system_events++;
	if (now < s->first_ns)
		s->first_ns = now;
	if (now > s->last_ns)
		s->last_ns = now;

	const char *name = sc->name;
	uint32_t pid = (uint32_t)fint(&f, "pid"), tid = (uint32_t)fint(&f, "tid");
	struct rlog_sched_thread *t = NULL;
	if (tid != 0 && tid != UINT32_MAX) {
		t = thread(s, tid);
		if (!t)
			return -ENOMEM;
		if (pid != 0)
			t->pid = pid;
	}
	if (strcmp(name, "sched_switch") == 0) {
		s->switch_events++;
		return on_switch(s, &f, now, ev->tid) < 0 ? -ENOMEM : s->sink_err;
	}
	if (strcmp(name, "sched_wakeup") == 0 || strcmp(name, "sched_wakeup_new") == 0) {
		s->wakeup_events++;
		return on_wakeup(s, &f, now) < 0 ? -ENOMEM : s->sink_err;
	}
	if (strcmp(name, "sched_migrate_task") == 0) {
		uint32_t target = (uint32_t)fint(&f, "target_tid");
		if (target == 0 || fint(&f, "orig_cpu") == fint(&f, "dest_cpu"))
			return 0;
		struct rlog_sched_thread *m = thread(s, target);
		if (!m)
			return -ENOMEM;
		m->migrations++;
		return 0;
	}
	if (strcmp(name, "thread_rundown") == 0 && t) {
		set_name(t, &f, "comm");
		return 0;
	}
	if (strcmp(name, "task_rename") == 0) {
		struct rlog_sched_thread *m = thread(s, (uint32_t)fint(&f, "rename_tid"));
		if (!m)
			return -ENOMEM;
		set_name(m, &f, "newcomm");
		return 0;
	}
	if (!t)
		return 0;
	if (strcmp(name, "sys_enter") == 0 || strcmp(name, "sys_exit") == 0) {
		s->syscall_events++;
		return on_syscall(s, t, &f, name[4] == 'e' && name[5] == 'n', now) < 0 ? -ENOMEM
											: s->sink_err;
	}
	if (strcmp(name, "page_fault_user") == 0 || strcmp(name, "page_fault_kernel") == 0) {
		s->fault_events++;
		t->faults++;
	} else if (strcmp(name, "page_fault_major") == 0) {
		s->fault_events++;
		t->major_faults++;
	}
	return 0;
}

static int thread_cmp(const void *a, const void *b)
{
	const struct rlog_sched_thread *x = a, *y = b;
	if (x->oncpu_ns != y->oncpu_ns)
		return x->oncpu_ns > y->oncpu_ns ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int call_cmp(const void *a, const void *b)
{
	const struct rlog_sched_call *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

int rlog_sched_end(struct rlog_sched *s)
{
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i].state != RLOG_SCHED_UNKNOWN)
			enter_state(s, &s->threads[i], RLOG_SCHED_UNKNOWN, s->last_ns);
	/* The maps index the unsorted arrays: no lookup after this. */
	rlog__map_free(&s->by_tid);
	rlog__map_free(&s->by_call);
	if (s->nthreads)
		qsort(s->threads, s->nthreads, sizeof(*s->threads), thread_cmp);
	if (s->ncalls)
		qsort(s->calls, s->ncalls, sizeof(*s->calls), call_cmp);
	return s->sink_err;
}
