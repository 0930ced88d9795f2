/*
 * sysprops.c - the system-event properties: their rules, and their copy
 * in the region (struct rlog_shm_sys, under its seqlock: seqlock.h).
 */
#define _GNU_SOURCE
#include "sysprops.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "atomics.h"
#include "seqlock.h"
#include "shm.h"

void rlog__sys_props_default(struct rlog__sys_props *p)
{
	memset(p, 0, sizeof *p);
	p->profile_hz = RLOG_SYS_PROFILE_HZ_DEFAULT;
}

int rlog__sys_profile_hz_parse(const char *s, uint32_t *hz, char *why, size_t n)
{
	char *end;
	unsigned long long v = 0;
	bool ok = s[0] >= '0' && s[0] <= '9';
	if (ok) {
		errno = 0;
		v = strtoull(s, &end, 10);
		ok = errno == 0 && *end == '\0' && v >= 1 && v <= RLOG_SYS_PROFILE_HZ_MAX;
	}
	if (!ok) {
		snprintf(why, n, "--profile-hz '%s': expected samples a second, 1 to %u", s,
			 RLOG_SYS_PROFILE_HZ_MAX);
		return -EINVAL;
	}
	*hz = (uint32_t)v;
	return 0;
}

int rlog__sys_props_apply(struct rlog__sys_props *cur, const struct rlog__sys_props *given,
			  uint32_t give, char *why, size_t n)
{
	struct rlog__sys_props p = *cur;
	if (give & RLOG__SYS_GIVE_FLAGS)
		p.flags = given->flags;
	if (give & RLOG__SYS_GIVE_PIDS) {
		p.npids = given->npids;
		memcpy(p.pids, given->pids, given->npids * sizeof p.pids[0]);
	}
	if (give & RLOG__SYS_GIVE_FOLLOW)
		p.follow = given->follow;
	if (give & RLOG__SYS_GIVE_PROFILE_HZ)
		p.profile_hz = given->profile_hz;
	/* A scope or a rate for events nobody asked for is a mistake worth a
	 * line, not a property silently kept. */
	if ((give & RLOG__SYS_GIVE_PIDS) && p.npids && p.flags == 0) {
		snprintf(why, n, "--system-pid needs --system (the system events to record)");
		return -EINVAL;
	}
	if ((give & RLOG__SYS_GIVE_FOLLOW) && p.follow && p.flags == 0) {
		snprintf(why, n, "--follow needs --system (the system events to record)");
		return -EINVAL;
	}
	if ((give & RLOG__SYS_GIVE_PROFILE_HZ) && !(p.flags & RLOG_SYS_PROFILE)) {
		snprintf(why, n, "--profile-hz needs profile in --system");
		return -EINVAL;
	}
	if (p.profile_hz < 1 || p.profile_hz > RLOG_SYS_PROFILE_HZ_MAX || p.npids > RLOG_SYS_PIDS_MAX) {
		snprintf(why, n, "system event properties out of range");
		return -EINVAL;
	}
	/* A mistyped pid would trace nothing, silently: each must exist now
	 * (kill 0: ESRCH only for none; EPERM is another user's process). */
	for (uint32_t i = 0; (give & RLOG__SYS_GIVE_PIDS) && i < p.npids; i++)
		if (p.pids[i] > (uint32_t)INT32_MAX ||
		    (kill((pid_t)p.pids[i], 0) < 0 && errno == ESRCH)) {
			snprintf(why, n, "--system-pid %u: no such process", p.pids[i]);
			return -EINVAL;
		}
	*cur = p;
	return 0;
}

/* The request page follows the header (docs/FORMAT.md, "Region layout":
 * ctl_offset = header_size = 4096, which every opener checks): the fixed
 * offset, not the region's copy of it. */
static const struct rlog_shm_sys *sys_of(const struct rlog_shm_header *h)
{
	const struct rlog_shm_ctl *ctl =
		(const struct rlog_shm_ctl *)((const uint8_t *)h + sizeof *h);
	return &ctl->sys;
}

static struct rlog_shm_sys *sys_mut(struct rlog_shm_header *h)
{
	struct rlog_shm_ctl *ctl = (struct rlog_shm_ctl *)((uint8_t *)h + sizeof *h);
	return &ctl->sys;
}

int rlog__sys_props_read(const struct rlog_shm_header *h, uint64_t *flags, uint32_t *profile_hz,
			 uint32_t *pids, size_t *npids, bool *follow)
{
	const struct rlog_shm_sys *s = sys_of(h);
	for (int tries = 0; tries < 100; tries++) {
		uint32_t seq;
		if (!rlog__seq_read_begin(&s->seq, &seq))
			continue;
		/* Acquire loads, paired with the writer's release stores: the
		 * seqlock's rule (seqlock.h, (2)). */
		uint64_t f = load_acquire(&s->flags);
		uint32_t hz = load_acquire(&s->profile_hz);
		uint32_t opt = load_acquire(&s->options);
		uint32_t k = load_acquire(&s->npids);
		size_t room = pids ? *npids : 0;
		for (uint32_t i = 0; i < k && i < room && i < RLOG_SYS_PIDS_MAX; i++)
			pids[i] = load_acquire(&s->pids[i]);
		if (!rlog__seq_read_done(&s->seq, seq))
			continue;
		if (k > RLOG_SYS_PIDS_MAX)
			return -EPROTO;
		if (flags)
			*flags = f;
		if (profile_hz)
			*profile_hz = hz;
		if (follow)
			*follow = (opt & RLOG_SYS_OPT_FOLLOW) != 0;
		if (npids)
			*npids = k;
		return pids && k > room ? -ENOBUFS : 0;
	}
	return -EAGAIN;
}

int rlog__sys_props_get(const struct rlog_shm_header *h, struct rlog__sys_props *p)
{
	size_t n = RLOG_SYS_PIDS_MAX;
	rlog__sys_props_default(p);
	int err = rlog__sys_props_read(h, &p->flags, &p->profile_hz, p->pids, &n, &p->follow);
	p->npids = err == 0 ? (uint32_t)n : 0;
	return err;
}

/* Stores p's fields, the writer's turn taken. */
static void store_fields(struct rlog_shm_sys *s, const struct rlog__sys_props *p)
{
	/* Release stores, paired with the reader's acquire loads (seqlock.h, (2)). */
	store_release(&s->flags, p->flags);
	store_release(&s->profile_hz, p->profile_hz);
	store_release(&s->options, p->follow ? RLOG_SYS_OPT_FOLLOW : 0u);
	uint32_t k = p->npids <= RLOG_SYS_PIDS_MAX ? p->npids : RLOG_SYS_PIDS_MAX;
	for (uint32_t i = 0; i < RLOG_SYS_PIDS_MAX; i++)
		store_release(&s->pids[i], i < k ? p->pids[i] : 0u);
	store_release(&s->npids, k);
}

void rlog__sys_props_put(struct rlog_shm_header *h, const struct rlog__sys_props *p)
{
	struct rlog_shm_sys *s = sys_mut(h);
	uint32_t seq = rlog__seq_write_begin(&s->seq);
	store_fields(s, p);
	rlog__seq_write_end(&s->seq, seq);
}

int rlog__sys_props_change(struct rlog_shm_header *h, const struct rlog__sys_props *given,
			   uint32_t give, char *why, size_t n)
{
	struct rlog_shm_sys *s = sys_mut(h);
	/* The writer's turn for the whole read-modify-write: two updates at
	 * once cannot each undo the other's fields. */
	uint32_t seq = rlog__seq_write_begin(&s->seq);
	struct rlog__sys_props cur;
	rlog__sys_props_default(&cur);
	cur.flags = load_relaxed(&s->flags);
	cur.profile_hz = load_relaxed(&s->profile_hz);
	cur.follow = (load_relaxed(&s->options) & RLOG_SYS_OPT_FOLLOW) != 0;
	cur.npids = load_relaxed(&s->npids);
	int err = 0;
	if (cur.npids > RLOG_SYS_PIDS_MAX)
		err = -EPROTO;
	for (uint32_t i = 0; err == 0 && i < cur.npids; i++)
		cur.pids[i] = load_relaxed(&s->pids[i]);
	if (err == 0)
		err = rlog__sys_props_apply(&cur, given, give, why, n);
	if (err == 0)
		store_fields(s, &cur);
	rlog__seq_write_end(&s->seq, seq);
	return err;
}

size_t rlog__sys_scope(const struct rlog__region *r, const struct rlog__sys_props *p,
		       uint32_t *out, size_t cap, bool *whole)
{
	size_t n = 0;
	*whole = p->npids == 0 && !p->follow;
	for (uint32_t i = 0; i < p->npids && i < RLOG_SYS_PIDS_MAX && n < cap; i++)
		out[n++] = p->pids[i];
	for (uint32_t i = 0; p->follow && i < r->slot_count && n < cap; i++) {
		if (load_relaxed(&r->procs[i].state) != RLOG_PROC_ACTIVE)
			continue;
		/* Pairs with the attaching process's store_release(pid)
		 * (src/lib/proc.c); 0 while it is being claimed: the next
		 * call finds it. */
		uint32_t pid = load_acquire(&r->procs[i].pid);
		bool dup = pid == 0;
		for (size_t k = 0; k < n && !dup; k++)
			dup = out[k] == pid;
		if (!dup)
			out[n++] = pid;
	}
	return n;
}

void rlog__sys_recording_set(struct rlog_shm_header *h, uint64_t flags)
{
	struct rlog_shm_sys *s = sys_mut(h);
	store_relaxed(&s->recording, flags);
}

uint64_t rlog__sys_recording(const struct rlog_shm_header *h)
{
	return load_relaxed(&sys_of(h)->recording);
}
