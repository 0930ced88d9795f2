/*
 * cmd_report.c - `ringlog report FILE... | DIR -o OUT.html [--force]
 * [--since T] [--until T]`: log files as one self-contained HTML page
 * (src/report/report.h; docs/CONVERT.md, "The HTML report").  The page
 * embeds `ringlog stats --json`'s object for the same files, made by the
 * same code, so that its numbers are the command's.
 *
 * --since and --until take a window out of the file: dump's times and
 * window ([since, until), parsed by cli_parse_time), the page holding
 * what meets it.  Several files, or a directory from `ringlog collect`,
 * are merged on one timeline by CLOCK_REALTIME as dump, stats and
 * convert merge them (src/reader/multi.h, hosts.h; docs/DUMP.md,
 * "Several hosts"); the times then count from the earliest host's start.
 *
 * OUT follows convert's rules: created 0600 with O_EXCL|O_NOFOLLOW
 * (rlog__create_output), an existing OUT refused unless --force, never
 * an input file; a report that fails half-way is removed.  On success it
 * prints "key: value" counts.  Exit status as convert's: 0; 1 (unreadable
 * file, bad option value, write error, or damaged regions: the report of
 * what could be read is written, then one line per region); 2 (usage).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "buf.h"
#include "cli.h"
#include "format.h"
#include "hosts.h"
#include "io.h"
#include "json.h"
#include "report/report.h"
#include "ringlog/reader.h"
#include "stats_multi.h"

/* What the command was given. */
struct report_args {
	const char *out;
	bool force;
	bool has_since, has_until;
	struct cli_time since, until;
};

static bool same_file(const char *a, const char *b)
{
	struct stat x, y;
	return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* The window on a timeline whose time 0 is origin_realtime_ns. */
static void window_of(const struct report_args *ra, uint64_t origin_realtime_ns,
		      struct rlog__report_opts *o)
{
	o->has_since = ra->has_since;
	o->has_until = ra->has_until;
	o->since_ns = ra->has_since ? cli_time_ns(&ra->since, origin_realtime_ns) : 0;
	o->until_ns = ra->has_until ? cli_time_ns(&ra->until, origin_realtime_ns) : 0;
}

/* Creates OUT; returns the fd, or -1 after the error line. */
static int create_out(const struct report_args *ra)
{
	int fd = rlog__create_output(ra->out, ra->force ? RLOG_OUT_FORCE : 0, NULL);
	if (fd == -EEXIST)
		cli_error("report: %s: file exists (use --force to overwrite)", ra->out);
	else if (fd < 0)
		cli_error("report: cannot create %s: %s", ra->out, rlog__output_strerror(-fd));
	return fd < 0 ? -1 : fd;
}

/* After the writer: closes fd, says what failed (what: the input) or
 * prints the counts (hosts: several files' number, or 0).  Returns the
 * exit status so far. */
static int finish(const struct report_args *ra, int fd, int rc, const char *what, size_t hosts,
		  const struct rlog__report_stats *st)
{
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc < 0) {
		if (rc == -ENOMEM)
			cli_error("report %s: %s", what, strerror(-rc));
		else
			cli_error("report %s: writing %s: %s", what, ra->out, strerror(-rc));
		rlog__output_discard(ra->out);
		return 1;
	}
	if (hosts)
		cli_kv_u64("hosts", hosts);
	cli_kv_u64("events", st->events);
	cli_kv_u64("spans", st->spans);
	cli_kv_u64("open_spans", st->open_spans);
	cli_kv_u64("unmatched_ends", st->unmatched_ends);
	cli_kv_u64("lanes", st->lanes);
	cli_kv_u64("loss_records", st->loss_records);
	cli_kv_u64("events_lost", st->lost_events);
	cli_kv_u64("counter_points", st->counter_points);
	cli_kv_u64("cpu_runs", st->cpu_runs);
	cli_kv_u64("bytes_written", st->bytes_written);
	return 0;
}

/* Several hosts' files on one timeline (docs/DUMP.md, "Several hosts"). */
static int report_hosts(const struct report_args *ra, const char *const *args, int nargs)
{
	struct cli_hosts hs;
	int status = cli_hosts_open(&hs, "report", args, nargs, RLOG__MULTI_COUNT);
	if (status != 0)
		return status;
	struct rlog__multi *m = &hs.m;
	for (size_t i = 0; i < m->n && status == 0; i++)
		if (same_file(m->h[i].path, ra->out))
			status = cli_error("report: %s: the output is the input file", ra->out);
	/* The page's own part of each host: its clock's error as dump and
	 * stats say it, and its shift onto the merged timeline. */
	struct rlog__buf stats = { 0 }, extra = { 0 };
	stats_multi_json(&stats, m);
	char t[64];
	fmt_rfc3339(t, sizeof t, m->base_realtime_ns);
	rlog__buf_printf(&extra, ",\"origin\":\"%s\",\"hosts\":[", t);
	for (size_t i = 0; i < m->n; i++) {
		char clk[64];
		rlog__buf_str(&extra, i ? ",{\"host\":" : "{\"host\":");
		rlog__json_cstr(&extra, m->h[i].name);
		fmt_rfc3339(t, sizeof t, m->h[i].info->sync_realtime_ns);
		rlog__buf_printf(&extra, ",\"offset_ns\":%" PRId64 ",\"started\":\"%s\",\"clock\":",
				 m->h[i].offset_ns, t);
		rlog__json_cstr(&extra, cli_host_clock(m->h[i].info, clk, sizeof clk));
		rlog__buf_char(&extra, '}');
	}
	rlog__buf_char(&extra, ']');
	if (status == 0 && (stats.oom || extra.oom || !rlog__buf_need(&stats, 1) ||
			    !rlog__buf_need(&extra, 1)))
		status = cli_error("report: %s", strerror(ENOMEM));
	int fd = status == 0 ? create_out(ra) : -1;
	if (status == 0 && fd < 0)
		status = 1;
	if (status == 0) {
		stats.p[stats.len] = '\0';
		if (stats.len && stats.p[stats.len - 1] == '\n')
			stats.p[--stats.len] = '\0';
		extra.p[extra.len] = '\0';
		struct rlog__report_opts o = { .extra_json = extra.p };
		window_of(ra, m->base_realtime_ns, &o);
		struct rlog__report_stats st;
		size_t bad = m->n;
		int rc = rlog__report_write_hosts(m, fd, stats.p, &o, &st, &bad);
		status = finish(ra, fd, rc, bad < m->n ? m->h[bad].path : args[0], m->n, &st);
	}
	rlog__buf_free(&stats);
	rlog__buf_free(&extra);
	if (cli_hosts_damage(&hs, "report"))
		status = 1;
	cli_hosts_close(&hs);
	if (fflush(stdout) != 0 && status == 0)
		status = cli_error("report: writing the summary: %s", strerror(errno));
	return status;
}

int cmd_report(int argc, char **argv)
{
	static const struct cli_opt opts[] = { { "--output", "-o", true },
					       { "--force", NULL, false },
					       { "--since", NULL, true },
					       { "--until", NULL, true },
					       { NULL, NULL, false } };
	struct report_args ra = { 0 };
	struct cli_args a;
	cli_args_init(&a, "report", opts, CLI_MAX_POS, argc, argv);
	while (cli_args_next(&a)) {
		if (cli_is(&a, "--output")) {
			ra.out = a.value;
		} else if (cli_is(&a, "--since") || cli_is(&a, "--until")) {
			/* dump's times and meaning (docs/DUMP.md, "Filters") */
			bool is_since = cli_is(&a, "--since");
			if (cli_parse_time(a.value, is_since ? &ra.since : &ra.until) < 0)
				return cli_error("report: %s '%s': expected %s", a.name, a.value,
						 CLI_TIME_WANT);
			*(is_since ? &ra.has_since : &ra.has_until) = true;
		} else {
			ra.force = true;
		}
	}
	if (!cli_args_need(&a, 1, "FILE"))
		return 2;
	if (!ra.out)
		return cli_usage_error("report", "missing -o FILE.html");
	if (cli_hosts_wanted(a.pos, a.npos))
		return report_hosts(&ra, a.pos, a.npos);
	const char *path = a.pos[0];

	if (same_file(path, ra.out))
		return cli_error("report: %s: the output is the input file", ra.out);
	struct rlog_reader *r;
	int rc = rlog_reader_open_count(path, &r);
	if (rc < 0)
		return cli_error("report %s: %s", path, rlog_reader_strerror(rc));
	struct rlog__buf stats = { 0 };
	rc = cli_stats_json(&stats, path, r);
	if (rc == 0 && !rlog__buf_need(&stats, 1))
		rc = -ENOMEM;
	if (rc < 0) {
		rlog__buf_free(&stats);
		rlog_reader_close(r);
		return cli_error("report %s: %s", path, strerror(-rc));
	}
	stats.p[stats.len] = '\0';
	if (stats.len && stats.p[stats.len - 1] == '\n')
		stats.p[--stats.len] = '\0';

	int fd = create_out(&ra);
	if (fd < 0) {
		rlog__buf_free(&stats);
		rlog_reader_close(r);
		return 1;
	}
	struct rlog__report_opts o = { 0 };
	window_of(&ra, rlog_reader_info(r)->sync_realtime_ns, &o);
	struct rlog__report_stats st;
	rc = rlog__report_write(r, fd, stats.p, &o, &st);
	rlog__buf_free(&stats);
	int status = finish(&ra, fd, rc, path, 0, &st);
	size_t nd = rlog_reader_damage_count(r);
	for (size_t i = 0; i < nd; i++) {
		struct rlog_damage d;
		if (rlog_reader_damage(r, i, &d) == 0)
			status = cli_error("report %s: %s", path, d.message);
	}
	rlog_reader_close(r);
	if (fflush(stdout) != 0 && status == 0)
		status = cli_error("report: writing the summary: %s", strerror(errno));
	return status;
}
