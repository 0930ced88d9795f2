/*
 * sink_chunks.h - what every multi-host sink shares (Kafka: sink_kafka.c,
 * NATS JetStream): drained blocks packed into chunks (docs/FORMAT.md,
 * "Chunks"), numbered as the session's log file numbers its blocks, the
 * metadata rule, the bound on what waits for an acknowledgement, and the
 * counts `query` shows.  A transport (struct rlog__chunk_transport) only
 * publishes a chunk and later says whether the engine acknowledged it.
 *
 *   block()  ──► the block, numbered (seq 1, 2, ... after block 0), into
 *                the chunk being built; a chunk of target bytes
 *                (--sink-chunk) or more is published at once
 *   flush()  ──► the chunk being built is published (the end of a pass)
 *   publish  ──► queued + the chunk's bytes > --sink-buffer?  dropped:
 *                counted lost, its block numbers given to the next
 *                blocks, and the next chunk published starts with a
 *                DATA_LOSS of cause SINK for it (and is a METADATA chunk)
 *   ack      ──► acknowledged: chunks, bytes, events acked; a failure
 *                after the engine took it (at stop): lost
 *   finish() ──► the last chunk, then a FINAL chunk (block 0 with the
 *                refined LOG_MARKER), then up to RLOG__SINK_DRAIN_MS for
 *                the acknowledgements; what is still waiting is lost
 */
#ifndef RLOG_DAEMON_SINK_CHUNKS_H
#define RLOG_DAEMON_SINK_CHUNKS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/chunk.h"
#include "sink.h"
#include "sink_net.h"

/* How long stop waits for the engine to acknowledge what is queued. */
#define RLOG__SINK_DRAIN_MS 10000

/* After it, how long stop serves the reports of what it gave up on. */
#define RLOG__SINK_PURGE_MS 5000

/* One chunk handed to a transport: what counts when it is acknowledged. */
struct rlog__chunk_ticket {
	uint64_t seq;
	uint64_t bytes, events, event_bytes;
	uint32_t blocks;           /* thread blocks in it */
	uint32_t numbered;         /* blocks in it numbered in the file's sequence */
	uint64_t told_events, told_bytes, told_blocks; /* the loss its DATA_LOSS tells */
};

struct rlog__chunk_sink;

struct rlog__chunk_transport {
	const char *name;
	/* Hands the len bytes at p (key: key_len bytes) to the engine, with
	 * ticket t (the transport gives it back to rlog__chunks_acked).
	 * Returns 0, or -errno (not taken: the chunk is lost). */
	int (*publish)(struct rlog__chunk_sink *c, const uint8_t *p, size_t len, const void *key,
		       size_t key_len, struct rlog__chunk_ticket *t);
	/* Serves the engine's acknowledgements without blocking. */
	void (*poll)(struct rlog__chunk_sink *c);
	/* Waits up to ms for what is queued; then gives up on the rest (each
	 * then acknowledged as failed). */
	void (*drain)(struct rlog__chunk_sink *c, int ms);
	/* Requests the client library sent again so far. */
	uint64_t (*retries)(struct rlog__chunk_sink *c);
	void (*free)(struct rlog__chunk_sink *c);
};

struct rlog__chunk_sink {
	struct rlog__sink base;
	const struct rlog__chunk_transport *tr;
	void *tr_state;                   /* the transport's */
	struct rlog_shm_ctl *ctl;         /* where the counts are published, or NULL */
	uint8_t host_id[16];
	char host_name[256];
	char session[RLOG_NAME_MAX + 1];
	uint64_t bound;                   /* --sink-buffer */
	uint32_t target;                  /* --sink-chunk: publish at this many bytes */
	uint32_t max_chunk;               /* the largest chunk: target, its last block
	                                     (a buffer), the headers */
	struct rlog__chunk_writer w;      /* the chunk being built */
	bool building;                    /* w holds a chunk begun */
	struct rlog__chunk_ticket cur;    /* what it counts */
	uint64_t next_chunk;              /* the next chunk's seq */
	uint64_t run_id;                  /* this run of the session (docs/FORMAT.md, "Chunks") */
	uint64_t events_pub, event_bytes_pub, blocks_pub; /* in the chunks published so far */
	uint64_t next_block;              /* the next block's seq (block 0 is 0) */
	uint64_t since_meta;              /* chunks since the last METADATA one */
	uint64_t meta_version;            /* the metadata cache's version it last carried */
	bool need_meta;
	uint8_t marker_rec[8 + sizeof(struct rlog_log_marker)];
	uint32_t marker_size, pid, tid;
	uint64_t marker_ticks;
	uint64_t last_time;               /* base time of the last block */
	/* Lost and not yet told in a chunk: */
	uint64_t unreported_events, unreported_bytes, unreported_blocks;
	uint8_t key[16 + RLOG_NAME_MAX];
	size_t key_len;
	uint8_t *tmp;                     /* one block being numbered */
	size_t tmp_cap;
	/* The counts (published to ctl). */
	uint64_t acked, acked_bytes, acked_events, queued, queued_bytes, lost, lost_events;
	uint64_t lost_bytes;
	uint64_t queued_events, queued_event_bytes; /* in the chunks queued */
	bool abandoned;                   /* rlog__chunks_abandon: reports ignored */
	uint32_t test_nomem, test_begins; /* RINGLOG_TEST_SINK_NOMEM (sink_chunks.c) */
};

/* Sets up c (its base.ops set here) for session session, block 0's record
 * from marker (pid, tid its thread).  Returns 0 or -errno. */
int rlog__chunks_init(struct rlog__chunk_sink *c, const struct rlog__chunk_transport *tr,
		      const struct rlog__sink_spec *spec, const char *session,
		      const struct rlog_log_marker *marker, uint32_t pid, uint32_t tid,
		      struct rlog_shm_ctl *ctl);

/* Allocates a chunk sink of transport tr with state_size bytes of zeroed
 * transport state (c->tr_state) and sets it up (rlog__chunks_init).
 * Returns 0 with *out, or -errno with why (whyn bytes). */
int rlog__chunks_new(const struct rlog__chunk_transport *tr, size_t state_size,
		     const struct rlog__sink_spec *spec, const char *session,
		     const struct rlog_log_marker *marker, uint32_t pid, uint32_t tid,
		     struct rlog_shm_ctl *ctl, struct rlog__chunk_sink **out, char *why,
		     size_t whyn);

/* The transport: the engine acknowledged t (ok) or gave up on it. */
void rlog__chunks_acked(struct rlog__chunk_sink *c, const struct rlog__chunk_ticket *t, bool ok);

/* The transport at stop, once it served every report it could: what is
 * still queued is counted lost, and reports that come later are ignored. */
void rlog__chunks_abandon(struct rlog__chunk_sink *c);

/* Around creating a client library's threads (librdkafka's, libnats's,
 * the NATS sender): every signal blocked in them, so that SIGTERM and
 * SIGINT reach the daemon's thread and wake its loop at once. */
void rlog__sink_threads_mask(sigset_t *old);
void rlog__sink_threads_unmask(const sigset_t *old);

#endif
