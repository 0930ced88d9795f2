/*
 * cmd_profile.c - `ringlog profile FILE [--folded] [--json] [--pid PID]
 * [--tid TID] [--top N]`: the sampled profile of a log file (the analysis
 * is src/analysis/profile.c), printed as the top functions by samples
 * (self and total), as folded stacks (`proc;outer;...;inner N`, the input
 * of flame graph tools), or as JSON.  docs/PROFILE.md specifies them.
 *
 * Exit status: 0; 1 (unreadable file, or damaged regions: what could be
 * read is printed first, then one line per region); 2 (usage).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/profile.h"
#include "args.h"
#include "buf.h"
#include "cli.h"
#include "json.h"
#include "ringlog/reader.h"
#include "term.h"

static void put_name(struct rlog__buf *b, const char *s)
{
	rlog__term_escape(b, s, strlen(s), false);
}

static void put_pct(struct rlog__buf *b, uint64_t n, uint64_t of)
{
	rlog__buf_printf(b, "%6.2f%%", of ? 100.0 * (double)n / (double)of : 0.0);
}

static void put_text(struct rlog__buf *b, const char *path, const struct rlog_prof *p, uint64_t top)
{
	rlog__buf_str(b, "profile ");
	put_name(b, path);
	rlog__buf_printf(b, ": %" PRIu64 " samples, %zu functions, %zu stacks\n", p->samples, p->nfuncs,
			 p->nstacks);
	rlog__buf_printf(b, "%8s %8s %8s %8s  %s\n", "self", "self%", "total", "total%", "function");
	for (size_t i = 0; i < p->nfuncs && i < top; i++) {
		const struct rlog_prof_func *f = &p->funcs[i];
		rlog__buf_printf(b, "%8" PRIu64 " ", f->self);
		put_pct(b, f->self, p->samples);
		rlog__buf_printf(b, " %8" PRIu64 " ", f->total);
		put_pct(b, f->total, p->samples);
		rlog__buf_str(b, "  ");
		put_name(b, f->name);
		rlog__buf_char(b, '\n');
	}
	if (!p->kernel_named)
		rlog__buf_str(b, "kernel frames: /proc/kallsyms not readable (needs root): shown as [kernel] 0x...\n");
}

static void put_folded(struct rlog__buf *b, const struct rlog_prof *p)
{
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct rlog_prof_stack *s = &p->stacks[i];
		for (size_t j = 0; j < s->nframes; j++) {
			if (j)
				rlog__buf_char(b, ';');
			put_name(b, s->frames[j]);
		}
		rlog__buf_printf(b, " %" PRIu64 "\n", s->samples);
	}
}

static void put_json(struct rlog__buf *b, const char *path, const struct rlog_prof *p, uint64_t top)
{
	rlog__buf_str(b, "{\"file\":");
	rlog__json_cstr(b, path);
	rlog__buf_printf(b, ",\"samples\":%" PRIu64 ",\"kernel_named\":%s,\"functions\":[", p->samples,
			 p->kernel_named ? "true" : "false");
	for (size_t i = 0; i < p->nfuncs && i < top; i++) {
		rlog__buf_str(b, i ? ",{\"name\":" : "{\"name\":");
		rlog__json_cstr(b, p->funcs[i].name);
		rlog__buf_printf(b, ",\"self\":%" PRIu64 ",\"total\":%" PRIu64 "}", p->funcs[i].self,
				 p->funcs[i].total);
	}
	rlog__buf_str(b, "],\"stacks\":[");
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct rlog_prof_stack *s = &p->stacks[i];
		rlog__buf_str(b, i ? ",{\"frames\":[" : "{\"frames\":[");
		for (size_t j = 0; j < s->nframes; j++) {
			if (j)
				rlog__buf_char(b, ',');
			rlog__json_cstr(b, s->frames[j]);
		}
		rlog__buf_printf(b, "],\"samples\":%" PRIu64 "}", s->samples);
	}
	rlog__buf_str(b, "]}\n");
}

int cmd_profile(int argc, char **argv)
{
	static const struct cli_opt opts[] = {
		{ "--json", NULL, false }, { "--folded", NULL, false }, { "--pid", NULL, true },
		{ "--tid", NULL, true },   { "--top", NULL, true },     { NULL, NULL, false },
	};
	bool json = false, folded = false;
	uint64_t top = 20, v;
	struct rlog_prof_opts o = { 0 };
	struct cli_args a;
	cli_args_init(&a, "profile", opts, 1, argc, argv);
	while (cli_args_next(&a)) {
		if (cli_is(&a, "--json")) {
			json = true;
		} else if (cli_is(&a, "--folded")) {
			folded = true;
		} else if (cli_is(&a, "--top")) {
			if (!cli_parse_u64(a.value, 1, UINT32_MAX, &top))
				return cli_error("profile: --top '%s': expected a number 1..4294967295", a.value);
		} else {
			if (!cli_parse_u64(a.value, 0, UINT32_MAX, &v))
				return cli_error("profile: %s '%s': expected a number 0..4294967295", a.name,
						 a.value);
			if (cli_is(&a, "--pid")) {
				o.by_pid = true;
				o.pid = (uint32_t)v;
			} else {
				o.by_tid = true;
				o.tid = (uint32_t)v;
			}
		}
	}
	if (!cli_args_need(&a, 1, "FILE"))
		return 2;
	if (json && folded)
		return cli_usage_error("profile", "--json and --folded: one output at a time");
	const char *path = a.pos[0];
	o.kallsyms = getenv("RINGLOG_KALLSYMS"); /* a saved copy (docs/PROFILE.md) */

	struct rlog_prof p;
	char *damage;
	size_t ndamage;
	int rc = rlog__profile_build(path, &o, &p, &damage, &ndamage);
	if (rc < 0) {
		rlog__profile_free(&p);
		return cli_error("profile %s: %s", path, rlog_reader_strerror(rc));
	}
	struct rlog__buf out = { 0 };
	if (json)
		put_json(&out, path, &p, top);
	else if (folded)
		put_folded(&out, &p);
	else
		put_text(&out, path, &p, top);
	int status = 0;
	rc = rlog__buf_write(&out, STDOUT_FILENO);
	if (rc < 0)
		status = cli_error("profile %s: writing the output: %s", path, strerror(-rc));
	for (size_t i = 0; i < ndamage; i++, damage += strlen(damage) + 1)
		status = cli_error("profile %s: %s", path, damage);
	rlog__buf_free(&out);
	rlog__profile_free(&p);
	return status;
}
