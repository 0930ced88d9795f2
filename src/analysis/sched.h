/*
 * sched.h - scheduling answers from a log file's system events
 * (docs/FORMAT.md, "System events"): per thread its time on a CPU, time
 * runnable but waiting, time blocked, switches, migrations, system calls
 * and page faults; per system call its count and total time.  `ringlog
 * stats --sched` prints them (docs/DUMP.md, "stats --sched").
 *
 *   struct rlog_sched s;
 *   rlog_sched_init(&s);
 *   while (rlog_reader_next(r, &ev) > 0)
 *       rlog_sched_event(&s, r, &ev);    // < 0: -ENOMEM
 *   rlog_sched_end(&s);                  // closes what is open at the last event
 *   ... s.threads[0..nthreads), s.calls[0..ncalls), sorted
 *   rlog_sched_free(&s);
 *
 * The intervals are the kernel's (the seed's CSwitch and ReadyThread
 * events, as ETW's CPU usage analysis uses them): on a CPU from a
 * sched_switch that switches the thread in to the one that switches it
 * out; runnable from a sched_wakeup (or a switch-out in state running,
 * a preemption) to its switch-in; blocked from a switch-out in state S or
 * D to its sched_wakeup (to its switch-in if no wake-up was recorded).
 * Nothing is counted for the time before a thread's first event; at the
 * end, each thread's open interval is closed at the time of the last
 * system event.  Tid 0 (each CPU's idle task) is left out.
 */
#ifndef RLOG_ANALYSIS_SCHED_H
#define RLOG_ANALYSIS_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "map.h"
#include "ringlog/reader.h"

#define RLOG_SCHED_NAME 64 /* a thread's or call's name, NUL included */

struct rlog_sched_thread {
	uint32_t pid, tid;          /* pid 0 if no event said it */
	char name[RLOG_SCHED_NAME]; /* the latest comm recorded, "" if none (bytes of the file) */
	int64_t oncpu_ns, runnable_ns, blocked_ns;
	uint64_t switches;          /* switches in (times it got a CPU) */
	uint64_t preempted;         /* switches out in state running */
	uint64_t migrations;        /* its sched_migrate_task events to another CPU */
	uint64_t wakeups;           /* sched_wakeup and sched_wakeup_new of it */
	uint64_t syscalls;          /* its sys_enter events */
	int64_t syscall_ns;         /* sys_enter to sys_exit, summed */
	uint64_t faults;            /* page_fault_user and page_fault_kernel */
	uint64_t major_faults;      /* page_fault_major */
	/* the state machine */
	int state;                  /* RLOG_SCHED_* */
	int64_t since_ns;
	int64_t sys_enter_ns;       /* -1: not in a system call */
	int64_t sys_id;
	uint32_t sys_call;          /* index into calls of the call it is in */
	uint32_t cpu;               /* RUNNING: the CPU (the system block's tid) */
	int64_t run_since_ns;       /* RUNNING: its switch-in */
};

#define RLOG_SCHED_UNKNOWN  0
#define RLOG_SCHED_RUNNING  1
#define RLOG_SCHED_RUNNABLE 2
#define RLOG_SCHED_BLOCKED  3

struct rlog_sched_call {
	char name[RLOG_SCHED_NAME]; /* the name in sys_enter, or "#N" (its number) */
	int64_t id;
	uint64_t count;             /* sys_enter events */
	uint64_t completed;         /* of which a sys_exit of the same thread ended */
	int64_t total_ns;           /* their sys_enter to sys_exit, summed */
	int64_t max_ns;
};

/*
 * What a streaming consumer (the Chrome converter) is told as the events
 * go, each interval when it ends (so in the order of their ends):
 *   segment  the thread was in state (RLOG_SCHED_RUNNING, _RUNNABLE,
 *            _BLOCKED) from from_ns to to_ns; call is the name of the
 *            system call it was in, or NULL.  A thread's segments are
 *            back to back and do not overlap: a running interval is cut
 *            at each sys_enter and sys_exit.
 *   run      the thread ran on cpu from its switch-in to its switch-out.
 * A callback's non-zero return stops the analysis: rlog_sched_event
 * returns it.
 */
struct rlog_sched_sink {
	void *arg;
	int (*segment)(void *arg, const struct rlog_sched_thread *t, int state, const char *call,
		       int64_t from_ns, int64_t to_ns);
	int (*run)(void *arg, const struct rlog_sched_thread *t, uint32_t cpu, int64_t from_ns,
		   int64_t to_ns);
};

struct rlog_sched {
	struct rlog_sched_sink sink; /* all NULL: no callbacks */
	int sink_err;               /* the first non-zero return of a callback */
	struct rlog_sched_thread *threads;
	size_t nthreads, cap_threads;
	struct rlog_sched_call *calls;
	size_t ncalls, cap_calls;
	struct rlog__map by_tid, by_call;
	uint64_t system_events;     /* events of IDs 64..127 read */
	uint64_t switch_events, wakeup_events, syscall_events, fault_events;
	int64_t first_ns, last_ns;  /* times of the first and last system events */
	uint64_t lost_events;       /* the kernel's losses (DATA_LOSS of cause KERNEL): */
	uint64_t loss_records;      /* switches may be missing, intervals uncertain */
};

void rlog_sched_init(struct rlog_sched *s);

/* Takes one event of rlog_reader_next (others than system events are
 * ignored).  Returns 0, or -ENOMEM. */
int rlog_sched_event(struct rlog_sched *s, struct rlog_reader *r, const struct rlog_event *ev);

/* Closes the open intervals at the last system event's time (telling the
 * sink) and sorts:
 * threads by time on a CPU (most first, then tid), calls by count (most
 * first, then name). */
int rlog_sched_end(struct rlog_sched *s); /* 0 or the sink's error */

void rlog_sched_free(struct rlog_sched *s);

#endif
