/*
 * main.c - the `ringlog` command: dispatch to one subcommand per file.
 *
 * Help is answered here, before any command runs: `ringlog help
 * [COMMAND]`, and `ringlog COMMAND --help` or `-h` (anywhere among the
 * command's arguments), from the table in help.c.  Help goes to stdout and
 * exits 0; the command files never see a help request.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "help.h"
#include "ringlog/version.h"
#include "term.h"

int cli_error(const char *fmt, ...)
{
	/* The line may hold what the user typed, a file's name read from a
	 * directory or text from a file: escaped as a whole (term.h), its
	 * backslashes left, so that a name escaped before passes unchanged. */
	char line[4096], safe[4 * sizeof line];
	va_list ap;
	va_start(ap, fmt);
	if (vsnprintf(line, sizeof line, fmt, ap) < 0)
		line[0] = '\0';
	va_end(ap);
	fprintf(stderr, "ringlog: %s\n", rlog__term_line(line, safe, sizeof safe));
	return 1;
}

bool cli_stdout_ok(void)
{
	/* A write that failed while stdio's buffer was full may leave
	 * nothing for fflush to fail on: the error flag says it. */
	return fflush(stdout) == 0 && !ferror(stdout);
}

/* The commands that are built; help.c has an entry for each, and for the
 * ones that are not built yet. */
static const struct {
	const char *name;
	int (*fn)(int, char **);
} commands[] = {
	{ "start", cmd_start },
	{ "stop", cmd_stop },
	{ "recover", cmd_recover },
	{ "query", cmd_query },
	{ "list", cmd_list },
	{ "emit", cmd_emit },
	{ "dump", cmd_dump },
	{ "stats", cmd_stats },
	{ "profile", cmd_profile },
	{ "convert", cmd_convert },
	{ "bench", cmd_bench },
	{ "update", cmd_update },
	{ "flush", cmd_flush },
	{ "ring-flush", cmd_ring_flush },
	{ "tail", cmd_tail },
	{ "counters", cmd_counters },
	{ "snapshot", cmd_snapshot },
	{ "report", cmd_report },
	{ "collect", cmd_collect },
};

static bool is_help_flag(const char *a)
{
	return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

/* Prints a command's help to stdout; returns the exit status. */
static int print_help(const struct cli_help *h)
{
	cli_help_command(stdout, h);
	if (!cli_stdout_ok())
		return cli_error("help: writing to stdout: %s", strerror(errno));
	return 0;
}

/* `ringlog help [COMMAND]` */
static int cmd_help(int argc, char **argv)
{
	if (argc == 1) {
		cli_help_overview(stdout);
		return !cli_stdout_ok() ? cli_error("help: writing to stdout: %s", strerror(errno))
					: 0;
	}
	if (argc == 2 && is_help_flag(argv[1]))
		return print_help(cli_help_find("help"));
	struct cli_args a;
	cli_args_init(&a, "help", NULL, 1, argc, argv);
	while (cli_args_next(&a))
		;
	if (a.bad)
		return 2;
	const struct cli_help *h = cli_help_find(argv[1]);
	if (h == NULL) {
		cli_error("help: unknown command '%s' (try 'ringlog help')", argv[1]);
		return 2;
	}
	return print_help(h);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		cli_error("missing COMMAND");
		cli_help_overview(stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (is_help_flag(cmd) || strcmp(cmd, "help") == 0)
		return cmd_help(argc - 1, argv + 1);
	if (strcmp(cmd, "--version") == 0) {
		printf("ringlog %s\n", RLOG_VERSION_STRING);
		return 0;
	}
	const struct cli_help *h = cli_help_find(cmd);
	if (h == NULL) {
		cli_error("unknown command '%s' (try 'ringlog help')", cmd);
		return 2;
	}
	for (int i = 2; i < argc; i++)
		if (is_help_flag(argv[i]))
			return print_help(h);
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(cmd, commands[i].name) == 0)
			return commands[i].fn(argc - 1, argv + 1);
	cli_error("%s: not implemented yet (see 'ringlog help %s')", cmd, cmd);
	return 2;
}
