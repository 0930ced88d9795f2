#include "args.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "help.h"

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "ringlog: %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	/* The usage line is help.c's, so that it cannot differ from the help. */
	const struct cli_help *h = cli_help_find(cmd);
	if (h)
		fprintf(stderr, "usage: ringlog %s\n", h->usage);
	return 2;
}

void cli_args_init(struct cli_args *a, const char *cmd, const struct cli_opt *opts, int max_pos,
		   int argc, char **argv)
{
	memset(a, 0, sizeof *a);
	a->cmd = cmd;
	a->opts = opts;
	a->max_pos = max_pos < CLI_MAX_POS ? max_pos : CLI_MAX_POS;
	a->argc = argc;
	a->argv = argv;
	a->i = 1;
}

/* "-" alone and "-5" are values, not options. */
static bool is_option(const char *s)
{
	return s[0] == '-' && s[1] != '\0' && !isdigit((unsigned char)s[1]);
}

/* A usage error naming arg: fmt's first %s; a second is the command. */
static bool usage_bad(struct cli_args *a, const char *fmt, const char *arg)
{
	cli_usage_error(a->cmd, fmt, arg, a->cmd);
	a->bad = true;
	return false;
}

bool cli_args_next(struct cli_args *a)
{
	while (!a->bad && a->i < a->argc) {
		const char *s = a->argv[a->i++];
		if (!a->rest && strcmp(s, "--") == 0) {
			a->rest = true;
			continue;
		}
		if (a->rest || !is_option(s)) {
			if (a->npos >= a->max_pos)
				return usage_bad(a, "unexpected argument '%s'", s);
			a->pos[a->npos++] = s;
			continue;
		}
		size_t n = strcspn(s, "=");
		const struct cli_opt *o = a->opts;
		for (; o && o->name; o++)
			if ((strlen(o->name) == n && strncmp(o->name, s, n) == 0) ||
			    (o->alias && strlen(o->alias) == n && strncmp(o->alias, s, n) == 0))
				break;
		if (!o || !o->name)
			return usage_bad(a, "unknown option '%s' (see 'ringlog help %s')", s);
		a->name = o->name;
		a->value = NULL;
		if (s[n] == '=') {
			if (!o->value)
				return usage_bad(a, "option '%s' takes no value", o->name);
			a->value = s + n + 1;
		} else if (o->value) {
			if (a->i >= a->argc)
				return usage_bad(a, "option '%s' needs a value", s);
			a->value = a->argv[a->i++];
		}
		return true;
	}
	return false;
}

bool cli_is(const struct cli_args *a, const char *name)
{
	return a->name && strcmp(a->name, name) == 0;
}

bool cli_args_need(struct cli_args *a, int n, const char *what)
{
	if (a->bad)
		return false;
	if (a->npos < n) {
		cli_usage_error(a->cmd, "missing %s", what);
		a->bad = true;
		return false;
	}
	return true;
}

bool cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	if (s == NULL || *s == '\0' || !isxdigit((unsigned char)s[0]))
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return false;
	*out = v;
	return true;
}

void cli_kv_u64(const char *key, uint64_t v)
{
	printf("%s: %" PRIu64 "\n", key, v);
}

bool cli_parse_duration_ms(const char *s, uint32_t max_ms, uint32_t *ms)
{
	char *end;
	if (s[0] < '0' || s[0] > '9')
		return false;
	unsigned long long v = strtoull(s, &end, 10);
	unsigned long long mul = 1;
	if (strcmp(end, "s") == 0)
		mul = 1000;
	else if (*end != '\0' && strcmp(end, "ms") != 0)
		return false;
	if (v > max_ms || v * mul > max_ms)
		return false;
	*ms = (uint32_t)(v * mul);
	return true;
}

/* SIZE: bytes, or a number with K, M or G (powers of 1024). */
bool cli_parse_size(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return false;
	unsigned shift = 0;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if (shift)
		end++;
	if (*end || v > (UINT64_MAX >> shift))
		return false;
	*out = (uint64_t)v << shift;
	return true;
}
