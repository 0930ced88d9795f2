/*
 * report.h - `ringlog report`: a log file as one self-contained HTML page
 * (docs/CONVERT.md, "The HTML report").  The page's code is src/report/
 * report.html, report.css and report.js, embedded by the build
 * (embed.py makes report_page.c of them); this writer adds the data:
 * one JSON object in a <script type="application/json"> element, every
 * '<', '>' and '&' in it written as \u003c, \u003e, \u0026 so that no text
 * of the file (an event named "</script>...") can end the element.
 *
 * The data, by what the page draws:
 *   stats          `ringlog stats --json` of the same file, as the CLI
 *                  made it (the session, the totals, the losses by cause)
 *   lanes          one per (pid, tid): its events as ticks (time and name,
 *                  delta- and varint-encoded, base64), its spans per depth,
 *                  a per-lane overview (events per column of REPORT_COLUMNS
 *                  over the whole trace), and on a CPU's lane (the system
 *                  events' pid 0, tid the CPU) who ran, from sched_switch
 *   counters       COUNTER records (the value) and counter-kind events (the
 *                  first field), as points
 *   losses         each DATA_LOSS record with its time range;
 *                  thread_losses the same summed per thread and cause
 *   names          the event names, with per-name counts, span times and a
 *                  log2 histogram of span durations
 *   window         null, or the window (--since/--until) and its own counts
 *   hosts, origin  several files (written by the CLI, extra_json): per
 *                  host its name, start, clock error and shift; every
 *                  lane, counter, loss and task then names its host by
 *                  index, and stats is `stats --json`'s {"hosts","total"}
 * The encodings are in report.js's header.
 *
 * Memory: the ticks are kept encoded (a few bytes an event); each span
 * 32 bytes until the end, where they are sorted and encoded.
 */
#ifndef RLOG_REPORT_REPORT_H
#define RLOG_REPORT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ringlog/reader.h"

struct rlog__multi;

#define REPORT_COLUMNS 512 /* the overview's columns per lane */

/* What a report held. */
struct rlog__report_stats {
	uint64_t events;       /* application events (ticks) */
	uint64_t spans;        /* spans drawn (ended, and still open at the end) */
	uint64_t open_spans;   /* of those, never ended */
	uint64_t unmatched_ends;
	uint64_t loss_records;
	uint64_t lost_events;
	uint64_t counter_points;
	uint64_t cpu_runs;     /* who-ran intervals on the CPUs' lanes */
	uint64_t lanes;
	uint64_t bytes_written;
};

/* A window of the file (`ringlog report --since/--until`), and what the
 * CLI adds to the data. */
struct rlog__report_opts {
	bool has_since, has_until;
	int64_t since_ns, until_ns; /* [since, until), ns of the trace (of the
				     * merged timeline for several files), as
				     * `ringlog dump`'s window */
	const char *extra_json;     /* members added to the data object, each
				     * after a comma (the hosts), or NULL */
};

/*
 * rlog__report_write - writes the HTML report of r to fd.
 * @r:          a reader opened with rlog_reader_open_count(), no event read
 * @fd:         the output
 * @stats_json: `ringlog stats --json`'s object for the same reader (the
 *              page shows it and checks its own figures against it)
 * @o:          the window and the extra data; may be NULL.  With a window,
 *              the page holds what meets it: the events in it, the spans,
 *              CPU runs and losses (by their time range) that meet it, the
 *              counters' points in it (and the value before it, at its
 *              start), and the threads of those; its
 *              timeline opens on it, and "window" in the data says it
 *              with its own counts (stats_json stays the whole file's)
 * @st:         receives the counts (zeroed first): with a window, of it;
 *              may be NULL
 * Returns 0, or -EINVAL, -ENOMEM, a reader error, or the -errno of a
 * failed write(2).
 */
int rlog__report_write(struct rlog_reader *r, int fd, const char *stats_json,
		       const struct rlog__report_opts *o, struct rlog__report_stats *st);

/*
 * rlog__report_write_hosts - the same of several hosts' files on one
 * timeline (src/reader/multi.h, opened with RLOG__MULTI_COUNT, nothing
 * read): every lane, counter, loss and CPU task carries its host's
 * index in m, times are the merged timeline's; stats_json is `ringlog
 * stats --json`'s object for the same files ({"hosts":[..],"total":..}).
 * On a reader's error *bad_host (may be NULL) is the file's index.
 */
int rlog__report_write_hosts(struct rlog__multi *m, int fd, const char *stats_json,
			     const struct rlog__report_opts *o, struct rlog__report_stats *st,
			     size_t *bad_host);

/* The page around the data (report_page.c, generated). */
extern const char rlog__report_page_head[];
extern const char rlog__report_page_tail[];

#endif
