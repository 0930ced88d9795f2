/*
 * kafka_mock.h - librdkafka's mock cluster (rdkafka_mock.h) for the Kafka
 * sink and collector tests: brokers inside the test's process, on
 * loopback, that the daemon and `ringlog collect` reach through their
 * bootstrap address.
 */
#ifndef RLOG_TEST_KAFKA_MOCK_H
#define RLOG_TEST_KAFKA_MOCK_H

#include <stdio.h>
#include <stdlib.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

/* A cluster of brokers brokers, quiet, owned by the handle *rk (destroy
 * the cluster, then *rk); bails out of the test if librdkafka cannot make
 * one. */
static inline rd_kafka_mock_cluster_t *kafka_mock_start(int brokers, rd_kafka_t **rk)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char e[256];
	rd_kafka_conf_set(conf, "log_level", "0", e, sizeof e);
	*rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, e, sizeof e);
	rd_kafka_mock_cluster_t *mc = *rk ? rd_kafka_mock_cluster_new(*rk, brokers) : NULL;
	if (mc == NULL) {
		printf("Bail out! no mock cluster: %s\n", e);
		exit(1);
	}
	return mc;
}

#endif
