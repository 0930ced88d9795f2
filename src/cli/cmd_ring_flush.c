/*
 * cmd_ring_flush.c - `ringlog ring-flush PATH -o FILE [--once]
 * [--flush-timer MS] [--create KB] [--force]`: the flush application of a
 * single ring (include/ringlog/ring.h) in a file or shared-memory object.
 *
 * It drains what the ring holds, then, unless --once, sleeps on the ring's
 * fill event (the futex in its header: no polling) and drains each time
 * the producer signals it, until SIGINT or SIGTERM; then it drains what is
 * left, writes the last DATA_LOSS records, closes FILE cleanly and prints
 * its statistics.  Opening the ring and the file, the loop and its
 * handshake with the producer are src/ring/serve.c's, the drain
 * src/ring/flush.c's; this file parses, installs SIGINT and SIGTERM (a
 * stop request) and prints.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "ring/flush.h"
#include "ring/serve.h"

static const struct cli_opt opts[] = {
	{ "--output", "-o", true }, { "--once", NULL, false },   { "--force", NULL, false },
	{ "--flush-timer", NULL, true }, { "--create", NULL, true }, { NULL, NULL, false },
};

static struct rlog__ring_stop stop;

static void on_stop(int sig)
{
	(void)sig;
	rlog__ring_stop_request(&stop);
}

/* What the messages remember between drains. */
struct said {
	const char *path, *out;
	uint64_t seen;   /* corruptions printed */
	int last_errno;  /* the last failed write's, printed */
};

/* After each drain: the corruptions found since the last (one line each;
 * a drain finds at most one), and a failed write of the log file, once
 * per errno. */
static void drained(void *arg, const struct rlog__ring_flush *f, int rc)
{
	struct said *s = arg;
	if (f->corrupt_count != s->seen)
		cli_error("ring-flush: %s: %s", s->path, f->error);
	s->seen = f->corrupt_count;
	if (rc < 0 && rc != -EBADMSG && -rc != s->last_errno) {
		s->last_errno = -rc;
		/* Before the file has its header nothing is taken from the
		 * ring; after, blocks the file refuses are counted lost. */
		cli_error("ring-flush: %s: %s (%s)", s->out, strerror(-rc),
			  f->lf_open ? "the events are counted lost"
				     : "nothing drained: the events stay in the ring");
	}
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

	char why[512];
	struct rlog__ring_app app;
	if (rlog__ring_app_open(&app, path, out, (uint32_t)(create_kb * 1024), force, why,
				sizeof why) < 0)
		return cli_error("ring-flush: %s", why);
	struct rlog__ring_flush *f = &app.flush;

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	struct said said = { path, out, 0, 0 };
	struct rlog__ring_serve serve = {
		.once = once, .timer_ms = timer_ms, .stop = &stop, .drained = drained, .arg = &said,
	};
	int err = rlog__ring_flush_serve(f, &serve);
	int last_errno = said.last_errno;
	uint64_t wakeups = serve.wakeups;
	if (err < 0 && -err != last_errno)
		cli_error("ring-flush: %s: %s", out, strerror(-err));

	char abs_ring[PATH_MAX], abs_out[PATH_MAX];
	printf("ring: %s\n", realpath(path, abs_ring) ? abs_ring : path);
	printf("log_file: %s\n", realpath(out, abs_out) ? abs_out : out);
	cli_kv_u64("events_written", f->lf.events_written);
	cli_kv_u64("bytes_written", f->lf.bytes_written);
	cli_kv_u64("events_lost", f->lost_events + f->nested_events);
	cli_kv_u64("bytes_lost", f->lost_bytes + f->nested_bytes);
	cli_kv_u64("corrupt_bytes", f->corrupt_bytes);
	cli_kv_u64("time_syncs", f->time_syncs);
	cli_kv_u64("drains", f->drains);
	cli_kv_u64("wakeups", wakeups);
	cli_kv_u64("file_bytes", f->lf.file_bytes);
	fflush(stdout);
	bool failed = f->corrupt_count > 0 || err < 0 || last_errno != 0;
	int rc = rlog__ring_app_close(&app);
	if (rc < 0 && !failed) {
		cli_error("ring-flush: %s: %s", out, strerror(-rc));
		failed = true;
	}
	return failed ? 1 : 0;
}
