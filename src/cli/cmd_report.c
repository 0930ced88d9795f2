/*
 * cmd_report.c - `ringlog report FILE -o OUT.html [--force]`: the log file
 * as one self-contained HTML page (src/report/report.h; docs/CONVERT.md,
 * "The HTML report").  The page embeds `ringlog stats --json`'s object
 * for the same file, made by the same code, so that its numbers are the
 * command's.
 *
 * OUT follows convert's rules: created 0600 with O_EXCL|O_NOFOLLOW
 * (rlog__create_output), an existing OUT refused unless --force, never
 * the input file; a report that fails half-way is removed.  On success it
 * prints "key: value" counts.  Exit status as convert's: 0; 1 (unreadable
 * file, write error, or damaged regions: the report of what could be read
 * is written, then one line per region); 2 (usage).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "buf.h"
#include "cli.h"
#include "io.h"
#include "report/report.h"
#include "ringlog/reader.h"

int cmd_report(int argc, char **argv)
{
	static const struct cli_opt opts[] = { { "--output", "-o", true },
					       { "--force", NULL, false },
					       { NULL, NULL, false } };
	const char *out = NULL;
	bool force = false;
	struct cli_args a;
	cli_args_init(&a, "report", opts, 1, argc, argv);
	while (cli_args_next(&a)) {
		if (cli_is(&a, "--output"))
			out = a.value;
		else
			force = true;
	}
	if (!cli_args_need(&a, 1, "FILE"))
		return 2;
	if (!out)
		return cli_usage_error("report", "missing -o FILE.html");
	const char *path = a.pos[0];

	struct stat in, os;
	if (stat(path, &in) == 0 && stat(out, &os) == 0 && in.st_dev == os.st_dev &&
	    in.st_ino == os.st_ino)
		return cli_error("report: %s: the output is the input file", out);
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

	bool created = false;
	int fd = rlog__create_output(out, force ? RLOG_OUT_FORCE : 0, &created);
	if (fd < 0) {
		rlog__buf_free(&stats);
		rlog_reader_close(r);
		if (fd == -EEXIST)
			return cli_error("report: %s: file exists (use --force to overwrite)", out);
		return cli_error("report: cannot create %s: %s", out, strerror(-fd));
	}
	struct rlog__report_stats st;
	rc = rlog__report_write(r, fd, stats.p, &st);
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	rlog__buf_free(&stats);

	int status = 0;
	if (rc < 0) {
		if (rc == -ENOMEM)
			status = cli_error("report %s: %s", path, strerror(-rc));
		else
			status = cli_error("report %s: writing %s: %s", path, out, strerror(-rc));
		unlink(out); /* half a page helps nobody */
	} else {
		cli_kv_u64("events", st.events);
		cli_kv_u64("spans", st.spans);
		cli_kv_u64("open_spans", st.open_spans);
		cli_kv_u64("unmatched_ends", st.unmatched_ends);
		cli_kv_u64("lanes", st.lanes);
		cli_kv_u64("loss_records", st.loss_records);
		cli_kv_u64("events_lost", st.lost_events);
		cli_kv_u64("counter_points", st.counter_points);
		cli_kv_u64("cpu_runs", st.cpu_runs);
		cli_kv_u64("bytes_written", st.bytes_written);
	}
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
