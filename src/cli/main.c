/*
 * main.c - the `ringlog` command: dispatch to one subcommand per file.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cli_error(const char *fmt, ...)
{
	va_list ap;
	fputs("ringlog: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *usage;
} commands[] = {
	{ "start", cmd_start, "start NAME -o FILE [--buffer-size KB] [--buffers N] [--flush-timer MS] [--mask HEX] [--force]" },
	{ "stop", cmd_stop, "stop NAME" },
	{ "query", cmd_query, "query NAME" },
	{ "list", cmd_list, "list" },
	{ "emit", cmd_emit, "emit NAME ID [--count N] [--payload HEX] [--flag F]" },
	{ "dump", cmd_dump, "dump FILE [--id N[,N..]] [--name NAME] [--pid P[,P..]] [--tid T[,T..]] [--since T] [--until T] [--format text|json] [--time relative|wall] [--all]" },
	{ "stats", cmd_stats, "stats FILE [--json]" },
	{ "convert", cmd_convert, "convert FILE --to chrome|ctf -o OUT [--spans x|be] [--force]" },
	{ "bench", cmd_bench, "bench [--runs N] [--events N] [--buffers N] [--buffer-size KB] [--quick]" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: ringlog COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  ringlog %s\n", commands[i].usage);
	fprintf(f, "\nNot built yet: update, flush, tail, snapshot "
		   "(see README.md).\nSee ringlog(1).\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(cmd, "--version") == 0) {
		printf("ringlog 0.1.0\n");
		return 0;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(cmd, commands[i].name) == 0)
			return commands[i].fn(argc - 1, argv + 1);
	static const char *later[] = { "update", "flush", "tail", "snapshot" };
	for (size_t i = 0; i < sizeof later / sizeof later[0]; i++)
		if (strcmp(cmd, later[i]) == 0) {
			cli_error("%s: not implemented yet", cmd);
			return 2;
		}
	cli_error("unknown command '%s' (try 'ringlog help')", cmd);
	return 2;
}
