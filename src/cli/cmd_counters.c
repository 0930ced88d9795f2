/*
 * cmd_counters.c - `ringlog counters`: every counter source a session can
 * sample (--counters), whether this machine has it, and why not.
 *
 *   counter                available  what, or why not
 *   app                    yes        the application's counters (rlog_counter_register)
 *   perf.cycles            no         this machine has no hardware performance counters ...
 *   perf.page-faults       user-only  page faults of the attached processes; counts user ...
 *
 * Each source is tried as the daemon would sample it (src/common/counter_catalog.c):
 * a process's counters on this process, the system's on CPU 0.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "counter_catalog.h"

int cmd_counters(int argc, char **argv)
{
	struct cli_args a;
	cli_args_init(&a, "counters", NULL, 0, argc, argv);
	while (cli_args_next(&a))
		;
	if (a.bad)
		return 2;
	size_t n;
	const struct rlog__counter_def *d = rlog__counter_defs(&n);
	printf("%-26s %-10s %s\n", "counter", "available", "what, or why not");
	for (size_t i = 0; i < n; i++) {
		char why[256];
		enum rlog__counter_avail a = rlog__counter_probe(d[i].bit, why, sizeof why);
		const char *yes = a == RLOG__CTR_OK ? "yes" : a == RLOG__CTR_USER_ONLY ? "user-only" : "no";
		if (a == RLOG__CTR_OK)
			printf("%-26s %-10s %s\n", d[i].name, yes, d[i].what);
		else if (a == RLOG__CTR_USER_ONLY)
			printf("%-26s %-10s %s; %s\n", d[i].name, yes, d[i].what, why);
		else
			printf("%-26s %-10s %s\n", d[i].name, yes, why);
	}
	if (!cli_stdout_ok())
		return cli_error("counters: writing to stdout: %s", strerror(errno));
	return 0;
}
