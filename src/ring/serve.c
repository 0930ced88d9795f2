/*
 * serve.c - the single ring's flush application as a loop (serve.h).
 */
#include "serve.h"

#include <errno.h>

#include "atomics.h"
#include "futex.h"

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
