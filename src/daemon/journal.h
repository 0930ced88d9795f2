/*
 * journal.h - the metadata journal of a session without a log file: the
 * names and schemas its daemon has seen, kept in a small log file beside
 * the region (/dev/shm/ringlog-meta.<name>), so that `ringlog recover`
 * can still name a flight recorder's threads and decode its events after
 * the daemon died, when the buffers that carried them were overwritten
 * long before; and the ledger of the losses its snapshots reported, so
 * that the recovery reports and counts only the rest (docs/SESSIONS.md
 * "Orphans", docs/FORMAT.md "The metadata journal").
 */
#ifndef RLOG_DAEMON_JOURNAL_H
#define RLOG_DAEMON_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "shm.h"

struct rlog__drain;

/* What the journal holds now (journal.c): the metadata cache's version
 * and a digest of the snapshots' loss ledger. */
struct rlog__journal_mark {
	uint64_t version, sum;
};

#define RLOG_JOURNAL_PREFIX "/dev/shm/ringlog-meta."

/* The journal's path for session name (lower-cased, as the region's). */
int rlog__journal_path(const char *name, char *out, size_t n);

/*
 * Writes the journal of d's session (named name) again if its metadata
 * cache or its loss ledger changed since it was last written: a sequential
 * log file (file header, LOG_MARKER, the cache's copy blocks, the ledger's
 * DATA_LOSS records, journal.c) written to a temporary name and renamed
 * over the journal, so that a reader never sees half of one.  Nothing for
 * a session with a log file.  Errors are ignored: the journal is a help
 * for recovery, not part of the output.
 */
void rlog__journal_update(struct rlog__drain *d, const char *name);

/* Adds a DATA_LOSS record a snapshot wrote (payload pl, len bytes) to the
 * ledger (d->snapshots.total). */
void rlog__journal_snapshot_loss(struct rlog__drain *d, const void *pl, uint32_t len);

/* After a snapshot, before it is answered: the statistics published and
 * the journal written, so that a daemon that dies after the answer leaves
 * what `ringlog recover` needs to count exactly. */
void rlog__journal_snapshot_done(struct rlog__drain *d);

/* Removes session name's journal (the session ends). */
void rlog__journal_remove(const char *name);

#endif
