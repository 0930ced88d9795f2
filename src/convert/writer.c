/*
 * writer.c - the output's writer thread (writer.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "io.h"
#include "writer.h"

struct rlog__writer {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct rlog__buf buf;  /* being written (busy), else the spare */
	int fd;
	bool busy, quit;
	int err;               /* the first write's error */
};

static void *writer_main(void *arg)
{
	struct rlog__writer *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->busy && !w->quit)
			pthread_cond_wait(&w->cv, &w->mu);
		if (!w->busy)
			break;
		pthread_mutex_unlock(&w->mu);
		/* buf and fd are the thread's while busy. */
		int rc = rlog__write_all(w->fd, w->buf.p, w->buf.len, NULL);
		pthread_mutex_lock(&w->mu);
		if (rc < 0 && w->err == 0)
			w->err = rc;
		w->buf.len = 0;
		w->busy = false;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

struct rlog__writer *rlog__writer_new(size_t cap)
{
	struct rlog__writer *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	if (!rlog__buf_need(&w->buf, cap) || pthread_mutex_init(&w->mu, NULL) != 0) {
		free(w->buf.p);
		free(w);
		return NULL;
	}
	if (pthread_cond_init(&w->cv, NULL) != 0) {
		pthread_mutex_destroy(&w->mu);
		free(w->buf.p);
		free(w);
		return NULL;
	}
	if (pthread_create(&w->th, NULL, writer_main, w) != 0) {
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		free(w->buf.p);
		free(w);
		return NULL;
	}
	return w;
}

int rlog__writer_wait(struct rlog__writer *w)
{
	pthread_mutex_lock(&w->mu);
	while (w->busy)
		pthread_cond_wait(&w->cv, &w->mu);
	int err = w->err;
	pthread_mutex_unlock(&w->mu);
	return err;
}

int rlog__writer_hand(struct rlog__writer *w, struct rlog__buf *b, int fd)
{
	pthread_mutex_lock(&w->mu);
	while (w->busy)
		pthread_cond_wait(&w->cv, &w->mu);
	int err = w->err;
	if (err == 0) {
		struct rlog__buf spare = w->buf;
		w->buf = *b;
		w->fd = fd;
		w->busy = true;
		*b = spare;
		b->len = 0;
		b->oom = false;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return err;
}

void rlog__writer_free(struct rlog__writer *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->quit = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->th, NULL);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w->buf.p);
	free(w);
}
