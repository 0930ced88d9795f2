/*
 * system_ctl.h - the daemon's hold on the system events: the session's
 * selection (its properties, sysprops.h) read at every pass, the engine
 * (src/system) opened, reopened when `ringlog update` changes the
 * selection, closed when it becomes none; the --follow scope kept up with
 * the processes that attach; the rundown when system events start and
 * when a snapshot starts (docs/SESSIONS.md, "System events").
 *
 * The kernel's rings are read by a thread of their own (the reader),
 * woken when a ring is a quarter full (rlog__sys_fds) or every
 * RLOG_DAEMON_POLL_MS, at a higher priority where the daemon may raise
 * it: a context-switch storm keeps the CPUs busy with the very threads it
 * records, and a reader that waits for the daemon's loop to get a CPU
 * lets the rings overflow (docs/PERFORMANCE.md, "System events").  Its
 * blocks wait in a queue that the daemon's loop writes to the output at
 * each pass (the output is the loop's alone); past RLOG_SYS_QUEUE_MAX
 * bytes the reader leaves the rings to the kernel, which counts what it
 * then loses, so the identity handed_over = written + lost holds.
 */
#ifndef RLOG_DAEMON_SYSTEM_CTL_H
#define RLOG_DAEMON_SYSTEM_CTL_H

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shm.h"
#include "sysprops.h"
#include "system/system.h"

/* The reader's queue's most (bytes of blocks), and the part past which
 * it wakes the daemon's loop rather than wait for its next pass. */
#define RLOG_SYS_QUEUE_MAX (64u << 20)
#define RLOG_SYS_QUEUE_WAKE (1u << 20)
/* The reader's nice value, where the daemon may set it (setpriority(2)). */
#define RLOG_SYS_READER_NICE (-10)

struct rlog__sys_qblock;

struct rlog__sys_ctl {
	struct rlog__region *r;
	void *output;                /* a struct rlog__output */
	struct rlog__sys *s;         /* the engine open, or NULL */
	struct rlog__sys_props props;/* the selection last acted on */
	bool known;                  /* props was read once */
	struct rlog__sys_stats done; /* the engines closed before, summed */
	uint32_t *scope;             /* the processes in the scope (rlog__sys_scope) */
	uint32_t *next;              /* room for the next look at it */
	uint32_t *added;             /* the processes the last change added */
	size_t nscope, nadded, nremoved, cap;
	bool whole;
	uint64_t rundown_records;    /* written by the rundowns so far */
	uint64_t rundown_lost;       /* found by them, no memory to hold them */
	/* The reader (while s is open): mu guards s and the queue. */
	pthread_mutex_t mu;
	pthread_t reader;
	bool reading;                /* the reader runs */
	int quit_fd;                 /* an eventfd: written, the reader returns */
	struct rlog__sys_qblock *qhead, **qtail;
	size_t qbytes;
	_Atomic uint32_t *wake;      /* the daemon's fill event (fill_waiting) */
	uint64_t qdropped;           /* events of blocks no memory could queue */
	struct pollfd *pf;           /* the reader's: each ring's fd, then quit_fd */
	nfds_t npf;
};

/* Reads the selection and opens the engine if it selects anything (with
 * its rundown).  r and output outlive c. */
void rlog__sys_ctl_init(struct rlog__sys_ctl *c, struct rlog__region *r, void *output);

/*
 * Once per daemon pass: a changed selection closes the engine (its last
 * records and losses first) and opens one for the new selection; with
 * --follow, the scope follows the attached processes (each one that
 * attaches gets its rundown); then the engine's
 * rings are read and the statistics published (those of the engines
 * closed before included: the identity holds across a reopen).
 */
void rlog__sys_ctl_pass(struct rlog__sys_ctl *c);

/* A snapshot is being taken (its buffers copied): the rundown of the
 * scope, into the output (and the system blocks that the snapshot takes
 * next).  Nothing without an engine. */
void rlog__sys_ctl_rundown(struct rlog__sys_ctl *c);

/* The session stops: the engine's last records and losses, published;
 * the engine closed (recording: none). */
void rlog__sys_ctl_stop(struct rlog__sys_ctl *c);

/* Closes the engine if open and frees c's memory. */
void rlog__sys_ctl_close(struct rlog__sys_ctl *c);

#endif
