/*
 * cmd_start.c - `ringlog start NAME [-o FILE] [properties]`: create a
 * session and its capture daemon.  Every property of ETW's
 * EVENT_TRACE_PROPERTIES has a flag (docs/SESSIONS.md); src/session/ checks
 * the combinations and does the work.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "counter_catalog.h"
#include "session_print.h"

#define USAGE "usage: ringlog start NAME [-o FILE] [--mode MODES] [--max-file-size MB] " \
	      "[--buffer-size KB] [--min-buffers N] [--max-buffers N] [--buffers N] "       \
	      "[--flush-timer T] [--enable LIST] [--mask HEX] [--high-water PCT] "          \
	      "[--age-limit MIN] [--counters LIST] [--counter-period MS] [--force] | "           \
	      "start NAME --resume"

/* Parses a --mode list into RLOG_MODE_* bits. */
static bool parse_modes(const char *list, uint32_t *out)
{
	static const struct { const char *name; uint32_t bit; } modes[] = {
		{ "sequential", RLOG_MODE_SEQUENTIAL }, { "circular", RLOG_MODE_CIRCULAR },
		{ "newfile", RLOG_MODE_NEWFILE },       { "preallocate", RLOG_MODE_PREALLOCATE },
		{ "real-time", RLOG_MODE_REAL_TIME },   { "overwrite", RLOG_MODE_OVERWRITE },
	};
	uint32_t m = 0;
	const char *p = list;
	while (*p) {
		size_t n = strcspn(p, ",");
		size_t k = 0;
		while (k < sizeof modes / sizeof modes[0] &&
		       !(strlen(modes[k].name) == n && strncmp(modes[k].name, p, n) == 0))
			k++;
		if (k == sizeof modes / sizeof modes[0])
			return false;
		m |= modes[k].bit;
		p += n + (p[n] == ',');
	}
	*out = m;
	return true;
}

/* `ringlog start NAME --resume`: a new daemon for an orphaned session. */
static int resume_session(const char *name)
{
	pid_t pid = 0;
	char detail[256];
	int err = rlog__session_resume(name, true, &pid, detail, sizeof detail);
	if (cli_session_refused("start", name, err))
		return 1;
	switch (err) {
	case 0:
		break;
	case -EBUSY:
		return cli_error("start: %s: its daemon is running: nothing to resume", name);
	case -ESRCH:
		return cli_error("start: %s: the session is not running (stopped, or never started): "
				 "nothing to resume", name);
	case -ECHILD:
		return cli_error("start: %s: the new daemon died before it took the session over", name);
	case -EINVAL:
	case -ENOENT:
	case -EPROTO:
	case -ENODATA: {
		struct rlog__stop_result res;
		memset(&res, 0, sizeof res);
		if (err == -ENODATA)
			return cli_error("start: %s: its log file has no LOG_MARKER block to go on "
					 "from; the session is left as it is", name);
		return cli_stop_error("start", name, &res, err);
	}
	default:
		return cli_error("start: %s: %s", name, detail[0] ? detail : strerror(-err));
	}
	fprintf(stderr, "ringlog: start: %s: resumed: a new daemon took the session over from the "
			"one that died\n", name);
	printf("session: %s\ndaemon_pid: %d\n", name, (int)pid);
	return 0;
}

int cmd_start(int argc, char **argv)
{
	const char *name = NULL, *out = NULL, *enable = NULL;
	bool force = false;
	struct rlog__region_params p;
	rlog__props_default(&p);
	bool min_given = false, mask_given = false, timer_given = false, resume = false;
	int options = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		uint64_t v;
		bool has_val = i + 1 < argc;
		options += a[0] == '-' && strcmp(a, "--resume") != 0;
		if (strcmp(a, "--resume") == 0) {
			resume = true;
		} else if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && has_val) {
			out = argv[++i];
		} else if (strcmp(a, "--force") == 0) {
			force = true;
		} else if (strcmp(a, "--buffer-size") == 0 && has_val) {
			if (!cli_parse_u64(argv[++i], 4, 1024, &v) || (v & (v - 1)) != 0)
				return cli_error("start: --buffer-size '%s': expected KB, a power of two "
						 "from 4 to 1024", argv[i]);
			p.buffer_size = (uint32_t)v * 1024;
		} else if (strcmp(a, "--buffers") == 0 && has_val) {
			if (!cli_parse_u64(argv[++i], 2, 65536, &v))
				return cli_error("start: --buffers '%s': expected a number from 2 to 65536",
						 argv[i]);
			p.min_buffers = p.max_buffers = (uint32_t)v;
			min_given = true;
		} else if (strcmp(a, "--min-buffers") == 0 && has_val) {
			if (!cli_parse_u64(argv[++i], 2, 65536, &v))
				return cli_error("start: --min-buffers '%s': expected a number from 2 to "
						 "65536", argv[i]);
			p.min_buffers = (uint32_t)v;
			min_given = true;
		} else if (strcmp(a, "--max-buffers") == 0 && has_val) {
			if (!cli_parse_u64(argv[++i], 2, 65536, &v))
				return cli_error("start: --max-buffers '%s': expected a number from 2 to "
						 "65536", argv[i]);
			p.max_buffers = (uint32_t)v;
		} else if (strcmp(a, "--flush-timer") == 0 && has_val) {
			if (!cli_parse_duration_ms(argv[++i], 3600000, &p.flush_timer_ms))
				return cli_error("start: --flush-timer '%s': expected milliseconds (or a "
						 "number with ms or s) up to 3600 s", argv[i]);
			timer_given = true;
		} else if (strcmp(a, "--mask") == 0 && has_val) {
			if (!cli_parse_u64(argv[++i], 0, UINT64_MAX, &v))
				return cli_error("start: --mask '%s': expected a number (0x... for hex)",
						 argv[i]);
			p.enable_mask = v;
			mask_given = true;
		} else if (strcmp(a, "--enable") == 0 && has_val) {
			enable = argv[++i];
		} else if (strcmp(a, "--mode") == 0 && has_val) {
			if (!parse_modes(argv[++i], &p.log_file_mode))
				return cli_error("start: --mode '%s': expected a comma-separated list of "
						 "sequential, circular, newfile, preallocate, real-time, "
						 "overwrite",
						 argv[i]);
		} else if (strcmp(a, "--max-file-size") == 0 && has_val) {
			if (!cli_parse_u64(argv[++i], 1, 1048576, &v))
				return cli_error("start: --max-file-size '%s': expected MB, 1 to 1048576",
						 argv[i]);
			p.max_file_size = v << 20;
		} else if (strcmp(a, "--high-water") == 0 && has_val) {
			if (!cli_parse_u64(argv[++i], 1, 100, &v))
				return cli_error("start: --high-water '%s': expected a percentage of the "
						 "pool, 1 to 100", argv[i]);
			p.high_water_pct = (uint32_t)v;
		} else if (strcmp(a, "--counters") == 0 && has_val) {
			char why[200];
			if (rlog__counter_parse(argv[++i], &p.counter_mask, why, sizeof why) < 0)
				return cli_error("start: --counters: %s", why);
		} else if (strcmp(a, "--counter-period") == 0 && has_val) {
			if (!cli_parse_duration_ms(argv[++i], 60000, &p.counter_period_ms) ||
			    p.counter_period_ms < 10)
				return cli_error("start: --counter-period '%s': expected milliseconds (or "
						 "a number with ms or s) from 10 ms to 60 s", argv[i]);
		} else if (strcmp(a, "--age-limit") == 0 && has_val) {
			if (!cli_parse_u64(argv[++i], 0, 1000000, &v))
				return cli_error("start: --age-limit '%s': expected minutes", argv[i]);
			p.age_limit = (uint32_t)v;
		} else if (a[0] == '-') {
			cli_error("start: unknown or incomplete option '%s'", a);
			fprintf(stderr, "%s\n", USAGE);
			return 2;
		} else if (name == NULL) {
			name = a;
		} else {
			cli_error("start: unexpected argument '%s'", a);
			fprintf(stderr, "%s\n", USAGE);
			return 2;
		}
	}
	if (name == NULL) {
		cli_error("start: missing session NAME");
		fprintf(stderr, "%s\n", USAGE);
		return 2;
	}
	if (resume && options)
		return cli_error("start: --resume takes no other option: the session keeps its "
				 "properties");
	if (resume)
		return resume_session(name);
	if (mask_given && enable)
		return cli_error("start: use one of --enable and --mask");
	/* A real-time consumer waits for full buffers without a flush timer:
	 * a real-time session drains partial ones every second unless told
	 * otherwise (docs/SESSIONS.md). */
	if (!timer_given && (p.log_file_mode & RLOG_MODE_REAL_TIME))
		p.flush_timer_ms = 1000;
	/* What this machine cannot count is said, one line each, and left
	 * out; the session records the rest. */
	p.counter_mask = rlog__counters_check(p.counter_mask, cli_counter_refused, "start");
	/* A smaller maximum lowers the default minimum with it. */
	if (!min_given && p.min_buffers > p.max_buffers)
		p.min_buffers = p.max_buffers;
	struct rlog__start st = { .name = name, .path = out, .params = p, .force = force,
				  .detach = true, .enable = enable };
	struct rlog__start_result res;
	int err = rlog__session_start(&st, &res);
	if (err < 0) {
		if (res.step == RLOG__START_PROPS && err == -EINVAL && out == NULL &&
		    !(p.log_file_mode & RLOG_MODE_REAL_TIME)) {
			/* A usage error: the one argument every start needs. */
			cli_error("start: missing -o FILE");
			fprintf(stderr, "%s\n", USAGE);
			return 2;
		}
		return cli_start_error(&st, &res, err);
	}
	/* The absolute path, as the session records it and as query and stop
	 * print it. */
	printf("session: %s\ndaemon_pid: %d\nfile: %s\n", name, (int)res.daemon_pid,
	       res.log_file[0] ? res.log_file : "-");
	return 0;
}
