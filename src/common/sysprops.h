/*
 * sysprops.h - a session's system-event properties (`--system`,
 * `--system-pid`, `--follow`, `--profile-hz`; docs/SESSIONS.md): their
 * rules, and their home in the region (struct rlog_shm_sys in the request
 * page, docs/FORMAT.md), written by `ringlog start` and `ringlog update`
 * and read by the daemon at every pass and by `query` and `list`.
 */
#ifndef RLOG_COMMON_SYSPROPS_H
#define RLOG_COMMON_SYSPROPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "region_abi.h"
#include "sysflags.h"

#define RLOG_SYS_PROFILE_HZ_DEFAULT 1000u   /* ETW's default profile interval, 1 ms */
#define RLOG_SYS_PROFILE_HZ_MAX     100000u /* the kernel's own cap is
                                               kernel.perf_event_max_sample_rate */

/* The properties, copied out of (or into) the region. */
struct rlog__sys_props {
	uint64_t flags;                   /* RLOG_SYS_* bits; 0: no system events */
	uint32_t profile_hz;              /* the sampled profile's rate */
	bool follow;                      /* also the attached processes and their children */
	uint32_t npids;                   /* 0: every process of the machine */
	uint32_t pids[RLOG_SYS_PIDS_MAX]; /* --system-pid */
};

/* Which fields of a struct rlog__sys_props a command gives. */
#define RLOG__SYS_GIVE_FLAGS      0x1u /* --system */
#define RLOG__SYS_GIVE_PIDS       0x2u /* --system-pid */
#define RLOG__SYS_GIVE_FOLLOW     0x4u /* --follow / --no-follow */
#define RLOG__SYS_GIVE_PROFILE_HZ 0x8u /* --profile-hz */

/* The defaults: no system events, a profile at RLOG_SYS_PROFILE_HZ_DEFAULT,
 * the whole machine, no follow. */
void rlog__sys_props_default(struct rlog__sys_props *p);

/* Parses --profile-hz's value: samples a second, 1 to
 * RLOG_SYS_PROFILE_HZ_MAX.  Returns 0, or -EINVAL with one line in why. */
int rlog__sys_profile_hz_parse(const char *s, uint32_t *hz, char *why, size_t n);

/*
 * Sets the fields of given that give names into cur and checks the
 * result: --system-pid and --follow need system events, --profile-hz
 * needs profile, a profile rate is 1 to RLOG_SYS_PROFILE_HZ_MAX, every
 * pid given names a process that exists now.  Returns 0, or -EINVAL
 * with one line in why (cur is then unchanged).
 */
int rlog__sys_props_apply(struct rlog__sys_props *cur, const struct rlog__sys_props *given,
			  uint32_t give, char *why, size_t n);

/*
 * The daemon's accessor: the system-event properties of the region whose
 * header is h (a region mapped whole and validated by rlog__region_open,
 * whose request page follows the header: docs/FORMAT.md, "Region
 * layout"), read under their seqlock.  Every output may be NULL but
 * npids when pids is not: on entry *npids is the room in pids, on return
 * the count.  Returns 0, -EAGAIN (a writer kept the fields changing, or
 * died in the middle: try at the next pass), -EPROTO (a count above
 * RLOG_SYS_PIDS_MAX: the region was scribbled), -ENOBUFS (more pids than
 * *npids; *npids is set to the count).
 */
int rlog__sys_props_read(const struct rlog_shm_header *h, uint64_t *flags, uint32_t *profile_hz,
			 uint32_t *pids, size_t *npids, bool *follow);

/* The same, into a struct.  Returns rlog__sys_props_read's value. */
int rlog__sys_props_get(const struct rlog_shm_header *h, struct rlog__sys_props *p);

/* Stores p into the region of h (the seqlock's writer). */
void rlog__sys_props_put(struct rlog_shm_header *h, const struct rlog__sys_props *p);

/*
 * `ringlog update`: applies the fields of given that give names to the
 * region's properties (rlog__sys_props_apply's rules), as one write of
 * the seqlock.  Returns 0, -EINVAL (why says it; nothing changed) or
 * -EPROTO (a pid count past RLOG_SYS_PIDS_MAX: a scribbled region).
 */
int rlog__sys_props_change(struct rlog_shm_header *h, const struct rlog__sys_props *given,
			   uint32_t give, char *why, size_t n);

struct rlog__region;

/*
 * The processes whose system events a session keeps now, for the daemon:
 * p's pid list and, with follow, the processes attached to region r now
 * (process entries ACTIVE), each once, at most cap of them into out (the
 * children they create are the engine's to follow, from their forks).
 * *whole is set when the scope is the whole machine (no pid list, no
 * follow); else an empty list means no process yet (follow, and nobody
 * attached).  Returns the count.
 */
size_t rlog__sys_scope(const struct rlog__region *r, const struct rlog__sys_props *p,
		       uint32_t *out, size_t cap, bool *whole);

/* The daemon says which flags' sources it has open now (0: none), and
 * `query` reads it: what is selected but not recorded is visible. */
void rlog__sys_recording_set(struct rlog_shm_header *h, uint64_t flags);
uint64_t rlog__sys_recording(const struct rlog_shm_header *h);

#endif
