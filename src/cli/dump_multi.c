/*
 * dump_multi.c - `ringlog dump FILE FILE... | DIR`: several hosts' log files
 * (a directory: the files `ringlog collect` writes) on one timeline, merged
 * by CLOCK_REALTIME (src/reader/multi.h), with a host column
 * (docs/DUMP.md, "Several hosts"):
 *
 *   # ringlog dump of 3 hosts, merged by CLOCK_REALTIME: time 0 is 2026-11-22T10:00:00.123456789Z
 *   # host alpha id 0a0a...: session web, tick source tsc at 2999999000 Hz, started ..., file D/alpha_web_0a0a....rlog, clock error ±12 us (max 345 us)
 *   #      time_ns host         pid     tid id           payload
 *                0 alpha          1       1 LOG_MARKER   ...
 *
 * The time column counts from the earliest host's start.  Exit status as
 * for one file: 1 if a file cannot be read (one line: which, and why) or
 * holds damage.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "dump.h"
#include "hosts.h"
#include "term.h"

bool dump_is_multi(const struct dump *d)
{
	return cli_hosts_wanted(d->args, d->nargs);
}

static void header(struct dump *d, const struct rlog__multi *m)
{
	char t[64], src[32], name[4 * 64 + 1], clk[64];
	fmt_rfc3339(t, sizeof t, m->base_realtime_ns);
	rlog__buf_printf(&d->out, "# ringlog dump of %zu host%s, merged by CLOCK_REALTIME: "
			 "time 0 is %s\n", m->n, m->n == 1 ? "" : "s", t);
	for (size_t i = 0; i < m->n; i++) {
		const struct rlog__host *h = &m->h[i];
		fmt_rfc3339(t, sizeof t, h->info->sync_realtime_ns);
		/* The file's path is the user's: escaped like any text. */
		char path[4 * 256 + 1];
		rlog__term_cstr(h->path, path, sizeof path);
		rlog__buf_printf(&d->out, "# host %s id %s: session %s, tick source %s at %" PRIu64
				 " Hz, started %s, file %s, clock error %s\n", h->name,
				 h->id[0] ? h->id : "-",
				 rlog__term_cstr(h->info->session_name, name, sizeof name),
				 fmt_tick_source(h->info->tick_source, src, sizeof src),
				 h->info->tick_freq_hz, t, path, cli_host_clock(h->info, clk, sizeof clk));
	}
	if (d->wall)
		rlog__buf_printf(&d->out, "#%29s %-12s     pid     tid id           payload\n",
				 "wall_time", "host");
	else
		rlog__buf_printf(&d->out, "#%13s %-12s     pid     tid id           payload\n",
				 "time_ns", "host");
}

int dump_multi(struct dump *d)
{
	struct cli_hosts hs;
	int rc = cli_hosts_open(&hs, "dump", d->args, d->nargs, d->all ? RLOG_READER_TIME_SYNC : 0);
	if (rc != 0)
		return rc;
	/* The wall clock and --since/--until count from the merged time 0. */
	struct rlog_reader_info merged = *hs.m.h[0].info;
	merged.sync_realtime_ns = hs.m.base_realtime_ns;
	d->info = &merged;
	int64_t since = d->has_since ? dump_resolve_time(d, &d->since) : INT64_MIN;
	int64_t until = d->has_until ? dump_resolve_time(d, &d->until) : INT64_MAX;
	if (!d->json)
		header(d, &hs.m);

	struct rlog_event ev;
	size_t hi = 0;
	int wrc = 0;
	while ((rc = rlog__multi_next(&hs.m, &ev, &hi)) > 0) {
		d->r = hs.m.h[hi].r;
		d->host = hs.m.h[hi].name;
		d->time_offset = hs.m.h[hi].offset_ns;
		if (dump_event(d, &ev, since, until) < 0)
			break; /* merged in time order: nothing later passes */
		if (d->out.len >= (1u << 20) && (wrc = rlog__buf_write(&d->out, STDOUT_FILENO)) < 0)
			break;
	}
	if (wrc == 0)
		wrc = rlog__buf_write(&d->out, STDOUT_FILENO);
	int status = 0;
	if (wrc < 0)
		status = cli_error("dump: writing the output: %s", strerror(-wrc));
	if (rc < 0)
		status = cli_error("dump %s: %s", hs.m.h[hi].path, rlog_reader_strerror(rc));
	if (cli_hosts_damage(&hs, "dump"))
		status = 1;
	d->r = NULL;
	cli_hosts_close(&hs);
	rlog__buf_free(&d->out);
	return status;
}
