/*
 * sink_net.h - the multi-host sinks as `ringlog start --sink URL` and the
 * daemon see them: the URL, the host's identity, the bound; opening the
 * one the URL names (Kafka: sink_kafka.c; chunks: sink_chunks.h).
 */
#ifndef RLOG_DAEMON_SINK_NET_H
#define RLOG_DAEMON_SINK_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sink.h"

/* --sink-buffer's default: bytes of chunks waiting for an acknowledgement. */
#define RLOG__SINK_BUFFER_DEFAULT (64ull << 20)

/* A chunk is published once it holds this many bytes, by default
 * (`--sink-chunk`; engines refuse messages of more than about 1 MiB by
 * default: Kafka's message.max.bytes, NATS's max_payload), and
 * --sink-chunk's bounds. */
#define RLOG__CHUNK_TARGET (256u * 1024u)
#define RLOG__SINK_CHUNK_MIN (64u << 10)
#define RLOG__SINK_CHUNK_MAX (4u << 20)

/* --sink-buffer's least: bytes. */
#define RLOG__SINK_BUFFER_MIN (1ull << 20)

/* Do a --sink-buffer of buffer bytes and a --sink-chunk of chunk bytes
 * (0: the default) go together: the chunk within its bounds, the buffer
 * at least its least and two chunks? */
static inline bool rlog__sink_sizes_ok(uint64_t buffer, uint64_t chunk)
{
	if (chunk != 0 && (chunk < RLOG__SINK_CHUNK_MIN || chunk > RLOG__SINK_CHUNK_MAX))
		return false;
	return buffer >= RLOG__SINK_BUFFER_MIN &&
	       buffer >= 2 * (chunk ? chunk : (uint64_t)RLOG__CHUNK_TARGET);
}

/* What `ringlog start --sink` asks for. */
struct rlog__sink_spec {
	const char *url;           /* kafka://BROKERS/TOPIC or nats://SERVERS/SUBJECT */
	uint8_t host_id[16];       /* the machine id, or --host-id */
	char host_name[256];       /* gethostname */
	uint64_t buffer;           /* --sink-buffer: bytes */
	uint32_t chunk;            /* --sink-chunk: the chunk target, bytes; 0: the default */
};

struct rlog_shm_ctl;

/* Splits URL scheme://SERVERS/NAME into servers and name (NUL-terminated,
 * at most n bytes each).  Returns 0 or -EINVAL. */
int rlog__sink_url_split(const char *url, const char *scheme, char *servers, char *name,
			 size_t n);

/* Parses 32 hex digits (dashes ignored) into id.  Returns 0 or -EINVAL. */
int rlog__host_id_parse(const char *s, uint8_t id[16]);

/*
 * The sink spec->url names (kafka://..., nats://...), for session session
 * (see rlog__sink_kafka_open).  Returns 0, or -errno with why saying what
 * is wrong (-ENOTSUP: "not built: librdkafka missing").
 */
int rlog__sink_net_open(const struct rlog__sink_spec *spec, const char *session,
			const struct rlog_log_marker *marker, uint32_t pid, uint32_t tid,
			struct rlog_shm_ctl *ctl, struct rlog__sink **out, char *why, size_t whyn);

/* Sink s (a chunk sink, from rlog__sink_net_open) joins a running
 * session whose primary took before: its chunks number from 1, the first
 * a METADATA chunk saying in its *_before what the session wrote before
 * (docs/FORMAT.md, "Chunks": a collector reads it as a late join). */
void rlog__chunks_join(struct rlog__sink *s, const struct rlog__sink_stats *before);

/* Checks spec->url's form and that this build has its engine.  Returns 0
 * or -errno with why (as rlog__sink_net_open). */
int rlog__sink_url_check(const char *url, char *why, size_t whyn);

/* Fills spec's host id (/etc/machine-id) and host name.  Returns 0 or
 * -errno (no machine id: --host-id must say one). */
int rlog__sink_spec_host(struct rlog__sink_spec *spec);

#endif
