/*
 * wake.h - the wake registry: how a process waiting for a session that does
 * not exist yet learns, without a thread of ringlog's, that it has started.
 *
 * One POSIX shared-memory object per user, /ringlog-wake-v2.<uid>
 * (/dev/shm/ringlog-wake-v2.<uid>, mode 0600), holding 256 counters and 256
 * masks (struct rlog_wake_registry, docs/FORMAT.md).  Counter h counts the
 * active sessions whose name hashes to h (rlog__wake_hash): `ringlog start`
 * adds 1 once the session is ACTIVE, its daemon subtracts 1 when it has
 * stopped; mask h is ~0 while counter h is not 0, else 0.  A producer
 * waiting for session NAME points its enable-mask pointer (rlog__mask) at
 * mask hash(NAME): while it is 0 every write returns at its first load, and
 * rlog_enabled() says no, as with no session at all; once a session of
 * that hash is active every category passes, writes take the slow path,
 * which attaches (src/lib/late.c), and from then on the session's own
 * mask decides.  A daemon that dies leaves its count behind; a hash
 * shared by two names costs the waiting process a slow path per write (and
 * an attach attempt every 100 ms) while the other session runs.  Neither
 * loses or mislabels an event.
 */
#ifndef RLOG_COMMON_WAKE_H
#define RLOG_COMMON_WAKE_H

#include <stdint.h>

#include "region_abi.h"

/* FNV-1a (32 bits) of the lower-cased name, modulo RLOG_WAKE_WORDS. */
uint32_t rlog__wake_hash(const char *name);

/*
 * Maps this user's registry, creating it if it does not exist (mode 0600).
 * Returns it, or NULL (no /dev/shm, an object there that is not a
 * registry of this version, or one that is not this user's own: owned by
 * another uid or open to group or others, rlog__shm_owner_check; late
 * attach is then not available, and nothing else changes).  Async-signal-safe (shm_open, ftruncate, mmap).
 */
struct rlog_wake_registry *rlog__wake_open(void);

/* Adds delta (+1 or -1) to the counter of session name's hash.  Returns 0,
 * or -ENOENT if there is no registry to count in. */
int rlog__wake_add(const char *name, int delta);

#endif
