/*
 * journal.h - the metadata journal of a session without a log file: the
 * names and schemas its daemon has seen, kept in a small log file beside
 * the region (/dev/shm/ringlog-meta.<name>), so that `ringlog recover`
 * can still name a flight recorder's threads and decode its events after
 * the daemon died, when the buffers that carried them were overwritten
 * long before (docs/SESSIONS.md "Orphans", docs/FORMAT.md "Metadata
 * journal").
 */
#ifndef RLOG_DAEMON_JOURNAL_H
#define RLOG_DAEMON_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "shm.h"

struct rlog__output;

#define RLOG_JOURNAL_PREFIX "/dev/shm/ringlog-meta."

/* The journal's path for session name (lower-cased, as the region's). */
int rlog__journal_path(const char *name, char *out, size_t n);

/*
 * Writes the journal again if out's metadata cache changed since *version
 * (then updates *version): a sequential log file (file header, LOG_MARKER,
 * the cache's copy blocks) written to a temporary name and renamed over
 * the journal, so that a reader never sees half of one.  Errors are
 * ignored: the journal is a help for recovery, not part of the output.
 */
void rlog__journal_update(struct rlog__region *r, struct rlog__output *out, const char *name,
			  uint64_t *version);

/* Removes session name's journal (the session ends). */
void rlog__journal_remove(const char *name);

#endif
