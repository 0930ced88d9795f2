/*
 * cmd_query.c - `ringlog query NAME` (properties and live statistics, ETW's
 * EVENT_TRACE_CONTROL_QUERY) and `ringlog list` (one line per session, or
 * "no sessions").
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "args.h"
#include "session_print.h"
#include "shm.h"
#include "sysflags_names.h"
#include "term.h"

int cmd_query(int argc, char **argv)
{
	static const struct cli_opt opts[] = { { "--json", NULL, false }, { NULL, NULL, false } };
	bool json = false;
	struct cli_args a;
	cli_args_init(&a, "query", opts, 1, argc, argv);
	while (cli_args_next(&a))
		json = true; /* --json, the one option */
	if (!cli_args_need(&a, 1, "session NAME"))
		return 2;
	const char *name = a.pos[0];
	struct rlog__session_info in;
	int err = rlog__session_query(name, &in);
	if (cli_session_refused("query", name, err))
		return 1;
	if (err == -EINVAL)
		return cli_error("query: invalid session name '%s'", name);
	if (err == -ENOENT)
		return cli_error("query: no session named '%s'", name);
	if (err == -EPROTO)
		return cli_error("query: %s: not a ringlog session region of this version", name);
	if (err < 0)
		return cli_error("query: %s: %s", name, strerror(-err));
	cli_session_info_print(&in, json);
	/* events_written counts what the daemon drained: a buffer handed
	 * over at its next pass, one a producer still holds only when it is
	 * full, at the flush timer, at flush or at stop.  A count of 0 right
	 * after a write is no loss: say so. */
	if (in.buffers_not_drained || in.buffers_held)
		fprintf(stderr, "ringlog: query: %s: not drained yet, so not in events_written: "
				"%llu events in %u buffer(s) handed to the daemon (drained at its "
				"next pass), %u buffer(s) producers still hold (drained when full, "
				"by the flush timer, 'ringlog flush %s' or stop)\n",
			name, (unsigned long long)in.events_not_drained, in.buffers_not_drained,
			in.buffers_held, name);
	return 0;
}

static void list_one(int err, const struct rlog__session_info *in, void *arg)
{
	(void)arg;
	uint32_t uid, mode;
	/* The name may come from the region's header: escaped (term.h). */
	char name[4 * sizeof in->name];
	rlog__term_cstr(in->name, name, sizeof name);
	/* Shown, so that its name is not a mystery, but not opened. */
	if (err == -EACCES && rlog__region_owner(in->name, &uid, &mode) == 0 &&
	    rlog__shm_owner_check(uid, mode) < 0)
		printf("%-24s %-9s uid %u, mode %04o\n", name, "foreign", uid, mode);
	else if (err < 0)
		printf("%-24s %-9s %s\n", name, "invalid", "-");
	else {
		/* The log file's path comes from the region: escaped (term.h). */
		static char file[4 * RLOG_PATH_MAX];
		char sys[512] = "";
		if (in->system.flags)
			rlog__sys_names(in->system.flags, sys, sizeof sys);
		printf("%-24s %-9s %s%s%s\n", name,
		       in->orphaned ? "orphaned" : cli_state_name(in->state),
		       rlog__term_cstr(in->log_file[0] ? in->log_file : "-", file, sizeof file),
		       sys[0] ? "  system: " : "", sys);
	}
}

int cmd_list(int argc, char **argv)
{
	struct cli_args a;
	cli_args_init(&a, "list", NULL, 0, argc, argv);
	while (cli_args_next(&a))
		;
	if (a.bad)
		return 2;
	int n = rlog__session_list(list_one, NULL);
	if (n < 0)
		return cli_error("list: /dev/shm: %s", strerror(-n));
	/* Silence would not tell "no sessions" from "nothing worked". */
	if (n == 0)
		printf("no sessions\n");
	return 0;
}
