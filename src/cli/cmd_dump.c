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
#include "region_abi.h"
#include "ringlog/reader.h"

/* Output is large: it goes out a MiB at a time. */
#define OUT_FLUSH (1u << 20)

/* Writes the output out; returns 0 or -errno (-ENOMEM: a line was lost). */
static int flush(struct dump *d)
{
	return rlog__buf_write(&d->out, STDOUT_FILENO);
}

int cmd_dump(int argc, char **argv)
{
	struct dump d = { .what = "dump" };
	struct rlog_event ev;
	int rc, wrc = 0;

	rc = dump_parse_args(&d, argc, argv, "dump", "FILE");
	if (rc != 0) {
		dump_free_args(&d);
		return rc;
	}
	if (dump_is_multi(&d)) {
		rc = dump_multi(&d);
		dump_free_args(&d);
		return rc;
	}
	rc = rlog_reader_open(d.path, &d.r);
	if (rc < 0) {
		dump_free_args(&d);
		return cli_error("dump %s: %s", d.path, rlog_reader_strerror(rc));
	}
	if (d.all)
		rlog_reader_set_flags(d.r, RLOG_READER_TIME_SYNC);
	d.info = rlog_reader_info(d.r);
	int64_t since = d.has_since ? dump_resolve_time(&d, &d.since) : INT64_MIN;
	int64_t until = d.has_until ? dump_resolve_time(&d, &d.until) : INT64_MAX;

	if (!d.json)
		dump_text_header(&d);
	while ((rc = rlog_reader_next(d.r, &ev)) > 0) {
		if (dump_event(&d, &ev, since, until) < 0)
			break; /* events come in time order: nothing later passes */
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
	dump_free_args(&d);
	return status;
}
