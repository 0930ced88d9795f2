/*
 * cmd_convert.c - `ringlog convert FILE --to chrome|perfetto|ctf -o OUT`: a
 * log file in a format other tools open (docs/CONVERT.md):
 *
 *   --to chrome   OUT is a JSON file (Trace Event Format) for
 *                 ui.perfetto.dev and chrome://tracing; "-" is stdout.
 *                 --spans x (default) writes each span as one "X" event,
 *                 --spans be as a "B" and an "E".
 *   --to perfetto OUT is a Perfetto trace (protobuf) for ui.perfetto.dev and
 *                 trace_processor; "-" is stdout.  --since/--until keep a
 *                 window; --split DURATION and --max-size SIZE write a
 *                 series OUT-0001, OUT-0002, ... (the number before OUT's
 *                 extension, if it has one), each file a whole trace.
 *   --to ctf      OUT is a directory (created if missing) that receives a
 *                 CTF 1.8 trace for babeltrace2.
 *
 * Several files, or a directory (docs/CONVERT.md, "Several hosts"):
 * one chrome or perfetto trace of the hosts on the merged CLOCK_REALTIME
 * timeline (convert_hosts), or a ctf trace per host in OUT/HOST
 * (convert_hosts_ctf); a window or a split takes one file.
 *
 * One overwrite rule, as for `ringlog start`: an existing OUT is refused
 * unless --force.  For chrome, --force truncates the file.  For ctf, an
 * empty directory is not an overwrite; --force deletes the "metadata" and
 * "stream_*" files of an earlier conversion, and a directory holding
 * anything else is refused even so (stream files left from another
 * conversion would join the trace).  OUT may not be the input file.
 *
 * On success it prints "key: value" lines of counts (events_read,
 * events_written, ...) on stdout, unless the JSON itself goes there.
 * The records that are not events in the output are counted by what they
 * became: metadata_records (schemas, thread and process names, and for
 * chrome the LOG_MARKER) and, for chrome in "X" mode, span_begins_merged
 * (a begin is written as part of its span's "X" event, at the end).
 *
 * Exit status: 0 for a clean file; 1 when the file cannot be read or
 * converted, or holds damaged regions (every readable event is converted
 * first, then one line per region goes to stderr); 2 for a usage error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "format.h"
#include "cli.h"
#include "convert/convert.h"
#include "ringlog/reader.h"
#include "hosts.h"
#include "io.h"

static const struct cli_opt opts[] = {
	{ "--to", NULL, true },      { "--output", "-o", true }, { "--spans", NULL, true },
	{ "--force", NULL, false }, { "--since", NULL, true },     { "--until", NULL, true },
	{ "--split", NULL, true },   { "--max-size", NULL, true },
	{ NULL, NULL, false },
};

/* The series of a split output: OUT with "-NNNN" before its extension. */
struct series {
	const char *out;
	bool force;
	int fd;
	int err;
	struct stat in;      /* the input file (in_ok: stat succeeded) */
	bool in_ok;
	char cur[4096];      /* the file being written */
};

/* Is name the input file itself?  (--force would truncate what the reader
 * is reading.) */
static bool is_input(const struct series *se, const char *name)
{
	struct stat st;
	return se->in_ok && stat(name, &st) == 0 && st.st_dev == se->in.st_dev &&
	       st.st_ino == se->in.st_ino;
}

static void series_name(char *buf, size_t n, const char *out, unsigned index)
{
	const char *slash = strrchr(out, '/');
	const char *dot = strrchr(slash ? slash + 1 : out, '.');
	if (!dot || dot == (slash ? slash + 1 : out))
		dot = out + strlen(out);
	snprintf(buf, n, "%.*s-%04u%s", (int)(dot - out), out, index + 1, dot);
}

static int series_next(void *arg, unsigned index, int *fd)
{
	struct series *se = arg;
	char name[4096];
	if (close(se->fd) < 0) {
		se->fd = -1;
		return -errno;
	}
	se->fd = -1;
	series_name(name, sizeof(name), se->out, index);
	if (is_input(se, name)) {
		cli_error("convert: %s: the output is the input file", name);
		se->err = -EINVAL;
		return -EINVAL;
	}
	int f = rlog__create_output(name, se->force ? RLOG_OUT_FORCE : 0, NULL);
	if (f < 0) {
		if (f == -EEXIST)
			cli_error("convert: %s: file exists (use --force to overwrite)", name);
		else
			cli_error("convert: cannot create %s: %s", name, rlog__output_strerror(-f));
		se->err = f;
		return f;
	}
	se->fd = *fd = f;
	snprintf(se->cur, sizeof se->cur, "%s", name);
	return 0;
}

/* A required argument is missing: say which, then the usage line. */
static int missing(const char *what)
{
	return cli_usage_error("convert", "missing %s", what);
}

static bool is_ctf_file(const char *name)
{
	return strcmp(name, "metadata") == 0 || strncmp(name, "stream_", 7) == 0;
}

static void host_dir(char *buf, size_t n, const struct rlog__multi *m, size_t i);

/* Is dir the subdirectory of one of the hosts before host i? */
static bool dir_taken(const char *dir, const struct rlog__multi *m, size_t i)
{
	char other[160];
	for (size_t k = 0; k < i; k++) {
		host_dir(other, sizeof other, m, k);
		if (strcmp(other, dir) == 0)
			return true;
	}
	return false;
}

/* The subdirectory of host i of several in a ctf conversion: its name,
 * or NAME-I when an earlier host's directory has that name (two runs of
 * one host). */
static void host_dir(char *buf, size_t n, const struct rlog__multi *m, size_t i)
{
	/* A host name is [A-Za-z0-9._-] (multi.c), so "." and ".." are
	 * names too: one starting with a dot gets a '_' before it, so that
	 * the directory is always a new entry of OUT's, never OUT itself or
	 * its parent (which --force would empty). */
	const char *name = m->h[i].name;
	const char *pre = name[0] == '.' || name[0] == '\0' ? "_" : "";
	snprintf(buf, n, "%s%s", pre, name);
	/* Taken by an earlier host (the same name, or another's "NAME-K"):
	 * the host's index after it, as many times as it takes. */
	for (unsigned j = 1; dir_taken(buf, m, i) && j < 64; j++) {
		size_t len = strlen(buf);
		snprintf(buf + len, n - len, "-%zu", i);
	}
}

/* Is name the subdirectory of one of hosts (NULL: none)? */
static bool is_host_dir(const struct rlog__multi *hosts, const char *name)
{
	char sub[160];
	for (size_t i = 0; hosts && i < hosts->n; i++) {
		host_dir(sub, sizeof sub, hosts, i);
		if (strcmp(sub, name) == 0)
			return true;
	}
	return false;
}

/*
 * Makes dir an empty directory: creates it if missing; with force, deletes
 * the files an earlier conversion left, and leaves the subdirectories of
 * hosts (NULL: none), which are prepared each in turn.  Returns 0, or
 * prints the error and returns 1.
 */
static int prepare_dir(const char *dir, bool force, const struct rlog__multi *hosts)
{
	/* 0700 as the files in it (rlog__create_output): its user may widen it. */
	if (mkdir(dir, 0700) == 0)
		return 0;
	if (errno != EEXIST)
		return cli_error("convert: cannot create %s: %s", dir, strerror(errno));
	/* A link is not followed (rlog__create_output's rule): with --force it
	 * is replaced by a new directory, its target left as it is. */
	struct stat lst;
	if (lstat(dir, &lst) == 0 && S_ISLNK(lst.st_mode)) {
		if (!force)
			return cli_error("convert: %s: file exists (use --force to overwrite)", dir);
		if (unlink(dir) < 0 || mkdir(dir, 0700) < 0)
			return cli_error("convert: cannot create %s: %s", dir, strerror(errno));
		return 0;
	}
	DIR *d = opendir(dir);
	if (!d)
		return cli_error("convert: %s: %s", dir, strerror(errno));
	struct dirent *e;
	const char *left = NULL;
	static char left_buf[256];
	int status = 0;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (force && is_host_dir(hosts, e->d_name))
			continue;
		if (force && is_ctf_file(e->d_name)) {
			if (unlinkat(dirfd(d), e->d_name, 0) < 0) {
				status = cli_error("convert: cannot delete %s/%s: %s", dir, e->d_name,
						   strerror(errno));
				break;
			}
			continue;
		}
		if (!left) {
			snprintf(left_buf, sizeof(left_buf), "%s", e->d_name);
			left = left_buf;
		}
	}
	closedir(d);
	if (status == 0 && left)
		status = cli_error("convert: %s is not empty (it holds %s)%s", dir, left,
				   force ? ", which is not from a conversion"
					 : "; use --force to overwrite an earlier conversion");
	return status;
}

static void print_stats(const struct rlog__convert_stats *st, bool ctf, bool perfetto,
			unsigned flags)
{
	cli_kv_u64("events_read", st->events_read);
	cli_kv_u64("events_written", st->events_written);
	cli_kv_u64("schema_events", st->schema_events);
	cli_kv_u64("raw_events", st->raw_events);
	cli_kv_u64("mismatched", st->mismatched);
	/* st->skipped counts every record with no event of its own in the
	 * output (reader/convert.h); in chrome's "X" mode that includes each
	 * span's begin, which ends either matched (spans) or open at the end
	 * (unmatched_begins).  Said apart, by what became of them. */
	uint64_t merged = !ctf && !perfetto && !(flags & RLOG__CHROME_SPANS_BE)
				  ? st->spans + st->unmatched_begins
				  : 0;
	cli_kv_u64("metadata_records", st->skipped - merged);
	if (!ctf && !perfetto && !(flags & RLOG__CHROME_SPANS_BE))
		cli_kv_u64("span_begins_merged", merged);
	if (!ctf) {
		cli_kv_u64("spans", st->spans);
		cli_kv_u64("unmatched_begins", st->unmatched_begins);
		cli_kv_u64("unmatched_ends", st->unmatched_ends);
	}
	cli_kv_u64("loss_records", st->loss_records);
	cli_kv_u64("events_lost", st->events_lost);
	cli_kv_u64("counter_records", st->counter_records);
	cli_kv_u64("counter_values_unknown", st->counter_unknown);
	if (ctf) {
		cli_kv_u64("streams", st->streams);
		cli_kv_u64("packets", st->packets);
		cli_kv_u64("event_classes", st->event_classes);
	}
	if (perfetto) {
		cli_kv_u64("packets", st->packets);
		cli_kv_u64("files", st->files);
		cli_kv_u64("times_raised", st->clamped);
		cli_kv_u64("ftrace_events", st->ftrace_events);
		cli_kv_u64("process_records", st->process_records);
	}
	cli_kv_u64("bytes_written", st->bytes_written);
}

/* Adds a host's counts to sum: every field is a count. */
static void stats_add(struct rlog__convert_stats *sum, const struct rlog__convert_stats *st)
{
	uint64_t *a = (uint64_t *)(void *)sum;
	const uint64_t *b = (const uint64_t *)(const void *)st;
	for (size_t k = 0; k < sizeof(*sum) / sizeof(uint64_t); k++)
		a[k] += b[k];
}

/* The end of a conversion of several hosts: their damage reported, the
 * files closed, the summary flushed.  Returns the exit status. */
static int hosts_end(struct cli_hosts *hs, int status)
{
	if (cli_hosts_damage(hs, "convert"))
		status = 1;
	cli_hosts_close(hs);
	if (fflush(stdout) != 0 && status == 0)
		status = cli_error("convert: writing the summary: %s", strerror(errno));
	return status;
}

/* convert of several files, or of a directory of them (docs/CONVERT.md,
 * "Several hosts"): one Chrome or Perfetto trace, a host after another,
 * each moved onto the merged CLOCK_REALTIME timeline.  Returns the exit
 * status. */
static int convert_hosts(const char *const *args, int nargs, const char *out, bool force,
			 unsigned flags, bool perfetto)
{
	struct cli_hosts hs;
	int rc = cli_hosts_open(&hs, "convert", args, nargs, 0);
	if (rc != 0)
		return rc;
	const struct rlog__multi *mp = &hs.m;
	char *const *paths = hs.paths;
	size_t bi = 0;
	bool to_stdout = strcmp(out, "-") == 0;
	int status = 0, fd = -1;
	if (perfetto && mp->n > RLOG__PERFETTO_MAX_HOSTS)
		status = cli_error("convert: %zu files: --to perfetto takes at most %u hosts", mp->n,
				   RLOG__PERFETTO_MAX_HOSTS);
	for (size_t i = 0; i < mp->n && !to_stdout; i++) {
		struct series se = { .out = out };
		se.in_ok = stat(paths[i], &se.in) == 0;
		if (is_input(&se, out))
			status = cli_error("convert: %s: the output is the input file", out);
	}
	if (status == 0) {
		fd = to_stdout ? STDOUT_FILENO
			       : rlog__create_output(out, force ? RLOG_OUT_FORCE : 0, NULL);
		if (fd == -EEXIST)
			status = cli_error("convert: %s: file exists (use --force to overwrite)", out);
		else if (fd < 0)
			status = cli_error("convert: cannot create %s: %s", out, rlog__output_strerror(-fd));
	}
	struct rlog__convert_stats sum, st;
	memset(&sum, 0, sizeof(sum));
	rc = 0;
	/* Perfetto: each host's sequences and tracks after the previous one's. */
	struct rlog__perfetto_host ph = { .count = (unsigned)mp->n, .seq_base = 1,
					  .base_realtime_ns = mp->base_realtime_ns };
	for (size_t i = 0; i < mp->n && status == 0 && rc == 0; i++) {
		struct rlog__chrome_host h = { .name = mp->h[i].name, .index = (unsigned)i,
					       .count = (unsigned)mp->n, .offset_ns = mp->h[i].offset_ns,
					       .base_realtime_ns = mp->base_realtime_ns };
		if (perfetto) {
			char clock[64];
			struct rlog__perfetto_opts po = { .host = &ph };
			ph.name = mp->h[i].name;
			ph.id = mp->h[i].id;
			ph.clock_error = cli_host_clock(mp->h[i].info, clock, sizeof clock);
			ph.index = (unsigned)i;
			rc = rlog__convert_perfetto(mp->h[i].r, fd, &po, &st);
		} else {
			rc = rlog__convert_chrome_host(mp->h[i].r, fd, flags, &st, &h);
		}
		stats_add(&sum, &st);
		if (rc < 0)
			bi = i;
	}
	if (perfetto)
		sum.files = 1; /* the hosts' files are one */
	if (fd >= 0 && !to_stdout && close(fd) < 0 && rc == 0)
		rc = -errno;
	if (status == 0 && rc < 0) {
		status = cli_error("convert %s: %s", paths[bi], strerror(-rc));
		if (!to_stdout)
			rlog__output_discard(out);
	} else if (status == 0 && !to_stdout) {
		cli_kv_u64("hosts", mp->n);
		print_stats(&sum, false, perfetto, flags);
	}
	return hosts_end(&hs, status);
}

/* convert --to ctf of several files (docs/CONVERT.md, "Several hosts"):
 * a CTF trace per host in its subdirectory of out, each as one file's;
 * their clocks are CLOCK_REALTIME (absolute), so that babeltrace2 given
 * out merges them.  Returns the exit status. */
static int convert_hosts_ctf(const char *const *args, int nargs, const char *out, bool force)
{
	struct cli_hosts hs;
	int rc = cli_hosts_open(&hs, "convert", args, nargs, 0);
	if (rc != 0)
		return rc;
	const struct rlog__multi *mp = &hs.m;
	struct rlog__convert_stats sum, st;
	memset(&sum, 0, sizeof(sum));
	int status = prepare_dir(out, force, mp);
	rc = 0;
	for (size_t i = 0; i < mp->n && status == 0; i++) {
		char sub[4096], name[160];
		host_dir(name, sizeof name, mp, i);
		snprintf(sub, sizeof sub, "%s/%s", out, name);
		if (prepare_dir(sub, force, NULL) != 0) {
			status = 1;
			break;
		}
		char clock[64];
		rc = rlog__convert_ctf_host(mp->h[i].r, sub, &st, mp->h[i].name,
					    cli_host_clock(mp->h[i].info, clock, sizeof clock));
		if (rc < 0) {
			status = cli_error("convert %s: writing %s: %s", hs.paths[i], sub, strerror(-rc));
			break;
		}
		stats_add(&sum, &st);
	}
	if (status == 0) {
		cli_kv_u64("hosts", mp->n);
		print_stats(&sum, true, false, 0);
	}
	return hosts_end(&hs, status);
}

int cmd_convert(int argc, char **argv)
{
	const char *to = NULL, *out = NULL;
	bool force = false, ctf, perfetto = false;
	struct rlog__perfetto_opts po;
	struct cli_time since = { 0 }, until = { 0 };
	bool has_window = false;
	memset(&po, 0, sizeof(po));
	unsigned flags = 0;
	struct rlog_reader *r;
	struct rlog__convert_stats st;
	int rc, fd = -1;

	struct cli_args a;
	cli_args_init(&a, "convert", opts, CLI_MAX_POS, argc, argv);
	while (cli_args_next(&a)) {
		if (cli_is(&a, "--to")) {
			to = a.value;
		} else if (cli_is(&a, "--output")) {
			out = a.value;
		} else if (cli_is(&a, "--spans")) {
			if (strcmp(a.value, "be") == 0) {
				flags |= RLOG__CHROME_SPANS_BE;
			} else if (strcmp(a.value, "x") != 0) {
				cli_error("convert: --spans '%s': expected x or be", a.value);
				return 1;
			}
		} else if (cli_is(&a, "--since") || cli_is(&a, "--until")) {
			bool is_since = cli_is(&a, "--since");
			if (cli_parse_time(a.value, is_since ? &since : &until) < 0) {
				cli_error("convert: %s '%s': expected %s", is_since ? "--since" : "--until",
					  a.value, CLI_TIME_WANT);
				return 1;
			}
			*(is_since ? &po.has_since : &po.has_until) = true;
			has_window = true;
		} else if (cli_is(&a, "--split")) {
			struct cli_time d;
			if (cli_parse_time(a.value, &d) < 0 || d.wall || d.ns <= 0) {
				cli_error("convert: --split '%s': expected a duration: 10s, 500ms", a.value);
				return 1;
			}
			po.split_ns = d.ns;
		} else if (cli_is(&a, "--max-size")) {
			if (!cli_parse_size(a.value, &po.max_size) || po.max_size < RLOG__PERFETTO_MIN_SIZE) {
				cli_error("convert: --max-size '%s': expected a size of at least 1M: 64M, 1G",
					  a.value);
				return 1;
			}
		} else {
			force = true;
		}
	}
	if (!cli_args_need(&a, 1, "FILE"))
		return 2;
	const char *path = a.pos[0];
	if (!to)
		return missing("--to chrome|perfetto|ctf");
	if (!out)
		return missing("-o OUT");
	if (strcmp(to, "chrome") == 0) {
		ctf = false;
	} else if (strcmp(to, "ctf") == 0) {
		ctf = true;
	} else if (strcmp(to, "perfetto") == 0) {
		ctf = false;
		perfetto = true;
	} else {
		cli_error("convert: --to '%s': expected chrome, perfetto or ctf", to);
		return 1;
	}
	bool split = po.split_ns > 0 || po.max_size > 0;
	if (!perfetto && (has_window || split)) {
		cli_error("convert: --since, --until, --split and --max-size apply to --to perfetto only");
		return 2;
	}
	if (perfetto && flags) {
		cli_error("convert: --spans applies to --to chrome only");
		return 2;
	}
	if (split && strcmp(out, "-") == 0) {
		cli_error("convert: --split and --max-size write files: -o - is not one");
		return 2;
	}
	if (ctf && flags) {
		cli_error("convert: --spans applies to --to chrome only");
		return 2;
	}
	bool to_stdout = !ctf && strcmp(out, "-") == 0;
	if (cli_hosts_wanted(a.pos, a.npos)) {
		/* Several hosts (docs/CONVERT.md, "Several hosts"). */
		if (has_window || split) {
			cli_error("convert: --since, --until, --split and --max-size apply to one file only");
			return 2;
		}
		if (ctf)
			return convert_hosts_ctf(a.pos, a.npos, out, force);
		return convert_hosts(a.pos, a.npos, out, force, flags, perfetto);
	}

	rc = rlog_reader_open(path, &r);
	if (rc < 0)
		return cli_error("convert %s: %s", path, rlog_reader_strerror(rc));
	struct series se = { .out = out, .force = force, .fd = -1 };
	se.in_ok = stat(path, &se.in) == 0;

	if (has_window) {
		/* A wall-clock time is relative to the session's start. */
		const struct rlog_reader_info *info = rlog_reader_info(r);
		po.since_ns = cli_time_ns(&since, info->sync_realtime_ns);
		po.until_ns = cli_time_ns(&until, info->sync_realtime_ns);
	}
	if (split) {
		series_name(se.cur, sizeof(se.cur), out, 0);
		out = se.cur;
	}
	if (!to_stdout && is_input(&se, out)) {
		rlog_reader_close(r);
		return cli_error("convert: %s: the output is the input file", out);
	}

	if (ctf) {
		if (prepare_dir(out, force, NULL) != 0) {
			rlog_reader_close(r);
			return 1;
		}
		rc = rlog__convert_ctf(r, out, &st);
	} else {
		/* Without --force an existing file is refused, as by start;
		 * O_EXCL makes the check and the creation one step. */
		fd = to_stdout ? STDOUT_FILENO
			       : rlog__create_output(out, force ? RLOG_OUT_FORCE : 0, NULL);
		if (fd < 0) {
			if (fd == -EEXIST)
				cli_error("convert: %s: file exists (use --force to overwrite)", out);
			else
				cli_error("convert: cannot create %s: %s", out, rlog__output_strerror(-fd));
			rlog_reader_close(r);
			return 1;
		}
		if (perfetto) {
			se.fd = fd;
			po.next_file = series_next;
			po.arg = &se;
			rc = rlog__convert_perfetto(r, fd, &po, &st);
			fd = se.fd;
		} else {
			rc = rlog__convert_chrome(r, fd, flags, &st);
		}
		if (!to_stdout && fd >= 0 && close(fd) < 0 && rc == 0)
			rc = -errno;
	}

	int status = 0;
	if (rc < 0 && se.err) {
		status = 1; /* series_next said which file */
	} else if (rc < 0) {
		/* A reader error reads as the reader words it; the rest is the
		 * output's. */
		if (rc == -ENOMEM)
			status = cli_error("convert %s: %s", path, strerror(-rc));
		else
			status = cli_error("convert %s: writing %s: %s", path, out, strerror(-rc));
		if (!ctf && !to_stdout)
			rlog__output_discard(out);
	} else if (!to_stdout) {
		print_stats(&st, ctf, perfetto, flags);
	}
	size_t nd = rlog_reader_damage_count(r);
	for (size_t i = 0; i < nd; i++) {
		struct rlog_damage d;
		if (rlog_reader_damage(r, i, &d) == 0)
			status = cli_error("convert %s: %s", path, d.message);
	}
	rlog_reader_close(r);
	if (fflush(stdout) != 0 && status == 0)
		status = cli_error("convert: writing the summary: %s", strerror(errno));
	return status;
}
