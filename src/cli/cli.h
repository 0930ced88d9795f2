/*
 * cli.h - the `ringlog` subcommands.  Each returns the process exit code
 * and prints its own errors as one line "ringlog: ..." on stderr.
 */
#ifndef RLOG_CLI_H
#define RLOG_CLI_H

int cmd_start(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_emit(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_update(int argc, char **argv);
int cmd_flush(int argc, char **argv);
int cmd_counters(int argc, char **argv);

/* Prints "ringlog: <fmt...>" and a newline to stderr; returns 1. */
int cli_error(const char *fmt, ...);

#endif
