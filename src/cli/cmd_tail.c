/*
 * cmd_tail.c - `ringlog tail NAME [filters] [--format text|json]
 * [--time relative|wall] [--all]`: a real-time consumer.  Prints a running
 * session's events as its daemon drains them, in dump's formats and with
 * dump's filters (dump_args.c, dump_text.c, dump_json.c), until the
 * session stops (or SIGINT/SIGTERM).
 *
 *   format/live.c: connect ──► the reader's live open (rlog_live_*,
 *   src/reader/live.c): one reader per delivery (framing, the metadata
 *   cache, the end account) ──► dump's printing
 *
 * Events are in time order within each delivery (what reached the socket
 * since the last read that found it empty), not across deliveries: a
 * thread whose buffer the daemon drained later may have older events.
 * Blocks the daemon could not deliver (this consumer did not keep up) are
 * announced in the stream by a DATA_LOSS record of cause real_time, which
 * prints as dump prints it (with blocks=N); at the end one line on stderr
 * sums them, and the exit status is 1.  What it missed at the very end,
 * when it was not reading as the session stopped, the live reader learns
 * from the daemon's end account and delivers as one more DATA_LOSS of
 * cause real_time; a stream that ends without its account (the daemon
 * died) says that what it missed at the end is unknown.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "dump.h"
#include "region_abi.h"
#include "ringlog/reader.h"
#include "format/live.h"
#include "session/session.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	(void)sig;
	stop_signal = 1;
}

struct tail {
	struct dump d;
	struct rlog_live *lr;
	bool shown;              /* the first delivery was shown (header, LOG_MARKER) */
	int64_t since, until;
	int status;
};

/* Why the socket of session name could not be reached. */
static int connect_error(const char *name, const char *path, int err)
{
	struct rlog__session_info in;
	int q = rlog__session_query(name, &in);
	if (q == -ENOENT)
		return cli_error("tail: no session named '%s'", name);
	if (q == 0 && !(in.log_file_mode & RLOG_MODE_REAL_TIME))
		return cli_error("tail: %s: not a real-time session (start it with --mode real-time)",
				 name);
	if (q == 0 && in.orphaned)
		return cli_error("tail: %s: its daemon (pid %u) is not running", name, in.daemon_pid);
	return cli_error("tail: %s: connecting to %s: %s", name, path, strerror(err));
}

/* Prints the events of one delivery. */
static void show(struct tail *t, struct rlog_reader *r)
{
	struct dump *d = &t->d;
	d->r = r;
	d->info = rlog_reader_info(r);
	if (d->all)
		rlog_reader_set_flags(r, RLOG_READER_TIME_SYNC);
	bool first = !t->shown;
	if (first) {
		t->shown = true;
		t->since = d->has_since ? dump_resolve_time(d, &d->since) : INT64_MIN;
		t->until = d->has_until ? dump_resolve_time(d, &d->until) : INT64_MAX;
		if (!d->json)
			dump_text_header(d);
	}
	struct rlog_event ev;
	int rc;
	while ((rc = rlog_reader_next(r, &ev)) > 0) {
		/* Every delivery starts with the stream's LOG_MARKER: print it once. */
		if (!first && rlog_record_kind(ev.id, ev.flagged) == RLOG_RECORD_MARKER)
			continue;
		dump_event(d, &ev, t->since, t->until);
	}
	if (rc < 0)
		t->status = cli_error("tail %s: %s", d->path, rlog_reader_strerror(rc));
	size_t nd = rlog_reader_damage_count(r);
	for (size_t i = 0; i < nd; i++) {
		struct rlog_damage dm;
		if (rlog_reader_damage(r, i, &dm) == 0)
			t->status = cli_error("tail %s: in the stream: %s", d->path, dm.message);
	}
	d->r = NULL;
	int wrc = rlog__buf_write(&d->out, STDOUT_FILENO);
	if (wrc < 0) {
		t->status = cli_error("tail %s: writing the output: %s", d->path, strerror(-wrc));
		stop_signal = 1;
	}
}

/*
 * The stream ended: the session stops (its state is STOPPING or STOPPED,
 * or it is gone), or its daemon died.  A daemon that dies closes the
 * socket a moment before it can be seen dead: look a few times (bounded).
 */
static void stream_end(struct tail *t, const char *name)
{
	for (int tries = 0; tries < 200; tries++) {
		struct rlog__session_info in;
		if (rlog__session_query(name, &in) < 0 || in.state != RLOG_STATE_ACTIVE)
			return; /* stopped, or stopping: the normal end */
		if (in.orphaned) {
			t->status = cli_error("tail %s: the daemon (pid %u) died: the session is "
					      "orphaned ('ringlog stop %s --force' recovers it)", name,
					      in.daemon_pid, name);
			return;
		}
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	t->status = cli_error("tail %s: the daemon closed the stream while the session runs", name);
}

/* Connects to session name's stream.  Returns the socket, or -1 with the
 * error printed. */
static int tail_connect(const char *name)
{
	/* The region's owner first: a session another user created under this
	 * name would otherwise feed this terminal its stream. */
	struct rlog__session_info in;
	if (cli_session_refused("tail", name, rlog__session_query(name, &in)))
		return -1;
	char path[108];
	(void)rlog__rt_path(name, path, sizeof path);
	uint32_t peer = 0;
	int fd = rlog__live_connect(name, &peer);
	if (fd == -EPERM)
		cli_error("tail: session %s: its socket %s is served by uid %u, not by you (uid %u)",
			  name, path, (unsigned)peer, (unsigned)geteuid());
	else if (fd < 0)
		connect_error(name, path, -fd);
	return fd < 0 ? -1 : fd;
}

int cmd_tail(int argc, char **argv)
{
	struct tail t;
	memset(&t, 0, sizeof t);
	int rc = dump_parse_args(&t.d, argc, argv, "tail", "session NAME");
	if (rc != 0) {
		dump_free_args(&t.d);
		return rc;
	}
	const char *name = t.d.path;
	char path[108];
	if (rlog__rt_path(name, path, sizeof path) < 0) {
		dump_free_args(&t.d);
		cli_error("tail: invalid session name '%s'", name);
		return 2;
	}
	int fd = tail_connect(name);
	if (fd < 0) {
		dump_free_args(&t.d);
		return 1;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal; /* no SA_RESTART: a poll returns EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	rc = rlog_live_open_fd(fd, &t.lr);
	if (rc < 0)
		t.status = cli_error("tail %s: %s", name, strerror(-rc));
	while (rc >= 0 && !stop_signal) {
		struct rlog_reader *r;
		rc = rlog_live_next(t.lr, &r);
		if (rc > 0) {
			show(&t, r);
		} else if (rc == -EAGAIN) {
			struct pollfd p = { rlog_live_fd(t.lr), POLLIN, 0 };
			if (poll(&p, 1, 200) < 0 && errno != EINTR)
				break;
			rc = 0;
		} else if (rc == 0) {
			/* The end of the stream: why it ended, then what did not
			 * add up at its end. */
			stream_end(&t, name);
			const char *problem;
			for (unsigned i = 0; (problem = rlog_live_problem(t.lr, i)) != NULL; i++)
				t.status = cli_error("tail %s: %s", name, problem);
			break;
		} else {
			t.status = cli_error("tail %s: %s", name,
					     rc == -EBADMSG ? rlog_live_error(t.lr)
							    : strerror(-rc));
		}
	}
	struct rlog_live_status st;
	if (t.lr && rlog_live_status(t.lr, &st) == 0 && st.missed_blocks > 0)
		t.status = cli_error("tail %s: missed %" PRIu64 " blocks (%" PRIu64 " events): this "
				     "consumer did not keep up (the daemon counts them in "
				     "realtime_buffers_lost)", name, st.missed_blocks, st.missed_events);
	rlog_live_close(t.lr);
	rlog__buf_free(&t.d.out);
	dump_free_args(&t.d);
	return t.status;
}
