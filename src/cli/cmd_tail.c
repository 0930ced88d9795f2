/*
 * cmd_tail.c - `ringlog tail NAME [filters] [--format text|json]
 * [--time relative|wall] [--all]`: a real-time consumer.  Prints a running
 * session's events as its daemon drains them, in dump's formats and with
 * dump's filters (dump_args.c, dump_text.c, dump_json.c), until the
 * session stops (or SIGINT/SIGTERM).
 *
 *   connect /dev/shm/ringlog-rt.NAME ──► bytes ──► format/live.c (framing, the
 *   metadata cache) ──► one log file image per delivery ──► the reader
 *   (time merge, schemas, names, damage) ──► dump's printing
 *
 * Events are in time order within each delivery (what reached the socket
 * since the last read that found it empty), not across deliveries: a
 * thread whose buffer the daemon drained later may have older events.
 * Blocks the daemon could not deliver (this consumer did not keep up) are
 * announced in the stream by a DATA_LOSS record of cause real_time, which
 * prints as dump prints it (with blocks=N); at the end one line on stderr
 * sums them, and the exit status is 1.  What it missed at the very end,
 * when it was not reading as the session stopped (its socket full: the
 * daemon could not send the DATA_LOSS), it learns from the daemon's end
 * account (struct rlog_rt_end, passed with the stream's first bytes): the
 * blocks the account counts beyond the DATA_LOSS records read are printed
 * as one more DATA_LOSS of cause real_time, as the daemon would have sent
 * it.  A stream that ends without its account (the daemon died) says that
 * what it missed at the end is unknown.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "dump.h"
#include "region_abi.h"
#include "ringlog/reader.h"
#include "session/session.h"
#include "format/live.h"

/* Bytes read at a time, and the batch past which an image is shown even
 * while more is arriving. */
#define READ_CHUNK (1u << 20)
#define BATCH_SHOW (8u << 20)

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	(void)sig;
	stop_signal = 1;
}

struct tail {
	struct dump d;
	struct rlog__live s;
	bool shown;              /* the first image was shown (header, LOG_MARKER) */
	int64_t since, until;
	uint64_t missed_blocks, missed_events, missed_bytes;
	int endfd;               /* the daemon's end account, or -1 */
	int status;
	struct rlog_reader *prev; /* the last delivery's reader: what it knew of the counters */
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

/* Prints the events of one image. */
static void show(struct tail *t, const uint8_t *img, size_t len)
{
	struct rlog_reader *r;
	int rc = rlog_reader_open_mem(img, len, &r);
	if (rc < 0) {
		t->status = cli_error("tail %s: a delivery cannot be read: %s", t->d.path,
				      rlog_reader_strerror(rc));
		return;
	}
	/* A counter's record follows from its last one in the previous
	 * delivery, as within one file. */
	if (t->prev && rlog_reader_counters_from(r, t->prev) < 0)
		t->status = cli_error("tail %s: %s", t->d.path, strerror(ENOMEM));
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
	while ((rc = rlog_reader_next(r, &ev)) > 0) {
		int kind = rlog_record_kind(ev.id, ev.flagged);
		/* Every delivery starts with the stream's LOG_MARKER: print it once. */
		if (kind == RLOG_RECORD_MARKER && !first)
			continue;
		struct rlog_loss l;
		if (kind == RLOG_RECORD_LOSS && rlog_event_loss(&ev, &l) == 0 &&
		    l.cause == RLOG_LOSS_REAL_TIME && (l.fields & RLOG_LOSS_HAS_BLOCKS)) {
			t->missed_blocks += l.blocks;
			t->missed_events += l.events;
			t->missed_bytes += l.bytes;
		}
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
	rlog_reader_close(t->prev);
	t->prev = r; /* kept for its counters: its data is not read again */
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

/* Reads what the socket has: like read(2), keeping the end account's
 * descriptor when it comes (SCM_RIGHTS, with the stream's first bytes). */
static ssize_t stream_read(struct tail *t, int fd, void *buf, size_t n)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { buf, n };
	struct msghdr m;
	memset(&m, 0, sizeof m);
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = u.buf;
	m.msg_controllen = sizeof u.buf;
	ssize_t got = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
	if (got < 0 || m.msg_controllen == 0)
		return got;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int passed;
			memcpy(&passed, CMSG_DATA(c) + i * sizeof(int), sizeof passed);
			if (t->endfd < 0)
				t->endfd = passed;
			else
				close(passed);
		}
	}
	return got;
}

/*
 * The stream ended (end of file): what the daemon's end account says it
 * missed beyond the DATA_LOSS records it read is shown as one more, and
 * the bytes read are checked against what the daemon sent.
 */
static void end_account(struct tail *t, const char *name)
{
	struct rlog_rt_end e;
	if (t->endfd < 0 || pread(t->endfd, &e, sizeof e, 0) != (ssize_t)sizeof e ||
	    memcmp(e.magic, RLOG_RT_END_MAGIC, sizeof e.magic) != 0 ||
	    e.version < RLOG_RT_END_VERSION || e.state != RLOG_RT_END_FINAL) {
		if (t->status == 0)
			t->status = cli_error("tail %s: the stream ended without the daemon's end "
					      "account: what this consumer missed at its end is not "
					      "known", name);
		return;
	}
	uint64_t read_bytes = t->s.offset + rlog__live_pending(&t->s);
	if (read_bytes != e.stream_bytes)
		t->status = cli_error("tail %s: read %" PRIu64 " bytes of the stream; the daemon "
				      "sent %" PRIu64, name, read_bytes, e.stream_bytes);
	if (e.lost_blocks < t->missed_blocks || e.lost_events < t->missed_events ||
	    e.lost_bytes < t->missed_bytes) {
		t->status = cli_error("tail %s: the daemon's end account counts fewer missed blocks "
				      "(%" PRIu64 ") than the stream told (%" PRIu64 ")", name,
				      e.lost_blocks, t->missed_blocks);
		return;
	}
	if (t->s.blocks != e.blocks_whole)
		t->status = cli_error("tail %s: framed %" PRIu64 " blocks; the daemon sent %" PRIu64
				      " whole", name, t->s.blocks, e.blocks_whole);
	uint64_t blocks = e.lost_blocks - t->missed_blocks;
	if (blocks == 0 && e.lost_events == t->missed_events) {
		if (rlog__live_pending(&t->s) > 0)
			t->status = cli_error("tail %s: the stream ended inside a block (%zu bytes): "
					      "the daemon stopped before it could send it whole",
					      name, rlog__live_pending(&t->s));
		return;
	}
	if (rlog__live_end_loss(&t->s, blocks, e.lost_events - t->missed_events,
				 e.lost_bytes - t->missed_bytes, e.last_time) < 0)
		t->status = cli_error("tail %s: out of memory", name);
}

/* Shows every image the stream holds.  Returns 0 or -ENOMEM. */
static int show_all(struct tail *t)
{
	const uint8_t *img;
	size_t len;
	int rc;
	while ((rc = rlog__live_image(&t->s, &img, &len)) > 0)
		show(t, img, len);
	return rc;
}

int cmd_tail(int argc, char **argv)
{
	struct tail t;
	memset(&t, 0, sizeof t);
	t.endfd = -1;
	int rc = dump_parse_args(&t.d, argc, argv, "tail", "session NAME");
	if (rc != 0) {
		dump_free_args(&t.d);
		return rc;
	}
	const char *name = t.d.path;
	struct sockaddr_un a;
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	const char *path = a.sun_path;
	if (rlog__rt_path(name, a.sun_path, sizeof a.sun_path) < 0) {
		dump_free_args(&t.d);
		cli_error("tail: invalid session name '%s'", name);
		return 2;
	}
	/* The region's owner first: a session another user created under this
	 * name would otherwise feed this terminal its stream. */
	struct rlog__session_info in;
	if (cli_session_refused("tail", name, rlog__session_query(name, &in))) {
		dump_free_args(&t.d);
		return 1;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		int err = errno;
		if (fd >= 0)
			close(fd);
		dump_free_args(&t.d);
		return connect_error(name, path, err);
	}
	/* The other end too, as the daemon checks its consumers: a socket
	 * another user's process listens on is not this session's stream. */
	struct ucred cr;
	socklen_t crlen = sizeof cr;
	int peer = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) < 0 ? -errno : 0;
	if (peer < 0 || cr.uid != geteuid()) {
		close(fd);
		dump_free_args(&t.d);
		if (peer < 0)
			return cli_error("tail: %s: %s: %s", name, path, strerror(-peer));
		return cli_error("tail: session %s: its socket %s is served by uid %u, not by you "
				 "(uid %u)", name, path, (unsigned)cr.uid, (unsigned)geteuid());
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal; /* no SA_RESTART: a read returns EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	rlog__live_init(&t.s);

	uint8_t *buf = malloc(READ_CHUNK);
	bool eof = false;
	if (!buf) {
		t.status = cli_error("tail %s: out of memory", name);
		eof = true;
	}
	while (!eof && !stop_signal) {
		struct pollfd p = { fd, POLLIN, 0 };
		if (poll(&p, 1, 200) < 0 && errno != EINTR)
			break;
		/* Read what is there, then show it. */
		for (;;) {
			ssize_t n = stream_read(&t, fd, buf, READ_CHUNK);
			if (n == 0) {
				eof = true;
				break;
			}
			if (n < 0) {
				if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
					t.status = cli_error("tail %s: reading the stream: %s", name,
							     strerror(errno));
					eof = true;
				}
				break;
			}
			rc = rlog__live_feed(&t.s, buf, (size_t)n);
			if (rc < 0) {
				t.status = cli_error("tail %s: %s", name,
						     rc == -EBADMSG ? t.s.error : strerror(-rc));
				eof = true;
				break;
			}
			if (t.s.batch_len >= BATCH_SHOW)
				break;
		}
		if (show_all(&t) < 0) {
			t.status = cli_error("tail %s: out of memory", name);
			break;
		}
	}
	if (eof && !t.shown && t.s.error[0] == '\0' && t.status == 0)
		t.status = cli_error("tail %s: the stream ended before its LOG_MARKER", name);
	if (eof && t.s.error[0] == '\0') {
		stream_end(&t, name);
		if (t.shown) {
			end_account(&t, name);
			if (show_all(&t) < 0)
				t.status = cli_error("tail %s: out of memory", name);
		}
	}
	if (t.missed_blocks > 0)
		t.status = cli_error("tail %s: missed %" PRIu64 " blocks (%" PRIu64 " events): this "
				     "consumer did not keep up (the daemon counts them in "
				     "realtime_buffers_lost)", name, t.missed_blocks, t.missed_events);
	free(buf);
	close(fd);
	if (t.endfd >= 0)
		close(t.endfd);
	rlog_reader_close(t.prev);
	rlog__live_free(&t.s);
	rlog__buf_free(&t.d.out);
	dump_free_args(&t.d);
	return t.status;
}
