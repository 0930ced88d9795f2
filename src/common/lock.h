/*
 * lock.h - a session's daemon lock: an exclusive flock(2) on the session's
 * shared-memory object, taken by its daemon at start and held until it
 * exits (the kernel drops it when the daemon dies, however it dies).
 *
 *   ringlog start ─► daemon: rlog__daemon_lock ─► held ... exit / crash: released
 *   ringlog list, stop: rlog__daemon_lock(name) succeeds?  the daemon is gone:
 *                       the session is orphaned (and the caller holds the
 *                       lock: stop --force recovers it, list lets it go)
 *
 * A pid can be reused; a lock cannot outlive its holder.
 */
#ifndef RLOG_COMMON_LOCK_H
#define RLOG_COMMON_LOCK_H

/* Takes session name's daemon lock without waiting.  Returns the
 * descriptor that holds it (close it to let go), -EWOULDBLOCK (a daemon, or
 * a recovery, holds it), -ENOENT (no such session), -EINVAL, or another
 * -errno. */
int rlog__daemon_lock(const char *name);

#endif
