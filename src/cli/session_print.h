/*
 * session_print.h - the CLI's side of session control (src/session/):
 * printing statistics and turning a failed start or stop into one error
 * line.
 */
#ifndef RLOG_CLI_SESSION_PRINT_H
#define RLOG_CLI_SESSION_PRINT_H

#include "session/session.h"

/* Prints statistics as "key: value" lines (stop, query, bench). */
void cli_stats_print(const struct rlog__stats *s);

/* Prints the error line of a failed rlog__session_start; returns 1. */
int cli_start_error(const struct rlog__start *s, const struct rlog__start_result *res, int err);

/* Prints the error line of a failed rlog__session_stop (cmd names the
 * command: "stop", "bench"); returns 1. */
int cli_stop_error(const char *cmd, const char *name, const struct rlog__stop_result *res, int err);

/* The texts of a stop result, which come from the region (any producer
 * may write it), escaped for the terminal (term.h): each escape takes at
 * most 4 bytes per byte. */
struct cli_stop_shown {
	char name[4 * (RLOG_NAME_MAX + 8)];
	char log_file[4 * RLOG_PATH_MAX];   /* "-" if none */
	char last_error[4 * 256];
};
void cli_stop_shown(const struct rlog__stop_result *res, struct cli_stop_shown *out);

/* The rlog__stop_waiting_fn of the CLI: one line on stderr per producer
 * the stop sequence waits for; arg is the session name. */
void cli_stop_waiting(uint32_t pid, uint32_t tid, uint32_t what, void *arg);

/* Prints a session's properties and statistics (`ringlog query`): "key:
 * value" lines, or with json one JSON object. */
void cli_session_info_print(const struct rlog__session_info *in, bool json);

/* Writes the RLOG_MODE_* bits of mode as their names, comma-separated. */
void cli_mode_names(uint32_t mode, char *out, size_t n);

/* The rlog__counter_refused_fn of start and update (arg: the command's
 * name): one line on stderr per counter this machine cannot sample, or
 * samples in user space only. */
void cli_counter_refused(const char *name, enum rlog__counter_avail avail, const char *why,
			 void *arg);

struct cli_args;

/* Takes the option a just returned if it is one of system events'
 * (sys_opts.c: --system, --system-pid, --follow, --no-follow,
 * --profile-hz) into p, adding its RLOG__SYS_GIVE_* bit to *give, and
 * returns true; *rc is then 0, or 1 after the error line of a bad value.
 * False for any other option. */
bool cli_sys_option(const struct cli_args *a, struct rlog__sys_props *p, uint32_t *give, int *rc);

/* "active", "stopping", ...: a session state's name. */
const char *cli_state_name(uint32_t state);

#endif
