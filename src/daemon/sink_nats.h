/*
 * sink_nats.h - the NATS JetStream sink (`ringlog start --sink
 * nats://SERVERS/SUBJECT`): a session's chunks (docs/FORMAT.md, "Chunks")
 * published with acknowledgement and a message id each (JetStream's
 * deduplication) through libnats.  Built only when libnats is there
 * (RLOG_HAVE_NATS); docs/SESSIONS.md, "Multi-host sinks".
 */
#ifndef RLOG_DAEMON_SINK_NATS_H
#define RLOG_DAEMON_SINK_NATS_H

#include "sink_chunks.h"

/*
 * Creates the NATS sink of session session for spec (its url
 * nats://SERVERS/SUBJECT); as rlog__sink_kafka_open.  The stream
 * RINGLOG_<SUBJECT> (rlog__nats_stream_name) is created on first use if no
 * stream holds the subject.
 */
int rlog__sink_nats_open(const struct rlog__sink_spec *spec, const char *session,
			 const struct rlog_log_marker *marker, uint32_t pid, uint32_t tid,
			 struct rlog_shm_ctl *ctl, struct rlog__sink **out, char *why, size_t whyn);

/* The stream's name for subject: "RINGLOG_" and the subject, each
 * character but [A-Za-z0-9_-] as '_'. */
void rlog__nats_stream_name(const char *subject, char *out, size_t n);

#ifdef RLOG_HAVE_NATS
#include <nats/nats.h>
/* Connects to servers (host:port,...) for JetStream, reconnecting
 * forever in the background.  Returns 0 or -errno with why. */
int rlog__nats_connect(const char *servers, natsConnection **nc, jsCtx **js, char *why,
		       size_t whyn);
#endif

#endif
