/*
 * serve.c - the single ring's flush application as a loop (serve.h).
 */
#include "serve.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomics.h"
#include "clock.h"
#include "futex.h"
#include "io.h"

void rlog__ring_stop_request(struct rlog__ring_stop *s)
{
	int saved = errno;
	s->requested = 1;
	_Atomic uint32_t *w = s->word;
	if (w) {
		/* An exchange, as the producer's: if we take the 1, no fill
		 * event was signalled, and the loop must not count one. */
		if (atomic_exchange_explicit(w, 0, memory_order_seq_cst) == 1)
			s->took_flag = 1;
		rlog__futex_wake(w, 1);
	}
	errno = saved;
}

static void drain(struct rlog__ring_flush *f, struct rlog__ring_serve *s)
{
	int rc = rlog__ring_flush_drain(f);
	if (s->drained)
		s->drained(s->arg, f, rc);
}

int rlog__ring_flush_serve(struct rlog__ring_flush *f, struct rlog__ring_serve *s)
{
	struct rlog__ring_stop *stop = s->stop;
	_Atomic uint32_t *set_event = &f->v->hdr->set_event;
	stop->word = set_event;
	s->wakeups = 0;
	drain(f, s);
	while (!s->once && !stop->requested) {
		/* "Done flushing": the producer may signal the next fill.
		 * (4) pairs with the producer's fence between its store of
		 * write_off and its load of set_event. */
		store_seq_cst(set_event, 1);
		atomic_thread_fence(memory_order_seq_cst);
		if (stop->requested)
			break;
		/* It filled while we drained: no need to sleep.  Else sleep
		 * until the producer turns the flag to 0 (or the timer). */
		if (!rlog__ring_flush_below_mark(f)) {
			rlog__futex_wait(set_event, 1, s->timer_ms ? (int)s->timer_ms : -1);
			if (stop->requested)
				break;
		}
		/* Not waiting while we drain.  A 0 is the producer's fill
		 * event: it cleared the flag (with an exchange, as we do, so
		 * each fill is counted on one side only) -- unless a stop
		 * request did. */
		if (exchange_acq_rel(set_event, 0) == 0 && !stop->took_flag)
			s->wakeups++;
		drain(f, s);
	}
	/* Nobody waits any more: the producer need not signal. */
	store_seq_cst(set_event, 0);
	stop->word = NULL;
	drain(f, s);
	return rlog__ring_flush_finish(f);
}

/* Creates out for the flush of the ring mapped from ring_st. */
static int open_output(const char *out, bool force, const struct stat *ring_st, char *why,
		       size_t n)
{
	struct stat st;
	if (stat(out, &st) == 0 && st.st_dev == ring_st->st_dev && st.st_ino == ring_st->st_ino) {
		snprintf(why, n, "%s: is the ring itself", out);
		return -EINVAL;
	}
	int fd = rlog__create_output(out, force ? RLOG_OUT_FORCE : 0, NULL);
	if (fd == -EEXIST)
		snprintf(why, n, "%s: file exists (use --force to overwrite)", out);
	else if (fd < 0)
		snprintf(why, n, "%s: %s", out, strerror(-fd));
	return fd;
}

int rlog__ring_app_open(struct rlog__ring_app *a, const char *path, const char *out,
			uint32_t create_size, bool force, char *why, size_t n)
{
	char msg[256];
	if (create_size) {
		int err = rlog__ring_create(path, create_size, rlog__tick_source_pick(), msg,
					    sizeof msg);
		if (err < 0 && err != -EEXIST) {
			snprintf(why, n, "%s: cannot create the ring: %s", path, msg);
			return err;
		}
	}
	int err = rlog__ring_map(path, &a->view, msg, sizeof msg);
	if (err < 0) {
		snprintf(why, n, "%s: %s", path, msg);
		return err;
	}
	struct stat ring_st;
	if (stat(path, &ring_st) < 0)
		memset(&ring_st, 0, sizeof ring_st);
	a->fd = open_output(out, force, &ring_st, why, n);
	if (a->fd < 0) {
		rlog__ring_unmap(&a->view);
		return a->fd;
	}
	const char *base = strrchr(path, '/');
	err = rlog__ring_flush_init(&a->flush, &a->view, a->fd, base ? base + 1 : path);
	if (err < 0) {
		if (err == -EBADMSG)
			snprintf(why, n, "%s: read offset %u is not an offset in the %u-byte ring",
				 path, load_relaxed(&a->view.hdr->read_off), a->view.size);
		else
			snprintf(why, n, "%s: %s", path, strerror(-err));
		close(a->fd);
		rlog__output_discard(out);
		rlog__ring_unmap(&a->view);
		return err;
	}
	return 0;
}

int rlog__ring_app_close(struct rlog__ring_app *a)
{
	rlog__ring_flush_free(&a->flush);
	int rc = close(a->fd) < 0 ? -errno : 0;
	rlog__ring_unmap(&a->view);
	return rc;
}
