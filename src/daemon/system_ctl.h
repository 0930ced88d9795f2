/*
 * system_ctl.h - the daemon's hold on the system events: the session's
 * selection (its properties, sysprops.h) read at every pass, the engine
 * (src/system) opened, reopened when `ringlog update` changes the
 * selection, closed when it becomes none; the --follow scope kept up with
 * the processes that attach; the rundown when system events start and
 * when a snapshot starts (docs/SESSIONS.md, "System events").
 */
#ifndef RLOG_DAEMON_SYSTEM_CTL_H
#define RLOG_DAEMON_SYSTEM_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shm.h"
#include "sysprops.h"
#include "system/system.h"

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
