/*
 * sink_kafka.h - the Kafka sink (`ringlog start --sink kafka://BROKERS/TOPIC`):
 * a session's blocks in chunks (docs/FORMAT.md, "Chunks") produced to a
 * topic through librdkafka.  Built only when librdkafka is there
 * (RLOG_HAVE_RDKAFKA); docs/SESSIONS.md, "Multi-host sinks".
 */
#ifndef RLOG_DAEMON_SINK_KAFKA_H
#define RLOG_DAEMON_SINK_KAFKA_H

#include "sink_chunks.h"

/*
 * Creates the Kafka sink of session session for spec (its url
 * kafka://BROKERS/TOPIC): block 0 from marker (pid, tid its thread), the
 * counts published to ctl.  Connecting is librdkafka's, in the
 * background: brokers that are down are not an error here.  Returns 0,
 * or -errno with why (whyn bytes) saying what is wrong.
 */
int rlog__sink_kafka_open(const struct rlog__sink_spec *spec, const char *session,
			  const struct rlog_log_marker *marker, uint32_t pid, uint32_t tid,
			  struct rlog_shm_ctl *ctl, struct rlog__sink **out, char *why, size_t whyn);

#endif
