/*
 * cmd_dump.c - `ringlog dump FILE [filters] [--format text|json]
 * [--time relative|wall] [--all]`: the events of a log file, one line
 * each, in time order.  The formats are specified in docs/DUMP.md.
 *
 *   # ringlog dump of FILE: session NAME, tick source tsc at F Hz, started 2026-11-22T10:00:00.123456789Z
 *   #      time_ns     pid     tid id           payload
 *                0    4242    4242 LOG_MARKER   tick_hz=... source=tsc realtime=... session=... buffers=8x16384
 *             1500    4242    4243 1025/3       01000000 02000000 ab
 *             2000    4242    4243 http.request status=200 bytes=5120 path="/index"
 *             2500    4242    4243 db.query     begin rows=5
 *
 * time_ns counts from the LOG_MARKER (negative before it).  An event whose
 * type has a schema prints its name and fields; one whose payload does not
 * match its schema prints "!mismatch" and its payload in hex.  Other
 * payloads print as hex in groups of 4 bytes, "-" when empty; RAW_*,
 * DATA_LOSS, LOG_MARKER and COUNTER payloads are decoded.  TIME_SYNC,
 * EVENT_SCHEMA, THREAD_NAME, PROCESS_NAME and COUNTER_NAME records show
 * only with --all.
 *
 * --format json writes JSON Lines instead: one object per event, no
 * header.  Filters (--id, --name, --pid, --tid, --since, --until) keep the
 * events that pass all of them; a filter given several values (a list
 * "1,2" or the option repeated) keeps an event that matches any.
 *
 * The output is streamed through a 1 MiB buffer; the reader keeps one
 * pending event per thread, so memory does not grow with the file.  The
 * formats are dump_text.c's and dump_json.c's, the filters dump_filter.c's.
 *
 * Exit status: 0 for a clean file; 1 when the file cannot be read or holds
 * damaged regions (every readable event is printed first, then one line per
 * region on stderr); 2 for a usage error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "dump.h"
#include "ringlog/abi.h"
#include "ringlog/reader.h"

#define USAGE "usage: ringlog dump FILE [--id N[,N..]] [--name NAME] [--pid P[,P..]] " \
	      "[--tid T[,T..]] [--since T] [--until T] [--format text|json] " \
	      "[--time relative|wall] [--all]"

/* Output is large: it goes out a MiB at a time. */
#define OUT_FLUSH (1u << 20)

static int usage(void)
{
	cli_error("dump: " USAGE);
	return 2;
}

/* --opt VALUE or --opt=VALUE at argv[*i]: the value, or NULL if argv[*i]
 * is not opt. *missing is set if opt has no value. */
static const char *opt_value(int argc, char **argv, int *i, const char *opt, bool *missing)
{
	size_t k = strlen(opt);
	const char *a = argv[*i];
	if (strncmp(a, opt, k) != 0)
		return NULL;
	if (a[k] == '=')
		return a + k + 1;
	if (a[k] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		*missing = true;
		return NULL;
	}
	return argv[++*i];
}

static int bad_value(const char *opt, const char *v, const char *want)
{
	cli_error("dump: %s '%s': expected %s", opt, v, want);
	return 2;
}

#define TIME_WANT "a time: 1.5s, 250ms, 10us, 123ns, or 2026-11-22T07:01:31.5Z"

/* Parses argv into d.  Returns 0, or the exit status of a usage error. */
static int parse_args(struct dump *d, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *v;
		bool missing = false;
		if (strcmp(argv[i], "--all") == 0) {
			d->all = true;
		} else if ((v = opt_value(argc, argv, &i, "--id", &missing))) {
			if (!dump_numlist_add(&d->ids, v, RLOG_ID_MAX))
				return bad_value("--id", v, "event IDs 0 to 16383, separated by commas");
		} else if ((v = opt_value(argc, argv, &i, "--pid", &missing))) {
			if (!dump_numlist_add(&d->pids, v, UINT32_MAX))
				return bad_value("--pid", v, "process IDs separated by commas");
		} else if ((v = opt_value(argc, argv, &i, "--tid", &missing))) {
			if (!dump_numlist_add(&d->tids, v, UINT32_MAX))
				return bad_value("--tid", v, "thread IDs separated by commas");
		} else if ((v = opt_value(argc, argv, &i, "--name", &missing))) {
			const char **n = realloc(d->names, (d->nnames + 1) * sizeof(*n));
			if (!n)
				return cli_error("dump: out of memory");
			d->names = n;
			d->names[d->nnames++] = v;
		} else if ((v = opt_value(argc, argv, &i, "--since", &missing))) {
			if (cli_parse_time(v, &d->since) < 0)
				return bad_value("--since", v, TIME_WANT);
			d->has_since = true;
		} else if ((v = opt_value(argc, argv, &i, "--until", &missing))) {
			if (cli_parse_time(v, &d->until) < 0)
				return bad_value("--until", v, TIME_WANT);
			d->has_until = true;
		} else if ((v = opt_value(argc, argv, &i, "--format", &missing))) {
			if (strcmp(v, "json") == 0)
				d->json = true;
			else if (strcmp(v, "text") == 0)
				d->json = false;
			else
				return bad_value("--format", v, "text or json");
		} else if ((v = opt_value(argc, argv, &i, "--time", &missing))) {
			if (strcmp(v, "wall") == 0)
				d->wall = true;
			else if (strcmp(v, "relative") == 0)
				d->wall = false;
			else
				return bad_value("--time", v, "relative or wall");
		} else if (missing || (argv[i][0] == '-' && argv[i][1] != '\0') || d->path) {
			return usage();
		} else {
			d->path = argv[i];
		}
	}
	return d->path ? 0 : usage();
}

/* A time argument as ns since the start of the trace. */
static int64_t resolve_time(const struct dump *d, const struct cli_time *t)
{
	if (!t->wall)
		return t->ns;
	/* Both are below 2^63: the difference fits. */
	int64_t base = d->info->sync_realtime_ns > (uint64_t)INT64_MAX
			       ? INT64_MAX : (int64_t)d->info->sync_realtime_ns;
	return t->ns - base;
}

static void free_args(struct dump *d)
{
	free(d->ids.v);
	free(d->pids.v);
	free(d->tids.v);
	free(d->names);
}

/* Writes the output out; returns 0 or -errno (-ENOMEM: a line was lost). */
static int flush(struct dump *d)
{
	return rlog__buf_write(&d->out, STDOUT_FILENO);
}

int cmd_dump(int argc, char **argv)
{
	struct dump d = { .wall_sec = 0 };
	struct rlog_event ev;
	int rc, wrc = 0;

	rc = parse_args(&d, argc, argv);
	if (rc != 0) {
		free_args(&d);
		return rc;
	}
	rc = rlog_reader_open(d.path, &d.r);
	if (rc < 0) {
		free_args(&d);
		return cli_error("dump %s: %s", d.path, rlog_reader_strerror(rc));
	}
	if (d.all)
		rlog_reader_set_flags(d.r, RLOG_READER_TIME_SYNC);
	d.info = rlog_reader_info(d.r);
	int64_t since = d.has_since ? resolve_time(&d, &d.since) : INT64_MIN;
	int64_t until = d.has_until ? resolve_time(&d, &d.until) : INT64_MAX;

	if (!d.json)
		dump_text_header(&d);
	while ((rc = rlog_reader_next(d.r, &ev)) > 0) {
		if (ev.time_ns < since)
			continue;
		if (ev.time_ns >= until)
			break; /* events come in time order: nothing later passes */
		int kind = rlog_record_kind(ev.id, ev.flagged);
		if (!d.all && kind == RLOG_RECORD_METADATA)
			continue;
		const struct rlog_schema *s =
			ev.id >= RLOG_ID_RAW_U8 && kind == RLOG_RECORD_EVENT ? rlog_reader_schema(d.r, &ev)
									  : NULL;
		if (!dump_filter_passes(&d, &ev, s))
			continue;
		if (d.json)
			dump_json_event(&d, &ev, s);
		else
			dump_text_event(&d, &ev, s);
		if (d.out.len >= OUT_FLUSH && (wrc = flush(&d)) < 0)
			break;
	}
	if (wrc == 0)
		wrc = flush(&d);
	int status = 0;
	if (wrc < 0)
		status = cli_error("dump %s: writing the output: %s", d.path, strerror(-wrc));
	if (rc < 0)
		status = cli_error("dump %s: %s", d.path, rlog_reader_strerror(rc));
	size_t nd = rlog_reader_damage_count(d.r);
	for (size_t i = 0; i < nd; i++) {
		struct rlog_damage dm;
		if (rlog_reader_damage(d.r, i, &dm) == 0)
			status = cli_error("dump %s: %s", d.path, dm.message);
	}
	uint64_t first;
	uint64_t bad = rlog_reader_bad_schemas(d.r, &first);
	if (bad > 0)
		cli_error("dump %s: warning: %" PRIu64 " malformed EVENT_SCHEMA record%s ignored "
			  "(the first at offset %" PRIu64 ")", d.path, bad, bad == 1 ? "" : "s", first);
	rlog_reader_close(d.r);
	rlog__buf_free(&d.out);
	free_args(&d);
	return status;
}
