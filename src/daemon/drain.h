/*
 * drain.h - moving events from the session's buffers to the daemon's
 * output (sink.h: the log file, real-time consumers).
 */
#ifndef RLOG_DAEMON_DRAIN_H
#define RLOG_DAEMON_DRAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "drain_workers.h"
#include "journal.h"
#include "ledger.h"
#include "overwrite.h"
#include "procs.h"
#include "shm.h"
#include "sink.h"
#include "snapshot.h"
#include "trim.h"

enum rlog__drain_mode {
	RLOG_DRAIN_FULL,    /* buffers handed over (FULL) only */
	RLOG_DRAIN_FLUSH,   /* also the committed part of buffers still owned */
	RLOG_DRAIN_FINAL,   /* everything, whatever the order: the session ends */
};

/* The daemon's private view of one buffer: never stored in the region. */
struct rlog__buffer_view {
	uint32_t read_off;   /* bytes of the buffer already written to the file */
	uint64_t cursor;     /* 64-bit time after the last record read */
	bool started;        /* first chunk seen (losses reported, identity copied) */
	bool poisoned;       /* failed validation: the rest is skipped */
	bool held;           /* overwrite mode: the daemon holds it (reader = 1) until given back */
	bool giving_back;    /* drained whole, in the release list: held until given back */
	uint32_t pid, tid, slot;
	/* Overwrite mode: which contents read_off is about, and what of them
	 * the drain has delivered (the descriptor's delivered_*). */
	uint32_t gen;
	uint32_t events_read, bytes_read;
	struct rlog__snapshot_mark snapshot; /* where the snapshots left it (snapshot.h) */
};

/* The daemon's private view of one producer slot. */
struct rlog__slot_view {
	struct rlog__reported reported;       /* losses already in DATA_LOSS records */
	uint64_t next_seq;                    /* next buffer of this slot to drain */
	uint64_t last_time;                   /* time of its last record in the file */
	uint32_t pid, tid;
	bool seen;
	bool reaped;                          /* its losses are reported; freed at commit */
	struct rlog__overwritten overwritten; /* overwrite mode: in OVERWRITTEN records */
	uint64_t drained_whole;               /* overwrite mode: seq + 1 of the last buffer
	                                         drained whole to the file, or 0 */
};

/* What a daemon that died had written and lost before this one took its
 * session over (adopt.c: the file's events and DATA_LOSS records, or
 * its last statistics); added to what rlog__drain_publish publishes. */
struct rlog__drain_base {
	uint64_t events, bytes, buffers, lost_events, lost_bytes;
	uint64_t log_buffers_lost, realtime_buffers_lost, corrupt_buffers;
	uint64_t events_overwritten; /* of threads whose slots are gone */
};

/* A pass's scratch, per buffer or per slot (drain.c). */
struct rlog__pass_scratch {
	uint32_t *order;             /* candidate buffer indices, in (slot, seq) order */
	uint32_t *scan_slot;         /* per buffer: slot as read (and checked) by the scan */
	uint64_t *scan_seq;          /* per buffer: seq as read by the scan */
	bool *pending;               /* per slot: a buffer of it waits */
	bool *exited;                /* per slot: exited before the scan */
	uint64_t *held_seq;          /* per slot: lowest seq held back for order */
};

/*
 * The daemon's state: the drain's own (the pool as it sees it, the pass,
 * what it wrote and reported), and one member per part that owns the rest
 * (its header, its file): overwrite mode, the flight recorder and
 * snapshots, process reaping, trimming, the journal.
 */
struct rlog__drain {
	struct rlog__region *r;
	struct rlog__output *out;
	uint32_t tick_source;
	uint64_t start_ticks;        /* the session's time origin (the header's sync_ticks,
	                                written by this daemon) */
	uint32_t pool;               /* buffers in the pool (NumberOfBuffers): the daemon's
	                                own count, never read back from the region */
	struct rlog__buffer_view *bufs;
	struct rlog__slot_view *slots;
	uint8_t *copy;               /* one record (at most a buffer): what the decode's slow
	                                path copies out of the region and checks */
	struct rlog__pass_scratch scratch;
	struct rlog__drain_workers workers; /* the extra drain threads (drain_workers.h) */
	struct {
		uint64_t count;      /* passes so far (the statistics' passes) */
		uint32_t budget;     /* RLOG_DRAIN_FULL: at most this many buffers drained
		                        whole per pass (RLOG__PASS_BYTES of them) */
		uint32_t next_slot;  /* RLOG_DRAIN_FULL: the slot a pass starts from (the
		                        one where the last pass's budget ran out) */
	} pass;
	struct rlog__drain_base base;
	uint64_t reported_events;    /* events in every DATA_LOSS written */
	uint64_t reported_bytes;
	uint64_t corrupt_buffers;
	/* Buffers the passes drained whole, given back once their blocks are
	 * written (rlog__drain_commit).  Until then a daemon that dies leaves
	 * them as they were, for `ringlog stop --force` to find. */
	struct {
		uint32_t *idx;
		uint32_t n;
	} release;
	bool flush_failed;           /* overwrite mode: a write in the middle of a pass failed
	                                (daemon.c reports it after the pass's) */
	uint32_t test_hold_stop;     /* RINGLOG_TEST_HOLD_STOP (a test hook, drain.c) */
	struct rlog__overwrite overwrite;       /* overwrite.h */
	struct rlog__flight_recorder recorder;  /* snapshot.h */
	struct rlog__snapshots snapshots;       /* snapshot.h */
	struct rlog__watch watch;               /* snapshot.h: the trigger's event */
	struct rlog__reaping reaping;           /* procs.h */
	struct rlog__trim_state trim;           /* trim.h */
	struct rlog__journal_mark journal;      /* journal.h */
};

/* A pass that only drains FULL buffers stops after this many bytes of
 * them: the daemon writes them and gives them back, then passes again at
 * once (daemon.c), so that under a sustained load buffers go back to the
 * producers a slice at a time, not once the whole pool is written
 * (docs/PERFORMANCE.md, "Drain throughput"). */
#define RLOG__PASS_BYTES (2u << 20)

/* What rlog__drain_decode found in a buffer's bytes. */
struct rlog__chunk {
	uint32_t size;          /* bytes of whole, valid records from the start */
	uint32_t records, events, event_bytes;
	uint64_t start, cursor; /* the time before the first record, after the last */
	bool bad;               /* a record failed validation at size */
};

/* Returns 0 or -ENOMEM. */
int rlog__drain_init(struct rlog__drain *d, struct rlog__region *r, struct rlog__output *out,
		     uint32_t tick_source);
void rlog__drain_free(struct rlog__drain *d);

/* Sorts order[0 .. n) (buffer indices) by (slot[idx], seq[idx]), private
 * copies of what a scan read: each thread's buffers in the order it took
 * them. */
void rlog__sort_by_slot_seq(uint32_t *order, uint32_t n, const uint32_t *slot,
			   const uint64_t *seq);

/* Overwrite mode: holds buffer idx (overwrite.h) if it still holds what a
 * scan saw there (slot, seq).  Returns false, not holding it, if not. */
bool rlog__drain_hold_scanned(struct rlog__drain *d, uint32_t idx, uint32_t slot, uint64_t seq);

/* One pass over the pool: its blocks go to the output.  Returns the number
 * of buffers drained whole, which rlog__drain_commit gives back. */
int rlog__drain_pass(struct rlog__drain *d, enum rlog__drain_mode mode);

/* After the output's flush: gives back the buffers the passes drained,
 * frees the slots and process entries they reaped. */
void rlog__drain_commit(struct rlog__drain *d);

/* Adopting an orphan (ringlog stop --force, recover, start --resume:
 * src/daemon/adopt.c): buffer idx (OWNED or FULL, of slot) had its first
 * read_off bytes written to the file by the daemon that died; the drain
 * goes on from there, its time cursor at cursor.  Returns 0 or -EINVAL
 * (out of range). */
int rlog__drain_resume_buffer(struct rlog__drain *d, uint32_t idx, uint32_t slot,
			      uint32_t read_off, uint64_t cursor);

/* Adopting an orphan: losses the output already reports for slot i (per
 * cause index); for a process entry, rlog__procs_resume_entry. */
void rlog__drain_resume_slot(struct rlog__drain *d, uint32_t i, const uint64_t events[2],
			     const uint64_t bytes[2], uint64_t last_time);

/* Adopting an orphan: the next buffer of slot i to drain is its buffer
 * next_seq (the dead daemon drained the ones before). */
void rlog__drain_resume_seq(struct rlog__drain *d, uint32_t i, uint64_t next_seq);

/* Adopting an orphan: overwritten events of slot i the output already
 * reports (OVERWRITTEN DATA_LOSS records: events, bytes, buffers). */
void rlog__drain_resume_overwritten(struct rlog__drain *d, uint32_t i, uint64_t events, uint64_t bytes,
			   uint64_t buffers);

/* Decodes n bytes of a buffer's records at data (in the region: 4-aligned,
 * n a multiple of 4; each word is read once, or copied out before it is
 * decoded, drain.c), written by thread pid/tid, the time cursor at cursor
 * before them; their metadata records go to the output's cache, and an
 * event the snapshot trigger watches for sets watch_hit. */
void rlog__drain_decode(struct rlog__drain *d, const uint8_t *data, uint32_t n, uint32_t pid,
			uint32_t tid, uint64_t cursor, struct rlog__chunk *c);

/* Walks the common records (rlog__record_plain) of data from byte size up
 * to n, or to the first record of another kind, the time cursor at
 * *cursor before them; adds the records (all events) and their bytes to
 * *count and *bytes, moves *cursor past them, returns where it stopped.
 * Reads nothing but data: the drain threads run it (drain_workers.h). */
uint32_t rlog__drain_plain(const uint8_t *data, uint32_t size, uint32_t n, uint64_t *cursor,
			   uint32_t *count, uint32_t *bytes);

/* Writes a daemon block holding one DATA_LOSS record (nothing if events
 * and bytes are 0, unless cause is CORRUPT), and counts it as reported. */
void rlog__drain_loss_block(struct rlog__drain *d, uint32_t pid, uint32_t tid, uint64_t time,
			    uint64_t events, uint64_t bytes, uint32_t cause);

/* A DATA_LOSS record, header and the longest payload. */
struct rlog__loss_rec {
	uint8_t bytes[8 + sizeof(struct rlog_data_loss_range)];
};

/* Lays out in *rec the record of a DATA_LOSS whose payload is len bytes at
 * pl (struct rlog_data_loss first, len <= 48), and in *b a daemon block of
 * it for thread pid/tid at time; returns the payload's first 24 bytes. */
struct rlog_data_loss rlog__loss_block_make(struct rlog__loss_rec *rec, uint32_t pid, uint32_t tid,
					    uint64_t time, const void *pl, uint32_t len,
					    struct rlog__out_block *b);

/* Writes a daemon block holding one DATA_LOSS of cause OVERWRITTEN (struct
 * rlog_data_loss_range): blocks buffers of the thread, events and bytes,
 * between the ticks first (the record's time) and last. */
void rlog__drain_range_block(struct rlog__drain *d, uint32_t pid, uint32_t tid, uint64_t first,
			     uint64_t events, uint64_t bytes, uint64_t blocks, uint64_t last);

/* Writes a DATA_LOSS record (a daemon block for pid/tid at time) for each
 * cause c whose cumulative counters ev[c]/by[c] exceed what rep says was
 * reported, with cause causes[c], and moves rep up.  Counters only grow: a
 * smaller value (a stale snapshot, or hostile) reports nothing. */
void rlog__drain_report_increase(struct rlog__drain *d, uint32_t pid, uint32_t tid, uint64_t time,
				 const uint64_t ev[2], const uint64_t by[2],
				 struct rlog__reported *rep, const uint32_t causes[2]);

/* Adds to *events and *bytes what the counters ev, by (shared memory) hold
 * beyond rep. */
void rlog__drain_add_increase(const _Atomic uint64_t ev[2], const _Atomic uint64_t by[2],
			      const struct rlog__reported *rep, uint64_t *events, uint64_t *bytes);

/* The session's tick source, now. */
uint64_t rlog__drain_now(struct rlog__drain *d);

/* The session is ending: DATA_LOSS records for every loss not yet
 * reported (slots still active, orphans, log-write losses). */
void rlog__drain_final_losses(struct rlog__drain *d);

/* Reports log-write losses once the file takes blocks again (final: at
 * stop, also those of a sequential file at its maximum size, into the room
 * kept for them). */
void rlog__drain_report_log_losses(struct rlog__drain *d, bool final);

/* Publishes statistics into the region header. */
void rlog__drain_publish(struct rlog__drain *d);

/* True if at least n buffers are FULL (seq_cst loads: the fill-event
 * check). */
bool rlog__drain_full_at_least(struct rlog__drain *d, uint32_t n);

#endif
