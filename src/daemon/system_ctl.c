/*
 * system_ctl.c - the daemon's hold on the system events (system_ctl.h).
 */
#include "system_ctl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomics.h"
#include "clock.h"
#include "system/rundown_rec.h"
#include "system_out.h"

static bool same_props(const struct rlog__sys_props *a, const struct rlog__sys_props *b)
{
	return a->flags == b->flags && a->profile_hz == b->profile_hz && a->follow == b->follow &&
	       a->npids == b->npids && memcmp(a->pids, b->pids, a->npids * sizeof a->pids[0]) == 0;
}

/* The scope now; true when it differs from the one c holds (which it
 * then becomes); c->added[0..nadded) are its processes that the old one
 * did not have, c->nremoved the old one's that it has not. */
static bool scope_now(struct rlog__sys_ctl *c, const struct rlog__sys_props *p)
{
	bool whole;
	size_t n = rlog__sys_scope(c->r, p, c->next, c->cap, &whole);
	if (whole == c->whole && n == c->nscope && memcmp(c->next, c->scope, n * sizeof *c->next) == 0)
		return false;
	c->nadded = 0;
	for (size_t i = 0; i < n; i++) {
		bool had = false;
		for (size_t k = 0; k < c->nscope && !had; k++)
			had = c->scope[k] == c->next[i];
		if (!had)
			c->added[c->nadded++] = c->next[i];
	}
	c->nremoved = 0;
	for (size_t k = 0; k < c->nscope; k++) {
		bool has = false;
		for (size_t i = 0; i < n && !has; i++)
			has = c->scope[k] == c->next[i];
		c->nremoved += !has;
	}
	memcpy(c->scope, c->next, n * sizeof *c->next);
	c->nscope = n;
	c->whole = whole;
	return true;
}

/* With --follow, the engine's scope made the attached processes' now
 * (docs/SESSIONS.md, "System events"); true if it changed.  A process
 * that detached or exited leaves it, with its threads and the children
 * followed from it: what the rings hold already is read first, by the
 * scope it happened in, so its events up to now are recorded and none
 * after. */
static bool follow_scope(struct rlog__sys_ctl *c)
{
	if (!c->props.follow || !scope_now(c, &c->props))
		return false;
	if (c->nremoved > 0)
		rlog__sys_poll(c->s);
	rlog__sys_set_pids(c->s, c->scope, c->nscope, c->whole);
	return true;
}

/* The rundown of pids[0..npids) (whole: of every process). */
static void rundown_of(struct rlog__sys_ctl *c, const uint32_t *pids, size_t npids, bool whole)
{
	if (c->s == NULL || (!whole && npids == 0))
		return; /* --follow and nobody attached yet: nobody to name */
	uint64_t n = 0, lost = 0;
	int rc = rlog__sys_rundown_flags(whole ? NULL : pids, whole ? 0 : npids, c->props.flags,
					 c->r->hdr->tick_source, rlog__sys_to_output, c->output,
					 &n, &lost, NULL);
	c->rundown_records += n;
	c->rundown_lost += lost;
	store_relaxed(&c->r->ctl->sys_rundown_written, c->rundown_records);
	store_relaxed(&c->r->ctl->sys_rundown_lost, c->rundown_lost);
	struct rlog_shm_header *h = c->r->hdr;
	if (rc < 0 && h->last_error[0] == '\0')
		snprintf(h->last_error, sizeof h->last_error, "system events: the rundown: %s",
			 strerror(-rc));
}

static void rundown(struct rlog__sys_ctl *c)
{
	rundown_of(c, c->scope, c->nscope, c->whole);
}

/* Stops and closes the engine open, its statistics kept in done. */
static void close_engine(struct rlog__sys_ctl *c)
{
	if (c->s == NULL)
		return;
	rlog__sys_stop(c->s);
	struct rlog__sys_stats st;
	rlog__sys_get_stats(c->s, &st);
	c->done.written += st.written;
	c->done.lost += st.lost;
	c->done.filtered += st.filtered;
	c->done.handed_over += st.handed_over;
	c->done.loss_records += st.loss_records;
	c->done.clamped += st.clamped;
	c->done.bytes += st.bytes;
	rlog__sys_close(c->s);
	c->s = NULL;
	rlog__sys_publish(c->r, NULL, &c->done);
	rlog__sys_recording_set(c->r->hdr, 0);
}

/* The engine for selection p (none: closed).  One open already is
 * replaced without a gap (system.h, rlog__sys_begin): the new one is
 * opened and enabled first, the cut taken, the old one closed with its
 * records before the cut, and the new one keeps those from it on. */
static void apply(struct rlog__sys_ctl *c, const struct rlog__sys_props *p)
{
	struct rlog__sys *old = c->s;
	c->s = NULL;
	c->props = *p;
	c->known = true;
	struct rlog__sys *s = NULL, *failed = NULL;
	if (p->flags != 0) {
		scope_now(c, p);
		/* The engine's own pid list only with no follow; otherwise
		 * (and for an empty scope, which is not the whole machine) the
		 * scope is set right after the open, before any record is
		 * read. */
		struct rlog__sys_config cfg = { .flags = p->flags, .profile_hz = p->profile_hz,
						.follow = p->follow, .deferred = old != NULL };
		if (rlog__sys_start(c->r, c->output, &cfg, &s) < 0)
			s = NULL;
		if (s != NULL && rlog__sys_set_pids(s, c->scope, c->nscope, c->whole) < 0) {
			failed = s; /* closed after the old one, its counts kept */
			s = NULL;
		}
	}
	uint64_t cut = rlog__ticks(c->r->hdr->tick_source);
	if (old != NULL && s != NULL)
		rlog__sys_end(old, cut);
	c->s = old;
	close_engine(c);
	c->s = failed;
	close_engine(c);
	c->s = s;
	if (s == NULL)
		return;
	rlog__sys_begin(s, cut);
	rlog__sys_recording_set(c->r->hdr, rlog__sys_opened(c->s) & p->flags);
	rundown(c);
}

void rlog__sys_ctl_init(struct rlog__sys_ctl *c, struct rlog__region *r, void *output)
{
	memset(c, 0, sizeof *c);
	c->r = r;
	c->output = output;
	c->cap = RLOG_SYS_PIDS_MAX + (size_t)r->slot_count;
	c->scope = calloc(c->cap, sizeof *c->scope);
	c->next = calloc(c->cap, sizeof *c->next);
	c->added = calloc(c->cap, sizeof *c->added);
	if (c->scope == NULL || c->next == NULL || c->added == NULL) {
		free(c->scope);
		free(c->next);
		free(c->added);
		c->scope = c->next = c->added = NULL;
		c->cap = 0;
		/* No system events then; the session goes on without. */
		if (r->hdr->last_error[0] == '\0')
			snprintf(r->hdr->last_error, sizeof r->hdr->last_error,
				 "system events: %s", strerror(ENOMEM));
	}
	rlog__sys_recording_set(r->hdr, 0);
	rlog__sys_ctl_pass(c);
}

void rlog__sys_ctl_pass(struct rlog__sys_ctl *c)
{
	struct rlog__sys_props p;
	/* -EAGAIN (an update in the middle) and the like: the selection as
	 * it was, until the next pass reads it whole. */
	if (c->scope != NULL && rlog__sys_props_get(c->r->hdr, &p) == 0 &&
	    (!c->known || !same_props(&p, &c->props)))
		apply(c, &p);
	if (c->s == NULL)
		return;
	if (follow_scope(c))
		/* A process that attaches is named as those of the start were. */
		rundown_of(c, c->added, c->nadded, false);
	rlog__sys_poll(c->s);
	rlog__sys_publish(c->r, c->s, &c->done);
}

void rlog__sys_ctl_rundown(struct rlog__sys_ctl *c)
{
	/* (The rundown below names the processes that just attached.) */
	if (c->s != NULL)
		follow_scope(c);
	rundown(c);
}

void rlog__sys_ctl_stop(struct rlog__sys_ctl *c)
{
	close_engine(c);
}

void rlog__sys_ctl_close(struct rlog__sys_ctl *c)
{
	close_engine(c);
	free(c->scope);
	free(c->next);
	free(c->added);
	c->scope = c->next = c->added = NULL;
}
