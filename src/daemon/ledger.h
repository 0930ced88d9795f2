/*
 * ledger.h - what the daemon has put in DATA_LOSS records of a pair of
 * cumulative loss counters (a slot's, a process entry's, or all the
 * snapshots'), shared by the parts that report losses: the drain
 * (drain.c), process reaping (procs.c), overwrite mode (overwrite.c) and
 * snapshots (snapshot.c, journal.c).
 */
#ifndef RLOG_DAEMON_LEDGER_H
#define RLOG_DAEMON_LEDGER_H

#include <stdint.h>

/* Losses per cause index (0: NO_BUFFER or NO_SLOT, 1: NESTED) already in
 * DATA_LOSS records. */
struct rlog__reported {
	uint64_t events[2], bytes[2];
};

/* Overwritten events of a slot (its ow_* counters, docs/FORMAT.md
 * "Overwrite mode") already in OVERWRITTEN records. */
struct rlog__overwritten {
	uint64_t events, bytes, buffers;
};

#endif
