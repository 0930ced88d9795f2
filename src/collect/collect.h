/*
 * collect.h - `ringlog collect URL -o DIR`: a session's chunks (docs/FORMAT.md,
 * "Chunks"), read back from the engine a multi-host sink published them
 * to, written as each host's session's log file in DIR
 * (docs/SESSIONS.md, "Multi-host sinks").
 *
 *   consume (Kafka: a consumer group)  ──► chunk decoded; its file (host
 *                                          id, session, run id) found or begun,
 *                                          locked (DIR/.NAME.lock), its state
 *                                          read again (another collector may
 *                                          have written it)
 *     seq below the file's next   ──► a duplicate: dropped
 *     seq above it                ──► JetStream: held (NAK with a delay)
 *                                     until it waited the gap wait; then,
 *                                     and at once on Kafka, a gap: a
 *                                     DATA_LOSS (cause SINK) of exactly
 *                                     what the missing chunks held (the
 *                                     *_before counts), the blocks after
 *                                     renumbered to follow
 *     a METADATA chunk            ──► its block 0 and copies dropped,
 *                                     but in a file's first chunk (not
 *                                     seq 0: the copies numbered 1, 2, ...
 *                                     then the DATA_LOSS of what came before)
 *                                     and after a gap (the copies numbered
 *                                     next: what the lost chunks defined)
 *     a FINAL chunk               ──► block 0 and the header's LOG_MARKER
 *                                     rewritten (the refined frequency)
 *     the blocks                  ──► appended as they are
 *   each batch: the files fsynced, then their state (DIR/.NAME.state:
 *   next chunk, length), closed and unlocked, then the offsets committed
 *   (Kafka: also for partitions revoked, before another member takes
 *   them; a commit a rebalance refuses counted): a collector killed
 *   at any point resumes from the last commit, cuts each file back to
 *   its state, and the sequence drops what it had already written.
 */
#ifndef RLOG_COLLECT_COLLECT_H
#define RLOG_COLLECT_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rlog__collect_opts {
	const char *url;      /* kafka://BROKERS/TOPIC or nats://SERVERS/SUBJECT */
	const char *dir;      /* where the files go (exists) */
	const char *group;    /* the consumer group; NULL: "ringlog-collect" */
	bool follow;          /* keep consuming; else stop at the end of what is there */
	volatile int *stop;   /* set (a signal) to stop, or NULL */
	/* JetStream: how long a chunk after ones its file lacks waits for
	 * them (another collector of the durable may hold them) before they
	 * are a gap; 0: RLOG__COLLECT_GAP_WAIT_MS. */
	uint64_t gap_wait_ms;
	uint64_t *commits_refused; /* out (or NULL): Kafka commits a rebalance refused */
};

#define RLOG__COLLECT_GAP_WAIT_MS 10000

/* One file written, for the CLI to print. */
struct rlog__collect_file {
	char path[4096];
	uint64_t chunks, duplicates, gaps, bytes;
};

typedef void rlog__collect_report_fn(const struct rlog__collect_file *f, void *arg);

/*
 * Collects as opts say; at the end calls report for each file it wrote
 * to.  Returns 0, or -errno with why (whyn bytes) saying what failed
 * (-ENOTSUP: "not built: librdkafka missing").
 */
int rlog__collect(const struct rlog__collect_opts *opts, rlog__collect_report_fn *report,
		  void *arg, char *why, size_t whyn);

#endif
