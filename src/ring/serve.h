/*
 * serve.h - the single ring's flush application as a loop (CeLog's
 * CeLogFlush; docs/FORMAT.md, "The single ring"): drain what the ring
 * holds, then sleep on its fill event (the futex in its header: no
 * polling) and drain each time the producer signals it, until asked to
 * stop; then drain what is left and finish the file (flush.h).  `ringlog
 * ring-flush` parses its arguments, installs the signals and prints; the
 * protocol is here.
 *
 * The sleep, the seed's handshake from the flush side (pairings in
 * ringlog/ring.h):
 *
 *   store_seq_cst(set_event, 1); fence (4)      "I am done flushing"
 *   stop requested?          -> leave
 *   free space at or above the mark? futex_wait(set_event, 1[, flush timer])
 *   exchange(set_event, 0) == 0: the producer signalled (a wake-up)
 *   drain, again
 *
 * A stop request (a signal handler's) sets the stop flag and turns
 * set_event to 0 before it wakes the futex, so a request that lands
 * between the check and the wait still ends the wait (the wait finds 0,
 * not 1); a 0 the request made is not counted as a fill event.
 */
#ifndef RLOG_RING_SERVE_H
#define RLOG_RING_SERVE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "flush.h"
#include "map.h"

/* A request to stop, shared with a signal handler. */
struct rlog__ring_stop {
	volatile sig_atomic_t requested;
	volatile sig_atomic_t took_flag; /* the request turned set_event's 1 into 0 */
	_Atomic uint32_t *volatile word; /* the ring's set_event while serving */
};

/* Asks the loop serving with s to stop.  Async-signal-safe. */
void rlog__ring_stop_request(struct rlog__ring_stop *s);

struct rlog__ring_serve {
	bool once;                /* drain once, do not sleep */
	uint64_t timer_ms;        /* drain at least this often when not signalled (0: never) */
	struct rlog__ring_stop *stop;
	/* Called after each drain with rlog__ring_flush_drain's result (the
	 * caller's messages), or NULL. */
	void (*drained)(void *arg, const struct rlog__ring_flush *f, int rc);
	void *arg;
	uint64_t wakeups;         /* out: fill events the producer signalled */
};

/*
 * Serves the ring of f (rlog__ring_flush_init done) as the top of this
 * file says, then finishes the file (rlog__ring_flush_finish).  Returns
 * what rlog__ring_flush_finish returned.
 */
int rlog__ring_flush_serve(struct rlog__ring_flush *f, struct rlog__ring_serve *s);

/* The flush application's resources: the ring mapped, its log file open
 * and the flush started. */
struct rlog__ring_app {
	struct rlog__ring_view view;
	struct rlog__ring_flush flush;
	int fd;
};

/*
 * Creates the ring at path if create_size is not 0 and it does not exist
 * (a new ring of create_size bytes on this machine's tick clock), maps it
 * (owner and layout checked: map.h), creates the log file out (0600, no
 * symlink followed; an existing one replaced only with force; never the
 * ring itself) and starts the flush (rlog__ring_flush_init).  Returns 0,
 * or -errno with why (n bytes) saying what failed, naming path or out;
 * nothing is left open or created then.
 */
int rlog__ring_app_open(struct rlog__ring_app *a, const char *path, const char *out,
			uint32_t create_size, bool force, char *why, size_t n);

/* Frees the flush, closes the log file and unmaps the ring.  Returns 0 or
 * the -errno of closing the file. */
int rlog__ring_app_close(struct rlog__ring_app *a);

#endif
