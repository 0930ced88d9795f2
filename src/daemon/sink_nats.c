/*
 * sink_nats.c - the NATS JetStream sink: chunks (sink_chunks.h) published
 * to a subject of a JetStream stream through libnats (docs/SESSIONS.md,
 * "Multi-host sinks").
 *
 * JetStream acknowledges each message, and deduplicates by its Nats-Msg-Id
 * within the stream's window, but async publishes retried after a failure
 * land out of order.  So one sender thread of ours publishes the chunks
 * one at a time, in order, waiting for each acknowledgement (js_PublishMsg)
 * and publishing the same chunk, with the same id, again until JetStream
 * takes it: the stream holds a session's chunks in order, each once.  The
 * daemon's loop only queues a chunk (a copy) and, at each pass, counts
 * what the thread says was acknowledged: a server down never blocks the
 * drain.
 *
 *   daemon pass ── publish: queue (mutex) ──► sender thread: js_PublishMsg
 *               ◄── poll: acked list ─────── (MsgId HOSTID-SESSION-RUNID-SEQ),
 *                                             again until acknowledged
 */
#define _GNU_SOURCE
#include "sink_nats.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nats/nats.h>

struct job {
	struct job *next;
	struct rlog__chunk_ticket t;
	size_t len;
	bool ok;
	uint8_t data[];
};

struct nats {
	natsConnection *nc;
	jsCtx *js;
	char subject[256];
	char stream[256];
	char id_prefix[384];          /* HOSTID-SESSION-RUNID */
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct job *head, *tail;      /* to send, in order */
	struct job *done, *done_tail; /* sent (or given up), for the daemon */
	bool stop;                    /* give up on what is queued */
	_Atomic uint64_t retries;
};

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* The stream: created if absent (a file stream of the subject, with a
 * deduplication window of 2 minutes). */
static bool stream_ready(struct nats *n)
{
	jsStreamInfo *si = NULL;
	jsErrCode je = 0;
	if (js_GetStreamInfo(&si, n->js, n->stream, NULL, &je) == NATS_OK) {
		jsStreamInfo_Destroy(si);
		return true;
	}
	jsStreamConfig cfg;
	jsStreamConfig_Init(&cfg);
	const char *subjects[1] = { n->subject };
	cfg.Name = n->stream;
	cfg.Subjects = subjects;
	cfg.SubjectsLen = 1;
	cfg.Storage = js_FileStorage;
	cfg.Duplicates = 120LL * 1000000000LL;
	natsStatus s = js_AddStream(&si, n->js, &cfg, NULL, &je);
	if (s == NATS_OK)
		jsStreamInfo_Destroy(si);
	return s == NATS_OK;
}

/* Publishes j until JetStream acknowledges it, or stop.  Returns true if
 * it did. */
static bool send_job(struct nats *n, struct job *j, bool *ready)
{
	char id[416];
	snprintf(id, sizeof id, "%s-%llu", n->id_prefix, (unsigned long long)j->t.seq);
	for (bool tried = false;;) {
		pthread_mutex_lock(&n->mu);
		bool stop = n->stop;
		pthread_mutex_unlock(&n->mu);
		if (stop)
			return false;
		/* Not connected (yet, or again): libnats is reconnecting in its
		 * thread; a request now would only wait out its timeout, and
		 * stop would wait with it. */
		if (natsConnection_Status(n->nc) != NATS_CONN_STATUS_CONNECTED) {
			sleep_ms(50);
			continue;
		}
		/* Connected, but no stream will take the subject (JetStream off,
		 * a limit): counted as a retry, so that query shows the sink
		 * trying. */
		if (!*ready && !(*ready = stream_ready(n))) {
			atomic_fetch_add_explicit(&n->retries, 1, memory_order_relaxed);
			sleep_ms(50);
			continue;
		}
		if (tried)
			atomic_fetch_add_explicit(&n->retries, 1, memory_order_relaxed);
		tried = true;
		jsPubOptions po;
		jsPubOptions_Init(&po);
		po.MsgId = id;
		po.MaxWait = 2000;
		jsPubAck *pa = NULL;
		jsErrCode je = 0;
		natsStatus s = js_Publish(&pa, n->js, n->subject, j->data, (int)j->len, &po, &je);
		if (pa)
			jsPubAck_Destroy(pa);
		if (s == NATS_OK)
			return true;
		sleep_ms(50);
	}
}

static void *sender(void *arg)
{
	struct nats *n = arg;
	bool ready = false;
	for (;;) {
		pthread_mutex_lock(&n->mu);
		while (n->head == NULL && !n->stop)
			pthread_cond_wait(&n->cv, &n->mu);
		struct job *j = n->head;
		bool stop = n->stop;
		pthread_mutex_unlock(&n->mu);
		if (j == NULL && stop)
			return NULL;
		bool ok = !stop && send_job(n, j, &ready);
		pthread_mutex_lock(&n->mu);
		n->head = j->next;
		if (n->head == NULL)
			n->tail = NULL;
		j->ok = ok;
		j->next = NULL;
		if (n->done_tail)
			n->done_tail->next = j;
		else
			n->done = j;
		n->done_tail = j;
		pthread_cond_broadcast(&n->cv);
		pthread_mutex_unlock(&n->mu);
	}
}

static int n_publish(struct rlog__chunk_sink *c, const uint8_t *p, size_t len, const void *key,
		     size_t key_len, struct rlog__chunk_ticket *t)
{
	(void)key, (void)key_len;
	struct nats *n = c->tr_state;
	struct job *j = malloc(sizeof *j + len);
	if (j == NULL)
		return -ENOMEM;
	j->next = NULL;
	j->t = *t;
	j->len = len;
	j->ok = false;
	memcpy(j->data, p, len);
	pthread_mutex_lock(&n->mu);
	if (n->tail)
		n->tail->next = j;
	else
		n->head = j;
	n->tail = j;
	pthread_cond_broadcast(&n->cv);
	pthread_mutex_unlock(&n->mu);
	return 0;
}

static void n_poll(struct rlog__chunk_sink *c)
{
	struct nats *n = c->tr_state;
	pthread_mutex_lock(&n->mu);
	struct job *d = n->done;
	n->done = n->done_tail = NULL;
	pthread_mutex_unlock(&n->mu);
	while (d) {
		struct job *next = d->next;
		rlog__chunks_acked(c, &d->t, d->ok);
		free(d);
		d = next;
	}
}

static void n_drain(struct rlog__chunk_sink *c, int ms)
{
	struct nats *n = c->tr_state;
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += ms / 1000;
	dl.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&n->mu);
	while (n->head && pthread_cond_timedwait(&n->cv, &n->mu, &dl) == 0)
		;
	n->stop = true;
	pthread_cond_broadcast(&n->cv);
	pthread_mutex_unlock(&n->mu);
	if (n->started) {
		pthread_join(n->thread, NULL);
		n->started = false;
	}
	/* What the thread did not send: given up on. */
	struct job *j = n->head;
	n->head = n->tail = NULL;
	n_poll(c);
	while (j) {
		struct job *next = j->next;
		rlog__chunks_acked(c, &j->t, false);
		free(j);
		j = next;
	}
}

static uint64_t n_retries(struct rlog__chunk_sink *c)
{
	struct nats *n = c->tr_state;
	return atomic_load_explicit(&n->retries, memory_order_relaxed);
}

static void n_free(struct rlog__chunk_sink *c)
{
	struct nats *n = c->tr_state;
	if (n == NULL)
		return;
	if (n->started) {
		pthread_mutex_lock(&n->mu);
		n->stop = true;
		pthread_cond_broadcast(&n->cv);
		pthread_mutex_unlock(&n->mu);
		pthread_join(n->thread, NULL);
	}
	for (struct job *j = n->head, *next; j; j = next) {
		next = j->next;
		free(j);
	}
	for (struct job *j = n->done, *next; j; j = next) {
		next = j->next;
		free(j);
	}
	if (n->js)
		jsCtx_Destroy(n->js);
	if (n->nc)
		natsConnection_Destroy(n->nc);
	pthread_mutex_destroy(&n->mu);
	pthread_cond_destroy(&n->cv);
	free(n);
}

static const struct rlog__chunk_transport nats_transport = {
	.name = "nats",
	.publish = n_publish,
	.poll = n_poll,
	.drain = n_drain,
	.retries = n_retries,
	.free = n_free,
};

/* The servers "h:p,h:p" as nats:// URLs for natsOptions_SetServers. */
static int set_servers(natsOptions *o, const char *list)
{
	char buf[512], *urls[16];
	const char *servers[16];
	int k = 0;
	snprintf(buf, sizeof buf, "%s", list);
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok && k < 16;
	     tok = strtok_r(NULL, ",", &save)) {
		urls[k] = malloc(strlen(tok) + 8);
		if (urls[k] == NULL)
			break;
		sprintf(urls[k], "nats://%s", tok);
		servers[k] = urls[k];
		k++;
	}
	natsStatus s = k ? natsOptions_SetServers(o, servers, k) : NATS_ERR;
	for (int i = 0; i < k; i++)
		free(urls[i]);
	return s == NATS_OK ? 0 : -EINVAL;
}

/* Given to libnats so that a first connection that fails returns at once
 * (NATS_NOT_YET_CONNECTED) and is retried in libnats's own thread: with
 * no callback, natsConnection_Connect retries in the caller, for ever
 * with MaxReconnect -1, and the daemon's loop (a sink added by `update`)
 * or `start` would wait on a server that is down. */
static void connected(natsConnection *nc, void *closure)
{
	(void)nc, (void)closure;
}

int rlog__nats_connect(const char *servers, natsConnection **nc, jsCtx **js, char *why,
		       size_t whyn)
{
	natsOptions *o = NULL;
	if (natsOptions_Create(&o) != NATS_OK) {
		snprintf(why, whyn, "libnats: no memory");
		return -ENOMEM;
	}
	int err = set_servers(o, servers);
	if (err == 0 && (natsOptions_SetMaxReconnect(o, -1) != NATS_OK ||
			 natsOptions_SetReconnectWait(o, 100) != NATS_OK ||
			 natsOptions_SetTimeout(o, 2000) != NATS_OK ||
			 natsOptions_SetRetryOnFailedConnect(o, true, connected, NULL) != NATS_OK))
		err = -EINVAL;
	if (err < 0) {
		snprintf(why, whyn, "expected SERVERS as host:port,...");
		natsOptions_Destroy(o);
		return err;
	}
	natsStatus s = natsConnection_Connect(nc, o);
	natsOptions_Destroy(o);
	/* Not yet connected (one try, bounded by the 2 s timeout): libnats
	 * goes on trying in its thread; the sender's publishes fail and are
	 * retried until then, the chunks held up to --sink-buffer. */
	if (s != NATS_OK && s != NATS_NOT_YET_CONNECTED) {
		snprintf(why, whyn, "libnats: %s", natsStatus_GetText(s));
		return -ECONNREFUSED;
	}
	/* JetStream's API requests (stream info, a stream created) wait at
	 * most as long as a publish does, not libnats's default 5 s. */
	jsOptions jo;
	jsOptions_Init(&jo);
	jo.Wait = 2000;
	if (natsConnection_JetStream(js, *nc, &jo) != NATS_OK) {
		natsConnection_Destroy(*nc);
		*nc = NULL;
		snprintf(why, whyn, "libnats: no JetStream context");
		return -ENOMEM;
	}
	return 0;
}

void rlog__nats_stream_name(const char *subject, char *out, size_t n)
{
	size_t k = 0;
	const char *prefix = "RINGLOG_";
	for (; prefix[k] && k + 1 < n; k++)
		out[k] = prefix[k];
	for (const char *p = subject; *p && k + 1 < n; p++) {
		char ch = *p;
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			  (ch >= '0' && ch <= '9') || ch == '-' || ch == '_';
		out[k++] = ok ? ch : '_';
	}
	out[k] = '\0';
}

int rlog__sink_nats_open(const struct rlog__sink_spec *spec, const char *session,
			 const struct rlog_log_marker *marker, uint32_t pid, uint32_t tid,
			 struct rlog_shm_ctl *ctl, struct rlog__sink **out, char *why, size_t whyn)
{
	char servers[512], subject[256];
	if (rlog__sink_url_split(spec->url, "nats", servers, subject, sizeof subject) < 0) {
		snprintf(why, whyn, "expected nats://SERVERS/SUBJECT");
		return -EINVAL;
	}
	struct rlog__chunk_sink *c;
	int err = rlog__chunks_new(&nats_transport, sizeof(struct nats), spec, session, marker,
				   pid, tid, ctl, &c, why, whyn);
	if (err < 0)
		return err;
	struct nats *n = c->tr_state;
	pthread_mutex_init(&n->mu, NULL);
	pthread_cond_init(&n->cv, NULL);
	snprintf(n->subject, sizeof n->subject, "%s", subject);
	rlog__nats_stream_name(subject, n->stream, sizeof n->stream);
	int k = 0;
	for (int i = 0; i < 16; i++)
		k += snprintf(n->id_prefix + k, sizeof n->id_prefix - (size_t)k, "%02x",
			      spec->host_id[i]);
	/* The run id too: a session started again under its name numbers its
	 * chunks from 0 again, and JetStream would take them for duplicates
	 * of the last run's within its window. */
	snprintf(n->id_prefix + k, sizeof n->id_prefix - (size_t)k, "-%s-%016llx", session,
		 (unsigned long long)c->run_id);
	/* libnats's threads (its library's, the connection's) and ours. */
	sigset_t old;
	rlog__sink_threads_mask(&old);
	err = rlog__nats_connect(servers, &n->nc, &n->js, why, whyn);
	/* A chunk larger than the server's max_payload would be refused
	 * at every try: such a --sink-chunk is refused here (the server's
	 * own figure once connected, else its default, 1 MiB). */
	int64_t maxp = err == 0 ? natsConnection_GetMaxPayload(n->nc) : 0;
	if (maxp <= 0)
		maxp = 1 << 20;
	if (err == 0 && (int64_t)c->max_chunk > maxp) {
		snprintf(why, whyn, "--sink-chunk %uK: chunks of up to %u bytes exceed the server's "
			 "max_payload (%lld)", c->target >> 10, c->max_chunk, (long long)maxp);
		err = -EMSGSIZE;
	}
	if (err == 0 && (err = -pthread_create(&n->thread, NULL, sender, n)) < 0)
		snprintf(why, whyn, "no sender thread");
	rlog__sink_threads_unmask(&old);
	if (err < 0)
		goto fail;
	n->started = true;
	*out = &c->base;
	return 0;
fail:
	c->base.ops->free(&c->base);
	return err;
}
