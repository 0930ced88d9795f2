/*
 * cli.h - the `ringlog` subcommands.  Each returns the process exit code
 * and prints its own errors as one line "ringlog: ..." on stderr.
 */
#ifndef RLOG_CLI_H
#define RLOG_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int cmd_start(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_recover(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_emit(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_update(int argc, char **argv);
int cmd_flush(int argc, char **argv);
int cmd_ring_flush(int argc, char **argv);

/* `emit --ring PATH ID ...` (cmd_emit_ring.c): count events of ID into the
 * single ring at path; prints emitted/written/lost; returns the exit code. */
int emit_ring(const char *path, unsigned id, bool flagged, uint16_t flag, const uint8_t *payload,
	      size_t len, uint64_t count);
int cmd_tail(int argc, char **argv);
int cmd_counters(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* `ringlog stats --json`'s object for r (opened with
 * rlog_reader_open_count, path the name it prints) appended to b: the
 * report embeds it.  Returns 0 or -ENOMEM. */
struct rlog__buf;
struct rlog_reader;
int cli_stats_json(struct rlog__buf *b, const char *path, struct rlog_reader *r);
int cmd_collect(int argc, char **argv);

/* Flushes stdout; false if anything written to it since it was opened
 * failed (errno says why). */
bool cli_stdout_ok(void);

/* Prints "ringlog: <fmt...>" and a newline to stderr; returns 1. */
int cli_error(const char *fmt, ...);

/* If err is -EACCES and session name's region is not this user's own
 * (rlog__shm_owner_check), prints "<cmd>: session NAME: owned by uid N, not
 * by you (uid M)" (or that it is open to other users) and returns 1; else
 * prints nothing and returns 0. */
int cli_session_refused(const char *cmd, const char *name, int err);

/* The sink options of start and update: --sink URL, --host-id ID,
 * --sink-buffer SIZE, --sink-chunk SIZE (NULL if not given). */
struct cli_sink_args {
	const char *url, *host_id, *buffer, *chunk;
};
struct cli_args;
/* Takes a's option if it is one of them; false if not. */
bool cli_sink_arg(const struct cli_args *a, struct cli_sink_args *s);
/* Checks them into spec (spec->url NULL: no --sink), for `cmd` (start,
 * update).  Returns 0 or the exit status of the error printed. */
struct rlog__sink_spec;
int cli_sink_options(const char *cmd, struct rlog__sink_spec *spec, const struct cli_sink_args *s);

#endif
