/*
 * adopt.h - an orphaned session (its daemon died) taken over by another
 * process, which runs the daemon's own drain from where the dead daemon
 * left: `ringlog stop --force` and `ringlog recover -o FILE` (the final
 * drain, then the stop sequence), `ringlog start --resume` (a daemon
 * that goes on).  docs/SESSIONS.md, "Orphans".
 */
#ifndef RLOG_DAEMON_ADOPT_H
#define RLOG_DAEMON_ADOPT_H

#include <stdbool.h>

#include "stats.h"

/* Where rlog__daemon_recover writes, instead of the session's own output. */
struct rlog__recover_to {
	const char *path;          /* a new sequential log file */
	bool force;                /* overwrite path if it exists (else -EEXIST) */
};

/*
 * `ringlog stop NAME --force` on an orphaned session: runs the final drain its dead daemon never ran, into its log file (appended after
 * its last whole block, block numbers going on, a partly written block cut
 * off), reports the losses the file does not hold yet, closes the file and
 * removes the session.  out->stats are the file's (docs/SESSIONS.md).
 * Returns 0, -EBUSY (a daemon runs: stop it as usual), -EINVAL, -ENOENT,
 * -EPROTO (the header fails validation), -ENODATA (the file has no block
 * 0 to go on from), or the -errno of opening or reading the file (then the
 * session is left as it was).
 */
/*
 * With to (`ringlog recover NAME -o FILE`), the same, into the new file
 * to->path instead: what the session's own file does not hold yet (all of
 * each buffer if it has no file, or its file does not read), with a
 * LOG_MARKER and the names and schemas it needs, so that it decodes alone.
 */
int rlog__daemon_recover(const char *name, const struct rlog__recover_to *to,
			  struct rlog__stop_result *out);

/*
 * `ringlog start NAME --resume`, in the new daemon's process: takes over
 * orphaned session name as its daemon (lock, daemon_pid), its output going
 * on from where the dead daemon left (daemon/adopt.c), and writes to report_fd
 * an int (0 or -errno) followed by the header's last_error (256 bytes),
 * then closes it.  On success, serves the session until it is stopped
 * (rlog__daemon_serve) and returns 0; else returns the -errno:
 * -EBUSY (a daemon runs), -ESRCH (not running: nothing to resume),
 * -ENOENT, -EPROTO, or the errors of rlog__daemon_recover.
 */
int rlog__daemon_adopt_serve(const char *name, int report_fd);

#endif
