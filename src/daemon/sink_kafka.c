/*
 * sink_kafka.c - the Kafka sink: chunks (sink_chunks.h) produced to a
 * topic through librdkafka (docs/SESSIONS.md, "Multi-host sinks").
 *
 * librdkafka runs its own threads (one per broker and a main one); the
 * daemon's loop only hands it chunks (rd_kafka_produce copies and returns
 * at once) and serves the delivery reports with rd_kafka_poll(rk, 0) in
 * its pass, so a broker that is down never blocks the drain.  Settings:
 * enable.idempotence (the broker drops a retried duplicate and keeps
 * order), acks=all, compression lz4, message.timeout.ms 0 (a chunk waits
 * for the brokers as long as it must: the bound is --sink-buffer, counted
 * in sink_chunks.c), the key the host id and the session (one host's
 * session stays in one partition, so in order).
 */
#define _GNU_SOURCE
#include "sink_kafka.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

struct kafka {
	rd_kafka_t *rk;
	rd_kafka_topic_t *rkt;
	_Atomic uint64_t retries;      /* from the statistics callback (librdkafka's thread
	                                  or ours: relaxed) */
};

/* The sum of every broker's "txretries" in librdkafka's statistics. */
static uint64_t sum_retries(const char *json)
{
	uint64_t sum = 0;
	const char *key = "\"txretries\":";
	for (const char *p = strstr(json, key); p; p = strstr(p, key)) {
		p += strlen(key);
		sum += strtoull(p, NULL, 10);
	}
	return sum;
}

static int on_stats(rd_kafka_t *rk, char *json, size_t len, void *opaque)
{
	(void)rk;
	(void)len;
	struct rlog__chunk_sink *c = opaque;
	struct kafka *k = c->tr_state;
	atomic_store_explicit(&k->retries, sum_retries(json), memory_order_relaxed);
	return 0; /* librdkafka frees json */
}

/* Delivery reports, served by rd_kafka_poll in the daemon's thread. */
static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	(void)rk;
	struct rlog__chunk_sink *c = opaque;
	struct rlog__chunk_ticket *t = m->_private;
	if (t == NULL)
		return;
	if (m->err) {
		snprintf(c->base.st.what, sizeof c->base.st.what, "producing to Kafka: %.60s",
			 rd_kafka_err2str(m->err));
	}
	rlog__chunks_acked(c, t, m->err == RD_KAFKA_RESP_ERR_NO_ERROR);
	free(t);
}

static int k_publish(struct rlog__chunk_sink *c, const uint8_t *p, size_t len, const void *key,
		     size_t key_len, struct rlog__chunk_ticket *t)
{
	struct kafka *k = c->tr_state;
	struct rlog__chunk_ticket *copy = malloc(sizeof *copy);
	if (copy == NULL)
		return -ENOMEM;
	*copy = *t;
	if (rd_kafka_produce(k->rkt, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY, (void *)p, len,
			     key, key_len, copy) < 0) {
		free(copy);
		return -ENOBUFS;
	}
	return 0;
}

static void k_poll(struct rlog__chunk_sink *c)
{
	struct kafka *k = c->tr_state;
	rd_kafka_poll(k->rk, 0);
}

static void k_drain(struct rlog__chunk_sink *c, int ms)
{
	struct kafka *k = c->tr_state;
	rd_kafka_flush(k->rk, ms);
	/* What is still queued fails now, each with a delivery report; those
	 * of messages in flight or in a broker thread's queue come once that
	 * thread has seen the purge, later than a short flush may wait.
	 * Served until every chunk handed over has its report (bounded):
	 * sink acked + sink lost = written at stop. */
	rd_kafka_purge(k->rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		rd_kafka_poll(k->rk, 10);
		if (c->queued == 0 && rd_kafka_outq_len(k->rk) == 0)
			break;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >=
		    RLOG__SINK_PURGE_MS)
			break;
	}
	/* Reports that never came: their chunks are lost all the same. */
	rlog__chunks_abandon(c);
}

static uint64_t k_retries(struct rlog__chunk_sink *c)
{
	struct kafka *k = c->tr_state;
	return atomic_load_explicit(&k->retries, memory_order_relaxed);
}

static void k_free(struct rlog__chunk_sink *c)
{
	struct kafka *k = c->tr_state;
	if (k == NULL)
		return;
	if (k->rkt)
		rd_kafka_topic_destroy(k->rkt);
	if (k->rk)
		rd_kafka_destroy(k->rk);
	free(k);
}

static const struct rlog__chunk_transport kafka_transport = {
	.name = "kafka",
	.publish = k_publish,
	.poll = k_poll,
	.drain = k_drain,
	.retries = k_retries,
	.free = k_free,
};

static int conf_set(rd_kafka_conf_t *conf, const char *name, const char *value, char *err,
		    size_t errlen)
{
	return rd_kafka_conf_set(conf, name, value, err, errlen) == RD_KAFKA_CONF_OK ? 0 : -EINVAL;
}

int rlog__sink_kafka_open(const struct rlog__sink_spec *spec, const char *session,
			  const struct rlog_log_marker *marker, uint32_t pid, uint32_t tid,
			  struct rlog_shm_ctl *ctl, struct rlog__sink **out, char *why, size_t whyn)
{
	char brokers[512], topic[512];
	if (rlog__sink_url_split(spec->url, "kafka", brokers, topic, sizeof brokers) < 0) {
		snprintf(why, whyn, "expected kafka://BROKERS/TOPIC");
		return -EINVAL;
	}
	struct rlog__chunk_sink *c;
	int err = rlog__chunks_new(&kafka_transport, sizeof(struct kafka), spec, session, marker,
				   pid, tid, ctl, &c, why, whyn);
	if (err < 0)
		return err;
	struct kafka *k = c->tr_state;
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char kerr[256] = "";
	/* The client's own limit above the largest chunk (its target and one
	 * block more); the brokers' message.max.bytes must be too
	 * (docs/SESSIONS.md, "Multi-host sinks"). */
	char maxb[24];
	snprintf(maxb, sizeof maxb, "%u", c->max_chunk > 4194304u ? c->max_chunk : 4194304u);
	err = -EINVAL;
	if (conf_set(conf, "bootstrap.servers", brokers, kerr, sizeof kerr) < 0 ||
	    conf_set(conf, "enable.idempotence", "true", kerr, sizeof kerr) < 0 ||
	    conf_set(conf, "acks", "all", kerr, sizeof kerr) < 0 ||
	    conf_set(conf, "compression.type", "lz4", kerr, sizeof kerr) < 0 ||
	    conf_set(conf, "message.timeout.ms", "0", kerr, sizeof kerr) < 0 ||
	    conf_set(conf, "linger.ms", "5", kerr, sizeof kerr) < 0 ||
	    /* librdkafka's own bound stays above ours: --sink-buffer decides. */
	    conf_set(conf, "queue.buffering.max.kbytes", "2097151", kerr, sizeof kerr) < 0 ||
	    conf_set(conf, "queue.buffering.max.messages", "10000000", kerr, sizeof kerr) < 0 ||
	    conf_set(conf, "message.max.bytes", maxb, kerr, sizeof kerr) < 0 ||
	    conf_set(conf, "statistics.interval.ms", "1000", kerr, sizeof kerr) < 0 ||
	    conf_set(conf, "log_level", "0", kerr, sizeof kerr) < 0) {
		rd_kafka_conf_destroy(conf);
		snprintf(why, whyn, "librdkafka: %s", kerr);
		goto fail;
	}
	rd_kafka_conf_set_opaque(conf, c);
	rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
	rd_kafka_conf_set_stats_cb(conf, on_stats);
	sigset_t old;
	rlog__sink_threads_mask(&old);
	k->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, kerr, sizeof kerr);
	rlog__sink_threads_unmask(&old);
	if (k->rk == NULL) {
		rd_kafka_conf_destroy(conf);
		snprintf(why, whyn, "librdkafka: %s", kerr);
		goto fail;
	}
	k->rkt = rd_kafka_topic_new(k->rk, topic, NULL);
	if (k->rkt == NULL) {
		snprintf(why, whyn, "librdkafka: topic %s: %s", topic,
			 rd_kafka_err2str(rd_kafka_last_error()));
		goto fail;
	}
	*out = &c->base;
	return 0;
fail:
	c->base.ops->free(&c->base);
	return err;
}
