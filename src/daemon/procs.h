/*
 * procs.h - the daemon's view of the attached processes and their threads'
 * slots (procs.c): which are dead, reporting the losses counted in process
 * entries and slots that go, and freeing them once those reports are
 * written.
 */
#ifndef RLOG_DAEMON_PROCS_H
#define RLOG_DAEMON_PROCS_H

#include <stdbool.h>
#include <stdint.h>

#include "ledger.h"

struct rlog__drain;
struct rlog__region;

/* The daemon's private view of one process entry. */
struct rlog__proc_view {
	struct rlog__reported reported;       /* losses already in DATA_LOSS records */
	bool dead;                            /* its process was found dead */
};

/* A process's liveness, as rlog__procs_check_dead found it. */
struct pid_verdict {
	uint32_t pid;
	bool dead;
};

/* Process reaping's state (procs.c). */
struct rlog__reaping {
	uint8_t *slot_dead;                   /* per slot: owner process found dead */
	struct rlog__proc_view *procs;        /* per process entry */
	struct pid_verdict *verdicts;         /* per process entry: rlog__procs_check_dead's
	                                         scratch */
	/* Reaped by a pass, freed once its loss records are written
	 * (rlog__drain_commit); until then a daemon that dies leaves them as
	 * they were, for `ringlog stop --force` to find. */
	uint32_t *slots_to_free, nslots_to_free;
	uint32_t *procs_to_free, nprocs_to_free;
};

/* Returns 0 or -ENOMEM (then rlog__reaping_free). */
int rlog__reaping_init(struct rlog__reaping *p, const struct rlog__region *r);
void rlog__reaping_free(struct rlog__reaping *p);

/* Finds producer processes that died (gone, zombies, reused pids): their
 * slots are reaped and their buffers drained and freed on the next pass,
 * their process entries freed. */
void rlog__procs_check_dead(struct rlog__drain *d);

/* Whether slot i's owner process, or process entry i's, was found dead. */
bool rlog__procs_slot_dead(const struct rlog__drain *d, uint32_t i);
bool rlog__procs_entry_dead(const struct rlog__drain *d, uint32_t i);

/* Slot i (thread tid) or process entry i names pid, which no process can
 * have: dead from now on, and counted as damage (rlog__procs_damaged_pid). */
void rlog__procs_slot_damaged(struct rlog__drain *d, uint32_t i, uint32_t pid, uint32_t tid);
void rlog__procs_entry_damaged(struct rlog__drain *d, uint32_t i, uint32_t pid);

/* Region damage: slot or process entry i (what names which) holds pid,
 * which no process can have: counted as a corrupt buffer, with a CORRUPT
 * DATA_LOSS record and last_error (if it is empty). */
void rlog__procs_damaged_pid(struct rlog__drain *d, const char *what, uint32_t i, uint32_t pid,
			     uint32_t tid);

/* A pass's end: frees slot i if it exited (or its process is dead) and
 * pending[i] says none of its buffers waits, after reporting its losses. */
void rlog__procs_reap_slot(struct rlog__drain *d, uint32_t i, const bool *pending);

/* Frees process entries that are EXITED (gate 0) or dead, after reporting
 * their losses. */
void rlog__procs_reap(struct rlog__drain *d);

/* Frees the slots and process entries the passes reaped (rlog__drain_commit). */
void rlog__procs_free_reaped(struct rlog__drain *d);

/* The session ends: reports every process entry's losses. */
void rlog__procs_final_losses(struct rlog__drain *d);

/* Adopting an orphan (src/daemon/adopt.c): losses the output already
 * reports for process entry i (per cause index). */
void rlog__procs_resume_entry(struct rlog__drain *d, uint32_t i, const uint64_t events[2],
			      const uint64_t bytes[2]);

/* Adds the process entries' unreported losses to *events, *bytes. */
void rlog__procs_unreported_losses(struct rlog__drain *d, uint64_t *events, uint64_t *bytes);

#endif
