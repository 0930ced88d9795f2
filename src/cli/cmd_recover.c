/*
 * cmd_recover.c - `ringlog recover NAME -o FILE [--force]`: a session whose
 * daemon died (orphaned) is drained by this command into FILE, a new log
 * file, instead of its own output; then the session is removed
 * (src/daemon/adopt.c, docs/SESSIONS.md "Orphans").
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "daemon/adopt.h"
#include "io.h"
#include "session_print.h"

int cmd_recover(int argc, char **argv)
{
	static const struct cli_opt opts[] = {
		{ "--output", "-o", true }, { "--force", NULL, false }, { NULL, NULL, false },
	};
	const char *out = NULL;
	bool force = false;
	struct cli_args a;
	cli_args_init(&a, "recover", opts, 1, argc, argv);
	while (cli_args_next(&a)) {
		if (cli_is(&a, "--output"))
			out = a.value;
		else
			force = true;
	}
	if (!cli_args_need(&a, 1, "session NAME"))
		return 2;
	const char *name = a.pos[0];
	if (out == NULL)
		return cli_usage_error("recover", "missing -o FILE");
	struct rlog__stop_result res;
	struct rlog__recover_to to = { out, force };
	int err = rlog__daemon_recover(name, &to, &res);
	if (cli_session_refused("recover", name, err))
		return 1;
	if (err == -EBUSY)
		return cli_error("recover: %s: its daemon is running: nothing to recover ('ringlog "
				 "snapshot %s -o FILE' copies its buffers)", name, name);
	if (err == -EEXIST)
		return cli_error("recover: %s: the file exists (--force overwrites it)", out);
	if (err < 0 && err != -EINVAL && err != -ENOENT && err != -EPROTO)
		return cli_error("recover: %s: %s: %s", name, out, rlog__output_strerror(-err));
	if (err < 0)
		return cli_stop_error("recover", name, &res, err);
	static struct cli_stop_shown sh; /* 5 KiB: not on the stack */
	cli_stop_shown(&res, &sh);
	fprintf(stderr, "ringlog: recover: %s: the daemon (pid %d) was not running; recovered the "
			"session's buffers into %s\n", sh.name, (int)res.daemon_pid, out);
	printf("session: %s\nfile: %s\n", sh.name, out);
	cli_stats_print(&res.stats);
	if (res.last_error[0]) {
		cli_error("recover: %s: %s", sh.name, sh.last_error);
		return 1;
	}
	return 0;
}
