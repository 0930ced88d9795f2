/*
 * cmd_ring_flush.c - `ringlog ring-flush PATH -o FILE [--once]
 * [--flush-timer MS] [--create KB] [--force]`: the flush application of a
 * single ring (include/ringlog/ring.h) in a file or shared-memory object.
 *
 * It drains what the ring holds, then, unless --once, sleeps on the ring's
 * fill event (the futex in its header: no polling) and drains each time
 * the producer signals it, until SIGINT or SIGTERM; then it drains what is
 * left, writes the last DATA_LOSS records, closes FILE cleanly and prints
 * its statistics.  The work is src/ring/flush.c's; this file is the loop,
 * the signals and the messages.
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
 * SIGINT/SIGTERM set the stop flag and turn set_event to 0 before they
 * wake the futex, so a signal that lands between the check and the wait
 * still ends the wait (the wait finds 0, not 1); a 0 the handler made is
 * not counted as a fill event.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "atomics.h"
#include "cli.h"
#include "clock.h"
#include "futex.h"
#include "ring/flush.h"
#include "ring/map.h"
#include "io.h"

static const struct cli_opt opts[] = {
	{ "--output", "-o", true }, { "--once", NULL, false },   { "--force", NULL, false },
	{ "--flush-timer", NULL, true }, { "--create", NULL, true }, { NULL, NULL, false },
};

static volatile sig_atomic_t stop_flag;
static volatile sig_atomic_t stop_took_flag; /* the handler turned set_event's 1 into 0 */
static _Atomic uint32_t *stop_word;          /* the ring's set_event, once mapped */

static void on_stop(int sig)
{
	(void)sig;
	int saved = errno;
	stop_flag = 1;
	if (stop_word) {
		/* An exchange, as the producer's: if we take the 1, no fill
		 * event was signalled, and the loop must not count one. */
		if (atomic_exchange_explicit(stop_word, 0, memory_order_seq_cst) == 1)
			stop_took_flag = 1;
		rlog__futex_wake(stop_word, 1);
	}
	errno = saved;
}

/* Prints the corruptions found since the last call (one line each; a drain
 * finds at most one). */
static void print_corruption(const char *path, const struct rlog__ring_flush *f, uint64_t *seen)
{
	if (f->corrupt_count != *seen)
		cli_error("ring-flush: %s: %s", path, f->error);
	*seen = f->corrupt_count;
}

/* One drain; a failed write of the log file is said once per errno. */
static void drain(const char *path, const char *out, struct rlog__ring_flush *f, uint64_t *seen,
		  int *last_errno)
{
	int rc = rlog__ring_flush_drain(f);
	print_corruption(path, f, seen);
	if (rc < 0 && rc != -EBADMSG && -rc != *last_errno) {
		*last_errno = -rc;
		/* Before the file has its header nothing is taken from the
		 * ring; after, blocks the file refuses are counted lost. */
		cli_error("ring-flush: %s: %s (%s)", out, strerror(-rc),
			  f->lf_open ? "the events are counted lost"
				     : "nothing drained: the events stay in the ring");
	}
}

static int open_output(const char *out, bool force, const struct stat *ring_st)
{
	struct stat st;
	if (stat(out, &st) == 0 && st.st_dev == ring_st->st_dev && st.st_ino == ring_st->st_ino)
		return cli_error("ring-flush: %s: is the ring itself", out), -1;
	int fd = rlog__create_output(out, force ? RLOG_OUT_FORCE : 0, NULL);
	if (fd < 0) {
		if (fd == -EEXIST)
			cli_error("ring-flush: %s: file exists (use --force to overwrite)", out);
		else
			cli_error("ring-flush: %s: %s", out, strerror(-fd));
		return -1;
	}
	return fd;
}

int cmd_ring_flush(int argc, char **argv)
{
	const char *out = NULL;
	bool once = false, force = false;
	uint64_t timer_ms = 0, create_kb = 0;
	struct cli_args a;
	cli_args_init(&a, "ring-flush", opts, 1, argc, argv);
	while (cli_args_next(&a)) {
		const char *val = a.value;
		if (cli_is(&a, "--output")) {
			out = val;
		} else if (cli_is(&a, "--once")) {
			once = true;
		} else if (cli_is(&a, "--force")) {
			force = true;
		} else if (cli_is(&a, "--flush-timer")) {
			if (!cli_parse_u64(val, 0, 3600000, &timer_ms))
				return cli_error("ring-flush: --flush-timer '%s': expected 0 to "
						 "3600000 milliseconds", val);
		} else if (cli_is(&a, "--create")) {
			if (!cli_parse_u64(val, 1, RLOG_RING_MAX_SIZE / 1024, &create_kb))
				return cli_error("ring-flush: --create '%s': expected 1 to %u KiB",
						 val, RLOG_RING_MAX_SIZE / 1024);
		}
	}
	if (!cli_args_need(&a, 1, "PATH"))
		return 2;
	const char *path = a.pos[0];
	if (out == NULL)
		return cli_usage_error("ring-flush", "missing -o FILE");

	char why[256];
	if (create_kb) {
		int err = rlog__ring_create(path, (uint32_t)(create_kb * 1024),
					    rlog__tick_source_pick(), why, sizeof why);
		if (err < 0 && err != -EEXIST)
			return cli_error("ring-flush: %s: cannot create the ring: %s", path, why);
	}
	struct rlog__ring_view v;
	int err = rlog__ring_map(path, &v, why, sizeof why);
	if (err < 0)
		return cli_error("ring-flush: %s: %s", path, why);
	struct stat ring_st;
	if (stat(path, &ring_st) < 0)
		memset(&ring_st, 0, sizeof ring_st);
	int fd = open_output(out, force, &ring_st);
	if (fd < 0) {
		rlog__ring_unmap(&v);
		return 1;
	}
	const char *base = strrchr(path, '/');
	struct rlog__ring_flush f;
	err = rlog__ring_flush_init(&f, &v, fd, base ? base + 1 : path);
	if (err < 0) {
		if (err == -EBADMSG)
			cli_error("ring-flush: %s: read offset %u is not an offset in the "
				  "%u-byte ring", path, load_relaxed(&v.hdr->read_off), v.size);
		else
			cli_error("ring-flush: %s", strerror(-err));
		close(fd);
		unlink(out);
		rlog__ring_unmap(&v);
		return 1;
	}

	stop_word = &v.hdr->set_event;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	uint64_t seen = 0, wakeups = 0;
	int last_errno = 0;
	drain(path, out, &f, &seen, &last_errno);
	while (!once && !stop_flag) {
		/* "Done flushing": the producer may signal the next fill.
		 * (4) pairs with the producer's fence between its store of
		 * write_off and its load of set_event. */
		store_seq_cst(&v.hdr->set_event, 1);
		atomic_thread_fence(memory_order_seq_cst);
		if (stop_flag)
			break;
		/* It filled while we drained: no need to sleep.  Else sleep
		 * until the producer turns the flag to 0 (or the timer). */
		if (!rlog__ring_flush_below_mark(&f)) {
			rlog__futex_wait(&v.hdr->set_event, 1, timer_ms ? (int)timer_ms : -1);
			if (stop_flag)
				break;
		}
		/* Not waiting while we drain.  A 0 is the producer's fill
		 * event: it cleared the flag (with an exchange, as we do, so
		 * each fill is counted on one side only) -- unless our stop
		 * handler did. */
		if (exchange_acq_rel(&v.hdr->set_event, 0) == 0 && !stop_took_flag)
			wakeups++;
		drain(path, out, &f, &seen, &last_errno);
	}
	/* Nobody waits any more: the producer need not signal. */
	store_seq_cst(&v.hdr->set_event, 0);
	stop_word = NULL;
	drain(path, out, &f, &seen, &last_errno);
	err = rlog__ring_flush_finish(&f);
	if (err < 0 && -err != last_errno)
		cli_error("ring-flush: %s: %s", out, strerror(-err));

	char abs_ring[PATH_MAX], abs_out[PATH_MAX];
	printf("ring: %s\n", realpath(path, abs_ring) ? abs_ring : path);
	printf("log_file: %s\n", realpath(out, abs_out) ? abs_out : out);
	cli_kv_u64("events_written", f.lf.events_written);
	cli_kv_u64("bytes_written", f.lf.bytes_written);
	cli_kv_u64("events_lost", f.lost_events + f.nested_events);
	cli_kv_u64("bytes_lost", f.lost_bytes + f.nested_bytes);
	cli_kv_u64("corrupt_bytes", f.corrupt_bytes);
	cli_kv_u64("time_syncs", f.time_syncs);
	cli_kv_u64("drains", f.drains);
	cli_kv_u64("wakeups", wakeups);
	cli_kv_u64("file_bytes", f.lf.file_bytes);
	fflush(stdout);
	bool failed = f.corrupt_count > 0 || err < 0 || last_errno != 0;
	rlog__ring_flush_free(&f);
	if (close(fd) < 0 && !failed) {
		cli_error("ring-flush: %s: %s", out, strerror(errno));
		failed = true;
	}
	rlog__ring_unmap(&v);
	return failed ? 1 : 0;
}
