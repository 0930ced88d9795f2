/*
 * cmd_stop.c - `ringlog stop NAME [--force]`: drain everything, close the
 * file, remove the session, print the final statistics.  With --force, a
 * session whose daemon died (orphaned) is drained by this command itself
 * into its file (src/daemon/adopt.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "daemon/adopt.h"
#include "session_print.h"

int cmd_stop(int argc, char **argv)
{
	static const struct cli_opt opts[] = { { "--force", NULL, false }, { NULL, NULL, false } };
	bool force = false;
	struct cli_args a;
	cli_args_init(&a, "stop", opts, 1, argc, argv);
	while (cli_args_next(&a))
		force = true; /* --force, the one option */
	if (!cli_args_need(&a, 1, "session NAME"))
		return 2;
	const char *name = a.pos[0];
	struct rlog__stop_result res;
	int err = force ? rlog__daemon_recover(name, NULL, &res) : -EBUSY;
	bool recovered = err == 0;
	if (err == -EBUSY)
		err = rlog__session_stop(name, &res, cli_stop_waiting, (void *)name);
	if (err == -ESRCH && force)
		err = rlog__daemon_recover(name, NULL, &res); /* its daemon died meanwhile */
	if (err < 0)
		return cli_stop_error("stop", name, &res, err);
	static struct cli_stop_shown sh; /* 5 KiB: not on the stack */
	cli_stop_shown(&res, &sh);
	if (recovered)
		fprintf(stderr, "ringlog: stop: %s: the daemon (pid %d) was not running; recovered "
				"the session's buffers into its file\n", sh.name, (int)res.daemon_pid);
	printf("session: %s\nfile: %s\n", sh.name, sh.log_file);
	cli_stats_print(&res.stats);
	/* The hint is for a session that recorded nothing: one of system
	 * events or the machine's counters needs no process. */
	const struct rlog__stats *st = &res.stats;
	if (st->processes_attached == 0 && st->counter_records == 0 && st->sys_written == 0 &&
	    st->sys_handed_over == 0 && st->sys_rundown_written == 0)
		fprintf(stderr, "ringlog: stop: %s: no process attached to this session (was "
				"RINGLOG_SESSION set, and did the program find libringlog?)\n", sh.name);
	if (res.last_error[0]) {
		cli_error("stop: %s: %s", sh.name, sh.last_error);
		return 1;
	}
	return 0;
}
