/*
 * args.h - the CLI's one argument parser, which every command uses, and
 * strict number parsing: the whole string must be a number in range, or
 * the command fails with one clear line.
 *
 * A command lists the options it takes (struct cli_opt) and how many
 * positional arguments; cli_args_next returns its options one at a time
 * and collects the rest.  What it does not understand it names, the same
 * way in every command, then prints the command's usage line (from help.c)
 * and the caller exits 2:
 *
 *   ringlog: dump: unknown option '--bogus' (see 'ringlog help dump')
 *   ringlog: start: option '--buffers' needs a value
 *   ringlog: list: unexpected argument 'extra'
 *   ringlog: stop: missing session NAME          (cli_args_need)
 */
#ifndef RLOG_CLI_ARGS_H
#define RLOG_CLI_ARGS_H

#include <stdbool.h>
#include <stdint.h>

/* An option: "--name", or "--name VALUE" / "--name=VALUE" if it takes a
 * value.  A table of them ends with { NULL }. */
struct cli_opt {
	const char *name;  /* "--output" */
	const char *alias; /* another spelling ("-o"), or NULL */
	bool value;        /* takes a value */
};

#define CLI_MAX_POS 256 /* dump and stats take several files */

struct cli_args {
	const char *cmd;            /* the command, in messages */
	const struct cli_opt *opts;
	int argc, i;
	char **argv;
	int max_pos;                /* positional arguments the command takes */
	int npos;
	const char *pos[CLI_MAX_POS];
	const char *name;           /* the option cli_args_next returned (its name) */
	const char *value;          /* its value, or NULL */
	bool bad;                   /* a usage error was printed: exit 2 */
	bool rest;                  /* after "--": positional arguments only */
};

/* Starts parsing argv[1..argc-1] of command cmd. */
void cli_args_init(struct cli_args *a, const char *cmd, const struct cli_opt *opts, int max_pos,
		   int argc, char **argv);

/* The next option (true: a->name, a->value), or false at the end or at a
 * usage error (a->bad, its lines printed).  An argument that does not
 * start with '-' (or is "-", or a negative number, or comes after "--")
 * is positional: kept in a->pos. */
bool cli_args_next(struct cli_args *a);

/* Is the option just returned name? */
bool cli_is(const struct cli_args *a, const char *name);

/* False, with "missing WHAT" and the usage line printed, if fewer than n
 * positional arguments were given (or if a->bad already). */
bool cli_args_need(struct cli_args *a, int n, const char *what);

/* A usage error of command cmd: "ringlog: CMD: <fmt...>", then the
 * command's usage line.  Returns 2, the exit status of a usage error. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parses a decimal (or 0x-prefixed hex) unsigned number in [min, max].
 * Returns true and sets *out, or false. */
bool cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* SIZE: bytes, or a number with K, M or G (powers of 1024).  False if it
 * is not one. */
bool cli_parse_size(const char *s, uint64_t *out);

/* A duration: milliseconds, or a number with the unit "ms" or "s", at
 * most max_ms.  False if it is not one. */
bool cli_parse_duration_ms(const char *s, uint32_t max_ms, uint32_t *ms);

/* Prints a statistic line "key: value". */
void cli_kv_u64(const char *key, uint64_t v);

#endif
