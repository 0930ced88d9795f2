/*
 * dump_args.c - what `ringlog dump` and `ringlog tail` share besides the
 * formats: their options (filters, --format, --time, --all) and the
 * choice, event by event, of what to print (docs/DUMP.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "dump.h"
#include "region_abi.h"

static int bad_value(const struct dump *d, const char *opt, const char *v, const char *want)
{
	/* A value out of range is the command's error, not a usage error:
	 * exit 1 (docs/DECISIONS.md, "One argument parser"). */
	cli_error("%s: %s '%s': expected %s", d->what, opt, v, want);
	return 1;
}

static const struct cli_opt opts[] = {
	{ "--id", NULL, true },     { "--pid", NULL, true },    { "--tid", NULL, true },
	{ "--name", NULL, true },   { "--since", NULL, true },  { "--until", NULL, true },
	{ "--format", NULL, true }, { "--time", NULL, true },   { "--all", NULL, false },
	{ NULL, NULL, false },
};

int dump_parse_args(struct dump *d, int argc, char **argv, const char *cmd, const char *what)
{
	d->what = cmd;
	struct cli_args a;
	/* dump reads several files (docs/DUMP.md, "Several hosts"). */
	cli_args_init(&a, cmd, opts, strcmp(cmd, "dump") == 0 ? CLI_MAX_POS : 1, argc, argv);
	while (cli_args_next(&a)) {
		const char *v = a.value;
		if (cli_is(&a, "--all")) {
			d->all = true;
		} else if (cli_is(&a, "--id")) {
			if (!dump_numlist_add(&d->ids, v, RLOG_ID_MAX))
				return bad_value(d, "--id", v, "event IDs 0 to 16383, separated by commas");
		} else if (cli_is(&a, "--pid")) {
			if (!dump_numlist_add(&d->pids, v, UINT32_MAX))
				return bad_value(d, "--pid", v, "process IDs separated by commas");
		} else if (cli_is(&a, "--tid")) {
			if (!dump_numlist_add(&d->tids, v, UINT32_MAX))
				return bad_value(d, "--tid", v, "thread IDs separated by commas");
		} else if (cli_is(&a, "--name")) {
			const char **n = realloc(d->names, (d->nnames + 1) * sizeof(*n));
			if (!n)
				return cli_error("%s: out of memory", cmd);
			d->names = n;
			d->names[d->nnames++] = v;
		} else if (cli_is(&a, "--since")) {
			if (cli_parse_time(v, &d->since) < 0)
				return bad_value(d, "--since", v, CLI_TIME_WANT);
			d->has_since = true;
		} else if (cli_is(&a, "--until")) {
			if (cli_parse_time(v, &d->until) < 0)
				return bad_value(d, "--until", v, CLI_TIME_WANT);
			d->has_until = true;
		} else if (cli_is(&a, "--format")) {
			if (strcmp(v, "json") == 0)
				d->json = true;
			else if (strcmp(v, "text") == 0)
				d->json = false;
			else
				return bad_value(d, "--format", v, "text or json");
		} else if (cli_is(&a, "--time")) {
			if (strcmp(v, "wall") == 0)
				d->wall = true;
			else if (strcmp(v, "relative") == 0)
				d->wall = false;
			else
				return bad_value(d, "--time", v, "relative or wall");
		}
	}
	if (!cli_args_need(&a, 1, what))
		return 2;
	d->path = a.pos[0];
	d->args = malloc((size_t)a.npos * sizeof(*d->args));
	if (!d->args)
		return cli_error("%s: out of memory", cmd);
	memcpy(d->args, a.pos, (size_t)a.npos * sizeof(*d->args));
	d->nargs = a.npos;
	return 0;
}

int64_t dump_resolve_time(const struct dump *d, const struct cli_time *t)
{
	return cli_time_ns(t, d->info->sync_realtime_ns);
}

void dump_free_args(struct dump *d)
{
	free(d->ids.v);
	free(d->pids.v);
	free(d->tids.v);
	free(d->names);
	free(d->args);
}

int dump_event(struct dump *d, const struct rlog_event *ev, int64_t since, int64_t until)
{
	if (ev->time_ns < since)
		return 0;
	/* Without --until nothing ends the dump: an event at the saturated
	 * time INT64_MAX (a crafted clock) is shown like any other. */
	if (d->has_until && ev->time_ns >= until)
		return -1;
	int kind = rlog_record_kind(ev->id, ev->flagged);
	if (!d->all && kind == RLOG_RECORD_METADATA)
		return 0;
	const struct rlog_schema *s =
		ev->id >= RLOG_ID_RAW_U8 && kind == RLOG_RECORD_EVENT ? rlog_reader_schema(d->r, ev)
								   : NULL;
	if (!dump_filter_passes(d, ev, s))
		return 0;
	if (d->json)
		dump_json_event(d, ev, s);
	else
		dump_text_event(d, ev, s);
	return 1;
}
