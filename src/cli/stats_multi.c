/*
 * stats_multi.c - `ringlog stats FILE FILE... | DIR [--json]`: the totals
 * of several hosts' log files (a directory: the files `ringlog collect`
 * writes), one row per host and their sum (docs/DUMP.md, "Several hosts"):
 *
 *   # ringlog stats of 3 hosts, merged by CLOCK_REALTIME: from 2026-...Z to 2026-...Z
 *   HOST   ID    SESSION  EVENTS  BYTES  LOST  LOSS_RECORDS  METADATA  DAMAGED  CLOCK_ERROR
 *   alpha  0a..  web           3     48     0             0         5        0  ±12 us (max 345 us)
 *   total  -     -             9    144     0             0        15        0  -
 *
 * The counting is the reader's, file by file (rlog_reader_open_count), as
 * for one file; the times are each host's CLOCK_REALTIME (its LOG_MARKER).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "cli.h"
#include "format.h"
#include "json.h"
#include "hosts.h"
#include "stats_multi.h"
#include "term.h"

/* A host's (or the total's) figures. */
struct tally {
	struct rlog_count c;
	bool timed;
	uint64_t first_rt, last_rt; /* CLOCK_REALTIME of the first and last record */
};

static void tally_host(struct tally *t, const struct rlog__host *h)
{
	memset(t, 0, sizeof *t);
	rlog_reader_count(h->r, &t->c);
	if (t->c.timed) {
		t->timed = true;
		t->first_rt = h->info->sync_realtime_ns +
			      (uint64_t)rlog_reader_time_ns(h->r, t->c.first_ticks);
		t->last_rt = h->info->sync_realtime_ns +
			     (uint64_t)rlog_reader_time_ns(h->r, t->c.last_ticks);
	}
}

static void tally_add(struct tally *sum, const struct tally *t)
{
	sum->c.events += t->c.events;
	sum->c.bytes += t->c.bytes;
	sum->c.lost_events += t->c.lost_events;
	sum->c.lost_bytes += t->c.lost_bytes;
	sum->c.loss_records += t->c.loss_records;
	sum->c.metadata += t->c.metadata;
	sum->c.damage += t->c.damage;
	if (t->timed) {
		if (!sum->timed || t->first_rt < sum->first_rt)
			sum->first_rt = t->first_rt;
		if (!sum->timed || t->last_rt > sum->last_rt)
			sum->last_rt = t->last_rt;
		sum->timed = true;
	}
}

static void text_row(struct rlog__buf *b, const char *host, const char *id, const char *session,
		     const struct tally *t, const char *clock)
{
	rlog__buf_printf(b, "%-16s %-32s %-16s %10" PRIu64 " %12" PRIu64 " %10" PRIu64 " %12" PRIu64
			 " %8" PRIu64 " %7" PRIu64 "  %s\n", host, id, session, t->c.events,
			 t->c.bytes, t->c.lost_events, t->c.loss_records, t->c.metadata,
			 t->c.damage, clock);
}

static void json_row(struct rlog__buf *b, const struct tally *t)
{
	rlog__buf_printf(b, "\"events\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"lost_events\":%" PRIu64
			 ",\"lost_bytes\":%" PRIu64 ",\"loss_records\":%" PRIu64
			 ",\"metadata_records\":%" PRIu64 ",\"damaged_regions\":%" PRIu64,
			 t->c.events, t->c.bytes, t->c.lost_events, t->c.lost_bytes,
			 t->c.loss_records, t->c.metadata, t->c.damage);
	if (t->timed)
		rlog__buf_printf(b, ",\"first_realtime_ns\":%" PRIu64 ",\"last_realtime_ns\":%" PRIu64,
				 t->first_rt, t->last_rt);
	else
		rlog__buf_lit(b, ",\"first_realtime_ns\":null,\"last_realtime_ns\":null");
}

void stats_multi_json(struct rlog__buf *b, const struct rlog__multi *mp)
{
	struct tally sum = { 0 }, t;
	for (size_t i = 0; i < mp->n; i++) {
		tally_host(&t, &mp->h[i]);
		tally_add(&sum, &t);
	}
	rlog__buf_lit(b, "{\"hosts\":[");
	for (size_t i = 0; i < mp->n; i++) {
		const struct rlog__host *h = &mp->h[i];
		tally_host(&t, h);
		rlog__buf_str(b, i ? ",{\"host\":" : "{\"host\":");
		rlog__json_cstr(b, h->name);
		rlog__buf_lit(b, ",\"host_id\":");
		if (h->id[0])
			rlog__json_cstr(b, h->id);
		else
			rlog__buf_lit(b, "null");
		rlog__buf_lit(b, ",\"file\":");
		rlog__json_cstr(b, h->path);
		rlog__buf_lit(b, ",\"session\":");
		rlog__json_cstr(b, h->info->session_name);
		rlog__buf_printf(b, ",\"sync_realtime_ns\":%" PRIu64 ",", h->info->sync_realtime_ns);
		json_row(b, &t);
		cli_host_clock_json(b, h->info);
		rlog__buf_lit(b, "}");
	}
	rlog__buf_printf(b, "],\"total\":{\"hosts\":%zu,", mp->n);
	json_row(b, &sum);
	rlog__buf_lit(b, "}}\n");
}

int stats_multi(const char *const *args, int nargs, bool json)
{
	struct cli_hosts hs;
	int rc = cli_hosts_open(&hs, "stats", args, nargs, RLOG__MULTI_COUNT);
	if (rc != 0)
		return rc;
	const struct rlog__multi *mp = &hs.m;
	struct rlog__buf b = { 0 };
	struct tally sum = { 0 }, t;
	for (size_t i = 0; i < mp->n; i++) {
		tally_host(&t, &mp->h[i]);
		tally_add(&sum, &t);
	}
	char a[64], z[64], s[4 * 64 + 1], clk[64];
	if (json) {
		stats_multi_json(&b, mp);
	} else {
		if (sum.timed) {
			fmt_rfc3339(a, sizeof a, sum.first_rt);
			fmt_rfc3339(z, sizeof z, sum.last_rt);
			rlog__buf_printf(&b, "# ringlog stats of %zu host%s, merged by CLOCK_REALTIME: "
					 "from %s to %s\n", mp->n, mp->n == 1 ? "" : "s", a, z);
		} else {
			rlog__buf_printf(&b, "# ringlog stats of %zu host%s: no events\n", mp->n,
					 mp->n == 1 ? "" : "s");
		}
		rlog__buf_printf(&b, "%-16s %-32s %-16s %10s %12s %10s %12s %8s %7s  %s\n", "HOST", "ID",
				 "SESSION", "EVENTS", "BYTES", "LOST", "LOSS_RECORDS", "METADATA",
				 "DAMAGED", "CLOCK_ERROR");
		for (size_t i = 0; i < mp->n; i++) {
			const struct rlog__host *h = &mp->h[i];
			tally_host(&t, h);
			text_row(&b, h->name, h->id[0] ? h->id : "-",
				 rlog__term_cstr(h->info->session_name, s, sizeof s), &t,
				 cli_host_clock(h->info, clk, sizeof clk));
		}
		text_row(&b, "total", "-", "-", &sum, "-");
	}
	int status = 0;
	rc = rlog__buf_write(&b, STDOUT_FILENO);
	if (rc < 0)
		status = cli_error("stats: writing the output: %s", strerror(-rc));
	if (cli_hosts_damage(&hs, "stats"))
		status = 1;
	rlog__buf_free(&b);
	cli_hosts_close(&hs);
	return status;
}
