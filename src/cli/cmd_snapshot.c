/*
 * cmd_snapshot.c - `ringlog snapshot NAME -o FILE [--since-last] [--force]`
 * and its triggers (`--on-loss`, `--on-event ID [--flag F]`, `--after MS`,
 * `--wait`, `--disarm`): the session's daemon writes the buffers to FILE
 * (src/session/snapshot.c asks it, src/daemon/snapshot.c does it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"
#include "session/session.h"

static const struct cli_opt opts[] = {
	{ "--output", "-o", true },     { "--since-last", NULL, false }, { "--force", NULL, false },
	{ "--on-loss", NULL, false },   { "--on-event", NULL, true },    { "--flag", NULL, true },
	{ "--after", NULL, true },      { "--wait", NULL, false },       { "--disarm", NULL, false },
	{ NULL, NULL, false },
};

/* FILE as an absolute path (the daemon has its own working directory):
 * its directory resolved, its name kept. */
static int absolute(const char *file, char *out, size_t n)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(file, '/');
	const char *base = slash ? slash + 1 : file;
	if (*base == '\0')
		return -EISDIR;
	if (slash == NULL) {
		if (getcwd(dir, sizeof dir) == NULL)
			return -errno;
	} else {
		char parent[PATH_MAX];
		size_t len = (size_t)(slash - file);
		if (len >= sizeof parent)
			return -ENAMETOOLONG;
		memcpy(parent, file, len);
		parent[len] = '\0';
		if (realpath(len ? parent : "/", dir) == NULL)
			return -errno;
	}
	if ((size_t)snprintf(out, n, "%s/%s", strcmp(dir, "/") ? dir : "", base) >= n)
		return -ENAMETOOLONG;
	return 0;
}

static void print_result(const struct rlog__snapshot_result *res)
{
	printf("snapshot: %s\n", res->path);
	printf("events_written: %" PRIu64 "\n", res->events);
	printf("events_lost: %" PRIu64 "\n", res->lost);
	printf("file_bytes: %" PRIu64 "\n", res->bytes);
}

static int fail(const char *name, const char *path, int err,
		const struct rlog__snapshot_result *res)
{
	if (res->message[0])
		return cli_error("snapshot: %s: %s", name, res->message);
	if (cli_session_refused("snapshot", name, err))
		return 1;
	switch (err) {
	case -EINVAL:
		return cli_error("snapshot: invalid session name '%s'", name);
	case -ENOENT:
		return cli_error("snapshot: no session named '%s'", name);
	case -EPROTO:
		return cli_error("snapshot: %s: not a ringlog session region of this version", name);
	case -ESRCH:
		return cli_error("snapshot: %s: the session's daemon is not running (ringlog stop "
				 "--force %s recovers what its buffers hold)", name, name);
	case -ECANCELED:
		return cli_error("snapshot: %s: the session is stopping", name);
	case -EBUSY:
		return cli_error("snapshot: %s: another snapshot request has held the session "
				 "for 10 s", name);
	}
	return cli_error("snapshot: %s: %s: %s", name, path ? path : "", strerror(-err));
}

int cmd_snapshot(int argc, char **argv)
{
	const char *file = NULL;
	struct rlog__snapshot q = { 0 };
	uint64_t v;
	struct cli_args a;
	cli_args_init(&a, "snapshot", opts, 1, argc, argv);
	while (cli_args_next(&a)) {
		const char *val = a.value;
		if (cli_is(&a, "--output")) {
			file = val;
		} else if (cli_is(&a, "--since-last")) {
			q.flags |= RLOG_SNAP_SINCE_LAST;
		} else if (cli_is(&a, "--force")) {
			q.flags |= RLOG_SNAP_FORCE;
		} else if (cli_is(&a, "--on-loss")) {
			q.flags |= RLOG_SNAP_ON_LOSS;
		} else if (cli_is(&a, "--on-event")) {
			if (!cli_parse_u64(val, 16, 16383, &v))
				return cli_error("snapshot: --on-event '%s': expected an event ID, 16 "
						 "to 16383", val);
			q.flags |= RLOG_SNAP_ON_EVENT;
			q.event_id = (uint32_t)v;
		} else if (cli_is(&a, "--flag")) {
			if (!cli_parse_u64(val, 0, 65535, &v))
				return cli_error("snapshot: --flag '%s': expected 0 to 65535", val);
			q.flags |= RLOG_SNAP_FLAG;
			q.event_flag = (uint32_t)v;
		} else if (cli_is(&a, "--after")) {
			if (!cli_parse_u64(val, 0, 3600000, &v))
				return cli_error("snapshot: --after '%s': expected milliseconds, 0 to "
						 "3600000", val);
			q.after_ms = (uint32_t)v;
		} else if (cli_is(&a, "--wait")) {
			q.wait = true;
		} else if (cli_is(&a, "--disarm")) {
			q.flags |= RLOG_SNAP_DISARM;
		}
	}
	if (!cli_args_need(&a, 1, "session NAME"))
		return 2;
	const char *name = a.pos[0];
	bool trigger = q.flags & (RLOG_SNAP_ON_LOSS | RLOG_SNAP_ON_EVENT);
	const char *bad = (q.flags & RLOG_SNAP_ON_LOSS) && (q.flags & RLOG_SNAP_ON_EVENT)
				  ? "--on-loss and --on-event: choose one"
			  : (q.flags & RLOG_SNAP_FLAG) && !(q.flags & RLOG_SNAP_ON_EVENT)
				  ? "--flag needs --on-event"
			  : (q.after_ms || q.wait) && !trigger ? "--after and --wait need --on-loss or "
								"--on-event"
			  : (q.flags & RLOG_SNAP_DISARM) && (file || q.flags != RLOG_SNAP_DISARM)
				  ? "--disarm takes no other option"
			  : !(q.flags & RLOG_SNAP_DISARM) && file == NULL ? "missing -o FILE"
									   : NULL;
	if (bad)
		return cli_usage_error("snapshot", "%s", bad);
	char path[PATH_MAX];
	if (file) {
		int err = absolute(file, path, sizeof path);
		if (err < 0)
			return cli_error("snapshot: %s: %s", file, strerror(-err));
		struct stat st; /* lstat: a link, dangling or not, exists too */
		if (!(q.flags & RLOG_SNAP_FORCE) && lstat(path, &st) == 0)
			return cli_error("snapshot: %s: file exists (use --force to overwrite)", path);
		q.path = path;
	}
	struct rlog__snapshot_result res;
	int err = rlog__session_snapshot(name, &q, &res);
	if (err < 0)
		return fail(name, file, err, &res);
	if (q.flags & RLOG_SNAP_DISARM) {
		printf("trigger: disarmed\n");
		return 0;
	}
	if (trigger && !q.wait) {
		printf("trigger: armed (%s), snapshot to %s\n",
		       (q.flags & RLOG_SNAP_ON_LOSS) ? "on the first loss" : "on the event", path);
		return 0;
	}
	print_result(&res);
	return cli_stdout_ok() ? 0 : cli_error("snapshot: writing to stdout: %s",
						   strerror(errno));
}
