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
#include "term.h"

int cmd_query(int argc, char **argv)
{
	const char *name = NULL;
	bool json = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = true;
		else if (argv[i][0] != '-' && name == NULL)
			name = argv[i];
		else {
			cli_error("query: usage: ringlog query NAME [--json]");
			return 2;
		}
	}
	if (name == NULL) {
		cli_error("query: usage: ringlog query NAME [--json]");
		return 2;
	}
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
	return 0;
}

static void list_one(int err, const struct rlog__session_info *in, void *arg)
{
	(void)arg;
	uint32_t uid, mode;
	/* Shown, so that its name is not a mystery, but not opened. */
	if (err == -EACCES && rlog__region_owner(in->name, &uid, &mode) == 0 &&
	    rlog__shm_owner_check(uid, mode) < 0)
		printf("%-24s %-9s uid %u, mode %04o\n", in->name, "foreign", uid, mode);
	else if (err < 0)
		printf("%-24s %-9s %s\n", in->name, "invalid", "-");
	else {
		/* The log file's path comes from the region: escaped (term.h). */
		static char file[4 * RLOG_PATH_MAX];
		printf("%-24.64s %-9s %s\n", in->name,
		       in->orphaned ? "orphaned" : cli_state_name(in->state),
		       rlog__term_cstr(in->log_file[0] ? in->log_file : "-", file, sizeof file));
	}
}

int cmd_list(int argc, char **argv)
{
	(void)argv;
	if (argc != 1) {
		cli_error("list: usage: ringlog list");
		return 2;
	}
	int n = rlog__session_list(list_one, NULL);
	if (n < 0)
		return cli_error("list: /dev/shm: %s", strerror(-n));
	/* Silence would not tell "no sessions" from "nothing worked". */
	if (n == 0)
		printf("no sessions\n");
	return 0;
}
