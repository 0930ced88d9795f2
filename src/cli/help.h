/*
 * help.h - the `ringlog` command's help: one entry per command, each with
 * its usage line and a text that describes every argument and option the
 * command accepts.
 *
 * main.c answers `ringlog help`, `ringlog help COMMAND`, `ringlog COMMAND
 * --help` and `ringlog COMMAND -h` from this table before any command
 * runs, so the command files themselves know nothing about help.  The
 * usage line of an entry is the one the command prints after a usage
 * error (tests/test_cli_help.c checks that they agree).
 */
#ifndef RLOG_CLI_HELP_H
#define RLOG_CLI_HELP_H

#include <stdbool.h>
#include <stdio.h>

struct cli_help {
	const char *name;    /* the command, as typed */
	const char *summary; /* one line, for `ringlog help` */
	const char *usage;   /* the synopsis, without "usage: ringlog " */
	const char *text;    /* what it does, then one entry per argument and option */
	bool built;          /* false: the command says "not implemented yet" */
};

/* The entry for command name, or NULL if there is no such command. */
const struct cli_help *cli_help_find(const char *name);

/* Prints the overview of every command (what `ringlog help` prints). */
void cli_help_overview(FILE *f);

/* Prints one command's help: "usage: ringlog USAGE", a blank line, the
 * text. */
void cli_help_command(FILE *f, const struct cli_help *h);

#endif
