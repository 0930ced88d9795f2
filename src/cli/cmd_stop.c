/*
 * cmd_stop.c - `ringlog stop NAME`: drain everything, close the file,
 * remove the session, print the final statistics.
 */
#include <stdio.h>

#include "cli.h"
#include "session_print.h"

int cmd_stop(int argc, char **argv)
{
	if (argc != 2) {
		cli_error("stop: usage: ringlog stop NAME");
		return 2;
	}
	struct rlog__stop_result res;
	int err = rlog__session_stop(argv[1], &res, cli_stop_waiting, argv[1]);
	if (err < 0)
		return cli_stop_error("stop", argv[1], &res, err);
	printf("session: %s\nfile: %s\n", res.name, res.log_file);
	cli_stats_print(&res.stats);
	if (res.stats.processes_attached == 0)
		fprintf(stderr, "ringlog: stop: %s: no process attached to this session (was "
				"RINGLOG_SESSION set, and did the program find libringlog?)\n", res.name);
	if (res.last_error[0]) {
		cli_error("stop: %s: %s", res.name, res.last_error);
		return 1;
	}
	return 0;
}
